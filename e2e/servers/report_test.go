package servers_test

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/cli"
	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
	"github.com/gentlecrawl/gentlecrawl/internal/nginxtest"
	"github.com/gentlecrawl/gentlecrawl/internal/report"
	"github.com/gentlecrawl/gentlecrawl/internal/warccheck"
)

// metricValue sums the samples of a metric family in a Prometheus text
// exposition whose labels contain every one of with.
func metricValue(text, name string, with ...string) (float64, bool) {
	sum, found := 0.0, false
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		ok := true
		for _, w := range with {
			ok = ok && strings.Contains(line, w)
		}
		if !ok {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err == nil {
			sum, found = sum+v, true
		}
	}
	return sum, found
}

// TestReportAgainstNginx crawls two sites behind a real nginx (one with a
// limit_req that refuses with 503, drawn per seed), then crawls again
// with conditional GETs, and holds the report and the metrics to nginx's
// own access log: the report's request count, its breakdown by response
// code and its robots.txt count equal the server's; the metrics were
// served during the crawl and count what the server logged; the export
// has a line for every page request the server answered.
func TestReportAgainstNginx(t *testing.T) {
	nginxtest.Require(t)
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("GENTLECRAWL_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	rng := rand.New(rand.NewPCG(seed, 15))
	pagesA, pagesB := 60+rng.IntN(120), 60+rng.IntN(120)
	lim := nginxtest.Limit{Rate: 20 + rng.IntN(30), Burst: rng.IntN(4)}
	t.Logf("GENTLECRAWL_SEED=%d: a.test %d pages behind %d/s burst %d; b.test %d pages", seed, pagesA, lim.Rate, lim.Burst, pagesB)
	rootA, rootB := t.TempDir(), t.TempDir()
	if _, err := nginxtest.WriteSite(rootA, "a.test", pagesA, seed); err != nil {
		t.Fatal(err)
	}
	if _, err := nginxtest.WriteSite(rootB, "b.test", pagesB, seed+1); err != nil {
		t.Fatal(err)
	}
	srv := nginxtest.Start(t,
		nginxtest.Site{Name: "a.test", Addr: "127.0.0.6:0", Root: rootA, Limit: lim, Gzip: true},
		nginxtest.Site{Name: "b.test", Addr: "127.0.0.7:0", Root: rootB, Gzip: rng.IntN(2) == 0},
	)
	job := t.TempDir()
	cfg := gentlecrawl.Config{
		JobDir: job, Seeds: []string{"http://a.test/", "http://b.test/"}, Delay: 5 * time.Millisecond,
		ConnectTo:            crawltest.ConnectTo("a.test:80:"+srv.Addr("a.test"), "b.test:80:"+srv.Addr("b.test")),
		AllowPrivateNetworks: true, MetricsHosts: 1,
	}
	warccheck.AtCleanup(t, job)
	c, err := gentlecrawl.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	metrics := httptest.NewServer(c.MetricsHandler())
	defer metrics.Close()

	// Scrape the metrics while the first crawl runs.
	var scrapes []string
	stop := make(chan struct{})
	scraped := make(chan struct{})
	go func() {
		defer close(scraped)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			res, err := http.Get(metrics.URL)
			if err != nil {
				continue
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode == 200 {
				scrapes = append(scrapes, string(b))
			}
		}
	}()
	sum1, err := c.Run(t.Context())
	close(stop)
	<-scraped
	if err != nil {
		t.Fatal(err)
	}
	cfg.Recrawl, cfg.Seeds = true, nil
	sum2 := crawltest.MustCrawl(t, t.Context(), cfg)

	log, err := srv.WaitEntries(t.Context(), sum1.Requests+sum2.Requests)
	if err != nil {
		t.Fatal(err)
	}
	byStatus := map[string]int{}
	robots := 0
	for _, e := range log {
		byStatus[strconv.Itoa(e.Status)]++
		if e.URI == "/robots.txt" {
			robots++
		}
	}
	r, err := report.Read(job, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("nginx logged %d requests %v; the report: %d requests %v, %d × 304 of %d conditional",
		len(log), byStatus, r.Requests, r.ByStatus, r.Conditional.NotModified, r.Conditional.Sent)
	if r.Requests != len(log) {
		t.Errorf("the report counts %d requests, nginx logged %d", r.Requests, len(log))
	}
	for code, n := range byStatus {
		if r.ByStatus[code] != n {
			t.Errorf("status %s: the report counts %d, nginx logged %d", code, r.ByStatus[code], n)
		}
	}
	if len(r.ByStatus) != len(byStatus) {
		t.Errorf("the report's statuses %v, nginx's %v", r.ByStatus, byStatus)
	}
	if r.ByKind["robots"] != robots {
		t.Errorf("the report counts %d robots.txt fetches, nginx logged %d", r.ByKind["robots"], robots)
	}
	if r.ByStatus["304"] == 0 || r.Bytes.SavedNotModified == 0 {
		t.Errorf("the second crawl's 304s are not in the report: %v, saved %d", r.ByStatus, r.Bytes.SavedNotModified)
	}
	if len(r.Runs) != 2 || r.Runs[0].Requests != sum1.Requests || r.Runs[1].Requests != sum2.Requests {
		t.Errorf("runs %+v, summaries %d and %d requests", r.Runs, sum1.Requests, sum2.Requests)
	}
	one, err := report.Read(job, report.Options{Run: 2})
	if err != nil || one.Requests != sum2.Requests {
		t.Errorf("run 2 alone: %v requests (%v), want %d", one.Requests, err, sum2.Requests)
	}

	// The metrics: served during the crawl, growing, and the last scrape
	// never counts more than the server logged in the first crawl.
	if len(scrapes) == 0 {
		t.Fatal("no scrape of /metrics succeeded during the crawl")
	}
	last := scrapes[len(scrapes)-1]
	total, ok := metricValue(last, "gentlecrawl_requests_total")
	if !ok || total <= 0 || int(total) > sum1.Requests {
		t.Errorf("gentlecrawl_requests_total %v (found %v), the first crawl sent %d", total, ok, sum1.Requests)
	}
	for _, name := range []string{"gentlecrawl_response_duration_seconds_bucket", "gentlecrawl_response_size_bytes_bucket", "gentlecrawl_queued_urls", "gentlecrawl_hosts_waiting"} {
		if !strings.Contains(last, name) {
			t.Errorf("the metrics lack %s", name)
		}
	}
	if n := strings.Count(last, `host="`); n == 0 || strings.Count(last, `host="a.test"`)+strings.Count(last, `host="b.test"`) == n {
		t.Errorf("with MetricsHosts 1 one host should be \"other\": %d host series", n)
	}

	// The command line: the same count at the top of --json, and the
	// HTML page.
	var out, errOut bytes.Buffer
	html := filepath.Join(t.TempDir(), "report.html")
	if code := cli.Run(t.Context(), []string{"report", "--job", job, "--json", "--html", html}, &out, &errOut); code != 0 {
		t.Fatalf("report exited %d: %s", code, errOut.String())
	}
	var top struct {
		Requests int `json:"requests"`
	}
	if err := json.Unmarshal(out.Bytes(), &top); err != nil || top.Requests != len(log) {
		t.Errorf("report --json: requests %d (%v), nginx logged %d", top.Requests, err, len(log))
	}
	if b, err := os.ReadFile(html); err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Errorf("report --html: %v, %d bytes", err, len(b))
	}

	// The export: one line per page answered, as nginx logged them.
	out.Reset()
	errOut.Reset()
	if code := cli.Run(t.Context(), []string{"export", "--job", job}, &out, &errOut); code != 0 {
		t.Fatalf("export exited %d: %s", code, errOut.String())
	}
	exported := map[string]int{}
	lines := 0
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var p struct {
			URL    string `json:"url"`
			Status int    `json:"status"`
			Title  string `json:"title"`
		}
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		lines++
		exported[strconv.Itoa(p.Status)]++
	}
	pageStatus := map[string]int{}
	pages := 0
	for _, e := range log {
		if e.URI != "/robots.txt" {
			pages++
			pageStatus[strconv.Itoa(e.Status)]++
		}
	}
	if lines != pages {
		t.Errorf("export: %d lines, nginx logged %d page requests", lines, pages)
	}
	for code, n := range pageStatus {
		if exported[code] != n {
			t.Errorf("export: %d lines with status %s, nginx logged %d", exported[code], code, n)
		}
	}
}
