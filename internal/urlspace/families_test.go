package urlspace

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/gentlecrawl/gentlecrawl/internal/simhash"
)

func TestLinkClass(t *testing.T) {
	for _, c := range []struct {
		page, link string
		want       int
	}{
		{"http://h/news?section=a", "http://h/article/12", ClassOther},
		{"http://h/", "http://h/news?section=a", ClassOther},
		{"http://h/news?section=a", "http://h/news?page=2&section=a", ClassNext},
		{"http://h/news?page=2&section=a", "http://h/news?page=3&section=a", ClassNext},
		{"http://h/tag/x/", "http://h/tag/x/page/2/", ClassNext},
		{"http://h/category/culture/", "http://h/category/culture/page-2", ClassNext},
		{"http://h/viewtopic.php?t=5", "http://h/viewtopic.php?start=20&t=5", ClassNext},
		{"http://h/news?section=a", "http://h/news?section=a&tag=x", ClassRefine},
		{"http://h/news?section=a", "http://h/news?section=b", ClassRefine},
		{"http://h/news?page=2&section=a", "http://h/news?page=2&section=a&sort=old", ClassRefine},
		{"http://h/tag/x", "http://h/tag/x+y", ClassRefine},
		// A flag or a first page named is not a next page.
		{"http://h/viewtopic.php?t=5", "http://h/viewtopic.php?print=1&t=5", ClassRefine},
		{"http://h/viewforum.php?f=2", "http://h/viewforum.php?f=2&start=0", ClassRefine},
		{"http://h/shoe-p77.html", "http://h/shoe-p77.html?product_id=77", ClassRefine},
		{"http://h/shoe-p77.html", "http://h/shoe-p77.html?page=2", ClassNext},
		// A page's link to itself is not its next page.
		{"http://h/item/77/a?buy=77", "http://h/item/77/a?buy=77", ClassRefine},
		{"http://h/news?page=2", "http://h/news?page=2", ClassRefine},
		{"http://h/doku.php?id=a", "http://h/doku.php?do=revisions&id=a", ClassRefine},
		{"http://h/tag/x+y", "http://h/tag/x+y+z", ClassRefine},
		{"http://h/tag/x", "http://h/tag/y+x", ClassRefine},
		// Another path in the same section is another resource.
		{"http://h/std/index.html", "http://h/std/vec/index.html", ClassOther},
		{"http://h/std/all.html", "http://h/std/vec/struct.Drain.html", ClassOther},
		{"http://h/wiki/Main_Page", "http://h/wiki/Help", ClassOther},
		{"http://h/tag/x", "http://h/tag/xy", ClassOther},
		{"http://h/tag/x+y", "http://h/tag/x", ClassOther},
		{"http://h/wiki/a", "http://h/wiki/a/history", ClassRefine},
		{"http://h/c/red/", "http://h/c/red/large/", ClassRefine},
		{"http://h/wiki/a/history", "http://h/wiki/a/rev/5", ClassOther},
		{"http://h/", "http://h/about", ClassOther},
		{"http://h/c/style:slim/", "http://h/c/material:wool/style:slim/", ClassRefine},
		{"http://h/c/style:slim/", "http://h/c/material:wool/", ClassOther},
		{"http://h/std/vec/index.html", "http://h/std/vec/sub/index.html", ClassOther},
	} {
		if got := LinkClass(c.page, c.link); got != c.want {
			t.Errorf("LinkClass(%s, %s) = %d, want %d", c.page, c.link, got, c.want)
		}
	}
}

// fetch charges n pages of a pattern, yielding or not, as Fetched and
// Yielded do for a crawl.
func fetchPages(f *Families, host string, keys []string, class int, yield bool) {
	for _, k := range keys {
		p := f.Fetched(host, k, class)
		if yield {
			f.Yielded(p)
		}
	}
}

// wastefulFamily returns f's family of host named pattern among those
// Wasteful reports, or nil.
func wastefulFamily(f *Families, host, pattern string) *Family {
	for _, x := range f.Wasteful(host) {
		if x.Pattern == pattern {
			return &x
		}
	}
	return nil
}

func keys(format string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i)
	}
	return out
}

func TestFamiliesBudget(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	// Pages reached from elsewhere are never refused.
	fetchPages(f, host, keys("http://h/news?section=s%d", 20), ClassOther, false)
	if _, spent := f.Spent(host, "http://h/news?section=zz", ClassOther, true); spent {
		t.Error("a URL found from another section was refused")
	}
	// A single filter (one word parameter) gets MinFree pages that yield
	// nothing, then is spent.
	fetchPages(f, host, keys("http://h/news?sort=o%d", 5), ClassRefine, false)
	if _, spent := f.Spent(host, "http://h/news?sort=x", ClassRefine, false); spent {
		t.Error("spent after 5 pages, want 6 free")
	}
	fetchPages(f, host, []string{"http://h/news?sort=o5"}, ClassRefine, false)
	if fam, spent := f.Spent(host, "http://h/news?sort=x", ClassRefine, true); !spent || fam != "/news?sort" {
		t.Errorf("Spent = %q, %v after 6 pages that yielded nothing", fam, spent)
	}
	// Two word parameters share their section's budget, whatever their
	// names: four combinations of any kind spend it for all.
	fetchPages(f, host, []string{"http://h/news?section=a&tag=x", "http://h/news?author=b&section=a",
		"http://h/news?section=a&year=y", "http://h/news?section=c&tag=z"}, ClassRefine, false)
	for _, k := range []string{"http://h/news?section=d&tag=w", "http://h/news?author=q&tag=w", "http://h/news?section=a&sort=old&tag=x"} {
		if fam, spent := f.Spent(host, k, ClassRefine, true); !spent || fam != "/news?…&…" {
			t.Errorf("%s: Spent = %q, %v; want the section's narrowed lists spent", k, fam, spent)
		}
	}
	// Another section's combinations are not.
	if _, spent := f.Spent(host, "http://h/shop?color=red&size=l", ClassRefine, false); spent {
		t.Error("another section's narrowed lists are spent")
	}
	// Next pages have their own, larger allowance, and are not spent by
	// the combinations.
	if _, spent := f.Spent(host, "http://h/news?page=2&section=a", ClassNext, false); spent {
		t.Error("a next page was refused")
	}
	fam := f.Wasteful(host)
	if len(fam) != 3 || fam[0].Pattern != "/news?…&…" || fam[0].Refused != 3 || !fam[0].Spent || !fam[0].Deep {
		t.Errorf("Wasteful = %+v", fam)
	}
}

func TestFamiliesYieldBuysBudget(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{MinFree: 2, PerYield: 4})
	k := keys("http://h/wiki?id=p%d", 200)
	fetchPages(f, host, k[:2], ClassRefine, false)
	if _, spent := f.Spent(host, k[2], ClassRefine, false); !spent {
		t.Fatal("not spent after MinFree pages that yielded nothing")
	}
	// A family that starts yielding again earns its budget back: 8 pages
	// that yielded buy 2 more that do not.
	fetchPages(f, host, k[2:10], ClassRefine, true)
	if _, spent := f.Spent(host, k[10], ClassRefine, false); spent {
		t.Error("spent although 8 pages yielded")
	}
	fetchPages(f, host, k[10:12], ClassRefine, false)
	if _, spent := f.Spent(host, k[12], ClassRefine, false); !spent {
		t.Error("not spent after the budget the yield bought")
	}
}

func TestFamiliesWideSegments(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{WideAfter: 4})
	if got := f.Family(host, "http://h/tag/alpha+beta"); got != "/tag/alpha+beta" {
		t.Errorf("before any tags are seen: %q", got)
	}
	for _, tag := range []string{"alpha", "beta", "gamma", "delta"} {
		f.Discovered(host, "http://h/tag/"+tag)
	}
	for _, c := range []struct{ key, want string }{
		{"http://h/tag/alpha+beta", "/tag/*"},
		{"http://h/tag/zeta/", "/tag/*/"},
		{"http://h/about/team", "/about/team"},
		{"http://h/2024/05/slug-words/?replytocom=3", "/*/*/slug-words/?replytocom"},
		// Directories between the section and the last segment are one.
		{"http://h/wiki/ns-one/page/history", "/wiki/*/*/history"},
		{"http://h/c/red/large/", "/c/*/large/"},
	} {
		if got := f.Family(host, c.key); got != c.want {
			t.Errorf("Family(%s) = %q, want %q", c.key, got, c.want)
		}
	}
	// The root is never wide: sections stay apart.
	for _, s := range []string{"a", "b", "c", "d", "e"} {
		f.Discovered(host, "http://h/"+s+"/x")
	}
	if got := f.Family(host, "http://h/news/x"); got != "/news/x" {
		t.Errorf("Family = %q: the root's segments were masked", got)
	}
}

// TestFamiliesBounds: the families followed per host and the path
// prefixes learned are bounded; past the bound nothing is refused.
func TestFamiliesBounds(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{MaxFamilies: 4, MinFree: 1})
	for i := range 10 {
		fetchPages(f, host, []string{fmt.Sprintf("http://h/p%c?x=a", 'a'+i)}, ClassRefine, false)
	}
	h := f.mu.hosts.peek(host)
	if len(h.fams) != 4 {
		t.Errorf("%d families followed, want 4", len(h.fams))
	}
	if _, spent := f.Spent(host, "http://h/pj?x=b", ClassRefine, false); spent {
		t.Error("a family beyond the bound was refused")
	}
	for i := range maxWidthPrefixes + 10 {
		f.Discovered(host, fmt.Sprintf("http://h/a/p%c%d/x", 'a'+i%26, i))
	}
	if len(h.width) > maxWidthPrefixes {
		t.Errorf("%d prefixes followed, want at most %d", len(h.width), maxWidthPrefixes)
	}
	// A host with endless segments and numeric parameters: the segments
	// followed for facets and path filters, and the numeric parameters,
	// stay within their bounds.
	letters := func(i int) string { // a name without digits for each i
		b := []byte{'w'}
		for ; i > 0; i /= 26 {
			b = append(b, byte('a'+i%26))
		}
		return string(b)
	}
	for i := range max(maxUnder, maxTops) + 100 {
		f.Discovered(host, fmt.Sprintf("http://h/s/%s/%s?n%d=%d", letters(i), letters(i), i%(maxNums+50), i))
	}
	if len(h.under) > maxUnder || len(h.tops) > maxTops || len(h.nums) > maxNums {
		t.Errorf("%d segments, %d paths, %d numeric parameters followed; bounds %d, %d, %d",
			len(h.under), len(h.tops), len(h.nums), maxUnder, maxTops, maxNums)
	}
	if len(h.under) < maxUnder || len(h.tops) < maxTops || len(h.nums) < maxNums {
		t.Errorf("the bounds were not reached: %d segments, %d paths, %d numeric parameters", len(h.under), len(h.tops), len(h.nums))
	}
	if len(h.kids) != maxTops {
		t.Errorf("%d directories' lists counted, want %d", len(h.kids), maxTops)
	}
}

func TestDefaults(t *testing.T) {
	const host = "http://h"
	d := NewDefaults(DefaultsConfig{})
	u := func(s string) *url.URL {
		v, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// start=0 after the page without it: one pair teaches it.
	d.Observe(host, "http://h/viewforum.php?f=2", "A")
	d.Observe(host, "http://h/viewforum.php?f=2&start=0", "A")
	if s, ok := d.Strip(host, u("http://h/viewforum.php?f=9&start=0")); !ok || s.String() != "http://h/viewforum.php?f=9" {
		t.Errorf("Strip = %v, %v", s, ok)
	}
	// The other order: the variant first.
	d.Observe(host, "http://h/list?order=date&tag=x", "B")
	d.Observe(host, "http://h/list?tag=x", "B")
	if _, ok := d.Strip(host, u("http://h/list?order=date&tag=y")); ok {
		t.Error("a word value learned from one pair")
	}
	d.Observe(host, "http://h/list?order=date&tag=y", "C")
	d.Observe(host, "http://h/list?tag=y", "C")
	if s, ok := d.Strip(host, u("http://h/list?order=date&tag=z")); !ok || s.RawQuery != "tag=z" {
		t.Errorf("Strip = %v, %v after two pairs", s, ok)
	}
	// A counter-example withdraws it: start=20 is not a default, and
	// page=1 with other content than the page without it is not either.
	d.Observe(host, "http://h/viewtopic.php?t=5", "D")
	d.Observe(host, "http://h/viewtopic.php?start=20&t=5", "E")
	if _, ok := d.Strip(host, u("http://h/viewtopic.php?start=20&t=5")); ok {
		t.Error("start=20 stripped")
	}
	d.Observe(host, "http://h/catalog?c=a", "F")
	d.Observe(host, "http://h/catalog?c=a&page=1", "F")
	d.Observe(host, "http://h/catalog?c=b", "G")
	d.Observe(host, "http://h/catalog?c=b&page=1", "H")
	if _, ok := d.Strip(host, u("http://h/catalog?c=d&page=1")); ok {
		t.Error("page=1 stripped after a counter-example")
	}
	if got := d.Learned(host); len(got) != 2 || got["/viewforum.php?start=0"] != 1 || got["/list?order=date"] != 2 {
		t.Errorf("Learned = %v", got)
	}
	// Another path of the host did not learn it.
	if _, ok := d.Strip(host, u("http://h/search?start=0&q=x")); ok {
		t.Error("stripped on another path")
	}
	// Another host learned nothing.
	if _, ok := d.Strip("http://other", u("http://other/viewforum.php?f=2&start=0")); ok {
		t.Error("stripped on another host")
	}
	// Taught on three paths and withdrawn on none, a default holds on
	// every path of the host; withdrawn on one, on none but those that
	// taught it.
	for _, sec := range []string{"world", "books", "tech"} {
		d.Observe(host, "http://h/sections/"+sec, "S"+sec)
		d.Observe(host, "http://h/sections/"+sec+"?from=0", "S"+sec)
	}
	if s, ok := d.Strip(host, u("http://h/tags/x?from=0")); !ok || s.String() != "http://h/tags/x" {
		t.Errorf("Strip on another path after three = %v, %v", s, ok)
	}
	d.Observe(host, "http://h/authors/a", "A1")
	d.Observe(host, "http://h/authors/a?from=0", "A2")
	if _, ok := d.Strip(host, u("http://h/tags/x?from=0")); ok {
		t.Error("stripped host-wide after a counter-example")
	}
	if _, ok := d.Strip(host, u("http://h/sections/world?from=0")); !ok {
		t.Error("a path that taught it lost it")
	}
	if got := d.Learned(host); len(got) != 5 {
		t.Errorf("Learned = %v, want the two before and the three paths", got)
	}
}

// TestDefaultsFetchedWith: a page fetched with a default value written
// out (?offset=0) stands for the page without it once the default is
// learned — not before, not for a value that matters, not on another
// path or host.
func TestDefaultsFetchedWith(t *testing.T) {
	const host = "http://h"
	d := NewDefaults(DefaultsConfig{})
	d.Observe(host, "http://h/thread.php?offset=0&t=5", "A")
	d.Observe(host, "http://h/thread.php?offset=0&t=6", "B")
	d.Observe(host, "http://h/thread.php?offset=25&t=8", "C")
	d.Observe(host, "http://h/list.php?offset=0&s=1", "D")
	if d.FetchedWithDefault(host, "http://h/thread.php?t=6") {
		t.Error("before any pair: offset=0 taken for a default")
	}
	d.Observe(host, "http://h/thread.php?t=5", "A") // the pair that teaches it
	for key, want := range map[string]bool{
		"http://h/thread.php?t=6": true,
		"http://h/thread.php?t=7": false, // not fetched in any form
		"http://h/thread.php?t=8": false, // offset=25 is no default
		"http://h/list.php?s=1":   false, // another path learned nothing
	} {
		if got := d.FetchedWithDefault(host, key); got != want {
			t.Errorf("FetchedWithDefault(%s) = %v, want %v", key, got, want)
		}
	}
	if d.FetchedWithDefault("http://other", "http://h/thread.php?t=6") {
		t.Error("another host")
	}
	// A word learned from two pairs (a highlight) makes a view: the
	// page's own URL is still fetched.
	d.Observe(host, "http://h/thread.php?hl=x&t=1", "H1")
	d.Observe(host, "http://h/thread.php?t=1", "H1")
	d.Observe(host, "http://h/thread.php?hl=x&t=2", "H2")
	d.Observe(host, "http://h/thread.php?t=2", "H2")
	d.Observe(host, "http://h/thread.php?hl=x&t=3", "H3")
	if _, ok := d.Strip(host, mustParse(t, "http://h/thread.php?hl=x&t=4")); !ok {
		t.Error("hl=x not learned from two pairs")
	}
	if d.FetchedWithDefault(host, "http://h/thread.php?t=3") {
		t.Error("a page fetched highlighted stood for its own URL")
	}
	// A counter-example withdraws it.
	d.Observe(host, "http://h/thread.php?offset=0&t=9", "E")
	d.Observe(host, "http://h/thread.php?t=9", "F")
	if d.FetchedWithDefault(host, "http://h/thread.php?t=6") {
		t.Error("after a counter-example")
	}
}

// TestDefaultsBounded: past MaxPages the oldest pages are forgotten, and
// the maps stay within the bound.
func TestDefaultsBounded(t *testing.T) {
	d := NewDefaults(DefaultsConfig{MaxPages: 100})
	for i := range 1000 {
		d.Observe("http://h", fmt.Sprintf("http://h/p?a=%d&b=x", i), fmt.Sprint(i))
	}
	if d.mu.content.Len() > 100 || d.mu.variants.Len() > 100 {
		t.Errorf("content %d, variants %d; want at most 100 each", d.mu.content.Len(), d.mu.variants.Len())
	}
	// The first pages are forgotten: their variant teaches nothing.
	d.Observe("http://h", "http://h/p?a=0&b=x&c=1", "0")
	if d.Any() {
		t.Error("learned from a forgotten page")
	}
	// Pages met now still teach, the page with the parameter first.
	d.Observe("http://h", "http://h/q?s=0&t=1", "Q")
	d.Observe("http://h", "http://h/q?t=1", "Q")
	if !d.Any() {
		t.Error("a pair met after the bound was reached taught nothing")
	}
}

// TestFamiliesViewLinks: a view of an item written in the path, reached
// from another section, links the item's other views and its own later
// pages as refinements; a list's pages written in the path, a filter
// written in the path and a word the host has not shown as a view are
// not views.
func TestFamiliesViewLinks(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	for _, p := range []string{"one", "two", "three"} {
		f.Discovered(host, "http://h/wiki/ns/"+p)
		f.Discovered(host, "http://h/wiki/ns/"+p+"/history")
		f.Discovered(host, "http://h/wiki/ns/"+p+"/compare/1/2")
		f.Discovered(host, "http://h/tag/"+p+"/page/2/")
	}
	for i := range 10 {
		// A filter written in the path: many values below one
		// directory.
		f.Discovered(host, fmt.Sprintf("http://h/c/shoes/v%c/", 'a'+i))
		f.Discovered(host, fmt.Sprintf("http://h/c/bags/v%c/", 'a'+i))
		f.Discovered(host, fmt.Sprintf("http://h/c/hats/v%c/", 'a'+i))
	}
	for _, c := range []struct {
		page, link string
		pageClass  int
		want       int
	}{
		// Another view of the same item, the view's later page, another
		// diff: refinements, whatever linked the view.
		{"http://h/wiki/ns/a/history", "http://h/wiki/ns/a/rev/12", ClassOther, ClassRefine},
		{"http://h/wiki/ns/a/history", "http://h/wiki/ns/a/history?pg=2", ClassOther, ClassRefine},
		{"http://h/wiki/ns/a/compare/3/4", "http://h/wiki/ns/a/compare/2/3", ClassOther, ClassRefine},
		{"http://h/wiki/ns/a/compare/3/4", "http://h/wiki/ns/a/edit", ClassOther, ClassRefine},
		// The item itself and another item are other pages.
		{"http://h/wiki/ns/a/history", "http://h/wiki/ns/a", ClassOther, ClassOther},
		{"http://h/wiki/ns/a/history", "http://h/wiki/ns/b/history", ClassOther, ClassOther},
		// A word not shown below several items is not a view.
		{"http://h/wiki/ns/a/talk", "http://h/wiki/ns/a/rev/12", ClassOther, ClassOther},
		// A list's pages written in the path stay its later pages.
		{"http://h/tag/x/page/2/", "http://h/tag/x/page/3/", ClassOther, ClassNext},
		{"http://h/tag/x/", "http://h/tag/x/page/2/", ClassOther, ClassNext},
		// What a list's later page links is not a view's.
		{"http://h/wiki/ns/a/history?pg=2", "http://h/wiki/ns/a/rev/12", ClassNext, ClassOther},
		// A filter written in the path is not a view: its siblings are
		// other lists.
		{"http://h/c/shoes/va", "http://h/c/shoes/vb", ClassOther, ClassOther},
	} {
		if got := f.LinkClass(host, c.page, c.pageClass, c.link); got != c.want {
			t.Errorf("LinkClass(%s, class %d, %s) = %d, want %d", c.page, c.pageClass, c.link, got, c.want)
		}
	}
}

// TestFamiliesRootItems: on a host whose first path segments are items
// (wiki pages or posts at the root), an item's views are one family
// whatever the item; a host of a few sections keeps a family per section.
func TestFamiliesRootItems(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	for i := range wideRoot {
		f.Discovered(host, fmt.Sprintf("http://h/Page_%c%c", 'a'+i%26, 'a'+i/26))
		f.Discovered(host, fmt.Sprintf("http://h/Page_%c%c/history", 'a'+i%26, 'a'+i/26))
		f.Discovered(host, fmt.Sprintf("http://h/Page_%c%c/diff/1/2", 'a'+i%26, 'a'+i/26))
	}
	if a, b := f.Family(host, "http://h/Some_page/history"), f.Family(host, "http://h/Other_page/history"); a != b || a != "/*/history" {
		t.Errorf("views of root items: families %q and %q, want one", a, b)
	}
	if got := f.Family(host, "http://h/Some_page/diff/3/4"); got != f.Family(host, "http://h/Other_page/diff/5/6") || !strings.HasPrefix(got, "/*/") {
		t.Errorf("a diff of a root item: family %q", got)
	}
	if got := f.Family(host, "http://h/Some_page"); got != "/Some_page" {
		t.Errorf("a root item: family %q, want its own", got)
	}
	// Views in the query of items that are the root's only segment
	// ("/Ns:Page?mode=history") are one family once the root shows
	// enough items, whatever linked them; a script at the root is no
	// item ("/index.php?title=…").
	q := NewFamilies(FamilyConfig{})
	for i := range wideRoot {
		item := fmt.Sprintf("http://h/Ns:Page_%c%c", 'a'+i%26, 'a'+i/26)
		if a, b := q.Family(host, item+"?mode=history"), q.Family(host, "http://h/Ns:Other?mode=history"); a == b {
			t.Fatalf("after %d root items, one family %q for the views of two", i, a)
		}
		q.Discovered(host, item)
	}
	if a, b := q.Family(host, "http://h/Ns:Some?mode=history"), q.Family(host, "http://h/Ns:Other?mode=history"); a != b || a != "/*?mode" {
		t.Errorf("views in the query of root items: families %q and %q, want one", a, b)
	}
	if got := q.Family(host, "http://h/index.php?title=A"); got != "/index.php?title" {
		t.Errorf("a script at the root: family %q", got)
	}
	// Items at the root ("/blue-shirt") do not make the root's
	// directories items: a shop's filters below its catalogue keep it.
	for _, p := range []string{"a", "b", "c", "d"} {
		q.Discovered(host, "http://h/all/"+p+"/slim/")
	}
	if got := q.Family(host, "http://h/all/e/slim/"); strings.HasPrefix(got, "/*") {
		t.Errorf("a filter below a catalogue on a host of root items: family %q", got)
	}
	g := NewFamilies(FamilyConfig{})
	for _, sec := range []string{"news", "sport", "money"} {
		for i := range 3 {
			g.Discovered(host, fmt.Sprintf("http://h/%s/p%c/history", sec, 'a'+i))
		}
	}
	if a, b := g.Family(host, "http://h/news/x/history"), g.Family(host, "http://h/sport/x/history"); a == b {
		t.Errorf("views in two sections of a few: one family %q", a)
	}
}

// TestFamiliesSelfLink: a page that links itself (an action's form that
// posts to its own URL) shows no later page: a product's "?buy=ID" pages
// on a host whose lists' later pages lead somewhere are a family of
// refinements, refused once barren, not later pages followed to their
// ends; nor is "buy" a page number.
func TestFamiliesSelfLink(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	// The host's lists' later pages lead somewhere.
	for n := 2; n <= coveredAfter+1; n++ {
		list := fmt.Sprintf("http://h/shop/?from=%d", 30*(n-1))
		f.LinkClass(host, "http://h/shop/", ClassOther, list)
		fetchPages(f, host, []string{list}, ClassNext, true)
	}
	var refused int
	for i := range 3 * coveredAfter {
		item := fmt.Sprintf("http://h/item/%d/thing-%c", 100+i, 'a'+i%26)
		buy := fmt.Sprintf("%s?buy=%d", item, 100+i)
		if got := f.LinkClass(host, item, ClassOther, buy); got != ClassRefine {
			t.Fatalf("LinkClass(%s, %s) = %d, want a refinement", item, buy, got)
		}
		if _, spent := f.Spent(host, buy, ClassRefine, true); spent {
			refused++
			continue
		}
		f.LinkClass(host, buy, ClassRefine, buy)
		fetchPages(f, host, []string{buy}, ClassRefine, false)
	}
	if refused == 0 {
		t.Error("barren actions on items that link themselves were never refused")
	}
	if f.PageParam(host, "buy") {
		t.Error("an action's item number taken for a page number")
	}
	if !f.PageParam(host, "from") {
		t.Error("an offset of later pages not taken for a page number")
	}
}

// TestFamiliesRepeats: an item's page that links itself with its id
// (?add=42, to a basket) is taken for a list with a later page; the
// "later pages" that show their item again stop after NextFree on a host
// whose later pages lead somewhere (so never covered), and a family whose
// later pages yield keeps them.
func TestFamiliesRepeats(t *testing.T) {
	const host = "http://h"
	for _, yields := range []bool{false, true} {
		f := NewFamilies(FamilyConfig{})
		for n := 2; n <= coveredAfter+1; n++ {
			list := fmt.Sprintf("http://h/shop/?from=%d", 30*(n-1))
			f.LinkClass(host, "http://h/shop/", ClassOther, list)
			fetchPages(f, host, []string{list}, ClassNext, true)
		}
		for i := range 40 {
			f.Discovered(host, fmt.Sprintf("http://h/p/thing-%c%c.html", 'a'+i%26, 'a'+i/26))
		}
		var refused int
		for i := range 20 {
			item := fmt.Sprintf("http://h/p/thing-%c%c.html", 'a'+i%26, 'a'+i/26)
			add := fmt.Sprintf("%s?add=%d", item, 5+i*37) // a small shop's item numbers
			if got := f.LinkClass(host, item, ClassOther, add); got != ClassNext {
				t.Fatalf("LinkClass(%s, %s) = %d, want a next page (the premise)", item, add, got)
			}
			if _, spent := f.Spent(host, add, ClassNext, true); spent {
				refused++
				continue
			}
			p := f.Fetched(host, add, ClassNext)
			f.Repeats(p)
			if yields && i == 0 {
				f.Yielded(p)
			}
		}
		want := 20 - f.cfg.NextFree
		if yields {
			want = 0
		}
		if refused != want {
			t.Errorf("yields %v: %d of 20 items' forms refused, want %d", yields, refused, want)
		}
		if yields {
			continue
		}
		fam := wastefulFamily(f, host, "/p/*?add")
		if fam == nil || !strings.Contains(fam.Evidence(), "4 reached as later pages showed the page they add a number to") {
			t.Errorf("Wasteful: the forms' family is %+v", fam)
		} else {
			t.Log(fam.Evidence())
		}
	}
}

// TestFamiliesLinkClassIDs: a link that changes only numbers the host
// shows as ids (a diff with the previous revision, "?version=4285&to=4279";
// never small, no offsets) is a sibling, judged as a refinement; page
// numbers and offsets, met from their list's first page, stay next pages
// however far they go.
func TestFamiliesLinkClassIDs(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	revs := []int{4285, 4279, 4266, 4251, 4240}
	for i := 0; i+1 < len(revs); i++ {
		page := fmt.Sprintf("http://h/Ns:Page?mode=diff&to=%d&version=%d", revs[i], revs[i+1])
		link := fmt.Sprintf("http://h/Ns:Page?mode=diff&to=%d&version=%d", revs[i+1], revs[i+1]-7)
		want := ClassRefine
		if i == 0 {
			want = ClassNext // one value alone may be an offset
		}
		if got := f.LinkClass(host, page, ClassOther, link); got != want {
			t.Errorf("LinkClass(%s, %s) = %d, want %d", page, link, got, want)
		}
	}
	// A list's first page links its second: page numbers and offsets
	// start small, and stay later pages however far they go.
	for _, c := range []struct{ page, link string }{
		{"http://h/list", "http://h/list?start=20"},
		{"http://h/list?start=12000", "http://h/list?start=12020"},
		{"http://h/list?start=2000", "http://h/list?start=4020"},
		{"http://h/blog", "http://h/blog?page=2"},
		{"http://h/blog?page=1500", "http://h/blog?page=1501"},
		{"http://h/blog?page=1501", "http://h/blog?page=1502"},
	} {
		if got := f.LinkClass(host, c.page, ClassOther, c.link); got != ClassNext {
			t.Errorf("LinkClass(%s, %s) = %d, want a next page", c.page, c.link, got)
		}
	}
}

// TestFamiliesPathIDs: an old revision reached from its history links
// the revision before it by an id written in the path; that is no
// filtered list's later page, so the revisions are judged by what they
// yield, though some show text of their own. A filtered list's pages
// numbered in the path still are.
func TestFamiliesPathIDs(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	var revs []string
	for i, id := range []int{199701, 199687, 199469, 199057, 198934, 198725, 198554, 198083} {
		page := fmt.Sprintf("http://h/kb/ns/p%d/version/%d", i, id)
		link := fmt.Sprintf("http://h/kb/ns/p%d/version/%d", i, id-113)
		if got := f.LinkClass(host, page, ClassRefine, link); got != ClassRefine {
			t.Fatalf("LinkClass(%s, %s) from a refinement = %d, want a refinement", page, link, got)
		}
		revs = append(revs, page)
	}
	fetchPages(f, host, revs[:1], ClassRefine, true)
	fetchPages(f, host, revs[1:7], ClassRefine, false)
	if fam, spent := f.Spent(host, revs[7], ClassRefine, false); !spent {
		t.Errorf("revisions, one of seven yielding, not spent (%s)", fam)
	}
	// The same links from a list's pages numbered in the path mark its
	// later pages: they keep going while they yield.
	g := NewFamilies(FamilyConfig{})
	var later []string
	for i := range 8 {
		page := fmt.Sprintf("http://h/store/b-%d", i)
		link := page + "/page-2"
		g.Discovered(host, link)
		g.LinkClass(host, page, ClassRefine, link)
		later = append(later, link)
	}
	fetchPages(g, host, later[:1], ClassRefine, true)
	fetchPages(g, host, later[1:7], ClassRefine, false)
	if fam, spent := g.Spent(host, later[7], ClassRefine, false); spent {
		t.Errorf("a filtered list's later pages, one yielding, refused (%s)", fam)
	}
}

// TestFamiliesLinkClass: a path below the page's is a refinement only
// when what it adds recurs below several directories of the host.
func TestFamiliesLinkClass(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	// Before anything is known, a post below its month's archive and a
	// view below its page are both other pages.
	if got := f.LinkClass(host, "http://h/2021/02/", ClassOther, "http://h/2021/02/a-post/"); got != ClassOther {
		t.Errorf("post below its archive: class %d", got)
	}
	for _, p := range []string{"one", "two", "three"} {
		f.Discovered(host, "http://h/wiki/ns/"+p)
		f.Discovered(host, "http://h/wiki/ns/"+p+"/history")
		f.Discovered(host, "http://h/2021/02/"+p+"-post/")
	}
	if got := f.LinkClass(host, "http://h/wiki/ns/four", ClassOther, "http://h/wiki/ns/four/history"); got != ClassRefine {
		t.Errorf("a history below its page: class %d, want a refinement", got)
	}
	if got := f.LinkClass(host, "http://h/2021/02/", ClassOther, "http://h/2021/02/four-post/"); got != ClassOther {
		t.Errorf("a post below its archive: class %d, want another page", got)
	}
	// Same path, other parameters: a refinement whatever was seen.
	if got := f.LinkClass(host, "http://h/list", ClassOther, "http://h/list?sort=new"); got != ClassRefine {
		t.Errorf("sorted list: class %d", got)
	}
	// On a refinement, a next page and a path below its directory are
	// refinements; elsewhere they are a next page and another page.
	for _, c := range []struct {
		page      string
		pageClass int
		link      string
		want      int
	}{
		{"http://h/list?sort=new", ClassRefine, "http://h/list?page=2&sort=new", ClassRefine},
		{"http://h/list?sort=new", ClassOther, "http://h/list?page=2&sort=new", ClassNext},
		{"http://h/wiki/ns/a/history", ClassRefine, "http://h/wiki/ns/a/rev/12", ClassRefine},
		{"http://h/2021/02/one-post/", ClassOther, "http://h/2021/02/one-post/x/", ClassOther},
		{"http://h/doku.php?id=a&do=revisions", ClassRefine, "http://h/doku.php?id=b", ClassRefine},
		{"http://h/start?do=revisions", ClassRefine, "http://h/other", ClassOther},
	} {
		if got := f.LinkClass(host, c.page, c.pageClass, c.link); got != c.want {
			t.Errorf("LinkClass(%s, class %d, %s) = %d, want %d", c.page, c.pageClass, c.link, got, c.want)
		}
	}
}

// TestFamiliesYearFilter: a number added that the host only ever shows
// as a year narrows a list; a page number stays a next page.
func TestFamiliesYearFilter(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	for _, y := range []string{"2017", "2018", "2019"} {
		f.Discovered(host, "http://h/articles?sec=a&year="+y)
	}
	for _, p := range []string{"2", "3", "2019"} {
		f.Discovered(host, "http://h/articles?pg="+p+"&sec=a")
	}
	if got := f.LinkClass(host, "http://h/articles?sec=a", ClassOther, "http://h/articles?sec=a&year=2020"); got != ClassRefine {
		t.Errorf("a year added: class %d, want a refinement", got)
	}
	if got := f.LinkClass(host, "http://h/articles?sec=a", ClassOther, "http://h/articles?pg=2020&sec=a"); got != ClassNext {
		t.Errorf("a page number added: class %d, want the next page", got)
	}
	if !f.Narrowed(host, "http://h/articles?kw=x&year=2019") || f.Narrowed(host, "http://h/articles?pg=3&kw=x") {
		t.Error("a list narrowed by a word and a year is narrowed twice; by a word and a page, once")
	}
}

// TestFamiliesPathFilters: filters written in the path, below any
// directory, narrow a list once each; a post below its archive, a file
// below its module, do not.
func TestFamiliesPathFilters(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	for _, k := range []string{"http://h/shop/all/c:red/", "http://h/shop/all/size:9/", "http://h/c/red/",
		"http://h/c/large/", "http://h/2021/02/a-post/", "http://h/std/vec/index.html", "http://h/std/index.html",
		"http://h/w/index.php?title=Main", "http://h/2021/03/", "http://h/2021/01/",
		"http://h/browse/black/", "http://h/browse/large/", "http://h/browse/page-2/", "http://h/browse/p3/"} {
		f.Discovered(host, k)
	}
	for _, c := range []struct {
		key  string
		want bool
	}{
		{"http://h/shop/all/c:red/size:9/", true},
		{"http://h/shop/all/size:9/c:red/", true},
		{"http://h/c/red/large/", true},
		{"http://h/c/red/", false},
		{"http://h/c/red/?sort=price", true},
		{"http://h/shop/all/c:red/other/", false},
		{"http://h/2021/02/a-post/", false},
		{"http://h/std/vec/index.html", false},
		{"http://h/std/collections/vec/index.html", false},
		{"http://h/w/index.php?title=Other", false},
		{"http://h/2021/01/03/", false},
		{"http://h/browse/black/page-2/", false},
		{"http://h/browse/black/p3/", false},
		{"http://h/browse/black/large/", true},
	} {
		if got := f.Narrowed(host, c.key); got != c.want {
			t.Errorf("Narrowed(%s) = %v, want %v", c.key, got, c.want)
		}
	}
}

// TestNumbered: only a URL that names an item by number can be a form
// around an item's name; pages named by words never are.
func TestNumbered(t *testing.T) {
	for key, want := range map[string]bool{
		"http://h/cart/add/6543":                    true,
		"http://h/newreply.php?a=quote&p=15126":     true,
		"http://h/basket?buy=33807":                 true,
		"http://h/std/vec/struct.Drain.html":        false,
		"http://h/std/collections/struct.Iter.html": false,
		"http://h/wiki/Main_Page?action=edit":       false,
		"http://h/search?q=":                        false,
		"http://h/std/u8/constant.MAX.html":         true,
	} {
		if got := Numbered(key); got != want {
			t.Errorf("Numbered(%s) = %v, want %v", key, got, want)
		}
	}
}

// TestFIFOMap: the map holds its bound, forgets the key put first, and a
// key put again keeps its place.
func TestFIFOMap(t *testing.T) {
	f := NewFIFOMap[int, string](3)
	for i := range 3 {
		f.Put(i, fmt.Sprint(i))
	}
	f.Put(0, "zero") // an update: 0 stays the oldest
	f.Put(3, "3")
	if _, ok := f.Get(0); ok || f.Len() != 3 {
		t.Errorf("after a fourth key: 0 still held (or %d keys, want 3)", f.Len())
	}
	for _, k := range []int{1, 2, 3} {
		if v, ok := f.Get(k); !ok || v != fmt.Sprint(k) {
			t.Errorf("Get(%d) = %q, %v", k, v, ok)
		}
	}
	for i := range 100 {
		f.Put(10+i, "")
	}
	if f.Len() != 3 {
		t.Errorf("%d keys, want 3", f.Len())
	}
}

// TestFamiliesJoinedKnown: a URL joining values that the host showed one
// at a time (a tag intersection, a filter of several values) is a
// refinement wherever it is linked from; a joined value nobody showed
// alone is another page.
func TestFamiliesJoinedKnown(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	for _, k := range []string{"http://h/subject/red/", "http://h/subject/blue/", "http://h/tagged?t=red", "http://h/wiki/Paris"} {
		f.Discovered(host, k)
	}
	for _, c := range []struct {
		link string
		want int
	}{
		{"http://h/subject/red,blue/", ClassRefine},
		{"http://h/subject/green+red/", ClassRefine},
		{"http://h/tagged?t=red,green", ClassRefine},
		{"http://h/tagged?t=red%2Cgreen", ClassRefine},
		{"http://h/tagged?t=green,yellow", ClassOther},
		{"http://h/subject/green,yellow/", ClassOther},
		{"http://h/other/red,blue/", ClassOther},
		{"http://h/wiki/Paris,_Texas", ClassRefine}, // under a budget that yield buys back
		{"http://h/wiki/Lyon,_France", ClassOther},
	} {
		if got := f.LinkClass(host, "http://h/a/12/an-article", ClassOther, c.link); got != c.want {
			t.Errorf("LinkClass(an article, %s) = %d, want %d", c.link, got, c.want)
		}
	}
}

// TestFamiliesTrial: in a section where two families' refinements were
// all barren, a new family's refinements get TrialFree pages, not
// MinFree; a family that yields keeps MinFree, and once one of the
// barren families yields the trial is off.
func TestFamiliesTrial(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	fetchPages(f, host, keys("http://h/search/?o=s%d", 6), ClassRefine, false)
	fetchPages(f, host, keys("http://h/search/?format=f%d", 6), ClassRefine, false)
	fetchPages(f, host, keys("http://h/search/?author=a%d", 2), ClassRefine, false)
	if _, spent := f.Spent(host, "http://h/search/?author=zz", ClassRefine, false); !spent {
		t.Error("a third barren family not spent after TrialFree pages")
	}
	// Another section is not judged by this one.
	fetchPages(f, host, keys("http://h/list?o=s%d", 2), ClassRefine, false)
	if _, spent := f.Spent(host, "http://h/list?o=zz", ClassRefine, false); spent {
		t.Error("another section's family got the trial")
	}
	// A family that has yielded keeps its MinFree.
	fetchPages(f, host, keys("http://h/search/?year=y%d", 1), ClassRefine, true)
	fetchPages(f, host, keys("http://h/search/?year=n%d", 2), ClassRefine, false)
	if _, spent := f.Spent(host, "http://h/search/?year=zz", ClassRefine, false); spent {
		t.Error("a family that yielded got the trial")
	}
	// A barren family that yields is no longer counted.
	fetchPages(f, host, []string{"http://h/search/?o=new"}, ClassRefine, true)
	if _, spent := f.Spent(host, "http://h/search/?author=zz", ClassRefine, false); spent {
		t.Error("the trial outlived the section's barren families")
	}
}

// TestFamiliesTrialBySignature: a refinement whose parameters (one of
// them a word) were barren on two lists elsewhere on the host — a sort
// order, a sorted list's later pages — gets the trial in a section of its
// own; a list's plain later pages do not.
func TestFamiliesTrialBySignature(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	for _, sec := range []string{"money", "sport"} {
		fetchPages(f, host, keys("http://h/"+sec+"/?o=az&from=%d0", 6), ClassRefine, false)
		fetchPages(f, host, keys("http://h/"+sec+"/?from=%d0", 6), ClassRefine, false)
	}
	fetchPages(f, host, keys("http://h/health/?o=az&from=%d0", 2), ClassRefine, false)
	if _, spent := f.Spent(host, "http://h/health/?o=az&from=90", ClassRefine, false); !spent {
		t.Error("a sorted list's later pages not spent after the trial, though barren on two other lists")
	}
	fetchPages(f, host, keys("http://h/health/?from=%d0", 2), ClassRefine, false)
	if _, spent := f.Spent(host, "http://h/health/?from=90", ClassRefine, false); spent {
		t.Error("a list's plain later pages got the trial")
	}
}

// TestFamiliesTrialByIDs: old revisions by id ("?rev=1696731934") in
// each namespace are one signature: barren in two, a third gets a trial.
// Small numbers (a list's pages) are no ids.
func TestFamiliesTrialByIDs(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	for _, sec := range []string{"Alpha", "Beta"} {
		fetchPages(f, host, keys("http://h/"+sec+"/"+sec+"_page?rev=169673%d000", 6), ClassRefine, false)
	}
	fetchPages(f, host, keys("http://h/Gamma/Gamma_page?rev=169673%d000", 2), ClassRefine, false)
	if _, spent := f.Spent(host, "http://h/Gamma/Gamma_page?rev=1696739000", ClassRefine, false); !spent {
		t.Error("a namespace's old revisions not spent after the trial, though barren in two others")
	}
	g := NewFamilies(FamilyConfig{})
	for _, sec := range []string{"Alpha", "Beta"} {
		fetchPages(g, host, keys("http://h/"+sec+"/"+sec+"_page?p=%d", 6), ClassRefine, false)
	}
	fetchPages(g, host, keys("http://h/Gamma/Gamma_page?p=%d", 2), ClassRefine, false)
	if _, spent := g.Spent(host, "http://h/Gamma/Gamma_page?p=9", ClassRefine, false); spent {
		t.Error("small numbers pooled as ids")
	}
	// A view the host shows as one keeps the view's signature, ids or
	// not: a quote form is the reply form's.
	v := NewFamilies(FamilyConfig{})
	for i := range facetAfter {
		v.Discovered(host, fmt.Sprintf("http://h/thread/%d-topic/reply", i))
	}
	hv := v.mu.hosts.peek(host)
	if got := hv.viewOrIDSig("http://h/thread/9-topic/reply?quote=5414"); got != "*/reply" {
		t.Errorf("a view's form with an id: signature %q, want */reply", got)
	}
	if got := hv.viewOrIDSig("http://h/Ns/Page?rev=1696731934"); got != "#rev" {
		t.Errorf("an old revision: signature %q, want #rev", got)
	}
	for key, want := range map[string]string{
		"http://h/Ns/Page?rev=1696731934":         "#rev",
		"http://h/w?oldid=4821&diff=4833":         "#diff&oldid",
		"http://h/Ns/Page?rev=12":                 "",
		"http://h/Ns/Page?rev=1696731934&do=diff": "",
		"http://h/Ns/Page":                        "",
		"http://h/Ns/Page?rev=-1696731934":        "",
	} {
		if got := idSig(key); got != want {
			t.Errorf("idSig(%s) = %q, want %q", key, got, want)
		}
	}
}

// TestFamiliesSearch: the results of a site's search (a GET form's
// action whose own page is the form alone) are refinements wherever they
// are linked from; a form sent to a page with text of its own (a wiki's
// doku.php, a blog's home) leaves that page's URLs alone.
func TestFamiliesSearch(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	for _, k := range []string{"http://h/search/", "http://h/doku.php", "http://h/"} {
		f.SearchForm(host, k)
	}
	f.BarePage(host, "http://h/search/", false)
	f.BarePage(host, "http://h/doku.php", true)
	f.BarePage(host, "http://h/", false)
	f.BarePage(host, "http://h/search/?q=x", true) // a result: not the bare page
	for _, c := range []struct {
		link string
		want int
	}{
		{"http://h/search/?by=12", ClassRefine},
		{"http://h/search/?q=word", ClassRefine},
		{"http://h/search/", ClassOther},
		{"http://h/doku.php?id=start", ClassOther},
		{"http://h/?p=5", ClassOther},
		{"http://h/find?q=word", ClassOther},
	} {
		if got := f.LinkClass(host, "http://h/member.php?u=3", ClassOther, c.link); got != c.want {
			t.Errorf("LinkClass(a profile, %s) = %d, want %d", c.link, got, c.want)
		}
	}
	// A site's many pages without a query, fetched before its search
	// form is seen, do not crowd the search out (maxSearch).
	b := NewFamilies(FamilyConfig{})
	for i := range 2 * maxSearch {
		b.BarePage(host, fmt.Sprintf("http://h/page%d", i), false)
	}
	b.SearchForm(host, "http://h/search/")
	b.BarePage(host, "http://h/search/", false)
	if got := b.LinkClass(host, "http://h/member.php?u=3", ClassOther, "http://h/search/?by=12"); got != ClassRefine {
		t.Errorf("a search after many bare pages: class %d", got)
	}
	for i := range 2 * maxSearch {
		b.SearchForm(host, fmt.Sprintf("http://h/s%d", i))
	}
	b.mu.Lock()
	n := len(b.mu.hosts.peek(host).search)
	b.mu.Unlock()
	if n > maxSearch {
		t.Errorf("%d search paths kept, want at most %d", n, maxSearch)
	}

	// A form seen but its page never fetched: not known to be a search.
	g := NewFamilies(FamilyConfig{})
	g.SearchForm(host, "http://h/search/")
	if got := g.LinkClass(host, "http://h/member.php?u=3", ClassOther, "http://h/search/?by=12"); got != ClassOther {
		t.Errorf("an unconfirmed search's result: class %d", got)
	}
}

// TestFamiliesHollowShown: a family shows its kind once hollowKnown of
// its pages were hollow; a family none of whose pages were is not taken
// for one.
func TestFamiliesHollowShown(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	var last *Page
	for i := range hollowKnown {
		p := f.Fetched(host, fmt.Sprintf("http://h/wish/add/%d", i), ClassOther)
		if f.HollowShown(p) {
			t.Fatalf("shown after %d hollow pages", i)
		}
		f.Hollow(p, true)
		last = p
	}
	if !f.HollowShown(last) {
		t.Error("not shown after hollowKnown hollow pages")
	}
	if p := f.Fetched(host, "http://h/a/12/story", ClassOther); f.HollowShown(p) {
		t.Error("another family shown hollow")
	}
}

// TestFamiliesResourceParam: a parameter that names many resources by
// words (a wiki's ?id=) changes the page, not a refinement of it; a
// list's filter with few values, and values with digits (dates, tokens),
// stay refinements.
func TestFamiliesResourceParam(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	for i := range wideValues {
		f.Discovered(host, fmt.Sprintf("http://h/doku.php?id=ns:page_%c%c", 'a'+i%26, 'a'+i/26))
		f.Discovered(host, fmt.Sprintf("http://h/cal?day=2024-01-%02d", i%28+1))
	}
	for _, c := range []string{"red", "blue", "green"} {
		f.Discovered(host, "http://h/shop?color="+c)
	}
	for _, c := range []struct {
		page, link string
		want       int
	}{
		{"http://h/doku.php?id=ns:page_aa", "http://h/doku.php?id=ns:page_ba", ClassOther},
		{"http://h/doku.php?id=ns:page_aa", "http://h/doku.php?do=revisions&id=ns:page_aa", ClassRefine},
		{"http://h/shop?color=red", "http://h/shop?color=blue", ClassRefine},
		{"http://h/cal?day=2024-01-02", "http://h/cal?day=2024-01-03", ClassRefine},
	} {
		if got := f.LinkClass(host, c.page, ClassOther, c.link); got != c.want {
			t.Errorf("LinkClass(%s, %s) = %d, want %d", c.page, c.link, got, c.want)
		}
	}
}

func TestActionSig(t *testing.T) {
	for _, c := range []struct{ fam, want string }{
		{"/wiki/*/history", "*/history"},
		{"/docs/*/*/raw", "*/raw"},
		{"/wiki/*/history/", "*/history"},
		{"/wiki/history", ""},
		{"/wiki/*/*", ""},
		{"/std/*/index.html", ""},
		{"/wiki/*/rev2", ""},
		{"/wiki/*/history?o", ""},
		{"/wiki/page/history", ""},
	} {
		if got := actionSig(c.fam); got != c.want {
			t.Errorf("actionSig(%q) = %q, want %q", c.fam, got, c.want)
		}
	}
}

func TestListBase(t *testing.T) {
	for _, c := range []struct {
		page, link, want string
		date             bool
	}{
		{"/2019/12", "/2019/12?from=10", "/2019/12?", false},
		{"/2019/12?from=10", "/2019/12?from=20", "/2019/12?", false},
		{"/writer?uid=5", "/writer?from=10&uid=5", "/writer?uid=5", false},
		{"/writer?from=10&uid=5", "/writer?from=20&uid=5", "/writer?uid=5", false},
		{"/tag/x/", "/tag/x/page/2/", "/tag/x?", false},
		{"/tag/x/page/2/", "/tag/x/page/3/", "/tag/x?", false},
		{"/c/red/p3.html", "/c/red/p4.html", "/c/red?", false},
		{"/2021/01/", "/2021/01/03/", "/2021/01?", true},
		{"/2021/01/03/", "/2021/01/04/", "/2021/01?", true},
	} {
		if got, date := listBase(c.page, c.link); got != c.want || date != c.date {
			t.Errorf("listBase(%s, %s) = %q, %v; want %q, %v", c.page, c.link, got, date, c.want, c.date)
		}
	}
}

// tagKey is the first page of tag list i, a name without digits.
func tagKey(i int, later string) string {
	return "http://h/tag/" + string(rune('a'+i/26)) + string(rune('a'+i%26)) + later
}

// tagLater returns the second pages of the tag lists.
func tagLater() []string {
	var out []string
	for i := range 20 {
		out = append(out, tagKey(i, "?page=2"))
	}
	return out
}

// laterPagesHost sets up a host with 20 tag lists and 5 sections, each
// with later pages found on its first page, and fetches 16 of the
// sections' later pages, yielding as told.
func laterPagesHost(t *testing.T, sectionYields int) *Families {
	t.Helper()
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	for i := range 20 {
		f.Discovered(host, tagKey(i, ""))
	}
	for i := range 20 {
		page := tagKey(i, "")
		for n := 2; n <= 5; n++ {
			link := fmt.Sprintf("%s?page=%d", page, n)
			f.Discovered(host, link)
			if c := f.LinkClass(host, page, ClassOther, link); c != ClassNext {
				t.Fatalf("LinkClass(%s, %s) = %d, want a next page", page, link, c)
			}
		}
	}
	var sec []string
	for i := range 5 {
		page := "http://h/section/" + []string{"world", "sport", "money", "arts", "food"}[i]
		f.Discovered(host, page)
		for n := 2; n <= 9; n++ {
			link := fmt.Sprintf("%s?page=%d", page, n)
			f.Discovered(host, link)
			f.LinkClass(host, page, ClassOther, link)
			sec = append(sec, link)
		}
	}
	fetchPages(f, host, sec[:sectionYields], ClassNext, true)
	fetchPages(f, host, sec[sectionYields:16], ClassNext, false)
	return f
}

// TestFamiliesLaterPages: on a host whose later pages, fetched after
// everything else, show nothing new, the later pages of a taxonomy's many
// lists stop once NextFree of them yielded nothing; a site's few main
// lists are followed to their ends; a taxonomy that yields, or a host
// whose later pages do, keeps them.
func TestFamiliesLaterPages(t *testing.T) {
	const host = "http://h"
	tags := tagLater()

	f := laterPagesHost(t, 0)
	fetchPages(f, host, tags[:3], ClassNext, false)
	if _, spent := f.Spent(host, tags[3], ClassNext, false); spent {
		t.Error("a taxonomy's later pages refused after 3 that yielded nothing, want 4 free")
	}
	fetchPages(f, host, tags[3:4], ClassNext, false)
	if fam, spent := f.Spent(host, tags[4], ClassNext, true); !spent || fam != "/tag/*?page" {
		t.Errorf("Spent = %q, %v after 4 of a taxonomy's later pages yielded nothing", fam, spent)
	}
	if _, spent := f.Spent(host, "http://h/section/food?page=9", ClassNext, false); spent {
		t.Error("a main list's later page was refused")
	}
	tagFam := wastefulFamily(f, host, "/tag/*?page")
	if tagFam == nil || !tagFam.LaterSpent || tagFam.Refused != 1 ||
		!strings.Contains(tagFam.Evidence(), "later pages of 16 lists or more, none of 4 yielded") {
		t.Errorf("Wasteful: the taxonomy's family is %+v", tagFam)
	} else {
		t.Log(tagFam.Evidence())
	}
	// The list's first pages are never refused.
	if _, spent := f.Spent(host, tagKey(19, ""), ClassOther, false); spent {
		t.Error("a list's first page was refused")
	}

	// A taxonomy one of whose later pages yielded keeps them.
	f = laterPagesHost(t, 0)
	fetchPages(f, host, tags[:1], ClassNext, true)
	fetchPages(f, host, tags[1:10], ClassNext, false)
	if _, spent := f.Spent(host, tags[10], ClassNext, false); spent {
		t.Error("a taxonomy that yielded was refused")
	}

	// A host one in 16 of whose later pages yields is not covered: its
	// lists lead somewhere only they reach, and are all followed.
	f = laterPagesHost(t, 1)
	fetchPages(f, host, tags[:10], ClassNext, false)
	if _, spent := f.Spent(host, tags[10], ClassNext, false); spent {
		t.Error("a taxonomy's later pages refused on a host whose later pages yield")
	}
}

// TestFamiliesBarrenTaxonomy: on a host whose main lists' later pages
// keep finding things (not covered), a taxonomy none of whose many later
// pages showed anything new stops after coveredRatio of them; the later
// pages it refuses count for the host's coverage as barren ones fetched,
// so that the host's other decisions (filtered lists) come out as if they
// had been fetched.
func TestFamiliesBarrenTaxonomy(t *testing.T) {
	const host = "http://h"
	var tags []string
	for n := 2; n <= 5; n++ {
		for i := range 20 {
			tags = append(tags, tagKey(i, fmt.Sprintf("?page=%d", n)))
		}
	}
	f := laterPagesHost(t, 2)
	fetchPages(f, host, tags[:coveredRatio-1], ClassNext, false)
	if _, spent := f.Spent(host, tags[coveredRatio-1], ClassNext, false); spent {
		t.Fatalf("a taxonomy's later pages refused after %d barren on a host not covered", coveredRatio-1)
	}
	fetchPages(f, host, tags[coveredRatio-1:coveredRatio], ClassNext, false)
	h := f.mu.hosts.peek(host)
	if h.covered() {
		t.Fatal("the host is covered already: the test shows nothing")
	}
	refused := 0
	for _, k := range tags[coveredRatio:] {
		fam, spent := f.Spent(host, k, ClassNext, true)
		if !spent || fam != "/tag/*?page" {
			t.Fatalf("Spent(%s) = %q, %v after %d barren later pages of a taxonomy", k, fam, spent, coveredRatio)
		}
		refused++
		if h.covered() {
			break
		}
	}
	if !h.covered() {
		t.Errorf("the host not covered after %d of its later pages were refused as barren", refused)
	}
	if _, spent := f.Spent(host, "http://h/section/food?page=9", ClassNext, false); spent {
		t.Error("a main list's later page was refused")
	}
	if x := wastefulFamily(f, host, "/tag/*?page"); x == nil || !strings.Contains(x.Evidence(), "later pages of 16 lists or more, none of 32 yielded") {
		t.Errorf("the taxonomy's family: %+v", x)
	}
	// One yield in coveredRatio later pages is next to nothing, as for
	// covered; more keep them.
	g := laterPagesHost(t, 2)
	fetchPages(g, host, tags[:1], ClassNext, true)
	fetchPages(g, host, tags[1:coveredRatio-1], ClassNext, false)
	if _, spent := g.Spent(host, tags[coveredRatio-1], ClassNext, false); spent {
		t.Errorf("a taxonomy that yielded refused after %d later pages", coveredRatio-1)
	}
	fetchPages(g, host, tags[coveredRatio-1:coveredRatio], ClassNext, false)
	if _, spent := g.Spent(host, tags[coveredRatio], ClassNext, true); !spent {
		t.Errorf("a taxonomy one of whose %d later pages yielded not refused", coveredRatio)
	}
	if x := wastefulFamily(g, host, "/tag/*?page"); x == nil || !strings.Contains(x.Evidence(), "later pages of 16 lists or more, only 1 of 32 yielded") {
		t.Errorf("the taxonomy's family: %+v", x)
	}
	g = laterPagesHost(t, 2)
	fetchPages(g, host, tags[:3], ClassNext, true)
	fetchPages(g, host, tags[3:2*coveredRatio], ClassNext, false)
	if _, spent := g.Spent(host, tags[2*coveredRatio], ClassNext, false); spent {
		t.Errorf("a taxonomy three of whose %d later pages yielded was refused", 2*coveredRatio)
	}
}

// TestFamiliesHintedAway: a family whose pages all named another URL as
// canonical and yielded nothing stops after NextFree, a list's later
// pages and filtered lists on a host whose lists lead somewhere too; one
// that yielded, or one some of whose pages named no other canonical,
// does not.
func TestFamiliesHintedAway(t *testing.T) {
	const host = "http://h"
	sorted := keys("http://h/products/p/%d/?sortby=rating", 9)
	for _, c := range []struct {
		name          string
		hinted, yield int
		want          bool
	}{
		{"all hinted, none yielded", 8, 0, true},
		{"one yielded", 8, 1, false},
		{"one named no other canonical", 7, 0, false},
	} {
		f := NewFamilies(FamilyConfig{})
		for i, k := range sorted[:8] {
			p := f.Fetched(host, k, ClassNext)
			if i < c.hinted {
				f.Hinted(p)
			}
			if i < c.yield {
				f.Yielded(p)
			}
		}
		_, spent := f.Spent(host, sorted[8], ClassNext, true)
		if spent != c.want {
			t.Errorf("%s: Spent = %v, want %v", c.name, spent, c.want)
		}
		if w := f.Wasteful(host); c.want && (len(w) != 1 || !strings.Contains(w[0].Evidence(), "all 8 named another URL as canonical")) {
			t.Errorf("%s: Wasteful = %+v", c.name, w)
		}
	}
	// Lists narrowed by one filter on a host whose lists lead somewhere
	// are exempt from their family's budget (filtered), unless the site
	// named the unfiltered list as their canonical and none yielded.
	for _, hint := range []bool{false, true} {
		f := laterPagesHost(t, 8)
		var filters []string
		for i := range 9 {
			filters = append(filters, fmt.Sprintf("http://h/shop/?col=c%c", 'a'+i))
		}
		for _, k := range filters[:8] {
			p := f.Fetched(host, k, ClassRefine)
			if hint {
				f.Hinted(p)
			}
		}
		if _, spent := f.Spent(host, filters[8], ClassRefine, false); spent != hint {
			t.Errorf("filter lists, canonical named %v: Spent = %v, want %v", hint, spent, hint)
		}
	}
}

// TestFamiliesLaterPagesItems: pages numbered in sequence that bring new
// text (articles by id) are items, not a list's later pages: they neither
// open nor close the host's coverage.
func TestFamiliesLaterPagesItems(t *testing.T) {
	const host = "http://h"
	f := laterPagesHost(t, 0)
	for _, k := range keys("http://h/story?id=%d", 40) {
		f.YieldedText(f.Fetched(host, k, ClassNext))
	}
	tags := tagLater()
	fetchPages(f, host, tags[:4], ClassNext, false)
	if _, spent := f.Spent(host, tags[4], ClassNext, false); !spent {
		t.Error("items in sequence that yielded text kept the host from being covered")
	}
	// The same pages counted as lists that led somewhere would have.
	g := laterPagesHost(t, 0)
	for _, k := range keys("http://h/story?id=%d", 40) {
		g.Yielded(g.Fetched(host, k, ClassNext))
	}
	fetchPages(g, host, tags[:4], ClassNext, false)
	if _, spent := g.Spent(host, tags[4], ClassNext, false); spent {
		t.Error("later pages that led somewhere did not keep the host uncovered")
	}
}

// TestFamiliesLaterPagesFaceted: the later pages of one list narrowed by
// two or more kinds of filter (a filter page over everything) stop too
// once they show nothing new on a covered host; a list of one filter kind
// (a sort) does not.
func TestFamiliesLaterPagesFaceted(t *testing.T) {
	const host = "http://h"
	// The page number in the query, and written in the path.
	for _, c := range []struct {
		faceted, sorted string
		filters         []string
		page            func(list string, n int) string
	}{
		{"http://h/all", "http://h/news", []string{"http://h/all?sec=world", "http://h/all?type=report", "http://h/news?o=az", "http://h/news?o=old"},
			func(list string, n int) string { return fmt.Sprintf("%s?page=%d", list, n) }},
		{"http://h/articles/", "http://h/stories/", []string{"http://h/articles/?sec=world", "http://h/articles/?type=report", "http://h/stories/?o=az"},
			func(list string, n int) string { return fmt.Sprintf("%sp/%d/", list, n) }},
	} {
		f := laterPagesHost(t, 0)
		for _, k := range c.filters {
			f.Discovered(host, k)
		}
		for _, list := range []string{c.faceted, c.sorted} {
			for n := 2; n <= 20; n++ {
				f.LinkClass(host, list, ClassOther, c.page(list, n))
			}
		}
		for n := range 4 {
			fetchPages(f, host, []string{c.page(c.faceted, n+2)}, ClassNext, false)
		}
		if _, spent := f.Spent(host, c.page(c.faceted, 10), ClassNext, false); !spent {
			t.Errorf("a faceted list's later pages (%s) not refused", c.page(c.faceted, 10))
		}
		for n := range 10 {
			fetchPages(f, host, []string{c.page(c.sorted, n+2)}, ClassNext, false)
		}
		if _, spent := f.Spent(host, c.page(c.sorted, 14), ClassNext, false); spent {
			t.Errorf("a sorted list's later pages (%s) refused", c.page(c.sorted, 14))
		}
	}
}

// TestFamiliesLaterPagesDates: a date's parts linked from its archive
// (a month's days, "/2021/01/" → "/2021/01/03/") are archives of their
// own, which the site lists as such: never refused as later pages.
func TestFamiliesLaterPagesDates(t *testing.T) {
	const host = "http://h"
	f := laterPagesHost(t, 0)
	var days []string
	for m := 1; m <= 12; m++ {
		for _, y := range []int{2020, 2021} {
			month := fmt.Sprintf("http://h/%d/%02d/", y, m)
			f.Discovered(host, month)
			for d := 1; d <= 3; d++ {
				day := fmt.Sprintf("%s%02d/", month, d)
				f.Discovered(host, day)
				if c := f.LinkClass(host, month, ClassOther, day); c != ClassNext {
					t.Fatalf("LinkClass(%s, %s) = %d, want a next page", month, day, c)
				}
				days = append(days, day)
			}
		}
	}
	fetchPages(f, host, days[:20], ClassNext, false)
	if fam, spent := f.Spent(host, days[20], ClassNext, false); spent {
		t.Errorf("a day's archive refused as a later page of %s", fam)
	}
}

// shopHost sets up a catalogue "/shop" of ten pages whose later pages
// were fetched, yielding as told, and links from its first page to
// lists narrowed by one word (motif: filters, o: sort orders, the sorts
// as long as the catalogue).
func shopHost(t *testing.T, yields int) *Families {
	t.Helper()
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	var later []string
	for _, page := range []string{"http://h/shop", "http://h/shop?p=2"} {
		for n := 2; n <= 10; n++ {
			link := fmt.Sprintf("http://h/shop?p=%d", n)
			f.Discovered(host, link)
			if c := f.LinkClass(host, page, ClassOther, link); page == "http://h/shop" && c != ClassNext {
				t.Fatalf("LinkClass(%s, %s) = %d, want a next page", page, link, c)
			}
		}
	}
	for i := range 16 {
		later = append(later, fmt.Sprintf("http://h/shop?p=%d", i+2))
	}
	fetchPages(f, host, later[:yields], ClassNext, true)
	fetchPages(f, host, later[yields:], ClassNext, false)
	for v, end := range map[string]int{"motif=camo": 3, "motif=plain": 4, "motif=checked": 2, "o=az": 10, "o=za": 10, "o=new": 10} {
		page := "http://h/shop?" + v
		f.Discovered(host, page)
		f.LinkClass(host, "http://h/shop", ClassOther, page)
		for n := 2; n <= end; n++ {
			link := fmt.Sprintf("%s&p=%d", page, n)
			f.Discovered(host, link)
			if c := f.LinkClass(host, page, ClassRefine, link); c != ClassRefine {
				t.Fatalf("LinkClass(%s, %s) from a refinement = %d, want a refinement", page, link, c)
			}
		}
	}
	return f
}

// TestFamiliesFilteredLists: on a host whose later pages lead somewhere
// (a shop's), a list narrowed by one filter and its later pages are how
// its items are reached: their family's budget does not refuse them,
// barren or not; a sort (its lists as long as the list without it) gets
// the budget as before, and so does every such list on a covered host.
func TestFamiliesFilteredLists(t *testing.T) {
	const host = "http://h"
	f := shopHost(t, 4)
	fetchPages(f, host, []string{"http://h/shop?motif=camo", "http://h/shop?motif=plain", "http://h/shop?motif=checked",
		"http://h/shop?motif=dots", "http://h/shop?motif=stripes", "http://h/shop?motif=paisley", "http://h/shop?motif=floral"}, ClassRefine, false)
	if fam, spent := f.Spent(host, "http://h/shop?motif=tartan", ClassRefine, false); spent {
		t.Errorf("a single filter refused (%s) on a host whose later pages lead somewhere", fam)
	}
	laterKeys := []string{"http://h/shop?motif=camo&p=2", "http://h/shop?motif=camo&p=3", "http://h/shop?motif=plain&p=2",
		"http://h/shop?motif=plain&p=3", "http://h/shop?motif=plain&p=4", "http://h/shop?motif=checked&p=2", "http://h/shop?motif=dots&p=2"}
	fetchPages(f, host, laterKeys, ClassRefine, false)
	if fam, spent := f.Spent(host, "http://h/shop?motif=tartan&p=2", ClassRefine, false); spent {
		t.Errorf("a filtered list's later page refused (%s)", fam)
	}
	// Sort orders: their lists go as far as the catalogue.
	fetchPages(f, host, []string{"http://h/shop?o=az", "http://h/shop?o=za", "http://h/shop?o=new", "http://h/shop?o=old",
		"http://h/shop?o=top", "http://h/shop?o=low"}, ClassRefine, false)
	if _, spent := f.Spent(host, "http://h/shop?o=high", ClassRefine, false); !spent {
		t.Error("a sort order's family not spent after MinFree barren pages")
	}

	// The same lists on a host whose later pages show nothing new, and
	// whose lists in another section go to a third page too (a journal
	// beside the shop): its items are listed elsewhere as well.
	g := shopHost(t, 0)
	g.LinkClass(host, "http://h/journal", ClassOther, "http://h/journal?p=3")
	fetchPages(g, host, []string{"http://h/shop?motif=camo", "http://h/shop?motif=plain", "http://h/shop?motif=checked",
		"http://h/shop?motif=dots", "http://h/shop?motif=stripes", "http://h/shop?motif=paisley"}, ClassRefine, false)
	if _, spent := g.Spent(host, "http://h/shop?motif=tartan", ClassRefine, false); !spent {
		t.Error("a barren single filter not spent on a covered host")
	}
}

// TestFamiliesPathPagedSorts: a list whose page numbers are written in
// the path ("/shop/page/3/") shows its sorts as one numbered in the
// query does: sorted lists that go as far as the list unsorted.
func TestFamiliesPathPagedSorts(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	for _, k := range []string{"http://h/shop/?color=red", "http://h/shop/?o=rank"} {
		f.Discovered(host, k)
	}
	f.LinkClass(host, "http://h/shop/", ClassOther, "http://h/shop/page/2/")
	f.LinkClass(host, "http://h/shop/page/2/", ClassNext, "http://h/shop/page/12/")
	f.LinkClass(host, "http://h/shop/?color=red", ClassRefine, "http://h/shop/page/3/?color=red")
	f.LinkClass(host, "http://h/shop/?o=rank", ClassRefine, "http://h/shop/page/12/?o=rank")
	h := f.mu.hosts.peek(host)
	// One list as long as the catalogue: not yet a sort, but no
	// one-value list of the catalogue either.
	if f.catalogue(h, "http://h/shop/page/2/?o=rank") {
		t.Error("a list as long as the catalogue, paged in the path, taken for a one-value list")
	}
	if !f.catalogue(h, "http://h/shop/page/2/?color=red") || !f.catalogue(h, "http://h/shop/page/5/") {
		t.Error("a shorter one-value list, or the catalogue, paged in the path, not taken for the catalogue's")
	}
	f.LinkClass(host, "http://h/shop/?o=new", ClassRefine, "http://h/shop/page/12/?o=new")
	if !h.sorts("o") {
		t.Error("two lists as long as the catalogue's, paged in the path, not taken for a sort")
	}
	if h.sorts("color") {
		t.Error("a shorter list taken for a sort")
	}
}

// TestFamiliesCatalogue: on a host whose only lists that go to a third
// page are one faceted catalogue's (a shop whose products were all found
// through related products first, so that its lists show nothing new),
// the catalogue and its one-value lists are followed to their ends, first
// and later pages, however they were reached; a sort, or two filters at
// once, are not.
func TestFamiliesCatalogue(t *testing.T) {
	const host = "http://h"
	f := shopHost(t, 0)
	f.Discovered(host, "http://h/shop?color=red")
	var barren []string
	for _, v := range []string{"camo", "plain", "checked", "dots", "stripes", "paisley"} {
		barren = append(barren, "http://h/shop?motif="+v, "http://h/shop?motif="+v+"&p=2")
	}
	fetchPages(f, host, barren, ClassRefine, false)
	for _, k := range []string{"http://h/shop?motif=tartan", "http://h/shop?motif=tartan&p=2", "http://h/shop?p=11"} {
		for _, class := range []int{ClassNext, ClassRefine} {
			if fam, spent := f.Spent(host, k, class, false); spent {
				t.Errorf("a page of the sole catalogue %s (class %d) refused as %s", k, class, fam)
			}
		}
	}
	fetchPages(f, host, []string{"http://h/shop?o=az", "http://h/shop?o=za", "http://h/shop?o=new", "http://h/shop?o=old",
		"http://h/shop?o=top", "http://h/shop?o=low"}, ClassRefine, false)
	if _, spent := f.Spent(host, "http://h/shop?o=high", ClassRefine, false); !spent {
		t.Error("a sort order of the sole catalogue kept its budget")
	}
	if f.catalogue(f.mu.hosts.peek(host), "http://h/shop?color=red&motif=camo") {
		t.Error("a list narrowed twice taken for the catalogue's")
	}
	if !f.catalogue(f.mu.hosts.peek(host), "http://h/shop?color=red") {
		t.Error("a one-value list not taken for the catalogue's")
	}
	// A list narrowed by a word whose pager goes as far as the
	// catalogue's is sorted: no one-value list, later pages or not;
	// nor is a list narrowed by a number that numbers no pages (a size).
	f.LinkClass(host, "http://h/shop?o=rank", ClassRefine, "http://h/shop?o=rank&p=10")
	for _, k := range []string{"http://h/shop?o=rank", "http://h/shop?o=rank&p=2", "http://h/shop?size=42"} {
		if f.catalogue(f.mu.hosts.peek(host), k) {
			t.Errorf("%s taken for the catalogue's", k)
		}
	}
}

// TestFamiliesCatalogueBeside: a list in another section that goes to a
// third page, paged in its path or narrowed in its query (a tag's, an
// author's), lists the host's items too: the faceted list is one list of
// many, no catalogue, and its barren one-value lists keep no budget. A
// later page of the faceted list itself, or a second page elsewhere,
// changes nothing.
func TestFamiliesCatalogueBeside(t *testing.T) {
	const host = "http://h"
	for _, c := range []struct {
		page   string
		links  []string
		beside bool
	}{
		{"http://h/journal/", []string{"http://h/journal/page/2/", "http://h/journal/page/3/"}, true},
		{"http://h/keywords?tag=stew", []string{"http://h/keywords?tag=stew&page=2", "http://h/keywords?tag=stew&page=3"}, true},
		{"http://h/author.php?uid=4", []string{"http://h/author.php?uid=4&offset=24", "http://h/author.php?uid=4&offset=48"}, true},
		{"http://h/shop?color=red", []string{"http://h/shop?color=red&p=2", "http://h/shop?color=red&p=3"}, false},
		{"http://h/keywords?tag=stew", []string{"http://h/keywords?tag=stew&page=2"}, false},
	} {
		f := shopHost(t, 0)
		var barren []string
		for _, v := range []string{"camo", "plain", "checked", "dots", "stripes", "paisley"} {
			barren = append(barren, "http://h/shop?motif="+v, "http://h/shop?motif="+v+"&p=2")
		}
		fetchPages(f, host, barren, ClassRefine, false)
		for _, link := range c.links {
			f.LinkClass(host, c.page, ClassOther, link)
		}
		if _, spent := f.Spent(host, "http://h/shop?motif=tartan&p=2", ClassRefine, false); spent != c.beside {
			t.Errorf("with %s linked from %s, a barren one-value list's later page spent = %v, want %v", c.links, c.page, spent, c.beside)
		}
	}
}

// TestFamiliesFilteredLaterPagesYield: a filtered list's later pages
// that yield keep their budget on a host not covered, even before the
// host has shown many later pages of its own.
func TestFamiliesFilteredLaterPagesYield(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	var later []string
	for _, v := range []string{"a", "b", "c", "d", "e"} {
		page := "http://h/store/b-" + v
		for n := 2; n <= 5; n++ {
			link := fmt.Sprintf("%s/page-%d", page, n)
			f.Discovered(host, link)
			if c := f.LinkClass(host, page, ClassRefine, link); c != ClassRefine {
				t.Fatalf("LinkClass(%s, %s) from a refinement = %d, want a refinement", page, link, c)
			}
			later = append(later, link)
		}
	}
	fetchPages(f, host, later[:2], ClassRefine, true)
	fetchPages(f, host, later[2:12], ClassRefine, false)
	if fam, spent := f.Spent(host, later[12], ClassRefine, false); spent {
		t.Errorf("a filtered list's later pages that yielded refused (%s)", fam)
	}
	// Had none yielded, the budget holds as before.
	g := NewFamilies(FamilyConfig{})
	for i, link := range later {
		page := "http://h/store/b-" + string(rune('a'+i/4))
		g.Discovered(host, link)
		g.LinkClass(host, page, ClassRefine, link)
	}
	fetchPages(g, host, later[:12], ClassRefine, false)
	if _, spent := g.Spent(host, later[12], ClassRefine, false); !spent {
		t.Error("barren later pages of filtered lists not spent")
	}
}

func TestPageNum(t *testing.T) {
	for _, c := range []struct {
		vals []int64
		want bool
	}{
		{[]int64{2, 3, 4, 10}, true},     // page numbers
		{[]int64{36, 72, 108}, true},     // offsets
		{[]int64{20, 10, 30}, true},      // offsets, in any order
		{[]int64{38, 40, 42, 37}, false}, // sizes
		{[]int64{2019, 2020}, false},     // years
	} {
		p := pageNum{min: c.vals[0], gcd: c.vals[0]}
		for _, v := range c.vals[1:] {
			p.min, p.gcd = min(p.min, v), gcd(p.gcd, v)
		}
		if p.paging() != c.want {
			t.Errorf("%v: paging %v, want %v", c.vals, p.paging(), c.want)
		}
	}
}

// TestFamiliesBarrenSection: once SectionFree refinements of a section
// have yielded nothing, and none of its refinements ever did, a family
// none of whose pages yielded stops at its first barren refinement; a
// family whose pages yield, or a section with a refinement that
// yielded, keeps the usual budget.
func TestFamiliesBarrenSection(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	for _, action := range []string{"history", "edit", "backlinks"} {
		fetchPages(f, host, keys("http://h/wiki/p%d/"+action, 4), ClassRefine, false)
	}
	fetchPages(f, host, []string{"http://h/wiki/q0/source"}, ClassRefine, false)
	if fam, spent := f.Spent(host, "http://h/wiki/q1/source", ClassRefine, false); !spent {
		t.Errorf("a new barren family of a barren section not spent (%s)", fam)
	}
	// A family of real pages, one of whose refinements was barren.
	fetchPages(f, host, keys("http://h/wiki/r%d/print", 5), ClassOther, true)
	fetchPages(f, host, []string{"http://h/wiki/r9/print"}, ClassRefine, false)
	if fam, spent := f.Spent(host, "http://h/wiki/r10/print", ClassRefine, false); spent {
		t.Errorf("a family whose pages yield refused (%s)", fam)
	}
	// Another host, one of whose refinements in the section yielded.
	g := NewFamilies(FamilyConfig{})
	fetchPages(g, host, []string{"http://h/wiki/a/talk"}, ClassRefine, true)
	for _, action := range []string{"history", "edit", "backlinks"} {
		fetchPages(g, host, keys("http://h/wiki/p%d/"+action, 4), ClassRefine, false)
	}
	fetchPages(g, host, []string{"http://h/wiki/q0/source"}, ClassRefine, false)
	if fam, spent := g.Spent(host, "http://h/wiki/q1/source", ClassRefine, false); spent {
		t.Errorf("refused (%s) in a section whose refinements yielded", fam)
	}
}

// TestFamiliesViewsPooled: the same view in several sections (a wiki's
// histories, one family per namespace) spends one budget: once the view
// has been barren MinFree times, a new section's family gets a trial of
// TrialFree; a view that yields does not spend it.
func TestFamiliesViewsPooled(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	fetchPages(f, host, keys("http://h/alpha/p%d/history", 6), ClassRefine, false)
	if _, spent := f.Spent(host, "http://h/alpha/q9/history", ClassRefine, false); !spent {
		t.Fatal("a barren family not spent after MinFree pages")
	}
	// A view that never yielded anywhere is not tried in another
	// section, where its family has no page yet.
	if fam, spent := f.Spent(host, "http://h/beta/q9/history", ClassRefine, true); !spent || fam != "/beta/*/history" {
		t.Errorf("another section's view of a view barren everywhere: %q, %v", fam, spent)
	}
	if _, spent := f.Spent(host, "http://h/beta/q9", ClassOther, false); spent {
		t.Error("an item refused with its barren view")
	}
	if x := wastefulFamily(f, host, "/beta/*/history"); x == nil || !strings.Contains(x.Evidence(), "the same view (*/history) in all sections: 0 of 6 yielded") {
		t.Errorf("the family of a view refused before its first page: %+v", x)
	}
	// One that yielded once gets a trial in each section.
	y := NewFamilies(FamilyConfig{})
	fetchPages(y, host, keys("http://h/alpha/p%d/history", 1), ClassRefine, true)
	fetchPages(y, host, keys("http://h/alpha/r%d/history", 6), ClassRefine, false)
	fetchPages(y, host, keys("http://h/beta/p%d/history", 1), ClassRefine, false)
	if _, spent := y.Spent(host, "http://h/beta/q9/history", ClassRefine, false); spent {
		t.Error("another section's view refused before its trial")
	}
	fetchPages(y, host, []string{"http://h/beta/p1/history"}, ClassRefine, false)
	if _, spent := y.Spent(host, "http://h/beta/q9/history", ClassRefine, false); !spent {
		t.Error("another section's barren view not spent after its trial")
	}
	// A view's later pages share the view's budget: after their trial.
	fetchPages(f, host, keys("http://h/alpha/p%d/history?start=10", 2), ClassRefine, false)
	if _, spent := f.Spent(host, "http://h/alpha/p9/history?start=20", ClassRefine, false); !spent {
		t.Error("a barren view's later pages not spent after their trial")
	}
	// Views whose pages yield keep their budget across sections.
	g := NewFamilies(FamilyConfig{})
	for _, sec := range []string{"alpha", "beta"} {
		fetchPages(g, host, keys("http://h/"+sec+"/p%d/talk", 5), ClassRefine, true)
		fetchPages(g, host, keys("http://h/"+sec+"/r%d/talk", 3), ClassRefine, false)
	}
	if _, spent := g.Spent(host, "http://h/beta/q9/talk", ClassRefine, false); spent {
		t.Error("a yielding view refused for another section's pages")
	}
	// A view whose word is masked in its family ("/wiki/*/*/*/*") is
	// pooled by its word and numbers.
	if got := viewSig("/wiki/ns/a/compare/3/4"); got != "*/compare/*/*" {
		t.Errorf("viewSig = %q", got)
	}
	if got := viewSig("/c/a/page-2/"); got != "" {
		t.Errorf("viewSig of a list's page = %q", got)
	}
}

// TestFamiliesOtherBarren: a family's pages reached from elsewhere that
// all yielded nothing (views linked before the host showed them as
// views) count against its refinements; a family some of whose pages
// from elsewhere yielded (real lists) does not lose its refinements to
// them.
func TestFamiliesOtherBarren(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	fetchPages(f, host, keys("http://h/wiki/ns/p%d/edit", 3), ClassOther, false)
	fetchPages(f, host, keys("http://h/wiki/ns/q%d/edit", 3), ClassRefine, false)
	if _, spent := f.Spent(host, "http://h/wiki/ns/r9/edit", ClassRefine, false); !spent {
		t.Error("a barren view's pages from elsewhere not counted")
	}
	g := NewFamilies(FamilyConfig{})
	fetchPages(g, host, keys("http://h/shop/c%d/", 6), ClassOther, false)
	fetchPages(g, host, keys("http://h/shop/d%d/", 2), ClassOther, true)
	fetchPages(g, host, keys("http://h/shop/e%d/", 3), ClassRefine, false)
	if fam, spent := g.Spent(host, "http://h/shop/f9/", ClassRefine, false); spent {
		t.Errorf("a family of lists some of which yielded refused for its barren ones (%s)", fam)
	}
}

// TestFamiliesLaterPagesBounds: a host with endless lists, page-number
// names, filters and sections keeps what the later-page judgements
// follow within their bounds, and reaches them.
func TestFamiliesLaterPagesBounds(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	letters := func(i int) string { // a name without digits for each i
		b := []byte{'w'}
		for ; i > 0; i /= 26 {
			b = append(b, byte('a'+i%26))
		}
		return string(b)
	}
	n := max(maxListEnds, maxLaterShapes, maxPageNames, maxSecRef) + 100
	for i := range n {
		// A list per i, narrowed by a word of a name per i, with its own
		// page-number name, in a section per i.
		page := fmt.Sprintf("http://h/%s/l?%s=v", letters(i), letters(i%(maxPageNames+20)))
		link := fmt.Sprintf("%s&p%s=2", page, letters(i%(maxPageNames+20)))
		f.LinkClass(host, page, ClassRefine, link)
		f.LinkClass(host, fmt.Sprintf("http://h/%s/m", letters(i)), ClassOther, fmt.Sprintf("http://h/%s/m?p%s=%d", letters(i), letters(0), 2+i%5))
		fetchPages(f, host, []string{fmt.Sprintf("http://h/%s/x?y=z", letters(i))}, ClassRefine, false)
	}
	// A view per i, in a section of its own (a host of its own: the
	// families above fill MaxFamilies).
	g := NewFamilies(FamilyConfig{})
	for i := range maxSecRef + 100 {
		fetchPages(g, host, []string{fmt.Sprintf("http://h/%s/d/e/%s", letters(i), letters(i))}, ClassRefine, false)
	}
	if n := len(g.mu.hosts.peek(host).sigRef); n != maxSecRef {
		t.Errorf("%d views followed, want %d", n, maxSecRef)
	}
	if n := len(f.mu.hosts.peek(host).paged); n != maxListEnds {
		t.Errorf("%d paged lists kept, want %d", n, maxListEnds)
	}
	h := f.mu.hosts.peek(host)
	if len(h.listEnd) > maxListEnds || len(h.longList) > maxListEnds || len(h.later) > maxLaterShapes ||
		len(h.pageNames) > maxPageNames || len(h.wordLists) > maxPageNames || len(h.secRef) > maxSecRef {
		t.Errorf("beyond the bounds: %d list ends, %d long lists, %d later shapes, %d page names, %d word names, %d sections",
			len(h.listEnd), len(h.longList), len(h.later), len(h.pageNames), len(h.wordLists), len(h.secRef))
	}
	if len(h.listEnd) < maxListEnds || len(h.later) < maxLaterShapes || len(h.pageNames) < maxPageNames ||
		len(h.wordLists) < maxPageNames || len(h.secRef) < maxSecRef {
		t.Errorf("the bounds were not reached: %d list ends, %d later shapes, %d page names, %d word names, %d sections",
			len(h.listEnd), len(h.later), len(h.pageNames), len(h.wordLists), len(h.secRef))
	}
	for _, s := range h.fams {
		if len(s.lists) > manyLists {
			t.Errorf("a family follows %d lists, bound %d", len(s.lists), manyLists)
		}
	}
}

// TestFamiliesPathFilterBeside: a segment is a filter written in the
// path only beside another list below its directory; the one list below
// its directory ("/collections/all") narrowed by one parameter is
// narrowed once.
func TestFamiliesPathFilterBeside(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	f.Discovered(host, "http://h/collections/all")
	if f.Narrowed(host, "http://h/collections/all?color=blue") {
		t.Error("the catalogue narrowed by a colour is narrowed twice")
	}
	f.Discovered(host, "http://h/c/red/")
	f.Discovered(host, "http://h/c/blue/")
	if !f.Narrowed(host, "http://h/c/red/?size=nine") {
		t.Error("a colour in the path and a size: narrowed once")
	}
	// A size written as a number in the path, with lists below it
	// beside the colours: a filter. An item's number with its own
	// pages below it, or a month below a year, is none.
	for _, k := range []string{"http://h/c/36/", "http://h/c/36/red/", "http://h/c/36/blue/", "http://h/c/37/", "http://h/2024/05/a-post/",
		"http://h/2024/06/b-post/", "http://h/2024/07/", "http://h/item/12/", "http://h/item/12/reviews/", "http://h/item/12/photos/", "http://h/item/feed/", "http://h/item/news/"} {
		f.Discovered(host, k)
	}
	if !f.Narrowed(host, "http://h/c/36/red/") {
		t.Error("a size in the path and a colour: narrowed once")
	}
	for _, k := range []string{"http://h/c/size-6/", "http://h/c/size-6/red/", "http://h/c/size-6/blue/", "http://h/c/page-2/"} {
		f.Discovered(host, k)
	}
	if !f.Narrowed(host, "http://h/c/size-6/red/") {
		t.Error("a size written as a word and a number, and a colour: narrowed once")
	}
	if f.Narrowed(host, "http://h/c/page-2/") {
		t.Error("a later page taken for a filter")
	}
	for _, k := range []string{"http://h/c/37/", "http://h/2024/05/a-post/", "http://h/item/12/reviews/"} {
		if f.Narrowed(host, k) {
			t.Errorf("%s narrowed twice", k)
		}
	}
}

// TestFamiliesThinAlike: a thin page is alike when one of its family's
// last thin pages is within thinRadius bits, and not otherwise; the
// family keeps only its last few prints.
func TestFamiliesThinAlike(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	p := func(i int) *Page { return f.Fetched(host, fmt.Sprintf("http://h/wishlist/add/%d", i), ClassOther) }
	alike := func(p *Page, sim uint64) bool {
		a, _ := f.ThinAlike(p, sim, nil)
		return a
	}
	base := uint64(0x0123456789abcdef)
	if alike(p(1), base) {
		t.Error("the first thin page alike")
	}
	if !alike(p(2), base^0xff) { // 8 bits away
		t.Error("a page 8 bits from another not alike")
	}
	if alike(p(3), ^base) { // 64 bits away from both
		t.Error("a page far from every other alike")
	}
	for i := range 8 {
		alike(p(10+i), ^base^uint64(1)<<i)
	}
	if alike(p(30), base^1) {
		t.Error("alike to a print the family no longer keeps")
	}
}

// TestFamiliesThinOwnLinks: ThinAlike counts a thin page's links that the
// nearest in links of its family's last thin pages lacks — a form's one
// item, a profile's topics — with repeats counted once, and forgets the
// links of pages past its last few.
func TestFamiliesThinOwnLinks(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	page := func(i int) *Page { return f.Fetched(host, fmt.Sprintf("http://h/u/%d", i), ClassOther) }
	h := func(s string) uint64 { return simhash.Mix(hash(s)) } // as the crawl's link hashes are
	chrome := make([]uint64, 0, 120)
	for i := range 100 {
		chrome = append(chrome, h(fmt.Sprintf("/f/%d/", i)))
	}
	links := func(own ...string) []uint64 {
		l := slices.Clone(chrome)
		for _, o := range own {
			l = append(l, h(o), h(o)) // linked twice: counted once
		}
		slices.Sort(l)
		return l
	}
	own := func(p *Page, l []uint64) int {
		_, n := f.ThinAlike(p, 0, l)
		return n
	}
	if n := own(page(1), links("/t/1/", "/t/2/")); n != 102 {
		t.Errorf("the first thin page has %d links of its own, want all 102", n)
	}
	// A page sharing all but one link with one of the last (the item a
	// form names), and all but three with another.
	own(page(2), links("/t/3/", "/t/4/", "/t/5/"))
	if n := own(page(3), links("/t/1/", "/t/9/")); n != 1 {
		t.Errorf("a page one link apart from one of its family has %d of its own, want 1", n)
	}
	if n := own(page(4), links("/t/6/", "/t/7/", "/t/8/")); n < 2 || n > 3 {
		t.Errorf("a profile of three topics none of its family lists has %d links of its own, want 3 (2 at worst, the filter's)", n)
	}
	// Eight pages later, the first's links are forgotten.
	for i := range 8 {
		own(page(10+i), links(fmt.Sprintf("/x/%d/", i), fmt.Sprintf("/y/%d/", i)))
	}
	if n := own(page(30), links("/t/1/", "/t/2/")); n < 1 {
		t.Errorf("a page like one past the family's last few has %d links of its own, want 2 (1 at worst, the filter's)", n)
	}
}

// TestFamiliesCatalogueList: a later page of a list narrowed once by a
// filter in the path, below a list with later pages of its own, is a
// catalogue's, and so is one of that list itself; a tag's later page,
// below no list, is not; nor is a list narrowed in the query, nor a list
// with no list below it.
func TestFamiliesCatalogueList(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	for _, v := range []string{"red", "blue", "green"} {
		f.Discovered(host, "http://h/shop/"+v+"/")
		f.Discovered(host, "http://h/tags/"+v)
		f.Discovered(host, "http://h/tags/red/"+v)         // intersections
		f.Discovered(host, "http://h/2023/07/"+v+"-post/") // a month's posts
	}
	f.LinkClass(host, "http://h/shop/", ClassOther, "http://h/shop/?page=2")
	f.LinkClass(host, "http://h/tags/red", ClassOther, "http://h/tags/red?page=2")
	h := f.mu.hosts.peek(host)
	for key, want := range map[string]bool{
		"http://h/shop/red/?page=2":    true,
		"http://h/shop/red/p/2/":       true,
		"http://h/shop/red/page-3":     true,
		"http://h/tags/blue?page=2":    false,
		"http://h/shop/?page=3":        true,
		"http://h/search?page=2":       false,
		"http://h/tags/red?page=2":     false,
		"http://h/2023/07/page/2/":     false,
		"http://h/shop/red/?sort=az":   false,
		"http://h/shop/?color=red&p=2": false,
	} {
		if got := f.catalogueList(h, key); got != want {
			t.Errorf("catalogueList(%s) = %v, want %v", key, got, want)
		}
	}
}

// TestFamiliesCatalogueLaterPages: on a host whose later pages show
// nothing new, a taxonomy's later pages stop after NextFree, and a
// catalogue's one-value lists' later pages go on.
func TestFamiliesCatalogueLaterPages(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	f.LinkClass(host, "http://h/shop/", ClassOther, "http://h/shop/?page=2")
	var shop, tags []string
	for i := range 20 {
		v := "v" + string(rune('a'+i))
		f.Discovered(host, "http://h/shop/"+v+"/")
		f.Discovered(host, "http://h/tags/"+v)
	}
	for i := range 20 {
		v := "v" + string(rune('a'+i))
		f.LinkClass(host, "http://h/shop/"+v+"/", ClassOther, "http://h/shop/"+v+"/?page=2")
		f.LinkClass(host, "http://h/tags/"+v, ClassOther, "http://h/tags/"+v+"?page=2")
		shop = append(shop, "http://h/shop/"+v+"/?page=2")
		tags = append(tags, "http://h/tags/"+v+"?page=2")
	}
	fetchPages(f, host, shop[:8], ClassNext, false)
	fetchPages(f, host, tags[:8], ClassNext, false)
	if fam, spent := f.Spent(host, tags[9], ClassNext, false); !spent {
		t.Errorf("a taxonomy's barren later pages not stopped (%s)", fam)
	}
	if fam, spent := f.Spent(host, shop[9], ClassNext, false); spent {
		t.Errorf("a catalogue list's later page refused by %s", fam)
	}
}

// TestFamiliesTagged: a parameter at one value on links to several paths
// is a mark on the links; a filter on one list's path, a page number and
// a parameter on fewer paths are not; the marks followed are bounded.
func TestFamiliesTagged(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	for i, slug := range []string{"a", "b", "c", "d"} {
		got := f.Tagged(host, "http://h/dp/"+slug+"?ref=related")
		if want := i+1 >= tagAfter; got != want {
			t.Errorf("Tagged(/dp/%s?ref=related) = %v after %d paths, want %v", slug, got, i+1, want)
		}
	}
	if f.Tagged(host, "http://h/dp/a?ref=related") != true {
		t.Error("a mark known on enough paths was not seen on a path met before")
	}
	if f.Tagged(host, "http://h/dp/e?ref=home") || f.Tagged(host, "http://h/dp/e") {
		t.Error("another value, or no query, taken for a mark")
	}
	// A filter of one list, linked from many pages, narrows one path.
	for i := range 2 * tagAfter {
		if f.Tagged(host, fmt.Sprintf("http://h/all?col=green&n=%d", i)) {
			t.Fatal("a filter of one list taken for a mark")
		}
	}
	// Later pages of several lists, once page numbers are known.
	for n := 2; n <= 3; n++ {
		f.LinkClass(host, "http://h/news/", ClassOther, fmt.Sprintf("http://h/news/?page=%d", n))
	}
	for _, sec := range []string{"a", "b", "c", "d"} {
		if f.Tagged(host, "http://h/"+sec+"/?page=2") {
			t.Fatalf("a page number on %d lists taken for a mark", tagAfter+1)
		}
	}
	// Bounded: marks beyond maxTags are not followed.
	g := NewFamilies(FamilyConfig{})
	for i := range maxTags + 10 {
		for _, slug := range []string{"a", "b", "c"} {
			g.Tagged(host, fmt.Sprintf("http://h/%s?src=v%d", slug, i))
		}
	}
	if n := len(g.mu.hosts.peek(host).tags); n != maxTags {
		t.Errorf("%d marks followed, want %d", n, maxTags)
	}
	if g.Tagged(host, fmt.Sprintf("http://h/x?src=v%d", maxTags+5)) {
		t.Error("a mark beyond the bound was followed")
	}
}

// TestFamiliesReclass: a link from another section to what the host has
// since shown to be a view of an item is judged as a refinement; a word
// the host does not show as a view, a list's page number written after
// a word, a word at a position where the host shows many (a module of a
// documentation), and links of other classes keep their class.
func TestFamiliesReclass(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	for _, sec := range []string{"alpha", "beta", "gamma"} {
		for _, k := range []string{"/p1/history", "/p1/diff/81234/81240", "/page/2/", "/p1/talk"} {
			f.Discovered(host, "http://h/"+sec+k)
		}
	}
	for _, crate := range []string{"std", "core", "alloc"} {
		for i := range 40 {
			f.Discovered(host, fmt.Sprintf("http://h/%s/mod%c%c/", crate, 'a'+i%26, 'a'+i/26))
		}
	}
	for key, want := range map[string]int{
		"http://h/delta/p9/history":             ClassRefine,
		"http://h/delta/p9/diff/81700/81745":    ClassRefine,
		"http://h/delta/p9/history?pagenum=2":   ClassRefine,
		"http://h/delta/p9/changes":             ClassOther, // not shown as a view
		"http://h/delta/page/3/":                ClassOther, // a list's page
		"http://h/std/modaa/":                   ClassOther, // a module among many
		"http://h/delta/p9":                     ClassOther,
		"http://h/delta/p9/diff/81700/81745.js": ClassOther,
	} {
		if got := f.Reclass(host, key, ClassOther); got != want {
			t.Errorf("Reclass(%s, ClassOther) = %d, want %d", key, got, want)
		}
	}
	for _, class := range []int{ClassNext, ClassRefine, ClassHinted} {
		if got := f.Reclass(host, "http://h/delta/p9/history", class); got != class {
			t.Errorf("Reclass(history, %d) = %d", class, got)
		}
	}
	if got := f.Reclass("http://other", "http://other/delta/p9/history", ClassOther); got != ClassOther {
		t.Errorf("Reclass on a host with no record = %d", got)
	}
}

// TestFamiliesFirstPageLink: a filtered list's later page links its
// first page, with no number: that link shows no later page's shape, so
// the filtered lists themselves (tag intersections) stay judged by what
// they yield; the link to its next page does show it.
func TestFamiliesFirstPageLink(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{})
	for _, tag := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		f.Discovered(host, "http://h/subject/"+tag+"/")
	}
	for _, link := range []string{"http://h/subject/a+b/", "http://h/subject/a+b/?start=30"} {
		f.Discovered(host, link)
		f.LinkClass(host, "http://h/subject/a+b/?start=15", ClassRefine, link)
	}
	h := f.mu.hosts.peek(host)
	if _, ok := h.later[hash(laterShape("/subject/c+d/?start=15"))]; !ok {
		t.Error("a filtered list's link to its next page marked no later page's shape")
	}
	var lists []string
	for _, v := range []string{"c+d", "c+e", "d+e", "d+f", "e+f", "e+g", "f+g", "f+h"} {
		lists = append(lists, "http://h/subject/"+v+"/")
	}
	fetchPages(f, host, lists[:1], ClassRefine, true)
	fetchPages(f, host, lists[1:7], ClassRefine, false)
	if fam, spent := f.Spent(host, lists[7], ClassRefine, false); !spent {
		t.Errorf("barren tag intersections, one of seven yielding, not spent (%s): taken for a filtered list's later pages", fam)
	}
}

// TestFamiliesViewsAll: on a host whose views, all of them, next to never
// yielded, a view that never yielded gets a trial of two pages across
// sections, not a budget of its own; one that yielded, or any view on a
// host whose views yield, keeps its budget.
func TestFamiliesViewsAll(t *testing.T) {
	const host = "http://h"
	setup := func(yields bool) *Families {
		f := NewFamilies(FamilyConfig{})
		for _, sec := range []string{"alpha", "beta", "gamma"} {
			for _, v := range []string{"info", "raw", "backlinks", "source"} {
				f.Discovered(host, "http://h/"+sec+"/p0/"+v)
			}
		}
		for _, v := range []string{"info", "raw", "backlinks"} {
			fetchPages(f, host, keys("http://h/alpha/p%d/"+v, 2), ClassRefine, yields)
			fetchPages(f, host, keys("http://h/beta/p%d/"+v, 2), ClassRefine, false)
		}
		return f
	}
	f := setup(false)
	fetchPages(f, host, keys("http://h/alpha/p%d/source", 1), ClassRefine, false)
	if _, spent := f.Spent(host, "http://h/beta/p7/source", ClassRefine, false); spent {
		t.Error("a view refused before its trial of two")
	}
	fetchPages(f, host, keys("http://h/beta/p%d/source", 1), ClassRefine, false)
	if fam, spent := f.Spent(host, "http://h/gamma/p7/source", ClassRefine, false); !spent {
		t.Errorf("a barren view on a host whose views are all barren not spent after its trial (%s)", fam)
	}
	g := setup(true)
	fetchPages(g, host, keys("http://h/alpha/p%d/source", 1), ClassRefine, false)
	fetchPages(g, host, keys("http://h/beta/p%d/source", 1), ClassRefine, false)
	if fam, spent := g.Spent(host, "http://h/gamma/p7/source", ClassRefine, false); spent {
		t.Errorf("a view refused after two pages on a host whose views yield (%s)", fam)
	}
}

// TestFamiliesFiltersSpent: the later pages of a list's filters in the
// query are judged together, whatever the parameter: once they span
// manyLists lists and coveredRatio of them showed nothing new, they are
// spent, and the refusal says why; when one in four yields, they are
// not; a filtered list's first page is never judged so.
func TestFamiliesFiltersSpent(t *testing.T) {
	const host = "http://h"
	for _, yielding := range []bool{false, true} {
		f := NewFamilies(FamilyConfig{})
		var later []string
		for _, param := range []string{"section", "tag", "author", "year"} {
			for v := range 5 { // five values a parameter: 20 lists
				list := fmt.Sprintf("http://h/articles/?%s=v%d", param, v)
				f.LinkClass(host, "http://h/articles/", ClassOther, list)
				f.Fetched(host, list, ClassRefine)
				from := list
				for k := 2; k <= 3; k++ {
					link := fmt.Sprintf("%s&page=%d", list, k)
					f.LinkClass(host, from, ClassRefine, link)
					later = append(later, link)
					from = link
				}
			}
		}
		for i, k := range later[:coveredRatio] {
			p := f.Fetched(host, k, ClassRefine)
			if yielding && i%4 == 0 {
				f.Yielded(p)
			}
		}
		f.mu.Lock()
		h := f.mu.hosts.peek(host)
		spent, first := f.filtersSpent(h, later[coveredRatio]), f.filtersSpent(h, "http://h/articles/?tag=v9")
		f.mu.Unlock()
		if spent == yielding {
			t.Errorf("yielding %v: the filters' later pages spent %v", yielding, spent)
		}
		if first {
			t.Errorf("yielding %v: a filter's first page taken for a later one", yielding)
		}
	}
	x := Family{Pattern: "/articles/?page&tag", Fetched: [4]int{0, 0, 1, 0}, Refused: 9, FilterLists: 16, FilterFetched: 32}
	if want := "later pages of a list's filters in the query, 16 lists or more over all its parameters, 0 of 32 yielded"; !strings.Contains(x.Evidence(), want) {
		t.Errorf("evidence %q, want it to say %q", x.Evidence(), want)
	}
}

// TestFamiliesFilterRecordsBounded: a host keeps records of filtered
// lists for at most MaxFamilies list paths; later pages of other paths
// are judged by their families alone, and nothing fails.
func TestFamiliesFilterRecordsBounded(t *testing.T) {
	const host = "http://h"
	f := NewFamilies(FamilyConfig{MaxFamilies: 2})
	for i := range 5 {
		list := fmt.Sprintf("http://h/l%d/?tag=a", i)
		f.LinkClass(host, list, ClassRefine, list+"&page=2")
		f.Fetched(host, list+"&page=2", ClassRefine)
		f.Spent(host, list+"&page=3", ClassRefine, true)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.mu.hosts.peek(host)
	if n := len(h.filters); n != 2 {
		t.Fatalf("%d paths' filter records kept, want MaxFamilies, 2", n)
	}
	if f.filterStat(h, "http://h/l4/?tag=a&page=2", false) != nil {
		t.Error("a record for a path past the bound")
	}
}
