package urlspace

import (
	"fmt"
	"strings"
	"testing"
)

func TestRewriteOf(t *testing.T) {
	for _, c := range []struct {
		of, u string
		want  string // rewrite.String(), "" for none
	}{
		{"http://h/a/1/the-title", "http://h/amp/a/1/the-title", "/amp/…"},
		{"http://h/a/1/the-title?trk=home", "http://h/amp/a/1/the-title", "/amp/…"},
		{"http://h/a/the-title", "http://h/a/the-title/amp", "…/amp"},
		{"http://h/a/the-title/", "http://h/a/the-title/amp/", "…/amp/"},
		{"http://h/wiki/Page", "http://h/wiki/Page/print/view", "…/print/view"},
		{"http://h/a/the-title", "http://h/a/the-title?output=amp", "…?output=amp"},
		{"http://h/t?id=5", "http://h/t?id=5&print=1", "…?print=1"},
		{"http://h/t?id=5", "http://h/t?id=5&page=2", ""}, // a page number
		{"http://h/shoe-p77.html", "http://h/shoe-p77.html?product_id=77", "…?product_id=N"},
		{"http://h/shoe-p77.html", "http://h/shoe-p77.html?product_id=7", ""},
		{"http://h/a/the-title", "http://h/a/the-title/2", ""},
		{"http://h/a/the-title", "http://h/a/the-title-2", ""},
		{"http://h/a/x", "http://h/b/x", ""},
		{"http://h/", "http://h/amp/", ""},
		{"http://h/x", "http://h/x/", ""},
		{"http://h/a/x", "http://h/amp/a/x?ref=1", ""}, // a parameter of its own
		{"http://h/a/x", "http://other/amp/a/x", ""},
	} {
		r, ok := rewriteOf(mustParse(t, c.of), mustParse(t, c.u), false)
		got := ""
		if ok {
			got = r.String()
		}
		if got != c.want {
			t.Errorf("rewriteOf(%s, %s) = %q, want %q", c.of, c.u, got, c.want)
		}
		if ok {
			back := r.undo(mustParse(t, c.u))
			if back == nil || !strings.HasPrefix(c.of, back.String()) {
				t.Errorf("undo(%s) = %v, want %s", c.u, back, c.of)
			}
		}
	}
	// undo leaves URLs that are not the rewrite's alone.
	for _, c := range []struct {
		r rewrite
		u string
	}{
		{rewrite{'p', "/amp"}, "http://h/ampere/x"},
		{rewrite{'p', "/amp"}, "http://h/amp/"},
		{rewrite{'s', "amp/"}, "http://h/tag/camp/"},
		{rewrite{'s', "/amp"}, "http://h/amp"},
		{rewrite{'q', "print=1"}, "http://h/t?id=5&print=2"},
		{rewrite{'q', "product_id=" + ownNumber}, "http://h/hat-p9.html?product_id=8"},
		{rewrite{'q', "product_id=" + ownNumber}, "http://h/hat-p19.html?product_id=9"},
	} {
		if got := c.r.undo(mustParse(t, c.u)); got != nil {
			t.Errorf("%v undo(%s) = %s, want nil", c.r, c.u, got)
		}
	}
}

// TestRewrites: views that rewrite their page's URL the same way (an AMP
// prefix) are spent as one, whatever their templates, and stand for the
// page they rewrite; a rewrite whose pages have content of their own is
// not; a redirect counts one way only.
func TestRewrites(t *testing.T) {
	const host = "http://n.example"
	paging := func(_, name string) bool { return name == "page" }
	p := NewPatterns(PatternConfig{Paging: paging})
	for _, slug := range []string{"one", "two"} {
		p.Fetched(mustParse(t, host+"/amp/a/"+slug), nil, Dup{Kind: DupView, Of: host + "/a/" + slug})
	}
	amp := mustParse(t, host+"/amp/a/four")
	if _, spent := p.Spent(amp, nil, false); spent {
		t.Error("spent after two views")
	}
	// The third pair the other way round: the AMP page fetched first.
	p.Fetched(mustParse(t, host+"/a/three"), nil, Dup{Kind: DupView, Of: host + "/amp/a/three"})
	if pat, spent := p.Spent(amp, nil, true); !spent || pat != "/amp/…" {
		t.Errorf("Spent = %q, %v after three views", pat, spent)
	}
	if to := p.StripVariant(amp, nil); to == nil || to.String() != host+"/a/four" {
		t.Errorf("StripVariant = %v, want %s/a/four", to, host)
	}
	if _, spent := p.Spent(mustParse(t, host+"/ampere/x"), nil, false); spent {
		t.Error("a path that only starts like the prefix was refused")
	}
	var found bool
	for _, tr := range p.Traps(host) {
		if tr.Pattern == "/amp/…" {
			found = tr.Duplicates == 3 && tr.Refused == 1 && tr.Spent && tr.Kinds[DupView] == 3
		}
	}
	if !found {
		t.Errorf("Traps = %+v, want /amp/… with 3 views, 1 refused", p.Traps(host))
	}

	// A sort order whose lists hold the same items as the list unsorted.
	for _, sec := range []string{"a", "b", "c"} {
		p.Fetched(mustParse(t, host+"/"+sec+"/?o=az"), nil, Dup{Kind: DupReordered, Of: host + "/" + sec + "/"})
	}
	if to := p.StripVariant(mustParse(t, host+"/d/?o=az&page=2"), nil); to == nil || to.String() != host+"/d/?page=2" {
		t.Errorf("StripVariant of a sorted list = %v, want %s/d/?page=2", to, host)
	}

	// A page size: copies of short lists under ?show=48 teach nothing
	// alone (a page number's copy looks the same); once one list shown
	// wider has taught it, they count as its views.
	w := NewPatterns(PatternConfig{Paging: paging})
	for _, sec := range []string{"a", "b", "c"} {
		w.Fetched(mustParse(t, host+"/"+sec+"/?show=48"), nil, Dup{Kind: DupCopy, Of: host + "/" + sec + "/"})
	}
	size := mustParse(t, host+"/z/?page=3&show=48")
	if _, spent := w.Spent(size, nil, false); spent {
		t.Error("copies alone taught a numbered rewrite")
	}
	w.Fetched(mustParse(t, host+"/d/?show=48"), nil, Dup{Kind: DupWider, Of: host + "/d/"})
	if _, spent := w.Spent(size, nil, false); spent {
		t.Error("spent after one wider list")
	}
	for _, sec := range []string{"e", "f"} {
		w.Fetched(mustParse(t, host+"/"+sec+"/?show=48"), nil, Dup{Kind: DupCopy, Of: host + "/" + sec + "/"})
	}
	if pat, spent := w.Spent(size, nil, false); !spent || pat != "…?show=48" {
		t.Errorf("Spent = %q, %v after a wider list and two copies", pat, spent)
	}
	if to := w.StripVariant(size, nil); to == nil || to.String() != host+"/z/?page=3" {
		t.Errorf("StripVariant of a page size = %v, want %s/z/?page=3", to, host)
	}
	if _, spent := w.Spent(mustParse(t, host+"/z/?show=96"), nil, false); spent {
		t.Error("another page size, never seen, was refused")
	}

	// A rewrite is undone only into the form of a page it repeated, but
	// for page numbers: a wiki's diff with the previous revision
	// ("?mode=diff&version=3") repeats the revision ("?version=3"); a
	// diff of two ("&to=5") is refused with them, but stands for no
	// "?version=3&to=5", which the wiki does not serve. Without page
	// numbers known, a sorted list's later page stands for nothing.
	d := NewPatterns(PatternConfig{Paging: paging})
	for _, page := range []string{"a", "b", "c"} {
		d.Fetched(mustParse(t, host+"/w/"+page+"?mode=diff&version=3"), nil, Dup{Kind: DupNarrower, Of: host + "/w/" + page + "?version=3"})
	}
	if to := d.StripVariant(mustParse(t, host+"/w/d?mode=diff&version=4"), nil); to == nil || to.String() != host+"/w/d?version=4" {
		t.Errorf("StripVariant of a diff = %v, want %s/w/d?version=4", to, host)
	}
	two := mustParse(t, host+"/w/d?mode=diff&version=4&to=5")
	if _, spent := d.Spent(two, nil, false); !spent {
		t.Error("a diff of two revisions was not refused with the rewrite")
	}
	if to := d.StripVariant(two, nil); to != nil {
		t.Errorf("StripVariant of a diff of two = %v, want none", to)
	}
	// A filter seen to narrow sized lists ("?col=green&sz=10" within
	// "?sz=10") refuses other such combinations, but not the filtered
	// list's own later pages, which list what its first page does not;
	// those pages, new content, leave the rewrite spent. A time window
	// that narrowed the list itself refuses its later pages.
	f := NewPatterns(PatternConfig{Paging: paging})
	for _, sz := range []string{"8", "9", "10"} {
		f.Fetched(mustParse(t, host+"/all?col=green&sz="+sz), nil, Dup{Kind: DupNarrower, Of: host + "/all?sz=" + sz})
	}
	for _, page := range []string{"2", "3"} {
		later := mustParse(t, host+"/all?col=green&page="+page)
		if pat, spent := f.Spent(later, nil, false); spent {
			t.Errorf("a filtered list's later page refused by %q", pat)
		}
		f.Fetched(later, nil, Dup{})
	}
	if pat, spent := f.Spent(mustParse(t, host+"/new?col=green&sz=11"), nil, false); !spent || pat != "…?col=green" {
		t.Errorf("Spent = %q, %v for another sized list filtered, want the filter's rewrite", pat, spent)
	}
	for _, sec := range []string{"a", "b", "c"} {
		f.Fetched(mustParse(t, host+"/"+sec+"/?st=7"), nil, Dup{Kind: DupNarrower, Of: host + "/" + sec + "/"})
	}
	if _, spent := f.Spent(mustParse(t, host+"/d/?st=7&page=2"), nil, false); !spent {
		t.Error("a window's later page was not refused")
	}
	if to := p.StripVariant(mustParse(t, host+"/d/?o=az&page=2&x=1"), nil); to != nil {
		t.Errorf("StripVariant with a parameter no page of the rewrite had = %v, want none", to)
	}
	np := NewPatterns(PatternConfig{})
	for _, sec := range []string{"a", "b", "c"} {
		np.Fetched(mustParse(t, host+"/"+sec+"/?o=az"), nil, Dup{Kind: DupReordered, Of: host + "/" + sec + "/"})
	}
	if to := np.StripVariant(mustParse(t, host+"/d/?o=az&page=2"), nil); to != nil {
		t.Errorf("StripVariant without page numbers known = %v, want none", to)
	}
	if to := np.StripVariant(mustParse(t, host+"/d/?o=az"), nil); to == nil || to.String() != host+"/d/" {
		t.Errorf("StripVariant of a sorted first page = %v, want %s/d/", to, host)
	}

	// Pages of the rewrite with content of their own keep it open.
	q := NewPatterns(PatternConfig{})
	for _, slug := range []string{"a", "b", "c"} {
		q.Fetched(mustParse(t, host+"/en/"+slug), nil, Dup{Kind: DupView, Of: host + "/" + slug})
	}
	for _, slug := range []string{"d", "e"} {
		q.Fetched(mustParse(t, host+"/en/"+slug), nil, Dup{})
	}
	if _, spent := q.Spent(mustParse(t, host+"/en/f"), nil, false); spent {
		t.Error("a rewrite with pages of its own was spent")
	}

	// Copies under a path prefix (a site's soft "not found" pages) teach
	// no path rewrite.
	n := NewPatterns(PatternConfig{})
	for _, slug := range []string{"a", "b", "c", "d"} {
		n.Fetched(mustParse(t, host+"/shop/"+slug), nil, Dup{Kind: DupCopy, Of: host + "/" + slug})
	}
	if _, spent := n.Spent(mustParse(t, host+"/shop/e"), nil, false); spent {
		t.Error("copies taught a path rewrite")
	}

	// A redirect from a page to its rewrite does not make the rewrite a
	// view: "/x" → "/en/x" leaves "/en/y" to be fetched.
	r := NewPatterns(PatternConfig{})
	for _, slug := range []string{"a", "b", "c", "d"} {
		r.Fetched(mustParse(t, host+"/"+slug), nil, Dup{Kind: DupRedirect, Of: host + "/en/" + slug})
	}
	if _, spent := r.Spent(mustParse(t, host+"/en/y"), nil, false); spent {
		t.Error("the target of redirects was refused as a rewrite")
	}
}

// TestRewritesBounded: a host's rewrites are bounded.
func TestRewritesBounded(t *testing.T) {
	const host = "http://n.example"
	p := NewPatterns(PatternConfig{})
	for i := range 3 * maxRewrites {
		pre := "/v" + strings.Repeat("x", i%30) + string(rune('a'+i%26)) + string(rune('a'+i/26))
		p.Fetched(mustParse(t, host+pre+"/a/page"), nil, Dup{Kind: DupView, Of: host + "/a/page"})
	}
	p.mu.Lock()
	n := len(p.mu.hosts.peek(host).rewrites)
	p.mu.Unlock()
	if n != maxRewrites {
		t.Errorf("%d rewrites kept, want %d", n, maxRewrites)
	}
	// The forms of the pages one rewrite repeats are bounded too.
	q := NewPatterns(PatternConfig{})
	for i := range 3 * maxBases {
		of := fmt.Sprintf("%s/w/p%d?v%d=1", host, i, i)
		q.Fetched(mustParse(t, of+"&print=1"), nil, Dup{Kind: DupView, Of: of})
	}
	q.mu.Lock()
	var bases int
	for _, s := range q.mu.hosts.peek(host).rewrites {
		bases = max(bases, len(s.bases))
	}
	q.mu.Unlock()
	if bases != maxBases {
		t.Errorf("%d forms of pages kept for a rewrite, want %d", bases, maxBases)
	}
}
