package extract

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
	"golang.org/x/net/html/charset"

	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

// Sitemap limits (sitemaps.org, "Sitemap file location" and "Sitemap
// index files"): 50,000 URLs and 50 MB uncompressed per file.
const (
	DefaultSitemapMaxURLs  = 50_000
	DefaultSitemapMaxBytes = 50 << 20
)

// Errors of ParseSitemap for its limits; the Sitemap returned with them
// holds what was read before the limit.
var (
	ErrSitemapTooManyURLs = errors.New("extract: sitemap lists too many URLs")
	ErrSitemapTooLarge    = errors.New("extract: sitemap too large")
)

// Sitemap is what a sitemap file lists.
type Sitemap struct {
	// Index is true for a sitemap index: Sitemaps holds its entries and
	// URLs is empty.
	Index    bool
	URLs     []SitemapEntry // pages, from a <urlset> or a text sitemap, in file order
	Sitemaps []SitemapEntry // child sitemaps, from a <sitemapindex>
	Gzip     bool           // the file was gzip-compressed
	Text     bool           // a plain text sitemap, one URL per line
	// OutOfScope counts the entries ignored because they lie outside the
	// sitemap's location: another scheme or host, or (for pages) a path
	// outside the sitemap's directory.
	OutOfScope int
	// Invalid counts the entries whose URL is not a usable http(s) URL.
	Invalid int
}

// SitemapEntry is one <url> or <sitemap> entry, or one line of a text
// sitemap.
type SitemapEntry struct {
	URL *url.URL
	// LastMod is the entry's <lastmod>, a hint of when it last changed;
	// zero when absent or not a W3C datetime. A date without a time zone
	// is read as UTC.
	LastMod time.Time
	// ChangeFreq is the entry's <changefreq>, lower-cased, when it is one
	// of the protocol's values (always, hourly, daily, weekly, monthly,
	// yearly, never); "" otherwise.
	ChangeFreq string
}

// changeFreqs are the values of <changefreq> the sitemaps protocol
// defines.
var changeFreqs = []string{"always", "hourly", "daily", "weekly", "monthly", "yearly", "never"}

// SitemapOptions configures ParseSitemap. The zero value is ready to use.
type SitemapOptions struct {
	// MaxURLs is the most entries a file may list; one more gives
	// ErrSitemapTooManyURLs. Zero means DefaultSitemapMaxURLs (50,000).
	MaxURLs int
	// MaxBytes bounds the size of the file once decompressed; more gives
	// ErrSitemapTooLarge. Zero means DefaultSitemapMaxBytes (50 MB).
	MaxBytes int64
}

// ParseSitemap parses a sitemap fetched from sitemapURL with the default
// SitemapOptions.
func ParseSitemap(body []byte, sitemapURL *url.URL) (*Sitemap, error) {
	return SitemapOptions{}.Parse(body, sitemapURL)
}

// Parse parses a sitemap fetched from sitemapURL: an XML <urlset>, an XML
// <sitemapindex> or a text file of one URL per line, each possibly
// gzip-compressed (recognised by its magic bytes, whatever the file's name
// or Content-Type).
//
// sitemaps.org, "Sitemap file location": a sitemap may list only URLs of
// its own scheme and host under its own directory (one at /a/sitemap.xml,
// only URLs under /a/); a sitemap index only sitemaps of its own scheme
// and host. Other entries are skipped and counted in OutOfScope.
//
// The error is non-nil when the file is not a sitemap, cannot be
// decompressed, or exceeds a limit; the returned Sitemap then holds what
// was read before (nil only if nothing could be read).
func (o SitemapOptions) Parse(body []byte, sitemapURL *url.URL) (*Sitemap, error) {
	if sitemapURL == nil {
		return nil, errors.New("extract: nil sitemap URL")
	}
	if o.MaxURLs <= 0 {
		o.MaxURLs = DefaultSitemapMaxURLs
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultSitemapMaxBytes
	}
	sm := &Sitemap{}
	if bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
		sm.Gzip = true
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return sm, fmt.Errorf("extract: sitemap: %w", err)
		}
		// Read one byte more than allowed to tell "at the limit" from
		// "over it".
		raw, err := io.ReadAll(io.LimitReader(zr, o.MaxBytes+1))
		if err != nil {
			return sm, fmt.Errorf("extract: sitemap: %w", err)
		}
		body = raw
	}
	if int64(len(body)) > o.MaxBytes {
		return sm, fmt.Errorf("%w: more than %d bytes", ErrSitemapTooLarge, o.MaxBytes)
	}
	s := scope{}
	s.init(sitemapURL)
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(body, []byte("\xEF\xBB\xBF")), " \t\r\n")
	if bytes.HasPrefix(trimmed, []byte("<")) {
		return sm, o.parseXML(trimmed, sm, &s)
	}
	sm.Text = true
	return sm, o.parseText(trimmed, sm, &s)
}

// scope is the sitemaps.org location rule of one sitemap.
type scope struct {
	hostKey string // scheme://host[:port]
	prefix  string // canonical form up to the directory of the sitemap
}

func (s *scope) init(u *url.URL) {
	s.hostKey = urlnorm.HostKey(u)
	c := *u
	c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = "", false, "", ""
	k := urlnorm.Canonical(&c)
	s.prefix = k[:strings.LastIndexByte(k, '/')+1]
}

func (s *scope) page(u *url.URL) bool {
	return strings.HasPrefix(urlnorm.Canonical(u), s.prefix)
}

func (s *scope) site(u *url.URL) bool { return urlnorm.HostKey(u) == s.hostKey }

// add checks and appends one entry; it returns an error when the file
// lists more than MaxURLs entries.
func (o SitemapOptions) add(sm *Sitemap, s *scope, n *int, index bool, loc, lastmod, changefreq string) error {
	*n++
	if *n > o.MaxURLs {
		return fmt.Errorf("%w: more than %d", ErrSitemapTooManyURLs, o.MaxURLs)
	}
	u, err := urlnorm.Parse(loc)
	if err != nil {
		sm.Invalid++
		return nil
	}
	u.Fragment, u.RawFragment = "", ""
	if !s.site(u) || (!index && !s.page(u)) {
		sm.OutOfScope++
		return nil
	}
	e := SitemapEntry{URL: u}
	if lastmod != "" {
		e.LastMod, _ = parseW3CDatetime(lastmod)
	}
	if f := strings.ToLower(changefreq); slices.Contains(changeFreqs, f) {
		e.ChangeFreq = f
	}
	if index {
		sm.Sitemaps = append(sm.Sitemaps, e)
	} else {
		sm.URLs = append(sm.URLs, e)
	}
	return nil
}

func (o SitemapOptions) parseText(body []byte, sm *Sitemap, s *scope) error {
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 64<<10)
	n := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if err := o.add(sm, s, &n, false, line, "", ""); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("extract: sitemap: %w", err)
	}
	return nil
}

func (o SitemapOptions) parseXML(body []byte, sm *Sitemap, s *scope) error {
	d := xml.NewDecoder(bytes.NewReader(body))
	d.Strict = false // unescaped '&' in <loc> is a common mistake
	d.Entity = xml.HTMLEntity
	d.CharsetReader = charset.NewReaderLabel
	var (
		n           int
		root        string
		inEntry     bool
		field       string // "loc", "lastmod" or "changefreq" while inside one
		loc, mod    strings.Builder
		freq        strings.Builder
		entryIsSite bool
	)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if root == "" {
				return errors.New("extract: sitemap: no <urlset> or <sitemapindex>")
			}
			return nil
		}
		if err != nil {
			if root == "" {
				return fmt.Errorf("extract: sitemap: %w", err)
			}
			// A truncated or broken file: keep what was read.
			return fmt.Errorf("extract: sitemap: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := strings.ToLower(t.Name.Local)
			switch {
			case root == "":
				switch name {
				case "urlset":
				case "sitemapindex":
					sm.Index = true
				default:
					return fmt.Errorf("extract: sitemap: root element <%s>", t.Name.Local)
				}
				root = name
			case !inEntry && (name == "url" && root == "urlset" || name == "sitemap" && root == "sitemapindex"):
				inEntry, entryIsSite = true, name == "sitemap"
				loc.Reset()
				mod.Reset()
				freq.Reset()
			case inEntry && (name == "loc" || name == "lastmod" || name == "changefreq"):
				field = name
			}
		case xml.CharData:
			switch field {
			case "loc":
				if loc.Len()+len(t) <= 64<<10 {
					loc.Write(t)
				}
			case "lastmod":
				if mod.Len()+len(t) <= 256 {
					mod.Write(t)
				}
			case "changefreq":
				if freq.Len()+len(t) <= 32 {
					freq.Write(t)
				}
			}
		case xml.EndElement:
			name := strings.ToLower(t.Name.Local)
			switch {
			case inEntry && name == field:
				field = ""
			case inEntry && (name == "url" || name == "sitemap"):
				inEntry = false
				if l := strings.TrimSpace(loc.String()); l != "" {
					if err := o.add(sm, s, &n, entryIsSite, l, strings.TrimSpace(mod.String()), strings.TrimSpace(freq.String())); err != nil {
						return err
					}
				}
			}
		}
	}
}

// parseW3CDatetime parses the W3C datetime profile of ISO 8601
// (www.w3.org/TR/NOTE-datetime) at any of its precisions: YYYY, YYYY-MM,
// YYYY-MM-DD, then with hh:mm, hh:mm:ss or hh:mm:ss.s and a time zone
// designator. A time without a zone, which the profile does not allow but
// sitemaps use, is read as UTC.
func parseW3CDatetime(s string) (time.Time, error) {
	for _, layout := range w3cLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("extract: not a W3C datetime: %q", s)
}

var w3cLayouts = []string{
	"2006-01-02",
	time.RFC3339Nano, // hh:mm:ss, with or without fractions, and a zone
	"2006-01-02T15:04Z07:00",
	"2006",
	"2006-01",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04",
}
