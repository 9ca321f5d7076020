package extract

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/text/encoding"

	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

// ErrTokenTooLong is returned, wrapped, with the links found so far when a
// single token of the page (a tag, a comment, a run of text) is longer than
// Options.MaxToken. It also wraps html.ErrBufferExceeded.
var ErrTokenTooLong = errors.New("extract: token exceeds buffer")

// DefaultMaxToken is the default Options.MaxToken.
const DefaultMaxToken = 1 << 20

// Kind says what a link is for, so that the crawler can choose what to
// fetch.
type Kind uint8

const (
	// KindPage is a link to a document a crawler visits: <a>, <area>,
	// <frame>, <iframe>, <link rel=alternate hreflang>, and <link
	// rel=canonical> when Options.CanonicalLinks is set.
	KindPage Kind = iota
	// KindEmbed is a resource the page loads to display itself: <img src>,
	// <img srcset>, <script src>. Returned only when Options.Embeds is set.
	KindEmbed
)

// String returns "page" or "embed".
func (k Kind) String() string {
	switch k {
	case KindPage:
		return "page"
	case KindEmbed:
		return "embed"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Link is a link found in a page.
type Link struct {
	URL      *url.URL // absolute, resolved against the base, fragment removed; http or https only
	Tag      string   // "a", "area", "frame", "iframe", "link", "img" or "script"
	NoFollow bool     // rel contains "nofollow" (on every occurrence of the URL)
	Kind     Kind     // KindPage or KindEmbed; page if any occurrence of the URL is a page link
}

// Page is what a page says about crawling.
type Page struct {
	Links    []Link   // in document order, each distinct URL (by urlnorm.Canonical) once
	Base     *url.URL // effective base: the first <base href> if valid, else the document URL
	NoFollow bool     // <meta name="robots"> says "nofollow" or "none"
	NoIndex  bool     // <meta name="robots"> says "noindex" or "none"

	// Canonical is the page's <link rel="canonical"> in <head>, resolved,
	// or nil when there is none, it is unusable, or the page names two
	// different ones (Google then ignores both). It is a hint for
	// de-duplication and the report, not a link: it is not in Links
	// unless Options.CanonicalLinks is set.
	Canonical *url.URL
	// Charset is the name (WHATWG label) of the encoding the page
	// declares, from its byte order mark, Options.ContentType or a <meta>,
	// in that order of precedence; "" when it declares none. Hrefs of an
	// undeclared page are read as UTF-8, or as windows-1252 where they are
	// not valid UTF-8.
	Charset string
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
	// ContentType is the Content-Type header of the response, if known.
	// Its charset parameter says how the page is encoded and takes
	// precedence over <meta charset> (a byte order mark takes precedence
	// over both). Default: none.
	ContentType string
	// Embeds adds the resources the page embeds (<img src>, <img srcset>,
	// <script src>) to Page.Links with KindEmbed. Default: false, only
	// page links are returned.
	Embeds bool
	// CanonicalLinks adds the page's <link rel="canonical"> to Page.Links
	// as a page link (Tag "link"). Default: false; it is only recorded in
	// Page.Canonical.
	CanonicalLinks bool
	// MaxText bounds the bytes of text Text returns. Zero means
	// DefaultMaxText (1 MiB).
	MaxText int
}

// HTML extracts the links and robots directives of an HTML page fetched
// from docURL, with the default Options.
func HTML(docURL *url.URL, body []byte) (*Page, error) {
	return Options{}.HTML(docURL, body)
}

// HTML extracts the links and robots directives of an HTML page fetched
// from docURL. Hrefs that cannot be parsed or that are not http or https
// are skipped. The error is non-nil only when the page could not be read
// to the end; the returned Page then holds what was found before.
//
// Hrefs are decoded from the page's encoding (see Page.Charset) and their
// non-ASCII characters percent-encoded from UTF-8, in the query too.
func (o Options) HTML(docURL *url.URL, body []byte) (*Page, error) {
	if docURL == nil {
		return nil, errors.New("extract: nil document URL")
	}
	body, enc, name := o.decodeUpfront(body)
	p := &pass{o: o, doc: docURL, enc: enc, charset: name, declared: enc != nil || name != ""}
	p.run(body)
	if p.rerun {
		// Rare: a <base href> or a <meta charset> came after links that
		// it changes. Read the page again knowing both from the start.
		q := &pass{o: o, doc: docURL, enc: p.enc, charset: p.charset, declared: p.declared,
			base: p.base, baseFixed: true}
		q.run(body)
		p = q
	}
	return p.page(), p.err
}

// seed keys the seen-set. A 64-bit hash stands for the canonical URL: a
// collision, which would merge two links, is vanishingly rare, and the
// table is half the size of one keyed by strings.
var seed = maphash.MakeSeed()

// pass is one reading of a page.
type pass struct {
	o        Options
	doc      *url.URL
	enc      encoding.Encoding // nil: UTF-8 (or undeclared)
	charset  string
	declared bool // the encoding is known (BOM, Content-Type or first meta)

	base      *url.URL // nil until a valid <base href>
	baseFixed bool     // base known from a previous pass: ignore <base>
	hasBase   bool     // a <base href> was seen (valid or not)
	res       resolver

	links     []Link
	seen      map[uint64]int32 // maphash of urlnorm.Canonical → index in links
	nonASCII  bool             // an href with non-ASCII bytes was resolved
	rerun     bool
	inBody    bool
	canonical *url.URL
	canonSet  bool // a canonical was seen; canonical nil then means conflict
	noFollow  bool
	noIndex   bool
	err       error
	decoded   []byte // scratch for hrefs decoded to UTF-8
}

func (p *pass) page() *Page {
	pg := &Page{Links: p.links, Base: p.doc, NoFollow: p.noFollow, NoIndex: p.noIndex, Canonical: p.canonical, Charset: p.charset}
	if p.base != nil {
		pg.Base = p.base
	}
	return pg
}

func (p *pass) run(body []byte) {
	maxToken := p.o.MaxToken
	if maxToken <= 0 {
		maxToken = DefaultMaxToken
	}
	base := p.doc
	if p.base != nil {
		base = p.base
	}
	p.res.init(base)
	// Size the results once: an upper bound of the links is cheap to
	// count and saves the growth of both.
	n := bytes.Count(body, []byte("href")) + bytes.Count(body, []byte("src"))
	n = min(n, 1<<16)
	p.links = make([]Link, 0, n)
	p.seen = make(map[uint64]int32, n)

	z := html.NewTokenizer(bytes.NewReader(body))
	z.SetMaxBuf(maxToken)
	for {
		switch z.Next() {
		case html.ErrorToken:
			if e := z.Err(); e != io.EOF {
				if errors.Is(e, html.ErrBufferExceeded) {
					p.err = fmt.Errorf("%w (%d bytes): %w", ErrTokenTooLong, maxToken, e)
				} else {
					p.err = fmt.Errorf("extract: %w", e)
				}
			}
			return
		case html.StartTagToken, html.SelfClosingTagToken:
			// TagName copies the name; most tags are not of interest, so
			// look at the raw bytes first.
			if !interesting(z.Raw()) {
				continue
			}
			name, hasAttr := z.TagName()
			if !hasAttr {
				if string(name) == "body" {
					p.inBody = true
				}
				continue
			}
			p.tag(z, name)
			if p.rerun {
				return
			}
		}
	}
}

// interesting reports whether the raw start tag is one extraction reads.
func interesting(raw []byte) bool {
	if len(raw) < 2 || raw[0] != '<' {
		return true // let TagName decide
	}
	n := raw[1:]
	i := 0
	for i < len(n) && i < 8 && !isSpace(n[i]) && n[i] != '/' && n[i] != '>' {
		i++
	}
	var buf [8]byte
	for j := 0; j < i; j++ {
		buf[j] = lower(n[j])
	}
	switch string(buf[:i]) {
	case "a", "area", "frame", "iframe", "img", "script", "link", "base", "meta", "body":
		return true
	}
	return i == 8 // longer names: not ours, but let TagName decide cheaply
}

// attrs holds the attributes of one tag that extraction reads, as slices
// of the tokenizer's buffer: valid until the next call to Next.
type attrs struct {
	href, src, srcset, rel, hreflang []byte
	hasHref, hasSrc, hasSrcset       bool
	hasRel, hasHreflang              bool
}

func readAttrs(z *html.Tokenizer) attrs {
	var a attrs
	// The HTML parser keeps the first of duplicate attributes.
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		switch string(k) {
		case "href":
			if !a.hasHref {
				a.href, a.hasHref = v, true
			}
		case "src":
			if !a.hasSrc {
				a.src, a.hasSrc = v, true
			}
		case "srcset":
			if !a.hasSrcset {
				a.srcset, a.hasSrcset = v, true
			}
		case "rel":
			if !a.hasRel {
				a.rel, a.hasRel = v, true
			}
		case "hreflang":
			if !a.hasHreflang {
				a.hreflang, a.hasHreflang = v, true
			}
		}
	}
	return a
}

func (p *pass) tag(z *html.Tokenizer, name []byte) {
	switch string(name) {
	case "a", "area":
		tag := "a"
		if len(name) == 4 {
			tag = "area"
		}
		a := readAttrs(z)
		if a.hasHref {
			p.add(a.href, tag, KindPage, hasToken(a.rel, "nofollow"))
		}
	case "frame", "iframe":
		tag := "frame"
		if name[0] == 'i' {
			tag = "iframe"
		}
		if a := readAttrs(z); a.hasSrc {
			p.add(a.src, tag, KindPage, false)
		}
	case "img":
		if !p.o.Embeds {
			return
		}
		a := readAttrs(z)
		if a.hasSrc {
			p.add(a.src, "img", KindEmbed, false)
		}
		if a.hasSrcset {
			for u := range srcsetURLs(a.srcset) {
				p.add(u, "img", KindEmbed, false)
			}
		}
	case "script":
		if !p.o.Embeds {
			return
		}
		if a := readAttrs(z); a.hasSrc {
			p.add(a.src, "script", KindEmbed, false)
		}
	case "link":
		a := readAttrs(z)
		if !a.hasHref {
			return
		}
		switch {
		case hasToken(a.rel, "canonical"):
			p.setCanonical(a.href)
		case hasToken(a.rel, "alternate") && a.hasHreflang:
			p.add(a.href, "link", KindPage, hasToken(a.rel, "nofollow"))
		}
	case "base":
		if p.hasBase {
			return
		}
		a := readAttrs(z)
		if !a.hasHref {
			return
		}
		p.hasBase = true
		if p.baseFixed {
			return
		}
		// HTML: the first base element with an href sets the document
		// base URL; if it cannot be resolved, the document URL stays.
		b := p.res.resolve(p.href(a.href))
		if b == nil {
			return
		}
		p.base = b
		p.res.init(b)
		if len(p.links) > 0 || p.canonSet {
			p.rerun = true
		}
	case "meta":
		p.meta(z)
	case "body":
		p.inBody = true
	}
}

// href returns the raw attribute value as UTF-8.
func (p *pass) href(v []byte) []byte {
	ascii := true
	for _, c := range v {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return v
	}
	p.nonASCII = true
	return p.toUTF8(v)
}

func (p *pass) add(raw []byte, tag string, kind Kind, nofollow bool) {
	u := p.res.resolve(p.href(raw))
	if u == nil {
		return
	}
	p.addURL(u, tag, kind, nofollow)
}

func (p *pass) addURL(u *url.URL, tag string, kind Kind, nofollow bool) {
	key := maphash.String(seed, urlnorm.Canonical(u))
	if i, ok := p.seen[key]; ok {
		l := &p.links[i]
		switch {
		case kind == KindEmbed:
			// An embed says nothing about following.
		case l.Kind == KindEmbed:
			l.Tag, l.Kind, l.NoFollow = tag, KindPage, nofollow
		default:
			// A URL is followed if any of its links may be followed.
			l.NoFollow = l.NoFollow && nofollow
		}
		return
	}
	p.seen[key] = int32(len(p.links))
	p.links = append(p.links, Link{URL: u, Tag: tag, NoFollow: nofollow, Kind: kind})
}

// setCanonical records a <link rel=canonical>. Google reads it only in
// <head> and ignores all of them when a page names different ones.
func (p *pass) setCanonical(raw []byte) {
	if p.inBody {
		return
	}
	u := p.res.resolve(p.href(raw))
	if u == nil {
		return
	}
	switch {
	case !p.canonSet:
		p.canonical, p.canonSet = u, true
		if p.o.CanonicalLinks {
			p.addURL(u, "link", KindPage, false)
		}
	case p.canonical != nil && urlnorm.Canonical(p.canonical) != urlnorm.Canonical(u):
		p.canonical = nil
	}
}

// meta reads <meta name="robots" content="..."> (and the crawler's own
// name, if set) and the encoding declarations <meta charset> and <meta
// http-equiv="Content-Type">.
func (p *pass) meta(z *html.Tokenizer) {
	var name, content, httpEquiv, cs []byte
	var hasName, hasContent, hasEquiv, hasCharset bool
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		switch string(k) {
		case "name":
			if !hasName {
				name, hasName = bytes.TrimSpace(v), true
			}
		case "content":
			if !hasContent {
				content, hasContent = v, true
			}
		case "http-equiv":
			if !hasEquiv {
				httpEquiv, hasEquiv = bytes.TrimSpace(v), true
			}
		case "charset":
			if !hasCharset {
				cs, hasCharset = v, true
			}
		}
	}
	switch {
	case hasCharset:
		p.declare(string(cs))
	case hasEquiv && hasContent && bytes.EqualFold(httpEquiv, []byte("content-type")):
		if label, ok := charsetParam(string(content)); ok {
			p.declare(label)
		}
	}
	if !hasName || !hasContent {
		return
	}
	if !bytes.EqualFold(name, []byte("robots")) && (p.o.Agent == "" || !bytes.EqualFold(name, []byte(p.o.Agent))) {
		return
	}
	noindex, nofollow := robotsDirectives(string(content))
	p.noIndex = p.noIndex || noindex
	p.noFollow = p.noFollow || nofollow
}

// hasToken reports whether the space-separated list s holds tok, ignoring
// ASCII case.
func hasToken(s []byte, tok string) bool {
	for len(s) > 0 {
		i := 0
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		j := i
		for j < len(s) && !isSpace(s[j]) {
			j++
		}
		if j > i && len(tok) == j-i && strings.EqualFold(string(s[i:j]), tok) {
			return true
		}
		s = s[j:]
	}
	return false
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}
