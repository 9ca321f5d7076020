package gensite

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Kind is the kind of site to generate.
type Kind string

// The kinds of site.
const (
	Shop  Kind = "shop"
	News  Kind = "news"
	Forum Kind = "forum"
	Wiki  Kind = "wiki"
)

// Kinds lists every kind.
var Kinds = []Kind{Shop, News, Forum, Wiki}

// Request is one logged request: its request URI as received and the
// status it was answered with.
type Request struct {
	URI    string
	Status int
}

// Families of URLs that are not real pages at their canonical URI.
const (
	FamNotFound   = "404"
	FamRobots     = "robots.txt"
	FamDefault    = "default-value" // a real page with a default-valued parameter written out
	FamTracking   = "tracking"      // a real page with a tracking parameter
	FamParamOrder = "param-order"   // a real page with its parameters in another order
	FamEncoding   = "encoding"      // a real page written with other escapes
	FamExtraParam = "extra-param"   // a real page with a redundant, consistent parameter
	FamPostLink   = "post-link"     // a real page addressed through one of its posts
	FamFacet      = "facet-combination"
	FamFilter     = "filter-combination"
	FamSort       = "sort"
	FamPerPage    = "per-page"
	FamViewMode   = "view-mode"
	FamPrint      = "print"
	FamAMP        = "amp"
	FamHighlight  = "highlight"
	FamTagX       = "tag-intersection"
	FamDayRange   = "day-range"
	FamHistory    = "history"
	FamRevision   = "revision"
	FamDiff       = "diff"
	FamAction     = "action"
	FamExtraPage  = "extra-pagination"
	FamSearch     = "search"
	FamRedirect   = "redirect"
)

// Site is one generated website. It is an http.Handler, safe for
// concurrent use; it logs every request it answers.
type Site struct {
	kind Kind
	seed int64
	c    *common
	impl kindImpl
	real []string

	mu  sync.Mutex
	log []Request
}

// kindImpl is what each kind of site provides.
type kindImpl interface {
	// route decodes a request path and query (tracking parameter already
	// removed); nil means unknown.
	route(path string, p *params) *resolved
	realPages() []string
	describe() string
}

// resolved is what a URL serves.
type resolved struct {
	status   int
	family   string // "" for a real page (in whatever form it was asked)
	canon    string // the canonical URI of what is shown
	real     string // the real page served in full, if any
	base     string // the real page this view is a variant of, if any
	location string // of a redirect
	render   func(d *doc)
}

// New generates the site of kind drawn from seed. The same kind and seed
// always give the same site, byte for byte.
func New(kind Kind, seed int64) (*Site, error) {
	c := newCommon(kind, seed)
	var impl kindImpl
	var err error
	switch kind {
	case Shop:
		impl, err = newShop(c)
	case News:
		impl, err = newNews(c)
	case Forum:
		impl, err = newForum(c)
	case Wiki:
		impl, err = newWiki(c)
	default:
		return nil, fmt.Errorf("gensite: unknown kind %q", kind)
	}
	if err != nil {
		return nil, err
	}
	c.drawTracking()
	real := impl.realPages()
	slices.Sort(real)
	return &Site{kind: kind, seed: seed, c: c, impl: impl, real: real}, nil
}

// Kind returns the site's kind.
func (s *Site) Kind() Kind { return s.kind }

// Seed returns the site's seed.
func (s *Site) Seed() int64 { return s.seed }

// Name returns the site's drawn name.
func (s *Site) Name() string { return s.c.name }

// RealPages returns the canonical request URIs of the real pages, sorted.
func (s *Site) RealPages() []string { return slices.Clone(s.real) }

// Requests returns the log of requests so far, in the order answered.
func (s *Site) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// ResetRequests empties the request log.
func (s *Site) ResetRequests() {
	s.mu.Lock()
	s.log = nil
	s.mu.Unlock()
}

// PageOf returns the real page (its canonical URI) that uri serves in
// full: uri itself for a real page, or the page with default-valued,
// reordered, redundant or tracking parameters stripped. It reports false
// for every other URL — variants that show something else (other sorts,
// filter combinations, print, AMP or highlighted views, revisions…),
// redirects and unknown URLs.
func (s *Site) PageOf(uri string) (string, bool) {
	res := s.resolve(uri)
	return res.real, res.real != ""
}

// FamilyOf returns "" for a real page at its canonical URI and otherwise
// the family of uri: a trap family ("facet-combination", "sort", "print",
// …), a duplicate form of a real page ("default-value", "tracking",
// "param-order", "extra-param", "post-link", "encoding"), "robots.txt",
// or "404" for an unknown URL.
func (s *Site) FamilyOf(uri string) string { return s.resolve(uri).family }

// Status returns the status uri is answered with, without logging it.
func (s *Site) Status(uri string) int { return s.resolve(uri).status }

// Describe returns one paragraph naming the drawn surface of the site.
func (s *Site) Describe() string {
	c := s.c
	var hints []string
	if c.hint.canonical {
		hints = append(hints, `rel="canonical" on every page`)
	}
	if c.hint.nofollow {
		hints = append(hints, `rel="nofollow" on links to variants`)
	}
	if c.hint.robots != "" {
		hints = append(hints, `<meta name="robots" content="`+c.hint.robots+`"> on variants`)
	}
	h := "no crawler hints"
	if len(hints) > 0 {
		h = "hints: " + strings.Join(hints, ", ")
	}
	tr := "no tracking parameter"
	if c.track != "" {
		tr = "tracking parameter ?" + c.track + "= on some links"
	}
	fp := make([]string, len(c.footer))
	for i, f := range c.footer {
		fp[i] = f.path
	}
	return fmt.Sprintf("%s %q (seed %d, %d real pages): %s Footer pages %s; %s; %s.",
		s.kind, c.name, s.seed, len(s.real), s.impl.describe(), strings.Join(fp, ", "), tr, h)
}

// ServeHTTP answers a request and logs its request URI and status.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u := r.RequestURI
	if u == "" {
		u = r.URL.RequestURI()
	}
	res := s.resolve(u)
	s.mu.Lock()
	s.log = append(s.log, Request{URI: u, Status: res.status})
	s.mu.Unlock()
	var body []byte
	switch {
	case res.family == FamRobots:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		body = []byte("User-agent: *\nAllow: /\n")
	case res.status == http.StatusFound:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Location", res.location)
		body = []byte(`<!DOCTYPE html><html><head><title>Redirect</title></head><body><p>Redirecting to <a href="` +
			html.EscapeString(res.location) + `">the post</a>.</p></body></html>` + "\n")
	default:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		body = s.body(res)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(res.status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// Body returns what uri answers with (status and body) without logging.
func (s *Site) Body(uri string) (int, []byte) {
	res := s.resolve(uri)
	switch {
	case res.family == FamRobots:
		return res.status, []byte("User-agent: *\nAllow: /\n")
	case res.status == http.StatusFound:
		return res.status, nil
	}
	return res.status, s.body(res)
}

// Location returns where uri redirects to, or "".
func (s *Site) Location(uri string) string { return s.resolve(uri).location }

// resolve decodes uri. It is the only place that decides what a URL is.
func (s *Site) resolve(raw string) *resolved {
	if raw == "/robots.txt" {
		return &resolved{status: http.StatusOK, family: FamRobots}
	}
	u, err := url.ParseRequestURI(raw)
	if err != nil || u.Fragment != "" || u.Opaque != "" {
		return s.nf()
	}
	if u.Scheme != "" || u.Host != "" {
		// Absolute form, as sent to a proxy: judge its path and query.
		raw = u.RequestURI()
	}
	m, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return s.nf()
	}
	for _, vs := range m {
		if len(vs) != 1 {
			return s.nf()
		}
	}
	tracked := false
	if t := s.c.track; t != "" {
		if v, ok := m[t]; ok {
			if !validTrackValue(v[0]) {
				return s.nf()
			}
			delete(m, t)
			tracked = true
		}
	}
	p := newParams(m)
	res := s.impl.route(u.Path, p)
	if res == nil || !p.done() {
		return s.nf()
	}
	if res.status == 0 {
		res.status = http.StatusOK
	}
	if res.family == "" {
		res.real = res.canon
		switch {
		case tracked:
			res.family = FamTracking
		case raw != res.canon:
			res.family = formFamily(raw, res.canon)
		}
	}
	return res
}

func (s *Site) nf() *resolved {
	return &resolved{status: http.StatusNotFound, family: FamNotFound, render: s.c.notFoundPage}
}

func validTrackValue(v string) bool {
	if v == "" || len(v) > 40 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// formFamily tells why raw, which decodes to the same page as canon, is
// written differently: parameters in another order, or other escapes.
func formFamily(raw, canon string) string {
	rp, rq, _ := strings.Cut(raw, "?")
	cp, cq, _ := strings.Cut(canon, "?")
	if rp == cp && rq != cq && rq != "" {
		a := strings.Split(rq, "&")
		b := strings.Split(cq, "&")
		slices.Sort(a)
		slices.Sort(b)
		if slices.Equal(a, b) {
			return FamParamOrder
		}
	}
	return FamEncoding
}

func (s *Site) body(res *resolved) []byte {
	c := s.c
	d := &doc{}
	if res.render != nil {
		res.render(d)
	} else {
		c.notFoundPage(d)
	}
	if res.status == http.StatusOK {
		if c.hint.canonical {
			switch {
			case res.real != "":
				d.canonical = res.real
			case res.base != "":
				d.canonical = res.base
			default:
				d.canonical = res.canon
			}
		}
		if c.hint.robots != "" && res.real == "" {
			d.robots = c.hint.robots
		}
	}
	return c.renderDoc(d)
}

// ---- what every kind shares: name, language, hints, chrome ----

type hints struct {
	canonical bool   // <link rel="canonical"> on every page
	nofollow  bool   // rel="nofollow" on links to variants
	robots    string // meta robots on variants: "", "noindex,follow" or "noindex,nofollow"
	// everywhere puts links into the combination traps in every page's
	// sidebar, not only on list pages.
	everywhere bool
}

type footerPage struct {
	key, title, path string
}

type chromeStyle struct {
	sideFirst          bool
	navList            bool
	hdr, nav, wrap     string
	mainCls, side, ftr string
	crumbSep           string
	titleSep           string
	css                string
}

type common struct {
	kind    Kind
	seed    int64
	root    uint64
	v       *vocab
	name    string
	tagline string
	now     time.Time
	since   int // first year of the copyright line
	hint    hints
	footer  []footerPage
	st      chromeStyle
	nav     []string // header navigation links (HTML)
	// sidebar adds the kind's sidebar widgets to pages common to every
	// kind (footer pages, 404 pages).
	sidebar func(d *doc)
	// track is the tracking parameter ("" when the site has none); kinds
	// add it to some links (trackLink).
	track      string
	trackOn    bool
	usedParams map[string]bool
	usedPaths  map[string]bool // first path segments taken by routes
}

func newCommon(kind Kind, seed int64) *common {
	c := &common{kind: kind, seed: seed, root: mix(uint64(seed), strHash(string(kind))),
		usedParams: map[string]bool{}, usedPaths: map[string]bool{}}
	r := c.rng("common")
	c.v = newVocab(r)
	base := title(c.v.name(r))
	switch kind {
	case Shop:
		c.name = base + pick(r, []string{" Store", " Shop", " Outlet", " & Co", " Market", " Supply", ""})
	case News:
		c.name = pick(r, []string{"The ", "", "", "Daily "}) + base + pick(r, []string{" Times", " Post", " Herald", " Courier", " Gazette", " News", ""})
	case Forum:
		c.name = base + pick(r, []string{" Forum", " Community", " Boards", " Talk", " Hub"})
	case Wiki:
		c.name = base + pick(r, []string{"Wiki", " Wiki", "pedia", " Docs", " Knowledge Base"})
	}
	c.tagline = c.v.phrase(r, r.between(3, 6))
	c.now = time.Date(r.between(2019, 2025), time.Month(r.between(1, 12)), r.between(1, 28), r.between(8, 20), r.between(0, 59), 0, 0, time.UTC)
	c.since = c.now.Year() - r.between(3, 12)

	// Hints: about half the seeds have none at all.
	if r.chance(0.5) {
		for !c.hint.canonical && !c.hint.nofollow && c.hint.robots == "" {
			c.hint.canonical = r.chance(0.5)
			c.hint.nofollow = r.chance(0.5)
			if r.chance(0.5) {
				c.hint.robots = pick(r, []string{"noindex,follow", "noindex,nofollow"})
			}
		}
	}
	c.hint.everywhere = r.chance(0.5)
	c.trackOn = r.chance(0.55)

	// Footer pages.
	keys := sample(r, []string{"about", "contact", "privacy", "terms", "help", "imprint", "cookies", "jobs"}, r.between(3, 5))
	if !slices.Contains(keys, "about") {
		keys[0] = "about"
	}
	titles := map[string]string{"about": "About us", "contact": "Contact", "privacy": "Privacy policy", "terms": "Terms of use",
		"help": "Help", "imprint": "Imprint", "cookies": "Cookie policy", "jobs": "Careers"}
	shape := r.intn(6)
	for _, k := range keys {
		var p string
		switch shape {
		case 0:
			p = "/" + k
		case 1:
			p = "/" + k + "/"
		case 2:
			p = "/pages/" + k
		case 3:
			p = "/info/" + k + ".html"
		case 4:
			p = "/" + k + ".html"
		default:
			p = "/site/" + k
		}
		c.footer = append(c.footer, footerPage{key: k, title: titles[k], path: p})
	}
	c.usedPaths[firstSeg(c.footer[0].path)] = true

	// Chrome.
	themes := [][6]string{
		{"site-header", "main-nav", "container", "content", "sidebar", "site-footer"},
		{"header", "nav", "wrapper", "main", "aside", "footer"},
		{"masthead", "primary-menu", "page", "primary", "secondary", "colophon"},
		{"top", "menu", "layout", "col-main", "col-side", "bottom"},
		{"hdr", "navbar", "wrap", "body-main", "rail", "ftr"},
	}
	t := pick(r, themes)
	c.st = chromeStyle{sideFirst: r.chance(0.4), navList: r.chance(0.7),
		hdr: t[0], nav: t[1], wrap: t[2], mainCls: t[3], side: t[4], ftr: t[5],
		crumbSep: pick(r, []string{" › ", " / ", " » ", " &gt; "}),
		titleSep: pick(r, []string{" | ", " - ", " — ", " · "})}
	col := pick(r, []string{"#1a4d8f", "#8f1a3c", "#2d6a3e", "#6a4b2d", "#444", "#5b2d8f"})
	c.st.css = "body{font-family:" + pick(r, []string{"Georgia,serif", "Helvetica,Arial,sans-serif", "system-ui,sans-serif", "Verdana,sans-serif"}) +
		";margin:0;color:#222}a{color:" + col + "}." + c.st.wrap + "{display:flex;gap:2em;max-width:" + strconv.Itoa(r.between(60, 80)) +
		"em;margin:auto}." + c.st.mainCls + "{flex:3}." + c.st.side + "{flex:1;font-size:.9em}." + c.st.hdr + "," + "." + c.st.ftr +
		"{background:" + col + ";color:#fff;padding:1em}." + c.st.hdr + " a,." + c.st.ftr + " a{color:#fff}"
	return c
}

// rng returns a generator for one purpose, keyed by the site and ids.
func (c *common) rng(label string, ids ...int) *rng {
	parts := make([]uint64, 0, len(ids)+2)
	parts = append(parts, c.root, strHash(label))
	for _, id := range ids {
		parts = append(parts, uint64(id))
	}
	return newRNG(mix(parts...))
}

// param claims a query parameter name from the candidates, one not yet
// used by another route of the site.
func (c *common) param(r *rng, cands ...string) string {
	start := r.intn(len(cands))
	for i := range cands {
		n := cands[(start+i)%len(cands)]
		if !c.usedParams[n] {
			c.usedParams[n] = true
			return n
		}
	}
	for {
		n := c.v.name(r)[:3] + strconv.Itoa(r.intn(10))
		if !c.usedParams[n] {
			c.usedParams[n] = true
			return n
		}
	}
}

// root path segments (e.g. "tag" of "/tag/x") claimed by routes.
func (c *common) segment(r *rng, cands ...string) string {
	start := r.intn(len(cands))
	for i := range cands {
		n := cands[(start+i)%len(cands)]
		if !c.usedPaths[n] {
			c.usedPaths[n] = true
			return n
		}
	}
	for {
		n := c.v.name(r)
		if !c.usedPaths[n] {
			c.usedPaths[n] = true
			return n
		}
	}
}

func firstSeg(p string) string {
	p = strings.TrimPrefix(p, "/")
	if i := strings.IndexAny(p, "/?"); i >= 0 {
		p = p[:i]
	}
	return p
}

func (c *common) drawTracking() {
	if !c.trackOn {
		return
	}
	r := c.rng("tracking")
	for _, n := range sample(r, []string{"utm_source", "ref", "src", "from", "cmp", "source", "trk", "utm_campaign"}, 8) {
		if !c.usedParams[n] {
			c.track = n
			c.usedParams[n] = true
			return
		}
	}
}

// trackLink adds the tracking parameter (when the site has one) to a link
// of the named placement.
func (c *common) trackLink(u, place string) string {
	if c.track == "" {
		return u
	}
	return addParam(u, c.track, place)
}

func (c *common) footerRoute(path string) *resolved {
	for _, f := range c.footer {
		if f.path == path {
			f := f
			return &resolved{canon: f.path, render: func(d *doc) { c.footerPage(d, f) }}
		}
	}
	return nil
}

func (c *common) footerPages() []string {
	out := make([]string, len(c.footer))
	for i, f := range c.footer {
		out[i] = f.path
	}
	return out
}

func (c *common) footerPage(d *doc, f footerPage) {
	r := c.rng("footer", int(strHash(f.key)))
	d.title = f.title
	d.tmpl = "page"
	d.crumbs = []string{c.a("/", "Home"), esc(f.title)}
	d.h1(f.title)
	for _, p := range c.v.prose(r, r.between(2, 4), c.name+" "+f.key) {
		d.p(p)
	}
	if f.key == "contact" {
		d.printf("<address>%s<br>%d %s Street<br>%s</address>\n", esc(c.name), r.between(1, 300), title(c.v.word(r)), title(c.v.word(r)))
	}
	if c.sidebar != nil {
		c.sidebar(d)
	}
}

func (c *common) notFoundPage(d *doc) {
	d.title = "Page not found"
	d.tmpl = "error404"
	d.h1("Page not found")
	d.p("Sorry, the page you asked for does not exist or has been removed.")
	d.printf("<p>%s</p>\n", c.a("/", "Back to the home page"))
	if c.sidebar != nil {
		c.sidebar(d)
	}
}

// ---- HTML ----

func esc(s string) string { return html.EscapeString(s) }

// a is an ordinary link.
func (c *common) a(href, text string) string {
	return `<a href="` + esc(href) + `">` + esc(text) + `</a>`
}

// va is a link to a variant of a page (another sort, a filter, a print
// view, an action); it carries rel="nofollow" when the site hints so.
func (c *common) va(href, text string) string {
	if c.hint.nofollow {
		return `<a href="` + esc(href) + `" rel="nofollow">` + esc(text) + `</a>`
	}
	return c.a(href, text)
}

// ac is a link with a class attribute.
func (c *common) ac(href, text, cls string, variant bool) string {
	rel := ""
	if variant && c.hint.nofollow {
		rel = ` rel="nofollow"`
	}
	return `<a class="` + cls + `" href="` + esc(href) + `"` + rel + `>` + esc(text) + `</a>`
}

const (
	modeFull = iota
	modeBare // print views: no header, sidebar or footer
	modeAMP  // AMP views: their own header and footer, no sidebar
)

type box struct {
	title string
	cls   string
	items []string // HTML
	cloud bool
}

type doc struct {
	title     string
	tmpl      string
	mode      int
	canonical string
	robots    string
	head      []string
	crumbs    []string
	side      []box
	b         strings.Builder
}

func (d *doc) printf(format string, args ...any) { fmt.Fprintf(&d.b, format, args...) }
func (d *doc) raw(s string)                      { d.b.WriteString(s) }
func (d *doc) h1(s string)                       { d.printf("<h1>%s</h1>\n", esc(s)) }
func (d *doc) h2(s string)                       { d.printf("<h2>%s</h2>\n", esc(s)) }
func (d *doc) p(s string)                        { d.printf("<p>%s</p>\n", esc(s)) }

// ul writes a list of HTML items.
func (d *doc) ul(cls string, items []string) {
	if len(items) == 0 {
		return
	}
	d.printf(`<ul class="%s">`+"\n", cls)
	for _, it := range items {
		d.printf("<li>%s</li>\n", it)
	}
	d.raw("</ul>\n")
}

func (c *common) renderDoc(d *doc) []byte {
	var b strings.Builder
	b.Grow(d.b.Len() + 4096)
	st := &c.st
	if d.mode == modeAMP {
		b.WriteString("<!DOCTYPE html>\n<html amp lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	} else {
		b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	}
	b.WriteString("<title>" + esc(d.title) + st.titleSep + esc(c.name) + "</title>\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	if d.robots != "" {
		b.WriteString(`<meta name="robots" content="` + d.robots + "\">\n")
	}
	if d.canonical != "" {
		b.WriteString(`<link rel="canonical" href="` + esc(d.canonical) + "\">\n")
	}
	for _, h := range d.head {
		b.WriteString(h + "\n")
	}
	if d.mode == modeAMP {
		b.WriteString("<style amp-custom>body{font-family:sans-serif;margin:0 1em}</style>\n")
	} else {
		b.WriteString("<style>" + st.css + "</style>\n")
	}
	b.WriteString("</head>\n<body class=\"" + d.tmpl + "\">\n")
	switch d.mode {
	case modeBare:
		b.WriteString("<p class=\"print-site\">" + esc(c.name) + "</p>\n")
		b.WriteString(d.b.String())
		b.WriteString("</body>\n</html>\n")
		return []byte(b.String())
	case modeAMP:
		b.WriteString("<header class=\"amp-header\">" + c.a("/", c.name) + "</header>\n<main>\n")
		b.WriteString(d.b.String())
		b.WriteString("</main>\n<footer class=\"amp-footer\"><p>")
		for i, f := range c.footer {
			if i > 0 {
				b.WriteString(" · ")
			}
			b.WriteString(c.a(f.path, f.title))
		}
		b.WriteString("</p></footer>\n</body>\n</html>\n")
		return []byte(b.String())
	}
	// Header.
	b.WriteString("<header class=\"" + st.hdr + "\">\n<a class=\"logo\" href=\"/\">" + esc(c.name) + "</a>\n")
	b.WriteString("<p class=\"tagline\">" + esc(c.tagline) + "</p>\n")
	b.WriteString("<nav class=\"" + st.nav + "\">")
	if st.navList {
		b.WriteString("<ul>")
		for _, l := range c.nav {
			b.WriteString("<li>" + l + "</li>")
		}
		b.WriteString("</ul>")
	} else {
		b.WriteString(strings.Join(c.nav, " | "))
	}
	b.WriteString("</nav>\n</header>\n")
	if len(d.crumbs) > 0 {
		b.WriteString("<nav class=\"breadcrumbs\">" + strings.Join(d.crumbs, st.crumbSep) + "</nav>\n")
	}
	b.WriteString("<div class=\"" + st.wrap + "\">\n")
	side := func() {
		if len(d.side) == 0 {
			return
		}
		b.WriteString("<aside class=\"" + st.side + "\">\n")
		for _, bx := range d.side {
			b.WriteString("<section class=\"widget " + bx.cls + "\">\n<h3>" + esc(bx.title) + "</h3>\n")
			if bx.cloud {
				b.WriteString("<p class=\"cloud\">" + strings.Join(bx.items, " ") + "</p>\n")
			} else {
				b.WriteString("<ul>\n")
				for _, it := range bx.items {
					b.WriteString("<li>" + it + "</li>\n")
				}
				b.WriteString("</ul>\n")
			}
			b.WriteString("</section>\n")
		}
		b.WriteString("</aside>\n")
	}
	if st.sideFirst {
		side()
	}
	b.WriteString("<main class=\"" + st.mainCls + "\" id=\"content\">\n")
	b.WriteString(d.b.String())
	b.WriteString("</main>\n")
	if !st.sideFirst {
		side()
	}
	b.WriteString("</div>\n<footer class=\"" + st.ftr + "\">\n<ul>")
	for _, f := range c.footer {
		b.WriteString("<li>" + c.a(f.path, f.title) + "</li>")
	}
	b.WriteString("</ul>\n<p>&copy; " + strconv.Itoa(c.since) + "–" + strconv.Itoa(c.now.Year()) + " " + esc(c.name) + ". All rights reserved.</p>\n</footer>\n</body>\n</html>\n")
	return []byte(b.String())
}

// list pages helpers

// pagerHTML writes a pager: previous, numbers, next. href(n, first)
// returns the link of page n; first is true for the link to page 1, whose
// form some templates write with an explicit default.
func (c *common) pagerHTML(d *doc, cur, total int, href func(n int) string, variant bool) {
	ns := pager(cur, total)
	if len(ns) == 0 {
		return
	}
	link := c.a
	if variant {
		link = c.va
	}
	var parts []string
	if cur > 1 {
		parts = append(parts, link(href(cur-1), "« Previous"))
	}
	last := 0
	for _, n := range ns {
		if n > last+1 {
			parts = append(parts, "<span>…</span>")
		}
		last = n
		if n == cur {
			parts = append(parts, `<strong>`+strconv.Itoa(n)+`</strong>`)
		} else {
			parts = append(parts, link(href(n), strconv.Itoa(n)))
		}
	}
	if cur < total {
		parts = append(parts, link(href(cur+1), "Next »"))
	}
	d.printf("<nav class=\"pagination\">%s</nav>\n", strings.Join(parts, " "))
}

// sortKey orders items for a drawn sort option.
type sortOpt struct {
	name  string // the value in URLs
	label string
	key   int // what the kind sorts by
}
