package gentlecrawl_test

import (
	"context"
	"sort"
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
	"github.com/gentlecrawl/gentlecrawl/internal/warccheck"
)

// TestEvictionKeepsManners crawls a web of more hosts than the crawler may
// keep robots.txt rules for (two origins here), with the scheduler
// forgetting every idle host at once, and reads the server's log: what a
// crawler forgets of a host and reads back or learns again must never show
// there. robots.txt is asked once per host within its cache time, no
// disallowed page is asked, a Retry-After is waited out, every gap is
// kept, and every page comes exactly once.
func TestEvictionKeepsManners(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl")
	}
	const retryAfter = 2 * time.Second
	start := time.Now()
	web, err := simweb.New(simweb.Config{Seed: 5, Hosts: 24, PagesPerHost: 6, CrawlDelay: 300 * time.Millisecond,
		HostOptions: func(i int, _ string) simweb.HostOptions {
			if i != 0 {
				return simweb.HostOptions{}
			}
			// The first host refuses everything for its first moments.
			return simweb.HostOptions{Outages: []simweb.Outage{{Start: start, Duration: 1500 * time.Millisecond, RetryAfter: retryAfter}}}
		}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := web.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	job := t.TempDir()
	cfg := e2eConfig(web, srv, job)
	want := crawltest.ExpectedFetches(t, web, "gentlecrawl")

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	warccheck.AtCleanup(t, job)
	c, err := gentlecrawl.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gentlecrawl.SetHostBounds(c, 2)
	sum, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := web.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if sum.Stopped != "deferred" {
		t.Errorf("stopped %q, want deferred (the 500 host's URLs stay queued)", sum.Stopped)
	}

	byHost := make(map[string][]simweb.LogEntry)
	got := make(map[string]int)
	refused := 0
	for _, e := range web.Requests() {
		byHost[e.Host] = append(byHost[e.Host], e)
		if !crawltest.IsRobotsPath(e.Path) && !web.Allowed(e.Host, e.Path, "gentlecrawl") {
			t.Errorf("requested %s%s, which robots.txt disallows", e.Host, e.Path)
		}
		switch {
		case e.Status == 503:
			refused++
		case !crawltest.IsRobotsPath(e.Path):
			got[e.Host+" "+e.Path]++
		}
	}
	for k := range want {
		if got[k] != 1 {
			t.Errorf("%s fetched %d times, want exactly once", k, got[k])
		}
	}
	for k, n := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s fetched %d times, but it is not an allowed, reachable page", k, n)
		}
	}
	if refused == 0 {
		t.Log("the outage ended before the crawl reached its host: Retry-After not exercised")
	}
	for host, entries := range byHost {
		sort.Slice(entries, func(i, j int) bool { return entries[i].Start.Before(entries[j].Start) })
		minGap := e2eDelay
		if web.Host(host).Profile == simweb.ProfileCrawlDelay {
			minGap = 300 * time.Millisecond
		}
		robotsDone := false
		for i, e := range entries {
			if crawltest.IsRobotsPath(e.Path) {
				if robotsDone {
					t.Errorf("%s: %s asked again at %s, within its cache time", host, e.Path, e.Start.Format("15:04:05.000"))
				}
				if e.Status < 300 || (e.Status >= 400 && e.Status < 500) {
					robotsDone = true
				}
			}
			if i == 0 {
				continue
			}
			prev := entries[i-1]
			gap := e.Start.Sub(prev.End)
			switch {
			case gap < 0:
				t.Errorf("%s: two requests in flight: %s and %s", host, prev.Path, e.Path)
			case prev.Status == 503 && gap < retryAfter:
				t.Errorf("%s: %s asked %v after a 503 with Retry-After %v", host, e.Path, gap, retryAfter)
			case gap < minGap:
				t.Errorf("%s: %s started %v after %s ended, want ≥ %v", host, e.Path, gap, prev.Path, minGap)
			}
		}
	}
}
