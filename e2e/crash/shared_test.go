package crash_test

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
	"github.com/gentlecrawl/gentlecrawl/internal/frontier/postgres"
	"github.com/gentlecrawl/gentlecrawl/internal/pgtest"
	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

// TestSharedFrontier runs one crawl as several processes on one frontier in
// a real PostgreSQL: two start with half the seeds each and a third with
// none; one of the first two is killed with SIGKILL mid-crawl and a fourth
// joins, without seeds. From the server's log: every page fetched, none
// more than twice, robots.txt first on every host, one request at a time
// per host and the gap (or the Crawl-delay) between requests whichever
// process sent them, no request inside a Retry-After window, whoever got
// the 503, and never more requests in flight to the one address of every
// host than the per-address budget of one process.
func TestSharedFrontier(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four crawler processes and a PostgreSQL server")
	}
	dsn := pgtest.DB(t)
	const (
		delay      = 40 * time.Millisecond
		crawlDelay = 150 * time.Millisecond
		retryAfter = 2 * time.Second
		leaseTTL   = 2 * time.Second
	)
	// Two hosts of the plain profile have more pages and two outages
	// that answer 503 (or 429) with Retry-After: 2, counted from each
	// host's first request, so that a slow start on a loaded machine
	// cannot miss them: an early one and a later one. More windows make
	// the refusals go on, and the host-load backoff with them: minutes.
	// The first host's first outage opens with its first request, so
	// that its robots.txt is refused with a Retry-After: it must be asked
	// again when the server said, by whichever process, and the host
	// crawled.
	outages := func(status int, at ...time.Duration) []simweb.Outage {
		var os []simweb.Outage
		for _, a := range at {
			os = append(os, simweb.Outage{After: a, Duration: 700 * time.Millisecond, Status: status, RetryAfter: retryAfter})
		}
		return os
	}
	outage := map[int][]simweb.Outage{
		0: outages(503, 0, 4*time.Second),
		5: outages(429, 1600*time.Millisecond, 5*time.Second),
	}
	outage[0][0].Duration = 2500 * time.Millisecond
	// The web's shape (its pages and links) changes from run to run;
	// GENTLECRAWL_SHARED_SEED=N repeats one.
	seed := sharedSeed(t)
	web, catchAll := crawltest.ServeWeb(t, simweb.Config{
		Seed: seed, Hosts: 12, PagesPerHost: 20, CrawlDelay: crawlDelay,
		// A latency of its own, so that response times are not only the
		// loaded machine's (-race, four processes and PostgreSQL on two
		// cores), which the host-load control takes for a server struggling.
		Latency: 15 * time.Millisecond,
		HostOptions: func(i int, _ string) simweb.HostOptions {
			if o, ok := outage[i]; ok {
				return simweb.HostOptions{Pages: 45, Outages: o}
			}
			return simweb.HostOptions{}
		},
	})
	want := crawltest.ExpectedFetches(t, web, "gentlecrawl")

	dir := t.TempDir()
	args := func(name string, seeds []*simweb.Host) []string {
		a := []string{"crawl", "-q", "--frontier", dsn, "--lease-ttl", leaseTTL.String(),
			"--job", filepath.Join(dir, name), "--from", name + "@example.org",
			"--delay", delay.String(), "--workers", "4",
			"--allow-private-networks", "--connect-to", catchAll}
		for _, h := range seeds {
			a = append(a, h.URL("/"))
		}
		return a
	}
	hosts := web.Hosts()
	outageHost := map[string]bool{}
	for i := range outage {
		outageHost[hosts[i].Name] = true
	}
	p1 := crawltest.StartChild(t, "p1", args("p1", hosts[:6]))
	p2 := crawltest.StartChild(t, "p2", args("p2", hosts[6:]))
	p3 := crawltest.StartChild(t, "p3", args("p3", nil))

	// Kill p2 once it has made some requests and a third of the pages are
	// fetched, then let p4 join.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		reqs := web.Requests()
		byP2 := 0
		for _, e := range reqs {
			if e.From == "p2@example.org" {
				byP2++
			}
		}
		if byP2 >= 5 && len(reqs) >= len(want)/3 {
			break
		}
		select {
		case <-p2.Exited:
			t.Fatalf("p2 exited before the kill: %v\n%s", p2.Err, p2.Out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the crawl did not get going: %d requests\np1: %s\np2: %s", len(reqs), p1.Out.String(), p2.Out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	p2.Cmd.Process.Kill()
	<-p2.Exited
	killed := time.Now()
	p4 := crawltest.StartChild(t, "p4", args("p4", nil))
	stopWatch := make(chan struct{})
	go func() {
		// What the crawl is doing, every 10 s, for a run that does not end.
		for {
			select {
			case <-stopWatch:
				return
			case <-time.After(10 * time.Second):
			}
			reqs := web.Requests()
			last := ""
			if len(reqs) > 0 {
				e := reqs[len(reqs)-1]
				last = fmt.Sprintf("; last %s%s %d by %s at %s", e.Host, e.Path, e.Status, e.From, e.End.Format("15:04:05.000"))
			}
			t.Logf("%s: %d requests%s", time.Now().Format("15:04:05"), len(reqs), last)
		}
	}()
	defer close(stopWatch)
	for _, p := range []*crawltest.Child{p1, p3, p4} {
		p.Wait(t, 6*time.Minute)
	}
	web.Drain(t.Context())

	got := map[string]int{}
	byHost := map[string][]simweb.LogEntry{}
	by := map[string]map[string]int{} // host → process → requests
	for _, e := range web.Requests() {
		byHost[e.Host] = append(byHost[e.Host], e)
		if by[e.Host] == nil {
			by[e.Host] = map[string]int{}
		}
		by[e.Host][e.From]++
		if crawltest.IsRobotsPath(e.Path) {
			continue
		}
		if (e.Status == 503 || e.Status == 429) && outageHost[e.Host] {
			continue // refused, and asked again after the Retry-After
		}
		got[e.Host+" "+e.Path]++
		if !web.Allowed(e.Host, e.Path, "gentlecrawl") {
			t.Errorf("requested %s%s, which robots.txt disallows", e.Host, e.Path)
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
	shared, refusals, p4Requests := 0, 0, 0
	for host, entries := range byHost {
		sort.Slice(entries, func(i, j int) bool { return entries[i].Start.Before(entries[j].Start) })
		if len(by[host]) > 1 {
			shared++
		}
		p4Requests += by[host]["p4@example.org"]
		minGap := delay
		h := web.Host(host)
		if h.Profile == simweb.ProfileCrawlDelay {
			minGap = crawlDelay
		}
		if first := entries[0].Path; !crawltest.IsRobotsPath(first) {
			t.Errorf("%s: first request %s, want robots.txt", host, first)
		}
		robots := 0
		for i, e := range entries {
			if e.Path == "/robots.txt" && !(outageHost[host] && (e.Status == 503 || e.Status == 429)) {
				robots++ // a refusal is asked again: not counted
			}
			if i == 0 {
				continue
			}
			prev := entries[i-1]
			who := fmt.Sprintf("%s (%s) after %s (%s)", e.Path, e.From, prev.Path, prev.From)
			if e.Start.Before(prev.End) {
				t.Errorf("%s: two requests at once: %s", host, who)
				continue
			}
			wait := minGap
			if prev.Status == 503 || prev.Status == 429 {
				if outageHost[host] {
					refusals++
					wait = retryAfter
				}
			}
			if gap := e.Start.Sub(prev.End); gap < wait {
				t.Errorf("%s: %s started %v after the end of the one before, want at least %v", host, who, gap, wait)
			}
		}
		// The process killed may have fetched a robots.txt and died before
		// storing it: then it is fetched once more. A robots.txt that
		// answers 500 is asked again after a minute (--robots-retry),
		// which a slow run (-race) lasts.
		if h.Profile == simweb.ProfileError {
			var last time.Time
			for _, e := range entries {
				if e.Path == "/robots.txt" {
					if !last.IsZero() && e.Start.Sub(last) < time.Minute {
						t.Errorf("%s: robots.txt, which answers 500, asked again %v after the last time", host, e.Start.Sub(last))
					}
					last = e.End
				}
			}
		} else if robots > 2 || robots == 2 && by[host]["p2@example.org"] == 0 {
			t.Errorf("%s: robots.txt fetched %d times by %v", host, robots, by[host])
		}
	}
	if refusals == 0 {
		t.Error("no request met an outage: the Retry-After check saw nothing")
	}
	if shared == 0 {
		t.Error("no host was fetched by more than one process: politeness across processes was not tested")
	}
	if p4Requests == 0 {
		t.Error("p4, which joined after the kill, fetched nothing")
	}
	// Every host is served on one address: the per-address budget (2,
	// the default) is the whole crawl's, not each process's.
	type edge struct {
		at    time.Time
		delta int
		e     simweb.LogEntry
	}
	var edges []edge
	for _, e := range web.Requests() {
		edges = append(edges, edge{e.Start, 1, e}, edge{e.End, -1, e})
	}
	sort.Slice(edges, func(i, j int) bool {
		if !edges[i].at.Equal(edges[j].at) {
			return edges[i].at.Before(edges[j].at)
		}
		return edges[i].delta < edges[j].delta
	})
	inFlight, most := 0, 0
	open := map[simweb.LogEntry]bool{}
	for _, e := range edges {
		inFlight += e.delta
		if e.delta > 0 {
			open[e.e] = true
		} else {
			delete(open, e.e)
		}
		if inFlight > 2 {
			var which []string
			for o := range open {
				which = append(which, fmt.Sprintf("%s%s by %s [%s, %s]", o.Host, o.Path, o.From, o.Start.Format("15:04:05.000"), o.End.Format("15:04:05.000")))
			}
			t.Errorf("%d requests in flight at once to the one address of every host, over the budget of 2: %s", inFlight, strings.Join(which, "; "))
		}
		most = max(most, inFlight)
	}
	t.Logf("%d requests, %d hosts fetched by more than one process, %d refusals, p4 %d requests, %v after the kill, at most %d in flight",
		len(web.Requests()), shared, refusals, p4Requests, time.Since(killed).Round(time.Millisecond), most)

	// Each process that finished wrote its summary.
	for _, name := range []string{"p1", "p3", "p4"} {
		b, err := os.ReadFile(filepath.Join(dir, name, "runs.jsonl"))
		if t.Failed() {
			t.Logf("%s: %s", name, b)
		}
		if err != nil || !strings.Contains(string(b), `"stopped":"`) {
			t.Errorf("%s: runs.jsonl %q, %v", name, b, err)
		}
	}
}

// whereIs says what the shared frontier knows of a page ("host path")
// that was never fetched: seen or not, its history, its host's queue.
func whereIs(t *testing.T, dsn, k string) string {
	host, path, _ := strings.Cut(k, " ")
	st, err := postgres.Open(t.Context(), dsn, postgres.Options{})
	if err != nil {
		return err.Error()
	}
	defer st.Close()
	u, _ := url.Parse("http://" + host + path)
	canon := urlnorm.Canonical(u)
	seen, err := st.Seen(t.Context(), canon)
	if err != nil {
		return err.Error()
	}
	h, _ := st.History(t.Context(), canon)
	pending := 0
	hosts, _ := st.Hosts(t.Context())
	for _, hi := range hosts {
		if hi.Host == host {
			pending = hi.Pending
		}
	}
	return fmt.Sprintf("seen %v, history %+v, %d URLs of the host queued", seen, h, pending)
}

// sharedSeed is the seed of a shared crawl test's web: drawn per run, or
// GENTLECRAWL_SHARED_SEED's, which repeats a run.
func sharedSeed(t *testing.T) int64 {
	t.Helper()
	seed := time.Now().UnixNano()%10000 + 1
	if v := os.Getenv("GENTLECRAWL_SHARED_SEED"); v != "" {
		if _, err := fmt.Sscan(v, &seed); err != nil {
			t.Fatalf("GENTLECRAWL_SHARED_SEED=%q: %v", v, err)
		}
	}
	t.Logf("simweb seed %d (GENTLECRAWL_SHARED_SEED=%d repeats this run's web)", seed, seed)
	return seed
}
