package cms_test

import (
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/cmstest"
	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
)

// TestCMSCrawl crawls real CMSs from Debian's packages — WordPress (posts,
// pages, categories, tags, authors, comments with their reply links, the
// calendar's day archives, feeds) and DokuWiki (pages with revisions,
// diffs, backlinks, the index) — on loopback, and compares what Apache
// logged with each CMS's own list of its content URLs and the list pages
// needed to reach them (cmstest's ground truth).
//
// The goal is every real page fetched with at most 1.2 requests per real
// page (GENTLECRAWL_GEN_STRICT=1 holds the crawl to it); by default the
// test holds it to at least 90 % of the real pages and at most 2.5
// requests per real page, as TestGeneratedWebs does, and logs where the
// other requests went.
func TestCMSCrawl(t *testing.T) {
	for _, c := range []struct {
		name  string
		start func(testing.TB, int64) *cmstest.Site
	}{
		{"wordpress", cmstest.WordPress},
		{"dokuwiki", cmstest.DokuWiki},
	} {
		t.Run(c.name, func(t *testing.T) {
			site := c.start(t, 1)
			sum := crawlCMS(t, site)
			if c.name == "dokuwiki" {
				// DokuWiki marks its action links (edit, revisions,
				// backlinks) rel="nofollow": the summary counts them, and
				// those not fetched.
				var links, refused int
				for _, sp := range sum.URLSpace {
					links, refused = links+sp.NofollowLinks, refused+sp.NofollowRefused
				}
				t.Logf("rel=nofollow links: %d, of which %d not fetched", links, refused)
				if links == 0 || refused == 0 {
					t.Errorf("rel=nofollow links %d, not fetched %d: want both counted", links, refused)
				}
			}
		})
	}
}

func crawlCMS(t *testing.T, site *cmstest.Site) *gentlecrawl.Summary {
	base, err := url.Parse(site.URL)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	sum := crawltest.MustCrawl(t, t.Context(), gentlecrawl.Config{
		JobDir: t.TempDir(), Seeds: []string{site.URL}, Delay: time.Millisecond, Workers: 4,
		AllowPrivateNetworks: true,
	})
	reqs, err := site.WaitRequests(t.Context(), sum.Requests)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("crawl: %v, %d requests, %d pages, %d traps refused", time.Since(start).Round(time.Millisecond), sum.Requests, sum.Pages, sum.TrapsRefused)
	got := map[string]bool{}
	other := map[string]int{}
	examples := map[string][]string{}
	for _, r := range reqs {
		u := base.Scheme + "://" + base.Host + r.URI
		if r.Status == 200 {
			got[u] = true
		}
		if !containsSorted(site.Real, u) {
			k := cmsKind(r.URI)
			other[k]++
			if len(examples[k]) < 4 {
				examples[k] = append(examples[k], r.URI)
			}
		}
	}
	var missed []string
	for _, u := range site.Real {
		if !got[u] {
			missed = append(missed, u)
		}
	}
	real := len(site.Real)
	t.Logf("%d of %d real pages, %d requests (%.2f per real page)", real-len(missed), real, len(reqs), float64(len(reqs))/float64(real))
	kinds := make([]string, 0, len(other))
	for k := range other {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		t.Logf("other requests, %s: %d, e.g. %s", k, other[k], strings.Join(examples[k], " "))
	}
	for host, sp := range sum.URLSpace {
		for _, f := range sp.Families {
			t.Logf("%s family %s: %s; %d requests, %d refused", host, f.Pattern, f.Evidence, f.Requests, f.Refused)
		}
		for _, tr := range sp.Traps {
			t.Logf("%s trap %s: %s; %d requests, %d refused", host, tr.Pattern, tr.Evidence, tr.Requests, tr.Refused)
		}
	}
	minFound, maxReqs := real*9/10, real*25/10
	if crawltest.GenStrict() {
		minFound, maxReqs = real, real*12/10
	}
	if found := real - len(missed); found < minFound {
		t.Errorf("%d of %d real pages never fetched, e.g. %v", len(missed), real, missed[:min(8, len(missed))])
	} else if len(missed) > 0 {
		t.Logf("%d of %d real pages never fetched, e.g. %v", len(missed), real, missed[:min(8, len(missed))])
	}
	if len(reqs) > maxReqs {
		t.Errorf("%d requests, want at most %d", len(reqs), maxReqs)
	}
	return sum
}

// cmsKind names the kind of a request that is not a real page, for the
// log: its first path segment and its query's parameter names.
func cmsKind(uri string) string {
	p, q, _ := strings.Cut(uri, "?")
	p = strings.TrimPrefix(p, "/")
	seg, _, _ := strings.Cut(p, "/")
	if strings.IndexAny(seg, "0123456789") >= 0 {
		seg = "*"
	}
	var names []string
	for part := range strings.SplitSeq(q, "&") {
		if n, _, _ := strings.Cut(part, "="); n != "" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return "/" + seg + "?" + strings.Join(names, "&")
}

func containsSorted(s []string, v string) bool {
	i := sort.SearchStrings(s, v)
	return i < len(s) && s[i] == v
}
