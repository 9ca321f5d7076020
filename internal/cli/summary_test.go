package cli

import (
	"strings"
	"testing"
	"time"

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

// TestSummaryHosts: the text summary says in words what the summary's
// per-host values (host load, validators, change) hold.
func TestSummaryHosts(t *testing.T) {
	s := &gentlecrawl.Summary{
		Slowed: map[string]gentlecrawl.HostLoad{
			"a.test": {Cause: gentlecrawl.LoadRefused, Status: 503, EventRate: 20.44, Settled: 18.61, Events: 3},
			"b.test": {Cause: gentlecrawl.LoadRefused, Status: 429, HasRetryAfter: true, RetryAfter: 5 * time.Second, EventRate: 2, Settled: 1, Events: 1},
			"c.test": {Cause: gentlecrawl.LoadSlow, Slow: 3.14, Baseline: 40400 * time.Microsecond, EventRate: 10, Settled: 5, Events: 1},
			"d.test": {Cause: gentlecrawl.LoadNoResponse, EventRate: 1, Settled: 0.5, Events: 2},
		},
		Validators: map[string]gentlecrawl.OriginValidators{
			"http://a.test": {Sent: gentlecrawl.ValidatorsStripped, Ignored: 1, ETag: `"5f-6a1b-gzip"`, Honoured: 287},
			"http://b.test": {Sent: gentlecrawl.ValidatorsDateOnly, Ignored: 2, ETag: `"x"`, Honoured: 3, Full: 1},
			"http://c.test": {Sent: gentlecrawl.ValidatorsAsGiven, Ignored: 31, ETag: `"y"`},
			"http://d.test": {Sent: gentlecrawl.ValidatorsNone, Lies: 2, LiedURL: "http://d.test/p"},
		},
		Demand: map[string]gentlecrawl.HostDemand{
			"a.test": {Pages: 279, ChangeP10: 16 * time.Second, ChangeP50: 11 * time.Minute, ChangeP90: 50 * time.Hour, Budget: 7, Worth: 6.214},
			"b.test": {Pages: 3, Budget: 1, Worth: 0},
		},
	}
	var b strings.Builder
	writeSummary(&b, s)
	out := b.String()
	for _, want := range []string{
		"host load       a.test: 503, no Retry-After at 20.4/s → settled at 18.6/s (3 congestion events)",
		"host load       b.test: 429, Retry-After 5s at 2.0/s → settled at 1.0/s (1 congestion event)",
		"host load       c.test: response time 3.1× baseline 40ms at 10.0/s → settled at 5.0/s (1 congestion event)",
		"host load       d.test: no response at 1.0/s → settled at 0.5/s (2 congestion events)",
		`validators      http://a.test: validators ignored as sent (ETag "5f-6a1b-gzip": 1 full answer with the same body); the ETag without its encoding suffix: 287 answered 304, 0 full`,
		`validators      http://b.test: validators ignored as sent (ETag "x": 2 full answers with the same body); If-Modified-Since alone: 3 answered 304, 1 full`,
		`validators      http://c.test: validators ignored as sent (ETag "y": 31 full answers with the same body); no way of sending them was honoured`,
		"validators      http://d.test: validators lie: 2 pages (e.g. http://d.test/p) changed while the server answered 304 to their validators; refreshed without validators",
		"change          a.test: 279 pages; a change every 16s / 11m / 2d (10th, 50th, 90th percentile); refresh budget 7.00 requests/s, worth spending 6.21",
		"change          b.test: 3 pages; a change every never / never / never (10th, 50th, 90th percentile); refresh budget 1.00 requests/s, worth spending 0.00",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}
