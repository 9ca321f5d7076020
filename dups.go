package gentlecrawl

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/gentlecrawl/gentlecrawl/internal/simhash"
	"github.com/gentlecrawl/gentlecrawl/internal/urlspace"
	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

// pagePrint is what the crawl keeps of a fetched HTML page to tell whether
// another page repeats it: prints of its visible text and of its links.
type pagePrint struct {
	sim    uint64 // simhash.Sum of the text
	bag    uint64 // the multiset of words
	masked uint64 // the same, with numbers, dates and month and day names masked
	words  int

	key      string // the page's key
	path     string // the page's path (of its key, without the query)
	template string // urlspace.Template of the page

	links   uint64 // every link (its key), in any order
	outPath uint64 // links to paths of another template than the page's own (not its pages or sort orders), in any order
	order   uint64 // the same links, in document order
	nOut    int    // how many such links
	outTmpl uint64 // links to URLs of another template than the page's own
	sketch  linkSketch
	outs    []uint64 // the hashes of the links that outPath sums, for listVariant; not kept
	plain   []uint64 // those of them not to the page's later pages (the sketch's); not kept
	far     []uint64 // those of them to another section of the host than the page's (otherList); not kept
	pager   uint64   // the links to the page's later pages (numbers added to its own URL), the page's own parameters left out, in any order
	bits    linkBits
	ownText bool // the page shows text not seen on the host before (ownText)
}

// linkBits is a small Bloom filter of a page's links elsewhere (the hashes
// outPath sums): whether a page links nothing that another does not. With
// a hundred links, a link not among them is taken for one of them about
// one time in ten.
type linkBits [8]uint64

func (b *linkBits) add(h uint64) {
	b[h>>58&7] |= 1 << (h >> 52 & 63)
	b[h>>46&7] |= 1 << (h >> 40 & 63)
}

func (b *linkBits) has(h uint64) bool {
	return b[h>>58&7]&(1<<(h>>52&63)) != 0 && b[h>>46&7]&(1<<(h>>40&63)) != 0
}

// sketchSize is how many hashes a linkSketch keeps.
const sketchSize = 12

// linkSketch keeps the smallest hashes of a page's links to other paths
// (pagePrint.outPath's), distinct and in order: a sample of its links
// that another page must all have to hold every link of it.
type linkSketch struct {
	h [sketchSize]uint64
	n uint8
}

func (s *linkSketch) add(h uint64) {
	n := int(s.n)
	i := 0
	for i < n && s.h[i] < h {
		i++
	}
	if i < n && s.h[i] == h || i == sketchSize {
		return
	}
	if n == sketchSize {
		n--
	}
	copy(s.h[i+1:n+1], s.h[i:n])
	s.h[i] = h
	s.n = uint8(n + 1)
}

// pagerLink reports whether a link's path is that of a later page of the
// page at ownPath, written in the path ("/c/" → "/c/page/2/", "/c/2/"):
// one or two segments more, the last with a digit, none a file. A list
// shown wider has fewer later pages than the list it widens, so such
// links stay out of the sketch that the wider list must hold.
func pagerLink(ownPath, linkPath string) bool {
	rest, ok := strings.CutPrefix(linkPath, ownPath)
	if !ok || rest == "" {
		return false
	}
	if !strings.HasSuffix(ownPath, "/") {
		if rest, ok = strings.CutPrefix(rest, "/"); !ok {
			return false
		}
	}
	rest = strings.TrimSuffix(rest, "/")
	if rest == "" || strings.Count(rest, "/") > 1 || strings.IndexByte(rest, '.') >= 0 {
		return false
	}
	return hasDigit(rest[strings.LastIndexByte(rest, '/')+1:])
}

// laterPage returns, for a link k to the page's own path (ownPath, with
// the parameters ownQuery), the parameters it adds if they all have
// numbers for values, none 0 or 1 ("page=2"): a link to a later page of
// the list. It returns "" otherwise.
func laterPage(ownPath, ownQuery, k string) string {
	lp, lq, _ := strings.Cut(urlspace.KeyRequestURI(k), "?")
	if lp != ownPath || lq == "" {
		return ""
	}
	var added string
	for part := range strings.SplitSeq(lq, "&") {
		if hasParam(ownQuery, part) {
			continue
		}
		_, v, _ := strings.Cut(part, "=")
		if !numeric(v) || urlspace.FirstValue(v) {
			return ""
		}
		if added != "" {
			added += "&"
		}
		added += part
	}
	return added
}

func hasDigit(s string) bool { return strings.IndexAny(s, "0123456789") >= 0 }

// minSketchChecks is how many of a narrower page's links a wider one must
// be seen to hold (all of its sketch, and at least these).
const minSketchChecks = 4

// holds reports whether the sorted hashes outs hold every hash of o, and
// at least minSketchChecks of them.
func (o *linkSketch) heldBy(outs []uint64) bool {
	if o.n < minSketchChecks {
		return false
	}
	for _, h := range o.h[:o.n] {
		if _, ok := slices.BinarySearch(outs, h); !ok {
			return false
		}
	}
	return true
}

// chain is the fingerprint a page passes to the URLs it links to
// (frontier.Entry.Parent): a page equal to its parent's chain print is
// near-identical to it (numbers and dates aside), under the same template,
// with the same links elsewhere. Never 0.
func (p *pagePrint) chain() uint64 {
	h := simhash.Mix(p.masked ^ simhash.Mix(hashString(p.template)) ^ simhash.Mix(p.outTmpl+1))
	return h | 1
}

// minWordsForCopy is how many words a page needs for its text alone to
// make it a copy of another page; shorter pages (a gallery page with
// little text) must also have the same links.
const minWordsForCopy = 50

// maxDupEntries bounds each of dupIndex's maps; when one is full, new pages
// are no longer remembered (a duplicate can be missed, never invented).
// Full, the three hold some 15 MB (about 230 bytes a page with the maps'
// slack and the URLs).
const maxDupEntries = 1 << 16

// dupIndex finds, for each fetched HTML page, whether it repeats a page
// fetched before (urlspace.Dup), from its content. It is safe for
// concurrent use.
type dupIndex struct {
	max    int // entries per map: maxDupEntries
	mu     sync.Mutex
	bags   map[uint64]bagEntry   // host ⊕ bag of words → the first page with it
	orders map[uint64]orderEntry // host ⊕ path ⊕ outPath links → the first page with them
	chains map[uint64]string     // host ⊕ chain print → the first page with it
	// lists remembers the latest pages with links elsewhere, by host ⊕
	// key, for the wider pages that repeat them and more; the oldest is
	// forgotten first.
	lists   *urlspace.FIFOMap[uint64, listEntry]
	dupPage int
}

type listEntry struct {
	url    string
	nOut   int
	nPlain int // distinct links elsewhere but to later pages (pagePrint.plain)
	pager  uint64
	sketch linkSketch
	bits   linkBits
}

// otherList reports whether a page (p) whose text is near that of the
// list at key (of the host hashed hk) has too many or too few links
// elsewhere to be the same document served again, or links to other
// sections of the host that the list does not: a list of one maker's
// products ("/c/maker/") whose cards' words are the catalogue's
// ("/c/"), shown in the same chrome, with as many cards. A relative link
// that serves the page it came from serves as many links, shifted below
// its own path: only its links within the section differ.
func (d *dupIndex) otherList(hk uint64, key string, p *pagePrint) bool {
	if p.nOut < 5 {
		return false
	}
	d.mu.Lock()
	e, ok := d.lists.Get(hk ^ hashString(key))
	d.mu.Unlock()
	if !ok {
		return false
	}
	tolerance := max(2, p.nOut/8)
	if absDiff(e.nOut, p.nOut) > tolerance {
		return true
	}
	miss := 0
	for _, h := range p.far {
		if !e.bits.has(h) {
			miss++
		}
	}
	return miss > tolerance
}

// firstSegment returns a path's first segment ("browse" for
// "/browse/blue/"), or "" for the root and files at it.
func firstSegment(path string) string {
	path = strings.TrimPrefix(path, "/")
	seg, _, ok := strings.Cut(path, "/")
	if !ok {
		return ""
	}
	return seg
}

func absDiff(a, b int) int {
	if a > b {
		return a - b
	}
	return b - a
}

// maxListEntries bounds dupIndex.lists: some 10 MB full (about 300 bytes
// an entry with its URL and the map's slack).
const maxListEntries = 1 << 15

// The entries keep the URL only; its path and template are worked out again
// on the rare hit, which keeps an entry near 50 bytes.
type bagEntry struct {
	url   string
	links uint64
}

type orderEntry struct {
	url             string
	order, bag, sim uint64
}

// maxReorderedDistance is how far (simhash.Distance) the texts of two
// pages with the same links in another order may be for one to be the
// other sorted: a sorted list shows the same words, whose simhash moves
// by its sort label's; two different pages of a site that keeps every
// page under one path ("/index.php?title=…", whose links elsewhere are
// its chrome) are about 32 apart.
const maxReorderedDistance = 12

func newDupIndex() *dupIndex {
	return &dupIndex{
		max:    maxDupEntries,
		bags:   make(map[uint64]bagEntry),
		orders: make(map[uint64]orderEntry),
		chains: make(map[uint64]string),
		lists:  urlspace.NewFIFOMap[uint64, listEntry](maxListEntries),
	}
}

// classify says whether the page at u (of host origin), linked from a page
// whose chain print was parent (0 for none), repeats a page fetched before,
// and records it when it does not. near lists the URLs of the host's pages
// whose text is nearly the same (simhash); keyOf is printPage's. It returns
// the duplicate's kind and the bag of words the URL-space learners should
// compare it by: the original's for a copy or a reordering, its own
// otherwise.
func (d *dupIndex) classify(origin string, u *url.URL, p *pagePrint, parent uint64, near []string, keyOf func(*url.URL) string) (urlspace.Dup, uint64) {
	own := u.String()
	hk := hashString(origin)
	// A list shown wider first: its text may be nearly that of a list
	// whose path its own extends (a filter most items pass).
	if p.nOut >= 5 {
		d.mu.Lock()
		of, kind := d.listVariant(hk, p)
		// A variant is kept too: a page whose text is near its own but
		// whose links are not is another list (otherList), not a path
		// that serves it again (a list's later page near its wider view).
		d.lists.Put(hk^hashString(p.key), listEntry{url: own, nOut: p.nOut, nPlain: p.distinctPlain(), pager: p.pager, sketch: p.sketch, bits: p.bits})
		d.mu.Unlock()
		if kind != "" {
			_, template := pathTemplate(of, keyOf)
			return urlspace.Dup{Kind: kind, Of: of, OfTemplate: template}, p.bag
		}
	}
	// Nearly the text of a page whose path this one's extends: a relative
	// link that serves the page it came from, its link texts aside. (Not
	// for short texts, whose simhash moves too little to tell.) A page is
	// never a repeat of itself: a revisit finds the print of its last visit.
	for _, n := range near {
		if p.words < minWordsForCopy {
			break
		}
		nu, err := url.Parse(n)
		if err != nil || n == own {
			continue
		}
		if tail, ok := extends(u.EscapedPath(), nu.EscapedPath()); ok && !d.otherList(hk, keyOf(nu), p) {
			return urlspace.Dup{Kind: urlspace.DupEndless, Of: n, Tail: tail}, p.bag
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	put := func(m map[uint64]string, k uint64, v string) {
		if _, ok := m[k]; !ok && len(m) < d.max {
			m[k] = v
		}
	}
	if p.words > 0 {
		k := hk ^ simhash.Mix(p.bag)
		if e, ok := d.bags[k]; ok && e.url != own {
			path, template := pathTemplate(e.url, keyOf)
			if tail, ok := extends(p.path, path); ok {
				return urlspace.Dup{Kind: urlspace.DupEndless, Of: e.url, Tail: tail}, p.bag
			}
			if p.words >= minWordsForCopy || e.links == p.links {
				return urlspace.Dup{Kind: urlspace.DupCopy, Of: e.url, OfTemplate: template}, p.bag
			}
		} else if !ok && len(d.bags) < d.max {
			d.bags[k] = bagEntry{url: own, links: p.links}
		}
	}
	if p.nOut >= 5 {
		k := hk ^ simhash.Mix(hashString(p.path)^simhash.Mix(p.outPath))
		if e, ok := d.orders[k]; ok && e.url != own {
			if e.order != p.order && simhash.Distance(e.sim, p.sim) <= maxReorderedDistance {
				_, template := pathTemplate(e.url, keyOf)
				return urlspace.Dup{Kind: urlspace.DupReordered, Of: e.url, OfTemplate: template}, e.bag
			}
		} else if !ok && len(d.orders) < d.max {
			d.orders[k] = orderEntry{url: own, order: p.order, bag: p.bag, sim: p.sim}
		}
	}
	chain := p.chain()
	of, seen := d.chains[hk^chain]
	seen = seen && of != own
	switch {
	case parent != 0 && parent == chain:
		if !seen {
			of = "the page that linked it"
		}
		return urlspace.Dup{Kind: urlspace.DupChain, Of: of}, p.bag
	case seen && urlspace.CalendarLike(u):
		// A day of a calendar like another day already fetched, reached
		// from elsewhere than the day before it: calendars have many
		// entrances. (Pages that differ only in a number are not judged
		// so without the chain: a shop's items may be named by number.)
		return urlspace.Dup{Kind: urlspace.DupChain, Of: of}, p.bag
	}
	put(d.chains, hk^chain, own)
	return urlspace.Dup{}, p.bag
}

// listVariant returns the URL of a list fetched before that p shows
// another way, and how (a urlspace.Dup kind), or "" for none. The list's
// key is p's without one or two of its parameters, and either
//
//   - p holds all of the list's links elsewhere and more: the list shown
//     wider (DupWider; one parameter). A parameter whose value is a
//     number must be a page size, not a page number: at least a quarter
//     of the links p adds (a list of 24 shown 48 adds 24 items, each with
//     a link or two; a list's page 2, were it to hold page 1, would add
//     as many for the number 2);
//   - or p links elsewhere only to what the list does, and to less or to
//     fewer later pages, the list having later pages: a part of the
//     list's first page, the list narrowed to its newest items (DupNarrower; one parameter,
//     ?st=7 for the last week's topics). A filter of a list of several
//     pages shows items of its later pages, and a list's later page other
//     items than its first, and text of its own: a topic's last page,
//     with a post or two by members who wrote on its first, links
//     elsewhere to nothing new, but its posts are new (p.ownText). When
//     p is the only later page the list links, p is the page again with
//     a form's number (an item's page linking itself with its id,
//     ?add=87425): a view (DupView);
//   - or p has as many links elsewhere as the list (give or take an item
//     that a sidebar links too), and the same later pages: the same list
//     in another order (DupResorted; parameters with words for values, a
//     sort order and its direction). A filter leaves fewer items, and so
//     fewer pages.
//
// d.mu is held.
func (d *dupIndex) listVariant(hk uint64, p *pagePrint) (string, string) {
	path, query, ok := strings.Cut(p.key, "?")
	if !ok {
		return "", ""
	}
	parts := strings.Split(query, "&")
	if len(parts) > 8 {
		return "", ""
	}
	sorted := false
	lookup := func(skip ...int) (listEntry, bool) {
		base := path
		sep := "?"
		for i, part := range parts {
			if !slices.Contains(skip, i) {
				base += sep + part
				sep = "&"
			}
		}
		return d.lists.Get(hk ^ hashString(base))
	}
	resorted := func(e listEntry, removed ...string) bool {
		if d := p.nOut - e.nOut; e.pager == 0 || e.pager != p.pager || max(d, -d) > 2+e.nOut/20 {
			return false
		}
		for _, part := range removed {
			if _, v, _ := strings.Cut(part, "="); !hasLetter(v) {
				return false
			}
		}
		return true
	}
	narrower := func(e listEntry, removed string) string {
		if e.pager == 0 || p.ownText || p.nOut > e.nOut || p.nOut == e.nOut && p.pager == e.pager {
			return ""
		}
		miss := 0
		for _, h := range p.outs {
			if !e.bits.has(h) {
				miss++
			}
		}
		if e.pager == simhash.Mix(hashString(removed)) {
			// p is the only later page the list links: the page
			// again with a form's number (an item's page linking
			// itself with its id), not a list. The item may have been
			// fetched long before, when the keys of a few of its links
			// still held a parameter learned since not to matter
			// ("?src=related"): as many links, but for a few, will do.
			if miss == 0 || p.nOut == e.nOut && miss <= max(2, p.nOut/8) {
				return urlspace.DupView
			}
			return ""
		}
		if miss > 0 {
			return ""
		}
		return urlspace.DupNarrower
	}
	for i, part := range parts {
		e, ok := lookup(i)
		if !ok {
			continue
		}
		if resorted(e, part) {
			return e.url, urlspace.DupResorted
		}
		if kind := narrower(e, part); kind != "" {
			return e.url, kind
		}
		added := p.nOut - e.nOut
		if added < minSketchChecks {
			continue
		}
		if !sorted {
			slices.Sort(p.outs)
			sorted = true
		}
		if !e.sketch.heldBy(p.outs) || !p.addsOnly(e) {
			continue
		}
		if _, v, _ := strings.Cut(part, "="); numeric(v) {
			if n, err := strconv.Atoi(v); err != nil || n*4 < added {
				continue
			}
		}
		return e.url, urlspace.DupWider
	}
	for i := range parts {
		for j := i + 1; j < len(parts); j++ {
			if e, ok := lookup(i, j); ok && resorted(e, parts[i], parts[j]) {
				return e.url, urlspace.DupResorted
			}
		}
	}
	return "", ""
}

// distinctPlain sorts p.plain and returns how many distinct links it holds.
func (p *pagePrint) distinctPlain() int {
	slices.Sort(p.plain)
	n := 0
	for i, h := range p.plain {
		if i == 0 || h != p.plain[i-1] {
			n++
		}
	}
	return n
}

// addsOnly reports whether p's links elsewhere (but to later pages) that
// the list e's links do not hold are no more than those p has beyond
// e's count: whether p can hold every link of e. A sample of e's links
// (its sketch) held by p does not tell a list shown wider from the list's
// next page that keeps most of its links (a sidebar, a few items shown on
// every page) and adds as many as it drops; the count does. e.bits takes
// a link for one of its own now and then, which only lowers the count of
// those missing: a page that holds every link of e always passes.
func (p *pagePrint) addsOnly(e listEntry) bool {
	n := p.distinctPlain()
	miss := 0
	for i, h := range p.plain {
		if (i == 0 || h != p.plain[i-1]) && !e.bits.has(h) {
			miss++
		}
	}
	return miss <= n-e.nPlain
}

// hasLetter reports whether s holds an ASCII letter.
func hasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if isLetter(s[i]) {
			return true
		}
	}
	return false
}

// numeric reports whether v is a run of decimal digits.
func numeric(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// pathTemplate returns the path (of its key, without scheme and host) and
// the template of a URL kept by the index.
func pathTemplate(raw string, keyOf func(*url.URL) string) (path, template string) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", ""
	}
	k := keyOf(u)
	return keyPath(k), urlspace.KeyTemplate(k)
}

// keyPath returns the path of a URL key: without scheme, host and query.
func keyPath(k string) string {
	path, _, _ := strings.Cut(urlspace.KeyRequestURI(k), "?")
	return path
}

// extends reports whether path continues base beyond a segment boundary,
// and returns what it adds: "/a/b/more/" extends "/a/b/" and "/a/b" by
// "more/" and "/more/"; "/a/bc" extends neither, and nothing extends the
// root (every path would).
func extends(path, base string) (tail string, ok bool) {
	tail, ok = strings.CutPrefix(path, base)
	if !ok || tail == "" || strings.Trim(base, "/") == "" || !strings.HasSuffix(base, "/") && tail[0] != '/' {
		return "", false
	}
	return tail, true
}

// withoutParams returns the key k without the query parameters (name=value)
// that also appear in query.
func withoutParams(k, query string) string {
	path, q, ok := strings.Cut(k, "?")
	if !ok {
		return k
	}
	var kept []string
	for p := range strings.SplitSeq(q, "&") {
		if !hasParam(query, p) {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		return path
	}
	return path + "?" + strings.Join(kept, "&")
}

func hasParam(query, p string) bool {
	for q := range strings.SplitSeq(query, "&") {
		if q == p {
			return true
		}
	}
	return false
}

// printPage computes a page's prints from those of its visible text and its links
// (absolute, as found). keyOf gives a URL's key with every parameter known
// or suspected not to matter left out.
//
// keys, when not nil, holds beside each link the key the crawl queued it
// under ("" if none): for a link with no query and no path parameters it
// is the same key whatever is dropped, and is not worked out again. A nil
// link is such a link, not parsed; its key must be given.
func printPage(u *url.URL, tp textPrint, links []*url.URL, keys []string, keyOf func(*url.URL) string) *pagePrint {
	own := keyOf(u)
	p := &pagePrint{key: own, template: urlspace.KeyTemplate(own)}
	p.sim, p.bag, p.masked, p.words = tp.sim, tp.bag, tp.masked, tp.words
	p.path = keyPath(own)
	var order uint64 = fnvOffset
	ownPath, _, _ := strings.Cut(p.template, "?")
	ownSec := firstSegment(p.path)
	_, ownQuery, _ := strings.Cut(own, "?")
	for i, l := range links {
		var k string
		if l == nil {
			k = keys[i]
		} else if i < len(keys) && keys[i] != "" && l.RawQuery == "" && strings.IndexByte(l.Path, ';') < 0 {
			k = keys[i]
		} else {
			k = keyOf(l)
		}
		h := simhash.Mix(hashString(k))
		p.links += h
		tmpl := urlspace.KeyTemplate(k)
		if tmplPath, _, _ := strings.Cut(tmpl, "?"); tmplPath != ownPath {
			// The page's own parameters, carried over into its links (a
			// sort order kept across the list's pages), are left out:
			// the same list sorted two ways has the same links.
			h := h
			if ownQuery != "" {
				h = simhash.Mix(hashString(withoutParams(k, ownQuery)))
			}
			p.outPath += h
			order = simhash.Mix(order ^ h)
			p.nOut++
			if pagerLink(p.path, keyPath(k)) {
				p.pager += h
			} else {
				p.sketch.add(h)
				p.plain = append(p.plain, h)
			}
			p.outs = append(p.outs, h)
			p.bits.add(h)
			if firstSegment(keyPath(k)) != ownSec {
				p.far = append(p.far, h)
			}
		} else if later := laterPage(p.path, ownQuery, k); later != "" {
			p.pager += simhash.Mix(hashString(later))
		}
		if tmpl != p.template {
			p.outTmpl += h
		}
	}
	p.order = order
	return p
}

// hintedPager adds to a page's pager (printed from u) its links to later
// pages of its own that the site marked rel="nofollow": a sorted list
// whose pager is marked so is the same list, with as many pages, as the
// plain one. The rest of the page's prints leave such links out: they say
// how far a list goes, not what it holds (a maker's list and the
// catalogue it is near in text differ by the links they follow).
func (p *pagePrint) hintedPager(u *url.URL, hinted []*url.URL, keyOf func(*url.URL) string) {
	if len(hinted) > 0 {
		p.pager += printPage(u, textPrint{}, hinted, nil, keyOf).pager
	}
}

// textPrint is what a page's visible text is judged by.
type textPrint struct {
	sim         uint64 // simhash.Sum of the text, for near-duplicates
	bag, masked uint64 // the bag of words, plain and masked (printText)
	words       int
}

// printText reads text once for its simhash and its bag-of-words prints.
//
// The bag print hashes the multiset of words in text (runs of bytes that
// are not white space), whatever their order; the masked print hashes the
// same multiset with every word holding a digit and every English month or
// weekday name masked: the prints of two days of a calendar differ, their
// masked prints do not.
//
// The simhash is simhash.Sum's, whose words are runs of letters and digits
// (a white-space word may hold several, or none): both kinds of word are
// hashed in the same pass over the bytes, which cost half as much as
// reading the text twice.
func printText(text []byte) textPrint {
	var (
		sb        simhash.Builder
		sum, msum uint64
		words     int
	)
	for i := 0; i < len(text); {
		for i < len(text) && textClass[text[i]] == classSpace {
			i++
		}
		if i == len(text) {
			break
		}
		start := i
		hb := uint64(fnvOffset)          // FNV-1a of the word's bytes
		hs := uint64(simhash.WordOffset) // the simhash word being read
		inSim, digit := false, false
		for i < len(text) {
			c := text[i]
			k := textClass[c]
			if k >= '0' && k < utf8.RuneSelf {
				// An ASCII letter or digit, lowercased.
				hb = (hb ^ uint64(c)) * fnvPrime
				hs = simhash.HashByte(hs, k)
				inSim = true
				digit = digit || k <= '9'
				i++
				continue
			}
			if k == classSpace {
				break
			}
			if k == classOther {
				hb = (hb ^ uint64(c)) * fnvPrime
				if inSim {
					sb.Add(hs)
					hs, inSim = simhash.WordOffset, false
				}
				i++
				continue
			}
			// A multi-byte sequence (or a byte not valid in UTF-8).
			r, n := utf8.DecodeRune(text[i:])
			for _, b := range text[i : i+n] {
				hb = (hb ^ uint64(b)) * fnvPrime
			}
			if h, ok := simhash.HashRune(hs, r); ok {
				hs, inSim = h, true
			} else if inSim {
				sb.Add(hs)
				hs, inSim = simhash.WordOffset, false
			}
			i += n
		}
		if inSim {
			sb.Add(hs)
		}
		x := simhash.Mix(hb)
		sum += x
		switch {
		case digit:
			msum += simhash.Mix(0x23) // "#"
		case dateWord(text[start:i]):
			msum += simhash.Mix(0x40) // "@"
		default:
			msum += x
		}
		words++
	}
	n := uint64(words) * 0x9e3779b97f4a7c15
	return textPrint{sim: sb.Sum(), bag: sum ^ n, masked: msum ^ n, words: words}
}

// textClass classifies a byte of text for printText in one load: as
// simhash.WordByte does (an ASCII letter or digit is itself lowercased, a
// byte of a multi-byte sequence utf8.RuneSelf), but white space is
// classSpace and any other ASCII byte classOther.
var textClass = func() (t [256]byte) {
	for c := range 256 {
		switch k := simhash.WordByte(byte(c)); {
		case k != 0:
			t[c] = k
		case isSpace(byte(c)):
			t[c] = classSpace
		default:
			t[c] = classOther
		}
	}
	return t
}()

const (
	classOther = 0
	classSpace = 1
)

// FNV-1a, 64 bits: hashString's, and a bag word's before its Mix.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashString(s string) uint64 {
	x := uint64(fnvOffset)
	for i := 0; i < len(s); i++ {
		x ^= uint64(s[i])
		x *= fnvPrime
	}
	return x
}

// dateNames are the English month and weekday names and their usual
// abbreviations, lower case.
var dateNames = map[string]bool{}

func init() {
	for _, n := range []string{
		"january", "february", "march", "april", "may", "june", "july", "august",
		"september", "october", "november", "december",
		"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
	} {
		dateNames[n] = true
		dateNames[n[:3]] = true
		k := prefixKey([]byte(n))
		datePrefixes[k/64] |= 1 << (k % 64)
	}
	dateNames["sept"] = true
}

// datePrefixes holds a bit for the prefixKey of each name in dateNames.
var datePrefixes [1 << 15 / 64]uint64

// prefixKey packs the low five bits of w's first three bytes: a letter's
// in either case.
func prefixKey(w []byte) uint32 {
	return uint32(w[0]&31)<<10 | uint32(w[1]&31)<<5 | uint32(w[2]&31)
}

// dateWord reports whether w, punctuation around it aside, is a month or
// weekday name.
func dateWord(w []byte) bool {
	for len(w) > 0 && !isLetter(w[0]) {
		w = w[1:]
	}
	for len(w) > 0 && !isLetter(w[len(w)-1]) {
		w = w[:len(w)-1]
	}
	if len(w) < 3 || len(w) > 9 || !datePrefix(w) {
		return false
	}
	var buf [9]byte
	for i, c := range w {
		if !isLetter(c) {
			return false
		}
		buf[i] = c | 0x20
	}
	return dateNames[string(buf[:len(w)])]
}

// datePrefix reports whether w (three bytes at least) may begin with a
// month's or weekday's three-letter abbreviation, in any case, as every
// name in dateNames does: one bit looked up, so that most words end there,
// without the map lookup that was half of textPrints' time. Bytes other
// than letters may alias to a prefix; dateWord checks the letters after.
func datePrefix(w []byte) bool {
	k := prefixKey(w)
	return datePrefixes[k/64]&(1<<(k%64)) != 0
}

func isLetter(c byte) bool { c |= 0x20; return 'a' <= c && c <= 'z' }

// keyFunc returns the key function printPage uses for the links of a page
// of u's origin, and its drop function: keys without session ids, without the
// parameters learned not to matter, and without those whose values are
// fresh on every response (not yet confirmed by content).
func (c *Crawler) keyFunc(u *url.URL) (key func(*url.URL) string, drop func(string) bool) {
	origin := urlnorm.HostKey(u)
	learned := c.dropFunc(u)
	drop = func(name string) bool { return learned(name) || c.space.learner.Fresh(origin, name) }
	key = func(l *url.URL) string { return urlnorm.Key(l, drop) }
	return key, drop
}
