package crash_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
	"github.com/gentlecrawl/gentlecrawl/internal/pgtest"
	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

// TestSharedFrontierRestart runs one crawl as two processes on a shared
// frontier in a real PostgreSQL, and restarts the database server twice in
// the middle of it: a fast shutdown (open transactions rolled back, every
// connection closed) once a third of the pages are fetched, then an
// immediate one (the server's crash: no checkpoint, recovery from its log
// at the next start, the commits of the last moment lost, as
// synchronous_commit is off) at two thirds. Each time the server comes
// back on the same port with the same data. Every process rides it out —
// none exits with an error; each says it found the server restarted, twice
// — and from the web server's log: every page fetched, none more than
// twice, robots.txt first on every host, and until the crash one request
// at a time per host whichever process sent it. (A lease whose claim the
// crash took is one its holder goes on with while another process may
// claim the host: at most a turn's overlap, as a lease that expired under
// a stalled process.)
func TestSharedFrontierRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two crawler processes and restarts a PostgreSQL server twice")
	}
	pg := pgtest.Own(t, pgtest.Config{})
	dsn, err := pg.CreateDB(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	const delay = 30 * time.Millisecond
	seed := sharedSeed(t)
	web, catchAll := crawltest.ServeWeb(t, simweb.Config{
		Seed: seed, Hosts: 6, PagesPerHost: 14, CrawlDelay: 100 * time.Millisecond,
		// No host whose robots.txt fails: the crawl would wait a minute for it.
		Profiles: []simweb.Profile{simweb.ProfileAllow, simweb.ProfileDisallow, simweb.ProfileCrawlDelay,
			simweb.ProfileNotFound, simweb.ProfileRedirect, simweb.ProfileAgent},
		Latency: 5 * time.Millisecond,
	})
	want := crawltest.ExpectedFetches(t, web, "gentlecrawl")
	dir := t.TempDir()
	args := func(name string, seeds []*simweb.Host) []string {
		// -v: the warnings, which say what a process made of the restarts.
		// The leases outlast a restart on a loaded machine: one that
		// expired under its holder would be fetched twice.
		a := []string{"crawl", "-q", "-v", "--frontier", dsn, "--lease-ttl", "8s",
			"--job", filepath.Join(dir, name), "--from", name + "@example.org",
			"--delay", delay.String(), "--workers", "3",
			"--allow-private-networks", "--connect-to", catchAll}
		for _, h := range seeds {
			a = append(a, h.URL("/"))
		}
		return a
	}
	hosts := web.Hosts()
	procs := []*crawltest.Child{
		crawltest.StartChild(t, "p1", args("p1", hosts[:3])),
		crawltest.StartChild(t, "p2", args("p2", hosts[3:])),
	}
	// Restart when a third, then two thirds, of the pages are fetched: the
	// crawl waits for the server meanwhile, so counting requests, not
	// time, keeps the test the same on a slow machine.
	var crash time.Time
	for i, mode := range []string{pgtest.Fast, pgtest.Immediate} {
		target := len(want) * (i + 1) / 3
		deadline := time.Now().Add(2 * time.Minute)
		for pages(web) < target {
			for _, p := range procs {
				select {
				case <-p.Exited:
					t.Fatalf("%s exited before the %s restart: %v\n%s", p.Name, mode, p.Err, p.Out.String())
				default:
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("the crawl did not get to %d pages: %d", target, pages(web))
			}
			time.Sleep(5 * time.Millisecond)
		}
		before := len(web.Requests())
		if mode == pgtest.Immediate {
			crash = time.Now()
		}
		if err := pg.Restart(t.Context(), mode); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s restart after %d requests, of %d pages", mode, before, len(want))
	}
	for _, p := range procs {
		p.Wait(t, 4*time.Minute)
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
		switch n := got[k]; {
		case n == 0:
			t.Errorf("%s never fetched: %s", k, whereIs(t, dsn, k))
		case n > 2:
			t.Errorf("%s fetched %d times, want at most twice", k, n)
		}
	}
	for host, entries := range byHost {
		sort.Slice(entries, func(i, j int) bool { return entries[i].Start.Before(entries[j].Start) })
		if first := entries[0].Path; !crawltest.IsRobotsPath(first) {
			t.Errorf("%s: first request %s, want robots.txt", host, first)
		}
		for i := 1; i < len(entries); i++ {
			if prev, e := entries[i-1], entries[i]; e.Start.Before(prev.End) && e.Start.Before(crash) {
				t.Errorf("%s: %s (%s) and %s (%s) in flight at once", host, prev.Path, prev.From, e.Path, e.From)
			}
		}
	}
	for _, p := range procs {
		if n := strings.Count(p.Out.String(), `frontier/postgres: the database server was restarted"`); n != 2 {
			t.Errorf("%s found the database server restarted %d times, want 2", p.Name, n)
		}
	}
	// Each process ended as a crawl ends, with its summary, after the
	// warnings of the restarts.
	for _, name := range []string{"p1", "p2"} {
		b, err := os.ReadFile(filepath.Join(dir, name, "runs.jsonl"))
		if err != nil || !strings.Contains(string(b), `"stopped":"`) || strings.Contains(string(b), `"stopped":"error`) {
			t.Errorf("%s: runs.jsonl %q, %v", name, b, err)
		}
	}
	if t.Failed() {
		for _, p := range procs {
			t.Logf("%s:\n%s", p.Name, p.Out.String())
		}
	}
}

// pages counts the requests for pages (not robots.txt) the web has served.
func pages(web *simweb.Web) int {
	n := 0
	for _, e := range web.Requests() {
		if !crawltest.IsRobotsPath(e.Path) {
			n++
		}
	}
	return n
}
