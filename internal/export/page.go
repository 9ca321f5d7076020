package export

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding/charmap"

	"github.com/gentlecrawl/gentlecrawl/extract"
	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
	"github.com/gentlecrawl/gentlecrawl/warc"
)

// pageOf describes the page of a response or revisit record. robots is true
// for a robots.txt fetch, which is not a page. The crawler records those as
// it records pages; it asks for ORIGIN/robots.txt, without a query, so that
// is what tells them apart. (A robots.txt redirect to another path is
// fetched as robots.txt too, but cannot be told from a page.)
func (s *scanner) pageOf(rec *record) (p Page, robots bool) {
	target := string(rec.get("WARC-Target-URI"))
	u, uerr := url.Parse(target)
	if uerr == nil && u.EscapedPath() == "/robots.txt" && u.RawQuery == "" {
		return Page{}, true
	}
	p = Page{URL: target, FinalURL: target, Digest: string(rec.get("WARC-Payload-Digest")), Truncated: string(rec.get("WARC-Truncated")), Links: []string{}}
	p.Fetched = string(rec.get("WARC-Date"))
	if t, err := time.Parse(time.RFC3339Nano, p.Fetched); err == nil {
		// The crawler writes its dates as they are shown: keep the string.
		s.date = t.UTC().AppendFormat(s.date[:0], time.RFC3339Nano)
		if string(s.date) != p.Fetched {
			p.Fetched = string(s.date)
		}
	}
	if s.opts.Text {
		p.Text = new(string)
	}
	var problems []string
	defer func() { p.Error = strings.Join(problems, "; ") }()

	status, header, body, err := s.parseResponse(rec.block)
	if err != nil {
		problems = append(problems, err.Error())
		return p, false
	}
	p.Status = status
	p.ContentType = header.Get("Content-Type")
	if status >= 300 && status < 400 {
		if loc := header.Get("Location"); loc != "" {
			switch {
			case uerr != nil:
				problems = append(problems, fmt.Sprintf("Location cannot be resolved: the URL does not parse: %v", uerr))
			default:
				if to, err := fetch.ResolveLocation(u, loc); err != nil {
					problems = append(problems, err.Error())
				} else {
					p.FinalURL = to.String()
				}
			}
		}
	}
	if rec.typ == "revisit" {
		return p, false // no body: it is the earlier capture's
	}

	if cap(s.body) > maxKeep {
		s.body = nil
	}
	decoded, err := fetch.DecodeBody(s.body[:0], header, body, s.opts.MaxBodySize)
	if !sameStart(decoded[:cap(decoded)], body[:cap(body)]) {
		s.body = decoded // keep the buffer for the next record; never the block itself
	}
	p.Length = len(decoded)
	if err != nil {
		msg := err.Error()
		if errors.Is(err, fetch.ErrBodyTooLarge) {
			msg = fmt.Sprintf("body cut at %d decoded bytes: %v", len(decoded), err)
		}
		if p.Truncated != "" {
			msg += fmt.Sprintf(" (the crawler kept only the start of the body: WARC-Truncated %s)", p.Truncated)
		}
		problems = append(problems, msg)
	}
	if len(decoded) == 0 || uerr != nil {
		return p, false
	}
	switch fetch.MediaType(p.ContentType, decoded) {
	case "text/html", "application/xhtml+xml":
	default:
		return p, false
	}

	// What decoded is read even when the rest did not: a page cut at the
	// size limit still has its title and most of its links.
	opts := extract.Options{ContentType: p.ContentType}
	var page *extract.Page
	var text []byte
	var textErr error
	if s.opts.Text {
		// Links and text in one reading of the page (extract.Options.Read).
		r := opts.Read(u, decoded)
		page, err, text, textErr = r.Page, r.Err, r.Text, r.TextErr
	} else {
		page, err = opts.HTML(u, decoded)
	}
	if page != nil {
		p.Links = make([]string, 0, len(page.Links))
		for _, l := range page.Links {
			p.Links = append(p.Links, l.URL)
		}
		p.Title = title(decoded, page.Charset)
	}
	if err != nil {
		problems = append(problems, "links: "+err.Error())
	}
	if s.opts.Text {
		*p.Text = string(text)
		if textErr != nil {
			problems = append(problems, "text: "+textErr.Error())
		}
	}
	return p, false
}

// parseResponse reads the HTTP response message in a record's block: its
// status, its header fields and its body, which is the rest of the block.
func (s *scanner) parseResponse(block []byte) (status int, header http.Header, body []byte, err error) {
	head, body, _ := warc.SplitHTTP(block)
	s.hr.Reset(head)
	s.head.Reset(&s.hr)
	tp := textproto.NewReader(s.head)
	line, err := tp.ReadLine()
	if err != nil {
		return 0, nil, nil, fmt.Errorf("HTTP response: no status line: %w", err)
	}
	proto, rest, _ := strings.Cut(line, " ")
	code, _, _ := strings.Cut(rest, " ")
	status, err = strconv.Atoi(code)
	if !strings.HasPrefix(proto, "HTTP/") || len(code) != 3 || err != nil || status < 100 {
		return 0, nil, nil, fmt.Errorf("HTTP response: malformed status line %.60q", line)
	}
	mime, err := tp.ReadMIMEHeader()
	if err != nil && !errors.Is(err, io.EOF) {
		return status, http.Header(mime), body, fmt.Errorf("HTTP response header: %w", err)
	}
	return status, http.Header(mime), body, nil
}

// sameStart reports whether a and b begin at the same byte of memory.
func sameStart(a, b []byte) bool {
	return len(a) > 0 && len(b) > 0 && &a[0] == &b[0]
}

// maxTitleToken bounds the bytes the tokenizer buffers for one token while
// looking for the title.
const maxTitleToken = 1 << 20

// title returns the text of a page's first <title> outside <svg> and
// <math>, with entities decoded and ASCII white space collapsed, as
// document.title gives it. cs is the page's encoding as extract found it
// (Page.Charset); an undeclared page is read as UTF-8, or as windows-1252
// when its title is not valid UTF-8, as extract reads its hrefs.
func title(body []byte, cs string) string {
	var r io.Reader = bytes.NewReader(body)
	if cs != "" && cs != "utf-8" {
		if cr, err := charset.NewReaderLabel(cs, r); err == nil {
			r = cr
		}
	}
	z := html.NewTokenizer(r)
	z.SetMaxBuf(maxTitleToken)
	foreign := 0 // depth in <svg> and <math>, whose <title> is not the page's
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "svg", "math":
				foreign++
			case "title":
				if foreign > 0 {
					continue
				}
				if z.Next() != html.TextToken {
					return "" // <title></title>
				}
				t := z.Text()
				if cs == "" && !utf8.Valid(t) {
					if w, err := charmap.Windows1252.NewDecoder().Bytes(t); err == nil {
						t = w
					}
				}
				return collapseSpace(t)
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if s := string(name); (s == "svg" || s == "math") && foreign > 0 {
				foreign--
			}
		}
	}
}

// collapseSpace trims ASCII white space and makes each run of it one space.
func collapseSpace(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b))
	space := false
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\f', '\r':
			space = sb.Len() > 0
			continue
		}
		if space {
			sb.WriteByte(' ')
			space = false
		}
		sb.WriteByte(c)
	}
	return sb.String()
}
