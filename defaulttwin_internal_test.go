package gentlecrawl

import (
	"net/url"
	"testing"

	"github.com/gentlecrawl/gentlecrawl/internal/urlspace"
)

// TestDefaultTwin: a copy whose URL differs from the page it repeats only
// by a parameter with the value 0, 1 or nothing (a first page named) is
// no trap: neither URL's pattern is charged; nor one that adds such a
// parameter and lacks others of the page. Any other difference is.
func TestDefaultTwin(t *testing.T) {
	for _, c := range []struct {
		u, of string
		kind  string
		want  bool
	}{
		{"http://h/f?forum=17", "http://h/f?forum=17&pagenum=1", urlspace.DupCopy, true},
		{"http://h/f?forum=17&start=0", "http://h/f?forum=17", urlspace.DupCopy, true},
		{"http://h/f?forum=17&print=", "http://h/f?forum=17", urlspace.DupCopy, true},
		{"http://h/f?forum=17", "http://h/f?forum=17&pagenum=2", urlspace.DupCopy, false},
		{"http://h/f?forum=17", "http://h/f?forum=17&sort=new", urlspace.DupCopy, false},
		{"http://h/f?forum=17", "http://h/f?forum=18&pagenum=1", urlspace.DupCopy, false},
		{"http://h/f?forum=17", "http://h/g?forum=17&pagenum=1", urlspace.DupCopy, false},
		{"http://h/f?forum=17", "http://h/f?forum=17&pagenum=1", urlspace.DupReordered, false},
		{"http://h/f?forum=17", "http://h/f?forum=17", urlspace.DupCopy, false},
		// The first page written out, the page repeated having a
		// parameter more (the board the topic was linked from).
		{"http://h/t?t=5&page=1", "http://h/t?f=3&t=5", urlspace.DupCopy, true},
		{"http://h/t?offset=0&t=5", "http://h/t?f=3&t=5&hl=", urlspace.DupCopy, true},
		// Not the other way round: the board's number is the variant.
		{"http://h/t?f=3&t=5", "http://h/t?t=5&page=1", urlspace.DupCopy, false},
		// Another topic.
		{"http://h/t?t=5&page=1", "http://h/t?f=3&t=6", urlspace.DupCopy, false},
		{"http://h/t?t=5&page=1&f=2", "http://h/t?f=3&t=5", urlspace.DupCopy, false},
		// A parameter of the copy's own beside the first page: the
		// board's number added to the topic's own URL is a variant.
		{"http://h/t?f=3&t=5&page=1", "http://h/t?t=5", urlspace.DupCopy, false},
		{"http://h/t?f=3&t=5&page=1", "http://h/t?t=5&hl=x", urlspace.DupCopy, false},
	} {
		u, _ := url.Parse(c.u)
		if got, _ := defaultTwin(u, urlspace.Dup{Kind: c.kind, Of: c.of}); got != c.want {
			t.Errorf("defaultTwin(%s, %s of %s) = %v, want %v", c.u, c.kind, c.of, got, c.want)
		}
	}
}

// TestDefaultsFound: a default value learned on many paths is one line
// of the summary, with its count, most paths first.
func TestDefaultsFound(t *testing.T) {
	got := defaultsFound(map[string]int{
		"/tags/b?from=0": 1, "/tags/a?from=0": 2, "/tags/c?from=0": 1, "/list?sort=new": 2,
	})
	want := []string{
		"from=0 (the same page as without it on 3 paths, 4 pairs of pages; e.g. /tags/a?from=0)",
		"sort=new (the same page as without it on 1 path, 2 pairs of pages; e.g. /list?sort=new)",
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("defaultsFound = %q, want %q", got, want)
	}
}
