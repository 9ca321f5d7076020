package urlspace

import (
	"fmt"
	"net/url"
	"testing"
)

func TestTemplate(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://a.test/events/2026/12/01", "/events/*/*/*"},
		{"http://a.test/catalog?sort=price&page=2&sid=0123456789abcdef0123", "/catalog?page&sort"},
		{"http://a.test/item/12/reviews/", "/item/*/reviews/"},
		{"http://a.test/p;jsessionid=ABC123/x?a=1&a=2", "/p/x?a"},
		{"http://a.test/", "/"},
	} {
		if got := Template(mustParse(t, c.in), nil); got != c.want {
			t.Errorf("Template(%s) = %q, want %q", c.in, got, c.want)
		}
	}
	drop := func(name string) bool { return name == "trk" }
	if got := Template(mustParse(t, "http://a.test/x?trk=1&b=2"), drop); got != "/x?b" {
		t.Errorf("with drop: %q, want /x?b", got)
	}
}

func TestPatterns(t *testing.T) {
	p := NewPatterns(PatternConfig{})
	day := func(n int) string { return fmt.Sprintf("http://a.test/events/2026-12-%02d", n) }
	p.Fetched(mustParse(t, day(1)), nil, Dup{})
	for n := 2; n <= 3; n++ {
		p.Fetched(mustParse(t, day(n)), nil, Dup{Kind: DupChain, Of: day(n - 1)})
		if _, spent := p.Spent(mustParse(t, day(9)), nil, false); spent {
			t.Fatalf("spent after %d duplicates", n-1)
		}
	}
	p.Fetched(mustParse(t, day(4)), nil, Dup{Kind: DupChain, Of: day(3)})
	if pat, spent := p.Spent(mustParse(t, day(9)), nil, true); !spent || pat != "/events/*" {
		t.Errorf("after 3 duplicates and 1 new page: %q %v, want /events/* spent", pat, spent)
	}
	// A pattern with more new pages than duplicates keeps its budget.
	for n := range 10 {
		p.Fetched(mustParse(t, fmt.Sprintf("http://a.test/item/%d", n)), nil, Dup{})
	}
	for n := range 5 {
		p.Fetched(mustParse(t, fmt.Sprintf("http://a.test/item/%d", n+20)), nil, Dup{Kind: DupCopy})
	}
	if _, spent := p.Spent(mustParse(t, "http://a.test/item/99"), nil, false); spent {
		t.Error("a pattern with 10 new pages and 5 copies was judged spent")
	}
	// Endless paths are charged by their tail, whatever the path before.
	for _, s := range []string{"/a/more/", "/b/c/more/", "/d/more/"} {
		p.Fetched(mustParse(t, "http://a.test"+s), nil, Dup{Kind: DupEndless, Of: "x", Tail: "more/"})
	}
	if pat, spent := p.Spent(mustParse(t, "http://a.test/zz/more/"), nil, true); !spent || pat != "…/more/" {
		t.Errorf("endless tail: %q %v, want …/more/ spent", pat, spent)
	}
	traps := p.Traps("http://a.test")
	if len(traps) != 3 {
		t.Fatalf("traps: %+v, want 3", traps)
	}
	for _, tr := range traps {
		switch tr.Pattern {
		case "/events/*":
			if !tr.Spent || tr.Duplicates != 3 || tr.Fetched != 4 || tr.Refused != 1 || tr.Kinds[DupChain] != 3 || len(tr.Examples) != 3 {
				t.Errorf("calendar trap: %+v", tr)
			}
		case "…/more/":
			if !tr.Spent || tr.Refused != 1 {
				t.Errorf("endless trap: %+v", tr)
			}
		case "/item/*":
			if tr.Spent {
				t.Errorf("item pattern spent: %+v", tr)
			}
		default:
			t.Errorf("unexpected trap %+v", tr)
		}
	}
	// A plain list fetched after its sort order: the sort order's pattern
	// is charged, not the list's.
	for n := range 4 {
		p.Fetched(mustParse(t, fmt.Sprintf("http://c.test/list?page=%d&sort=name", n)), nil, Dup{})
		p.Fetched(mustParse(t, fmt.Sprintf("http://c.test/list?page=%d", n)), nil,
			Dup{Kind: DupCopy, Of: "the sorted list", OfTemplate: "/list?page&sort"})
	}
	if _, spent := p.Spent(mustParse(t, "http://c.test/list?page=9"), nil, false); spent {
		t.Error("the plain list's pattern was charged for its sort order")
	}
	if _, spent := p.Spent(mustParse(t, "http://c.test/list?page=9&sort=price"), nil, false); !spent {
		t.Error("the sort order's pattern was not charged")
	}
	// A tail made only of slashes is never a pattern.
	p.Fetched(mustParse(t, "http://b.test/x/"), nil, Dup{Kind: DupEndless, Tail: "/"})
	if _, spent := p.Spent(mustParse(t, "http://b.test/y/"), nil, false); spent {
		t.Error("a slash tail was charged")
	}
}

func TestPatternBudgetsBounded(t *testing.T) {
	p := NewPatterns(PatternConfig{MaxPatterns: 4, MaxHosts: 2})
	for i := range 100 {
		p.Fetched(mustParse(t, fmt.Sprintf("http://h%d.test/a%c/x", i%3, 'a'+i%26)), nil, Dup{Kind: DupCopy})
	}
	for i := range 3 {
		p.mu.Lock()
		h := p.mu.hosts.peek(fmt.Sprintf("http://h%d.test", i))
		if h != nil && len(h.templates) > 4 {
			t.Errorf("host %d keeps %d patterns, want at most 4", i, len(h.templates))
		}
		p.mu.Unlock()
	}
	if n := len(p.Hosts()); n > 2 {
		t.Errorf("%d hosts kept, want at most 2", n)
	}
}

func TestFreshParams(t *testing.T) {
	const host = "http://a.test"
	l := NewLearner(LearnerConfig{})
	page := mustParse(t, host+"/")
	// Four responses, each with its own token on every link, and a page
	// number and an item id that recur.
	for r := range 4 {
		tok := fmt.Sprintf("a%07dx9f%d", r*7919, r)
		var links []*url.URL
		for i := range 3 {
			links = append(links, mustParse(t, fmt.Sprintf("%s/item?id=%d&vq=%s", host, i, tok)))
			links = append(links, mustParse(t, fmt.Sprintf("%s/list?page=%d&vq=%s", host, i, tok)))
		}
		l.ObserveLinks(page, links)
	}
	if !l.Fresh(host, "vq") {
		t.Error("a token new on every response is not fresh")
	}
	for _, name := range []string{"id", "page"} {
		if l.Fresh(host, name) {
			t.Errorf("%s, whose values recur, is fresh", name)
		}
	}
	// Fresh is not dropped until content agrees: one pair with one content.
	if l.Drop(host, "vq") {
		t.Error("dropped before any content was seen")
	}
	l.Observe(mustParse(t, host+"/item?id=1&vq=aa11bb22cc"), "D1")
	l.Observe(mustParse(t, host+"/item?id=1&vq=dd33ee44ff"), "D1")
	if !l.Drop(host, "vq") {
		t.Error("a fresh parameter with one content for two values is not dropped")
	}
	if ps := l.Irrelevant(host); len(ps) != 1 || ps[0].Fresh != 4 {
		t.Errorf("evidence: %+v, want vq with 4 fresh values", ps)
	}
	// Short tokens (six characters) are tokens too; short words are not.
	l4 := NewLearner(LearnerConfig{})
	for r := range 4 {
		l4.ObserveLinks(page, []*url.URL{
			nil, // a link the caller did not parse: ignored
			mustParse(t, fmt.Sprintf("%s/a?v=%c%d%c%d%c%d", host, 'a'+r, r, 'k'+r, r+3, 'x'-r, r+5)),
			mustParse(t, fmt.Sprintf("%s/b?w=%s", host, []string{"red", "green", "blue", "black"}[r])),
		})
	}
	if !l4.Fresh(host, "v") || l4.Fresh(host, "w") {
		t.Errorf("fresh: v %v (want true), w %v (want false)", l4.Fresh(host, "v"), l4.Fresh(host, "w"))
	}
	// A cursor is fresh too, but its values give other content: kept.
	l2 := NewLearner(LearnerConfig{})
	for r := range 5 {
		l2.ObserveLinks(page, []*url.URL{mustParse(t, fmt.Sprintf("%s/feed?cursor=c%dz%08d", host, r, r*31337))})
	}
	l2.Observe(mustParse(t, host+"/feed?cursor=c1z00031337"), "D1")
	l2.Observe(mustParse(t, host+"/feed?cursor=c2z00062674"), "D2")
	if !l2.Fresh(host, "cursor") || l2.Drop(host, "cursor") {
		t.Errorf("cursor: fresh %v, dropped %v; want fresh and kept", l2.Fresh(host, "cursor"), l2.Drop(host, "cursor"))
	}
	// Path parameters too.
	l3 := NewLearner(LearnerConfig{})
	for r := range 4 {
		l3.ObserveLinks(page, []*url.URL{mustParse(t, fmt.Sprintf("%s/p;vs=k%dq%09d/x", host, r, r*7))})
	}
	l3.Observe(mustParse(t, host+"/p;vs=k1q000000007/x"), "D")
	l3.Observe(mustParse(t, host+"/p;vs=k2q000000014/x"), "D")
	if !l3.Drop(host, ";vs") {
		t.Error("a fresh path parameter is not dropped")
	}
}

func TestTokenVariants(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"http://a.test/c/1/;ws=K9PT7NLLC3DT?o=1", "http://a.test/c/1/;ws=G6RDQZGZ7I43?o=1", true},
		{"http://a.test/c?x=9f3a77c2e1&p=2", "http://a.test/c?p=2&x=0b12cc9e44", true},
		{"http://a.test/c?x=9f3a77c2e1&p=2", "http://a.test/c?x=0b12cc9e44&p=3", false},
		{"http://a.test/c?sort=name", "http://a.test/c?sort=price", false},
		{"http://a.test/c?x=9f3a77c2e1", "http://a.test/c?x=9f3a77c2e1", false},
		{"http://a.test/c?x=9f3a77c2e1", "http://a.test/d?x=0b12cc9e44", false},
		{"http://a.test/c?x=9f3a77c2e1", "http://b.test/c?x=0b12cc9e44", false},
		{"http://a.test/?trk=1508884063645", "http://a.test/", true},
		{"http://a.test/c?p=2", "http://a.test/c?p=2&trk=a1b2c3d4e5", true},
		{"http://a.test/c?p=2", "http://a.test/c?p=2&sort=name", false},
		{"http://a.test/c?p=2", "http://a.test/c", false},
		{"http://a.test/c?v=a3f9c2", "http://a.test/c?v=0b7e14", true},
		{"http://a.test/c?v=2024", "http://a.test/c?v=2025", false},
	} {
		if got := TokenVariants(mustParse(t, c.a), mustParse(t, c.b)); got != c.want {
			t.Errorf("TokenVariants(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestFreshBounded: a parameter's values are remembered up to
// maxFreshValues; past that it is still counted, and still fresh.
func TestFreshBounded(t *testing.T) {
	const host = "http://a.test"
	l := NewLearner(LearnerConfig{})
	page := mustParse(t, host+"/")
	for r := range maxFreshValues + 100 {
		l.ObserveLinks(page, []*url.URL{mustParse(t, fmt.Sprintf("%s/x?tk=k%dq%06d", host, r, r*7))})
	}
	l.mu.Lock()
	f := l.mu.hosts.peek(host).fresh["tk"]
	kept, distinct := len(f.values), f.distinct
	l.mu.Unlock()
	if kept != maxFreshValues || distinct != maxFreshValues+100 {
		t.Errorf("%d values kept, %d counted; want %d and %d", kept, distinct, maxFreshValues, maxFreshValues+100)
	}
	if !l.Fresh(host, "tk") {
		t.Error("no longer fresh past the bound")
	}
}

func TestKeyRequestURI(t *testing.T) {
	for in, want := range map[string]string{
		"http://a.test/x/y?q=1": "/x/y?q=1",
		"http://a.test":         "/",
		"http://a.test?q=/z":    "/?q=/z",
		"https://a.test:8080/":  "/",
		"/already/a/path":       "/already/a/path",
	} {
		if got := KeyRequestURI(in); got != want {
			t.Errorf("KeyRequestURI(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestStripVariant: a pattern spent on redirects to known pages that
// each dropped the same parameter gives, for its other URLs, the URL
// without it; redirects that led elsewhere, or a pattern not spent, give
// nothing.
func TestStripVariant(t *testing.T) {
	const host = "http://f.example"
	p := NewPatterns(PatternConfig{})
	for _, id := range []string{"1", "2", "3"} {
		to := host + "/thread.php?t=" + id
		if id == "2" {
			to += "&page=4" // the last page of a longer topic
		}
		p.Fetched(mustParse(t, host+"/thread.php?t="+id+"&goto=newpost"), nil, Dup{Kind: DupRedirect, Of: to})
	}
	got := p.StripVariant(mustParse(t, host+"/thread.php?t=77&goto=newpost"), nil)
	if got == nil || got.String() != host+"/thread.php?t=77" {
		t.Fatalf("StripVariant = %v, want %s/thread.php?t=77", got, host)
	}
	if got := p.StripVariant(mustParse(t, host+"/thread.php?t=77"), nil); got != nil {
		t.Errorf("a URL of another pattern: %v", got)
	}

	q := NewPatterns(PatternConfig{})
	q.Fetched(mustParse(t, host+"/go?to=1"), nil, Dup{Kind: DupRedirect, Of: host + "/item/1"})
	for _, id := range []string{"2", "3"} {
		q.Fetched(mustParse(t, host+"/go?to="+id), nil, Dup{Kind: DupRedirect, Of: host + "/go"})
	}
	if got := q.StripVariant(mustParse(t, host+"/go?to=9"), nil); got != nil {
		t.Errorf("redirects elsewhere: %v", got)
	}
	// Copies of pages that only add parameters: the same.
	c := NewPatterns(PatternConfig{})
	for _, id := range []string{"1", "2", "3"} {
		c.Fetched(mustParse(t, host+"/viewtopic.php?fid=2&tid="+id+"&offset=0"), nil, Dup{Kind: DupCopy, Of: host + "/viewtopic.php?tid=" + id})
	}
	if got := c.StripVariant(mustParse(t, host+"/viewtopic.php?fid=2&tid=9&offset=0"), nil); got == nil || got.String() != host+"/viewtopic.php?tid=9" {
		t.Errorf("StripVariant of a copy = %v, want %s/viewtopic.php?tid=9", got, host)
	}
	// Variants fetched before the pages they stand for count as new
	// until those pages turn up as their copies; three such pairs with
	// the same parameters dropped spend the pattern all the same.
	v := NewPatterns(PatternConfig{})
	for id := range 8 {
		v.Fetched(mustParse(t, fmt.Sprintf("%s/show.php?forum=%d&topic=%d&offset=0", host, 2+id, id)), nil, Dup{})
	}
	for id := range 3 {
		v.Fetched(mustParse(t, fmt.Sprintf("%s/show.php?topic=%d", host, id)), nil,
			Dup{Kind: DupCopy, Of: fmt.Sprintf("%s/show.php?forum=%d&topic=%d&offset=0", host, 2+id, id), OfTemplate: "/show.php?forum&offset&topic"})
	}
	if got := v.StripVariant(mustParse(t, host+"/show.php?forum=3&topic=99&offset=0"), nil); got == nil || got.String() != host+"/show.php?topic=99" {
		t.Errorf("StripVariant of a variant fetched first = %v, want %s/show.php?topic=99", got, host)
	}
	if _, spent := v.Spent(mustParse(t, host+"/show.php?forum=3&topic=99&offset=0"), nil, false); !spent {
		t.Error("a pattern of variants not spent")
	}
	// Copies of a page addressed another way ("?pid=9" for a topic's
	// second page) are not variants: the other pages of the pattern are
	// pages.
	x := NewPatterns(PatternConfig{})
	for id := range 8 {
		x.Fetched(mustParse(t, fmt.Sprintf("%s/vt.php?tid=%d&offset=18", host, id)), nil, Dup{})
	}
	for id := 8; id < 11; id++ {
		x.Fetched(mustParse(t, fmt.Sprintf("%s/vt.php?tid=%d&offset=18", host, id)), nil, Dup{Kind: DupCopy, Of: fmt.Sprintf("%s/vt.php?pid=%d", host, 100+id)})
	}
	if _, spent := x.Spent(mustParse(t, host+"/vt.php?tid=50&offset=18"), nil, false); spent {
		t.Error("a pattern whose copies were of pages addressed otherwise was spent as variants")
	}
	// The value that was the same in every pair ("offset=0") is part of
	// the evidence: "offset=18" is another page.
	if _, spent := v.Spent(mustParse(t, host+"/show.php?forum=3&topic=99&offset=18"), nil, false); spent {
		t.Error("a later page of the pattern was refused")
	}
	if got := v.StripVariant(mustParse(t, host+"/show.php?forum=3&topic=99&offset=18"), nil); got != nil {
		t.Errorf("StripVariant of a later page = %v", got)
	}
	// A pattern's pages that repeat variants of themselves fetched first
	// ("/thread/5/" a copy of "/thread/5/?st=0") do not make the pattern
	// one of variants: its pages are the pages.
	w := NewPatterns(PatternConfig{})
	for id := range 20 {
		w.Fetched(mustParse(t, fmt.Sprintf("%s/thread/%d/", host, id)), nil, Dup{})
	}
	for id := 20; id < 23; id++ {
		w.Fetched(mustParse(t, fmt.Sprintf("%s/thread/%d/", host, id)), nil, Dup{Kind: DupCopy, Of: fmt.Sprintf("%s/thread/%d/?st=0", host, id)})
	}
	if _, spent := w.Spent(mustParse(t, host+"/thread/99/"), nil, false); spent {
		t.Error("a pattern whose pages repeated their own variants was spent")
	}
	r := NewPatterns(PatternConfig{})
	r.Fetched(mustParse(t, host+"/thread.php?t=1&goto=newpost"), nil, Dup{Kind: DupRedirect, Of: host + "/thread.php?t=1"})
	if got := r.StripVariant(mustParse(t, host+"/thread.php?t=2&goto=newpost"), nil); got != nil {
		t.Errorf("a pattern not spent: %v", got)
	}
}

// TestPatternsFirstPageNamed: a topic's first page named in the path
// ("/topic/a-12/page-1", the topic again) is a default value, not an
// endless path: it does not spend the pattern the topic's later pages
// share ("/topic/*/*"), nor make a tail of its own.
func TestPatternsFirstPageNamed(t *testing.T) {
	p := NewPatterns(PatternConfig{})
	for n := range 4 {
		p.Fetched(mustParse(t, fmt.Sprintf("http://a.test/topic/t-%d/page-1", n)), nil, Dup{Kind: DupEndless, Of: "x", Tail: "page-1"})
	}
	p.Fetched(mustParse(t, "http://a.test/topic/t-0/page-2"), nil, Dup{})
	if pat, spent := p.Spent(mustParse(t, "http://a.test/topic/t-9/page-3"), nil, false); spent {
		t.Errorf("a topic's later page refused by %q", pat)
	}
	// Once its first pages named are spent on copies of their topics, a
	// first page named stands for its topic (StripVariant), whatever the
	// topic; the topics' later pages are another pattern.
	q := NewPatterns(PatternConfig{})
	for n := range 3 {
		of := fmt.Sprintf("http://a.test/topic/t-%d/", n)
		q.Fetched(mustParse(t, of+"page/1/"), nil, Dup{Kind: DupCopy, Of: of, OfTemplate: "/topic/*/"})
	}
	if _, spent := q.Spent(mustParse(t, "http://a.test/topic/t-9/page/1/"), nil, false); !spent {
		t.Error("a first page named not refused after three copies")
	}
	if got := q.StripVariant(mustParse(t, "http://a.test/topic/t-9/page/1/"), nil); got == nil || got.String() != "http://a.test/topic/t-9/" {
		t.Errorf("StripVariant of a first page named = %v, want its topic", got)
	}
	if pat, spent := q.Spent(mustParse(t, "http://a.test/topic/t-9/page/3/"), nil, false); spent {
		t.Errorf("a topic's later page refused by %q", pat)
	}
	r := NewPatterns(PatternConfig{})
	for n := range 3 {
		of := fmt.Sprintf("http://a.test/t/x%d", n)
		r.Fetched(mustParse(t, of+"/page-1"), nil, Dup{Kind: DupCopy, Of: of, OfTemplate: "/t/*"})
	}
	if got := r.StripVariant(mustParse(t, "http://a.test/t/y9/page-1"), nil); got == nil || got.String() != "http://a.test/t/y9" {
		t.Errorf("StripVariant of a first page named in one segment = %v, want http://a.test/t/y9", got)
	}
	for tail, want := range map[string]bool{"page-1": true, "p/1/": true, "?start=0": true, "page-2": false, "more/": false, "2024/1": false} {
		if got := firstPageTail(tail); got != want {
			t.Errorf("firstPageTail(%q) = %v, want %v", tail, got, want)
		}
	}
}
