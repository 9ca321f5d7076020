package gentlecrawl_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
	"github.com/gentlecrawl/gentlecrawl/internal/pgtest"
	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

// TestSharedFrontierInProcess runs ExampleOpenSharedFrontier's shared crawl
// on a real PostgreSQL: two crawlers of one process, each with its
// SharedFrontier on the same database and half the seeds, crawl every page
// once between them, one request at a time per host. A frontier serves one
// Run at a time, stays open after it (a crawler with no seeds run on it
// then finds nothing left), and the crawler never closes it.
func TestSharedFrontierInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a PostgreSQL server")
	}
	dsn := pgtest.DB(t)
	web, catchAll := crawltest.ServeWeb(t, simweb.Config{
		Seed: 3, Hosts: 4, PagesPerHost: 8,
		Profiles: []simweb.Profile{simweb.ProfileAllow, simweb.ProfileDisallow, simweb.ProfileNotFound, simweb.ProfileAgent},
	})
	want := crawltest.ExpectedFetches(t, web, "gentlecrawl")
	hosts := web.Hosts()

	open := func() *gentlecrawl.SharedFrontier {
		f, err := gentlecrawl.OpenSharedFrontier(t.Context(), dsn, gentlecrawl.SharedFrontierOptions{LeaseTTL: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	config := func(i int, f *gentlecrawl.SharedFrontier, seeds ...*simweb.Host) gentlecrawl.Config {
		cfg := gentlecrawl.Config{
			JobDir: t.TempDir(), From: fmt.Sprintf("w%d@example.org", i), Frontier: f,
			Delay: 5 * time.Millisecond, Workers: 2,
			ConnectTo: crawltest.ConnectTo(catchAll), AllowPrivateNetworks: true,
		}
		for _, h := range seeds {
			cfg.Seeds = append(cfg.Seeds, h.URL("/"))
		}
		return cfg
	}
	f1, f2 := open(), open()
	// While the first crawler holds f1, a second Run on it is refused.
	var (
		once    sync.Once
		busyErr error
	)
	first := config(1, f1, hosts[:2]...)
	first.OnPage = func(context.Context, *gentlecrawl.Page) error {
		once.Do(func() {
			busy, err := gentlecrawl.New(config(3, f1))
			if err != nil {
				t.Error(err)
				return
			}
			_, busyErr = busy.Run(t.Context())
		})
		return nil
	}
	var wg sync.WaitGroup
	sums := make([]*gentlecrawl.Summary, 2)
	for i, cfg := range []gentlecrawl.Config{first, config(2, f2, hosts[2:]...)} {
		c, err := gentlecrawl.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			sum, err := c.Run(t.Context())
			if err != nil {
				t.Errorf("worker %d: %v", i+1, err)
			}
			sums[i] = sum
		})
	}
	wg.Wait()
	if busyErr == nil || !strings.Contains(busyErr.Error(), "in use") {
		t.Errorf("a second Run on a frontier in use: %v, want it refused", busyErr)
	}
	if t.Failed() {
		return
	}
	web.Drain(t.Context())

	got := map[string]int{}
	byHost := map[string][]simweb.LogEntry{}
	for _, e := range web.Requests() {
		byHost[e.Host] = append(byHost[e.Host], e)
		if !crawltest.IsRobotsPath(e.Path) {
			got[e.Host+" "+e.Path]++
		}
	}
	for k := range want {
		if got[k] != 1 {
			t.Errorf("%s fetched %d times, want once", k, got[k])
		}
	}
	for host, entries := range byHost {
		for i := 1; i < len(entries); i++ {
			if prev, e := entries[i-1], entries[i]; e.Start.Before(prev.End) {
				t.Errorf("%s: %s (%s) and %s (%s) in flight at once", host, prev.Path, prev.From, e.Path, e.From)
			}
		}
	}
	pages := 0
	for _, s := range sums {
		pages += s.Pages
	}
	if pages != len(got) {
		t.Errorf("the summaries count %d pages, the server %d", pages, len(got))
	}

	// f1 is still open: another crawler, without seeds, finds nothing left.
	c, err := gentlecrawl.New(config(4, f1))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Run(t.Context())
	if err != nil || sum.Stopped != "finished" || sum.Pages != 0 {
		t.Errorf("a crawler without seeds after the crawl: %+v, %v; want finished, no page", sum, err)
	}
	// The budget per address is the frontier's, the whole crawl's.
	if _, err := gentlecrawl.New(gentlecrawl.Config{JobDir: t.TempDir(), Seeds: []string{"http://a.test/"}, Frontier: f1, MaxPerAddr: 5}); err == nil {
		t.Error("Config.MaxPerAddr unlike the shared frontier's accepted")
	}
	if err := f1.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := gentlecrawl.OpenSharedFrontier(t.Context(), dsn, gentlecrawl.SharedFrontierOptions{LeaseTTL: time.Millisecond}); err == nil {
		t.Error("a lease TTL of 1ms accepted")
	}
}
