package urlspace_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

// shopCrawl crawls one simweb shop of the given seed and returns the real
// pages it has, how many of them were fetched, the requests made, and the
// requests by trap family ("" for real pages at their canonical URL).
func shopCrawl(t *testing.T, seed int64, shop simweb.Shop) (real, found, requests int, byFamily map[string]int, sum *gentlecrawl.Summary) {
	t.Helper()
	web, err := simweb.New(simweb.Config{Seed: seed, Hosts: 1, Profiles: []simweb.Profile{simweb.ProfileAllow},
		HostOptions: func(int, string) simweb.HostOptions { return simweb.HostOptions{Shop: &shop} }})
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
	sum = crawltest.MustCrawl(t, t.Context(), gentlecrawl.Config{
		JobDir: t.TempDir(), Seeds: []string{h.URL("/")}, Delay: time.Millisecond, Workers: 4,
		ConnectTo: crawltest.ConnectTo(srv.CatchAll()), AllowPrivateNetworks: true,
	})
	web.Drain(t.Context())
	seen := map[string]bool{}
	byFamily = map[string]int{}
	reqs := web.Requests()
	for _, e := range reqs {
		if p, ok := h.PageOf(e.Path); ok {
			seen[p] = true
		}
		fam, _ := h.TrapOf(e.Path)
		if e.Path == "/robots.txt" {
			fam = "robots.txt"
		}
		byFamily[fam]++
	}
	for _, p := range want {
		if seen[p] {
			found++
		}
	}
	return len(want), found, len(reqs), byFamily, sum
}

// TestShopTraps: shops that the crawler's rules were not written for —
// their session ids, tracking tokens, sort orders, calendars, counters and
// endless paths drawn per seed (simweb.Shop) — are crawled with every real
// page found and at most 1.2 requests per real page, and the summary names
// the traps. GENTLECRAWL_SHOP_SEEDS=N runs seeds 1..N instead of a few.
func TestShopTraps(t *testing.T) {
	seeds := []int64{1, 5, 8, 10}
	if n, _ := strconv.Atoi(os.Getenv("GENTLECRAWL_SHOP_SEEDS")); n > 0 {
		seeds = seeds[:0]
		for i := range n {
			seeds = append(seeds, int64(i+1))
		}
	} else if raceEnabled {
		// As TestGeneratedWebs: these crawls judge the URL space, not
		// concurrency, which the race detector only makes ten times
		// slower. Under it, one seed; scripts/test runs all four
		// without it.
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			real, found, reqs, fam, sum := shopCrawl(t, seed, simweb.Shop{Today: time.Now()})
			t.Logf("%d of %d real pages, %d requests (%.2f per page); by family %v", found, real, reqs, float64(reqs)/float64(real), fam)
			if found != real {
				t.Errorf("%d of %d real pages never fetched", real-found, real)
			}
			if limit := real * 12 / 10; reqs > limit {
				t.Errorf("%d requests, want at most %d (1.2 per real page)", reqs, limit)
			}
			sp := sum.URLSpace["http://a.test"]
			if sp == nil {
				t.Fatal("no URL-space report")
			}
			kinds := map[string]bool{}
			for _, tr := range sp.Traps {
				t.Logf("trap %s: %s; %d requests, %d refused", tr.Pattern, tr.Evidence, tr.Requests, tr.Refused)
				for _, k := range []string{"calendar or a counter", "endless path"} {
					if strings.Contains(tr.Evidence, k) && len(tr.Examples) > 0 {
						kinds[k] = true
					}
				}
			}
			if !kinds["calendar or a counter"] || !kinds["endless path"] {
				t.Errorf("the summary should name the calendar or counter and the endless path, with examples: %v", kinds)
			}
			fresh := false
			for _, p := range sp.Irrelevant {
				t.Logf("irrelevant %s", p)
				fresh = fresh || strings.Contains(p, "fresh value on every response")
			}
			if !fresh {
				t.Error("the summary should name the tracking token (a fresh value on every response)")
			}
		})
	}
}
