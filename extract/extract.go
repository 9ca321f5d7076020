package extract

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"net/url"
	"slices"
	"strings"
	"sync"

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
//
// URL is what url.URL.String returns for the link's normalized URL, and
// url.Parse reads it back as that URL (it refuses a rare few that
// urlnorm lets through, such as "http://:81:81" from the href "//:81:81";
// they cannot be fetched anyway). It is a string, not a *url.URL,
// because links are the bulk of what extraction allocates: the URLs of a
// page are cut from one string, where a url.URL per link (144 bytes
// before its strings) would be most of the memory.
type Link struct {
	URL      string // absolute, resolved against the base, fragment removed; http or https only
	Tag      string // "a", "area", "frame", "iframe", "link", "img" or "script"
	NoFollow bool   // rel contains "nofollow" (on every occurrence of the URL)
	Kind     Kind   // KindPage or KindEmbed; page if any occurrence of the URL is a page link
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
	// SearchForms holds the actions of the page's search forms — forms
	// sent with GET that have a text field — resolved, without query or
	// fragment, each once: the site's search, whose results are pages
	// the site computes for each query. At most maxSearchForms.
	SearchForms []string
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
	// MaxToken bounds the length of a single token (a tag, a comment, a
	// run of text): reading stops at a longer one, with ErrTokenTooLong.
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
	// TextBuf, when not nil, is where Text and Read put the text: it is
	// appended to TextBuf[:0], so that a caller done with one page's text
	// before it reads the next can lend the same memory again. Default:
	// new memory for every page's text.
	TextBuf []byte
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
	p := o.newPass(docURL, enc, name)
	p.run(body)
	p = p.finish(body)
	return p.page(), p.err
}

func (o Options) newPass(docURL *url.URL, enc encoding.Encoding, name string) *pass {
	return &pass{o: o, doc: docURL, enc: enc, charset: name, declared: enc != nil || name != ""}
}

// finish ends a pass over body: it reads the page again if it must, and
// sets the links' URLs. It returns the pass whose page counts.
func (p *pass) finish(body []byte) *pass {
	if p.rerun {
		// Rare: a <base href> or a <meta charset> came after links that
		// it changes. Read the page again knowing both from the start.
		q := &pass{o: p.o, doc: p.doc, enc: p.enc, charset: p.charset, declared: p.declared,
			base: p.base, baseFixed: true}
		p.release()
		q.run(body)
		p = q
	}
	p.setURLs()
	p.release()
	return p
}

// Reading is what HTML and Text return for one page.
type Reading struct {
	Page    *Page // as HTML returns it
	Err     error // as HTML returns it
	Text    []byte
	TextErr error // as Text returns it
}

// Read returns what HTML and Text return for a page, reading it once
// when the page is UTF-8 (declared so, or undeclared and valid UTF-8),
// which most pages are. A crawler that wants both the links and the text
// of every page saves a second reading of each.
func (o Options) Read(docURL *url.URL, body []byte) Reading {
	lbody, enc, name := o.decodeUpfront(body)
	tbody, same := o.textBodyFrom(lbody, enc)
	if docURL == nil || enc != nil || !same {
		var r Reading
		r.Page, r.Err = o.HTML(docURL, body)
		r.Text, r.TextErr = o.Text(body)
		return r
	}
	p := o.newPass(docURL, enc, name)
	p.start(lbody)
	t := o.newTextSink(len(tbody))
	var sc scanner
	sc.reset(lbody, o.maxToken())
	for links, text := true, true; links || text; {
		k := sc.next()
		links = links && p.token(&sc, k)
		text = text && t.token(&sc, k)
	}
	p = p.finish(lbody)
	var r Reading
	r.Page, r.Err = p.page(), p.err
	r.Text, r.TextErr = t.result()
	return r
}

// scratch is the memory a pass works in and does not return, reused
// from page to page.
type scratch struct {
	res   resolver
	seen  seenSet
	attrs []byte           // attribute values with entities decoded
	hrefs map[uint64]int32 // maphash of an href's bytes → its link's index, or -1
	urls  []byte           // the URLs of the links, one after the other
	ends  []int            // where each link's URL ends in urls
	links []Link           // the page's links, until setURLs copies them out
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// release returns the pass's scratch to the pool.
func (p *pass) release() {
	s := p.s
	if s == nil {
		return
	}
	p.s, p.res = nil, nil
	s.res.base = nil
	if len(s.seen.slots) > 1<<17 {
		s.seen = seenSet{} // do not keep the table of a huge page
	}
	if cap(s.urls) > 1<<20 || cap(s.ends) > 1<<16 || cap(s.links) > 1<<16 {
		s.urls, s.ends, s.links = nil, nil, nil // nor its links
	}
	scratchPool.Put(s)
}

// seenSet maps the hash of a link's canonical URL to its index in
// pass.links: an open-addressing table of indexes plus one, and the hash
// of each link.
type seenSet struct {
	slots  []int32
	hashes []uint64
}

func (s *seenSet) reset(n int) {
	size := 16
	for size*3 < n*4 {
		size *= 2
	}
	if cap(s.slots) >= size {
		s.slots = s.slots[:size]
		clear(s.slots)
	} else {
		s.slots = make([]int32, size)
	}
	s.hashes = s.hashes[:0]
}

// find returns the index of the link of hash h, or -1.
func (s *seenSet) find(h uint64) int {
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		v := s.slots[i]
		if v == 0 {
			return -1
		}
		if s.hashes[v-1] == h {
			return int(v - 1)
		}
	}
}

// add records that the next link, index len(s.hashes), has hash h, which
// find does not know.
func (s *seenSet) add(h uint64) {
	s.hashes = append(s.hashes, h)
	if len(s.hashes)*4 > len(s.slots)*3 {
		s.slots = make([]int32, 2*len(s.slots))
		for i, h := range s.hashes {
			s.insert(h, i)
		}
		return
	}
	s.insert(h, len(s.hashes)-1)
}

func (s *seenSet) insert(h uint64, i int) {
	mask := uint64(len(s.slots) - 1)
	j := h & mask
	for s.slots[j] != 0 {
		j = (j + 1) & mask
	}
	s.slots[j] = int32(i + 1)
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
	s         *scratch
	res       *resolver // &s.res

	links     []Link   // URL set by setURLs, from s.urls and s.ends
	seen      *seenSet // maphash of urlnorm.Canonical → index in links; &s.seen
	nonASCII  bool     // an href with non-ASCII bytes was resolved
	rerun     bool
	inBody    bool
	canonical *url.URL
	canonSet  bool // a canonical was seen; canonical nil then means conflict
	noFollow  bool
	noIndex   bool
	// form is the action of the GET form last opened, until a text field
	// makes it a search form (forms).
	form    *url.URL
	forms   []string
	err     error
	decoded []byte // scratch for hrefs decoded to UTF-8
}

func (p *pass) page() *Page {
	pg := &Page{Links: p.links, Base: p.doc, NoFollow: p.noFollow, NoIndex: p.noIndex, Canonical: p.canonical, Charset: p.charset, SearchForms: p.forms}
	if p.base != nil {
		pg.Base = p.base
	}
	return pg
}

func (p *pass) run(body []byte) {
	var sc scanner
	sc.reset(body, p.o.maxToken())
	p.start(body)
	for {
		if !p.token(&sc, sc.next()) {
			return
		}
	}
}

// start readies the pass to read body.
func (p *pass) start(body []byte) {
	base := p.doc
	if p.base != nil {
		base = p.base
	}
	p.s = scratchPool.Get().(*scratch)
	p.res, p.seen = &p.s.res, &p.s.seen
	p.s.urls, p.s.ends = p.s.urls[:0], p.s.ends[:0]
	p.res.init(base)
	if p.s.hrefs == nil || len(p.s.hrefs) > 1<<14 {
		p.s.hrefs = make(map[uint64]int32) // not the table of a huge page
	} else {
		clear(p.s.hrefs)
	}
	// The links gather in the scratch, and setURLs copies them out at
	// their number. (Counting them first, to size the results, was a pass
	// over the page of its own.)
	p.links = p.s.links[:0]
	p.seen.reset(256)
	p.form, p.forms = nil, nil
}

// token takes the scanner's current token, of kind k, and reports
// whether to go on: false at the end, on an error, or when the page must
// be read again (rerun).
func (p *pass) token(sc *scanner, k tokenKind) bool {
	switch k {
	case tokEOF:
		return false
	case tokTooLong:
		p.err = fmt.Errorf("%w (%d bytes): %w", ErrTokenTooLong, p.o.maxToken(), html.ErrBufferExceeded)
		return false
	case tokStart, tokSelfClosing:
		if tagFlags[sc.id]&tagLinks != 0 {
			p.tag(sc.raw(), sc.de-sc.start, tagNames[sc.id])
		}
		return !p.rerun
	}
	return true
}

// attrs holds the attributes of one tag that extraction reads, as slices
// of the page or of the pass's scratch.
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

// tag reads a start tag of interest: name, lowercase, is one of the
// tagLinks names, and its attributes start at raw[end].
func (p *pass) tag(raw []byte, end int, name string) {
	switch name {
	case "a", "area":
		a := p.attrs(raw, end)
		if a.hasHref {
			p.add(a.href, name, KindPage, hasToken(a.rel, "nofollow"))
		}
	case "frame", "iframe":
		if a := p.attrs(raw, end); a.hasSrc {
			p.add(a.src, name, KindPage, false)
		}
	case "img":
		if !p.o.Embeds {
			return
		}
		a := p.attrs(raw, end)
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
		if a := p.attrs(raw, end); a.hasSrc {
			p.add(a.src, "script", KindEmbed, false)
		}
	case "link":
		a := p.attrs(raw, end)
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
		a := p.attrs(raw, end)
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
		clear(p.s.hrefs) // hrefs now resolve against b
		if len(p.links) > 0 || p.canonSet {
			p.rerun = true
		}
	case "meta":
		p.meta(raw, end)
	case "form":
		p.openForm(raw, end)
	case "input":
		if p.form != nil && len(p.forms) < maxSearchForms && textInput(raw, end) {
			if u := p.form.String(); !slices.Contains(p.forms, u) {
				p.forms = append(p.forms, u)
			}
			p.form = nil
		}
	case "body":
		p.inBody = true
	}
}

// maxSearchForms bounds the search forms read of one page.
const maxSearchForms = 8

// openForm reads a <form>: one sent with GET (the default) has its
// action, resolved (the document's own URL when it has none), kept in
// p.form until a text field inside it shows it is a search form.
func (p *pass) openForm(raw []byte, end int) {
	p.form = nil
	var action []byte
	hasAction, get := false, true
	eachAttr(raw, end, func(key, val []byte) bool {
		switch {
		case asciiLowerEqual(key, "action") && !hasAction:
			action, hasAction = val, true
		case asciiLowerEqual(key, "method"):
			get = asciiLowerEqual(bytes.TrimSpace(val), "get")
		}
		return true
	})
	if !get {
		return
	}
	if i := bytes.IndexAny(action, "?#"); i >= 0 {
		action = action[:i] // a search's query is the form's fields
	}
	var u *url.URL
	if len(bytes.TrimSpace(action)) == 0 {
		base := p.doc
		if p.base != nil {
			base = p.base
		}
		v := *base
		u = &v
	} else if u = p.res.resolve(p.href(action)); u == nil {
		return
	}
	v := *u
	v.RawQuery, v.ForceQuery, v.Fragment, v.RawFragment = "", false, "", ""
	p.form = &v
}

// textInput reports whether an <input> is a text field: its type is
// text or search, or missing or unknown (which HTML reads as text).
func textInput(raw []byte, end int) bool {
	text := true
	eachAttr(raw, end, func(key, val []byte) bool {
		if asciiLowerEqual(key, "type") {
			t := bytes.TrimSpace(val)
			text = len(t) == 0 || asciiLowerEqual(t, "text") || asciiLowerEqual(t, "search") || !knownInputType(t)
			return false
		}
		return true
	})
	return text
}

// knownInputType reports whether t names an input type of HTML other
// than text and search.
func knownInputType(t []byte) bool {
	for _, k := range []string{"hidden", "submit", "button", "checkbox", "radio", "password", "email", "number",
		"date", "datetime-local", "month", "week", "time", "range", "color", "file", "image", "reset", "tel", "url"} {
		if asciiLowerEqual(t, k) {
			return true
		}
	}
	return false
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

// add adds the link of the attribute value raw, unless the page has it
// already. A page names most of its links several times (a menu, a
// sidebar, a list and its pager), so what an href resolved to is kept by
// its bytes, and the same href again costs a lookup.
func (p *pass) add(raw []byte, tag string, kind Kind, nofollow bool) {
	ascii := true
	for _, c := range raw {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if !ascii {
		// Read by the page's encoding, which a later <meta> may change.
		p.resolveAdd(raw, tag, kind, nofollow)
		return
	}
	h := maphash.Bytes(seed, raw)
	if i, ok := p.s.hrefs[h]; ok {
		if i >= 0 {
			p.mergeAt(int(i), tag, kind, nofollow)
		}
		return
	}
	p.s.hrefs[h] = int32(p.resolveAdd(raw, tag, kind, nofollow))
}

// resolveAdd resolves raw and adds its link, unless the page has it
// already. It returns the link's index, or -1 when raw is not a link.
func (p *pass) resolveAdd(raw []byte, tag string, kind Kind, nofollow bool) int {
	r := p.res
	h, schemeEnd, ok := r.prepare(p.href(raw))
	if !ok {
		return -1
	}
	if r.fast {
		b, st := r.fastBuild(h, schemeEnd)
		switch st {
		case fastNil:
			return -1
		case fastOK:
			key, ok := r.fastKey(b)
			if !ok {
				u := new(url.URL)
				r.fill(u, b)
				return p.addURL(u, tag, kind, nofollow)
			}
			if i := p.merge(key, tag, kind, nofollow); i >= 0 {
				return i
			}
			// The common link: its URL is written once, where it stays.
			p.s.urls = r.appendURL(p.s.urls, b)
			return p.insert(key, tag, kind, nofollow)
		}
	}
	if u := slowResolve(r.base, string(h)); u != nil {
		return p.addURL(u, tag, kind, nofollow)
	}
	return -1
}

// addURL adds a link to u unless the page has one already, and returns
// its index.
func (p *pass) addURL(u *url.URL, tag string, kind Kind, nofollow bool) int {
	key := maphash.String(seed, urlnorm.Canonical(u))
	if i := p.merge(key, tag, kind, nofollow); i >= 0 {
		return i
	}
	p.s.urls = append(p.s.urls, u.String()...)
	return p.insert(key, tag, kind, nofollow)
}

// merge merges a link into the page's link of the same key, if any, and
// returns its index, or -1 when there is none.
func (p *pass) merge(key uint64, tag string, kind Kind, nofollow bool) int {
	i := p.seen.find(key)
	if i >= 0 {
		p.mergeAt(i, tag, kind, nofollow)
	}
	return i
}

// mergeAt merges a link into the page's link i, of the same URL.
func (p *pass) mergeAt(i int, tag string, kind Kind, nofollow bool) {
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
}

// insert adds a link that merge did not find, whose URL has just been
// appended to s.urls, and returns its index.
func (p *pass) insert(key uint64, tag string, kind Kind, nofollow bool) int {
	p.seen.add(key)
	p.s.ends = append(p.s.ends, len(p.s.urls))
	p.links = append(p.links, Link{Tag: tag, NoFollow: nofollow, Kind: kind})
	return len(p.links) - 1
}

// setURLs sets the URLs of the links, cut from one string: the page's
// URLs cost one allocation of the bytes they need. (A caller that keeps
// one of them keeps them all: some tens of kilobytes for a large page.)
func (p *pass) setURLs() {
	p.s.links = p.links[:0] // the scratch, for the next page
	p.links = append([]Link(nil), p.links...)
	all := string(p.s.urls)
	start := 0
	for i, end := range p.s.ends {
		p.links[i].URL = all[start:end]
		start = end
	}
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
func (p *pass) meta(raw []byte, end int) {
	m := p.metaAttrs(raw, end)
	name, content, httpEquiv, cs := bytes.TrimSpace(m.name), m.content, bytes.TrimSpace(m.httpEquiv), m.charset
	hasName, hasContent, hasEquiv, hasCharset := m.hasName, m.hasContent, m.hasEquiv, m.hasCharset
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
