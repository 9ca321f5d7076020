package servers_test

import (
	"context"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
	"github.com/gentlecrawl/gentlecrawl/internal/nginxtest"
)

// TestNginxRateLimits crawls two sites behind a real nginx limit_req (Debian's
// nginx, started by the test on loopback) for 30 s, and reads nginx's own
// access log the way a site owner would:
//   - a.test refuses with 503 and no Retry-After, b.test with 429 and
//     Retry-After: 2; each has a limit and burst drawn per run
//     (GENTLECRAWL_SEED reproduces one), under the crawl's 20 ms delay's
//     reach;
//   - no request ever starts inside a Retry-After window, nor before the
//     previous request to its host has ended and the delay has passed;
//   - the refusals stop: once the crawler has found the limit (after its
//     first 10 s), it touches it rarely — at most 2% of its requests and 3
//     more (a crawler that never learns the limit is refused about one
//     request in ten all along).
//
// It asserts no speed.
func TestNginxRateLimits(t *testing.T) {
	nginxtest.Require(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("GENTLECRAWL_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	r := rand.New(rand.NewPCG(seed, 12))
	limA := nginxtest.Limit{Rate: 6 + r.IntN(10), Burst: 1 + r.IntN(5)}
	limB := nginxtest.Limit{Rate: 6 + r.IntN(10), Burst: 1 + r.IntN(5), Status: 429, RetryAfter: 2}
	t.Logf("GENTLECRAWL_SEED=%d: a.test %d/s burst %d (503); b.test %d/s burst %d (429, Retry-After 2)", seed, limA.Rate, limA.Burst, limB.Rate, limB.Burst)

	rootA, rootB := t.TempDir(), t.TempDir()
	if _, err := nginxtest.WriteSite(rootA, "a.test", 1500, seed); err != nil {
		t.Fatal(err)
	}
	if _, err := nginxtest.WriteSite(rootB, "b.test", 1500, seed+1); err != nil {
		t.Fatal(err)
	}
	srv := nginxtest.Start(t,
		nginxtest.Site{Name: "a.test", Addr: "127.0.0.2:0", Root: rootA, Limit: limA, Gzip: true},
		nginxtest.Site{Name: "b.test", Addr: "127.0.0.3:0", Root: rootB, Limit: limB, Gzip: true},
	)
	const delay = 20 * time.Millisecond
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	sum := crawltest.MustCrawl(t, ctx, gentlecrawl.Config{
		JobDir: t.TempDir(),
		Seeds:  []string{"http://a.test/", "http://b.test/"},
		Delay:  delay,
		ConnectTo: crawltest.ConnectTo(
			"a.test:80:"+srv.Addr("a.test"),
			"b.test:80:"+srv.Addr("b.test"),
		),
		AllowPrivateNetworks: true,
	})
	entries, err := srv.WaitEntries(t.Context(), sum.Requests)
	if err != nil {
		t.Fatal(err)
	}
	bySite := map[string][]nginxtest.Entry{}
	for _, e := range entries {
		bySite[e.Site] = append(bySite[e.Site], e)
	}
	for _, site := range []string{"a.test", "b.test"} {
		es := bySite[site]
		if len(es) < 20 {
			t.Fatalf("%s: %d requests in 30 s", site, len(es))
		}
		sort.Slice(es, func(i, j int) bool { return es[i].Start().Before(es[j].Start()) })
		t0 := es[0].Start()
		var windowEnd time.Time
		var early, late, earlyAll, lateAll int
		for i, e := range es {
			s := e.Start()
			// nginx logs whole milliseconds: allow 2 ms of rounding.
			if s.Before(windowEnd.Add(-2 * time.Millisecond)) {
				t.Errorf("%s %s at %v: inside the Retry-After window that ends at %v", site, e.URI, s.Sub(t0), windowEnd.Sub(t0))
			}
			if i > 0 {
				if prev := es[i-1]; s.Before(prev.Time.Add(delay - 2*time.Millisecond)) {
					t.Errorf("%s %s at %v: %v after the previous request ended, want ≥ %v, one at a time", site, e.URI, s.Sub(t0), s.Sub(prev.Time), delay)
				}
			}
			refused := e.Status == 503 || e.Status == 429
			if refused && e.Status == 429 {
				windowEnd = e.Time.Add(2 * time.Second)
			}
			if s.Sub(t0) < 10*time.Second {
				earlyAll++
				if refused {
					early++
				}
			} else {
				lateAll++
				if refused {
					late++
				}
			}
		}
		t.Logf("%s: %d requests; refused %d of %d in the first 10 s, %d of %d after; summary: %+v", site, len(es), early, earlyAll, late, lateAll, sum.Slowed[site])
		// A crawler that never learns the limit is refused about one
		// request in ten all along; one that does, about once a cycle.
		if late*100 > 2*lateAll+300 {
			t.Errorf("%s: %d of %d requests refused after the first 10 s: the crawler does not settle under the limit", site, late, lateAll)
		}
		if sl := sum.Slowed[site]; sl.Events == 0 || sl.Settled <= 0 || sl.Cause != gentlecrawl.LoadRefused {
			t.Errorf("%s: summary %+v, want the refusals and where the rate settled", site, sl)
		}
	}
}
