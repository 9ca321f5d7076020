package cli

import (
	"strings"
	"testing"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
)

// TestSummaryURLSpace: the crawl's text summary tells the site owner
// what the crawl found in the URL space — default values, rel=nofollow
// links and what they cost, URL families that yielded nothing — not only
// in the JSON.
func TestSummaryURLSpace(t *testing.T) {
	s := &gentlecrawl.Summary{TrapsRefused: 40, URLSpace: map[string]*gentlecrawl.HostURLSpace{
		"http://shop.test": {
			Defaults: []string{"start=0 (1 pair, e.g. /list?start=0 = /list)", "/t/a?from=0", "/t/b?from=0", "/t/c?from=0",
				"/t/d?from=0", "/t/e?from=0", "/t/f?from=0"},
			NofollowLinks:   12,
			NofollowRefused: 7,
			Families: []gentlecrawl.FamilyFound{{
				Pattern: "/c?…&…", Evidence: "lists narrowed by two or more parameters: 0 of 4 pages fetched yielded new URLs or text",
				Requests: 4, Refused: 33, Spent: true, Examples: []string{"/c?color=red&size=9", "/c?color=blue&size=9", "/c?color=red&size=10"},
			}},
			Traps: []gentlecrawl.TrapFound{{
				Pattern: "/cal/*", Evidence: "3 of 3 pages fetched repeat another", Requests: 3, Refused: 90, Spent: true,
				Examples: []string{"/cal/2 = /cal/1"},
			}},
		},
	}}
	var b strings.Builder
	writeSummary(&b, s)
	out := b.String()
	for _, want := range []string{
		"http://shop.test parameter value that gives the page without it: start=0",
		`http://shop.test links marked rel="nofollow": 12, queued last; 7 not fetched`,
		"http://shop.test URL family /c?…&…: lists narrowed by two or more parameters: 0 of 4 pages fetched yielded new URLs or text; it cost 4 requests; 33 more of its URLs not fetched",
		"e.g. /c?color=red&size=9",
		"http://shop.test trap /cal/*: 3 of 3 pages fetched repeat another; it cost 3 requests; its budget spent, 90 more of its URLs not fetched",
		"e.g. /cal/2 = /cal/1",
		"http://shop.test … and 2 more such values",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "/c?color=red&size=10") {
		t.Errorf("summary lists more than two examples of a family:\n%s", out)
	}
}
