package gentlecrawl_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

// TestOnPage: Config.OnPage gets one call for every answer the server
// logged for a URL of the crawl (robots.txt aside), with the decoded body
// of an HTML page and its links; an error it returns stops the crawl, and
// Run returns it.
func TestOnPage(t *testing.T) {
	web, catchAll := crawltest.ServeWeb(t, simweb.Config{Seed: 3, Hosts: 1, PagesPerHost: 30, Profiles: []simweb.Profile{simweb.ProfileAllow}})
	h := web.Hosts()[0]
	var mu sync.Mutex
	got := map[string]*gentlecrawl.Page{}
	cfg := gentlecrawl.Config{
		JobDir: t.TempDir(), Seeds: []string{h.URL("/")}, Delay: time.Millisecond, Workers: 2,
		ConnectTo: crawltest.ConnectTo(catchAll), AllowPrivateNetworks: true,
		OnPage: func(_ context.Context, p *gentlecrawl.Page) error {
			mu.Lock()
			defer mu.Unlock()
			if got[p.URL] != nil {
				t.Errorf("OnPage called twice for %s", p.URL)
			}
			got[p.URL] = p
			return nil
		},
	}
	sum := crawltest.MustCrawl(t, t.Context(), cfg)
	if err := web.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	answered := 0
	for _, e := range web.Requests() {
		if e.Path == "/robots.txt" {
			continue
		}
		answered++
		p := got[h.URL(e.Path)]
		if p == nil {
			t.Errorf("%s answered %d, and OnPage never saw it", e.Path, e.Status)
			continue
		}
		if p.Status != e.Status {
			t.Errorf("%s: OnPage status %d, the server's %d", e.Path, p.Status, e.Status)
		}
	}
	if answered != len(got) || answered != sum.Pages {
		t.Errorf("the server answered %d page requests, OnPage saw %d, the summary counts %d", answered, len(got), sum.Pages)
	}
	home := got[h.URL("/")]
	if home == nil || !strings.Contains(string(home.Body), "<html") || len(home.Links) == 0 || home.Purpose != "discovery" || home.End.Before(home.Start) {
		t.Errorf("the home page as OnPage saw it: %+v", home)
	}

	// An error stops the crawl, and Run returns it.
	stop := errors.New("enough")
	calls := 0
	cfg.JobDir = t.TempDir()
	cfg.OnPage = func(context.Context, *gentlecrawl.Page) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 3 {
			return stop
		}
		return nil
	}
	c, err := gentlecrawl.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err = c.Run(t.Context())
	if !errors.Is(err, stop) || !strings.HasPrefix(sum.Stopped, "error") {
		t.Errorf("Run after OnPage failed: %v, stopped %q", err, sum.Stopped)
	}
	if calls > 4 {
		t.Errorf("%d calls: the crawl went on after the error", calls)
	}
}
