package gentlecrawl_test

import (
	"math"
	"os"
	"slices"
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
	"github.com/gentlecrawl/gentlecrawl/internal/reqlog"
	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

// TestMaxRate: with --max-rate 25, a crawl of eight fast hosts with no
// delay starts its requests, robots.txt included, at most 25 in any second
// (the request log's starts; one more for the clock's jitter), the servers
// see no more than that plus what the measured spread of the requests'
// transit allows, and the crawl still ends with every page fetched.
func TestMaxRate(t *testing.T) {
	const rate = 25
	web, catchAll := crawltest.ServeWeb(t, simweb.Config{Hosts: 8, PagesPerHost: 8, Profiles: []simweb.Profile{simweb.ProfileAllow}})
	var seeds []string
	for _, h := range web.Hosts() {
		seeds = append(seeds, h.URL("/"))
	}
	job := t.TempDir()
	sum := crawltest.MustCrawl(t, t.Context(), gentlecrawl.Config{
		JobDir: job, Seeds: seeds, NoDelay: true, MaxRate: rate, Workers: 16,
		ConnectTo: crawltest.ConnectTo(catchAll), AllowPrivateNetworks: true,
	})
	web.Drain(t.Context())

	// The crawler's side: when each request started, by URL.
	sent := make(map[string]time.Time)
	var clientStarts []time.Time
	f, err := os.Open(reqlog.Path(job, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = reqlog.Read(f, reqlog.Visitor{Request: func(r *reqlog.Record) error {
		sent[r.URL] = r.Start
		clientStarts = append(clientStarts, r.Start)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	// The servers' side, and how much later than it was sent each request
	// began there.
	var starts []time.Time
	lo, hi := time.Duration(math.MaxInt64), time.Duration(math.MinInt64)
	for _, e := range web.Requests() {
		starts = append(starts, e.Start)
		if s, ok := sent["http://"+e.Host+e.Path]; ok {
			lag := e.Start.Sub(s)
			lo, hi = min(lo, lag), max(hi, lag)
		}
	}
	if len(starts) != sum.Requests || len(clientStarts) != sum.Requests || len(starts) < 3*rate {
		t.Fatalf("%d requests logged by the servers, %d by the crawler, the summary says %d; want the same, and at least %d",
			len(starts), len(clientStarts), sum.Requests, 3*rate)
	}
	spread := hi - lo
	client, server := worstSecond(clientStarts), worstSecond(starts)
	t.Logf("%d requests; at most %d started in any second, %d seen by the servers; transit spread %v",
		len(starts), client, server, spread.Round(time.Millisecond))
	// The gate spaces starts 1.01/rate apart: rate of them fit in a second
	// (one more is allowed for the moment between the gate and the
	// clock's reading, on a loaded machine).
	if client > rate+1 {
		t.Errorf("%d requests started within one second, want at most %d (+1)", client, rate)
	}
	// A request that took longer on its way lands in the next one's
	// window: a second at the servers holds the starts of 1 s + spread.
	if allowed := int(float64(rate)*(1+spread.Seconds())/1.01) + 2; server > allowed {
		t.Errorf("the servers saw %d requests within one second, want at most %d (%d, and %v of transit spread)", server, allowed, rate, spread)
	}
}

// worstSecond returns the most of times that fall within one second.
func worstSecond(times []time.Time) int {
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	worst := 0
	for i := range times {
		j := i
		for j < len(times) && times[j].Sub(times[i]) < time.Second {
			j++
		}
		worst = max(worst, j-i)
	}
	return worst
}

// TestMaxRateInvalid: a rate that cannot be a budget is refused.
func TestMaxRateInvalid(t *testing.T) {
	for _, r := range []float64{-1, 1e-9} {
		if _, err := gentlecrawl.New(gentlecrawl.Config{JobDir: t.TempDir(), Seeds: []string{"http://a.test/"}, MaxRate: r}); err == nil {
			t.Errorf("MaxRate %v accepted", r)
		}
	}
}
