package urlspace

import (
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

// Kinds of duplicate a fetched page can be (Dup.Kind), as the crawler
// found them from the page's content.
const (
	// DupCopy: the page's text is that of a page already fetched.
	DupCopy = "copy"
	// DupReordered: the same links as a page of the same path, in another
	// order (a sort order of a list).
	DupReordered = "reordered"
	// DupChain: near-identical to the page that linked it, under the same
	// URL pattern, with no other links: a calendar or a counter.
	DupChain = "chain"
	// DupEndless: the text of the page whose path its own extends (a
	// relative link that serves the page it came from).
	DupEndless = "endless-path"
	// DupView: the main text of another page in other chrome (a print,
	// AMP or highlighted view).
	DupView = "view"
	// DupRedirect: a redirect to a URL the crawl knew already.
	DupRedirect = "redirect"
	// DupResorted: as many links elsewhere as the page its URL gives
	// without one or two of its parameters, and the same later pages: the
	// same list in another order, spread over as many pages.
	DupResorted = "resorted"
	// DupNarrower: links to nothing but what the page its URL gives
	// without one of its parameters links to, and to less, that page
	// having later pages: the list narrowed to its newest items (topics of
	// the last week).
	DupNarrower = "narrower"
	// DupWider: every link of the page its URL gives without one of its
	// parameters, and more (a list shown 48 or 96 to a page): a larger
	// view of a list whose default pages list the same items.
	DupWider = "wider"
)

// Dup says how a fetched page repeats another. The zero value is a page
// with new content.
type Dup struct {
	Kind string // one of the Dup constants, or "" for new content
	Of   string // the URL of the page it repeats, for the evidence
	// Tail is, for DupEndless, what the URL adds to the path of the page
	// it repeats ("reviews/"): URLs ending with it are charged together.
	Tail string
	// OfTemplate is the template of the page it repeats, when known. When
	// that page's URL is this one's with parameters added (a sort order
	// fetched before the plain list), the duplicate is charged to that
	// template instead: the variant is the trap, not the plain URL.
	OfTemplate string
}

// PatternConfig configures Patterns. Its zero value gives the defaults.
type PatternConfig struct {
	// MinDuplicates is how many duplicates a pattern may yield before
	// its budget can be spent. The default is 3.
	MinDuplicates int
	// MaxPatterns is how many patterns are followed per host; beyond it
	// new patterns are not charged (a trap can be missed, never
	// invented). The default is 512.
	MaxPatterns int
	// MaxHosts is how many hosts are remembered; the least recently used
	// is forgotten first. The default is 10,000.
	MaxHosts int
	// Paging reports whether a query parameter numbers the pages of a
	// host's lists (Families.PageParam). A URL of a rewrite is undone
	// (StripVariant) only into the form of a page the rewrite was seen
	// to repeat, and for such parameters its later pages ("?o=az&page=2"
	// → "?page=2"); nil knows none. It is called with the Patterns'
	// lock held, and must not call back into them.
	Paging func(host, name string) bool
}

// Patterns gives each URL pattern of a host a budget in proportion to the
// new content its pages yield (the idea of IRLbot's budgets, per pattern
// rather than per domain). A pattern is the host's URL template (see
// [Template]) or, for endless paths, a tail that URLs end with. Every
// fetched page is charged to its patterns as new content or as a
// duplicate; a pattern whose pages turned out duplicates at least
// MinDuplicates times, and at least as often as they were new, has spent
// its budget: its other URLs are not fetched.
//
// Patterns is created with NewPatterns and is safe for concurrent use.
type Patterns struct {
	cfg PatternConfig
	mu  struct {
		sync.Mutex
		hosts *lru[patternHost]
	}
}

type patternHost struct {
	templates map[string]*patternStat
	tails     map[string]*patternStat
	spentTail []string // tails whose budget is spent, for Spent's suffix test
	rewrites  map[rewrite]*rewriteStat
}

type patternStat struct {
	fetched, dups, refused int
	kinds                  map[string]int
	examples               []string
	// strip names the query parameters whose removal gave the page
	// that each of the pattern's duplicates repeated, or each of its
	// redirects led to ("goto" of "?t=5&goto=newpost" → "?t=5", "fid"
	// and "offset" of "?fid=2&tid=5&offset=0" → "?tid=5"); stripBad
	// says one did not.
	strip    []string
	stripBad bool
	// stripVals holds, for each name of strip, the value the duplicates
	// showed, or anyValue when it varied.
	stripVals map[string]string
	stripAdds bool // a page stood for had a parameter its variant lacked
	// tailSegs is, for a pattern of first pages named (firstTemplate),
	// how many path segments end its URLs that the page each repeated
	// lacks ("page/1/": 2, "page-1": 1); -1 when they differed.
	tailSegs  int8
	tailSlash bool // the pages repeated end in "/"
}

// variantStrip returns the names of the query parameters of from that
// to lacks, when to is from without them (the same path, the other
// parameters equal, perhaps a number added), sorted; nil otherwise.
func variantStrip(from, to *url.URL) []string {
	if from.EscapedPath() != to.EscapedPath() || from.Host != to.Host || from.RawQuery == "" {
		return nil
	}
	fq, tq := from.Query(), to.Query()
	var names []string
	for name, vs := range fq {
		tv, ok := tq[name]
		switch {
		case !ok:
			names = append(names, name)
		case !slices.Equal(vs, tv):
			return nil
		}
	}
	for name, vs := range tq {
		// The target may add a page number (a topic's last page):
		// without it, the URL is the same item's first page.
		if _, ok := fq[name]; !ok && (len(vs) != 1 || !numeric(vs[0])) {
			return nil
		}
	}
	slices.Sort(names)
	return names
}

// StripVariant returns u without the parameters that the duplicates of
// its pattern were seen to add to the pages they repeat, or its
// redirects to drop, when the pattern is spent on such copies and
// redirects alone ("?t=5&goto=newpost" redirects to "?t=5";
// "?fid=2&tid=5&offset=0" is a copy of "?tid=5"): the page such a URL
// stands for, to be queued in its place, as it may be one the crawl has
// not seen yet. It returns nil otherwise.
func (p *Patterns) StripVariant(u *url.URL, drop func(string) bool) *url.URL {
	host := urlnorm.HostKey(u)
	tmpl := chargedTemplate(u, drop)
	p.mu.Lock()
	h := p.mu.hosts.peek(host)
	var strip []string
	if h != nil && strings.HasSuffix(tmpl, firstMark) {
		// A first page named, whose pattern is spent on copies: the
		// list or topic itself ("/t/a/page/1/" → "/t/a/").
		s := h.templates[tmpl]
		n, slash := 0, false
		if s != nil && p.spentFor(s, u) {
			n, slash = int(s.tailSegs), s.tailSlash
		}
		p.mu.Unlock()
		path := strings.TrimSuffix(u.EscapedPath(), "/")
		for ; n > 0; n-- {
			path = path[:max(strings.LastIndexByte(path, '/'), 0)]
		}
		if n < 0 || path == strings.TrimSuffix(u.EscapedPath(), "/") {
			return nil
		}
		if slash || path == "" {
			path += "/"
		}
		v := *u
		v.Path, v.RawPath = "", ""
		if dec, err := url.PathUnescape(path); err == nil {
			v.Path, v.RawPath = dec, path
		}
		v.Fragment, v.RawFragment = "", ""
		return &v
	}
	if h != nil {
		if s := h.templates[tmpl]; s != nil && p.variants(s) && p.spentFor(s, u) {
			strip = s.strip
		}
	}
	if len(strip) == 0 && h != nil && h.rewrites != nil {
		if to := h.undone(u, p.cfg.MinDuplicates, p.paging(host)); to != nil {
			p.mu.Unlock()
			return to
		}
	}
	p.mu.Unlock()
	if len(strip) == 0 {
		return nil
	}
	q := u.Query()
	for _, name := range strip {
		if !q.Has(name) {
			return nil
		}
		q.Del(name)
	}
	v := *u
	v.RawQuery = q.Encode()
	v.Fragment, v.RawFragment = "", ""
	return &v
}

// Trap is a pattern that yielded duplicates, with the evidence, for the
// report.
type Trap struct {
	Pattern    string         // "/events/*/*/*", "/catalog?page&sort", "…/reviews/"
	Kinds      map[string]int // duplicates by Dup kind
	Fetched    int            // pages of the pattern fetched: the requests it cost
	Duplicates int
	Refused    int      // URLs not fetched because the budget was spent
	Spent      bool     // the budget is spent
	Examples   []string // up to 3 "URL = URL" pairs
}

// NewPatterns returns an empty Patterns.
func NewPatterns(cfg PatternConfig) *Patterns {
	cfg.MinDuplicates = max(orDefault(cfg.MinDuplicates, 3), 1)
	cfg.MaxPatterns = max(orDefault(cfg.MaxPatterns, 512), 1)
	cfg.MaxHosts = max(orDefault(cfg.MaxHosts, 10_000), 1)
	p := &Patterns{cfg: cfg}
	p.mu.hosts = newLRU[patternHost](cfg.MaxHosts)
	return p
}

// paging returns Paging for host, or a function that knows no page
// numbers.
func (p *Patterns) paging(host string) func(string) bool {
	if p.cfg.Paging == nil {
		return func(string) bool { return false }
	}
	return func(name string) bool { return p.cfg.Paging(host, name) }
}

func (p *Patterns) spent(s *patternStat) bool {
	return s.dups >= p.cfg.MinDuplicates && s.dups >= s.fetched-s.dups
}

// variants reports whether a pattern's duplicates are all copies of, or
// redirects to, the same URLs with the same parameters dropped
// (variantStrip).
func (p *Patterns) variants(s *patternStat) bool {
	return s.dups >= p.cfg.MinDuplicates && !s.stripBad && len(s.strip) > 0 && s.kinds[DupRedirect]+s.kinds[DupCopy] == s.dups
}

// spentFor reports whether u, of the pattern s, is not to be fetched: the
// pattern is spent, or it is one of variants (variants) and u carries the
// parameters they dropped with the values they had — each value that was
// the same in every duplicate ("offset=0"), any value of those that
// varied ("forum=16", "forum=17"). Such a URL stands for the page
// without them whatever the pattern's other pages were: variants fetched
// before the pages they stand for count as new until those turn up, and
// a "&offset=18" of the same pattern is another page.
func (p *Patterns) spentFor(s *patternStat, u *url.URL) bool {
	if p.spent(s) {
		return true
	}
	if !p.variants(s) || s.stripAdds {
		return false
	}
	q := u.Query()
	for _, name := range s.strip {
		vs, ok := q[name]
		if !ok || len(vs) != 1 {
			return false
		}
		if want := s.stripVals[name]; want != anyValue && vs[0] != want {
			return false
		}
	}
	return true
}

// anyValue marks, in patternStat.stripVals, a parameter whose value
// varied between the duplicates.
const anyValue = "\x00*"

// Fetched charges a fetched page u (as fetched, its template taken with
// drop, see Template) with what it was: new content when dup is the zero
// Dup, a duplicate otherwise.
func (p *Patterns) Fetched(u *url.URL, drop func(string) bool, dup Dup) {
	host := urlnorm.HostKey(u)
	tmpl := chargedTemplate(u, drop)
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.mu.hosts.get(host)
	if h.templates == nil {
		h.templates = make(map[string]*patternStat)
	}
	var of *url.URL // the page repeated, parsed once
	if dup.Kind != "" {
		of, _ = url.Parse(dup.Of)
	}
	if ofTmpl := dup.OfTemplate; ofTmpl != "" && (variantOf(ofTmpl, tmpl) || of != nil && FirstPageOf(of, u)) {
		// The page fetched before is the variant: this page counts as
		// its pattern's new content, and the earlier one, counted so
		// then, as its pattern's duplicate.
		if of != nil {
			ofTmpl = firstTemplate(ofTmpl, of)
		}
		p.charge(h.templates, tmpl, u, Dup{}, nil, false)
		if s := h.templates[ofTmpl]; s != nil {
			s.fetched--
			p.charge(h.templates, ofTmpl, u, Dup{Kind: dup.Kind, Of: dup.Of}, of, true)
		}
		return
	}
	if s := p.charge(h.templates, tmpl, u, dup, of, false); s != nil && of != nil && strings.HasSuffix(tmpl, firstMark) {
		s.noteTail(u, of)
	}
	switch dup.Kind {
	case "":
		if h.rewrites != nil {
			h.noteRewrite(u, nil, "", p.paging(host))
		}
	case DupView, DupCopy, DupRedirect, DupReordered, DupResorted, DupWider, DupNarrower:
		if of != nil {
			h.noteRewrite(u, of, dup.Kind, nil)
		}
	}
	if dup.Kind == DupEndless && strings.Trim(dup.Tail, "/") != "" {
		if h.tails == nil {
			h.tails = make(map[string]*patternStat)
		}
		if s := p.charge(h.tails, dup.Tail, u, dup, of, false); s != nil && p.spent(s) && !slices.Contains(h.spentTail, dup.Tail) {
			h.spentTail = append(h.spentTail, dup.Tail)
		}
	}
}

// noteTail records how many path segments u, a first page named, adds to
// the page of repeats (patternStat.tailSegs).
func (s *patternStat) noteTail(u, of *url.URL) {
	up, op := u.EscapedPath(), of.EscapedPath()
	n := int8(-1)
	if tail := strings.Trim(up[min(len(op), len(up)):], "/"); strings.HasPrefix(up, op) && tail != "" && (strings.HasSuffix(op, "/") || up[len(op)] == '/') {
		n = int8(min(strings.Count(tail, "/")+1, 8))
	}
	if s.tailSegs == 0 {
		s.tailSegs, s.tailSlash = n, strings.HasSuffix(op, "/")
	} else if s.tailSegs != n || s.tailSlash != strings.HasSuffix(op, "/") {
		s.tailSegs = -1
	}
}

// chargedTemplate returns the pattern a URL is charged to and judged by
// (firstTemplate of its Template).
func chargedTemplate(u *url.URL, drop func(string) bool) string {
	return firstTemplate(Template(u, drop), u)
}

// firstTemplate returns the pattern a URL is charged to: its template,
// or for a URL whose last path segment names a first page ("page-1",
// "/page/1/": numbers, each 0 or 1) the template marked so. A list's
// first page named is a copy of the list; its later pages, of the same
// template, are new: their budgets are apart.
func firstTemplate(tmpl string, u *url.URL) string {
	if !FirstPageNamed(u) {
		return tmpl
	}
	return tmpl + firstMark
}

// FirstPageNamed reports whether a URL's last path segment names a first
// page (firstTemplate): "/t/a/page/1/", "/t/a/page-1".
func FirstPageNamed(u *url.URL) bool {
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	return firstPageTail(path[strings.LastIndexByte(path, '/')+1:])
}

// firstMark marks the pattern of first pages named (firstTemplate).
const firstMark = " (first page)"

// FirstPageOf reports whether of is u with its first page named in the
// path ("/threads/a-12/page/1/" of "/threads/a-12/"): a variant of u, as a
// URL with a parameter added is.
func FirstPageOf(of, u *url.URL) bool {
	op, up := of.EscapedPath(), u.EscapedPath()
	if of.RawQuery != u.RawQuery || len(op) <= len(up) || !strings.HasPrefix(op, up) {
		return false
	}
	tail := op[len(up):]
	if !strings.HasSuffix(up, "/") && tail[0] != '/' {
		return false
	}
	return firstPageTail(tail)
}

// firstPageTail reports whether a path's tail, or its last segment, names
// a first page: it holds numbers, and each is 0 or 1 ("page-1", "p/1/").
func firstPageTail(tail string) bool {
	n := 0
	for i := 0; i < len(tail); {
		if tail[i] < '0' || tail[i] > '9' {
			i++
			continue
		}
		j := i
		for j < len(tail) && tail[j] >= '0' && tail[j] <= '9' {
			j++
		}
		if d := tail[i:j]; d != "0" && d != "1" {
			return false
		}
		n++
		i = j
	}
	return n > 0
}

// charge charges a fetched page u to the pattern key; of is dup.Of
// parsed (nil when it is not a URL). With rev, the pattern is that of the
// page u repeats, a variant of u fetched before it, rather than u's own.
func (p *Patterns) charge(m map[string]*patternStat, key string, u *url.URL, dup Dup, of *url.URL, rev bool) *patternStat {
	s := m[key]
	if s == nil {
		if len(m) >= p.cfg.MaxPatterns {
			return nil
		}
		s = &patternStat{}
		m[key] = s
	}
	s.fetched++
	if dup.Kind == "" {
		return s
	}
	s.dups++
	if s.kinds == nil {
		s.kinds = make(map[string]int)
	}
	s.kinds[dup.Kind]++
	if (dup.Kind == DupRedirect || dup.Kind == DupCopy) && !s.stripBad {
		var strip []string
		if of != nil {
			// The URL of the pattern charged is the variant: u for a
			// copy or a redirect charged to its own pattern, the page it
			// repeats when that was the variant (rev). A pattern's page
			// that repeats a variant of itself strips nothing of its own.
			if rev {
				strip = variantStrip(of, u)
			} else {
				strip = variantStrip(u, of)
			}
		}
		switch {
		case strip == nil:
			s.stripBad, s.strip = true, nil
		case s.strip == nil:
			s.strip = strip
		case !slices.Equal(s.strip, strip):
			s.stripBad, s.strip = true, nil
		}
		if s.strip != nil {
			// (s.strip is set only from a strip, which needs of.)
			variant, target := u, of
			if rev {
				variant, target = of, u
			}
			q := variant.Query()
			if !subQuery(target, variant) {
				// The page stood for adds a parameter of its own (a
				// topic's last page): a strip, but not a bare one.
				s.stripAdds = true
			}
			if s.stripVals == nil {
				s.stripVals = make(map[string]string, len(s.strip))
			}
			for _, name := range s.strip {
				v := q.Get(name)
				if old, ok := s.stripVals[name]; ok && old != v {
					v = anyValue
				}
				s.stripVals[name] = v
			}
		}
	}
	if len(s.examples) < maxExamples {
		ex := u.String() + " = " + dup.Of
		if len(ex) > 2*maxExampleLen {
			ex = ex[:2*maxExampleLen] + "…"
		}
		s.examples = append(s.examples, ex)
	}
	return s
}

// reported says whether a pattern is a trap to report: two duplicates, or
// one link of a chain; an endless path's tail once (its templates, one per
// depth, are left to the tail).
func (s *patternStat) reported(minDups int, tail bool) bool {
	return s.dups >= min(2, minDups) || s.kinds[DupChain] > 0 || tail && s.dups > 0
}

// Spent reports whether u belongs to a pattern whose budget is spent, and
// which; with count, the refusal is counted for the report.
func (p *Patterns) Spent(u *url.URL, drop func(string) bool, count bool) (pattern string, spent bool) {
	host := urlnorm.HostKey(u)
	tmpl := chargedTemplate(u, drop)
	path := u.EscapedPath()
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.mu.hosts.peek(host)
	if h == nil {
		return "", false
	}
	if s := h.templates[tmpl]; s != nil && p.spentFor(s, u) {
		if count {
			s.refused++
		}
		return tmpl, true
	}
	for _, tail := range h.spentTail {
		if strings.HasSuffix(path, tail) {
			if count {
				h.tails[tail].refused++
			}
			return "…/" + strings.TrimPrefix(tail, "/"), true
		}
	}
	if h.rewrites != nil {
		paging := p.paging(host)
		if r, s, _ := h.rewritten(u, p.cfg.MinDuplicates, func(s *rewriteStat, to *url.URL) bool { return s.refuses(to, paging) }); s != nil {
			if count {
				s.refused++
			}
			return r.String(), true
		}
	}
	return "", false
}

// Traps returns the patterns of host (a urlnorm.HostKey) that yielded at
// least two duplicates, or one endless path or chain (a single one is a
// trap's mark already), most duplicates first.
func (p *Patterns) Traps(host string) []Trap {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.mu.hosts.peek(host)
	if h == nil {
		return nil
	}
	var out []Trap
	add := func(name string, s *patternStat, tail bool) {
		if !s.reported(p.cfg.MinDuplicates, tail) {
			return
		}
		kinds := make(map[string]int, len(s.kinds))
		for k, n := range s.kinds {
			kinds[k] = n
		}
		out = append(out, Trap{Pattern: name, Kinds: kinds, Fetched: s.fetched, Duplicates: s.dups,
			Refused: s.refused, Spent: p.spent(s), Examples: slices.Clone(s.examples)})
	}
	for t, s := range h.templates {
		add(t, s, false)
	}
	for t, s := range h.tails {
		add("…/"+strings.TrimPrefix(t, "/"), s, true)
	}
	for r, s := range h.rewrites {
		if s.views >= 2 {
			out = append(out, Trap{Pattern: r.String(), Kinds: maps.Clone(s.kinds), Fetched: s.views + s.bad,
				Duplicates: s.views, Refused: s.refused, Spent: s.spent(p.cfg.MinDuplicates), Examples: []string{s.example}})
		}
	}
	slices.SortFunc(out, func(a, b Trap) int {
		if a.Duplicates != b.Duplicates {
			return b.Duplicates - a.Duplicates
		}
		return strings.Compare(a.Pattern, b.Pattern)
	})
	return out
}

// Hosts returns the hosts with at least one trap, sorted.
func (p *Patterns) Hosts() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	p.mu.hosts.each(func(host string, h *patternHost) {
		for _, s := range h.templates {
			if s.reported(p.cfg.MinDuplicates, false) {
				out = append(out, host)
				return
			}
		}
		for _, s := range h.tails {
			if s.reported(p.cfg.MinDuplicates, true) {
				out = append(out, host)
				return
			}
		}
	})
	slices.Sort(out)
	return out
}

// Template returns the URL pattern of u within its host: the path with
// every segment that holds a digit written "*" (path parameters left
// out), and the names of the query parameters, sorted, without their
// values: "/events/*/*/*", "/catalog?page&sort", "/item/*/reviews/".
// Session ids and the parameters drop reports (as for urlnorm.Key) are
// left out.
func Template(u *url.URL, drop func(string) bool) string {
	return KeyTemplate(urlnorm.Key(u, drop))
}

// KeyRequestURI returns a URL key (urlnorm.Key) without its scheme and
// host: its path and query.
func KeyRequestURI(key string) string {
	i := strings.Index(key, "://")
	if i < 0 {
		return key
	}
	rest := key[i+3:]
	switch j := strings.IndexAny(rest, "/?"); {
	case j < 0:
		return "/"
	case rest[j] == '?':
		return "/" + rest[j:]
	default:
		return rest[j:]
	}
}

// KeyTemplate is Template for a URL's key (urlnorm.Key), already made.
// The crawler asks it for every link of every page: a path without
// digits, long segments or parameters is its own template, returned
// without a copy.
func KeyTemplate(key string) string {
	uri := KeyRequestURI(key)
	if strings.IndexAny(uri, "?;0123456789") < 0 && !longSegment(uri) {
		return uri
	}
	path, params := splitParams(uri)
	var b strings.Builder
	b.Grow(len(path) + 16)
	for i := 0; ; i++ {
		seg, rest, more := strings.Cut(path, "/")
		if i > 0 {
			b.WriteByte('/')
		}
		if strings.ContainsAny(seg, "0123456789") {
			seg = "*"
		} else if len(seg) > 64 {
			seg = seg[:64] + "…"
		}
		b.WriteString(seg)
		if !more {
			break
		}
		path = rest
	}
	sep := byte('?')
	var last string
	for _, p := range params {
		if strings.HasPrefix(p.name, ";") || p.name == last {
			continue
		}
		last = p.name
		b.WriteByte(sep)
		sep = '&'
		b.WriteString(p.name)
	}
	return b.String()
}

// longSegment reports whether a segment of path is longer than 64 bytes.
func longSegment(path string) bool {
	for len(path) > 64 {
		i := strings.IndexByte(path, '/')
		if i < 0 {
			return true
		}
		if i > 64 {
			return true
		}
		path = path[i+1:]
	}
	return false
}

// variantOf reports whether template a is template b with query
// parameters added: the same path, and b's parameter names a strict
// subset of a's.
func variantOf(a, b string) bool {
	pa, qa, _ := strings.Cut(a, "?")
	pb, qb, _ := strings.Cut(b, "?")
	if pa != pb || len(qa) <= len(qb) {
		return false
	}
	names := strings.Split(qa, "&")
	if qb == "" {
		return true
	}
	for n := range strings.SplitSeq(qb, "&") {
		if !slices.Contains(names, n) {
			return false
		}
	}
	return true
}
