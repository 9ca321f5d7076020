package gentlecrawl_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
	"github.com/gentlecrawl/gentlecrawl/internal/reqlog"
	"github.com/gentlecrawl/gentlecrawl/internal/warccheck"
)

// troubleSite serves a.test with pages that go wrong in the ways real sites
// do; the crawl must record each, count it, and go on.
func troubleSite(t *testing.T) (*httptest.Server, func() map[string]int) {
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.RequestURI()]++
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /no/\n")
		case "/":
			fmt.Fprint(w, `<a href="/reset">reset</a> <a href="/bin">bin</a> <a href="/gone">gone</a>
				<a href="/moved">moved</a> <a href="/no/secret">secret</a> <a href="http://b.test/">b</a>
				<a href="/deep/1">deep</a> <a href="/cut">cut</a>`)
		case "/reset":
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		case "/cut":
			w.Header().Set("Content-Length", "10000")
			w.Write([]byte("<html>only part"))
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		case "/bin":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write([]byte("\x00\x01<a href=\"/never\">not a link</a>"))
		case "/moved":
			http.Redirect(w, r, "/target#frag", http.StatusMovedPermanently)
		case "/target", "/deep/3":
			fmt.Fprint(w, "<p>here</p>")
		case "/deep/1":
			fmt.Fprint(w, `<a href="/deep/2">next</a>`)
		case "/deep/2":
			fmt.Fprint(w, `<a href="/deep/3">next</a>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		c := map[string]int{}
		for k, v := range hits {
			c[k] = v
		}
		return c
	}
}

func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestCrawlRecordsFailuresAndGoesOn(t *testing.T) {
	srv, hits := troubleSite(t)
	job := t.TempDir()
	c, err := gentlecrawl.New(gentlecrawl.Config{
		JobDir:               job,
		Seeds:                []string{"http://a.test/", "http://b.test/"},
		Delay:                20 * time.Millisecond,
		MaxDepth:             2,
		MaxAttempts:          1, // TestRetryAfterIsHonoured covers the retries
		ConnectTo:            crawltest.ConnectTo("a.test:80:"+srv.Listener.Addr().String(), "b.test:80:"+closedPort(t)),
		AllowPrivateNetworks: true,
		RobotsRetry:          time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	h := hits()
	for _, p := range []string{"/", "/bin", "/gone", "/moved", "/target", "/deep/1", "/deep/2", "/cut"} {
		if h[p] != 1 {
			t.Errorf("%s requested %d times, want once", p, h[p])
		}
	}
	// /reset drops the connection after reading the request, without a
	// byte of answer. On a kept-alive connection (after robots.txt and /)
	// the request goes once more on a new one, as net/http sends a GET
	// again, and is dropped there too; never a third time. The request
	// log has one line for it, flagged r when it was sent twice.
	if h["/reset"] < 1 || h["/reset"] > 2 {
		t.Errorf("/reset requested %d times, want once or twice", h["/reset"])
	}
	f, err := os.Open(reqlog.Path(job, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var resets []reqlog.Record
	err = reqlog.Read(f, reqlog.Visitor{Request: func(r *reqlog.Record) error {
		if strings.HasSuffix(r.URL, "/reset") {
			resets = append(resets, *r)
		} else if r.Retried {
			t.Errorf("%s flagged as sent twice", r.URL)
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resets) != 1 || resets[0].Error != "reset" || resets[0].Retried != (h["/reset"] == 2) {
		t.Errorf("request log lines for /reset %+v; want one, error reset, flagged r if sent twice (%d)", resets, h["/reset"])
	}
	for _, p := range []string{"/no/secret", "/never", "/deep/3"} {
		if h[p] != 0 {
			t.Errorf("%s requested; want never (disallowed, not a link, too deep)", p)
		}
	}
	if sum.Errors["reset"] != 1 {
		t.Errorf("errors %v, want one reset", sum.Errors)
	}
	if sum.Robots["unavailable"] != 1 {
		t.Errorf("robots outcomes %v: the unreachable b.test should count as unavailable", sum.Robots)
	}
	if sum.ByStatus[404] != 1 || sum.ByStatus[301] != 1 || sum.Disallowed != 1 || sum.TooDeep != 1 || sum.Truncated != 1 {
		t.Errorf("summary %+v", sum)
	}
	if sum.Stopped != "deferred" || len(sum.Deferred) != 1 || sum.Deferred[0] != "http://b.test" {
		t.Errorf("stopped %q, deferred %v; want b.test deferred", sum.Stopped, sum.Deferred)
	}
}

func TestCrawlResumesAfterInterruption(t *testing.T) {
	web, srv := e2eWeb(t)
	want := crawltest.ExpectedFetches(t, web, "gentlecrawl")
	cfg := e2eConfig(web, srv, t.TempDir())
	cfg.Delay = 20 * time.Millisecond

	// Interrupt the first run after about a third of the pages.
	ctx, cancel := context.WithCancel(t.Context())
	c, err := gentlecrawl.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for c.Progress().Pages < len(want)/3 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	sum, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Stopped != "interrupted" || sum.Queued == 0 {
		t.Fatalf("first run: stopped %q with %d queued; want an interrupted crawl with work left", sum.Stopped, sum.Queued)
	}

	c, err = gentlecrawl.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := web.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	twice := 0
	for _, e := range web.Requests() {
		if crawltest.IsRobotsPath(e.Path) {
			continue
		}
		key := e.Host + " " + e.Path
		got[key]++
		if got[key] == 2 {
			twice++
		}
	}
	for k := range want {
		if got[k] == 0 {
			t.Errorf("%s never fetched: lost in the interruption", k)
		}
		if got[k] > 2 {
			t.Errorf("%s fetched %d times", k, got[k])
		}
	}
	// Only a fetch cut off by the interruption may be made again.
	if twice > cfg.Workers {
		t.Errorf("%d URLs fetched twice; at most the %d in flight at the interruption may be", twice, cfg.Workers)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s fetched, not an allowed page", k)
		}
	}
}

func TestMaxPagesAndScope(t *testing.T) {
	web, srv := e2eWeb(t)
	cfg := e2eConfig(web, srv, t.TempDir())
	cfg.Seeds = []string{web.Hosts()[0].URL("/")} // a.test only: other hosts out of scope
	cfg.Delay = 10 * time.Millisecond
	cfg.MaxPages = 5
	c, err := gentlecrawl.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	web.Drain(t.Context())
	pages := 0
	for _, e := range web.Requests() {
		if e.Host != "a.test" {
			t.Errorf("request to %s%s: outside the scope of the seed", e.Host, e.Path)
		}
		if !strings.HasPrefix(e.Path, "/robots") {
			pages++
		}
	}
	if pages != 5 || sum.Stopped != "max-pages" {
		t.Errorf("%d pages, stopped %q; want 5 and max-pages", pages, sum.Stopped)
	}
}

// TestOriginsOfOneHostShareItsPoliteness: http://a.test and http://a.test:81
// are one host name, so one request at a time and the gap hold across both,
// while each origin gets its own robots.txt (RFC 9309 §2.3: rules apply to
// the scheme, host and port they were fetched from).
func TestOriginsOfOneHostShareItsPoliteness(t *testing.T) {
	type hit struct {
		origin, path string
		start, end   time.Time
	}
	var mu sync.Mutex
	var hits []hit
	handler := func(origin string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			switch {
			case r.URL.Path == "/robots.txt" && origin == "81":
				fmt.Fprint(w, "User-agent: *\nDisallow: /secret\n")
			case r.URL.Path == "/robots.txt":
				http.NotFound(w, r)
			default:
				fmt.Fprint(w, `<a href="http://a.test:81/p1">1</a> <a href="http://a.test:81/p2">2</a>
					<a href="http://a.test:81/secret">s</a> <a href="/q1">q1</a> <a href="/secret">s</a>`)
			}
			mu.Lock()
			hits = append(hits, hit{origin, r.URL.Path, start, time.Now()})
			mu.Unlock()
		})
	}
	s80 := httptest.NewServer(handler("80"))
	defer s80.Close()
	s81 := httptest.NewServer(handler("81"))
	defer s81.Close()
	const delay = 50 * time.Millisecond
	c, err := gentlecrawl.New(gentlecrawl.Config{
		JobDir: t.TempDir(),
		Seeds:  []string{"http://a.test/"},
		Delay:  delay,
		ConnectTo: crawltest.ConnectTo(
			"a.test:80:"+s80.Listener.Addr().String(),
			"a.test:81:"+s81.Listener.Addr().String(),
		),
		AllowPrivateNetworks: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var got []string
	for i, h := range hits {
		got = append(got, h.origin+h.path)
		if i > 0 && h.start.Sub(hits[i-1].end) < delay {
			t.Errorf("%s%s started %v after the previous request to the host ended", h.origin, h.path, h.start.Sub(hits[i-1].end))
		}
	}
	want := "80/robots.txt 80/ 81/robots.txt 81/p1 81/p2 80/q1 80/secret 81/q1" // 81/secret is disallowed
	if strings.Join(got, " ") != want {
		t.Errorf("requests %q, want %q", strings.Join(got, " "), want)
	}
}

// TestRobotsRedirectToAnotherHost: a.test's robots.txt redirects to a file
// on b.test (a common setup for sites behind one CDN). The rules found there
// apply to a.test (RFC 9309 §2.3.1.2), and the hop is a request to b.test
// like any other: never while b.test is being fetched, never inside its gap.
func TestRobotsRedirectToAnotherHost(t *testing.T) {
	type hit struct {
		path       string
		start, end time.Time
	}
	var mu sync.Mutex
	hits := map[string][]hit{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		host := strings.TrimSuffix(r.Host, ":80")
		switch {
		case host == "a.test" && r.URL.Path == "/robots.txt":
			http.Redirect(w, r, "http://b.test/shared-robots.txt", http.StatusMovedPermanently)
		case r.URL.Path == "/shared-robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /x\n")
		case r.URL.Path == "/robots.txt":
			http.NotFound(w, r)
		default:
			time.Sleep(5 * time.Millisecond)
			fmt.Fprint(w, `<a href="/x">x</a> <a href="/y">y</a> <a href="/z">z</a>`)
		}
		mu.Lock()
		hits[host] = append(hits[host], hit{r.URL.Path, start, time.Now()})
		mu.Unlock()
	}))
	defer srv.Close()
	const delay = 30 * time.Millisecond
	crawltest.MustCrawl(t, t.Context(), gentlecrawl.Config{
		JobDir:               t.TempDir(),
		Seeds:                []string{"http://a.test/", "http://b.test/"},
		Delay:                delay,
		ConnectTo:            crawltest.ConnectTo("::" + srv.Listener.Addr().String()),
		AllowPrivateNetworks: true,
	})
	mu.Lock()
	defer mu.Unlock()
	for host, hs := range hits {
		sort.Slice(hs, func(i, j int) bool { return hs[i].start.Before(hs[j].start) })
		var paths []string
		for i, h := range hs {
			paths = append(paths, h.path)
			if i > 0 && h.start.Sub(hs[i-1].end) < delay {
				t.Errorf("%s: %s started %v after %s ended, want ≥ %v", host, h.path, h.start.Sub(hs[i-1].end), hs[i-1].path, delay)
			}
			if host == "a.test" && h.path == "/x" {
				t.Errorf("a.test/x fetched; the redirected robots.txt disallows it")
			}
		}
		t.Logf("%s: %s", host, strings.Join(paths, " "))
	}
	if n := len(hits["b.test"]); n != 6 { // robots.txt, shared-robots.txt, /, /x, /y, /z
		t.Errorf("b.test got %d requests, want 6", n)
	}
}

// statusHit is one exchange a test server saw.
type statusHit struct {
	path       string
	status     int
	start, end time.Time
}

// statusLog records the exchanges of a test server whose handler returns
// the status it answered with.
type statusLog struct {
	mu   sync.Mutex
	hits []statusHit
}

func (l *statusLog) handler(answer func(w http.ResponseWriter, r *http.Request) int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		status := answer(w, r)
		l.mu.Lock()
		l.hits = append(l.hits, statusHit{r.URL.Path, status, start, time.Now()})
		l.mu.Unlock()
	})
}

func (l *statusLog) all() []statusHit {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.hits)
}

// sequence is the requests in order, "path=status" each, and the gap
// after the one before for each request after a 503.
func (l *statusLog) sequence() (seq string, after503 map[int]time.Duration) {
	hits := l.all()
	var parts []string
	after503 = map[int]time.Duration{}
	for i, h := range hits {
		parts = append(parts, fmt.Sprintf("%s=%d", h.path, h.status))
		if i > 0 && hits[i-1].status == 503 {
			after503[i] = h.start.Sub(hits[i-1].end)
		}
	}
	return strings.Join(parts, " "), after503
}

// aTestConfig crawls http://a.test/ on srv with a 20 ms delay.
func aTestConfig(t *testing.T, srv *httptest.Server) gentlecrawl.Config {
	job := t.TempDir()
	warccheck.AtCleanup(t, job) // its WARC files read back when the test ends
	return gentlecrawl.Config{
		JobDir:               job,
		Seeds:                []string{"http://a.test/"},
		Delay:                20 * time.Millisecond,
		ConnectTo:            crawltest.ConnectTo("a.test:80:" + srv.Listener.Addr().String()),
		AllowPrivateNetworks: true,
	}
}

// TestRetryAfterIsHonoured: a host answering 503 with Retry-After gets no
// request inside the window it announced; the URL is tried again after it
// (not dropped), and a 404 does not slow the host down.
func TestRetryAfterIsHonoured(t *testing.T) {
	var log statusLog
	var busy atomic.Int32
	srv := httptest.NewServer(log.handler(func(w http.ResponseWriter, r *http.Request) int {
		status := 200
		switch r.URL.Path {
		case "/robots.txt", "/missing":
			status = 404
		case "/busy":
			if busy.Add(1) <= 2 {
				status = 503
				w.Header().Set("Retry-After", "1")
			}
		}
		w.WriteHeader(status)
		if r.URL.Path == "/" {
			fmt.Fprint(w, `<a href="/missing">m</a> <a href="/busy">b</a> <a href="/after">a</a>`)
		}
		return status
	}))
	defer srv.Close()
	sum := crawltest.MustCrawl(t, t.Context(), aTestConfig(t, srv))
	got, gaps := log.sequence()
	for i, gap := range gaps {
		if gap < time.Second {
			t.Errorf("request %d made %v after a 503 with Retry-After: 1", i, gap)
		}
	}
	want := "/robots.txt=404 /=200 /missing=404 /busy=503 /busy=503 /busy=200 /after=200"
	if got != want {
		t.Errorf("requests %s\nwant     %s", got, want)
	}
	if sl, ok := sum.Slowed["a.test"]; sum.Retries != 2 || !ok || sl.Cause != gentlecrawl.LoadRefused || sl.Status != 503 || !sl.HasRetryAfter || sl.RetryAfter != time.Second || sl.Events < 1 {
		t.Errorf("summary: %d retries, slowed %+v; want 2 and the 503 with Retry-After: 1 for a.test", sum.Retries, sum.Slowed)
	}
}

// TestRobotsRetryAfter: a robots.txt that answers 503 with a short
// Retry-After is asked again when the server said, not a minute later, and
// the crawl waits for it rather than end without the host; one whose
// Retry-After is long defers the host at once, without a second request.
func TestRobotsRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		name       string
		retryAfter string
		refusals   int32
		want       string
		stopped    string
	}{
		{"short", "1", 2, "/robots.txt=503 /robots.txt=503 /robots.txt=200 /=200 /a=200", "finished"},
		{"long", "3600", 1 << 30, "/robots.txt=503", "deferred"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var log statusLog
			var asked atomic.Int32
			srv := httptest.NewServer(log.handler(func(w http.ResponseWriter, r *http.Request) int {
				if r.URL.Path == "/robots.txt" {
					if asked.Add(1) <= tt.refusals {
						w.Header().Set("Retry-After", tt.retryAfter)
						w.WriteHeader(503)
						return 503
					}
					fmt.Fprint(w, "User-agent: *\nDisallow: /b\n")
					return 200
				}
				fmt.Fprint(w, `<a href="/a">a</a> <a href="/b">b</a>`)
				return 200
			}))
			defer srv.Close()
			cfg := aTestConfig(t, srv)
			cfg.RobotsRetry = time.Hour // what a 503 without Retry-After would wait
			sum := crawltest.MustCrawl(t, t.Context(), cfg)
			got, gaps := log.sequence()
			for i, gap := range gaps {
				// The second refusal doubles the wait.
				if want := time.Second << (i - 1); gap < want {
					t.Errorf("request %d made %v after a 503 with Retry-After: 1, want at least %v", i, gap, want)
				}
			}
			if got != tt.want {
				t.Errorf("requests %s\nwant     %s", got, tt.want)
			}
			if sum.Stopped != tt.stopped {
				t.Errorf("stopped %q (deferred %v), want %q", sum.Stopped, sum.Deferred, tt.stopped)
			}
		})
	}
}

// TestHostRuleSlowsAHost: a per-host rule (a site owner's request to slow
// down) widens the gap for that host only.
func TestHostRuleSlowsAHost(t *testing.T) {
	var mu sync.Mutex
	starts := map[string][]time.Time{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		starts[r.Host] = append(starts[r.Host], time.Now())
		mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `<a href="/1">1</a> <a href="/2">2</a> <a href="/3">3</a>`)
	}))
	defer srv.Close()
	c, err := gentlecrawl.New(gentlecrawl.Config{
		JobDir:               t.TempDir(),
		Seeds:                []string{"http://slow.test/", "http://fast.test/"},
		Delay:                10 * time.Millisecond,
		HostRules:            []gentlecrawl.HostRule{{Host: "slow.test", Delay: 300 * time.Millisecond}},
		ConnectTo:            crawltest.ConnectTo("::" + srv.Listener.Addr().String()),
		AllowPrivateNetworks: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	slow := starts["slow.test"]
	if len(slow) != 5 {
		t.Fatalf("slow.test got %d requests, want 5", len(slow))
	}
	for i := 1; i < len(slow); i++ {
		if gap := slow[i].Sub(slow[i-1]); gap < 300*time.Millisecond {
			t.Errorf("slow.test request %d came %v after the previous one, want ≥ 300ms", i, gap)
		}
	}
	fast := starts["fast.test"]
	if d := fast[len(fast)-1].Sub(fast[0]); d >= 4*300*time.Millisecond {
		t.Errorf("fast.test took %v for its requests: the rule should not apply to it", d)
	}
}

// TestRobotsLastGoodCopy: when robots.txt, fetched fine once, starts failing
// with 5xx, the copy from the earlier fetch stands in (Google: up to 30
// days) instead of stopping the crawl of the site.
func TestRobotsLastGoodCopy(t *testing.T) {
	var mu sync.Mutex
	failing := false
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		f := failing
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			if f {
				http.Error(w, "down", http.StatusServiceUnavailable)
				return
			}
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
		default:
			w.Header().Set("ETag", `"v1"`)
			fmt.Fprint(w, `<a href="/private">p</a> <a href="/public">q</a>`)
		}
	}))
	defer srv.Close()
	cfg := gentlecrawl.Config{
		JobDir:               t.TempDir(),
		Seeds:                []string{"http://a.test/"},
		Delay:                10 * time.Millisecond,
		RobotsTTL:            300 * time.Millisecond, // expired by the second run
		ConnectTo:            crawltest.ConnectTo("a.test:80:" + srv.Listener.Addr().String()),
		AllowPrivateNetworks: true,
	}
	for run, recrawl := range []bool{false, true} {
		cfg.Recrawl = recrawl
		c, err := gentlecrawl.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := c.Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if run == 1 && (sum.Robots["unavailable"] != 1 || sum.Pages != 2 || len(sum.Deferred) != 0) {
			t.Errorf("second run: %+v; want robots.txt unavailable, the last good copy used, both pages fetched", sum)
		}
		mu.Lock()
		failing = true
		mu.Unlock()
		time.Sleep(400 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(paths) == 6 {
		sort.Strings(paths[4:]) // the recrawl's order is the store's
	}
	want := "/robots.txt / /public /robots.txt / /public"
	if got := strings.Join(paths, " "); got != want {
		t.Errorf("requests %q, want %q (never /private)", got, want)
	}
}

// TestContentPolicies: links to archives and videos are not followed; a
// download whose Content-Type is audio ends after the headers; a page with a
// strange extension that is really HTML is read for links; a chain of more
// than ten redirects is cut.
func TestContentPolicies(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		switch p := r.URL.Path; {
		case p == "/robots.txt":
			http.NotFound(w, r)
		case p == "/":
			fmt.Fprint(w, `<a href="/a.zip">zip</a> <a href="/movie.mp4">video</a> <a href="/song">song</a>
				<a href="/page1.LOL111">odd</a> <a href="/r/0">chain</a>`)
		case p == "/song":
			w.Header().Set("Content-Type", "audio/mpeg")
			w.Write(bytes.Repeat([]byte{0xff}, 1<<20))
		case p == "/page1.LOL111":
			w.Header().Set("Content-Type", "application/octet-stream")
			fmt.Fprint(w, `<!DOCTYPE html><html><body><a href="/found-via-odd">x</a></body></html>`)
		case strings.HasPrefix(p, "/r/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(p, "/r/"))
			http.Redirect(w, r, fmt.Sprintf("/r/%d", n+1), http.StatusFound)
		default:
			fmt.Fprint(w, "<p>ok</p>")
		}
	}))
	defer srv.Close()
	cfg := gentlecrawl.Config{
		JobDir:               t.TempDir(),
		Seeds:                []string{"http://a.test/"},
		Delay:                5 * time.Millisecond,
		ConnectTo:            crawltest.ConnectTo("a.test:80:" + srv.Listener.Addr().String()),
		AllowPrivateNetworks: true,
	}
	c, err := gentlecrawl.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits["/a.zip"]+hits["/movie.mp4"] != 0 {
		t.Errorf("archive or video requested: %v", hits)
	}
	if hits["/song"] != 1 || sum.SkippedType != 1 || sum.SkippedExtension != 2 {
		t.Errorf("song requested %d times; summary skipped %d by type, %d by extension; want 1, 1, 2", hits["/song"], sum.SkippedType, sum.SkippedExtension)
	}
	if hits["/found-via-odd"] != 1 {
		t.Errorf("the link on the HTML page served as octet-stream was not followed")
	}
	// /r/0 is reached by a link; /r/1 … /r/10 by redirects; /r/11 would be
	// the 11th redirect in the chain.
	if hits["/r/10"] != 1 || hits["/r/11"] != 0 || sum.BadRedirects != 1 {
		t.Errorf("redirect chain: /r/10 %d, /r/11 %d, bad redirects %d; want 1, 0, 1", hits["/r/10"], hits["/r/11"], sum.BadRedirects)
	}
	mu.Unlock()

	// A re-crawl fetches the chain again and cuts it at the same hop: the
	// last hop is queued again with the hops that led to it.
	cfg.Recrawl = true
	c, err = gentlecrawl.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if hits["/r/10"] != 2 || hits["/r/11"] != 0 {
		t.Errorf("after --recrawl: /r/10 requested %d times, /r/11 %d; want 2 and 0", hits["/r/10"], hits["/r/11"])
	}
}

// TestSessionRedirect: an application that redirects every URL without a
// session id to the same URL with one (cookies being off) is still crawled:
// the page is fetched once with the id, not lost as "seen".
func TestSessionRedirect(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.RequestURI())
		mu.Unlock()
		switch {
		case r.URL.Path == "/robots.txt":
			http.NotFound(w, r)
		case !strings.Contains(r.URL.Path, ";jsessionid="):
			http.Redirect(w, r, r.URL.Path+";jsessionid=0123456789ABCDEF0123456789ABCDEF", http.StatusFound)
		default:
			fmt.Fprint(w, `<p>the page</p>`)
		}
	}))
	defer srv.Close()
	c, err := gentlecrawl.New(gentlecrawl.Config{
		JobDir: t.TempDir(), Seeds: []string{"http://a.test/app"}, Delay: 5 * time.Millisecond,
		ConnectTo: crawltest.ConnectTo("a.test:80:" + srv.Listener.Addr().String()), AllowPrivateNetworks: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := "/robots.txt /app /app;jsessionid=0123456789ABCDEF0123456789ABCDEF"
	if got := strings.Join(paths, " "); got != want || sum.ByStatus[200] != 1 {
		t.Errorf("requests %q (200s: %d), want %q", got, sum.ByStatus[200], want)
	}
}

// TestNoDelayConcurrency: with no delay configured, a host that stays fast
// is given two requests at once, never more; one that answers 503 is
// brought back to one at a time.
func TestNoDelayConcurrency(t *testing.T) {
	var mu sync.Mutex
	inFlight, peak, total := 0, 0, 0
	var busyEnd time.Time
	var busyConn string // the connection that carried the 503
	type start struct {
		after time.Duration
		conn  string
	}
	var tooSoon []start
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		total++
		peak = max(peak, inFlight)
		n := total
		if !busyEnd.IsZero() && time.Since(busyEnd) < time.Second {
			tooSoon = append(tooSoon, start{time.Since(busyEnd), r.RemoteAddr})
		}
		mu.Unlock()
		defer func() {
			mu.Lock()
			inFlight--
			mu.Unlock()
		}()
		time.Sleep(2 * time.Millisecond)
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		if n == 60 {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			mu.Lock()
			busyEnd, busyConn = time.Now(), r.RemoteAddr
			mu.Unlock()
			return
		}
		// Pages of their own (text that differs in words, not only in a
		// number: the crawl takes those for a calendar's days).
		var b strings.Builder
		fmt.Fprintf(&b, "<p>%s</p>", spell(n))
		for i := range 4 {
			fmt.Fprintf(&b, `<a href="/p%d">x</a> `, n*4+i)
		}
		fmt.Fprint(w, b.String())
	}))
	defer srv.Close()
	c, err := gentlecrawl.New(gentlecrawl.Config{
		JobDir: t.TempDir(), Seeds: []string{"http://a.test/"}, NoDelay: true, MaxPages: 120,
		ConnectTo: crawltest.ConnectTo("a.test:80:" + srv.Listener.Addr().String()), AllowPrivateNetworks: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if peak != 2 {
		t.Errorf("at most %d requests in flight, want exactly 2 for a fast host with no delay", peak)
	}
	if busyEnd.IsZero() {
		t.Fatal("the crawl never reached the 503")
	}
	// A request already in flight when the 503 was sent may end after it;
	// none may start inside the Retry-After second. The server sees a
	// request start when its handler runs, so the one request the crawler
	// may have sent on its other connection before the 503 reached it can
	// start after busyEnd on a loaded machine; a second one, or one on the
	// 503's own connection (reused only once the 503 was read), was sent
	// inside the window.
	var late []start
	others := 0
	for _, st := range tooSoon {
		if st.conn != busyConn {
			if others++; others == 1 {
				continue
			}
		}
		late = append(late, st)
	}
	if len(late) > 0 {
		t.Errorf("%d requests started within the Retry-After window: %v (all after it: %v)", len(late), late, tooSoon)
	}
}

// TestRetryAfterSurvivesRestart: a crawl stopped while a host's Retry-After
// window is open, and resumed at once, still asks nothing of the host
// before the window ends (the pause is kept in the job, not only in memory).
func TestRetryAfterSurvivesRestart(t *testing.T) {
	var log statusLog
	var pages atomic.Int32
	served503 := make(chan struct{}, 1)
	srv := httptest.NewServer(log.handler(func(w http.ResponseWriter, r *http.Request) int {
		status := 200
		switch r.URL.Path {
		case "/robots.txt":
			status = 404
		case "/":
			if pages.Add(1) == 1 {
				status = 503
				w.Header().Set("Retry-After", "2")
				defer func() { served503 <- struct{}{} }()
			}
		}
		w.WriteHeader(status)
		return status
	}))
	defer srv.Close()
	cfg := aTestConfig(t, srv)
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-served503
		time.Sleep(200 * time.Millisecond) // the answer recorded
		cancel()
	}()
	c, err := gentlecrawl.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum, err := c.Run(ctx); err != nil || sum.Stopped != "interrupted" {
		t.Fatalf("first run: %v, stopped %q; want interrupted", err, sum.Stopped)
	}
	c, err = gentlecrawl.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	var seq []string
	var pauseEnd time.Time
	for _, h := range log.all() {
		seq = append(seq, fmt.Sprintf("%s=%d", h.path, h.status))
		if h.status == 503 {
			pauseEnd = h.end.Add(2 * time.Second)
		} else if h.start.Before(pauseEnd) {
			t.Errorf("%s requested %v before the Retry-After window ended", h.path, pauseEnd.Sub(h.start))
		}
	}
	// The page must be fetched once more, after the window.
	if n := len(seq); n < 3 || seq[n-1] != "/=200" || !slices.Contains(seq, "/=503") {
		t.Errorf("requests %v; want the 503, then / again after the window", seq)
	}
}

// TestRobotsRedirectToABusyHost: a.test's robots.txt redirects to b.test,
// which has hundreds of pages and is crawled without pause. The hop is
// queued as b.test's work, so a.test is crawled early on, not when b.test
// runs out of pages.
func TestRobotsRedirectToABusyHost(t *testing.T) {
	var mu sync.Mutex
	var order []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := strings.TrimSuffix(r.Host, ":80")
		mu.Lock()
		order = append(order, host+r.URL.Path)
		mu.Unlock()
		switch {
		case host == "a.test" && r.URL.Path == "/robots.txt":
			http.Redirect(w, r, "http://b.test/shared-robots.txt", http.StatusFound)
		case r.URL.Path == "/shared-robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /x\n")
		case r.URL.Path == "/robots.txt":
			http.NotFound(w, r)
		case host == "b.test":
			n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p"))
			if n < 300 {
				fmt.Fprintf(w, `<a href="/p%d">next</a> <a href="/p%d">next</a>`, 2*n+1, 2*n+2)
			}
		default:
			fmt.Fprint(w, `<p>a page of a.test</p>`)
		}
	}))
	defer srv.Close()
	crawltest.MustCrawl(t, t.Context(), gentlecrawl.Config{
		JobDir:               t.TempDir(),
		Seeds:                []string{"http://b.test/p0", "http://a.test/"},
		Delay:                20 * time.Millisecond,
		MaxPages:             60,
		ConnectTo:            crawltest.ConnectTo("::" + srv.Listener.Addr().String()),
		AllowPrivateNetworks: true,
	})
	mu.Lock()
	defer mu.Unlock()
	bBefore := 0
	for _, r := range order {
		if r == "a.test/" {
			t.Logf("a.test/ fetched after %d requests to b.test", bBefore)
			if bBefore > 10 {
				t.Errorf("a.test/ waited for %d requests to b.test: its robots.txt hop starved", bBefore)
			}
			return
		}
		if strings.HasPrefix(r, "b.test/") {
			bBefore++
		}
	}
	t.Errorf("a.test/ never fetched in %d requests: its robots.txt hop starved (%v)", len(order), order[:min(len(order), 20)])
}

// spell writes n in letters, a word of its own for each n: 0 "a", 27 "bb".
func spell(n int) string {
	var b []byte
	for {
		b = append(b, byte('a'+n%26))
		if n /= 26; n == 0 {
			return string(b)
		}
	}
}
