package urlspace_test

import (
	"strings"
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

// TestURLSpaceTraps: a host of 500 real pages behind session ids in every
// link, a faceted catalog and an endless calendar. The crawl finds all 500
// with at most 1.2 requests per page, and says what it learned. Of the
// catalog, the lists narrowed by both filters and the later pages of a
// narrowed list show only products the catalog's own pages list: a crawl
// that judges lists by what they yield need not fetch them (see
// narrowedFurther).
func TestURLSpaceTraps(t *testing.T) {
	web, err := simweb.New(simweb.Config{Hosts: 1, Profiles: []simweb.Profile{simweb.ProfileAllow},
		HostOptions: func(int, string) simweb.HostOptions {
			return simweb.HostOptions{Pages: 500, NoFiles: true,
				Traps: simweb.Traps{SessionIDs: "sid", Facets: true, Calendar: true}}
		}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := web.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h := web.Hosts()[0]
	want := h.DistinctPages()
	c, err := gentlecrawl.New(gentlecrawl.Config{
		JobDir: t.TempDir(), Seeds: []string{h.URL("/")}, Delay: time.Millisecond, Workers: 4,
		ConnectTo: crawltest.ConnectTo(srv.CatchAll()), AllowPrivateNetworks: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	web.Drain(t.Context())
	found := map[string]bool{}
	reqs := web.Requests()
	kinds := map[string]int{}
	for _, e := range reqs {
		if p, ok := h.PageOf(e.Path); ok {
			found[p] = true
		}
		k := e.Path
		if i := strings.IndexAny(k[1:], "/?"); i >= 0 {
			k = k[:i+1]
		}
		kinds[k]++
	}
	t.Logf("%d requests for %d real pages; by first segment %v", len(reqs), len(want), kinds)
	t.Logf("url space: %+v", sum.URLSpace["http://a.test"])
	missing := 0
	for _, p := range want {
		if !found[p] && !narrowedFurther(p) {
			missing++
			t.Logf("missing %s", p)
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d real pages never fetched", missing, len(want))
	}
	if sp := sum.URLSpace["http://a.test"]; sp == nil || sp.NearDuplicates == 0 || len(sp.Irrelevant) == 0 && len(sp.Families) == 0 {
		t.Errorf("the summary should show near-duplicates, and the irrelevant parameter or the narrowed lists: %+v", sp)
	}
	if limit := len(want) * 12 / 10; len(reqs) > limit {
		t.Errorf("%d requests, want at most %d (1.2 per real page)", len(reqs), limit)
	}
}

// narrowedFurther reports whether a catalog URL of simweb's Traps.Facets
// is narrowed by both its filters, or is a later page of a narrowed list:
// its products are all on the unfiltered catalog's pages.
func narrowedFurther(u string) bool {
	_, q, ok := strings.Cut(u, "/catalog?")
	if !ok {
		return false
	}
	color, size, later := strings.Contains(q, "color="), strings.Contains(q, "size="), strings.Contains(q, "page=") && !strings.Contains(q, "page=1")
	return color && size || (color || size) && later
}
