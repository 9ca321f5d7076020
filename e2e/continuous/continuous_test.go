package continuous_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/apachetest"
	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

// changingWeb starts a one-host simweb whose pages change (Changes began
// an hour ago, so a page's Last-Modified tells its recent past), and
// returns it with its server's catch-all address.
func changingWeb(t *testing.T, seed int64, pages int, changes simweb.Changes) (*simweb.Web, *simweb.Host, string) {
	t.Helper()
	if changes.Start.IsZero() {
		changes.Start = time.Now().Add(-time.Hour)
	}
	web, catchAll := crawltest.ServeWeb(t, simweb.Config{Seed: seed, Hosts: 1, PagesPerHost: pages, Profiles: []simweb.Profile{simweb.ProfileAllow},
		HostOptions: func(int, string) simweb.HostOptions { return simweb.HostOptions{Changes: &changes} }})
	return web, web.Hosts()[0], catchAll
}

// fetchTimes returns, per path, the start of each GET the log shows.
func fetchTimes(log []simweb.LogEntry) map[string][]time.Time {
	out := map[string][]time.Time{}
	for _, e := range log {
		if e.Method == "GET" {
			out[e.Path] = append(out[e.Path], e.Start)
		}
	}
	return out
}

// pageFetches returns the fetch times of each HTML page of h in the log,
// and fails the test for a page never fetched, or fetched again within
// revisitMin unless excused says the two fetches may be that close (nil:
// never).
func pageFetches(t *testing.T, h *simweb.Host, log []simweb.LogEntry, revisitMin time.Duration, excused func(a, b time.Time) bool) map[string][]time.Time {
	t.Helper()
	times := fetchTimes(log)
	out := map[string][]time.Time{}
	for _, r := range h.Resources() {
		if !strings.HasPrefix(r.ContentType, "text/html") {
			continue
		}
		ts := times[r.Path]
		if len(ts) == 0 {
			t.Errorf("%s never fetched", r.Path)
			continue
		}
		for i := 1; i < len(ts); i++ {
			if gap := ts[i].Sub(ts[i-1]); gap < revisitMin && (excused == nil || !excused(ts[i-1], ts[i])) {
				t.Errorf("%s fetched again after %v, within --revisit-min", r.Path, gap)
			}
		}
		out[r.Path] = ts
	}
	return out
}

// requestsInWindow is the most requests of the log that start within any
// window of length w.
func requestsInWindow(log []simweb.LogEntry, w time.Duration) int {
	var ts []time.Time
	for _, e := range log {
		ts = append(ts, e.Start)
	}
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	most, j := 0, 0
	for i := range ts {
		for ts[i].Sub(ts[j]) >= w {
			j++
		}
		most = max(most, i-j+1)
	}
	return most
}

// TestContinuous: a continuous crawl of a web whose pages change at known
// rates fetches every page, revisits the pages that change often and not
// the static ones, never revisits a page within --revisit-min, never
// exceeds --max-rate over any 10 s, and ends after --for with its revisits
// kept: run again, it discovers nothing anew and does not fetch the static
// pages again, whose revisit is far off.
func TestContinuous(t *testing.T) {
	const rate = 4.0
	for _, seed := range []int64{2, 9} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			// Per seed, a different number of pages and mix of rates.
			pages := 25 + int(seed)*2
			fast := 1.0 / float64(4+seed)
			web, h, catchAll := changingWeb(t, seed, pages, simweb.Changes{Rates: []float64{fast, 1.0 / 900}, Static: 0.3})
			job := t.TempDir()
			cfg := gentlecrawl.Config{
				JobDir: job, Seeds: []string{h.URL("/")}, Delay: time.Millisecond, Workers: 4,
				ConnectTo: crawltest.ConnectTo(catchAll), AllowPrivateNetworks: true,
				Continuous: true, For: 25 * time.Second, MaxRate: rate,
				RevisitMin: time.Second, RevisitMax: time.Hour,
			}
			sum := crawltest.MustCrawl(t, t.Context(), cfg)
			if sum.Stopped != "time limit" {
				t.Errorf("stopped %q, want time limit", sum.Stopped)
			}
			log := web.Requests()
			if most, limit := requestsInWindow(log, 10*time.Second), int(rate*10)+1; most > limit {
				t.Errorf("%d requests within 10 s; --max-rate %v allows %d", most, rate, limit)
			}
			var fastN, staticN []int
			for path, ts := range pageFetches(t, h, log, cfg.RevisitMin, nil) {
				switch lambda, _ := h.ChangeRate(path); lambda {
				case fast:
					fastN = append(fastN, len(ts))
				case 0:
					staticN = append(staticN, len(ts))
				}
			}
			mean := func(xs []int) float64 {
				s := 0
				for _, x := range xs {
					s += x
				}
				return float64(s) / float64(max(len(xs), 1))
			}
			t.Logf("%d requests; fetches per fast page %v (mean %.1f), per static page %v; by purpose %v",
				len(log), fastN, mean(fastN), staticN, sum.ByPurpose)
			if len(fastN) == 0 || len(staticN) == 0 {
				t.Fatal("the web has no fast or no static pages; choose other parameters")
			}
			// How many revisits fit in the run depends on the machine (a
			// loaded one under -race takes half of it to discover the
			// pages); that fast pages are revisited and static ones not
			// does not.
			if mean(fastN) < 1.5 || mean(staticN) != 1 {
				t.Errorf("fast pages fetched %.1f times on average, static ones %.1f: the schedule does not follow change", mean(fastN), mean(staticN))
			}
			if sum.ByPurpose["refresh"] == 0 {
				t.Error("no refresh counted")
			}
			if d, ok := sum.Demand["a.test"]; !ok || d.Pages == 0 || d.ChangeP10 <= 0 || d.ChangeP10 > d.ChangeP90 || d.Budget <= 0 {
				t.Errorf("no account of the host's changes in the summary: %+v", d)
			} else {
				t.Logf("change: %+v", d)
			}

			// Again: the revisits planned are in the job.
			web.ResetLog()
			cfg.For = 5 * time.Second
			sum = crawltest.MustCrawl(t, t.Context(), cfg)
			if n := sum.ByPurpose["discovery"]; n != 0 {
				t.Errorf("the second run made %d discovery fetches; every URL was known", n)
			}
			again := fetchTimes(web.Requests())
			for _, r := range h.Resources() {
				if lambda, ok := h.ChangeRate(r.Path); ok && lambda == 0 && strings.HasPrefix(r.ContentType, "text/html") && len(again[r.Path]) > 0 {
					t.Errorf("static page %s fetched again in the second run", r.Path)
				}
			}
		})
	}
}

// TestContinuousLyingValidators: on a host whose validators never change
// (every conditional GET answers 304, whatever changed), a continuous crawl
// sends a page without validators after a few 304s in a row, finds it
// changed, names the host in the summary, and from then on refreshes
// without validators, so it sees the changes. (Its pages' old
// Last-Modified says they are static: only --revisit-max brings the crawl
// back to them.)
func TestContinuousLyingValidators(t *testing.T) {
	t.Parallel()
	web, h, catchAll := changingWeb(t, 4, 12, simweb.Changes{Rates: []float64{1.0 / 3}, Lying: true})
	sum := crawltest.MustCrawl(t, t.Context(), gentlecrawl.Config{
		JobDir: t.TempDir(), Seeds: []string{h.URL("/")}, Delay: time.Millisecond, Workers: 2,
		ConnectTo: crawltest.ConnectTo(catchAll), AllowPrivateNetworks: true,
		// 25 s: under -race on a loaded machine, discovery took half of
		// 15 s and pages were asked only twice with validators, never the
		// third time that sends them without (CI, 2026-12-02).
		Continuous: true, For: 25 * time.Second, MaxRate: 6,
		RevisitMin: time.Second, RevisitMax: 2 * time.Second, RecheckEvery: 2,
	})
	report := sum.Validators[h.URL("")]
	t.Logf("validators: %+v; by status %v", report, sum.ByStatus)
	if report.Sent != gentlecrawl.ValidatorsNone || report.Lies < 2 || report.LiedURL == "" {
		t.Fatalf("the summary does not say the validators lie: %+v", sum.Validators)
	}
	// The host is found out when a second page, asked without validators
	// after a 304, turns out to have changed since the version last
	// fetched (simweb knows the versions). No request that starts after
	// that answer carries validators.
	log := web.Requests()
	slices.SortFunc(log, func(a, b simweb.LogEntry) int { return a.Start.Compare(b.Start) })
	lastStatus, lastVersion := map[string]int{}, map[string]int{}
	lies := 0
	var foundOut time.Time
	for _, e := range log {
		conditional := e.IfNoneMatch != "" || e.IfModifiedSince != ""
		v := h.VersionAt(e.Path, e.Start)
		if !conditional && lastStatus[e.Path] == 304 && v != lastVersion[e.Path] {
			if lies++; lies == 2 {
				foundOut = e.End
			}
		}
		if !foundOut.IsZero() && e.Start.After(foundOut) && conditional {
			t.Errorf("%s at %v sent validators after the host was found to lie (at %v)", e.Path, e.Start.Format("15:04:05.000"), foundOut.Format("15:04:05.000"))
		}
		lastStatus[e.Path] = e.Status
		if e.Status == 200 {
			lastVersion[e.Path] = v
		}
	}
	if foundOut.IsZero() {
		t.Error("the log shows no two pages caught changing under lying validators")
	}
}

// TestContinuousKillNine: a continuous crawl killed with SIGKILL at random
// moments and resumed keeps its plan. Every page is fetched. No static
// page is fetched again, except what a kill cut in flight (at most one
// per kill). No page is revisited within --revisit-min except across a
// kill, and the budget holds over every 10 s.
func TestContinuousKillNine(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a crawler process")
	}
	t.Parallel()
	const rate = 5.0
	web, h, catchAll := changingWeb(t, 21, 40, simweb.Changes{Rates: []float64{1.0 / 6, 1.0 / 120}, Static: 0.4})
	job := filepath.Join(t.TempDir(), "job")
	args := []string{"crawl", "-q", "--job", job, "--delay", "1ms", "--workers", "3",
		"--continuous", "--for", "6s", "--max-rate", fmt.Sprint(rate), "--revisit-min", "1s", "--revisit-max", "1h",
		"--allow-private-networks", "--connect-to", catchAll, h.URL("/")}
	rng := rand.New(rand.NewPCG(21, 3))
	var kills []time.Time
	for i := range 6 {
		cmd := crawltest.Command(args)
		var out crawltest.LockedBuffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		if i < 5 {
			// Killed after 1–4 s, at a random moment.
			select {
			case <-time.After(time.Second + time.Duration(rng.IntN(3000))*time.Millisecond):
				cmd.Process.Kill()
				kills = append(kills, time.Now())
				<-exited
				continue
			case err := <-exited:
				t.Fatalf("run %d ended before the kill: %v\n%s", i, err, out.String())
			}
		}
		if err := <-exited; err != nil {
			t.Fatalf("last run: %v\n%s", err, out.String())
		}
	}
	log := web.Requests()
	if most, limit := requestsInWindow(log, 10*time.Second), int(rate*10)+1+len(kills); most > limit {
		// Each restart may send one request its predecessor's gate would
		// have held back: the gate lives in the process.
		t.Errorf("%d requests within 10 s; --max-rate %v allows %d", most, rate, limit)
	}
	nearKill := func(a, b time.Time) bool {
		for _, k := range kills {
			if !a.After(k) && b.After(k) {
				return true
			}
		}
		return false
	}
	staticFetches, static := 0, 0
	for path, ts := range pageFetches(t, h, log, time.Second, nearKill) {
		if lambda, _ := h.ChangeRate(path); lambda == 0 {
			static++
			staticFetches += len(ts)
		}
	}
	t.Logf("%d requests over %d kills; %d static pages fetched %d times", len(log), len(kills), static, staticFetches)
	if staticFetches > static+len(kills) {
		t.Errorf("static pages fetched %d times: more than once each plus one per kill (%d)", staticFetches, static+len(kills))
	}
}

// TestContinuousAfterPlainCrawl: a job crawled once without --continuous
// and then continued with it plans a revisit for every page it knows. The
// pages that change are fetched again; the static ones, whose
// Last-Modified is old, and the new URLs (there are none) are not.
func TestContinuousAfterPlainCrawl(t *testing.T) {
	t.Parallel()
	web, h, catchAll := changingWeb(t, 5, 20, simweb.Changes{Rates: []float64{1.0 / 4}, Static: 0.5})
	cfg := gentlecrawl.Config{
		JobDir: t.TempDir(), Seeds: []string{h.URL("/")}, Delay: time.Millisecond, Workers: 2,
		ConnectTo: crawltest.ConnectTo(catchAll), AllowPrivateNetworks: true,
	}
	if sum := crawltest.MustCrawl(t, t.Context(), cfg); sum.Stopped != "finished" {
		t.Fatalf("the plain crawl stopped %q", sum.Stopped)
	}
	web.ResetLog()
	cfg.Continuous, cfg.For, cfg.MaxRate = true, 8*time.Second, 5
	cfg.RevisitMin, cfg.RevisitMax = time.Second, time.Hour
	sum := crawltest.MustCrawl(t, t.Context(), cfg)
	again := fetchTimes(web.Requests())
	changing, static := 0, 0
	for _, r := range h.Resources() {
		if !strings.HasPrefix(r.ContentType, "text/html") {
			continue
		}
		switch lambda, _ := h.ChangeRate(r.Path); {
		case lambda == 0 && len(again[r.Path]) > 0:
			static++
		case lambda > 0 && len(again[r.Path]) > 0:
			changing++
		}
	}
	t.Logf("continued: %v; %d changing pages fetched again, %d static", sum.ByPurpose, changing, static)
	if sum.ByPurpose["discovery"] != 0 || sum.ByPurpose["refresh"] == 0 {
		t.Errorf("by purpose %v: want refreshes only", sum.ByPurpose)
	}
	if changing == 0 || static != 0 {
		t.Errorf("%d changing pages and %d static ones fetched again: want some and none", changing, static)
	}
}

// TestContinuousApache: against Debian's Apache with mod_deflate, a site
// whose files are rewritten every two seconds and whose other files are a
// month old. From Apache's log: the continuous crawl fetches every page,
// fetches the old ones once only, comes back to the changing ones again
// and again, getting their new content as 200s and their unchanged
// content as 304s (once it has learned that Apache wants the ETag without
// "-gzip"), and never comes back within --revisit-min.
func TestContinuousApache(t *testing.T) {
	apachetest.Require(t)
	t.Parallel()
	const cold, hot = 24, 6
	root := t.TempDir()
	filler := strings.Repeat("Long enough to be worth compressing, so that mod_deflate compresses it. ", 30)
	page := func(name, text string) string {
		return "<!DOCTYPE html><title>" + name + "</title><p>" + text + " " + filler + "</p>"
	}
	var index strings.Builder
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Error(err)
		}
	}
	for i := range cold + hot {
		name := fmt.Sprintf("p%d.html", i)
		fmt.Fprintf(&index, `<a href="/%s">%s</a> `, name, name)
		write(name, page(name, "version 0"))
	}
	write("index.html", page("home", index.String()))
	old := time.Now().Add(-30 * 24 * time.Hour)
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		os.Chtimes(filepath.Join(root, e.Name()), old, old)
	}
	srv := apachetest.Start(t, apachetest.Site{Name: "apache.test", Addr: "127.0.0.5:0", Root: root, Deflate: true})

	// The hot pages change every two seconds while the crawl runs.
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for v := 1; ; v++ {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Second):
			}
			for i := cold; i < cold+hot; i++ {
				name := fmt.Sprintf("p%d.html", i)
				write(name, page(name, fmt.Sprintf("version %d", v)))
			}
		}
	}()
	sum := crawltest.MustCrawl(t, t.Context(), gentlecrawl.Config{
		JobDir: t.TempDir(), Seeds: []string{"http://apache.test/"}, Delay: time.Millisecond, Workers: 2,
		ConnectTo: crawltest.ConnectTo("apache.test:80:" + srv.Addr("apache.test")), AllowPrivateNetworks: true,
		Continuous: true, For: 20 * time.Second, MaxRate: 5, RevisitMin: time.Second, RevisitMax: time.Hour,
	})
	close(stop)
	<-done
	log, err := srv.WaitEntries(t.Context(), sum.Requests)
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		times    []time.Time
		statuses map[int]int
	}
	by := map[string]*seen{}
	for _, e := range log {
		s := by[e.URI]
		if s == nil {
			s = &seen{statuses: map[int]int{}}
			by[e.URI] = s
		}
		// When Apache read the request: it logs when it finished, and the
		// crawler may have the answer before Apache writes its log line.
		s.times = append(s.times, e.Start())
		s.statuses[e.Status]++
	}
	hotFetches, hot200, hot304 := 0, 0, 0
	for i := range cold + hot {
		uri := fmt.Sprintf("/p%d.html", i)
		s := by[uri]
		if s == nil {
			t.Errorf("%s never fetched", uri)
			continue
		}
		slices.SortFunc(s.times, func(a, b time.Time) int { return a.Compare(b) })
		for j := 1; j < len(s.times); j++ {
			if gap := s.times[j].Sub(s.times[j-1]); gap < time.Second {
				t.Errorf("%s fetched again after %v, within --revisit-min", uri, gap)
			}
		}
		if i < cold {
			if len(s.times) != 1 {
				t.Errorf("%s, a month old, fetched %d times", uri, len(s.times))
			}
			continue
		}
		hotFetches += len(s.times)
		hot200 += s.statuses[200]
		hot304 += s.statuses[304]
	}
	t.Logf("%d requests; the %d changing pages: %d fetches, %d × 200, %d × 304; by purpose %v; validators %v; change %v",
		len(log), hot, hotFetches, hot200, hot304, sum.ByPurpose, sum.Validators, sum.Demand)
	if hotFetches < 3*hot || hot200 < 2*hot || hot304 == 0 {
		t.Errorf("the changing pages: %d fetches, %d × 200, %d × 304; want at least 3 fetches and 2 full answers a page, and some 304s", hotFetches, hot200, hot304)
	}
}
