package gentlecrawl_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

// TestHostsInTurn: while a page is handled its host is in turn, never more
// hosts than the crawl has, and none once Run returns.
func TestHostsInTurn(t *testing.T) {
	web, catchAll := crawltest.ServeWeb(t, simweb.Config{Seed: 5, Hosts: 3, PagesPerHost: 15, Profiles: []simweb.Profile{simweb.ProfileAllow}})
	var seeds []string
	for _, h := range web.Hosts() {
		seeds = append(seeds, h.URL("/"))
	}
	var (
		c      *gentlecrawl.Crawler
		mu     sync.Mutex
		pages  int
		lo, hi = 1 << 30, 0
	)
	cfg := gentlecrawl.Config{
		JobDir: t.TempDir(), Seeds: seeds, Delay: time.Millisecond, Workers: 4,
		ConnectTo: crawltest.ConnectTo(catchAll), AllowPrivateNetworks: true,
		OnPage: func(_ context.Context, p *gentlecrawl.Page) error {
			n := gentlecrawl.HostsInTurn(c)
			mu.Lock()
			defer mu.Unlock()
			pages++
			lo, hi = min(lo, n), max(hi, n)
			return nil
		},
	}
	var err error
	c, err = gentlecrawl.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n := gentlecrawl.HostsInTurn(c); n != 0 {
		t.Errorf("before Run: %d hosts in turn", n)
	}
	if _, err := c.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if pages == 0 {
		t.Fatal("no page handled")
	}
	if lo < 1 || hi > len(seeds) {
		t.Errorf("hosts in turn while pages were handled: %d to %d, want 1 to %d", lo, hi, len(seeds))
	}
	if n := gentlecrawl.HostsInTurn(c); n != 0 {
		t.Errorf("after Run: %d hosts in turn", n)
	}
	t.Logf("%d pages; %d to %d hosts in turn", pages, lo, hi)
}
