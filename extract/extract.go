package extract

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"golang.org/x/net/html"

	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

// ErrTokenTooLong is returned, wrapped, with the links found so far when a
// single token of the page (a tag, a comment, a run of text) is longer than
// Options.MaxToken. It also wraps html.ErrBufferExceeded.
var ErrTokenTooLong = errors.New("extract: token exceeds buffer")

// DefaultMaxToken is the default Options.MaxToken.
const DefaultMaxToken = 1 << 20

// Link is a link found in a page.
type Link struct {
	URL      *url.URL // absolute, resolved against the base, fragment removed; http or https only
	Tag      string   // "a" or "area"
	NoFollow bool     // rel contains "nofollow" (on every occurrence of the URL)
}

// Page is what a page says about crawling.
type Page struct {
	Links    []Link   // in document order, each distinct URL (by urlnorm.Canonical) once
	Base     *url.URL // effective base: the first <base href> if valid, else the document URL
	NoFollow bool     // <meta name="robots"> says "nofollow" or "none"
	NoIndex  bool     // <meta name="robots"> says "noindex" or "none"
}

// Options configures extraction. The zero value is ready to use.
type Options struct {
	// Agent is the crawler's product token. When set, a <meta> whose name
	// equals it (case-insensitively) is read like <meta name="robots">.
	// Default: only "robots" is read.
	Agent string
	// MaxToken bounds the bytes the tokenizer buffers for a single token.
	// Zero means DefaultMaxToken (1 MiB).
	MaxToken int
}

// HTML extracts the links and robots directives of an HTML page fetched
// from docURL, with the default Options.
func HTML(docURL *url.URL, body []byte) (*Page, error) {
	return Options{}.HTML(docURL, body)
}

// rawLink is a link as written; it is resolved once the base is known,
// because <base> applies to links before it too.
type rawLink struct {
	href     string
	tag      string
	nofollow bool
}

// HTML extracts the links and robots directives of an HTML page fetched
// from docURL. Hrefs that cannot be parsed or that are not http or https
// are skipped. The error is non-nil only when the page could not be read
// to the end; the returned Page then holds what was found before.
func (o Options) HTML(docURL *url.URL, body []byte) (*Page, error) {
	if docURL == nil {
		return nil, errors.New("extract: nil document URL")
	}
	maxToken := o.MaxToken
	if maxToken <= 0 {
		maxToken = DefaultMaxToken
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	z.SetMaxBuf(maxToken)

	page := &Page{}
	var (
		raws    []rawLink
		baseRef string
		hasBase bool
		err     error
	)
loop:
	for {
		switch z.Next() {
		case html.ErrorToken:
			if e := z.Err(); e != io.EOF {
				if errors.Is(e, html.ErrBufferExceeded) {
					err = fmt.Errorf("%w (%d bytes): %w", ErrTokenTooLong, maxToken, e)
				} else {
					err = fmt.Errorf("extract: %w", e)
				}
			}
			break loop
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if !hasAttr {
				continue
			}
			switch string(name) {
			case "a", "area":
				href, rel, ok := linkAttrs(z)
				if ok {
					raws = append(raws, rawLink{href: href, tag: string(name), nofollow: hasToken(rel, "nofollow")})
				}
			case "base":
				if hasBase {
					continue
				}
				if href, ok := attr(z, "href"); ok {
					baseRef, hasBase = href, true
				}
			case "meta":
				o.meta(z, page)
			}
		}
	}

	page.Base = docURL
	if hasBase {
		// HTML: the first base element with an href sets the document
		// base URL; if it cannot be resolved, the document URL stays.
		if b := resolve(docURL, baseRef); b != nil {
			page.Base = b
		}
	}
	seen := make(map[string]int, len(raws))
	for _, r := range raws {
		u := resolve(page.Base, r.href)
		if u == nil {
			continue
		}
		key := urlnorm.Canonical(u)
		if i, ok := seen[key]; ok {
			// A URL is followed if any of its links may be followed.
			page.Links[i].NoFollow = page.Links[i].NoFollow && r.nofollow
			continue
		}
		seen[key] = len(page.Links)
		page.Links = append(page.Links, Link{URL: u, Tag: r.tag, NoFollow: r.nofollow})
	}
	return page, err
}

// linkAttrs returns the first href and rel attributes of the current tag
// (the HTML parser ignores later duplicates).
func linkAttrs(z *html.Tokenizer) (href, rel string, ok bool) {
	var hasRel bool
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		switch string(k) {
		case "href":
			if !ok {
				href, ok = string(v), true
			}
		case "rel":
			if !hasRel {
				rel, hasRel = string(v), true
			}
		}
	}
	return href, rel, ok
}

func attr(z *html.Tokenizer, name string) (string, bool) {
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		if string(k) == name {
			return string(v), true
		}
	}
	return "", false
}

// meta reads <meta name="robots" content="..."> (and the crawler's own
// name, if set).
func (o Options) meta(z *html.Tokenizer, page *Page) {
	var name, content string
	var hasName, hasContent bool
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		switch string(k) {
		case "name":
			if !hasName {
				name, hasName = strings.TrimSpace(string(v)), true
			}
		case "content":
			if !hasContent {
				content, hasContent = string(v), true
			}
		}
	}
	if !hasName || !hasContent {
		return
	}
	if !strings.EqualFold(name, "robots") && (o.Agent == "" || !strings.EqualFold(name, o.Agent)) {
		return
	}
	for _, d := range strings.Split(content, ",") {
		switch strings.ToLower(strings.TrimSpace(d)) {
		case "nofollow":
			page.NoFollow = true
		case "noindex":
			page.NoIndex = true
		case "none":
			page.NoFollow, page.NoIndex = true, true
		}
	}
}

// hasToken reports whether the space-separated list s holds tok, ignoring
// ASCII case.
func hasToken(s, tok string) bool {
	for f := range strings.FieldsFuncSeq(s, isASCIISpace) {
		if strings.EqualFold(f, tok) {
			return true
		}
	}
	return false
}

func isASCIISpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\f' || r == '\r'
}

// resolve resolves href against base and returns the normalized absolute
// URL without its fragment, or nil when href is not a usable http(s) link.
func resolve(base *url.URL, href string) *url.URL {
	href = cleanHref(href)
	if i := strings.IndexByte(href, ':'); i > 0 && !strings.ContainsAny(href[:i], "/?#") {
		// Has a scheme: skip javascript:, mailto:, tel:, data: and the
		// like without parsing them.
		s := href[:i]
		if !strings.EqualFold(s, "http") && !strings.EqualFold(s, "https") {
			return nil
		}
	}
	ref, err := url.Parse(href)
	if err != nil {
		return nil
	}
	u, err := urlnorm.Clean(base.ResolveReference(ref))
	if err != nil {
		return nil
	}
	u.Fragment, u.RawFragment = "", ""
	return u
}

// cleanHref strips leading and trailing ASCII whitespace and C0 controls
// and removes tabs and newlines inside, as the URL standard does before
// parsing.
func cleanHref(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, s)
	}
	return s
}
