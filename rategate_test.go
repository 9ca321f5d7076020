package gentlecrawl_test

import (
	"slices"
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

// TestMaxRate: with --max-rate 25, a crawl of eight fast hosts with no
// delay never has the servers see more than 25 requests, robots.txt
// included, start within any second (one more is allowed for the network's
// jitter between the crawler's start and the server's), and the crawl
// still ends with every page fetched.
func TestMaxRate(t *testing.T) {
	const rate = 25
	web, err := simweb.New(simweb.Config{Hosts: 8, PagesPerHost: 8, Profiles: []simweb.Profile{simweb.ProfileAllow}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := web.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var seeds []string
	for _, h := range web.Hosts() {
		seeds = append(seeds, h.URL("/"))
	}
	sum := mustCrawl(t, t.Context(), gentlecrawl.Config{
		JobDir: t.TempDir(), Seeds: seeds, NoDelay: true, MaxRate: rate, Workers: 16,
		ConnectTo: []string{srv.CatchAll()}, AllowPrivateNetworks: true,
	})
	web.Drain(t.Context())
	var starts []time.Time
	for _, e := range web.Requests() {
		starts = append(starts, e.Start)
	}
	slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
	if len(starts) != sum.Requests || len(starts) < 3*rate {
		t.Fatalf("%d requests logged, the summary says %d; want the same, and at least %d", len(starts), sum.Requests, 3*rate)
	}
	// Every window of a second holds at most rate+1 starts.
	worst := 0
	for i := range starts {
		j := i
		for j < len(starts) && starts[j].Sub(starts[i]) < time.Second {
			j++
		}
		worst = max(worst, j-i)
	}
	elapsed := starts[len(starts)-1].Sub(starts[0])
	t.Logf("%d requests over %v (%.1f/s); at most %d in any second", len(starts), elapsed.Round(time.Millisecond), float64(len(starts)-1)/elapsed.Seconds(), worst)
	if worst > rate+1 {
		t.Errorf("%d requests started within one second, want at most %d (+1 for jitter)", worst, rate)
	}
}

// TestMaxRateInvalid: a rate that cannot be a budget is refused.
func TestMaxRateInvalid(t *testing.T) {
	for _, r := range []float64{-1, 1e-9} {
		if _, err := gentlecrawl.New(gentlecrawl.Config{JobDir: t.TempDir(), Seeds: []string{"http://a.test/"}, MaxRate: r}); err == nil {
			t.Errorf("MaxRate %v accepted", r)
		}
	}
}
