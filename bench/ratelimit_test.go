package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/nginxtest"
	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

// TestRateLimits measures host load control against real rate limiters:
// gentlecrawl crawls sites behind them with --delay 0 (host load alone sets
// the pace), and the servers' own logs say, over the 60 s that follow a
// 30 s start, what share of each limit was answered 200 and what share of
// the requests was refused. The grid:
//
//   - Debian's nginx limit_req (nodelay) over simweb's pages: limits 5, 13,
//     20 and 50 requests/s, bursts 1, 2, 4, 7, 10, refused with 503 and no
//     Retry-After; and bursts 1, 4, 10 refused with 429 and Retry-After: 2;
//   - simweb's token bucket with Retry-After: 2 in front of a server whose
//     latency rises with load (a knee);
//   - an nginx site without a limit, crawled whole: pages/s, against
//     GENTLECRAWL_OLD_BIN when given (the crawler before this change).
//
// It takes many minutes and runs only when asked:
//
//	GENTLECRAWL_LIMIT_BENCH=1 go test -run TestRateLimits -v -timeout 60m .
//
// GENTLECRAWL_BIN names the crawler to measure (default: built from ../).
// GENTLECRAWL_LIMITS restricts the nginx limits (e.g. "5,50");
// GENTLECRAWL_PARTS the parts run (default "grid,knee,unlimited").
func TestRateLimits(t *testing.T) {
	if os.Getenv("GENTLECRAWL_LIMIT_BENCH") == "" {
		t.Skip("set GENTLECRAWL_LIMIT_BENCH=1 to run (about 12 minutes)")
	}
	nginxtest.Require(t)
	bin := crawler(t)
	limits := []int{5, 13, 20, 50}
	if s := os.Getenv("GENTLECRAWL_LIMITS"); s != "" {
		limits = nil
		for _, f := range strings.Split(s, ",") {
			var n int
			fmt.Sscan(f, &n)
			limits = append(limits, n)
		}
	}
	parts := os.Getenv("GENTLECRAWL_PARTS")
	if parts == "" {
		parts = "grid,knee,unlimited"
	}
	var rows []string
	if strings.Contains(parts, "grid") {
		for _, limit := range limits {
			rows = append(rows, nginxGrid(t, bin, limit)...)
		}
	}
	if strings.Contains(parts, "knee") {
		rows = append(rows, simwebKnee(t, bin)...)
	}
	if len(rows) > 0 {
		t.Logf("\n| server | limit | burst | refusal | answered 200 (share of the limit) | refused | where it settled |\n|---|---|---|---|---|---|---|\n%s", strings.Join(rows, "\n"))
	}
	if strings.Contains(parts, "unlimited") {
		unlimited(t, bin)
	}
}

// crawler returns the gentlecrawl binary to measure.
func crawler(t *testing.T) string {
	if bin := os.Getenv("GENTLECRAWL_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "gentlecrawl")
	cmd := exec.Command("go", "build", "-tags", "pebblegozstd", "-o", bin, "./cmd/gentlecrawl")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// hit is one request as a server logged it.
type hit struct {
	start  time.Time
	status int
}

// crawlFor runs the crawler on seeds for d (then SIGINT) with the given
// --connect-to lines, and returns its summary output.
func crawlFor(t *testing.T, bin string, d time.Duration, connectTo []string, seeds ...string) string {
	args := []string{"crawl", "--job", t.TempDir(), "--delay", "0", "--allow-private-networks"}
	for _, c := range connectTo {
		args = append(args, "--connect-to", c)
	}
	args = append(args, seeds...)
	cmd := exec.Command(bin, args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if d == 0 {
		if err := <-done; err != nil {
			t.Errorf("crawl: %v\n%s", err, out.String())
		}
		return out.String()
	}
	select {
	case <-time.After(d):
		cmd.Process.Signal(syscall.SIGINT)
		<-done
	case err := <-done:
		t.Logf("crawl ended early: %v", err)
	}
	return out.String()
}

// share measures a host's log over [30 s, 90 s) after its first request.
func share(hits []hit, limit float64) (answered, refused float64, n int) {
	if len(hits) == 0 {
		return 0, 0, 0
	}
	slices.SortFunc(hits, func(a, b hit) int { return a.start.Compare(b.start) })
	t0 := hits[0].start
	var ok, bad int
	for _, h := range hits {
		if at := h.start.Sub(t0); at < 30*time.Second || at >= 90*time.Second {
			continue
		}
		n++
		switch h.status {
		case 200:
			ok++
		case 429, 503:
			bad++
		}
	}
	return float64(ok) / 60 / limit, float64(bad) / float64(max(n, 1)), n
}

// settledLine returns the summary's host-load line for host.
func settledLine(out, host string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "host load") && strings.Contains(l, host+":") {
			_, after, _ := strings.Cut(l, host+": ")
			return after
		}
	}
	return "(never pushed back)"
}

func nginxGrid(t *testing.T, bin string, limit int) []string {
	type variant struct {
		burst, status, retryAfter int
	}
	var vs []variant
	for _, b := range []int{1, 2, 4, 7, 10} {
		vs = append(vs, variant{b, 503, 0})
	}
	for _, b := range []int{1, 4, 10} {
		vs = append(vs, variant{b, 429, 2})
	}
	var sites []nginxtest.Site
	var seeds []string
	pages := limit*100 + 200
	for i, v := range vs {
		name := fmt.Sprintf("l%d-b%d-%d.test", limit, v.burst, v.status)
		root := filepath.Join(shm(t), name)
		if _, err := nginxtest.WriteSite(root, name, pages, uint64(i+1)); err != nil {
			t.Fatal(err)
		}
		sites = append(sites, nginxtest.Site{Name: name, Addr: fmt.Sprintf("127.0.1.%d:0", i+1), Root: root, Gzip: true,
			Limit: nginxtest.Limit{Rate: limit, Burst: v.burst, Status: v.status, RetryAfter: v.retryAfter}})
		seeds = append(seeds, "http://"+name+"/")
	}
	srv := nginxtest.Start(t, sites...)
	var connect []string
	for _, s := range sites {
		connect = append(connect, s.Name+":80:"+srv.Addr(s.Name))
	}
	out := crawlFor(t, bin, 95*time.Second, connect, seeds...)
	entries, err := srv.Entries()
	if err != nil {
		t.Fatal(err)
	}
	bySite := map[string][]hit{}
	for _, e := range entries {
		bySite[e.Site] = append(bySite[e.Site], hit{e.Start(), e.Status})
	}
	var rows []string
	for i, v := range vs {
		name := sites[i].Name
		a, r, n := share(bySite[name], float64(limit))
		refusal := "503"
		if v.retryAfter > 0 {
			refusal = fmt.Sprintf("429, Retry-After %d", v.retryAfter)
		}
		rows = append(rows, fmt.Sprintf("| nginx limit_req | %d/s | %d | %s | %.1f%% | %.2f%% of %d | %s |", limit, v.burst, refusal, 100*a, 100*r, n, settledLine(out, name)))
	}
	return rows
}

// shm is a directory for written sites: tmpfs when there is one, since a
// disk-backed /tmp takes far longer to write 20,000 files.
func shm(t *testing.T) string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		d, err := os.MkdirTemp("/dev/shm", "gentlecrawl-bench-")
		if err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return t.TempDir()
}

func simwebKnee(t *testing.T, bin string) []string {
	type variant struct {
		rate           float64
		burst, workers int
		service        time.Duration
	}
	vs := []variant{{20, 4, 1, 30 * time.Millisecond}, {8, 2, 1, 60 * time.Millisecond}}
	web, err := simweb.New(simweb.Config{Seed: 3, Hosts: len(vs), HostOptions: func(i int, name string) simweb.HostOptions {
		v := vs[i]
		return simweb.HostOptions{Pages: 5000, NoFiles: true,
			RateLimit: &simweb.RateLimit{Rate: v.rate, Burst: v.burst, Status: 429, RetryAfter: 2 * time.Second},
			Capacity:  &simweb.Capacity{Workers: v.workers, ServiceTime: v.service, SlowdownAtSaturation: 2, QueueLimit: -1, Jitter: 0.3}}
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := web.Start("127.0.2.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var seeds []string
	for _, h := range web.Hosts() {
		seeds = append(seeds, h.URL("/"))
	}
	out := crawlFor(t, bin, 95*time.Second, []string{srv.CatchAll()}, seeds...)
	web.Drain(context.Background())
	byHost := map[string][]hit{}
	for _, e := range web.Requests() {
		h, _, _ := strings.Cut(e.Host, ":")
		byHost[h] = append(byHost[h], hit{e.Start, e.Status})
	}
	var rows []string
	for i, h := range web.Hosts() {
		v := vs[i]
		a, r, n := share(byHost[h.Name], v.rate)
		rows = append(rows, fmt.Sprintf("| simweb token bucket, latency knee at %.0f/s | %.0f/s | %d | 429, Retry-After 2 | %.1f%% | %.2f%% of %d | %s |",
			float64(v.workers)/v.service.Seconds(), v.rate, v.burst, 100*a, 100*r, n, settledLine(out, h.Name)))
	}
	return rows
}

// unlimited crawls a 4,000-page nginx site without a limit to the end,
// twice, alternating with GENTLECRAWL_OLD_BIN when it is given.
func unlimited(t *testing.T, bin string) {
	root := filepath.Join(shm(t), "free")
	if _, err := nginxtest.WriteSite(root, "free.test", 4000, 9); err != nil {
		t.Fatal(err)
	}
	srv := nginxtest.Start(t, nginxtest.Site{Name: "free.test", Addr: "127.0.3.1:0", Root: root, Gzip: true})
	bins := []string{bin}
	if old := os.Getenv("GENTLECRAWL_OLD_BIN"); old != "" {
		bins = append(bins, old)
	}
	for round := range 4 {
		for _, b := range bins {
			before, _ := srv.Entries()
			start := time.Now()
			out := crawlFor(t, b, 0, []string{"free.test:80:" + srv.Addr("free.test")}, "http://free.test/")
			el := time.Since(start)
			after, _ := srv.Entries()
			run := after[len(before):]
			// The steady part: from 2 s after the first request to the last.
			var steady int
			first, last := run[0].Time, run[len(run)-1].Time
			for _, e := range run {
				if e.Time.Sub(first) >= 2*time.Second {
					steady++
				}
			}
			t.Logf("unlimited, round %d, %s: %d requests in %v: %.0f requests/s; %.0f requests/s from 2 s after the first; host load: %s", round+1, filepath.Base(b),
				len(run), el.Round(time.Millisecond), float64(len(run))/el.Seconds(), float64(steady)/(last.Sub(first)-2*time.Second).Seconds(), settledLine(out, "free.test"))
		}
	}
}
