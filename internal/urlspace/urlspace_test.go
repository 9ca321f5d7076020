package urlspace

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

func mustParse(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := urlnorm.Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return u
}

type obs struct{ url, digest string }

func TestLearner(t *testing.T) {
	const host = "http://shop.example"
	tests := []struct {
		name string
		obs  []obs
		want []string // irrelevant parameters
	}{
		{"three values one content", []obs{
			{host + "/p?id=1&ref=a", "D1"},
			{host + "/p?id=1&ref=b", "D1"},
			{host + "/p?ref=c&id=1", "D1"},
		}, []string{"ref"}},
		{"two values are not enough", []obs{
			{host + "/p?id=1&ref=a", "D1"},
			{host + "/p?id=1&ref=b", "D1"},
		}, nil},
		{"the same value thrice is one value", []obs{
			{host + "/p?id=1&ref=a", "D1"},
			{host + "/p?id=1&ref=a", "D1"},
			{host + "/p?id=1&ref=%61", "D1"},
		}, nil},
		{"values that change the content", []obs{
			{host + "/p?id=1", "D1"},
			{host + "/p?id=2", "D2"},
			{host + "/p?id=3", "D3"},
		}, nil},
		{"a counter-example vetoes", []obs{
			{host + "/p?id=1&sort=a", "D1"},
			{host + "/p?id=1&sort=b", "D1"},
			{host + "/p?id=1&sort=c", "D1"},
			{host + "/p?id=2&sort=a", "D2"},
			{host + "/p?id=2&sort=b", "D3"},
		}, nil},
		{"one URL changing content is no counter-example", []obs{
			{host + "/p?id=1&ref=a", "D1"},
			{host + "/p?id=1&ref=b", "D1"},
			{host + "/p?id=1&ref=c", "D1"},
			{host + "/p?id=2&ref=a", "D2"},
			{host + "/p?id=2&ref=a", "D3"},
		}, []string{"ref"}},
		{"session ids are no evidence", []obs{
			{host + "/p?id=1&PHPSESSID=a", "D1"},
			{host + "/p?id=1&PHPSESSID=b", "D1"},
			{host + "/p?id=1&PHPSESSID=c", "D1"},
		}, nil},
		{"two irrelevant parameters varying together", []obs{
			{host + "/p?id=1&ref=a&utm=x", "D1"},
			{host + "/p?id=1&ref=b&utm=x", "D1"},
			{host + "/p?id=1&ref=c&utm=x", "D1"},
			{host + "/p?id=1&ref=d&utm=y", "D1"},
			{host + "/p?id=1&ref=e&utm=z", "D1"},
			{host + "/p?id=1&ref=f&utm=w", "D1"},
		}, []string{"ref", "utm"}},
		{"empty digest ignored", []obs{
			{host + "/p?id=1&ref=a", ""},
			{host + "/p?id=1&ref=b", ""},
			{host + "/p?id=1&ref=c", ""},
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLearner(LearnerConfig{})
			for _, o := range tt.obs {
				l.Observe(mustParse(t, o.url), o.digest)
			}
			var got []string
			for _, p := range l.Irrelevant(host) {
				got = append(got, p.Name)
				if p.Groups < 1 || p.URLs < 3 || len(p.Examples) == 0 {
					t.Errorf("%s: weak evidence %+v", p.Name, p)
				}
				if !l.Drop(host, p.Name) {
					t.Errorf("Drop(%q) = false for an irrelevant parameter", p.Name)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Irrelevant = %q, want %q", got, tt.want)
			}
			if l.Drop(host, "id") || l.Drop("http://other.example", "ref") {
				t.Error("Drop reports a parameter never learned")
			}
		})
	}
}

func TestLearnerEvidenceAndKey(t *testing.T) {
	const host = "http://h.example"
	l := NewLearner(LearnerConfig{})
	for _, v := range []string{"a", "b", "c", "d"} {
		l.Observe(mustParse(t, host+"/p?ref="+v+"&id=1"), "D")
	}
	got := l.Irrelevant(host)
	want := []Param{{Name: "ref", Groups: 1, URLs: 4, Examples: []string{
		host + "/p?id=1&ref=a", host + "/p?id=1&ref=b", host + "/p?id=1&ref=c"}}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Irrelevant = %+v, want %+v", got, want)
	}
	if k := urlnorm.Key(mustParse(t, host+"/p?ref=zz&id=1"), l.DropFunc(host)); k != host+"/p?id=1" {
		t.Errorf("Key with the learned drop = %q", k)
	}
	if h := l.Hosts(); !slices.Equal(h, []string{host}) {
		t.Errorf("Hosts = %q", h)
	}
	// A later counter-example withdraws the parameter.
	l.Observe(mustParse(t, host+"/q?ref=a"), "X1")
	l.Observe(mustParse(t, host+"/q?ref=b"), "X2")
	if l.Drop(host, "ref") {
		t.Error("ref still dropped after a counter-example")
	}
}

func TestLearnerBounded(t *testing.T) {
	l := NewLearner(LearnerConfig{MaxHosts: 2, MaxParams: 2, MaxGroups: 2})
	for h := range 5 {
		for p := range 10 {
			for g := range 10 {
				for v := range 3 {
					l.Observe(mustParse(t, fmt.Sprintf("http://h%d.example/%d?p%d=%d", h, g, p, v)), "D")
				}
			}
		}
	}
	if l.Irrelevant("http://h0.example") != nil {
		t.Error("forgotten host still known")
	}
	got := l.Irrelevant("http://h4.example")
	if len(got) != 2 {
		t.Errorf("host h4: %d parameters learned, want 2 (MaxParams)", len(got))
	}
	// The pages remembered for parameters' absence are bounded too.
	m := NewLearner(LearnerConfig{})
	for i := range maxBare + 100 {
		m.Observe(mustParse(t, fmt.Sprintf("http://h.example/page%d", i)), fmt.Sprint(i))
	}
	if n := m.mu.hosts.peek("http://h.example").bare.Len(); n != maxBare {
		t.Errorf("%d pages remembered for absence, want %d", n, maxBare)
	}
}

func TestCheck(t *testing.T) {
	deep := "http://e.example"
	for i := range 17 {
		deep += fmt.Sprintf("/d%d", i)
	}
	long := "http://e.example/?q="
	for len(long) <= 2000 {
		long += "x"
	}
	tests := []struct {
		url, reason string
	}{
		{"http://e.example/", ""},
		{"http://e.example/a/b/c/d", ""},
		{"http://e.example/a/b/a/c", ""},
		{"http://e.example/a/b/a/b/a/b", ReasonRepeatedSegment},
		{"http://e.example/x/a/x/b/x", ReasonRepeatedSegment},
		{"http://e.example/a/a/a", ReasonRepeatedSegment},
		{"http://e.example/a//b//c//", ""},
		{deep, ReasonPathDepth},
		{deep[:len(deep)-4] + "/", ""},
		{long, ReasonURLLength},
		{"http://e.example/?a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&i=9&j=10", ""},
		{"http://e.example/?a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&i=9&j=10&k=11", ReasonQueryParams},
	}
	for _, tt := range tests {
		c := NewChecker(Limits{})
		ok, reason := c.Check(mustParse(t, tt.url))
		if ok != (tt.reason == "") || reason != tt.reason {
			t.Errorf("Check(%.60q) = %v, %q; want %q", tt.url, ok, reason, tt.reason)
		}
	}
}

func TestCheckLimitsOff(t *testing.T) {
	c := NewChecker(Limits{MaxSegmentRepeats: -1, MaxPathSegments: -1, HostBudget: -1})
	if ok, r := c.Check(mustParse(t, "http://e.example/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a")); !ok {
		t.Errorf("refused with checks off: %s", r)
	}
	c = NewChecker(Limits{MaxSegmentRepeats: 3})
	if ok, _ := c.Check(mustParse(t, "http://e.example/a/a/a")); !ok {
		t.Error("three repeats refused with MaxSegmentRepeats 3")
	}
}

func TestCalendar(t *testing.T) {
	tests := []struct {
		name string
		urls []string
		want []string // reason per URL
	}{
		{"month pages in the path", []string{
			"http://e.example/cal/2024/05", "http://e.example/cal/2025/05/", "http://e.example/cal/2025/06",
			"http://e.example/cal/2023/05", "http://e.example/cal/2023/04",
		}, []string{"", "", ReasonCalendar, "", ReasonCalendar}},
		{"day pages", []string{
			"http://e.example/events/2024-05-17", "http://e.example/events/2030-01-01", "http://e.example/events/2024-12-31",
		}, []string{"", ReasonCalendar, ""}},
		{"YYYY/MM/DD", []string{
			"http://e.example/d/2024/05/17", "http://e.example/d/2026/05/17",
		}, []string{"", ReasonCalendar}},
		{"posts under a date are not a calendar", []string{
			"http://e.example/2024/05/17/hello", "http://e.example/2001/05/17/old-post",
		}, []string{"", ""}},
		{"query year and month", []string{
			"http://e.example/cal?year=2024&month=5&view=m", "http://e.example/cal?month=4&year=2025",
			"http://e.example/cal?month=6&year=2025", "http://e.example/cal?year=2099",
		}, []string{"", "", ReasonCalendar, ""}},
		{"query date value", []string{
			"http://e.example/cal?d=2024-05", "http://e.example/cal?d=2026-05", "http://e.example/cal?d=2024-06-01",
		}, []string{"", ReasonCalendar, ""}},
		{"shapes are separate", []string{
			"http://e.example/a/2024-05", "http://e.example/b/2030-05", "http://e.example/a/2030-05",
		}, []string{"", "", ReasonCalendar}},
		{"with an extension", []string{
			"http://e.example/e/2024-05-17.html", "http://e.example/e/2027-05-17.html", "http://e.example/m/2024/05.php",
			"http://e.example/m/2027/05.php", "http://e.example/f/2027-05-17.tar.gz",
		}, []string{"", ReasonCalendar, "", ReasonCalendar, ""}},
		{"compact days", []string{
			"http://e.example/agenda/day/20240517", "http://e.example/agenda/day/20260517", "http://e.example/e?d=20240601",
			"http://e.example/e?d=20300601", "http://e.example/item/12345678",
		}, []string{"", ReasonCalendar, "", ReasonCalendar, ""}},
		{"not dates", []string{
			"http://e.example/p/1999/88", "http://e.example/p/2024-13", "http://e.example/p/12345/1",
			"http://e.example/p/1999/07", "http://e.example/p/2024/07",
		}, []string{"", "", "", "", ReasonCalendar}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewChecker(Limits{})
			for i, s := range tt.urls {
				_, reason := c.Check(mustParse(t, s))
				if reason != tt.want[i] {
					t.Errorf("Check(%q) reason %q, want %q", s, reason, tt.want[i])
				}
			}
		})
	}
}

func TestBudgetAndCounts(t *testing.T) {
	c := NewChecker(Limits{HostBudget: 3})
	for i := range 5 {
		c.Check(mustParse(t, fmt.Sprintf("http://a.example/%d", i)))
	}
	c.Check(mustParse(t, "http://a.example/x/x/x"))
	c.Check(mustParse(t, "http://b.example/x/x/x"))
	if ok, _ := c.Check(mustParse(t, "http://b.example/ok")); !ok {
		t.Error("another host shares the budget")
	}
	want := map[string]int{ReasonHostBudget: 2, ReasonRepeatedSegment: 1}
	if got := c.Counts("http://a.example"); !maps.Equal(got, want) {
		t.Errorf("Counts = %v, want %v", got, want)
	}
	if got := c.Accepted("http://a.example"); got != 3 {
		t.Errorf("Accepted = %d, want 3", got)
	}
	if got := c.Hosts(); !slices.Equal(got, []string{"http://a.example", "http://b.example"}) {
		t.Errorf("Hosts = %q", got)
	}
	if got := c.Counts("http://unknown.example"); len(got) != 0 {
		t.Errorf("Counts of an unknown host = %v", got)
	}
}

func TestExplosion(t *testing.T) {
	e := NewExplosion(ExplosionConfig{})
	const shop, blog = "http://shop.example", "http://blog.example"
	// A catalog of 20 products behind sort × color facets and a calendar.
	for p := range 20 {
		for s := range 5 {
			for c := range 3 {
				u := mustParse(t, fmt.Sprintf("%s/product/%d?sort=%d&color=%d", shop, p, s, c))
				e.Discover(u)
				e.Observe(u, fmt.Sprint("P", p))
			}
		}
	}
	for m := range 40 {
		e.Observe(mustParse(t, fmt.Sprintf("%s/calendar/2024-%02d", shop, m%12+1)), "empty")
	}
	// A blog of 300 distinct posts.
	for p := range 300 {
		u := mustParse(t, fmt.Sprintf("%s/post/%d", blog, p))
		e.Discover(u)
		e.Observe(u, fmt.Sprint("B", p))
	}
	// Many discovered, few fetched yet: a large site, not an explosion.
	for p := range 5000 {
		e.Discover(mustParse(t, fmt.Sprintf("%s/post/new%d", blog, p)))
	}

	r := e.Report(shop)
	if !r.Exploding || r.URLs != 340 || r.Fetched != 340 || r.Distinct != 21 {
		t.Errorf("shop report %+v", r)
	}
	var top []string
	for _, p := range r.Top {
		top = append(top, p.Pattern)
	}
	if want := []string{"/product/*", "?color", "?sort", "/calendar/*"}; !slices.Equal(top, want) {
		t.Errorf("Top = %q, want %q", top, want)
	}
	if r := e.Report(blog); r.Exploding || r.URLs != 5300 || r.Distinct != 300 {
		t.Errorf("blog report %+v", r)
	}
	if got := e.Exploding(); len(got) != 1 || got[0].Host != shop {
		t.Errorf("Exploding = %+v", got)
	}
	if e.Report("http://unknown.example") != nil {
		t.Error("report for an unknown host")
	}
}

func TestExplosionSmallHost(t *testing.T) {
	e := NewExplosion(ExplosionConfig{})
	for i := range 150 {
		e.Observe(mustParse(t, fmt.Sprintf("http://s.example/?sid=%d", i)), "same")
	}
	if r := e.Report("http://s.example"); r.Exploding {
		t.Errorf("exploding below MinURLs: %+v", r)
	}
}

func TestPatternsBounded(t *testing.T) {
	e := NewExplosion(ExplosionConfig{MaxPatterns: 4})
	for i := range 100 {
		e.Observe(mustParse(t, fmt.Sprintf("http://s.example/x?hot=1&p%d=1", i)), "same")
	}
	r := e.Report("http://s.example")
	if len(r.Top) != 4 || r.Top[0].Pattern != "?hot" && r.Top[0].Pattern != "/x" {
		t.Errorf("Top = %+v", r.Top)
	}
}

func BenchmarkCheck(b *testing.B) {
	urls := []*url.URL{
		mustParse(b, "http://www.example.com/"),
		mustParse(b, "http://shop.example.com/category/shoes/men/running?color=red&size=42&sort=price"),
		mustParse(b, "http://example.com/calendar/2024/05"),
		mustParse(b, "http://example.com/a/b/c/d/e/f/g/h/i/j/index.html"),
	}
	c := NewChecker(Limits{HostBudget: -1})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c.Check(urls[i%len(urls)])
	}
}

func BenchmarkLearnerObserve(b *testing.B) {
	urls := make([]*url.URL, 64)
	for i := range urls {
		urls[i] = mustParse(b, fmt.Sprintf("http://shop.example.com/list?cat=%d&page=%d&sort=price&ref=r%d", i%4, i%8, i))
	}
	l := NewLearner(LearnerConfig{})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		l.Observe(urls[i%len(urls)], "digest")
	}
}

func BenchmarkExplosionObserve(b *testing.B) {
	urls := make([]*url.URL, 64)
	for i := range urls {
		urls[i] = mustParse(b, fmt.Sprintf("http://shop.example.com/list/%d?cat=%d&sort=price", i, i%4))
	}
	e := NewExplosion(ExplosionConfig{})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		e.Observe(urls[i%len(urls)], "digest")
	}
}

// TestCalendarToday: with Today set, calendar pages are judged by their
// distance from it: the future more than CalendarMonths away and the far
// past are suspect, a blog's archive of past months is not.
func TestCalendarToday(t *testing.T) {
	c := NewChecker(Limits{Today: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)})
	for _, tt := range []struct{ url, reason string }{
		{"http://e.example/events/2026-12-05", ""},
		{"http://e.example/events/2027-11-30", ""},
		{"http://e.example/events/2028-01-01", ReasonCalendar},
		{"http://e.example/archive/2009/03", ""},
		{"http://e.example/archive/1998/03", ""},
		{"http://e.example/cal?month=1850-01", ReasonCalendar},
		{"http://e.example/agenda/day/20991231", ReasonCalendar},
	} {
		if _, reason := c.Check(mustParse(t, tt.url)); reason != tt.reason {
			t.Errorf("Check(%s) = %q, want %q", tt.url, reason, tt.reason)
		}
	}
}

// TestLearnerAbsence: a parameter added to several pages (?source=home)
// that never changes them is learned from each page with and without it,
// in either order; one page it changes is a counter-example, and two
// pages are not enough.
func TestLearnerAbsence(t *testing.T) {
	const host = "http://h.example"
	l := NewLearner(LearnerConfig{})
	for i, slug := range []string{"a", "b", "c"} {
		source := []string{"home", "related", "basket"}[i]
		with, without := mustParse(t, host+"/products/"+slug+".html?source="+source), mustParse(t, host+"/products/"+slug+".html")
		if i%2 == 1 {
			with, without = without, with
		}
		l.Observe(with, "D"+slug)
		l.Observe(without, "D"+slug)
		if got := l.Drop(host, "source"); got != (i == 2) {
			t.Fatalf("after %d pages: Drop(source) = %v", i+1, got)
		}
	}
	if got := l.Irrelevant(host); len(got) != 1 || got[0].Name != "source" || got[0].Groups != 3 {
		t.Errorf("Irrelevant = %+v", got)
	}
	// One value that gives the page without it is a default, not an
	// irrelevant parameter: page=1 says nothing of page=2, lang=en
	// nothing of lang=de.
	o := NewLearner(LearnerConfig{})
	for _, b := range []string{"1", "2", "3", "4"} {
		o.Observe(mustParse(t, host+"/board?f="+b), "board"+b)
		o.Observe(mustParse(t, host+"/board?f="+b+"&page=1"), "board"+b)
	}
	if o.Drop(host, "page") {
		t.Error("Drop(page) from its default value alone")
	}
	for _, b := range []string{"1", "2", "3", "4"} {
		o.Observe(mustParse(t, host+"/news?n="+b), "news"+b)
		o.Observe(mustParse(t, host+"/news?lang=en&n="+b), "news"+b)
	}
	if o.Drop(host, "lang") {
		t.Error("Drop(lang) from its default value alone")
	}
	// A page that the parameter changes withdraws it.
	l.Observe(mustParse(t, host+"/products/d.html"), "Dd")
	l.Observe(mustParse(t, host+"/products/d.html?source=home"), "other")
	if l.Drop(host, "source") {
		t.Error("Drop(source) after a counter-example")
	}
	// Absence is only the same URL without the parameter: other
	// parameters must match.
	m := NewLearner(LearnerConfig{})
	for _, id := range []string{"1", "2", "3"} {
		m.Observe(mustParse(t, host+"/v?id="+id), "page"+id)
		m.Observe(mustParse(t, host+"/v?id="+id+"&x=from"+id), "page"+id)
	}
	if !m.Drop(host, "x") {
		t.Error("Drop(x) = false for a parameter that never changed a page")
	}
	n := NewLearner(LearnerConfig{})
	for _, id := range []string{"1", "2", "3"} {
		n.Observe(mustParse(t, host+"/v?id="+id), "page"+id)
		n.Observe(mustParse(t, host+"/v?id=9&x=y"), "page"+id)
	}
	if n.Drop(host, "x") {
		t.Error("Drop(x) from URLs that differ in another parameter")
	}
}

// TestLearnerCampaign: campaign parameters and click ids are dropped on a
// host nothing was learned of; other names are not.
func TestLearnerCampaign(t *testing.T) {
	l := NewLearner(LearnerConfig{})
	for _, n := range []string{"utm_source", "utm_campaign", "utm_anything", "gclid", "fbclid", "msclkid", "mc_eid"} {
		if !l.Drop("http://h", n) {
			t.Errorf("%s kept", n)
		}
	}
	for _, n := range []string{"utm", "utm_", "id", "source", "campaign", "clid"} {
		if l.Drop("http://h", n) {
			t.Errorf("%s dropped", n)
		}
	}
}
