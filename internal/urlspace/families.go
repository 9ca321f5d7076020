package urlspace

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Link classes: how a link stands to the page it was found on, which
// orders a host's queue (the lower first) and says which budget a URL is
// fetched under (see Families).
const (
	// ClassOther: a link to another resource: another path (an article
	// from a list, a list from an article, a chapter from a contents
	// page), or another section of the host.
	ClassOther = 0
	// ClassNext: the page's own URL with only numbers changed or added
	// (the next page of a list, a topic's later posts).
	ClassNext = 1
	// ClassRefine: the page's own path with other parameters (a list
	// narrowed by a filter, sorted, a view or an action on the same
	// item, a sibling), or a tag path that adds tags to the page's
	// ("/tag/x" → "/tag/x+y").
	ClassRefine = 2
	// ClassHinted: a link the site marked rel="nofollow".
	ClassHinted = 3
)

// LinkClass returns the class of a link (its key, urlnorm.Key) found on a
// page (its key), both of one host.
//
// Only a link to the page's own path, below it, or to a tag path that
// intersects the page's is a refinement: a link to another path is
// another resource, whatever the section, so that a site all of whose
// pages sit under one directory (documentation, a wiki under /wiki/) is
// not judged as one page's variants.
func LinkClass(pageKey, linkKey string) int {
	pu, lu := KeyRequestURI(pageKey), KeyRequestURI(linkKey)
	if section(pu) != section(lu) {
		return ClassOther
	}
	if continues(pu, lu) {
		return ClassNext
	}
	pp, _, _ := strings.Cut(pu, "?")
	lp, _, _ := strings.Cut(lu, "?")
	if pp == lp || intersects(pp, lp) || extends(pp, lp) {
		return ClassRefine
	}
	return ClassOther
}

// extends reports whether path link narrows path page: all of page's
// segments, in order, and more ("/wiki/a" → "/wiki/a/history", "/tags/a"
// → "/tags/a/b", "/c/red/" → "/c/red/large/", and for filters written
// in the path in a fixed order "/c/style:slim/" →
// "/c/material:wool/style:slim/"). A page that is a file
// ("/std/index.html") is not narrowed by the files of its subdirectories.
func extends(page, link string) bool {
	ps := strings.Split(strings.Trim(page, "/"), "/")
	ls := strings.Split(strings.Trim(link, "/"), "/")
	if ps[0] == "" || len(ls) <= len(ps) || ps[0] != ls[0] {
		return false
	}
	if last := ps[len(ps)-1]; !strings.HasSuffix(page, "/") && strings.Contains(last, ".") {
		return false
	}
	j := 1
	for _, seg := range ls[1:] {
		if j < len(ps) && seg == ps[j] {
			j++
		}
	}
	return j == len(ps)
}

// dirOf returns the directory of a URL key's path: "/wiki/a/history" →
// "/wiki/a/".
func dirOf(key string) string {
	p, _, _ := strings.Cut(KeyRequestURI(key), "?")
	return p[:strings.LastIndexByte(p, '/')+1]
}

// intersects reports whether path link is path page with one segment
// widened by more values joined to it: "/tag/x" → "/tag/x+y",
// "/t/a,b" → "/t/a,b,c".
func intersects(page, link string) bool {
	ps, ls := strings.Split(page, "/"), strings.Split(link, "/")
	if len(ps) != len(ls) {
		return false
	}
	diff := -1
	for i := range ps {
		if ps[i] != ls[i] {
			if diff >= 0 {
				return false
			}
			diff = i
		}
	}
	if diff < 0 || ps[diff] == "" {
		return false
	}
	for _, sep := range joinSeps {
		if strings.HasPrefix(ls[diff], ps[diff]+sep) || strings.HasSuffix(ls[diff], sep+ps[diff]) || strings.Contains(ls[diff], sep+ps[diff]+sep) {
			return true
		}
	}
	return false
}

// joinSeps are the separators that join the values of a tag
// intersection or a multi-valued filter, as URL keys write them.
var joinSeps = []string{"+", ",", "%2B", "%2b", "%2C", "%2c", ";", "|", "%7C", "%7c", "%20"}

// joined returns the values of v joined by one of joinSeps ("a,b" → a, b),
// or nil for a single value.
func joined(v string) []string {
	for _, sep := range joinSeps {
		if !strings.Contains(v, sep) {
			continue
		}
		parts := strings.Split(v, sep)
		if slices.Contains(parts, "") {
			return nil
		}
		return parts
	}
	return nil
}

// mayJoin reports whether a request URI's last path segment or a query
// value may join several values: a cheap test before joinedKnown.
func mayJoin(uri string) bool {
	path, query, _ := strings.Cut(uri, "?")
	path = strings.TrimSuffix(path, "/")
	last := path[strings.LastIndexByte(path, '/')+1:]
	return strings.ContainsAny(last, "+,;|%") || strings.ContainsAny(query, "+,;|%")
}

// Section returns the section of a URL key: the first segment of its
// path, digits masked ("*"), "" for the root.
func Section(key string) string { return section(KeyRequestURI(key)) }

// section returns the first segment of a request URI's path, digits
// masked: "/news?tag=x" → "news", "/2024/05/slug/" → "*", "/" → "".
func section(uri string) string {
	path, _, _ := strings.Cut(uri, "?")
	path = strings.TrimPrefix(path, "/")
	seg, _, _ := strings.Cut(path, "/")
	seg, _, _ = strings.Cut(seg, ";")
	if hasDigit(seg) {
		return "*"
	}
	return seg
}

func hasDigit(s string) bool { return strings.IndexAny(s, "0123456789") >= 0 }

// hasLetter reports whether s holds an ASCII letter.
func hasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c >= 'a' && c <= 'z' {
			return true
		}
	}
	return false
}

// numeric reports whether a parameter value is a number (a page, an
// offset): digits, possibly signed.
func numeric(v string) bool {
	v = strings.TrimPrefix(v, "-")
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

// continues reports whether link is page with only numbers changed or
// added: numeric path segments and numeric parameter values left out, the
// rest is the same, but that the link's path may add one word before a
// number ("/tag/x/" → "/tag/x/page/2/").
//
// A number added that is 0 or 1 is not a next page: a flag (print=1), or
// a first page named (start=0), which is the page itself; nor is the
// number the page's path holds ("/shoe-p77.html?product_id=77"): the
// item's own, written again. A page is not its own later page: a form
// that posts to the page, or a link to itself, shows no list.
func continues(page, link string) bool {
	if page == link {
		return false
	}
	pp, pq := wordsOnly(page)
	lp, lq := wordsOnly(link)
	if pq != lq {
		return false
	}
	_, pageQuery, _ := strings.Cut(page, "?")
	_, linkQuery, _ := strings.Cut(link, "?")
	pagePath, _, _ := strings.Cut(page, "?")
	for part := range strings.SplitSeq(linkQuery, "&") {
		name, v, _ := strings.Cut(part, "=")
		if v != "" && !hasName(pageQuery, name) && (FirstValue(v) || numeric(v) && numberIn(pagePath, v)) {
			return false
		}
	}
	if pp == lp || strings.TrimSuffix(pp, "/") == strings.TrimSuffix(lp, "/") {
		// ("/c/a/" → "/c/a/page-2": a number segment added after a
		// list that ends in "/", whose pages do not.)
		return true
	}
	// One word added, followed by a number in the link's own path.
	rest, ok := strings.CutPrefix(lp, strings.TrimSuffix(pp, "/")+"/")
	if !ok || strings.Contains(strings.Trim(rest, "/"), "/") {
		return false
	}
	path, _, _ := strings.Cut(link, "?")
	return hasDigit(path[strings.LastIndex(strings.TrimSuffix(path, "/"), "/")+1:])
}

// hasPart reports whether a query has the parameter name=value given.
func hasPart(query, part string) bool {
	for p := range strings.SplitSeq(query, "&") {
		if p == part {
			return true
		}
	}
	return false
}

// FirstValue reports whether a parameter value is one that so often
// names a list's first page, or a flag, that one pair of pages showing it
// changes nothing is enough to believe it: 0, 1 or nothing.
func FirstValue(v string) bool { return v == "" || v == "0" || v == "1" }

// Numbered reports whether a URL key names something by number: a path
// segment with a digit, or a query value that is a number.
func Numbered(key string) bool {
	path, query, _ := strings.Cut(KeyRequestURI(key), "?")
	if hasDigit(path) {
		return true
	}
	for part := range strings.SplitSeq(query, "&") {
		if _, v, _ := strings.Cut(part, "="); numeric(v) {
			return true
		}
	}
	return false
}

// hasName reports whether a query has a parameter of the given name.
func hasName(query, name string) bool {
	for part := range strings.SplitSeq(query, "&") {
		if n, _, _ := strings.Cut(part, "="); n == name {
			return true
		}
	}
	return false
}

// wordsOnly returns a request URI's path without its segments that hold a
// digit, and its query without the parameters whose values are numbers.
func wordsOnly(uri string) (path, query string) {
	p, q, _ := strings.Cut(uri, "?")
	var b strings.Builder
	for i, seg := range strings.Split(p, "/") {
		if i > 0 && hasDigit(seg) {
			continue
		}
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(seg)
	}
	var kept []string
	for part := range strings.SplitSeq(q, "&") {
		if _, v, _ := strings.Cut(part, "="); part != "" && !numeric(v) {
			kept = append(kept, part)
		}
	}
	return b.String(), strings.Join(kept, "&")
}

// FamilyConfig configures Families. Its zero value gives the defaults.
type FamilyConfig struct {
	// MinFree is how many pages of a family reached from within their own
	// section may yield nothing before the family's budget is spent. The
	// default is 6.
	MinFree int
	// DeepFree is the same for all the pages of a section whose URLs
	// carry two or more parameters with words for values (a list narrowed
	// twice, or narrowed and sorted), together: the combinations of a
	// faceted list share one budget, whatever their patterns. The default
	// is 4.
	DeepFree int
	// TrialFree is MinFree for a family none of whose refinements
	// yielded, in a section where BarrenAfter other families' refinements
	// all yielded nothing: a site whose filters and sort orders turned out
	// barren gives a new one a shorter trial. The default is 2.
	TrialFree int
	// BarrenAfter: see TrialFree. The default is 2.
	BarrenAfter int
	// HollowFree is how many pages of a family reached from another
	// section may be near-copies of its other pages and yield nothing
	// before the family is refused (see Hollow). The default is 6.
	HollowFree int
	// PerYield is how many pages that yielded something buy one more page
	// that does not: the default, 16, lets a family waste one request in
	// 17 once past its free pages.
	PerYield int
	// NextFree is how many later pages of a family of many lists (a
	// taxonomy), of a faceted list or of the site's search may show
	// nothing new, on a host whose later pages show nothing new, before
	// the family's later pages are no longer fetched; one that yields
	// keeps them all. The default is 4.
	NextFree int
	// SectionFree is how many refinements of a section may yield nothing
	// before, if none of the section's ever did, its families that have
	// not yielded stop at their first barren page. The default is 12.
	SectionFree int
	// WideAfter is how many distinct segments a path prefix must be seen
	// with (tags, slugs) for that position to be masked in its family.
	// The default is 8.
	WideAfter int
	// MaxFamilies is how many families are followed per host; URLs of
	// families beyond it are never refused. The default is 2,048.
	MaxFamilies int
	// MaxHosts is how many hosts are remembered. The default is 10,000.
	MaxHosts int
}

// Families judges a host's URL families by what their pages yield: new
// URLs in other sections of the host, or text not seen before. A family
// is a URL pattern: the path with digit segments, and segments at
// positions where the host has shown many values (tags, slugs), masked,
// and the names of the query parameters ("/tag/*", "/news?section&tag").
//
// Pages reached from another section are the family's in-links from
// outside, which bound it as IRLbot's STAR bounds a domain by its
// in-links: they are fetched unless the family's pages turn out hollow —
// near-copies of each other that yield nothing, a form around an item's
// name (HollowFree). A list's next pages are fetched: a list ends —
// unless the host is covered (its later pages, fetched after every other
// link, have shown nothing new) and the family is a taxonomy's (its later
// pages span manyLists lists or more: tags, authors, months), a faceted
// list's (a filter page over everything) or the site's search, none of
// whose later pages yielded after NextFree: the site's few main lists are
// followed to their ends. A date's parts ("/2021/01/03/" from
// "/2021/01/") are archives of their own, never later pages.
// On a host whose later pages lead somewhere (a shop's, whose facet lists
// are how its products are reached), a list narrowed by one filter, and a
// filtered list's later pages, are not refused by their family's budget
// (filtered); a parameter whose lists go as far as the list without it
// is a sort, not a filter (sorts). Other
// pages reached from within their section (refinements: a list's
// filters and sort orders, an item's views, a history's revisions) are
// fetched while the family keeps yielding: once MinFree of them yielded
// nothing, one more is fetched for every PerYield pages of the family
// that did.
// A view written in the path ("/wiki/a/history", "/wiki/a/diff/3/4")
// links its item's other views as refinements whatever linked it
// (viewLink); one view's families in several sections share a budget
// (sigRef), and on a host whose root holds items (wideRoot) an item's
// views, in the path or the query ("/Ns:Page?mode=history"), are one
// family. Thin numbered pages within thinRadius bits of
// one of their family's last few are hollow too (ThinAlike).
// Pages whose URLs carry two or more parameters with words for values —
// a list narrowed twice, or narrowed and sorted — are judged together for
// their section, however they were reached (DeepFree): a faceted list
// settles near the number of its single filters.
//
// Families is created with NewFamilies and is safe for concurrent use.
type Families struct {
	cfg FamilyConfig
	mu  struct {
		sync.Mutex
		hosts *lru[famHost]
	}
}

type famHost struct {
	fams map[string]*famStat
	deep map[string]*famStat // by section: pages of two or more word parameters
	// filters holds, by a list's path, the record of its lists narrowed
	// by one parameter in the query, whatever its name, and of their
	// later pages (filterStat).
	filters map[string]*famStat
	width   map[string]*widthSet
	// under follows, for path segments without digits, the distinct
	// directories they were seen below (up to facetAfter): a segment
	// below many directories is a filter or a view written in the path.
	under map[uint64]*[facetAfter]uint64
	// tops holds, for each path seen, its directory and last segment
	// ("/c/" and "red" for "/c/red/"): a longer path below the same
	// directory made of such segments ("/c/red/large/" when "/c/large/"
	// is known too) is a list narrowed once per segment.
	tops map[uint64]struct{}
	// kids counts, by directory (dirHash), the distinct last segments of
	// tops seen below it, up to 2: a segment is a filter written in the
	// path only beside another ("/c/red/" and "/c/blue/"); the one list
	// below its directory ("/collections/all") is the list itself.
	kids map[uint64]uint8
	// paged holds the paths of the lists, unfiltered by the query, whose
	// later pages were found (catalogueList).
	paged map[uint64]struct{}
	// nums holds, per query parameter with numbers for values, the
	// smallest and largest seen: a parameter whose values are all years
	// is a filter, not a page number.
	nums map[string]*[2]int64
	// values holds single query values seen, with their path and name
	// (valueKey): a URL joining several of them narrows a known list.
	values map[uint64]struct{}
	// names counts, by path and parameter name (nameKey), the distinct
	// word values seen, up to wideValues.
	names map[uint64]uint16
	// next counts the later pages fetched on the host and, of those, the
	// ones that yielded (see covered).
	next, nextY int
	// later holds the shapes (laterShape) of filtered lists' later pages.
	later map[uint64]struct{}
	// pageNames holds the query parameters that number a list's pages.
	pageNames map[string]*pageNum
	// listEnd holds, by listBase and the page number's name, the
	// greatest page number linked of a list, and longList the lists
	// narrowed by a word that go as far as the list without it;
	// wordLists counts, by parameter name, the narrowed lists and how
	// many of them are long: a sort (see sorts).
	listEnd   map[uint64]int64
	longList  map[uint64]bool
	wordLists map[string]*[2]int
	// secRef counts, by section, the refinements fetched and those that
	// yielded; sigRef the same by actionSig: the same view of items in
	// every section (a wiki's histories, one family per namespace).
	secRef map[string]*[2]int
	sigRef map[string]*[2]int
	// views counts the same for the host's views all together, those
	// whose word it shows below several directories (shownSig).
	views [2]int
	// facets counts, by path, the parameter names seen with words for
	// values: a list narrowed by two or more kinds of filter is faceted.
	facets map[uint64]uint8
	// listSec is the section of the host's first list seen to go to a
	// third page (or offset), listSecs how many sections such lists
	// were seen in, up to 2: a host whose paged lists are all in one
	// section has one catalogue (catalogue).
	listSec  string
	listSecs uint8
	// barren counts, by section, the families whose refinements were
	// MinFree pages or more and all yielded nothing (famStat.barren).
	barren map[string]int
	// barrenSig counts the same by the names of the query parameters of
	// families whose URLs carry a word parameter ("o&page"): a sort order
	// barren on two lists; and by the word that ends the paths of a
	// family (actionSig): a page's history barren in two sections.
	barrenSig map[string]int
	// search holds, by path, what is known of the site's search: the
	// action of a search form (formAction), and whether the page at the
	// path without a query was a bare form (bareThin) or a page of its own
	// (bareFull).
	search map[uint64]uint8
	// tags holds, by query parameter and value ("ref=related"), the
	// distinct paths (by hash) of the links seen to carry it, up to
	// tagAfter (Tagged).
	tags map[uint64]*[tagAfter]uint64
}

const (
	formAction = 1 << iota
	bareThin
	bareFull
)

// maxSearch bounds the paths followed per host for searches.
const maxSearch = 256

// searchPath reports whether a path is the site's search: the action of a
// GET form with a text field, whose page without a query is the form
// alone (a search page, not a wiki's start page or a blog's home, whose
// search forms send to their own paths). The root is never one: a blog's
// search is "/?s=", and its home the site's entry.
func (h *famHost) searchPath(path string) bool {
	return h.search != nil && path != "/" && h.search[hash(path)]&(formAction|bareThin|bareFull) == formAction|bareThin
}

// noteSearch records what a path showed: a form's action makes it a
// candidate (up to maxSearch of them), and what its bare page was is kept
// for candidates only, so that a site's many pages without a query do not
// fill the map before its search is seen.
func (h *famHost) noteSearch(path string, bit uint8) {
	k := hash(path)
	if _, ok := h.search[k]; ok {
		h.search[k] |= bit
		return
	}
	if bit != formAction || len(h.search) >= maxSearch {
		return
	}
	if h.search == nil {
		h.search = make(map[uint64]uint8)
	}
	h.search[k] = bit
}

// SearchForm records the action (its URL key) of a search form found on
// host: a GET form with a text field (extract.Page.SearchForms).
func (f *Families) SearchForm(host, key string) {
	path, _, _ := strings.Cut(KeyRequestURI(key), "?")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.hosts.get(host).noteSearch(path, formAction)
}

// BarePage records that a page of host without a query (its key) had
// main text of its own (full) or none (a bare form, a list of links).
func (f *Families) BarePage(host, key string, full bool) {
	path, q, _ := strings.Cut(KeyRequestURI(key), "?")
	if q != "" {
		return
	}
	bit := uint8(bareThin)
	if full {
		bit = bareFull
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.hosts.get(host).noteSearch(path, bit)
}

// maxValues bounds the single query values followed per host.
const maxValues = 8192

// noteValues records the single values of a URL key's query parameters,
// each with its path and name ("/tagged?tag=a"), for joinedKnown.
func (h *famHost) noteValues(key string) {
	path, q, _ := strings.Cut(KeyRequestURI(key), "?")
	for part := range strings.SplitSeq(q, "&") {
		name, v, _ := strings.Cut(part, "=")
		if v == "" || joined(v) != nil || len(h.values) >= maxValues {
			continue
		}
		if h.values == nil {
			h.values = make(map[uint64]struct{})
			h.names = make(map[uint64]uint16)
		}
		k := valueKey(path, name, v)
		if _, ok := h.values[k]; ok {
			continue
		}
		h.values[k] = struct{}{}
		if wordValue(v) {
			n := h.names[nameKey(path, name)]
			if n == 0 {
				if h.facets == nil {
					h.facets = make(map[uint64]uint8)
				}
				if c := h.facets[hash(path)]; c < 255 && len(h.facets) < maxValues {
					h.facets[hash(path)] = c + 1
				}
			}
			if n < wideValues {
				h.names[nameKey(path, name)] = n + 1
			}
		}
	}
}

// wideValues is how many distinct word values a parameter of a path must
// show for it to name resources rather than narrow a list: a wiki's
// doku.php?id=, a CMS's index.php?title=, against a list's ?color= or
// ?sort=.
const wideValues = 32

func nameKey(path, name string) uint64 { return hash(path)*31 ^ hash(name) }

// wordValue reports whether a parameter value is a word or words, not a
// number, a date or a token: letters and no digits.
func wordValue(v string) bool { return hasLetter(v) && !hasDigit(v) }

// resourceParam reports whether a link differs from the page, of the same
// path, only by the value of one parameter that names resources on the
// host (wideValues word values): another page, not a refinement.
func (h *famHost) resourceParam(pageKey, linkKey string) bool {
	if h.names == nil {
		return false
	}
	pp, pq, _ := strings.Cut(KeyRequestURI(pageKey), "?")
	lp, lq, _ := strings.Cut(KeyRequestURI(linkKey), "?")
	if pp != lp {
		return false
	}
	pparts, lparts := strings.Split(pq, "&"), strings.Split(lq, "&")
	if len(pparts) != len(lparts) {
		return false
	}
	changed := ""
	for i := range lparts {
		if lparts[i] == pparts[i] {
			continue
		}
		ln, lv, _ := strings.Cut(lparts[i], "=")
		pn, _, _ := strings.Cut(pparts[i], "=")
		if ln != pn || changed != "" || !wordValue(lv) {
			return false
		}
		changed = ln
	}
	return changed != "" && h.names[nameKey(lp, changed)] >= wideValues
}

func valueKey(path, name, v string) uint64 {
	return nameKey(path, name)*0x9e3779b97f4a7c15 ^ hash(v)
}

// joinedKnown reports whether a URL key joins values that the host
// showed one at a time: a tag intersection or a filter of several values
// ("/tag/a,b/" when "/tag/a/" is known, "/tagged?t=a+b" when
// "/tagged?t=a" is). Such a URL narrows a known list wherever it is
// linked from — an article's "more on a and b" — and is a refinement.
func (h *famHost) joinedKnown(key string) bool {
	uri := KeyRequestURI(key)
	path, q, _ := strings.Cut(uri, "?")
	trimmed := strings.TrimSuffix(path, "/")
	if i := strings.LastIndexByte(trimmed, '/'); i >= 0 && h.tops != nil {
		if parts := joined(trimmed[i+1:]); parts != nil {
			dir := dirHash(strings.Split(trimmed[:i], "/"))
			for _, p := range parts {
				if _, ok := h.tops[segKey(dir, p)]; ok {
					return true
				}
			}
		}
	}
	if h.values == nil {
		return false
	}
	for part := range strings.SplitSeq(q, "&") {
		name, v, _ := strings.Cut(part, "=")
		for _, p := range joined(v) {
			if _, ok := h.values[valueKey(path, name, p)]; ok {
				return true
			}
		}
	}
	return false
}

// belowKnown reports whether a URL key's path is a known path with
// segments added that the host shows below several directories, numbers
// aside ("/wiki/a/b/compare/3/4" when "/wiki/a/b" is known and "compare"
// is seen below three pages): a view, an action or a revision of a known
// page, wherever it is linked from (a wiki's recent changes that link
// every diff). Files ("index.html") are not.
func (h *famHost) belowKnown(key string) bool {
	if h.tops == nil || h.under == nil {
		return false
	}
	path, _, _ := strings.Cut(KeyRequestURI(key), "?")
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if len(segs) < 3 {
		return false
	}
	// dirs[k] is the directory of segs[:k].
	var dirsBuf [16]uint64
	dirs := dirsBuf[:0]
	dir := rootDir
	for _, seg := range segs {
		dirs = append(dirs, dir)
		if seg != "" {
			dir = subDir(dir, seg)
		}
	}
	words := 0
	for k := len(segs) - 1; k >= 2; k-- {
		seg := segs[k]
		switch {
		case seg == "" || strings.Contains(seg, "."):
			return false
		case !hasDigit(seg):
			u := h.under[hash(seg)]
			if u == nil || u[facetAfter-1] == 0 {
				return false
			}
			words++
		}
		if words == 0 {
			continue
		}
		if _, ok := h.tops[segKey(dirs[k-1], segs[k-1])]; ok {
			return true
		}
	}
	return false
}

// searchResult reports whether a URL key is a page of the site's search
// (searchPath) with a query: a result the site computes for the query,
// which narrows the site's content wherever it is linked from (a
// member's posts from a profile, a term from a tag cloud).
func (h *famHost) searchResult(key string) bool {
	if h.search == nil {
		return false
	}
	path, q, _ := strings.Cut(KeyRequestURI(key), "?")
	return q != "" && h.searchPath(path)
}

// maxNums bounds the numeric parameters followed per host.
const maxNums = 256

// noteNums records the numeric values of a URL key's query parameters.
func (h *famHost) noteNums(key string) {
	_, q, _ := strings.Cut(KeyRequestURI(key), "?")
	for part := range strings.SplitSeq(q, "&") {
		name, v, _ := strings.Cut(part, "=")
		if !numeric(v) {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			continue
		}
		if h.nums == nil {
			h.nums = make(map[string]*[2]int64)
		}
		r := h.nums[name]
		if r == nil {
			if len(h.nums) >= maxNums {
				continue
			}
			r = &[2]int64{n, n}
			h.nums[name] = r
		}
		r[0], r[1] = min(r[0], n), max(r[1], n)
	}
}

// yearParam reports whether every value seen of a query parameter is a
// year.
func (h *famHost) yearParam(name string) bool {
	r := h.nums[name]
	return r != nil && r[0] >= 1900 && r[1] <= 2100
}

// facetAfter is how many distinct directories a path segment must be
// seen below for a link that adds it to a page's path to be a
// refinement: "/products/xs/linen/", "/products/m/linen/",
// "/products/linen/".
const facetAfter = 3

// maxUnder bounds the segments followed per host for facets.
const maxUnder = 8192

// widthSet follows the distinct segments seen below one path prefix.
type widthSet struct {
	seen map[uint64]struct{}
	wide bool
}

type famStat struct {
	fetched    [4]int // pages fetched, by the class of the link they came by
	yielded    [4]int // of those, pages that yielded
	hollow     int    // pages reached from another section that were a near-copy of another page of the family
	hollowY    int    // of those, pages that yielded all the same
	hollowNear int    // of those, pages shown near-copies by the crawl's own test (Hollow)
	refused    int    // URLs not fetched for the budget
	refusedH   int    // of those, URLs linked rel="nofollow"
	refusedF   int    // of those, later pages of a list's filters refused together (filtersSpent)
	hinted     int    // pages whose canonical named another URL
	repeats    int    // later pages that showed the page they add a number to (Repeats)
	examples   []string
	sec        string // the family's section
	barren     bool   // counted in famHost.barren
	numbered   bool   // its URLs name pages by number (Numbered): a list's later pages
	barrenNum  bool   // counted barren as numbered (numSec)
	sig        string // the names of its query parameters, when one has words for values ("o&page"), or its actionSig
	// lists holds the distinct lists (listBase) whose later pages were
	// found, up to manyLists: a family of many lists is a taxonomy
	// (tags, authors, months), not one of the site's few main lists.
	lists   []uint64
	dated   bool // its "later pages" are a date's parts: archives of their own
	search  bool // its path is the site's search
	faceted bool // its path is a list with two or more kinds of filter
	// thin holds the prints of the family's last pages without main
	// text of their own (ThinAlike), made for the first.
	thin *thinRing
}

// refineYields returns how many of the family's refinements yielded.
func (s *famStat) refineYields() int { return s.yielded[ClassRefine] + s.yielded[ClassHinted] }

// noteBarren keeps famHost.barren up to date with a family's record.
func (f *Families) noteBarren(h *famHost, s *famStat) {
	_, other := s.wasted()
	barren := other >= f.cfg.MinFree && s.refineYields() == 0
	if barren == s.barren {
		return
	}
	s.barren = barren
	if h.barren == nil {
		h.barren = make(map[string]int)
		h.barrenSig = make(map[string]int)
	}
	d := 1
	if !barren {
		d = -1
	}
	h.barren[s.sec] += d
	if s.sig != "" {
		h.barrenSig[s.sig] += d
	}
	if barren {
		s.barrenNum = s.numbered
	}
	if s.barrenNum {
		h.barren[numSec+s.sec] += d
	}
}

// noteSecRef counts a refinement of a family fetched (i 0) or yielding
// (i 1), for its section and its view (sigRef).
func (h *famHost) noteSecRef(s *famStat, i int) {
	countRef(&h.secRef, s.sec, i)
	if isActionSig(s.sig) {
		countRef(&h.sigRef, s.sig, i)
		if h.shownSig(s.sig) {
			h.views[i]++
		}
	}
}

// shownSig reports whether a view's signature ("*/history",
// "*/compare/*/*") names a word the host shows as a view (viewWord), not
// an item's name (a page's own later pages, "*/Some_page").
func (h *famHost) shownSig(sig string) bool {
	word, _, _ := strings.Cut(strings.TrimPrefix(sig, "*/"), "/")
	return isActionSig(sig) && h.viewWord(word)
}

// countRef adds one to (*m)[k][i], keeping at most maxSecRef keys.
func countRef(m *map[string]*[2]int, k string, i int) {
	if *m == nil {
		*m = make(map[string]*[2]int)
	}
	c := (*m)[k]
	if c == nil {
		if len(*m) >= maxSecRef {
			return
		}
		c = new([2]int)
		(*m)[k] = c
	}
	c[i]++
}

// maxSecRef bounds the sections, and the views, whose refinements are
// counted per host.
const maxSecRef = 1024

// numSec prefixes a section in famHost.barren for its families whose URLs
// are numbered: narrowed or sorted lists' later pages.
const numSec = "\x00"

// free returns how many refinements of a family may yield nothing before
// its budget is spent: MinFree, or TrialFree for a family that has not
// yielded in a section where BarrenAfter others were barren (a list's
// later pages aside), or whose parameters, one of them with words for
// values, were those of BarrenAfter barren families elsewhere on the
// host (a sort order, sorted lists' later pages), or whose paths end in
// the word of BarrenAfter barren families elsewhere (actionSig).
func (f *Families) free(h *famHost, s *famStat) int {
	if s.refineYields() > 0 || s.barren {
		return f.cfg.MinFree
	}
	if !s.numbered && h.barren[s.sec] >= f.cfg.BarrenAfter || s.numbered && h.barren[numSec+s.sec] >= f.cfg.BarrenAfter && h.covered() ||
		s.sig != "" && h.barrenSig[s.sig] >= f.cfg.BarrenAfter {
		return f.cfg.TrialFree
	}
	return f.cfg.MinFree
}

// wasted returns the pages reached from within the section that yielded
// nothing: next pages, and others.
func (s *famStat) wasted() (next, other int) {
	return s.fetched[ClassNext] - s.yielded[ClassNext],
		s.fetched[ClassRefine] + s.fetched[ClassHinted] - s.yielded[ClassRefine] - s.yielded[ClassHinted]
}

// total is how many of the family's pages were fetched, however reached.
func (s *famStat) total() int {
	n := 0
	for _, x := range s.fetched {
		n += x
	}
	return n
}

func (s *famStat) yielding() int {
	n := 0
	for _, y := range s.yielded {
		n += y
	}
	return n
}

// covered reports whether the host's later pages, fetched after every
// other link found (classDue), show its links to lead everywhere: at
// least coveredAfter of them fetched, and no more than one in
// coveredRatio yielded anything.
func (h *famHost) covered() bool {
	return h.next >= coveredAfter && h.nextY*coveredRatio <= h.next
}

// coveredAfter and coveredRatio: see covered.
const (
	coveredAfter = 16
	coveredRatio = 32
)

// manyLists is how many lists a family's later pages must span for it
// to be a taxonomy's (see Families.spent).
const manyLists = 16

// listBase returns the list a later page (link, its request URI)
// belongs to, from the page that links it: the link without the
// parameters the page does not have with the same value ("/2019/12?from=20"
// from "/2019/12?from=10" is "/2019/12"); or, for a number in the path,
// without its last segment and, if that is a number, a word before it
// ("/tag/x/page/3/" is "/tag/x", "/c/red/p3.html" is "/c/red").
func listBase(page, link string) (base string, date bool) {
	lp, lq, _ := strings.Cut(link, "?")
	pp, pq, _ := strings.Cut(page, "?")
	var kept []string
	for part := range strings.SplitSeq(lq, "&") {
		if part != "" && hasPart(pq, part) {
			kept = append(kept, part)
		}
	}
	if lp != pp {
		segs := strings.Split(strings.Trim(lp, "/"), "/")
		if n := len(segs); n > 0 && hasDigit(segs[n-1]) {
			number := numeric(segs[n-1])
			segs = segs[:n-1]
			if n := len(segs); number && n > 0 && numeric(segs[n-1]) {
				// A number below a number is a date's part
				// ("/2021/01/" → "/2021/01/03/", "/2021/01/04/"):
				// another archive, not a later page.
				date = true
			} else if number && n > 1 && !hasDigit(segs[n-1]) {
				segs = segs[:n-1]
			}
		}
		lp = "/" + strings.Join(segs, "/")
	}
	return lp + "?" + strings.Join(kept, "&"), date
}

// pageNum follows the values a query parameter shows in links to later
// pages: their smallest and their greatest common divisor. A page number
// shows 2; an offset, multiples of the page's size; a filter with numbers
// for values (a size, a year) neither.
type pageNum struct{ min, gcd int64 }

func (p *pageNum) paging() bool { return p.min <= 2 || p.gcd == p.min }

// ids reports whether a parameter's values are ids (revisions, a cursor):
// never small, and no offsets.
func (p *pageNum) ids() bool { return p.min >= minID && !p.paging() }

// minID is the least value a parameter that numbers by ids has shown: a
// list's page numbers and offsets start small.
const minID = 1000

// PageParam reports whether a query parameter numbers the pages of a
// host's lists, as links to later pages have shown (noteLater).
func (f *Families) PageParam(host, name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.mu.hosts.peek(host)
	if h == nil || h.pageNames == nil {
		return false
	}
	r := h.pageNames[name]
	return r != nil && r.paging()
}

// maxPageNames bounds the parameters followed per host as page numbers.
const maxPageNames = 64

// noteLater learns from a link to a later page (class ClassNext) found
// on pageKey: the parameters that number a list's pages, and how far
// each list goes. A link from a list's own page (not refined) counts the
// list in its family (famStat.lists); a link from a refinement (refined:
// a filtered list's page 2) marks the shape of the filtered list's later
// pages when only a page number changes (famHost.later).
//
// It reports whether the numbers the link changes are ids rather than a
// list's page numbers or offsets (ids).
func (f *Families) noteLater(host, pageKey, linkKey string, refined bool) (byIDs bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.mu.hosts.get(host)
	pageURI, linkURI := KeyRequestURI(pageKey), KeyRequestURI(linkKey)
	pp, pq, _ := strings.Cut(pageURI, "?")
	lp, lq, _ := strings.Cut(linkURI, "?")
	base, date := listBase(pageURI, linkURI)
	if !refined {
		f.noteList(h, linkKey, base, date)
	}
	if fs := f.filterStat(h, linkKey, true); fs != nil && !date && len(fs.lists) < manyLists {
		if b := hash(base); !slices.Contains(fs.lists, b) {
			fs.lists = append(fs.lists, b)
		}
	}
	// A list unfiltered by the query (a path, perhaps filtered in it).
	listPath, listQuery, _ := strings.Cut(base, "?")
	plain := listQuery == "" && !date
	if plain && len(h.paged) < maxListEnds {
		if h.paged == nil {
			h.paged = make(map[uint64]struct{})
		}
		h.paged[hash(strings.TrimSuffix(listPath, "/"))] = struct{}{}
	}
	// A list that goes to a third page counts for its section
	// (listSec) whether narrowed in its path or in its query (a tag's,
	// an author's): either lists the host's items.
	if !date && lp != pp && pathPage(lp) >= 3 {
		h.noteListSec(listPath)
	}
	paging := true
	changed, idLike := 0, 0
	for part := range strings.SplitSeq(lq, "&") {
		name, v, _ := strings.Cut(part, "=")
		if !numeric(v) || hasPart(pq, part) {
			continue
		}
		changed++
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			paging = false
			continue
		}
		if h.pageNames == nil {
			h.pageNames = make(map[string]*pageNum)
		}
		r := h.pageNames[name]
		if r == nil {
			if len(h.pageNames) >= maxPageNames {
				paging = false
				continue
			}
			r = &pageNum{min: n, gcd: n}
			h.pageNames[name] = r
		}
		r.min, r.gcd = min(r.min, n), gcd(r.gcd, n)
		paging = paging && r.paging()
		if r.ids() {
			idLike++
		}
		if !date && paging && (r.min <= 2 && n >= 3 || r.min > 2 && n >= 2*r.min) {
			h.noteListSec(listPath)
		}
		if !paging || r.min > 2 {
			// Lengths are compared by page numbers only: an
			// offset or a size writes the same values on every
			// list.
			continue
		}
		h.noteEnd(base, name, n, refined, pp, pq)
	}
	byIDs = lp == pp && changed > 0 && idLike == changed
	if lp != pp {
		// A page number written in the path ("/shop/page/3/"): the
		// list's, and its parent's, are the path without it.
		if n := pathPage(lp); n > 0 {
			parent, _ := unpaged(pp)
			h.noteEnd(base, "/", n, refined, parent, pq)
		}
		// A path numbered by ids on both sides ("/w/a/rev/5208" →
		// "/w/a/rev/5190") is a revision's link to another, not a
		// list's later page: a list's first page has no number, its
		// second a small one.
		paging = paging && !(pathPage(pp) >= minID && pathPage(lp) >= minID)
	}
	if !refined || !paging || lp != pp && lq != pq || changed == 0 && pathPage(lp) == 0 {
		// (A link that changes no number, a later page's link back
		// to its list's first page, shows no later page's shape.)
		return
	}
	if h.later == nil {
		h.later = make(map[uint64]struct{})
	}
	if len(h.later) < maxLaterShapes {
		h.later[hash(laterShape(linkURI))] = struct{}{}
	}
	return
}

// maxLaterShapes bounds the shapes of filtered lists' later pages
// followed per host.
const maxLaterShapes = 1024

// laterShape is the shape of a URL that a filtered list's later pages
// share whatever the host has shown since (unlike its family, whose
// masked positions grow as the host shows more): its section, every
// further path segment masked, its parameters' names.
func laterShape(uri string) string {
	path, query, _ := strings.Cut(uri, "?")
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var b strings.Builder
	b.WriteString("/" + segs[0])
	for range segs[1:] {
		b.WriteString("/*")
	}
	var names []string
	for part := range strings.SplitSeq(query, "&") {
		if name, _, _ := strings.Cut(part, "="); name != "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return b.String() + "?" + strings.Join(names, "&")
}

// maxListEnds bounds the lists whose last page is followed per host.
const maxListEnds = 8192

func (h *famHost) noteListEnd(base uint64, n int64) {
	if h.listEnd == nil {
		h.listEnd = make(map[uint64]int64)
		h.longList = make(map[uint64]bool)
		h.wordLists = make(map[string]*[2]int)
	}
	if end, ok := h.listEnd[base]; ok || len(h.listEnd) < maxListEnds {
		h.listEnd[base] = max(end, n)
	}
}

// noteEnd records that a list (base, listBase) goes to page n at least,
// numbered by name ("/" for a number in the path), and, for a list
// narrowed by words (refined: linked from a page reached as a
// refinement) whose parent list's page is at parentPath, whether it goes
// as far as its parent: a sort, not a filter (sorts).
func (h *famHost) noteEnd(base, name string, n int64, refined bool, parentPath, pq string) {
	b := hash(base + "#" + name)
	_, known := h.listEnd[b]
	h.noteListEnd(b, n)
	if !refined {
		return
	}
	parent, words := unfiltered(parentPath, pq, name)
	end := h.listEnd[hash(parent+"#"+name)]
	long := end >= 3 && n >= end && !h.longList[b]
	if long && len(h.longList) < maxListEnds {
		h.longList[b] = true
	}
	for _, w := range words {
		c := h.wordLists[w]
		if c == nil {
			if len(h.wordLists) >= maxPageNames {
				continue
			}
			c = new([2]int)
			h.wordLists[w] = c
		}
		if !known {
			c[0]++
		}
		if long {
			c[1]++
		}
	}
}

// unfiltered returns the list a page (its path and query) narrows, as
// listBase writes it: the page without its parameters with words for
// values and without the page number name; and the names of those
// parameters.
func unfiltered(path, query, pageName string) (base string, words []string) {
	var kept []string
	for part := range strings.SplitSeq(query, "&") {
		name, v, _ := strings.Cut(part, "=")
		switch {
		case part == "" || name == pageName:
		case wordValue(v):
			words = append(words, name)
		default:
			kept = append(kept, part)
		}
	}
	return path + "?" + strings.Join(kept, "&"), words
}

// sorts reports whether a parameter with words for values orders lists
// rather than narrows them: two or more of its lists, and half of them,
// go as far as the lists without it.
func (h *famHost) sorts(name string) bool {
	c := h.wordLists[name]
	return c != nil && c[1] >= 2 && 2*c[1] >= c[0]
}

// filtered reports whether a URL (its key), queued by a link of class
// class, is a list narrowed by one filter or such a list's later page
// (famHost.later), on a host whose later pages lead somewhere (at least
// coveredAfter fetched, and not covered): there such lists are how its
// items are reached, and their family's budget does not refuse them. A
// filtered list's later pages are so too, on a host not covered, once
// some of them yielded. A parameter shown to sort (sorts) is no filter.
func (h *famHost) filtered(s *famStat, key string, class int) bool {
	if class < ClassRefine || h.covered() {
		return false
	}
	uri := KeyRequestURI(key)
	_, later := h.later[hash(laterShape(uri))]
	leads := h.next >= coveredAfter
	if !leads && !(later && s.yielding() > 0) {
		return false
	}
	_, q, _ := strings.Cut(uri, "?")
	words := 0
	for part := range strings.SplitSeq(q, "&") {
		name, v, _ := strings.Cut(part, "=")
		if part == "" {
			continue
		}
		if wordValue(v) && joined(v) == nil {
			if h.sorts(name) {
				return false
			}
			words++
		} else if !numeric(v) || !later {
			return false
		}
	}
	return later && words <= 1 || leads && words == 1
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// noteList records in the family of a later page (linkKey) the list it
// belongs to (base, listBase), up to manyLists; a date's part marks the
// family as dated for good.
func (f *Families) noteList(h *famHost, linkKey, base string, date bool) {
	s := f.stat(h, f.family(h, linkKey))
	if s == nil || s.dated || len(s.lists) >= manyLists {
		return
	}
	if date {
		s.dated, s.lists = true, nil
		return
	}
	if b := hash(base); !slices.Contains(s.lists, b) {
		s.lists = append(s.lists, b)
	}
}

// NewFamilies returns an empty Families.
func NewFamilies(cfg FamilyConfig) *Families {
	cfg.MinFree = max(orDefault(cfg.MinFree, 6), 1)
	cfg.DeepFree = max(orDefault(cfg.DeepFree, 4), 1)
	cfg.HollowFree = max(orDefault(cfg.HollowFree, 6), 1)
	cfg.TrialFree = min(max(orDefault(cfg.TrialFree, 2), 1), cfg.MinFree)
	cfg.BarrenAfter = max(orDefault(cfg.BarrenAfter, 2), 1)
	cfg.PerYield = max(orDefault(cfg.PerYield, 16), 1)
	cfg.NextFree = max(orDefault(cfg.NextFree, 4), 1)
	cfg.SectionFree = max(orDefault(cfg.SectionFree, 12), 1)
	cfg.WideAfter = max(orDefault(cfg.WideAfter, 8), 2)
	cfg.MaxFamilies = max(orDefault(cfg.MaxFamilies, 2048), 1)
	cfg.MaxHosts = max(orDefault(cfg.MaxHosts, 10_000), 1)
	f := &Families{cfg: cfg}
	f.mu.hosts = newLRU[famHost](cfg.MaxHosts)
	return f
}

// actionSig returns, for a family of paths that end in one fixed word
// after a segment that varies ("/wiki/*/history", "/docs/*/*/raw"), the
// signature "*/history" that families of that word in other sections
// share: a wiki's histories, a page's raw text, each in every namespace.
// It returns "" for other families.
func actionSig(fam string) string {
	if strings.ContainsAny(fam, "?;") {
		return ""
	}
	path := strings.TrimSuffix(fam, "/")
	i := strings.LastIndexByte(path, '/')
	if i < 0 || !strings.HasSuffix(path[:i], "/*") || strings.Count(path, "/") < 3 {
		return ""
	}
	last := path[i+1:]
	if last == "" || last == "*" {
		return ""
	}
	for j := 0; j < len(last); j++ {
		if c := last[j] | 0x20; (c < 'a' || c > 'z') && last[j] != '-' && last[j] != '_' {
			return ""
		}
	}
	return "*/" + last
}

// familySig returns the signature (famStat.sig) that a family (fam) shares
// with families of other sections, from one of its URLs (a key): the
// names of its query parameters when one has words for values (a sort
// order, "o&page"); the word its paths end in (actionSig); else
// viewOrIDSig.
func (h *famHost) familySig(fam, key string) string {
	if wordParams(key) > 0 {
		if _, sig, _ := strings.Cut(fam, "?"); sig != "" {
			return sig
		}
	}
	if sig := actionSig(fam); sig != "" {
		return sig
	}
	return h.viewOrIDSig(key)
}

// viewOrIDSig returns a family's signature from one of its URLs (a key):
// viewSig for a view whose word the host shows as one (viewWord), else
// idSig, else viewSig. A view whose word its family masks, or a view's
// later pages ("/w/a/history?start=10": numbers only in the query), share
// the view's budget across sections; so do old revisions by id
// ("/Ns/Page?rev=1696731934", whose page's name is no view's word).
func (h *famHost) viewOrIDSig(key string) string {
	uri := KeyRequestURI(key)
	path, _, _ := strings.Cut(uri, "?")
	if _, view := viewOf(path); view != "" && h.viewWord(view) {
		return viewSig(uri)
	}
	if sig := idSig(key); sig != "" {
		return sig
	}
	return viewSig(uri)
}

// idSig returns, for a URL key whose query parameters all hold ids
// (numbers of minID or more: "?rev=1696731934", "?oldid=4821"), the
// signature "#rev" that the families of such URLs in other sections share:
// old revisions of each namespace's pages. It returns "" for other keys.
func idSig(key string) string {
	_, q, _ := strings.Cut(KeyRequestURI(key), "?")
	if q == "" {
		return ""
	}
	var names []string
	for part := range strings.SplitSeq(q, "&") {
		name, v, _ := strings.Cut(part, "=")
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < minID || !numeric(v) {
			return ""
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return "#" + strings.Join(names, "&")
}

// viewSig is actionSig for a family whose view's word is masked
// ("/wiki/*/*/*/*"), from one of its URLs (a request URI): the view's
// word and its numbers ("*/compare/*/*" for "/wiki/a/b/compare/3/4"), or
// "".
func viewSig(uri string) string {
	path, _, _ := strings.Cut(uri, "?")
	item, view := viewOf(path)
	if view == "" {
		return ""
	}
	n := 0 // the numbers after the view's word
	if rest := strings.Trim(path[len(item)+len(view):], "/"); rest != "" {
		n = strings.Count(rest, "/") + 1
	}
	return "*/" + view + strings.Repeat("/*", n)
}

// isActionSig reports whether a family's signature is an actionSig.
func isActionSig(sig string) bool { return strings.HasPrefix(sig, "*/") }

// wordParams counts the query parameters of a URL key whose values are
// not numbers: filters, sort orders, views.
func wordParams(key string) int {
	words, _ := paramKinds(key)
	return words
}

// paramKinds counts a URL key's query parameters with words for values
// and with numbers.
func paramKinds(key string) (words, nums int) {
	_, q, _ := strings.Cut(KeyRequestURI(key), "?")
	for part := range strings.SplitSeq(q, "&") {
		if part == "" {
			continue
		}
		if _, v, _ := strings.Cut(part, "="); numeric(v) {
			nums++
		} else {
			words++
		}
	}
	return words, nums
}

// Narrowed reports whether a URL key of host is a list narrowed twice,
// or narrowed and sorted: two or more query parameters with words for
// values, year-valued parameters and filters written in the path counted
// too (segments that are also lists of their own below the same
// directory: "/c/red/large/" when "/c/red/" and "/c/large/" are known).
func (f *Families) Narrowed(host, key string) bool {
	if wordParams(key) >= 2 {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.mu.hosts.peek(host)
	return h != nil && f.narrowed(h, key)
}

// narrowed reports whether a URL key of a host narrows a list twice or
// more: by parameters with words for values, by years (yearParam), and
// by filters written in the path (pathFilters).
func (f *Families) narrowed(h *famHost, key string) bool {
	n := wordParams(key)
	if n < 2 && h.nums != nil {
		_, q, _ := strings.Cut(KeyRequestURI(key), "?")
		for part := range strings.SplitSeq(q, "&") {
			if name, v, _ := strings.Cut(part, "="); numeric(v) && h.yearParam(name) {
				n++
			}
		}
	}
	return n >= 2 || n+f.pathFilters(h, key) >= 2
}

// pathFilters counts the segments of a URL key's path that are, below
// a directory of the path, lists of their own seen on the host: for
// "/shop/all/red/large/", "red" and "large" when "/shop/all/red/" and
// "/shop/all/large/" were seen; for "/shop/all/36/red/", "36" too when
// lists were seen below "/shop/all/36/". It takes the directory that
// counts most.
func (f *Families) pathFilters(h *famHost, key string) int {
	if h.tops == nil {
		return 0
	}
	path, _, _ := strings.Cut(KeyRequestURI(key), "?")
	segs := strings.Split(strings.Trim(path, "/"), "/")
	best := 0
	dir := rootDir
	for k := 0; k < len(segs)-1; k++ {
		if segs[k] != "" {
			dir = subDir(dir, segs[k])
		}
		n := 0
		if h.kids[dir] < 2 {
			continue
		}
		for _, seg := range segs[k+1:] {
			// A number, or a word and a number, is a filter too
			// where lists sit below it beside the directory's word
			// lists ("/c/36/cotton/", "/c/size-6/cotton/" with
			// "/c/cotton/": a size), not an item, a date or a page.
			if _, ok := h.tops[segKey(dir, seg)]; ok && (listSegment(seg) || (numeric(seg) || pageSegment(seg)) && h.kids[subDir(dir, seg)] >= 2) {
				n++
			}
		}
		best = max(best, n)
	}
	return best
}

// catalogueList reports whether a URL key is a later page of a list
// narrowed once by a filter written in the path below a list that has
// later pages of its own ("/shop/red/?page=2", "/shop/red/p/2/" when
// "/shop/?page=2" was found): a catalogue's one-value lists, its
// categories, are followed to their ends even on a host whose later
// pages show nothing new. A taxonomy's tags ("/tags/a?page=2") sit below
// no list of their own.
func (f *Families) catalogueList(h *famHost, key string) bool {
	if h.paged == nil {
		return false
	}
	path, q, _ := strings.Cut(KeyRequestURI(key), "?")
	for part := range strings.SplitSeq(q, "&") {
		if _, v, _ := strings.Cut(part, "="); part != "" && !numeric(v) {
			return false
		}
	}
	list, segs := unpaged(path)
	if segs[0] == "" {
		return false
	}
	filters := f.pathFilters(h, list)
	if filters == 0 && !hasDigit(list) && h.kids[dirHash(segs)] >= 2 {
		// The catalogue itself ("/shop/?page=5" with "/shop/red/" and
		// "/shop/blue/" below it, itself no filter of another list),
		// whose query filters and sort orders would make it "a list
		// with two or more kinds of filter". A tag with intersections
		// below it ("/tags/a/b") is a filter of "/tags/"; a month's
		// archive with its posts below it ("/2023/07/a-post/") is a
		// date's.
		return true
	}
	_, paged := h.paged[hash(list[:strings.LastIndexByte(list, '/')])]
	return paged && filters == 1
}

// noteListSec counts the section of a list (its path) seen to go to a
// third page (famHost.listSec).
func (h *famHost) noteListSec(path string) {
	switch sec := section(path); {
	case h.listSecs == 0:
		h.listSec, h.listSecs = sec, 1
	case h.listSecs == 1 && sec != h.listSec:
		h.listSec, h.listSecs = "", 2
	}
}

// pathPage returns the page number a path's last segment holds ("/c/a/3/",
// "/c/a/page-3/", "/c/a/page/3"), or 0.
func pathPage(path string) int64 {
	path = strings.TrimSuffix(path, "/")
	seg := path[strings.LastIndexByte(path, '/')+1:]
	if !numeric(seg) {
		if !pageSegment(seg) {
			return 0
		}
		seg = strings.TrimLeft(seg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_")
	}
	n, err := strconv.ParseInt(seg, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// unpaged returns a list's path without the page number written in it
// ("/shop/page/2/" and "/shop/page-2" are "/shop"), and the path's
// segments so cut.
func unpaged(path string) (string, []string) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	switch n := len(segs); {
	case n > 2 && numeric(segs[n-1]) && !hasDigit(segs[n-2]):
		segs = segs[:n-2] // "/shop/red/p/2/"
	case n > 1 && (numeric(segs[n-1]) || pageSegment(segs[n-1])):
		segs = segs[:n-1] // "/shop/red/2/", "/shop/red/page-2/"
	}
	return "/" + strings.Join(segs, "/"), segs
}

// catalogue reports whether a URL key is a page of the host's catalogue:
// its list of everything, or a list of it narrowed by one filter, first
// page or later, at a path whose lists are narrowed by two or more kinds
// of filter in the query (a shop's "/shop/?color=red", "/shop/page/2/"),
// on a host all of whose lists that go to a third page are in that
// path's section. There the catalogue and its one-value lists are how
// the items are listed, and they are followed to their ends even where
// the items were all found another way first (related products), as
// catalogueList follows filters written in the path. A host with lists
// in other sections too (a news site's sections, tags and authors beside
// a filter list "/articles/?category=…") has other ways to its items;
// a sort order, a view, or two filters at once are no catalogue's list.
func (f *Families) catalogue(h *famHost, key string) bool {
	if h.listSecs != 1 || h.facets == nil {
		return false
	}
	path, q, _ := strings.Cut(KeyRequestURI(key), "?")
	if section(path) != h.listSec {
		return false
	}
	list, _ := unpaged(path)
	if h.facets[hash(path)] < 2 && h.facets[hash(list)] < 2 && h.facets[hash(list+"/")] < 2 {
		return false
	}
	words := 0
	for part := range strings.SplitSeq(q, "&") {
		name, v, _ := strings.Cut(part, "=")
		switch {
		case part == "":
		case numeric(v):
			// A page number; a number of another name is a filter
			// too (a size).
			if r := h.pageNames[name]; r == nil || !r.paging() {
				return false
			}
		case !wordValue(v) || joined(v) != nil || h.sorts(name):
			return false
		default:
			words++
		}
	}
	if words > 1 {
		return false
	}
	if words == 0 || h.longList == nil {
		return true
	}
	// A list narrowed by a word that goes as far as the catalogue
	// (noteEnd) is sorted, or barely narrowed: no one-value list of it.
	base := path
	if pathPage(path) > 0 {
		base = list
	}
	var kept []string
	for part := range strings.SplitSeq(q, "&") {
		if name, v, _ := strings.Cut(part, "="); part != "" && !(numeric(v) && h.pageNames[name] != nil) {
			kept = append(kept, part)
		}
	}
	base += "?" + strings.Join(kept, "&") + "#"
	if h.longList[hash(base+"/")] {
		return false
	}
	for name := range h.pageNames {
		if h.longList[hash(base+name)] {
			return false
		}
	}
	return true
}

// listSegment reports whether a path segment may name a list below its
// directory: a file ("index.php", "post.html") is a page, not a filter;
// a number (a year, a month, an id) is a date or an item, and a word and
// a number ("page-2", "p3") a list's later page.
func listSegment(seg string) bool {
	return !strings.Contains(seg, ".") && hasLetter(seg) && !pageSegment(seg)
}

// pageSegment reports whether a path segment names a list's page: a
// word of up to ten letters and a number, perhaps joined by "-" or "_"
// ("page-2", "p3", "seite_4"). A filter with a number keeps another
// separator ("size:9").
func pageSegment(seg string) bool {
	i := 0
	for i < len(seg) && hasLetter(seg[i:i+1]) {
		i++
	}
	if i == 0 || i > 10 {
		return false
	}
	if i < len(seg) && (seg[i] == '-' || seg[i] == '_') {
		i++
	}
	return i < len(seg) && numeric(seg[i:])
}

// Directories are followed by hash: rootDir is "/", subDir a directory
// one segment deeper, and segKey a segment below a directory (for tops).
// A directory's hash is never 0, which marks an empty slot of under.
var rootDir = hash("/")

func subDir(dir uint64, seg string) uint64 { return (dir^hash(seg))*0x9e3779b97f4a7c15 | 1 }

// dirHash returns the directory of the path made of segs, empty
// segments ("//", a leading "/") aside.
func dirHash(segs []string) uint64 {
	dir := rootDir
	for _, seg := range segs {
		if seg != "" {
			dir = subDir(dir, seg)
		}
	}
	return dir
}
func segKey(dir uint64, seg string) uint64 { return (dir ^ hash(seg)) * 0xbf58476d1ce4e5b9 }

// maxTops bounds the paths followed per host for pathFilters.
const maxTops = 8192

// maxWidthPrefixes bounds the path prefixes followed per host for Wide.
const maxWidthPrefixes = 4096

// Discovered learns from a URL found on host (its key): the segments of
// its path, which make a position wide once WideAfter distinct values
// were seen there below the same prefix.
func (f *Families) Discovered(host, key string) {
	path, _, _ := strings.Cut(KeyRequestURI(key), "?")
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.mu.hosts.get(host)
	h.noteNums(key)
	h.noteValues(key)
	if h.width == nil {
		h.width = make(map[string]*widthSet)
	}
	if len(segs) < 2 {
		if segs[0] != "" {
			h.noteRoot(rootItems, segs[0])
		}
		return
	}
	f.noteUnder(h, segs)
	if top := strings.Split(strings.Trim(path, "/"), "/"); len(top) >= 2 {
		if h.tops == nil {
			h.tops = make(map[uint64]struct{})
		}
		d := dirHash(top[:len(top)-1])
		if k := segKey(d, top[len(top)-1]); len(h.tops) < maxTops {
			if _, ok := h.tops[k]; !ok {
				h.tops[k] = struct{}{}
				if h.kids == nil {
					h.kids = make(map[uint64]uint8)
				}
				if n := h.kids[d]; n < 2 && (n > 0 || len(h.kids) < maxTops) && listSegment(top[len(top)-1]) {
					h.kids[d] = n + 1
				}
			}
		}
	}
	h.noteRoot(rootDirs, segs[0])
	prefix := "/"
	for i, seg := range segs {
		if i > 0 && seg != "" {
			w := h.width[prefix]
			if w == nil {
				if len(h.width) >= maxWidthPrefixes {
					return
				}
				w = &widthSet{seen: make(map[uint64]struct{})}
				h.width[prefix] = w
			}
			if !w.wide {
				w.seen[hash(seg)] = struct{}{}
				if len(w.seen) >= f.cfg.WideAfter {
					w.wide, w.seen = true, nil
				}
			}
		}
		prefix += f.maskSeg(h, prefix, seg, i) + "/"
	}
}

// noteUnder records the directory each word segment of a path was
// found below.
func (f *Families) noteUnder(h *famHost, segs []string) {
	if h.under == nil {
		h.under = make(map[uint64]*[facetAfter]uint64)
	}
	dir := rootDir
	for _, seg := range segs {
		if seg == "" {
			continue
		}
		if !hasDigit(seg) {
			k := hash(seg)
			u := h.under[k]
			if u == nil && len(h.under) < maxUnder {
				u = new([facetAfter]uint64)
				h.under[k] = u
			}
			if u != nil {
				addDistinct(u[:], dir)
			}
		}
		dir = subDir(dir, seg)
	}
}

// addDistinct puts v, a hash, in the first free slot (0) of set
// unless set holds it already; a full set is left as it is.
func addDistinct(set []uint64, v uint64) {
	for i := range set {
		if set[i] == v {
			return
		}
		if set[i] == 0 {
			set[i] = v
			return
		}
	}
}

// tagAfter is how many distinct paths a parameter, at one value, is seen
// on before it is taken for a mark on links (Tagged); maxTags bounds the
// parameters followed per host.
const (
	tagAfter = 3
	maxTags  = 256
)

// Tagged records a link (its URL key) found on host to another path than
// its page's, and reports whether its query carries a parameter at a
// value that the host has put on links to tagAfter paths or more: a mark
// on the link ("?ref=related", "?source=rss", "?print=1"), not a part of
// the address of what it links — a list's filter narrows one path, and a
// page number (PageParam) numbers lists. Such a link is most often
// another form of a page the host also links plainly, so the crawler
// queues it after the plain links (visit.go): fetched second, it is seen
// to repeat the plain page, and once a few have, the mark's rewrite
// (Patterns) refuses the rest; fetched first, each costs a request before
// its plain form shows it for a copy.
func (f *Families) Tagged(host, key string) bool {
	path, q, ok := strings.Cut(KeyRequestURI(key), "?")
	if !ok || q == "" {
		return false
	}
	ph := hash(path)
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.mu.hosts.get(host)
	tagged := false
	for part := range strings.SplitSeq(q, "&") {
		name, v, _ := strings.Cut(part, "=")
		if r := h.pageNames[name]; v == "" || r != nil && r.paging() {
			continue
		}
		k := hash(part)
		t := h.tags[k]
		if t == nil {
			if len(h.tags) >= maxTags {
				continue
			}
			if h.tags == nil {
				h.tags = make(map[uint64]*[tagAfter]uint64)
			}
			t = new([tagAfter]uint64)
			h.tags[k] = t
		}
		addDistinct(t[:], ph)
		tagged = tagged || t[tagAfter-1] != 0
	}
	return tagged
}

// LinkClass is the package's LinkClass for a link of host found on a
// page reached by a link of class pageClass, with what the host has
// shown:
//
//   - a path below the page's is a refinement only when what it adds are
//     segments the host shows below several directories (a filter
//     written in the path, "/c/red/" → "/c/red/large/"; a view or an
//     action, "/wiki/a" → "/wiki/a/history"). A link from a list to an
//     item of its own ("/2021/02/" → "/2021/02/a-post/", "/docs/" →
//     "/docs/install/"), whose segment is below one directory only, is
//     another page;
//   - a number added that the host only ever shows as a year narrows a
//     list: a refinement, not a next page;
//   - on a refinement, a next page (a sorted list's page 2) and a path
//     below the page's directory (a history's revisions and diffs) are
//     refinements too.
func (f *Families) LinkClass(host, pageKey string, pageClass int, linkKey string) int {
	class := f.linkClass(host, pageKey, linkKey)
	if class == ClassNext {
		if f.noteLater(host, pageKey, linkKey, pageClass >= ClassRefine) {
			// Another id on the same path (a diff with the previous
			// revision, a cursor) is a sibling, not a list's later
			// page: judged by what it yields, not followed to an end.
			class = ClassRefine
		}
	}
	if class != ClassRefine && pageClass != ClassNext && f.viewLink(host, pageKey, linkKey, class) {
		return ClassRefine
	}
	if pageClass >= ClassRefine {
		switch dir := dirOf(pageKey); {
		case class == ClassNext:
			class = ClassRefine
		case class == ClassOther && dir != "/" && strings.HasPrefix(dirOf(linkKey), dir):
			class = ClassRefine
		}
	}
	return class
}

// viewLink reports whether a page is a view of an item written in the
// path ("/wiki/a/history", "/wiki/a/compare/3/4": a word the host shows
// below several directories, at a position where it shows few words,
// then numbers only) and the link another view of the same item
// ("/wiki/a/rev/3": a word, then numbers only; the first history's
// revisions come before the host has shown "rev" anywhere else) or the
// view's later page: what a page reached as a
// refinement links is judged as one (LinkClass), and so is what the same
// view links when another section linked it (a wiki's recent changes
// link its histories and diffs from the home page). A filter written in
// the path ("/c/red/") is not a view: its position shows many values; nor
// is a list's page number written in the path ("/tag/a/page/2/"), nor
// what a list's later page links.
func (f *Families) viewLink(host, pageKey, linkKey string, class int) bool {
	pp, _, _ := strings.Cut(KeyRequestURI(pageKey), "?")
	lp, _, _ := strings.Cut(KeyRequestURI(linkKey), "?")
	item, view := viewOf(pp)
	if view == "" {
		return false
	}
	var lview string
	if lp != pp {
		litem, v := viewOf(lp)
		if litem != item || class == ClassNext && v == view && pathPager(pp, item, view) && pathPager(lp, item, view) {
			// A list's pages written in the path
			// ("/category/a/page/2/" → "/category/a/page/3/").
			return false
		}
		lview = v
	}
	if strings.ContainsAny(lview, ".;") {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.mu.hosts.peek(host)
	return h != nil && f.shownView(h, item, view)
}

// shownView reports whether the host shows view as a view of item
// (viewOf): a word it shows below several directories (viewWord), at a
// position below the item where it shows few words.
func (f *Families) shownView(h *famHost, item, view string) bool {
	if !h.viewWord(view) {
		return false
	}
	prefix := "/"
	for i, seg := range strings.Split(strings.Trim(item, "/"), "/") {
		prefix += f.maskSeg(h, prefix, seg, i) + "/"
	}
	w := h.width[prefix]
	return w == nil || !w.wide
}

// Reclass returns the class a queued URL of host (its key), queued by a
// link of class class, is judged and charged as when it is fetched. A
// link from another section (ClassOther) to what the host has shown
// since to be a view of an item ("/ns/a/history", "/ns/a/diff/8120/8153":
// shownView, numbers after the view ids, not a list's page numbers) is
// a refinement, as the same view linked from within its section is: a
// wiki's recent changes link histories and diffs from its home page, and
// an item's first views are linked before the host has shown them as
// views. Other classes are kept.
func (f *Families) Reclass(host, key string, class int) int {
	if class != ClassOther {
		return class
	}
	path, _, _ := strings.Cut(KeyRequestURI(key), "?")
	item, view := viewOf(path)
	if view == "" {
		return class
	}
	for _, seg := range strings.Split(strings.Trim(path[len(item)+len(view):], "/"), "/") {
		if n, err := strconv.ParseInt(seg, 10, 64); seg != "" && (err != nil || n < minID) {
			return class
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if h := f.mu.hosts.peek(host); h != nil && f.shownView(h, item, view) {
		return ClassRefine
	}
	return class
}

// pathPager reports whether path is item, then view, then one number.
func pathPager(path, item, view string) bool {
	rest := strings.Trim(path[len(item)+len(view):], "/")
	return numeric(rest)
}

// viewOf splits a path into an item and the word of a view of it
// written after it, numbers aside: "/wiki/a/compare/3/4" → "/wiki/a/",
// "compare". It returns "" for a path of one segment, or one whose last
// segment but numbers has a digit ("/c/x/page-2/").
func viewOf(path string) (item, view string) {
	p := strings.TrimSuffix(path, "/")
	for {
		i := strings.LastIndexByte(p, '/')
		if i < 0 || !numeric(p[i+1:]) {
			break
		}
		p = p[:i]
	}
	i := strings.LastIndexByte(p, '/')
	if i <= 0 || hasDigit(p[i+1:]) {
		return "", ""
	}
	return p[:i+1], p[i+1:]
}

// wideRoot is how many distinct first segments a host must show for its
// root to hold items rather than sections ("/Some_page/history",
// "/a-post-name/amp/"): their views are then one family whatever the
// item (see Families.family).
const wideRoot = 64

// The root's width is followed apart for the first segments of deeper
// paths (rootDirs: "/Ns:Page/history", whose views are one family once
// it is wide) and for paths of one segment (rootItems: "/Ns:Page", whose
// query's views are): a shop whose products sit at the root
// ("/blue-shirt") has no more directories for that.
const (
	rootDirs  = ""
	rootItems = "?"
)

// noteRoot counts a path's first segment among the root's (which: rootDirs
// or rootItems), until that root is wide.
func (h *famHost) noteRoot(which, seg string) {
	w := h.width[which]
	if w != nil && w.wide {
		return
	}
	if w == nil {
		if len(h.width) >= maxWidthPrefixes {
			return
		}
		w = &widthSet{seen: make(map[uint64]struct{})}
		h.width[which] = w
	}
	w.seen[hash(seg)] = struct{}{}
	if len(w.seen) >= wideRoot {
		w.wide, w.seen = true, nil
	}
}

// rootWide reports whether the host's first path segments are items
// (which: rootDirs or rootItems).
func (h *famHost) rootWide(which string) bool {
	w := h.width[which]
	return w != nil && w.wide
}

// viewPath reports whether a path (a template's) ends in a view of an
// item: a view word, then numbers only.
func (h *famHost) viewPath(path string) bool {
	p := strings.TrimSuffix(path, "/")
	for strings.HasSuffix(p, "/*") {
		p = p[:len(p)-2]
	}
	i := strings.LastIndexByte(p, '/')
	return i > 0 && h.viewWord(p[i+1:])
}

// viewWord reports whether a path segment is a word the host shows below
// facetAfter directories or more: a view or an action written in the
// path ("history", "print"), not a file or an item's name.
func (h *famHost) viewWord(seg string) bool {
	if seg == "" || hasDigit(seg) || strings.ContainsAny(seg, ".;") || h.under == nil {
		return false
	}
	u := h.under[hash(seg)]
	return u != nil && u[facetAfter-1] != 0
}

// linkClass is LinkClass but for the page's own class.
func (f *Families) linkClass(host, pageKey, linkKey string) int {
	class := LinkClass(pageKey, linkKey)
	if class == ClassRefine {
		f.mu.Lock()
		if h := f.mu.hosts.peek(host); h != nil && h.resourceParam(pageKey, linkKey) {
			class = ClassOther
		}
		f.mu.Unlock()
	}
	if class == ClassOther {
		f.mu.Lock()
		defer f.mu.Unlock()
		if h := f.mu.hosts.peek(host); h != nil && (mayJoin(KeyRequestURI(linkKey)) && h.joinedKnown(linkKey) || h.belowKnown(linkKey) || h.searchResult(linkKey)) {
			return ClassRefine
		}
		return class
	}
	if class == ClassNext {
		// A number added or changed that is a year ("?sec=a" →
		// "?sec=a&year=2019") narrows the list by date: a filter.
		f.mu.Lock()
		defer f.mu.Unlock()
		if h := f.mu.hosts.peek(host); h != nil && h.nums != nil {
			_, pq, _ := strings.Cut(KeyRequestURI(pageKey), "?")
			_, lq, _ := strings.Cut(KeyRequestURI(linkKey), "?")
			for part := range strings.SplitSeq(lq, "&") {
				name, v, _ := strings.Cut(part, "=")
				if numeric(v) && !hasPart(pq, part) && h.yearParam(name) {
					return ClassRefine
				}
			}
		}
		return class
	}
	if class != ClassRefine {
		return class
	}
	pp, _, _ := strings.Cut(KeyRequestURI(pageKey), "?")
	lp, _, _ := strings.Cut(KeyRequestURI(linkKey), "?")
	if pp == lp || intersects(pp, lp) {
		return class
	}
	added := addedSegments(pp, lp)
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.mu.hosts.peek(host)
	for _, seg := range added {
		if hasDigit(seg) {
			continue
		}
		if h == nil || h.under == nil {
			return ClassOther
		}
		if u := h.under[hash(seg)]; u == nil || u[facetAfter-1] == 0 {
			return ClassOther
		}
	}
	return class
}

// addedSegments returns the segments of path link that are not those of
// path page it extends (extends).
func addedSegments(page, link string) []string {
	ps := strings.Split(strings.Trim(page, "/"), "/")
	ls := strings.Split(strings.Trim(link, "/"), "/")
	var added []string
	j := 0
	for _, seg := range ls {
		if j < len(ps) && seg == ps[j] {
			j++
			continue
		}
		added = append(added, seg)
	}
	return added
}

// maskSeg returns the segment as its family writes it: "*" for a segment
// with a digit, or one at a wide position below the root.
func (f *Families) maskSeg(h *famHost, prefix, seg string, i int) string {
	if hasDigit(seg) {
		return "*"
	}
	if i > 0 {
		if w := h.width[prefix]; w != nil && w.wide && seg != "" {
			return "*"
		}
	}
	if len(seg) > 64 {
		return seg[:64] + "…"
	}
	return seg
}

// Family returns the family of a URL (its key) of host.
func (f *Families) Family(host, key string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.family(f.mu.hosts.get(host), key)
}

func (f *Families) family(h *famHost, key string) string {
	tmpl := KeyTemplate(key)
	path, query, _ := strings.Cut(tmpl, "?")
	if h.width == nil {
		return tmpl
	}
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	var b strings.Builder
	prefix := "/"
	b.WriteByte('/')
	last := len(segs) - 1
	if last > 0 && segs[last] == "" {
		last--
	}
	// On a host whose root holds items, the views of every item are one
	// family: written in the path ("/Ns:Page/history") or in the query
	// of an item that is no file ("/Ns:Page?mode=history", but not
	// "/index.php?title=…").
	maskRoot := len(segs) >= 2 && h.rootWide(rootDirs) && h.viewPath(path) ||
		len(segs) == 1 && query != "" && segs[0] != "" && !strings.Contains(segs[0], ".") && h.rootWide(rootItems)
	for i, seg := range segs {
		m := f.maskSeg(h, prefix, seg, i)
		if i == 0 && maskRoot {
			m = "*"
		}
		prefix += m + "/"
		if i > 0 {
			b.WriteByte('/')
			if i < last {
				// A directory between the section and the last
				// segment: a namespace, a category, a filter. Its
				// pages' views and filters are one family whichever
				// directory they are in.
				m = "*"
			}
		}
		b.WriteString(m)
	}
	if query != "" {
		b.WriteByte('?')
		b.WriteString(query)
	}
	return b.String()
}

// Page is a fetched page as Families charged it, for Yielded.
type Page struct {
	Family  string
	host    string
	class   int
	stat    *famStat
	deep    *famStat
	filter  *famStat // the record of the list's filters, for a filtered list's later page
	hollow  bool
	yielded bool
}

// Fetched records a fetched page of host (its key), reached by a link of
// class class.
func (f *Families) Fetched(host, key string, class int) *Page {
	class = min(max(class, 0), ClassHinted)
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.mu.hosts.get(host)
	p := &Page{Family: f.family(h, key), host: host, class: class}
	if class == ClassNext {
		h.next++
	}
	if p.stat = f.stat(h, p.Family); p.stat != nil {
		p.stat.fetched[class]++
		p.stat.numbered = p.stat.numbered || Numbered(key)
		if class == ClassNext && !(p.stat.search && p.stat.faceted) {
			path, _, _ := strings.Cut(KeyRequestURI(key), "?")
			p.stat.search = p.stat.search || h.searchPath(path)
			list, _ := unpaged(path)
			p.stat.faceted = p.stat.faceted || h.facets[hash(path)] >= 2 || list != path && (h.facets[hash(list)] >= 2 || h.facets[hash(list+"/")] >= 2)
		}
		if p.stat.sig == "" {
			p.stat.sig = h.familySig(p.Family, key)
		}
		if class >= ClassRefine {
			h.noteSecRef(p.stat, 0)
		}
		f.noteBarren(h, p.stat)
	}
	if f.narrowed(h, key) {
		if p.deep = f.deepStat(h, key); p.deep != nil {
			p.deep.fetched[class]++
		}
	}
	if class == ClassNext || class == ClassRefine {
		// (A filtered list's later page found on the filtered list is
		// a refinement, as the filtered list itself is.)
		if p.filter = f.filterStat(h, key, false); p.filter != nil {
			p.filter.fetched[ClassNext]++
		}
	}
	return p
}

// filterStat returns the record of the lists narrowed by one parameter
// in the query that a later page (key) belongs to: the page's path, one
// parameter a word and the others, one at least, numbers — or nil for
// none (made when create is set and there is room, MaxFamilies paths a
// host).
func (f *Families) filterStat(h *famHost, key string, create bool) *famStat {
	if len(h.filters) == 0 && !create {
		return nil
	}
	if words, nums := paramKinds(key); words != 1 || nums == 0 {
		return nil
	}
	path, _, _ := strings.Cut(KeyRequestURI(key), "?")
	s := h.filters[path]
	if s == nil && create && len(h.filters) < f.cfg.MaxFamilies {
		if h.filters == nil {
			h.filters = make(map[string]*famStat)
		}
		s = &famStat{}
		h.filters[path] = s
	}
	return s
}

// filtersSpent reports whether the later pages of a list's filters in
// the query (filterStat), taken together whatever the parameter, are a
// taxonomy's that shows nothing new: manyLists lists or more, and one in
// coveredRatio of their later pages or fewer yielded. A list of
// everything filtered by section, tag, author or year is one more way to
// lists that other lists already led to; each parameter alone may have
// too few values to tell.
func (f *Families) filtersSpent(h *famHost, key string) bool {
	s := f.filterStat(h, key, false)
	return s != nil && s.filtersBarren()
}

// filtersBarren reports whether a record of a list's filters
// (filterStat) is spent: see filtersSpent.
func (s *famStat) filtersBarren() bool {
	return len(s.lists) >= manyLists && s.fetched[ClassNext] >= coveredRatio && s.yielded[ClassNext]*coveredRatio <= s.fetched[ClassNext]
}

// Uncounted returns a fetched page of host (its key), reached by a link
// of class class, as Fetched does but counted nowhere: a page that is
// evidence of nothing about its family (another form of a page fetched
// before under a URL that says so). What is recorded of it after is
// dropped.
func (f *Families) Uncounted(host, key string, class int) *Page {
	class = min(max(class, 0), ClassHinted)
	f.mu.Lock()
	defer f.mu.Unlock()
	fam := KeyTemplate(key)
	if h := f.mu.hosts.peek(host); h != nil {
		fam = f.family(h, key)
	}
	return &Page{Family: fam, host: host, class: class}
}

// Yielded records that a page fetched yielded new URLs elsewhere on the
// host or new text. Call it at most once a page.
func (f *Families) Yielded(p *Page) { f.yielded(p, false) }

// YieldedText records that a page fetched yielded new text: Yielded, and
// a later page that does is an item of a numbered sequence (an article
// among others by id), not a list's, for covered.
func (f *Families) YieldedText(p *Page) { f.yielded(p, true) }

func (f *Families) yielded(p *Page, text bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p.yielded {
		return
	}
	p.yielded = true
	h := f.mu.hosts.peek(p.host)
	if h != nil && p.class == ClassNext {
		if text {
			h.next--
		} else {
			h.nextY++
		}
	}
	if p.stat != nil {
		p.stat.yielded[p.class]++
		if h != nil && p.class >= ClassRefine {
			h.noteSecRef(p.stat, 1)
		}
		if h != nil && h.fams[p.Family] == p.stat {
			f.noteBarren(h, p.stat)
		}
		if p.hollow {
			p.stat.hollowY++
		}
	}
	if p.deep != nil {
		p.deep.yielded[p.class]++
	}
	if p.filter != nil {
		p.filter.yielded[ClassNext]++
	}
}

// Hollow records that a page reached from another section is a
// near-copy of another page of its family: a form around an item's name
// (add to cart, reply, quote), a page that only a title sets apart. A
// family reached from elsewhere is refused once HollowFree of its pages
// were hollow and yielded nothing.
//
// near says the page was shown a near-copy of another by the crawl's own
// test (3 bits): only those show the family's kind (HollowShown); a page
// alike only by ThinAlike's wider test counts, but shows nothing of the
// kind — a forum's member profiles, a few of which fall that near by
// chance, are real pages.
func (f *Families) Hollow(p *Page, near bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p.hollow || p.class != ClassOther || p.stat == nil {
		return
	}
	p.hollow = true
	p.stat.hollow++
	if near {
		p.stat.hollowNear++
	}
	if p.yielded {
		p.stat.hollowY++
	}
}

// HollowShown reports whether a page's family has shown hollowKnown
// hollow pages (near-copies of each other): its other pages without main
// text of their own are then hollow too, alike or not — a short page's
// print is thrown far by the one line that names its item.
func (f *Families) HollowShown(p *Page) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return p.stat != nil && p.stat.hollowNear >= hollowKnown
}

// ThinAlike reports whether a page without main text of its own, whose
// URL names an item by number, is within thinRadius bits (simhash) of one
// of the family's last such pages, and keeps its print among them. A form
// around an item's name ("Log in to add <name> to your wishlist"), a few
// words of its own in the host's chrome, moves a simhash too far from its
// kin for the crawl's near-copies (3 bits), but stays far nearer than two
// pages of different text (some 32 bits apart); short pages of their own,
// such as a forum's member profiles, fall between (the distances measured
// are in docs/benchmarks-history.md, §15c).
//
// links are the page's links elsewhere (to URLs of other templates), in
// ascending order, repeats allowed. own is the fewest of them that one of
// the family's last thin pages does not link (all of them for the first):
// a form around an item's name links that item, where a short page of its
// own lists things of its own — a member's topics and posts.
func (f *Families) ThinAlike(p *Page, sim uint64, links []uint64) (alike bool, own int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := p.stat
	if s == nil {
		return false, 0
	}
	if s.thin == nil {
		s.thin = new(thinRing)
	}
	r := s.thin
	var mine thinLinks
	distinct := 0
	for i, h := range links {
		if i == 0 || h != links[i-1] {
			distinct++
			mine.add(h)
		}
	}
	own = distinct
	for i := range min(r.n, len(r.sim)) {
		if bits.OnesCount64(r.sim[i]^sim) <= thinRadius {
			alike = true
		}
		lacks := 0
		for j, h := range links {
			if (j == 0 || h != links[j-1]) && !r.links[i].has(h) {
				lacks++
			}
		}
		own = min(own, lacks)
	}
	r.sim[r.n%len(r.sim)] = sim
	r.links[r.n%len(r.links)] = mine
	r.n++
	return alike, own
}

// thinRing holds the prints of a family's last thin pages (ThinAlike):
// their simhashes and their links elsewhere. n counts them all.
type thinRing struct {
	sim   [8]uint64
	links [8]thinLinks
	n     int
}

// thinLinks is a Bloom filter of a page's links elsewhere (1,024 bits,
// two hashes): with a hundred links, a link not among them is taken for
// one of them about one time in thirty, which only lowers the count of
// links a page has of its own.
type thinLinks [16]uint64

func (b *thinLinks) add(h uint64) {
	b[h>>60] |= 1 << (h >> 54 & 63)
	b[h>>44&15] |= 1 << (h >> 38 & 63)
}

func (b *thinLinks) has(h uint64) bool {
	return b[h>>60]&(1<<(h>>54&63)) != 0 && b[h>>44&15]&(1<<(h>>38&63)) != 0
}

// thinRadius: see ThinAlike.
const thinRadius = 8

// hollowKnown is how many hollow pages show a family's kind.
const hollowKnown = 3

// Repeats records that a page reached as a later page showed the page
// whose URL it adds a number to: not a list going on but the page again,
// with a form's number (an item's page linking itself with its id to a
// basket, "?add=87425"). Once NextFree of a family's have, and none
// yielded, its later pages are no longer fetched, whatever the host's
// other lists show.
func (f *Families) Repeats(p *Page) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p.stat != nil {
		p.stat.repeats++
	}
}

// Hinted records that a page named another URL as its canonical.
func (f *Families) Hinted(p *Page) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p.stat != nil {
		p.stat.hinted++
	}
}

func (f *Families) stat(h *famHost, fam string) *famStat {
	if h.fams == nil {
		h.fams = make(map[string]*famStat)
	}
	s := h.fams[fam]
	if s == nil {
		if len(h.fams) >= f.cfg.MaxFamilies {
			return nil
		}
		s = &famStat{sec: section(fam)}
		h.fams[fam] = s
	}
	return s
}

func (f *Families) deepStat(h *famHost, key string) *famStat {
	sec := section(KeyRequestURI(key))
	if h.deep == nil {
		h.deep = make(map[string]*famStat)
	}
	s := h.deep[sec]
	if s == nil {
		if len(h.deep) >= f.cfg.MaxFamilies {
			return nil
		}
		s = &famStat{}
		h.deep[sec] = s
	}
	return s
}

// spent reports whether a family's budget for pages of class class is
// spent, by its own record, free pages free.
func (f *Families) spent(h *famHost, s *famStat, class, free int) bool {
	extra := s.yielding() / f.cfg.PerYield
	switch class {
	case ClassOther:
		// Hollow pages must also be a third of those reached from
		// elsewhere: a family of real pages a few of which are alike
		// (a documentation's iterator types) keeps its in-links.
		hollow := s.hollow - s.hollowY
		return hollow >= f.cfg.HollowFree+extra && 3*hollow >= s.fetched[ClassOther]
	case ClassNext:
		// A list ends, and the site's few main lists are followed to
		// their ends; but the later pages of a taxonomy's many lists
		// (tags, authors, months) or of the site's search, once they
		// show nothing new, only list again what other lists led to;
		// and "later pages" that repeat their first are none.
		if s.repeats >= f.cfg.NextFree && s.yielded[ClassNext] == 0 {
			return true
		}
		if f.hintedAway(s) {
			return true
		}
		if len(s.lists) >= manyLists && s.fetched[ClassNext] >= coveredRatio && s.yielded[ClassNext]*coveredRatio <= s.fetched[ClassNext] {
			// A taxonomy whose many later pages showed next to
			// nothing new (one in coveredRatio, as for covered),
			// whatever the host's other lists do.
			return true
		}
		if len(s.lists) < manyLists && !s.search && !s.faceted || !h.covered() {
			return false
		}
		return s.yielded[ClassNext] == 0 && s.fetched[ClassNext] >= f.cfg.NextFree
	}
	_, other := s.wasted()
	if s.yielded[ClassOther] == 0 {
		// A family none of whose pages reached from elsewhere
		// yielded (a view linked before the host showed it as one)
		// counts them against its refinements.
		other += s.fetched[ClassOther]
	}
	if c := h.secRef[s.sec]; other >= 1 && s.yielding() == 0 && c != nil && c[1]*f.cfg.PerYield <= c[0] && c[0] >= f.cfg.SectionFree {
		// A section none of whose refinements ever yielded: a
		// family none of whose pages did stops at its first barren
		// refinement.
		return true
	}
	if c := h.sigRef[s.sig]; c != nil && (other >= f.cfg.TrialFree || c[1]*f.cfg.PerYield < c[0]) && s.refineYields() == 0 && isActionSig(s.sig) &&
		c[0]-c[1] >= f.cfg.MinFree+c[1]/f.cfg.PerYield {
		// The same view in other sections spent a family's budget
		// together: this section's, if it has not yielded, gets a
		// trial of its own, unless the view next to never yielded
		// anywhere (less than once in PerYield).
		return true
	}
	if c, a := h.sigRef[s.sig], h.views; c != nil && h.shownSig(s.sig) && s.refineYields() == 0 &&
		c[1] == 0 && c[0] >= f.cfg.TrialFree && a[0] >= 2*f.cfg.MinFree && a[1]*f.cfg.PerYield < a[0] {
		// A view that never yielded anywhere, on a host whose views,
		// all of them, next to never did (less than once in
		// PerYield, over twice MinFree pages): the view gets a trial
		// of its own across sections, not a budget.
		return true
	}
	return other >= free+extra
}

// hintedAway reports whether a family's pages, NextFree or more, all
// named another URL as canonical and none yielded: another form of pages
// fetched (a list sorted, its later pages), as the site says. Neither a
// list's end nor a filtered list's exemption (filtered) keeps it.
func (f *Families) hintedAway(s *famStat) bool {
	return s.yielding() == 0 && s.hinted >= f.cfg.NextFree && s.hinted >= s.total()
}

// spentDeep reports whether a section's narrowed lists have spent their
// budget, whatever the links that reached them.
func (f *Families) spentDeep(d *famStat) bool {
	y := d.yielding()
	return d.total()-y >= f.cfg.DeepFree+y/f.cfg.PerYield
}

// Spent reports whether a URL of host (its key), queued by a link of
// class class, is not to be fetched: its family, or for a URL of two or
// more word parameters its section's narrowed lists, have spent their
// budget. With count, the refusal is counted. It returns the pattern that
// spent it.
func (f *Families) Spent(host, key string, class int, count bool) (family string, spent bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.mu.hosts.peek(host)
	if h == nil {
		return "", false
	}
	fam := f.family(h, key)
	s := h.fams[fam]
	if s == nil && class >= ClassRefine && !strings.ContainsAny(fam, "?;") {
		// A view's family not yet tried in this section is judged by
		// the view's record in the others (sigRef).
		if sig := h.familySig(fam, key); sig != "" && h.sigRef[sig] != nil {
			if s = f.stat(h, fam); s != nil {
				s.sig = sig
			}
		}
	}
	var own, filters bool
	if s != nil {
		own = (f.hintedAway(s) || !h.filtered(s, key, class) && !(class == ClassNext && f.catalogueList(h, key))) && f.spent(h, s, class, f.free(h, s))
		// The later pages of a list's filters in the query, judged
		// together, are refused whatever the host's lists lead to.
		filters = !own && (class == ClassNext || class == ClassRefine) && f.filtersSpent(h, key) && !f.catalogueList(h, key)
	}
	if (own || filters) && !f.catalogue(h, key) {
		if count {
			s.refused++
			if !own {
				s.refusedF++
			}
			if class == ClassHinted {
				s.refusedH++
			}
			if class == ClassNext {
				// A later page refused shows nothing new: it counts
				// for covered as if fetched.
				h.next++
			}
			f.example(s, key)
		}
		return fam, true
	}
	if !f.narrowed(h, key) {
		return "", false
	}
	sec := section(KeyRequestURI(key))
	if d := h.deep[sec]; d != nil && f.spentDeep(d) {
		if count {
			d.refused++
			f.example(d, key)
			if s != nil {
				s.refused++
				if class == ClassHinted {
					s.refusedH++
				}
			}
		}
		return "/" + sec + "?…&…", true
	}
	return "", false
}

// RefusedHinted returns how many URLs of host linked rel="nofollow" were
// not fetched because their family, or their section's narrowed lists,
// had spent their budget.
func (f *Families) RefusedHinted(host string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.mu.hosts.peek(host)
	if h == nil {
		return 0
	}
	n := 0
	for _, s := range h.fams {
		n += s.refusedH
	}
	return n
}

func (f *Families) example(s *famStat, key string) {
	if len(s.examples) < maxExamples {
		uri := KeyRequestURI(key)
		if len(uri) > maxExampleLen {
			uri = uri[:maxExampleLen] + "…"
		}
		s.examples = append(s.examples, uri)
	}
}

// Family is a URL family of a host as the report gives it.
type Family struct {
	Pattern string
	// Fetched counts its pages fetched, by how they were reached: from
	// another section, as a next page, from within the section, or by a
	// link the site hinted against.
	Fetched [4]int
	// Yielded counts those that yielded new URLs elsewhere or new text.
	Yielded  [4]int
	Refused  int      // URLs of it (or refining it) not fetched
	Hinted   int      // pages whose canonical named another URL
	Hollow   int      // pages reached from elsewhere that were near-copies of each other
	Spent    bool     // its refinements are no longer fetched
	Examples []string // URLs refused
	// Deep says the pattern stands for a section's lists narrowed by two
	// or more parameters, whatever their names.
	Deep bool
	// LaterSpent says its later pages are no longer fetched: they span
	// Lists lists (counted up to 16), or are a Faceted list's or the
	// site's Search's, and none yielded on a host whose later pages show
	// nothing new (Covered), or, many lists, none of many yielded
	// whatever the host's.
	LaterSpent      bool
	Lists           int
	Faceted, Search bool
	Covered         bool
	// HintedAway says its pages all named another URL as canonical and
	// none yielded: no longer fetched, as the site says.
	HintedAway bool
	// FilterLists, FilterFetched and FilterYielded are set when its
	// later pages are a list's filters in the query, no longer fetched
	// (filtersSpent): the lists of the list's filters, whatever the
	// parameter, and their later pages fetched and yielding.
	FilterLists, FilterFetched, FilterYielded int
	// Repeats counts its pages reached as later pages that showed the
	// page they add a number to (Families.Repeats).
	Repeats int
	// View names the view its paths end in ("*/history") when the
	// view's families share a budget across sections, and ViewFetched
	// and ViewYielded count the view's pages fetched from within their
	// sections, and yielding, in all of them.
	View                     string
	ViewFetched, ViewYielded int
}

// Evidence says in words what the family's pages yielded.
func (x Family) Evidence() string {
	n, y := 0, 0
	for i := range x.Fetched {
		n += x.Fetched[i]
		y += x.Yielded[i]
	}
	inner := x.Fetched[1] + x.Fetched[2] + x.Fetched[3]
	innerY := x.Yielded[1] + x.Yielded[2] + x.Yielded[3]
	s := fmt.Sprintf("%d of %d pages fetched yielded new URLs or text; %d reached from within the section, of which %d yielded", y, n, inner, innerY)
	if x.Deep {
		s = fmt.Sprintf("lists narrowed by two or more parameters: %d of %d pages fetched yielded new URLs or text", y, n)
	}
	if x.Repeats > 0 {
		s += fmt.Sprintf("; %d reached as later pages showed the page they add a number to (a form on it, not a list)", x.Repeats)
	}
	if x.LaterSpent && x.Repeats == 0 && !x.HintedAway {
		what := fmt.Sprintf("%d lists or more", x.Lists)
		switch {
		case x.Lists >= manyLists:
		case x.Search:
			what = "the site's search"
		case x.Faceted:
			what = "a list with two or more kinds of filter"
		}
		where := "on a site whose later pages show nothing new"
		if !x.Covered {
			where = "whatever the site's other lists show"
		}
		yielded := "none"
		if y := x.Yielded[ClassNext]; y > 0 {
			yielded = fmt.Sprintf("only %d", y)
		}
		s += fmt.Sprintf("; later pages of %s, %s of %d yielded, %s", what, yielded, x.Fetched[ClassNext], where)
	}
	if x.FilterLists > 0 {
		s += fmt.Sprintf("; later pages of a list's filters in the query, %d lists or more over all its parameters, %d of %d yielded: they list again what other lists led to", x.FilterLists, x.FilterYielded, x.FilterFetched)
	}
	if x.Hollow > 0 {
		s += fmt.Sprintf("; %d reached from elsewhere were near-copies of each other", x.Hollow)
	}
	if x.View != "" && x.ViewFetched > inner {
		s += fmt.Sprintf("; the same view (%s) in all sections: %d of %d yielded", x.View, x.ViewYielded, x.ViewFetched)
	}
	switch {
	case x.HintedAway:
		s += fmt.Sprintf("; all %d named another URL as canonical (other forms of pages fetched, as the site says)", x.Hinted)
	case x.Hinted > 0:
		s += fmt.Sprintf("; %d named another URL as canonical", x.Hinted)
	}
	return s
}

// Wasteful returns the families of host (a urlnorm.HostKey) worth
// reporting: those with URLs refused, or with at least MinFree pages from
// within their section that yielded nothing; most refused first.
func (f *Families) Wasteful(host string) []Family {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.mu.hosts.peek(host)
	if h == nil {
		return nil
	}
	var out []Family
	for name, s := range h.fams {
		_, other := s.wasted()
		if s.refused == 0 && other < f.cfg.MinFree && s.hollow-s.hollowY < f.cfg.HollowFree {
			continue
		}
		x := Family{Pattern: name, Fetched: s.fetched, Yielded: s.yielded, Refused: s.refused,
			Hinted: s.hinted, Hollow: s.hollow, Spent: f.spent(h, s, ClassRefine, f.free(h, s)) || f.spent(h, s, ClassOther, 0),
			LaterSpent: f.spent(h, s, ClassNext, 0), Lists: len(s.lists), Faceted: s.faceted, Search: s.search, Repeats: s.repeats,
			Covered: h.covered(), HintedAway: f.hintedAway(s),
			Examples: slices.Clone(s.examples)}
		if c := h.sigRef[s.sig]; c != nil && isActionSig(s.sig) {
			x.View, x.ViewFetched, x.ViewYielded = s.sig, c[0], c[1]
		}
		if path, _, ok := strings.Cut(name, "?"); ok {
			if fs := h.filters[path]; fs != nil && s.refusedF > 0 {
				x.FilterLists, x.FilterFetched, x.FilterYielded = len(fs.lists), fs.fetched[ClassNext], fs.yielded[ClassNext]
			}
		}
		out = append(out, x)
	}
	for sec, s := range h.deep {
		if s.refused == 0 && !f.spentDeep(s) {
			continue
		}
		out = append(out, Family{Pattern: "/" + sec + "?…&…", Fetched: s.fetched, Yielded: s.yielded, Refused: s.refused,
			Spent: f.spentDeep(s), Examples: slices.Clone(s.examples), Deep: true})
	}
	slices.SortFunc(out, func(a, b Family) int {
		if a.Refused != b.Refused {
			return b.Refused - a.Refused
		}
		return strings.Compare(a.Pattern, b.Pattern)
	})
	return out
}

// Hosts returns the hosts with a family worth reporting, sorted.
func (f *Families) Hosts() []string {
	f.mu.Lock()
	var hosts []string
	f.mu.hosts.each(func(host string, h *famHost) {
		if len(h.fams) > 0 {
			hosts = append(hosts, host)
		}
	})
	f.mu.Unlock()
	var out []string
	for _, h := range hosts {
		if len(f.Wasteful(h)) > 0 {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}
