package crash_test

import (
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
	"github.com/gentlecrawl/gentlecrawl/internal/report"
	"github.com/gentlecrawl/gentlecrawl/internal/reqlog"
	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
	"github.com/gentlecrawl/gentlecrawl/internal/warccheck"
)

// TestKillNineLosesNothing kills the crawler process with SIGKILL at random
// moments, twenty times, resuming the job each time, and checks from the
// server's log and the job: every page fetched, none more than twice, no
// gap below the delay across the restarts, and every WARC file readable.
func TestKillNineLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a crawler process twenty times")
	}
	web, err := simweb.New(simweb.Config{Seed: 11, Hosts: 12, PagesPerHost: 80, CrawlDelay: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := web.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	want := crawltest.ExpectedFetches(t, web, "gentlecrawl")

	job := filepath.Join(t.TempDir(), "job")
	const delay = 40 * time.Millisecond
	args := []string{"crawl", "-q", "--job", job, "--delay", delay.String(), "--workers", "6",
		"--allow-private-networks", "--connect-to", srv.CatchAll()}
	for _, h := range web.Hosts() {
		args = append(args, h.URL("/"))
	}
	// The last run, to the end, keeps its progress lines (every 10 s): if it
	// does not finish, they say what the crawl was waiting for.
	final := slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "-q" })

	rng := rand.New(rand.NewPCG(7, 11))
	var lastKill time.Time
	run := func(kill bool) (finished bool) {
		t.Helper()
		cmd := crawltest.Command(args)
		if !kill {
			cmd = crawltest.Command(final)
		}
		var out crawltest.LockedBuffer
		cmd.Stdout, cmd.Stderr = &out, &out
		before := len(web.Requests())
		// The hosts whose last request may have been in flight at the last
		// kill: their first request in this run is likely the re-fetch it
		// cost, which this run must not be killed in the middle of.
		cut := map[string]bool{}
		for _, e := range web.Requests() {
			if !lastKill.IsZero() && e.End.After(lastKill.Add(-100*time.Millisecond)) {
				cut[e.Host] = true
			}
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		if kill {
			// Let it get going — one request per host, so that what the
			// last kill cut off has been fetched again — then kill it after
			// a random number of further requests, at a random moment. A
			// crash costs at most one more fetch of what was in flight;
			// kills closer together than that could cut the same re-fetch
			// twice, which is not what is measured: so the kill also waits
			// until the hosts the last kill may have cut have been asked
			// again, a moment ago (a slow host's first request of a run —
			// a Crawl-delay host waits its gap when a crawl resumes — came
			// right at the kill in one run of four, and the same URL was
			// cut three times). Counting requests, not time, keeps the
			// test the same on a slow machine.
			target := before + len(web.Hosts()) + 2 + rng.IntN(20)
			deadline := time.Now().Add(time.Minute)
			var reached time.Time // when target was, to wait for the re-fetches no longer than a moment
			for time.Now().Before(deadline) {
				reqs := web.Requests()
				if len(reqs) >= target {
					if reached.IsZero() {
						reached = time.Now()
					}
					if refetched(reqs[before:], cut, 200*time.Millisecond) || time.Since(reached) > 400*time.Millisecond {
						break
					}
				}
				select {
				case err := <-exited:
					if err != nil {
						t.Fatalf("crawler failed: %v\n%s", err, out.String())
					}
					return true
				case <-time.After(5 * time.Millisecond):
				}
			}
			time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
			cmd.Process.Kill()
			lastKill = time.Now()
		}
		select {
		case err := <-exited:
			if kill {
				return false
			}
			if err != nil {
				t.Fatalf("crawler failed: %v\n%s", err, out.String())
			}
			return true
		case <-time.After(5 * time.Minute):
			// SIGQUIT: the child prints where every goroutine is.
			cmd.Process.Signal(syscall.SIGQUIT)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-exited
			}
			t.Fatalf("crawler did not finish\n%s", out.String())
		}
		return false
	}
	// Twenty kills at least, and on until forty: the run to the end is then
	// short. A long one on a loaded machine (the race detector in CI) backs
	// off from hosts whose answers slow down — as it should — and once
	// crawled one page in 20 s for minutes, past its timeout.
	kills, runs := 0, 1
	for kills < 40 {
		runs++
		if run(true) {
			break // it finished before the kill
		}
		kills++
	}
	run(false) // to the end (a run with nothing left when the last did)
	t.Logf("killed %d times", kills)
	if kills < 20 {
		t.Errorf("only %d kills before the crawl finished: make the test web bigger", kills)
	}
	web.Drain(t.Context())

	got := map[string]int{}
	byHost := map[string][]simweb.LogEntry{}
	for _, e := range web.Requests() {
		byHost[e.Host] = append(byHost[e.Host], e)
		if crawltest.IsRobotsPath(e.Path) {
			continue
		}
		got[e.Host+" "+e.Path]++
		if !web.Allowed(e.Host, e.Path, "gentlecrawl") {
			t.Errorf("requested %s%s, which robots.txt disallows", e.Host, e.Path)
		}
	}
	// A request sent twice (flag r: a kept-alive connection failed before
	// any byte of the answer) is none of the kills' doing. simweb never
	// drops a kept-alive connection, so there is none; a page fetched three
	// times with one would owe it to the retry.
	retried := retriedRequests(t, job)
	for k := range want {
		switch n := got[k]; {
		case n == 0:
			t.Errorf("%s never fetched: lost in a crash", k)
		case n > 2:
			t.Errorf("%s fetched %d times, want at most twice (sent twice by one fetch: %d times)", k, n, retried[k])
		}
	}
	if len(retried) > 0 {
		t.Logf("requests sent twice (flag r): %v", retried)
	}
	for host, entries := range byHost {
		sort.Slice(entries, func(i, j int) bool { return entries[i].Start.Before(entries[j].Start) })
		minGap := delay
		if web.Host(host).Profile == simweb.ProfileCrawlDelay {
			minGap = 200 * time.Millisecond
		}
		for i := 1; i < len(entries); i++ {
			prev, e := entries[i-1], entries[i]
			if e.Start.Before(prev.End) {
				t.Errorf("%s: %s and %s in flight at once", host, prev.Path, e.Path)
			} else if gap := e.Start.Sub(prev.End); gap < minGap {
				t.Errorf("%s: %s started %v after %s ended, want ≥ %v", host, e.Path, gap, prev.Path, minGap)
			}
		}
	}
	crawltest.ReadWARC(t, filepath.Join(job, "warc"))
	// Every WARC file, those a kill left open included, read back by
	// three readers and indexed.
	warccheck.Job(t, job)

	// The request logs of the killed runs: a kill loses the requests in
	// flight (sent, not yet answered, so not yet logged) and at most a
	// partial last line, never what was logged before.
	r, err := report.Read(job, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	served := len(web.Requests())
	if r.Requests > served || served-r.Requests > (kills+1)*6 {
		t.Errorf("the request logs have %d requests, the server saw %d, with %d kills of 6 workers", r.Requests, served, kills)
	}
	if len(r.Runs) != runs || r.Runs[len(r.Runs)-1].Stopped == "killed" || r.Runs[0].Stopped != "killed" {
		t.Errorf("%d runs in the report, the first %+v, the last %+v; want %d, the killed ones without a summary", len(r.Runs), r.Runs[0], r.Runs[len(r.Runs)-1], runs)
	}
}

// retriedRequests reads the request logs of every run of job and counts,
// by "host path" as simweb logs them, the requests flagged r: sent twice.
func retriedRequests(t *testing.T, job string) map[string]int {
	t.Helper()
	runs, err := reqlog.Runs(job)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, run := range runs {
		f, err := os.Open(reqlog.Path(job, run))
		if err != nil {
			t.Fatal(err)
		}
		err = reqlog.Read(f, reqlog.Visitor{Request: func(r *reqlog.Record) error {
			if u, err := url.Parse(r.URL); err == nil && r.Retried {
				n[u.Host+" "+u.RequestURI()]++
			}
			return nil
		}})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// refetched reports whether every host in cut has a request among reqs that
// ended at least settle ago: the crawler has had time to record it.
func refetched(reqs []simweb.LogEntry, cut map[string]bool, settle time.Duration) bool {
	done := map[string]bool{}
	for _, e := range reqs {
		if cut[e.Host] && time.Since(e.End) >= settle {
			done[e.Host] = true
		}
	}
	return len(done) == len(cut)
}
