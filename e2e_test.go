package gentlecrawl_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

// e2eWeb is the synthetic web the end-to-end tests crawl: 20 hosts with every
// robots.txt profile, one of them asking for a Crawl-delay.
func e2eWeb(t *testing.T) (*simweb.Web, *simweb.Server) {
	t.Helper()
	web, err := simweb.New(simweb.Config{Seed: 7, Hosts: 20, PagesPerHost: 8, CrawlDelay: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := web.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return web, srv
}

const e2eDelay = 100 * time.Millisecond

func e2eConfig(web *simweb.Web, srv *simweb.Server, job string) gentlecrawl.Config {
	var seeds []string
	for _, h := range web.Hosts() {
		seeds = append(seeds, h.URL("/"))
	}
	return gentlecrawl.Config{
		JobDir:               job,
		Seeds:                seeds,
		From:                 "crawler@example.org",
		Delay:                e2eDelay,
		Workers:              8,
		ConnectTo:            crawltest.ConnectTo(srv.CatchAll()),
		AllowPrivateNetworks: true,
		RobotsRetry:          time.Hour, // the 500 host is not asked again within the test
	}
}

func TestCrawlIsPoliteEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl")
	}
	web, srv := e2eWeb(t)
	job := t.TempDir()
	cfg := e2eConfig(web, srv, job)
	want := crawltest.ExpectedFetches(t, web, "gentlecrawl")
	if len(want) < 100 {
		t.Fatalf("only %d pages to fetch: the test web is too small to prove anything", len(want))
	}

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	sum := crawltest.MustCrawl(t, ctx, cfg)
	if err := web.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	log := web.Requests()
	t.Logf("first crawl: %d requests, stopped: %s, summary %+v", len(log), sum.Stopped, sum)

	checkPoliteness(t, web, log)

	// Every allowed, in-scope page fetched exactly once; nothing else.
	got := make(map[string]int)
	robotsSeen := make(map[string]bool)
	for _, e := range log {
		if crawltest.IsRobotsPath(e.Path) {
			robotsSeen[e.Host] = true
			continue
		}
		got[e.Host+" "+e.Path]++
		if !web.Allowed(e.Host, e.Path, "gentlecrawl") {
			t.Errorf("requested %s%s, which robots.txt disallows", e.Host, e.Path)
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
	for _, h := range web.Hosts() {
		if !robotsSeen[h.Name] {
			t.Errorf("robots.txt of %s never requested", h.Name)
		}
	}
	if sum.Stopped != "deferred" {
		t.Errorf("stopped %q, want deferred (the 500 host's URLs stay queued)", sum.Stopped)
	}
	if sum.Pages != len(want) {
		t.Errorf("summary says %d pages, want %d", sum.Pages, len(want))
	}

	// The recrawl: every page again with its validators, every one a 304,
	// robots.txt still fresh in the cache.
	web.ResetLog()
	cfg.Recrawl = true
	sum2 := crawltest.MustCrawl(t, ctx, cfg)
	if err := web.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	log2 := web.Requests()
	checkPoliteness(t, web, log2)
	got = make(map[string]int)
	for _, e := range log2 {
		if crawltest.IsRobotsPath(e.Path) {
			t.Errorf("recrawl requested %s%s again; robots.txt is cached for 24h", e.Host, e.Path)
			continue
		}
		key := e.Host + " " + e.Path
		got[key]++
		res, ok := want[key]
		if !ok {
			t.Errorf("recrawl requested %s, not a page of the first crawl", key)
			continue
		}
		if e.IfNoneMatch != res.ETag {
			t.Errorf("recrawl of %s sent If-None-Match %q, want %q", key, e.IfNoneMatch, res.ETag)
		}
		if ims, err := time.Parse(time.RFC1123, e.IfModifiedSince); err != nil || !ims.Equal(res.LastModified) {
			t.Errorf("recrawl of %s sent If-Modified-Since %q, want %v", key, e.IfModifiedSince, res.LastModified)
		}
		if e.Status != 304 {
			t.Errorf("recrawl of unchanged %s answered %d, want 304", key, e.Status)
		}
	}
	for k := range want {
		if got[k] != 1 {
			t.Errorf("recrawl fetched %s %d times, want once", k, got[k])
		}
	}
	if sum2.NotModified != len(want) || sum2.SavedBytes <= 0 {
		t.Errorf("recrawl summary: %d not modified, %d bytes saved; want %d and a positive saving", sum2.NotModified, sum2.SavedBytes, len(want))
	}
	if sum.ByPurpose["refresh"] != 0 || sum.ByPurpose["discovery"] != sum.Pages || sum2.ByPurpose["refresh"] != len(want) || sum2.ByPurpose["discovery"] != 0 {
		t.Errorf("fetches by purpose: first crawl %v (%d pages), recrawl %v; want all discovery, then %d refresh", sum.ByPurpose, sum.Pages, sum2.ByPurpose, len(want))
	}

	// The WARC files hold a record pair for every request of both crawls.
	records := crawltest.ReadWARC(t, filepath.Join(job, "warc"))
	if records["response"] < len(want) || records["revisit"] != len(want) || records["request"] != records["response"]+records["revisit"] {
		t.Errorf("WARC records %v; want ≥%d responses, %d revisits, one request per response or revisit", records, len(want), len(want))
	}
}

// checkPoliteness reads the server's log the way a site owner would: per host,
// robots.txt before anything else and once, never two requests in flight,
// never a gap below the delay or the Crawl-delay, the crawler's headers.
func checkPoliteness(t *testing.T, web *simweb.Web, log []simweb.LogEntry) {
	t.Helper()
	byHost := make(map[string][]simweb.LogEntry)
	for _, e := range log {
		byHost[e.Host] = append(byHost[e.Host], e)
		if !strings.HasPrefix(e.UserAgent, "gentlecrawl/") || !strings.Contains(e.UserAgent, "(+http") {
			t.Errorf("User-Agent %q", e.UserAgent)
		}
		if e.From != "crawler@example.org" {
			t.Errorf("From %q", e.From)
		}
		if e.Cookie != "" {
			t.Errorf("cookie sent to %s%s: %q", e.Host, e.Path, e.Cookie)
		}
		if !strings.Contains(e.AcceptEncoding, "gzip") {
			t.Errorf("Accept-Encoding %q, want gzip", e.AcceptEncoding)
		}
	}
	for host, entries := range byHost {
		sort.Slice(entries, func(i, j int) bool { return entries[i].Start.Before(entries[j].Start) })
		h := web.Host(host)
		minGap := e2eDelay
		if h.Profile == simweb.ProfileCrawlDelay {
			minGap = 300 * time.Millisecond
		}
		robots := 0
		for i, e := range entries {
			if e.Path == "/robots.txt" {
				robots++
			}
			if i > 0 {
				prev := entries[i-1]
				if e.Start.Before(prev.End) {
					t.Errorf("%s: two requests in flight: %s [%s, %s] and %s starting %s",
						host, prev.Path, prev.Start.Format("15:04:05.000"), prev.End.Format("15:04:05.000"), e.Path, e.Start.Format("15:04:05.000"))
				} else if gap := e.Start.Sub(prev.End); gap < minGap {
					t.Errorf("%s: %s started %v after %s ended, want ≥ %v", host, e.Path, gap, prev.Path, minGap)
				}
			}
		}
		if robots > 1 {
			t.Errorf("%s: robots.txt requested %d times, want once", host, robots)
		}
		if first := entries[0].Path; robots == 1 && first != "/robots.txt" {
			t.Errorf("%s: first request was %s, want /robots.txt", host, first)
		}
		if h.Profile == simweb.ProfileError && len(entries) > 1 {
			t.Errorf("%s: robots.txt answered 500, yet %d other requests were made", host, len(entries)-1)
		}
		if h.Profile == simweb.ProfileRedirect && robots == 1 {
			if len(entries) < 2 || entries[1].Path != "/robots-moved.txt" {
				t.Errorf("%s: robots.txt redirect not followed before other requests", host)
			}
		}
	}
}

// TestPerAddressLimit: hosts served from one IP address share it: never more
// than two requests in flight to an address, whatever the hosts.
func TestPerAddressLimit(t *testing.T) {
	web, err := simweb.New(simweb.Config{Seed: 3, Hosts: 8, PagesPerHost: 4, Latency: 30 * time.Millisecond, Profiles: []simweb.Profile{simweb.ProfileNotFound}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := web.ServeLoopback(2, 0)
	if err != nil {
		t.Skip("cannot serve on 127.0.0.2 and 127.0.0.3:", err)
	}
	defer srv.Close()
	var seeds []string
	for _, h := range web.Hosts() {
		seeds = append(seeds, h.URL("/"))
	}
	c, err := gentlecrawl.New(gentlecrawl.Config{
		JobDir: t.TempDir(), Seeds: seeds, Delay: 10 * time.Millisecond,
		ConnectTo: crawltest.ConnectTo(srv.ConnectTo()...), AllowPrivateNetworks: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	web.Drain(t.Context())
	type event struct {
		at    time.Time
		delta int
		what  string
	}
	byAddr := map[string][]event{}
	for _, e := range web.Requests() {
		what := fmt.Sprintf("%s%s %d %s–%s", e.Host, e.Path, e.Status, e.Start.Format("15:04:05.000000"), e.End.Format("15:04:05.000000"))
		byAddr[e.Local] = append(byAddr[e.Local], event{e.Start, +1, what}, event{e.End, -1, what})
	}
	if len(byAddr) != 2 {
		t.Fatalf("requests reached %d addresses, want 2", len(byAddr))
	}
	for addr, evs := range byAddr {
		sort.Slice(evs, func(i, j int) bool {
			if evs[i].at.Equal(evs[j].at) {
				return evs[i].delta < evs[j].delta // an end before a start at the same instant
			}
			return evs[i].at.Before(evs[j].at)
		})
		n, peak := 0, 0
		inFlight := map[string]bool{}
		var worst []string
		for _, e := range evs {
			n += e.delta
			inFlight[e.what] = e.delta > 0
			if n > peak {
				peak, worst = n, nil
				for w, in := range inFlight {
					if in {
						worst = append(worst, w)
					}
				}
			}
		}
		if peak > 2 {
			sort.Strings(worst)
			t.Errorf("%s: %d requests in flight at once, want at most 2:\n%s", addr, peak, strings.Join(worst, "\n"))
		}
	}
}
