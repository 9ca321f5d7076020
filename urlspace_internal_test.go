package gentlecrawl

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gentlecrawl/gentlecrawl/internal/simhash"
	"github.com/gentlecrawl/gentlecrawl/internal/urlspace"
	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

func bag(s string) uint64 { return printText([]byte(s)).bag }

func masked(s string) uint64 { return printText([]byte(s)).masked }

func TestTextPrints(t *testing.T) {
	a := bag("red shirt 10 EUR\nblue hat 5 EUR")
	for _, same := range []string{"blue hat 5 EUR red shirt 10 EUR", "  EUR 10 shirt red\t\tEUR 5 hat blue  "} {
		if bag(same) != a {
			t.Errorf("%q: the same words in another order should hash the same", same)
		}
	}
	for _, other := range []string{"red shirt 10 EUR blue hat 6 EUR", "red shirt 10 EUR blue hat 5 EUR EUR", "red shirt 10 EUR"} {
		if bag(other) == a {
			t.Errorf("%q: different words hash the same", other)
		}
	}
	// Masked: two days of a calendar are alike, two products are not.
	day := func(s string) string {
		return "Events " + s + ". No events are scheduled. « Previous day | Next day »"
	}
	if d1, d2 := day("Tuesday, 1 December 2026"), day("Wednesday, 2 December 2026"); bag(d1) == bag(d2) || masked(d1) != masked(d2) {
		t.Errorf("two days: bags differ %v, masked equal %v; want true, true", bag(d1) != bag(d2), masked(d1) == masked(d2))
	}
	if masked(day("2026-12-01")) != masked(day("2027-01-31")) || masked(day("Sep 3rd")) != masked(day("May 12th")) {
		t.Error("numeric dates and abbreviated months should mask alike")
	}
	if masked("Oak chair, 120 EUR") == masked("Pine table, 120 EUR") {
		t.Error("two products that differ in words mask alike")
	}
	if n := testing.AllocsPerRun(100, func() { printText([]byte("a b c d e f 12 March")) }); n != 0 {
		t.Errorf("printText allocates %v times", n)
	}
}

func TestDupIndex(t *testing.T) {
	const origin = "http://a.test"
	u := func(s string) *url.URL {
		v, err := url.Parse(origin + s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	key := func(l *url.URL) string { return l.String() }
	long := strings.Repeat("lorem ipsum dolor sit amet ", 12)
	links := func(ss ...string) []*url.URL {
		var out []*url.URL
		for _, s := range ss {
			out = append(out, u(s))
		}
		return out
	}
	print := func(path, text string, ls []*url.URL) *pagePrint {
		return printPage(u(path), printText([]byte(text)), ls, nil, key)
	}
	d := newDupIndex()
	classify := func(path string, p *pagePrint, parent uint64) string {
		dup, _ := d.classify(origin, u(path), p, parent, nil, key)
		return dup.Kind
	}

	items := links("/i/a", "/i/b", "/i/c", "/i/d", "/i/e", "/")
	home := print("/list", long+" list", items)
	if k := classify("/list", home, 0); k != "" {
		t.Fatalf("the first page is a %s", k)
	}
	// A revisit of the same URL, with the same text or links in another
	// order, is not a repeat of itself.
	if k := classify("/list", home, 0); k != "" {
		t.Errorf("a revisit of the first page is a %s", k)
	}
	if k := classify("/list", print("/list", long+" list", links("/", "/i/e", "/i/d", "/i/c", "/i/b", "/i/a")), 0); k != "" {
		t.Errorf("a revisit with its links reordered is a %s", k)
	}
	// The same long text elsewhere: a copy.
	if k := classify("/list?sid=2", print("/list?sid=2", long+" list", items), 0); k != urlspace.DupCopy {
		t.Errorf("same text: %q, want copy", k)
	}
	// The same links in another order, under the same path: a sort order.
	rev := links("/", "/i/e", "/i/d", "/i/c", "/i/b", "/i/a")
	if k := classify("/list?sort=z", print("/list?sort=z", long+" list sorted by name", rev), 0); k != urlspace.DupReordered {
		t.Errorf("reordered links: %q, want reordered", k)
	}
	// The same links elsewhere in another order, but other text: another
	// page of a site whose pages share one path ("/index.php?title=…",
	// whose links elsewhere are its chrome), not a sort order.
	chrome := links("/", "/about", "/help", "/index", "/contact", "/terms")
	other := strings.Repeat("quite different words about another subject entirely ", 12)
	classify("/index.php?title=a", print("/index.php?title=a", long+" page a", chrome), 0)
	if k := classify("/index.php?title=b", print("/index.php?title=b", other, links("/about", "/", "/help", "/index", "/contact", "/terms")), 0); k != "" {
		t.Errorf("another page with its chrome in another order: %q, want none", k)
	}
	// Under a path that extends the original's: an endless path.
	dir := print("/docs/", long+" docs", links("/"))
	classify("/docs/", dir, 0)
	dup, _ := d.classify(origin, u("/docs/more/"), print("/docs/more/", long+" docs", links("/")), 0, nil, key)
	if dup.Kind != urlspace.DupEndless || dup.Tail != "more/" {
		t.Errorf("endless path: %+v, want endless-path with tail more/", dup)
	}
	// Nearly the text (simhash) of a page whose path it extends: endless.
	dup, _ = d.classify(origin, u("/p/12/reviews/"), print("/p/12/reviews/", long+" other words", links("/")), 0, []string{origin + "/p/12"}, key)
	if dup.Kind != urlspace.DupEndless || dup.Tail != "/reviews/" {
		t.Errorf("near and extending: %+v, want endless-path with tail /reviews/", dup)
	}
	// Nearly the text of a list whose path it extends, but a list of
	// other length: one maker's products below the catalogue, whose cards'
	// words are the catalogue's, is no endless path; a relative link
	// serving the catalogue again serves as many links.
	catalogue := links("/p/1", "/p/2", "/p/3", "/p/4", "/p/5", "/p/6", "/p/7", "/p/8", "/p/9", "/p/10", "/p/11", "/p/12", "/about")
	classify("/c/", print("/c/", long+" catalogue", catalogue), 0)
	dup, _ = d.classify(origin, u("/c/maker/"), print("/c/maker/", long+" catalogue maker", links("/p/21", "/p/22", "/p/23", "/p/24", "/p/25", "/about")), 0, []string{origin + "/c/"}, key)
	if dup.Kind == urlspace.DupEndless {
		t.Errorf("a shorter list of other items near the catalogue's text: %+v, want no endless path", dup)
	}
	shifted := links("/c/x/p/1", "/c/x/p/2", "/c/x/p/3", "/c/x/p/4", "/c/x/p/5", "/c/x/p/6", "/c/x/p/7", "/c/x/p/8", "/c/x/p/9", "/c/x/p/10", "/c/x/p/11", "/c/x/p/12", "/about")
	dup, _ = d.classify(origin, u("/c/x/"), print("/c/x/", long+" catalogue", shifted), 0, []string{origin + "/c/"}, key)
	if dup.Kind != urlspace.DupEndless {
		t.Errorf("the catalogue served again with its relative links shifted: %+v, want endless-path", dup)
	}
	// As many links, to other items in another section: a filter most
	// items' words pass, not the catalogue served again.
	var all, blue []string
	for i := range 12 {
		all = append(all, fmt.Sprintf("/dp/%d", i))
		blue = append(blue, fmt.Sprintf("/dp/%d", 40+i))
	}
	classify("/browse/", print("/browse/", long+" browse", links(append(all, "/about")...)), 0)
	dup, _ = d.classify(origin, u("/browse/blue/"), print("/browse/blue/", long+" browse blue", links(append(blue, "/about")...)), 0, []string{origin + "/browse/"}, key)
	if dup.Kind == urlspace.DupEndless {
		t.Errorf("a list of as many other items near the catalogue's text: %+v, want no endless path", dup)
	}
	dup, _ = d.classify(origin, u("/browse/more/"), print("/browse/more/", long+" browse", links(append(all[1:], "/about", "/browse/more/more/")...)), 0, []string{origin + "/browse/"}, key)
	if dup.Kind != urlspace.DupEndless {
		t.Errorf("the catalogue again, one item and a link below it changed: %+v, want endless-path", dup)
	}
	// Nothing extends the root.
	classify("/", print("/", long+" home", links("/a")), 0)
	if k := classify("/a/", print("/a/", long+" home", links("/b")), 0); k == urlspace.DupEndless {
		t.Error("a copy of the home page under /a/ is an endless path")
	}
	// Short pages with the same text but other links are not copies.
	g1 := print("/g/one", "Gallery next", links("/p/a.jpg", "/g/two"))
	classify("/g/one", g1, 0)
	if k := classify("/g/two", print("/g/two", "Gallery next", links("/p/b.jpg", "/g/three")), 0); k != "" {
		t.Errorf("a short page with other links: %q, want new", k)
	}
	// A calendar: each day like the one before, numbers aside, same links
	// elsewhere.
	dayPage := func(n int) *pagePrint {
		return print("/events/2026-12-0"+string(rune('0'+n)), "Events on Tuesday "+string(rune('0'+n))+" December: none.",
			links("/", "/events/2026-12-0"+string(rune('0'+n-1)), "/events/2026-12-0"+string(rune('0'+n+1))))
	}
	d1 := dayPage(1)
	classify("/events/2026-12-01", d1, 0)
	if k := classify("/events/2026-12-02", dayPage(2), d1.chain()); k != urlspace.DupChain {
		t.Errorf("the next day: %q, want chain", k)
	}
	// Another day reached from elsewhere: a calendar's many entrances.
	if k := classify("/events/2026-12-07", dayPage(7), 0); k != urlspace.DupChain {
		t.Errorf("a day reached from elsewhere: %q, want chain", k)
	}
	// But pages that differ only in a number, outside a chain, are new.
	item := func(n int) *pagePrint {
		return print("/item/"+string(rune('0'+n)), "Item "+string(rune('0'+n))+" costs 1"+string(rune('0'+n))+" EUR", links("/"))
	}
	classify("/item/1", item(1), 0)
	if k := classify("/item/2", item(2), 0); k != "" {
		t.Errorf("an item named by number: %q, want new", k)
	}
	// Not when the page links elsewhere to new URLs (a list's next page).
	p2 := print("/events/2026-12-03", "Events on Tuesday 3 December: none.", links("/", "/i/z", "/events/2026-12-04"))
	if k := classify("/events/2026-12-03", p2, d1.chain()); k != "" {
		t.Errorf("a page with new links elsewhere: %q, want new", k)
	}
}

// TestDupIndexBounded: past its bound the index remembers no more pages —
// later copies of them are missed, never invented — and keeps what it has.
func TestDupIndexBounded(t *testing.T) {
	d := newDupIndex()
	d.max = 10
	key := func(l *url.URL) string { return l.String() }
	page := func(n int) (*url.URL, *pagePrint) {
		u, _ := url.Parse(fmt.Sprintf("http://a.test/p%d", n))
		var links []*url.URL
		for i := range 6 {
			l, _ := url.Parse(fmt.Sprintf("http://a.test/x/%c%d", 'a'+i, n))
			links = append(links, l)
		}
		return u, printPage(u, printText([]byte(strings.Repeat(fmt.Sprintf("w%c%c ", 'a'+n%26, 'a'+n/26), 60))), links, nil, key)
	}
	for n := range 100 {
		u, p := page(n)
		if dup, _ := d.classify("http://a.test", u, p, 0, nil, key); dup.Kind != "" {
			t.Fatalf("page %d: %+v", n, dup)
		}
	}
	if len(d.bags) > 10 || len(d.orders) > 10 || len(d.chains) > 10 {
		t.Errorf("maps hold %d, %d, %d entries, want at most 10 each", len(d.bags), len(d.orders), len(d.chains))
	}
	if d.lists.Len() > maxListEntries {
		t.Errorf("lists hold %d entries, want at most %d", d.lists.Len(), maxListEntries)
	}
	u, p := page(3)
	u.Path += "-again"
	if dup, _ := d.classify("http://a.test", u, p, 0, nil, key); dup.Kind != urlspace.DupCopy {
		t.Errorf("a copy of a remembered page: %+v, want copy", dup)
	}
}

// TestStrippedBounded: pages fetched under unconfirmed fresh parameters are
// remembered up to a bound, and one remembered is matched once the
// parameter is confirmed.
func TestStrippedBounded(t *testing.T) {
	c := &Crawler{space: newSpace()}
	c.space.maxStripped = 5
	const host = "http://a.test"
	page, _ := url.Parse(host + "/")
	for r := range 5 {
		l, _ := url.Parse(fmt.Sprintf("%s/p?tk=a%dz%08d", host, r, r*7919))
		c.space.learner.ObserveLinks(page, []*url.URL{l})
	}
	for n := range 50 {
		u, _ := url.Parse(fmt.Sprintf("%s/p%d?tk=q%dz%08d", host, n, n, n*31))
		c.noteStripped(u)
	}
	if n := len(c.space.mu.stripped); n != 5 {
		t.Errorf("%d pages remembered, want 5", n)
	}
	u, _ := url.Parse(host + "/p1")
	if c.fetchedStripped(u) {
		t.Error("matched before tk was confirmed not to matter")
	}
	c.space.learner.Observe(mustURL(t, host+"/x?tk=b1c2d3e4f5"), "D")
	c.space.learner.Observe(mustURL(t, host+"/x?tk=f5e4d3c2b1"), "D")
	if !c.fetchedStripped(u) {
		t.Error("/p1, fetched as /p1?tk=…, not matched once tk is confirmed")
	}
	if u, _ := url.Parse(host + "/p40"); c.fetchedStripped(u) {
		t.Error("a page past the bound was remembered")
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestPrintPageKeys: the keys the crawl queued links under stand in for
// keyOf only where no parameter rule can change the key (no query, no
// path parameters); elsewhere they are not used.
func TestPrintPageKeys(t *testing.T) {
	parse := func(s string) *url.URL {
		v, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	drop := func(name string) bool { return name == "sort" || name == "jsessionid" }
	keyOf := func(l *url.URL) string { return urlnorm.Key(l, drop) }
	page := parse("http://a.test/list?sort=up")
	var links []*url.URL
	var keys []string
	for _, s := range []string{"http://a.test/x", "http://a.test/y?sort=down&p=2", "http://a.test/z;jsessionid=1", "http://b.test/", "http://a.test/w?p=1"} {
		l := parse(s)
		links = append(links, l)
		k := urlnorm.Key(l, nil) // as queued under another origin's rules
		if l.RawQuery != "" || strings.Contains(l.Path, ";") {
			k = "bogus " + k // must not be used
		}
		keys = append(keys, k)
	}
	text := printText([]byte("some words of a list page"))
	want := printPage(page, text, links, nil, keyOf)
	got := printPage(page, text, links, keys, keyOf)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("with keys %+v\nwithout   %+v", *got, *want)
	}
	// A link not parsed (nil) is its key.
	unparsed := append([]*url.URL{nil}, links[1:]...)
	if got := printPage(page, text, unparsed, keys, keyOf); !reflect.DeepEqual(got, want) {
		t.Errorf("with the first link unparsed %+v\nwant %+v", *got, *want)
	}
	// A key given for a plain link is used.
	keys[0] = "http://a.test/other"
	if got := printPage(page, text, links, keys, keyOf); got.links == want.links {
		t.Error("the key given for a link without query was not used")
	}
}

// dateWord with the prefix test gives what it gave without it: on every
// name, cased and punctuated, on every three-letter word, and on near misses.
func TestDatePrefix(t *testing.T) {
	// The test as it was: trim, then look up.
	reference := func(w []byte) bool {
		for len(w) > 0 && !isLetter(w[0]) {
			w = w[1:]
		}
		for len(w) > 0 && !isLetter(w[len(w)-1]) {
			w = w[:len(w)-1]
		}
		if len(w) < 3 || len(w) > 9 {
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
	words := []string{"jam", "mayor", "sunday1", "sun-day", "thursdays", "decade", "ja", "", "...", "février", "monday'", "mond", "@@@", "0ct"}
	for n := range dateNames {
		words = append(words, n, strings.ToUpper(n), strings.ToUpper(n[:1])+n[1:], "("+n+"),", n+"s")
	}
	for a := 'a'; a <= 'z'; a++ {
		for b := 'a'; b <= 'z'; b++ {
			for c := 'a'; c <= 'z'; c++ {
				words = append(words, string([]rune{a, b, c}))
			}
		}
	}
	dates := 0
	for _, w := range words {
		got, want := dateWord([]byte(w)), reference([]byte(w))
		if got != want {
			t.Errorf("dateWord(%q) = %v, want %v", w, got, want)
		}
		if got {
			dates++
		}
	}
	if dates < 4*len(dateNames) {
		t.Errorf("only %d date words among the names' forms", dates)
	}
}

// refTextPrints is the bag-of-words prints as they were worked out before
// printText read the text once for them and the simhash: the oracle
// printText must agree with.
func refTextPrints(text []byte) (bag, masked uint64, words int) {
	var sum, msum uint64
	for i := 0; i < len(text); {
		for i < len(text) && isSpace(text[i]) {
			i++
		}
		j := i
		digit := false
		for j < len(text) && !isSpace(text[j]) {
			if '0' <= text[j] && text[j] <= '9' {
				digit = true
			}
			j++
		}
		if j == i {
			break
		}
		w := text[i:j]
		x := uint64(14695981039346656037)
		for _, c := range w {
			x ^= uint64(c)
			x *= 1099511628211
		}
		x = simhash.Mix(x)
		sum += x
		switch {
		case digit:
			msum += simhash.Mix(0x23)
		case dateWord(w):
			msum += simhash.Mix(0x40)
		default:
			msum += x
		}
		words++
		i = j
	}
	n := uint64(words) * 0x9e3779b97f4a7c15
	return sum ^ n, msum ^ n, words
}

var printTextSeeds = []string{
	"",
	" ",
	"one",
	"one two",
	"one two three",
	"  EUR 10 shirt red\t\tEUR 5 hat blue  ",
	"foo.bar,baz!qux (a-b) [c/d] e_f",
	"Événement à Zürich: ÉTÉ été — “quoted” 12–14 Σίσυφος ΣΊΣΥΦΟΣ",
	"日本語のテキスト、句読点。数字１２３",
	"bad \xff\xfe utf-8 \xc3 here\xe2\x82 and\x00nul",
	"Tuesday, 1 December 2026. Sept. 3rd; (May) mon-fri",
	"\u00a0nbsp\u00a0inside\u00a0words and\u2003em space",
	"x!!!   !!! ...  --- y",
	"cloud 9 and 0 or 5",
}

func checkPrintText(t *testing.T, text []byte) {
	t.Helper()
	got := printText(text)
	bag, masked, words := refTextPrints(text)
	want := textPrint{sim: simhash.Sum(text), bag: bag, masked: masked, words: words}
	if got != want {
		t.Errorf("printText(%q) = %+v, want %+v", text, got, want)
	}
}

func TestPrintTextMatchesReference(t *testing.T) {
	for _, s := range printTextSeeds {
		checkPrintText(t, []byte(s))
	}
	// Random texts from an alphabet with every class of byte printText
	// tells apart, multi-byte runes and broken sequences among them.
	alphabet := []string{"a", "Z", "7", "9", "0", " ", "\t", "\n", ".", "-", "é", "É", "Σ", "日", "\u00a0", "\u2003", "—", "\xff", "\xc3", "may", "March", "Sun"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b []byte
		for range rng.IntN(40) {
			b = append(b, alphabet[rng.IntN(len(alphabet))]...)
		}
		checkPrintText(t, b)
	}
}

func FuzzPrintText(f *testing.F) {
	for _, s := range printTextSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkPrintText)
}

// TestDupIndexWider: a list shown with more items to a page (a page size)
// holds every link of the list without that parameter, and is a wider
// view of it; a next page, a filter, a "load more" page named by a page
// number and a page that adds a link or two are not.
func TestDupIndexWider(t *testing.T) {
	const origin = "http://a.test"
	key := func(l *url.URL) string { return l.String() }
	list := func(path string, items ...int) (*url.URL, *pagePrint) {
		u, err := url.Parse(origin + path)
		if err != nil {
			t.Fatal(err)
		}
		var links []*url.URL
		for _, s := range []string{"/", "/about", "/cart", "/list?color=red", "/list?color=blue"} {
			l, _ := url.Parse(origin + s)
			links = append(links, l)
		}
		var text strings.Builder
		for _, n := range items {
			l, _ := url.Parse(fmt.Sprintf("%s/p/item-%d", origin, n))
			links = append(links, l, l) // a picture and a title
			fmt.Fprintf(&text, "Item %d costs %d. ", n, n*7)
		}
		return u, printPage(u, printText([]byte(text.String())), links, nil, key)
	}
	span := func(from, to int) []int {
		var out []int
		for n := from; n <= to; n++ {
			out = append(out, n)
		}
		return out
	}
	for _, size := range []int{24, 100} {
		d := newDupIndex()
		classify := func(path string, items []int) urlspace.Dup {
			u, p := list(path, items...)
			dup, _ := d.classify(origin, u, p, 0, nil, key)
			return dup
		}
		if dup := classify("/list", span(1, size)); dup.Kind != "" {
			t.Fatalf("size %d: the list is a %s", size, dup.Kind)
		}
		for _, c := range []struct {
			path  string
			items []int
			want  string
		}{
			{"/list?page=2", span(size+1, 2*size), ""},
			{"/list?color=red", []int{3, 5, 8, 13, 21}, ""},
			{"/list?hl=1", append(span(1, size), 1000), ""}, // a link more
			{fmt.Sprintf("/list?show=%d", 2*size), span(1, 2*size), urlspace.DupWider},
			{"/list?show=all", span(1, 5*size), urlspace.DupWider},
			{"/list?more=3", span(1, 3*size), ""}, // "load more": page 3 holds pages 1 and 2
		} {
			if dup := classify(c.path, c.items); dup.Kind != c.want {
				t.Errorf("size %d: %s: %q, want %q", size, c.path, dup.Kind, c.want)
			} else if c.want != "" && dup.Of != origin+"/list" {
				t.Errorf("size %d: %s: wider of %s, want of /list", size, c.path, dup.Of)
			}
		}
	}
}

// TestDupIndexLaterPageKeepsLinks: a list's next page that keeps most of
// the first page's links (items shown on every page, a sidebar of them)
// and adds a few more than it drops can hold every link of the first
// page's sketch; it is the list's next page, not the list shown wider.
func TestDupIndexLaterPageKeepsLinks(t *testing.T) {
	const origin = "http://a.test"
	key := func(l *url.URL) string { return l.String() }
	item := func(n int) string { return fmt.Sprintf("%s/p/item-%d", origin, n) }
	list := func(path string, items []int) (*url.URL, *pagePrint) {
		u, _ := url.Parse(origin + path)
		var links []*url.URL
		for _, s := range []string{"/", "/about", "/cart", "/help", "/news"} {
			l, _ := url.Parse(origin + s)
			links = append(links, l)
		}
		for _, n := range items {
			l, _ := url.Parse(item(n))
			links = append(links, l)
		}
		return u, printPage(u, printText([]byte("a list")), links, nil, key)
	}
	for _, size := range []int{24, 60, 100} {
		d := newDupIndex()
		first := make([]int, size)
		for i := range first {
			first[i] = i
		}
		u, p := list("/list", first)
		if dup, _ := d.classify(origin, u, p, 0, nil, key); dup.Kind != "" {
			t.Fatalf("size %d: the list is a %s", size, dup.Kind)
		}
		// The next page drops a sixth of the first page's items, none of
		// them in its sketch (which a sample cannot see), and adds four
		// more than it drops.
		inSketch := map[uint64]bool{}
		for _, h := range p.sketch.h[:p.sketch.n] {
			inSketch[h] = true
		}
		var next []int
		dropped := 0
		for _, n := range first {
			if dropped < size/6 && !inSketch[simhash.Mix(hashString(item(n)))] {
				dropped++
				continue
			}
			next = append(next, n)
		}
		for n := range dropped + 4 {
			next = append(next, 1000+n)
		}
		u, p = list("/list?page=2", next)
		if dup, _ := d.classify(origin, u, p, 0, nil, key); dup.Kind != "" {
			t.Errorf("size %d: a next page dropping %d items and adding %d: %s of %s, want new", size, dropped, dropped+4, dup.Kind, dup.Of)
		}
		// The list shown wider still is.
		u, p = list("/list?show=200", append(first, 2000, 2001, 2002, 2003, 2004, 2005))
		if dup, _ := d.classify(origin, u, p, 0, nil, key); dup.Kind != urlspace.DupWider {
			t.Errorf("size %d: the list shown wider: %q, want wider", size, dup.Kind)
		}
	}
}

func TestLinkSketch(t *testing.T) {
	var s linkSketch
	for _, h := range []uint64{50, 10, 30, 10, 90, 20, 70, 60, 40, 80, 100, 110, 120, 5, 130} {
		s.add(h)
	}
	want := []uint64{5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110}
	if !slices.Equal(s.h[:s.n], want) {
		t.Fatalf("sketch %v, want %v", s.h[:s.n], want)
	}
	outs := []uint64{1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 200}
	if !s.heldBy(outs) {
		t.Error("links holding the whole sketch do not hold it")
	}
	if s.heldBy(slices.Delete(outs, 6, 7)) {
		t.Error("links without one of the sketch's hold it")
	}
	var small linkSketch
	for _, h := range []uint64{10, 20, 30} {
		small.add(h)
	}
	if small.heldBy(outs) {
		t.Errorf("a sketch of %d links is held: too little evidence", small.n)
	}
}

// TestDupIndexWiderPager: a list paged in its path ("/c/page/2/") shown
// wider has fewer later pages; its pager's links are not needed.
func TestDupIndexWiderPager(t *testing.T) {
	const origin = "http://a.test"
	key := func(l *url.URL) string { return l.String() }
	list := func(path string, pages int, items int) (*url.URL, *pagePrint) {
		u, _ := url.Parse(origin + path)
		_, q, _ := strings.Cut(path, "?")
		var links []*url.URL
		for _, s := range []string{"/", "/about", "/c/red/", "/c/blue/"} {
			l, _ := url.Parse(origin + s)
			links = append(links, l)
		}
		for n := 2; n <= pages; n++ {
			s := fmt.Sprintf("%s/c/page/%d/", origin, n)
			if q != "" {
				s += "?" + q
			}
			l, _ := url.Parse(s)
			links = append(links, l)
		}
		for n := 1; n <= items; n++ {
			l, _ := url.Parse(fmt.Sprintf("%s/p/%d-item", origin, n))
			links = append(links, l)
		}
		return u, printPage(u, printText([]byte(fmt.Sprintf("a list of %d", items))), links, nil, key)
	}
	d := newDupIndex()
	u, p := list("/c/", 8, 24)
	if dup, _ := d.classify(origin, u, p, 0, nil, key); dup.Kind != "" {
		t.Fatalf("the list is a %s", dup.Kind)
	}
	u, p = list("/c/?show=96", 2, 96)
	if dup, _ := d.classify(origin, u, p, 0, nil, key); dup.Kind != urlspace.DupWider {
		t.Errorf("the list shown 96 to a page: %q, want wider", dup.Kind)
	}
	for _, c := range []struct {
		own, link string
		want      bool
	}{
		{"/c/", "/c/page/2/", true},
		{"/c/", "/c/2/", true},
		{"/c", "/c/page/2", true},
		{"/c/", "/c/red/", false},
		{"/c/", "/c/shirt-12.html", false},
		{"/c/", "/c/a/b/3/", false},
		{"/c", "/c2", false},
		{"/c/", "/d/page/2/", false},
	} {
		if got := pagerLink(c.own, c.link); got != c.want {
			t.Errorf("pagerLink(%q, %q) = %v, want %v", c.own, c.link, got, c.want)
		}
	}
}

// TestDupIndexResorted: a list in another order has as many links and
// the same later pages as the list; a filter has fewer pages, and a page
// number is not an order.
func TestDupIndexResorted(t *testing.T) {
	const origin = "http://a.test"
	key := func(l *url.URL) string { return l.String() }
	for _, pathPager := range []bool{false, true} {
		list := func(path string, pages, first int, count ...int) (*url.URL, *pagePrint) {
			items := 30
			if len(count) > 0 {
				items = count[0]
			}
			u, _ := url.Parse(origin + path)
			p, q, _ := strings.Cut(path, "?")
			var links []*url.URL
			for _, s := range []string{"/", "/about", "/sport/", "/news/?sort=popular"} {
				l, _ := url.Parse(origin + s)
				links = append(links, l)
			}
			for n := 2; n <= pages; n++ {
				s := fmt.Sprintf("%s%s?page=%d", origin, p, n)
				if pathPager {
					s = fmt.Sprintf("%s%spage/%d/", origin, p, n)
				}
				if q != "" {
					s += map[bool]string{false: "&", true: "?"}[pathPager] + q
				}
				l, _ := url.Parse(s)
				links = append(links, l)
			}
			for n := first; n < first+items; n++ {
				l, _ := url.Parse(fmt.Sprintf("%s/a/%d-story", origin, n))
				links = append(links, l)
			}
			return u, printPage(u, printText([]byte(fmt.Sprintf("stories from %d", first))), links, nil, key)
		}
		d := newDupIndex()
		classify := func(path string, pages, first int, count ...int) string {
			u, p := list(path, pages, first, count...)
			dup, _ := d.classify(origin, u, p, 0, nil, key)
			return dup.Kind
		}
		if k := classify("/news/", 10, 1); k != "" {
			t.Fatalf("path pager %v: the list is a %s", pathPager, k)
		}
		for _, c := range []struct {
			path         string
			pages, first int
			want         string
		}{
			{"/news/?cat=local", 4, 500, ""},
			{"/news/?sort=popular", 10, 200, urlspace.DupResorted},
			{"/news/?dir=up&sortby=views", 10, 300, urlspace.DupResorted},
			{"/news/?o=2", 10, 400, ""},
			{"/news/?sort=oldest", 10, 1, urlspace.DupResorted},
		} {
			if k := classify(c.path, c.pages, c.first); k != c.want {
				t.Errorf("path pager %v: %s: %q, want %q", pathPager, c.path, k, c.want)
			}
		}
		// The list narrowed to its newest items; not a later page with
		// few items, nor a search with other items, nor a part of a list
		// of one page (a filter of a short list).
		for _, c := range []struct {
			path                string
			pages, first, count int
			want                string
		}{
			{"/news/?days=7", 1, 1, 8, urlspace.DupNarrower},
			{"/news/?days=30", 2, 1, 30, urlspace.DupNarrower}, // a full first page, fewer pages
			{"/news/?start=270", 1, 271, 5, ""},
			{"/news/?q=storm", 1, 900, 4, ""},
		} {
			if k := classify(c.path, c.pages, c.first, c.count); k != c.want {
				t.Errorf("path pager %v: %s: %q, want %q", pathPager, c.path, k, c.want)
			}
		}
		if k := classify("/short/", 1, 1, 12); k != "" {
			t.Fatalf("the short list is a %s", k)
		}
		if k := classify("/short/?color=red", 1, 3, 4); k != "" {
			t.Errorf("a filter of a list of one page: %q, want new", k)
		}
	}
}

// TestDupIndexTopicLastPage: a topic's last page, whose post or two are
// by members who wrote on its first, links elsewhere to nothing its first
// page does not; its posts are text of its own, so it is a later page,
// not the list narrowed to its newest items.
func TestDupIndexTopicLastPage(t *testing.T) {
	const origin = "http://a.test"
	key := func(l *url.URL) string { return l.String() }
	topic := func(d *dupIndex, start int, members []int, own bool) string {
		s := origin + "/topic.php?t=7"
		if start > 0 {
			s += fmt.Sprintf("&start=%d", start)
		}
		u, _ := url.Parse(s)
		var links []*url.URL
		for _, l := range []string{"/", "/board.php?b=2", "/faq.php"} {
			l, _ := url.Parse(origin + l)
			links = append(links, l)
		}
		for _, n := range []int{0, 11, 22, 33} {
			if n != start {
				l, _ := url.Parse(fmt.Sprintf("%s/topic.php?t=7&start=%d", origin, n))
				links = append(links, l)
			}
		}
		for _, m := range members {
			l, _ := url.Parse(fmt.Sprintf("%s/member.php?u=%d", origin, m))
			links = append(links, l)
		}
		p := printPage(u, printText([]byte(fmt.Sprint("posts from ", start))), links, nil, key)
		p.ownText = own
		dup, _ := d.classify(origin, u, p, 0, nil, key)
		return dup.Kind
	}
	for _, own := range []bool{false, true} {
		d := newDupIndex()
		if k := topic(d, 0, []int{1, 2, 3, 4, 5, 6, 7}, true); k != "" {
			t.Fatalf("the topic's first page: %q", k)
		}
		want := urlspace.DupNarrower // no text of its own: the newest posts
		if own {
			want = ""
		}
		if k := topic(d, 33, []int{2, 5}, own); k != want {
			t.Errorf("text of its own %v: the topic's last page: %q, want %q", own, k, want)
		}
	}
}

// TestDupIndexOwnForm: an item's page that links itself with its own id
// (?add=87425) has one "later page"; that page, showing the item again
// with fewer links, is a view of the item (a form on it), not the list
// narrowed to its newest items.
func TestDupIndexOwnForm(t *testing.T) {
	const origin = "http://a.test"
	key := func(l *url.URL) string { return l.String() }
	// page classifies a page linking the chrome, related items (the
	// first marked of them with "?src=related") and pager.
	page := func(d *dupIndex, s string, related, marked int, pager ...string) string {
		u, _ := url.Parse(origin + s)
		var links []*url.URL
		for _, l := range []string{"/", "/catalog", "/basket", "/help"} {
			l, _ := url.Parse(origin + l)
			links = append(links, l)
		}
		for i := range related {
			mark := ""
			if i < marked {
				mark = "?src=related"
			}
			l, _ := url.Parse(fmt.Sprintf("%s/p/other-%d.html%s", origin, i, mark))
			links = append(links, l)
		}
		for _, l := range pager {
			l, _ := url.Parse(origin + l)
			links = append(links, l)
		}
		dup, _ := d.classify(origin, u, printPage(u, printText([]byte(s)), links, nil, key), 0, nil, key)
		return dup.Kind
	}
	d := newDupIndex()
	if k := page(d, "/p/shirt.html", 6, 0, "/p/shirt.html?add=87425"); k != "" {
		t.Fatalf("the item: %q", k)
	}
	if k := page(d, "/p/shirt.html?add=87425", 2, 0); k != urlspace.DupView {
		t.Errorf("the item's form: %q, want a view (not narrower)", k)
	}
	// The item fetched when two of its links' keys held a parameter
	// since learned not to matter: its form is still a view, but not
	// when the links differ more.
	if k := page(d, "/p/coat.html", 12, 2, "/p/coat.html?add=87426"); k != "" {
		t.Fatalf("the second item: %q", k)
	}
	if k := page(d, "/p/coat.html?add=87426", 12, 0); k != urlspace.DupView {
		t.Errorf("the second item's form, two links keyed otherwise: %q, want a view", k)
	}
	if k := page(d, "/p/hat.html", 12, 6, "/p/hat.html?add=87427"); k != "" {
		t.Fatalf("the third item: %q", k)
	}
	if k := page(d, "/p/hat.html?add=87427", 12, 0); k != "" {
		t.Errorf("a form whose links differ from the item's by six of sixteen: %q, want none", k)
	}
	// A list with later pages of its own is narrowed as before.
	if k := page(d, "/news/", 6, 0, "/news/?page=2", "/news/?page=3", "/news/?days=7"); k != "" {
		t.Fatalf("the list: %q", k)
	}
	if k := page(d, "/news/?days=7", 2, 0); k != urlspace.DupNarrower {
		t.Errorf("the list's newest items: %q, want narrower", k)
	}
}

func TestExtendsQuery(t *testing.T) {
	for _, c := range []struct {
		u, of string
		want  bool
	}{
		{"http://h/p/a.html?add=5", "http://h/p/a.html", true},
		{"http://h/l?c=red&page=2", "http://h/l?c=red", true},
		{"http://h/l?c=red&page=2", "http://h/l?c=blue", false},
		{"http://h/l?page=2", "http://h/l?page=2", false},
		{"http://h/l?page=2", "http://h/m", false},
		{"http://h/l?page=2", "http://g/l", false},
	} {
		u, _ := url.Parse(c.u)
		if got := extendsQuery(u, c.of); got != c.want {
			t.Errorf("extendsQuery(%s, %s) = %v, want %v", c.u, c.of, got, c.want)
		}
	}
}

func TestOwnText(t *testing.T) {
	for _, c := range []struct {
		novel, total int
		want         bool
	}{
		{0, 6, false}, // a list's rows
		{1, 3, false},
		{4, 6, true}, // a post
		{33, 33, true},
		{3, 40, false}, // a date or a counter in a long page
	} {
		if got := ownText(c.novel, c.total); got != c.want {
			t.Errorf("ownText(%d, %d) = %v, want %v", c.novel, c.total, got, c.want)
		}
	}
}

// TestDupIndexListsBounded: the lists remembered for wider, resorted and
// narrowed views are the latest ones, up to the bound; a view of a list
// forgotten is missed, never invented.
func TestDupIndexListsBounded(t *testing.T) {
	d := newDupIndex()
	d.lists = urlspace.NewFIFOMap[uint64, listEntry](10)
	key := func(l *url.URL) string { return l.String() }
	page := func(path string, items int) (*url.URL, *pagePrint) {
		u, _ := url.Parse("http://a.test" + path)
		var links []*url.URL
		for i := range items {
			l, _ := url.Parse(fmt.Sprintf("http://a.test/item/%s-%d", strings.Trim(strings.Split(path, "?")[0], "/"), i))
			links = append(links, l)
		}
		return u, printPage(u, printText([]byte(path)), links, nil, key)
	}
	for n := range 30 {
		u, p := page(fmt.Sprintf("/l%d/", n), 20)
		d.classify("http://a.test", u, p, 0, nil, key)
	}
	if d.lists.Len() != 10 {
		t.Fatalf("lists hold %d entries, want 10", d.lists.Len())
	}
	u, p := page("/l29/?show=40", 40)
	if dup, _ := d.classify("http://a.test", u, p, 0, nil, key); dup.Kind != urlspace.DupWider {
		t.Errorf("a wider view of a list remembered: %q, want wider", dup.Kind)
	}
	u, p = page("/l0/?show=40", 40)
	if dup, _ := d.classify("http://a.test", u, p, 0, nil, key); dup.Kind != "" {
		t.Errorf("a wider view of a list forgotten: %q, want new", dup.Kind)
	}
}

// TestDupCountsBounded: the summary's duplicate counts are kept only for
// origins with something to count, and for maxDupHosts of them at most,
// however many hosts the crawl meets.
func TestDupCountsBounded(t *testing.T) {
	s := newSpace()
	u := func(host, path string) *url.URL {
		v, err := url.Parse("http://" + host + path)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for i := range 1000 {
		s.notePage(u(fmt.Sprintf("u%d.test", i), "/"), uint64(i)*0x9e3779b97f4a7c15, nil) // nothing to count
	}
	if n := len(s.mu.hosts); n != 0 {
		t.Errorf("%d origins counted for pages that repeat nothing", n)
	}
	for i := range maxDupHosts + 100 {
		host := fmt.Sprintf("h%d.test", i)
		s.notePage(u(host, "/a"), uint64(i+1000)*0x9e3779b97f4a7c15, u(host, "/b")) // canonical elsewhere
		s.noteNofollow("http://"+host, 2)
	}
	if n := len(s.mu.hosts); n != maxDupHosts {
		t.Errorf("%d origins counted, want the bound %d", n, maxDupHosts)
	}
	if d := s.mu.hosts["http://h0.test"]; d == nil || d.canonical != 1 || d.nofollow != 2 {
		t.Errorf("first origin's counts: %+v", d)
	}
	if r := s.report()["http://h0.test"]; r == nil || r.CanonicalElsewhere != 1 || r.NofollowLinks != 2 {
		t.Errorf("first origin's report: %+v", r)
	}
}
