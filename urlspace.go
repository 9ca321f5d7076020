package gentlecrawl

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gentlecrawl/gentlecrawl/extract"
	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
	"github.com/gentlecrawl/gentlecrawl/internal/simhash"
	"github.com/gentlecrawl/gentlecrawl/internal/urlspace"
	"github.com/gentlecrawl/gentlecrawl/robots"
	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

// space is what the crawl learns about each host's URL space, so that it
// fetches one URL per page: parameters that never change the content, trap
// shapes refused by reason, and hosts whose URLs multiply far faster than
// their content. It is safe for concurrent use.
type space struct {
	learner   *urlspace.Learner
	checker   *urlspace.Checker
	explosion *urlspace.Explosion
	patterns  *urlspace.Patterns
	repeats   *dupIndex
	near      *simhash.Index[string] // fingerprints of pages fetched: "origin URL"
	families  *urlspace.Families
	defaults  *urlspace.Defaults
	shingles  *shingles
	watch     yieldWatch
	views     viewIndex

	maxStripped int // bound of mu.stripped: maxStripped

	mu struct {
		sync.Mutex
		// hosts counts, by origin, what the summary says of near
		// duplicates, canonicals and nofollow links: origins with
		// something to count, the first maxDupHosts of them.
		hosts map[string]*dupCounts
		// stripped remembers pages fetched under parameters whose values
		// were fresh on every response but not yet confirmed not to
		// matter: the hash of the key without them → their names.
		stripped map[uint64][]string
	}
}

// maxStripped bounds space.mu.stripped.
const maxStripped = 1 << 18

// maxDupHosts bounds space.mu.hosts: a crawl of many hosts counts the
// duplicates of the first this many that have any, as the URL-space
// learners keep some 10,000 hosts, and the summary says nothing of the
// others' duplicates.
const maxDupHosts = 10_000

// dupCounts counts, for one host, pages that repeat others.
type dupCounts struct {
	near, canonical int
	nofollow        int    // links marked rel="nofollow" found
	example         string // "URL ≈ URL"
}

// noteNofollow counts links marked rel="nofollow" found on a page of the
// host (origin).
func (s *space) noteNofollow(origin string, n int) {
	if n == 0 {
		return
	}
	s.mu.Lock()
	if d := s.dups(origin); d != nil {
		d.nofollow += n
	}
	s.mu.Unlock()
}

// maxNearEntries bounds the near-duplicate index: the fingerprints of the
// last 65,536 HTML pages fetched, the oldest forgotten first. At about 130
// bytes an entry (fingerprint, chain links, "origin URL") it holds at most
// some 8.5 MB, whatever the length of the crawl: memory stays flat in the
// number of pages.
const maxNearEntries = 1 << 16

// ownLinks is how many links elsewhere a short numbered page must have
// that each of its family's last thin pages lacks to be a page of its own
// rather than a form around one item's name, which links that item only.
const ownLinks = 2

func newSpace() *space {
	families := urlspace.NewFamilies(urlspace.FamilyConfig{})
	return &space{
		// A variant is undone into a list's later page only for the
		// parameters the host numbers its lists' pages with.
		patterns:  urlspace.NewPatterns(urlspace.PatternConfig{Paging: families.PageParam}),
		learner:   urlspace.NewLearner(urlspace.LearnerConfig{}),
		checker:   urlspace.NewChecker(urlspace.Limits{Today: time.Now()}),
		explosion: urlspace.NewExplosion(urlspace.ExplosionConfig{}),
		repeats:   newDupIndex(),
		families:  families,
		defaults:  urlspace.NewDefaults(urlspace.DefaultsConfig{}),
		shingles:  newShingles(),

		maxStripped: maxStripped,
		near:        simhash.NewIndex[string](3, maxNearEntries),
	}
}

// dups returns the counts of origin, new if it has none, or nil when
// maxDupHosts origins are counted already. Ask only with something to
// count: an origin is kept once asked for. Called with s.mu held.
func (s *space) dups(origin string) *dupCounts {
	if s.mu.hosts == nil {
		s.mu.hosts = make(map[string]*dupCounts)
	}
	d := s.mu.hosts[origin]
	if d == nil {
		if len(s.mu.hosts) >= maxDupHosts {
			return nil
		}
		d = &dupCounts{}
		s.mu.hosts[origin] = d
	}
	return d
}

// notePage records a fetched HTML page's fingerprint (the simhash of its
// text), and counts it when it is a near-duplicate (within 3 bits) of a
// page of the same host already fetched, or names another URL as its
// canonical. It returns the URLs of those near-duplicates.
func (s *space) notePage(u *url.URL, fp uint64, canonical *url.URL) (near []string) {
	origin := urlnorm.HostKey(u)
	var twin string
	for _, m := range s.near.Near(fp) {
		if rest, ok := strings.CutPrefix(m.Value, origin+" "); ok {
			if twin == "" {
				twin = rest
			}
			near = append(near, rest)
		}
	}
	s.near.Add(fp, origin+" "+u.String())
	elsewhere := canonical != nil && urlnorm.Canonical(canonical) != urlnorm.Canonical(u)
	if twin == "" && !elsewhere {
		return near
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dups(origin)
	if d == nil {
		return near
	}
	if twin != "" {
		d.near++
		if d.example == "" {
			d.example = u.String() + " ≈ " + twin
		}
	}
	if elsewhere {
		d.canonical++
	}
	return near
}

// HostURLSpace is what the crawl found out about one host's URLs, for the
// site owner: where the URL space explodes and what was done about it.
type HostURLSpace struct {
	// Refused counts discovered URLs not queued, by trap check (url-length,
	// path-depth, query-params, repeated-segment, calendar, host-budget).
	Refused map[string]int `json:"refused,omitempty"`
	// Irrelevant lists the query parameters found not to change the
	// content, with the evidence, e.g. "sort (3 pages, 9 URLs; e.g. …)".
	Irrelevant []string `json:"irrelevant_params,omitempty"`
	// Defaults lists the parameters found to give, with one value, the
	// same page as without them ("start=0"), with the evidence: one line
	// per value, however many paths it was learned on.
	Defaults []string `json:"default_params,omitempty"`
	// Exploding describes a host whose URLs grow far faster than its
	// distinct content, naming the patterns responsible.
	Exploding string `json:"exploding,omitempty"`
	// NearDuplicates counts pages fetched whose text is within 3 bits of
	// simhash of another page of the host (exact copies included), with an
	// example pair.
	NearDuplicates int    `json:"near_duplicates,omitempty"`
	NearExample    string `json:"near_example,omitempty"`
	// CanonicalElsewhere counts pages whose rel=canonical names another URL.
	CanonicalElsewhere int `json:"canonical_elsewhere,omitempty"`
	// NofollowLinks counts links marked rel="nofollow" found on the
	// host's pages; NofollowRefused those of them not fetched because
	// their family yielded nothing (rel="nofollow" is a hint: such links
	// are queued last, and fetched while their family yields).
	NofollowLinks   int `json:"nofollow_links,omitempty"`
	NofollowRefused int `json:"nofollow_refused,omitempty"`
	// Traps names each URL pattern whose pages kept repeating pages
	// fetched before, with the evidence and what it cost.
	Traps []TrapFound `json:"traps,omitempty"`
	// Families names each URL family whose pages, reached from within
	// their own section of the site, stopped yielding anything new: new
	// URLs elsewhere on the host, or new text.
	Families []FamilyFound `json:"families,omitempty"`
}

// FamilyFound is a URL family of a host judged by what its pages yielded.
type FamilyFound struct {
	// Pattern is the family's URL pattern: its path, digits and
	// many-valued segments masked, and its parameters' names
	// ("/news?section&tag", "/tag/*").
	Pattern string `json:"pattern"`
	// Evidence says what its pages yielded and how they were reached.
	Evidence string   `json:"evidence"`
	Requests int      `json:"requests"` // its pages fetched
	Yielded  int      `json:"yielded"`  // of those, pages that yielded
	Refused  int      `json:"refused"`  // its URLs, or those of families refining it, not fetched
	Spent    bool     `json:"spent"`    // its refinements are no longer fetched
	Examples []string `json:"examples,omitempty"`
}

// TrapFound is a URL pattern of a host whose pages turned out to repeat
// others: a trap, found from the pages' content.
type TrapFound struct {
	// Pattern is the URL template ("/events/*/*/*", "/catalog?page&sort")
	// or, for an endless path, the tail its URLs end with ("…/reviews/").
	Pattern string `json:"pattern"`
	// Evidence says how its pages repeated others, e.g. "3 of 4 pages
	// fetched repeat another: 3 near-identical to other pages of the
	// pattern, numbers and dates aside (a calendar or a counter)".
	Evidence string   `json:"evidence"`
	Examples []string `json:"examples,omitempty"` // "URL = URL it repeats"
	Requests int      `json:"requests"`           // pages of the pattern fetched
	Refused  int      `json:"refused"`            // its URLs not fetched once its budget was spent
	Spent    bool     `json:"spent"`              // no more of its URLs are fetched
}

// dupKindText says what each kind of duplicate is, for the evidence, in
// the singular and the plural.
var dupKindText = map[string][2]string{
	urlspace.DupCopy:      {"copy of another page", "copies of another page"},
	urlspace.DupReordered: {"with the same links as another page in another order (a sort order)", "with the same links as another page in another order (a sort order)"},
	urlspace.DupChain:     {"near-identical to another page of the pattern, numbers and dates aside (a calendar or a counter)", "near-identical to other pages of the pattern, numbers and dates aside (a calendar or a counter)"},
	urlspace.DupEndless:   {"like the page whose path it extends (an endless path)", "like the page whose path theirs extends (an endless path)"},
	urlspace.DupRedirect:  {"a redirect to a page already known", "redirects to pages already known"},
	urlspace.DupResorted:  {"the list of another page in another order, over as many pages (a sort order)", "the lists of other pages in another order, over as many pages (a sort order)"},
	urlspace.DupNarrower:  {"linking to a part of what the page without one of its parameters links to (the newest items of a list)", "linking to a part of what the page without one of their parameters links to (the newest items of a list)"},
	urlspace.DupWider:     {"listing every link of the page without one of its parameters, and more (a larger page size)", "listing every link of the page without one of their parameters, and more (a larger page size)"},
	urlspace.DupView:      {"with the main text of another page in other chrome (a print, AMP or highlighted view)", "with the main text of other pages in other chrome (print, AMP or highlighted views)"},
}

func trapFound(t urlspace.Trap) TrapFound {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(t.Kinds)) {
		text, n := k, t.Kinds[k]
		if forms, ok := dupKindText[k]; ok {
			text = forms[min(n, 2)-1]
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, text))
	}
	return TrapFound{
		Pattern:  t.Pattern,
		Evidence: fmt.Sprintf("%d of %d pages fetched repeat another: %s", t.Duplicates, t.Fetched, strings.Join(parts, ", ")),
		Examples: t.Examples,
		Requests: t.Fetched,
		Refused:  t.Refused,
		Spent:    t.Spent,
	}
}

// candidate turns a discovered URL into a frontier candidate. The URL to
// fetch loses its session ids and the parameters known not to change the
// content (learned, or named by robots.txt Clean-param); the seen-key is
// its canonical form.
func (c *Crawler) candidate(u *url.URL, depth int) frontier.Candidate {
	return c.candidateDrop(u, depth, c.dropFunc(u))
}

// candidateDrop is candidate with u's dropFunc given.
func (c *Crawler) candidateDrop(u *url.URL, depth int, drop func(string) bool) frontier.Candidate {
	if s, ok := c.space.defaults.Strip(urlnorm.HostKey(u), u); ok {
		// Parameters whose value here gives the page without them.
		u = s
	}
	fetchURL, _ := urlnorm.StripFunc(u, drop)
	cand := frontier.Candidate{
		Host:      politenessKey(u),
		Canonical: urlnorm.Key(u, drop),
		Entry:     frontier.Entry{URL: fetchURL.String(), Depth: depth},
	}
	if c.cfg.Continuous {
		// Due when found, so that revisits falling due take their turn
		// among new URLs (see demand).
		cand.Due = time.Now()
	}
	return cand
}

// dropFunc says which query parameters of u do not change its content.
func (c *Crawler) dropFunc(u *url.URL) func(string) bool {
	drop, _ := c.originDrop(u)
	return drop
}

// originDrop is dropFunc; whole says it holds for every URL of u's origin
// (no robots.txt Clean-param rule, whose paths would make it differ).
func (c *Crawler) originDrop(u *url.URL) (drop func(string) bool, whole bool) {
	origin := urlnorm.HostKey(u)
	learned := c.space.learner.DropFunc(origin)
	var clean []robots.CleanParam
	if r := c.robots.get(origin); r != nil {
		clean = r.cleanParams
	}
	if len(clean) == 0 {
		return learned, true
	}
	pq := pathQuery(u)
	return func(name string) bool {
		if learned(name) {
			return true
		}
		for _, cp := range clean {
			if cp.Applies(pq) && slices.Contains(cp.Params, name) {
				return true
			}
		}
		return false
	}, false
}

// queryNames returns the decoded names of a raw query's parameters.
func queryNames(raw string) []string {
	var names []string
	for raw != "" {
		var part string
		part, raw, _ = strings.Cut(raw, "&")
		name, _, _ := strings.Cut(part, "=")
		name = urlnorm.DecodeParamName(name)
		if name != "" {
			names = append(names, name)
		}
	}
	return names
}

// admit is asked about every new URL before it is queued: trap shapes are
// refused, and counted by reason for the host.
func (c *Crawler) admit(cand frontier.Candidate) bool {
	u, err := url.Parse(cand.URL)
	if err != nil {
		return false
	}
	c.space.explosion.Discover(u)
	ok, reason := c.space.checker.Check(u)
	if !ok {
		c.cfg.Logger.Debug("URL refused", "url", cand.URL, "reason", reason)
		c.stats.update(func(s *Summary) { s.TrapsRefused++ })
		return false
	}
	c.space.families.Discovered(urlnorm.HostKey(u), cand.Canonical)
	if p := c.space.watch.admitted(cand.Parent, candClass(&cand), cand.Canonical); p != nil {
		c.space.families.Yielded(p.page)
	}
	return true
}

// familySpent reports whether a queued URL, found within its own section
// of the site, belongs to a URL family whose budget is spent
// (urlspace.Families); with count, the refusal is counted. Seeds and
// sitemaps are never refused.
func (c *Crawler) familySpent(item *frontier.Item, u *url.URL, count bool) bool {
	if item.Depth == 0 || item.Kind != "" || c.cfg.Continuous {
		return false
	}
	_, drop := c.keyFunc(u)
	host, key := urlnorm.HostKey(u), urlnorm.Key(u, drop)
	class := c.space.families.Reclass(host, key, classOf(item))
	family, spent := c.space.families.Spent(host, key, class, count)
	if spent && count {
		c.cfg.Logger.Debug("URL of a spent family not fetched", "url", item.URL, "family", family)
		c.stats.update(func(s *Summary) { s.TrapsRefused++ })
	}
	return spent
}

// observe tells the URL-space learners what content a fetched URL had.
func (c *Crawler) observe(u *url.URL, digest string) {
	c.space.learner.Observe(u, digest)
	c.space.explosion.Observe(u, digest)
	c.space.defaults.Observe(urlnorm.HostKey(u), urlnorm.Key(u, c.dropFunc(u)), digest)
}

// report describes each host's URL space for the summary.
func (s *space) report() map[string]*HostURLSpace {
	out := make(map[string]*HostURLSpace)
	get := func(h string) *HostURLSpace {
		if out[h] == nil {
			out[h] = &HostURLSpace{}
		}
		return out[h]
	}
	for _, h := range s.checker.Hosts() {
		if counts := s.checker.Counts(h); len(counts) > 0 {
			get(h).Refused = counts
		}
	}
	for _, h := range s.learner.Hosts() {
		for _, p := range s.learner.Irrelevant(h) {
			line := fmt.Sprintf("%s (%d pages, %d URLs", p.Name, p.Groups, p.URLs)
			if p.Fresh > 0 {
				line = fmt.Sprintf("%s (a fresh value on every response: %d values; %d pages, %d URLs", p.Name, p.Fresh, p.Groups, p.URLs)
			}
			if len(p.Examples) > 0 {
				line += "; e.g. " + strings.Join(p.Examples[:min(2, len(p.Examples))], " ")
			}
			get(h).Irrelevant = append(get(h).Irrelevant, line+")")
		}
	}
	for _, h := range s.patterns.Hosts() {
		for _, t := range s.patterns.Traps(h) {
			get(h).Traps = append(get(h).Traps, trapFound(t))
		}
	}
	for _, h := range s.defaults.Hosts() {
		get(h).Defaults = defaultsFound(s.defaults.Learned(h))
	}
	for _, h := range s.families.Hosts() {
		for _, f := range s.families.Wasteful(h) {
			n, y := 0, 0
			for i := range f.Fetched {
				n, y = n+f.Fetched[i], y+f.Yielded[i]
			}
			get(h).Families = append(get(h).Families, FamilyFound{Pattern: f.Pattern, Evidence: f.Evidence(),
				Requests: n, Yielded: y, Refused: f.Refused, Spent: f.Spent, Examples: f.Examples})
		}
	}
	s.mu.Lock()
	for h, d := range s.mu.hosts {
		if d.near > 0 || d.canonical > 0 || d.nofollow > 0 {
			sp := get(h)
			sp.NearDuplicates, sp.NearExample, sp.CanonicalElsewhere = d.near, d.example, d.canonical
			sp.NofollowLinks = d.nofollow
		}
	}
	for _, h := range s.families.Hosts() {
		if n := s.families.RefusedHinted(h); n > 0 {
			get(h).NofollowRefused = n
		}
	}
	s.mu.Unlock()
	for _, r := range s.explosion.Exploding() {
		var top []string
		for _, p := range r.Top {
			top = append(top, fmt.Sprintf("%s (%d)", p.Pattern, p.Duplicates))
		}
		sort.Strings(top)
		get(r.Host).Exploding = fmt.Sprintf("%d URLs found for %d distinct pages fetched; duplicates come from %s",
			r.URLs, r.Distinct, strings.Join(top, ", "))
	}
	return out
}

// defaultsFound says what the defaults learned of a host, one line per
// parameter value however many paths it was learned on (a site writes
// "from=0" on every tag's list): "from=0 (the same page as without it on
// 37 paths, 41 pairs of pages; e.g. /tags/a?from=0)", most paths first.
func defaultsFound(learned map[string]int) []string {
	type found struct {
		paths, pairs int
		example      string
	}
	by := map[string]*found{}
	for p, n := range learned {
		_, pv, _ := strings.Cut(p, "?")
		f := by[pv]
		if f == nil {
			f = &found{example: p}
			by[pv] = f
		}
		f.paths++
		f.pairs += n
		if p < f.example {
			f.example = p
		}
	}
	names := make([]string, 0, len(by))
	for pv := range by {
		names = append(names, pv)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := by[names[i]], by[names[j]]
		if a.paths != b.paths {
			return a.paths > b.paths
		}
		return names[i] < names[j]
	})
	out := make([]string, 0, len(names))
	for _, pv := range names {
		f := by[pv]
		paths, pairs := "path", "pair"
		if f.paths != 1 {
			paths += "s"
		}
		if f.pairs != 1 {
			pairs += "s"
		}
		out = append(out, fmt.Sprintf("%s (the same page as without it on %d %s, %d %s of pages; e.g. %s)", pv, f.paths, paths, f.pairs, pairs, f.example))
	}
	return out
}

// firstPageList returns the list a first page named (u, "/t/a/page/1/")
// names as its canonical, or else links ("/t/a/"); nil for none.
func firstPageList(u, canonical *url.URL, found []*url.URL) *url.URL {
	if canonical != nil && urlnorm.HostKey(canonical) == urlnorm.HostKey(u) && urlspace.FirstPageOf(u, canonical) {
		return canonical
	}
	for _, l := range found {
		if l != nil && l.Host == u.Host && l.Scheme == u.Scheme && urlspace.FirstPageOf(u, l) {
			return l
		}
	}
	return nil
}

// judgePage tells the URL-space learners what a fetched page was, and
// returns the key they compare it by. For HTML it is a hash of the bag of
// words of the page's visible text: the same items sorted another way are
// the same content (a shop's sort=price and sort=name), and a page whose
// words change is not. A page that repeats one fetched before (a copy, the
// same list in another order, a relative path serving the page it came
// from, a day of a calendar like the one before it) is charged to its URL
// pattern, and its links are not to be followed (follow is false). The
// links of a page with new content (its candidates, links) get its chain
// print, which their own pages are compared with. For other content the
// key is the payload digest.
//
// pt is the page's text when follow read it, else nil; hinted are the
// page's rel="nofollow" links.
func (c *Crawler) judgePage(item *frontier.Item, res *fetch.Result, canonical *url.URL, found []*url.URL, keys []string, hinted []*url.URL, links []frontier.Candidate, refresh bool, pt *pageText) (key string, follow bool) {
	if !isHTML(res) {
		return res.PayloadDigest(), true
	}
	if pt == nil {
		opts := extract.Options{ContentType: res.Header.Get("Content-Type")}
		t, err := opts.Text(res.Body)
		pt = &pageText{text: t, err: err}
	}
	text, err := pt.text, pt.err
	if err != nil || len(text) == 0 {
		return res.PayloadDigest(), true
	}
	tp := printText(text)
	near := c.space.notePage(res.URL, tp.sim, canonical)
	c.space.learner.ObserveLinks(res.URL, found)
	c.noteStripped(res.URL)
	keyOf, drop := c.keyFunc(res.URL)
	pp := printPage(res.URL, tp, found, keys, keyOf)
	pp.hintedPager(res.URL, hinted, keyOf)
	var novel, total int
	if !refresh {
		// Once a page: the shingles are recorded as they are counted.
		novel, total = c.space.shingles.novel(hashString(urlnorm.HostKey(res.URL)), text)
		pp.ownText = ownText(novel, total)
	}
	dup, bag := c.space.repeats.classify(urlnorm.HostKey(res.URL), res.URL, pp, item.Parent, near, keyOf)
	mainWords := -1 // unknown: the page repeats another
	if dup.Kind == "" && !refresh {
		var of string
		of, mainWords = c.space.views.viewOf(hashString(urlnorm.HostKey(res.URL)), res.URL.String(), text)
		if res.URL.RawQuery == "" {
			c.space.families.BarePage(urlnorm.HostKey(res.URL), keyOf(res.URL), mainWords >= minViewWords)
		}
		if of != "" && classOf(item) == urlspace.ClassNext {
			// A list's next page, or a calendar's day below its month,
			// that shows an item fetched before is a list, not a view.
			of = ""
		}
		if of != "" {
			path, template := pathTemplate(of, keyOf)
			dup = urlspace.Dup{Kind: urlspace.DupView, Of: of, OfTemplate: template}
			if tail, ok := extends(pp.path, path); ok {
				// The page whose path this one's extends: an endless path.
				dup = urlspace.Dup{Kind: urlspace.DupEndless, Of: of, Tail: tail}
			}
		}
	}
	twin, lacks := defaultTwin(res.URL, dup)
	if !refresh && !c.sessionVariant(res.URL, dup) && !twin {
		// (The same page under another session id is the Learner's to
		// sort out, not a pattern's budget to spend, as is the same page
		// with a default value written out (page=1), the defaults'; and
		// a pattern's budget counts discovery, not revisits of its
		// pages.)
		pdup := dup
		if pdup.Kind == "" && urlspace.FirstPageNamed(res.URL) {
			// A first page named in the path ("/t/a/page/1/") that names
			// the list itself as its canonical, or links it: a copy of
			// it by the site's word, charged to its pattern as one (its
			// links are followed: the list may not be known yet), so
			// that the pattern's other URLs stand for their lists
			// (variantTarget) rather than costing a request each. (A
			// forum that links every topic by its first page named is
			// crawled first page first: the topic comes after every
			// other first page, too late to show the copies.)
			if list := firstPageList(res.URL, canonical, found); list != nil {
				_, template := pathTemplate(list.String(), keyOf)
				pdup = urlspace.Dup{Kind: urlspace.DupCopy, Of: list.String(), OfTemplate: template}
			}
		}
		c.space.patterns.Fetched(res.URL, drop, pdup)
	}
	if !refresh {
		variant := canonical != nil && urlnorm.HostKey(canonical) == urlnorm.HostKey(res.URL) && keyOf(canonical) != keyOf(res.URL)
		key := keyOf(res.URL)
		// A copy that is another form of a page fetched before, by
		// its URL — the page's own URL after its highlighted search
		// result, or its first page written out (page=1) after its
		// board's link or its highlighted form — is evidence of
		// nothing about its family. Counted as a barren page, such
		// copies spent the budget of the family of the topics' own
		// URLs (met from within the section) or of their later pages
		// (page=2, ...), which then went unfetched. (A list's first
		// page written out that repeats the list itself, reached by
		// the list's pager, is a later page that shows nothing new,
		// and is counted so.)
		uncounted := variantFetchedFirst(res.URL, dup) || twin && lacks
		page, yielded := c.pageFamily(res.URL, key, c.space.families.Reclass(urlnorm.HostKey(res.URL), key, classOf(item)), novel, total, variant, uncounted)
		if variant {
			c.space.families.Hinted(page)
		}
		if (dup.Kind == urlspace.DupView || dup.Kind == urlspace.DupCopy) && classOf(item) == urlspace.ClassNext && extendsQuery(res.URL, dup.Of) {
			// A later page that is the page it adds a number to
			// again (listVariant's form, or a copy).
			c.space.families.Repeats(page)
		}
		// A near-copy of another page of its own family, with no main
		// text of its own, whose URL names an item by number: a form
		// around an item's name. Pages with paragraphs of their own are
		// pages, and so are pages named by words (a documentation's Drain
		// and DrainSorted, its many small iterator types), and short
		// pages that list things of their own: a member's profile links
		// the member's topics and posts, which the family's other thin
		// pages do not, where a form links its one item. (A copy of
		// another page is no page of its own, whatever it links.)
		if mainWords < minViewWords && urlspace.Numbered(keyOf(res.URL)) {
			alike := 0
			for _, n := range near {
				if nu, err := url.Parse(n); err == nil && n != res.URL.String() && c.space.families.Family(urlnorm.HostKey(nu), keyOf(nu)) == page.Family {
					alike++
				}
			}
			pp.distinctPlain() // sorts pp.plain
			thin, own := c.space.families.ThinAlike(page, tp.sim, pp.plain)
			if (own < ownLinks || dup.Kind != "") && (alike >= 1 || thin || c.space.families.HollowShown(page)) {
				c.space.families.Hollow(page, alike >= 1)
			}
		}
		if dup.Kind == "" && !yielded {
			c.space.watch.watch(pp.chain(), &watchedPage{page: page, section: urlspace.Section(keyOf(res.URL))})
		}
	}
	if dup.Kind != "" {
		c.cfg.Logger.Debug("duplicate page", "url", res.URL.String(), "kind", dup.Kind, "of", dup.Of)
		c.stats.update(func(s *Summary) { s.DuplicatePages++ })
		switch dup.Kind {
		case urlspace.DupView, urlspace.DupWider, urlspace.DupResorted, urlspace.DupNarrower:
		default:
			return fmt.Sprintf("bag:%016x", bag), false
		}
		// A view's links are followed: those of the page it repeats are
		// known already, and a page judged a view by its main text alone
		// (a module's index that quotes its first chapter) may be the
		// only way to what it links. A wider or resorted list's links
		// beyond its plain page's are on that list's later pages, which
		// may not have been found yet.
	}
	chain := pp.chain()
	for i := range links {
		links[i].Parent = chain
	}
	return fmt.Sprintf("bag:%016x", bag), true
}

// judgeRedirect charges a redirect from u to target to u's URL pattern:
// as a duplicate when the crawl knew the target already (a "newest post"
// link that lands on a topic, a login wall), as new content otherwise.
// A pattern whose URLs keep redirecting to pages already known is spent.
func (c *Crawler) judgeRedirect(ctx context.Context, u *url.URL, target frontier.Candidate) error {
	seen, err := c.store.Seen(ctx, target.Canonical)
	if err != nil {
		return err
	}
	_, drop := c.keyFunc(u)
	dup := urlspace.Dup{}
	if seen {
		dup = urlspace.Dup{Kind: urlspace.DupRedirect, Of: target.URL}
	}
	c.space.patterns.Fetched(u, drop, dup)
	return nil
}

// defaultTwin reports whether a copy is of the same URL but for
// parameters, present in one and not the other, whose values are 0, 1 or
// empty: a first page named (page=1, start=0) or a flag. Charging either
// URL's pattern would spend the budget of the list's other pages
// (page=2, ...): the defaults (urlspace.Defaults) learn such values.
//
// So is a copy whose URL adds such a parameter to the page it repeats
// while that page has parameters the copy lacks: a topic linked with its
// first page written out (?t=5&page=1) that repeats the topic linked from
// its board with the board's number (?f=3&t=5). Its pattern (?page&t) is
// that of the topic's later pages: the copies would spend it, and the
// later pages would go unfetched. A parameter with two values (t=5 and
// t=6) makes another page, and one the copy adds with another value
// (?forum=16&t=5&page=1) another form of it: their copies are charged.
//
// lacks reports whether the page repeated has parameters the copy lacks:
// another form of the page than its own URL.
func defaultTwin(u *url.URL, dup urlspace.Dup) (twin, lacks bool) {
	if dup.Kind != urlspace.DupCopy {
		return false, false
	}
	of, err := url.Parse(dup.Of)
	if err != nil || of.EscapedPath() != u.EscapedPath() || of.Host != u.Host {
		return false, false
	}
	a, b := u.Query(), of.Query()
	differ, lacks, added := false, false, false
	for i, pair := range [][2]url.Values{{a, b}, {b, a}} {
		for name, vs := range pair[0] {
			ovs, ok := pair[1][name]
			switch {
			case ok && slices.Equal(vs, ovs):
			case ok:
				return false, false // another item, another page
			case len(vs) == 1 && urlspace.FirstValue(vs[0]):
				differ = true
				added = added || i == 0
			case i == 1:
				lacks = true // of's parameter (the board's number)
			default:
				return false, false // a parameter of u's own (a variant)
			}
		}
	}
	return differ && (!lacks || added), lacks
}

// variantFetchedFirst reports whether the page at u is a copy or a view
// of a page whose URL is u's with parameters added.
func variantFetchedFirst(u *url.URL, dup urlspace.Dup) bool {
	if dup.Kind != urlspace.DupCopy && dup.Kind != urlspace.DupView {
		return false
	}
	of, err := url.Parse(dup.Of)
	return err == nil && extendsQuery(of, u.String())
}

// extendsQuery reports whether u is the URL of (absolute) with
// parameters added: the same path, and every parameter of of's with the
// same value.
func extendsQuery(u *url.URL, of string) bool {
	o, err := url.Parse(of)
	if err != nil || o.Host != u.Host || o.EscapedPath() != u.EscapedPath() || len(u.RawQuery) <= len(o.RawQuery) {
		return false
	}
	uq := u.Query()
	for name, vs := range o.Query() {
		if !slices.Equal(uq[name], vs) {
			return false
		}
	}
	return true
}

// sessionVariant reports whether a copy is of the same URL under other
// tokens (session ids not learned yet).
func (c *Crawler) sessionVariant(u *url.URL, dup urlspace.Dup) bool {
	if dup.Kind != urlspace.DupCopy {
		return false
	}
	of, err := url.Parse(dup.Of)
	return err == nil && urlspace.TokenVariants(u, of)
}

// noteStripped remembers that u was fetched, when it carries parameters
// whose values are fresh on every response but not yet known not to
// matter: once they are, the same URL without them (queued earlier, under
// another key) is the same page.
func (c *Crawler) noteStripped(u *url.URL) {
	origin := urlnorm.HostKey(u)
	learned := c.dropFunc(u)
	var names []string
	for _, n := range append(queryNames(u.RawQuery), pathParamNames(u.EscapedPath())...) {
		if !learned(n) && c.space.learner.Fresh(origin, n) && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return
	}
	k := hashString(urlnorm.Key(u, func(n string) bool { return learned(n) || slices.Contains(names, n) }))
	c.space.mu.Lock()
	defer c.space.mu.Unlock()
	if c.space.mu.stripped == nil {
		c.space.mu.stripped = make(map[uint64][]string)
	}
	if len(c.space.mu.stripped) < c.space.maxStripped {
		c.space.mu.stripped[k] = names
	}
}

// fetchedStripped reports whether u's page was fetched already under
// parameters that have since been learned not to matter (noteStripped),
// or with a parameter more whose value has since been learned to be a
// default (?offset=0, found and fetched before the first page's own URL).
func (c *Crawler) fetchedStripped(u *url.URL) bool {
	learned := c.dropFunc(u)
	key := urlnorm.Key(u, learned)
	if c.space.defaults.FetchedWithDefault(urlnorm.HostKey(u), key) {
		return true
	}
	k := hashString(key)
	c.space.mu.Lock()
	names, ok := c.space.mu.stripped[k]
	c.space.mu.Unlock()
	if !ok {
		return false
	}
	for _, n := range names {
		if !learned(n) {
			return false
		}
	}
	return true
}

// pathParamNames returns the names of the path parameters of an escaped
// path, each with its leading ";" as the Learner names them.
func pathParamNames(path string) []string {
	var names []string
	for strings.IndexByte(path, ';') >= 0 {
		_, rest, _ := strings.Cut(path, ";")
		seg, after, _ := strings.Cut(rest, "/")
		for p := range strings.SplitSeq(seg, ";") {
			if name, _, _ := strings.Cut(p, "="); name != "" {
				names = append(names, ";"+name)
			}
		}
		path = after
	}
	return names
}

// trapSpent reports whether a queued URL belongs to a URL pattern whose
// budget is spent (urlspace.Patterns); with count, the refusal is counted.
// Seeds and sitemaps are the site's or the user's word, and never refused.
func (c *Crawler) trapSpent(item *frontier.Item, u *url.URL, count bool) bool {
	if item.Depth == 0 || item.Kind != "" {
		return false
	}
	_, drop := c.keyFunc(u)
	pattern, spent := c.space.patterns.Spent(u, drop, count)
	if spent && count {
		c.cfg.Logger.Debug("URL of a spent pattern not fetched", "url", item.URL, "pattern", pattern)
		c.stats.update(func(s *Summary) { s.TrapsRefused++ })
	}
	return spent
}

// variantTarget returns, for a URL refused because its pattern's pages
// all repeated, or redirected to, pages already known that are the same
// URLs with some parameters dropped ("?t=5&goto=newpost" → "?t=5",
// "?fid=2&tid=5&offset=0" → "?tid=5"), the URL it stands for, as a
// candidate with the refused URL's depth and class; nil for any other
// URL. A site whose only link to a page is such a variant keeps it.
func (c *Crawler) variantTarget(item *frontier.Item, u *url.URL) *frontier.Candidate {
	if item.Depth == 0 || item.Kind != "" {
		return nil
	}
	_, drop := c.keyFunc(u)
	to := c.space.patterns.StripVariant(u, drop)
	if to == nil {
		return nil
	}
	cand := c.candidate(to, item.Depth)
	cand.Parent, cand.Due = item.Parent, item.Due
	return &cand
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
