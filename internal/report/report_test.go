package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/reqlog"
)

// writeRun writes one run's request log and, unless killed, its
// runs.jsonl line.
func writeRun(t testing.TB, dir string, start time.Time, recs []reqlog.Record, delays map[string]time.Duration, queued map[string]int, summary string) int {
	t.Helper()
	w, err := reqlog.Create(dir, start)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		w.Request(&recs[i])
	}
	for h, d := range delays {
		w.CrawlDelay(h, d)
	}
	for h, n := range queued {
		w.Queued(h, n)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if summary != "" {
		f, err := os.OpenFile(filepath.Join(dir, "runs.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, `{"run":%d,"started":%q,"finished":%q,%s}`+"\n", w.Run, start.Format(time.RFC3339Nano), start.Add(time.Minute).Format(time.RFC3339Nano), summary)
		f.Close()
	}
	return w.Run
}

func TestReport(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	run1 := []reqlog.Record{
		{Start: at(0), TTFB: 2 * time.Millisecond, Duration: 4 * time.Millisecond, Kind: reqlog.KindRobots, Status: 200, Type: "other", Wire: 200, Body: 100, Host: "shop.test", URL: "http://shop.test/robots.txt"},
		{Start: at(1), TTFB: 10 * time.Millisecond, Duration: 20 * time.Millisecond, Kind: reqlog.KindPage, Purpose: "discovery", Status: 200, Type: "html", Wire: 1000, Body: 4000, Compressed: true, Host: "shop.test", URL: "http://shop.test/"},
		{Start: at(2), TTFB: 10 * time.Millisecond, Duration: 20 * time.Millisecond, Kind: reqlog.KindPage, Purpose: "discovery", Status: 404, Type: "html", Wire: 300, Body: 300, Host: "shop.test", URL: "http://shop.test/gone"},
		{Start: at(3), TTFB: 100 * time.Millisecond, Duration: 200 * time.Millisecond, Kind: reqlog.KindPage, Purpose: "discovery", Status: 503, Type: "html", Wire: 300, Body: 300, Host: "shop.test", URL: "http://shop.test/a"},
		{Start: at(4), Duration: time.Second, Kind: reqlog.KindRobots, Error: "dns", Host: "gone.test", URL: "http://gone.test/robots.txt"},
		{Start: at(5), TTFB: 5 * time.Millisecond, Duration: 6 * time.Millisecond, Kind: reqlog.KindSitemap, Purpose: "discovery", Status: 200, Type: "other", Wire: 500, Body: 2000, Compressed: true, Host: "shop.test", URL: "http://shop.test/sitemap.xml"},
		{Start: at(6), TTFB: 5 * time.Millisecond, Duration: 6 * time.Millisecond, Kind: reqlog.KindPage, Purpose: "discovery", Status: 200, Type: "image", Wire: 900, Body: 800, Host: "shop.test", URL: "http://shop.test/a.png"},
	}
	delays := map[string]time.Duration{"shop.test": 10 * time.Second}
	queued := map[string]int{"shop.test": 51995}
	writeRun(t, dir, t0, run1, delays, queued, `"stopped":"interrupted","requests":7,"slowed":{"shop.test":"503 answers: settled at one request every 4s"},"url_space":{"shop.test":{"traps":[{"pattern":"/cal/*/*"}]}}`)
	// Run 2, a day later: a refresh with 304s, then killed (no summary).
	t1 := t0.Add(24 * time.Hour)
	run2 := []reqlog.Record{
		{Start: t1, TTFB: time.Millisecond, Duration: 2 * time.Millisecond, Kind: reqlog.KindPage, Purpose: "refresh", Status: 304, Type: "html", Wire: 150, Saved: 850, Conditional: true, Host: "shop.test", URL: "http://shop.test/"},
		{Start: t1.Add(time.Second), TTFB: time.Millisecond, Duration: 2 * time.Millisecond, Kind: reqlog.KindPage, Purpose: "refresh", Status: 200, Type: "html", Wire: 300, Body: 300, Conditional: true, Retried: true, Host: "shop.test", URL: "http://shop.test/gone"},
	}
	writeRun(t, dir, t1, run2, nil, nil, "")

	r, err := Read(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 9 || r.Retried != 1 {
		t.Errorf("requests %d, %d sent twice; want 9, 1", r.Requests, r.Retried)
	}
	wantStatus := map[string]int{"200": 5, "304": 1, "404": 1, "503": 1, "none": 1}
	if fmt.Sprint(r.ByStatus) != fmt.Sprint(wantStatus) {
		t.Errorf("by status %v, want %v", r.ByStatus, wantStatus)
	}
	if got, want := fmt.Sprint(r.ByType), fmt.Sprint(map[string]int{"html": 5, "image": 1, "other": 2, "none": 1}); got != want {
		t.Errorf("by type %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(r.ByPurpose), fmt.Sprint(map[string]int{"discovery": 5, "refresh": 2}); got != want {
		t.Errorf("by purpose %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(r.ByKind), fmt.Sprint(map[string]int{"page": 6, "robots": 2, "sitemap": 1}); got != want {
		t.Errorf("by kind %s, want %s", got, want)
	}
	if r.Errors["dns"] != 1 || r.Conditional.Sent != 2 || r.Conditional.NotModified != 1 {
		t.Errorf("errors %v, conditional %+v", r.Errors, r.Conditional)
	}
	if b := r.Bytes; b.Wire != 3650 || b.Decoded != 7800 || b.SavedNotModified != 850 || b.SavedCompression != 3000+1500 {
		t.Errorf("bytes %+v", b)
	}
	if len(r.Runs) != 2 || r.Runs[0].Stopped != "interrupted" || r.Runs[0].Requests != 7 || r.Runs[1].Stopped != "killed" || r.Runs[1].Requests != 2 {
		t.Errorf("runs %+v", r.Runs)
	}
	// A day and a second in at most 120 buckets: the width doubled from
	// 1 s to 1024 s; every request is in some bucket.
	tl := r.OverTime
	if len(tl.Buckets) > maxBuckets || tl.Seconds != 1024 {
		t.Errorf("%d buckets of %v s", len(tl.Buckets), tl.Seconds)
	}
	sum, robots, dns, over := 0, 0, 0, 0
	for _, b := range tl.Buckets {
		sum += b.Requests
		robots += b.Robots
		dns += b.DNSFailures
		over += b.Overloaded
	}
	if sum != 9 || robots != 2 || dns != 1 || over != 1 || tl.Buckets[0].RobotsFailed != 1 {
		t.Errorf("timeline: %d requests, %d robots, %d dns, %d overloaded; first bucket %+v", sum, robots, dns, over, tl.Buckets[0])
	}
	if r.HostsTotal != 2 || r.Hosts[0].Host != "shop.test" {
		t.Fatalf("hosts %+v", r.Hosts)
	}
	h := r.Hosts[0]
	// 5 distinct URLs fetched (robots.txt aside) + 51,995 queued = 52,000.
	if h.Fetched != 5 || h.Queued != 51995 || h.MaxPerDay != 8640 || h.DaysPerPass != 6.02 {
		t.Errorf("shop.test: %+v", h)
	}
	if want := "Crawl-delay 10 → at most 8,640 requests a day; 52,000 known URLs → 6 days for one pass"; h.CrawlDelayIs != want {
		t.Errorf("Crawl-delay text %q, want %q", h.CrawlDelayIs, want)
	}
	if h.Slowed == "" || len(h.URLSpace) == 0 {
		t.Errorf("host load / URL space lost: %+v", h)
	}

	var text bytes.Buffer
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Total requests      9 (robots.txt included), 1 of them sent twice", "8,640 requests a day", "host load: 503 answers", "trap /cal/*/*", "run 2", "killed"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	WriteJSON(&js, r)
	var top map[string]any
	if err := json.Unmarshal(js.Bytes(), &top); err != nil || top["requests"] != float64(9) {
		t.Errorf("JSON top level requests = %v (%v)", top["requests"], err)
	}

	// One run.
	r2, err := Read(dir, Options{Run: 2})
	if err != nil || r2.Requests != 2 || len(r2.Runs) != 1 || r2.ByStatus["304"] != 1 {
		t.Errorf("run 2: %+v, %v", r2, err)
	}
	if _, err := Read(dir, Options{Run: 3}); err == nil || !strings.Contains(err.Error(), "no run 3") {
		t.Errorf("run 3: %v", err)
	}
}

func TestReportBadInput(t *testing.T) {
	if _, err := Read(filepath.Join(t.TempDir(), "none"), Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing directory: %v", err)
	}
	if _, err := Read(t.TempDir(), Options{}); !errors.Is(err, ErrNoJob) {
		t.Errorf("empty directory: %v", err)
	}
	dir := t.TempDir()
	writeRun(t, dir, time.Now(), nil, nil, nil, "")
	f, _ := os.OpenFile(reqlog.Path(dir, 1), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("R\tbroken\n")
	f.Close()
	if _, err := Read(dir, Options{}); err == nil || !strings.Contains(err.Error(), "000001.tsv") || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("damaged log: %v", err)
	}
	dir = t.TempDir()
	os.WriteFile(filepath.Join(dir, "runs.jsonl"), []byte(`{"requests":5}`+"\n"), 0o644)
	if _, err := Read(dir, Options{}); !errors.Is(err, ErrNoRequestLog) || !strings.Contains(err.Error(), "1 runs") {
		t.Errorf("a job from before the request log: %v", err)
	}
	dir = t.TempDir()
	os.WriteFile(filepath.Join(dir, "runs.jsonl"), []byte("{not json\n"), 0o644)
	if _, err := Read(dir, Options{}); err == nil || !strings.Contains(err.Error(), "runs.jsonl line 1") {
		t.Errorf("damaged runs.jsonl: %v", err)
	}
}

// TestQuantiles checks the time histogram against exact percentiles: its
// bins are 15 % wide, so the median and p95 are within 8 % of the truth.
func TestQuantiles(t *testing.T) {
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var h histogram
		n := 5000
		ds := make([]float64, n)
		for i := range ds {
			ds[i] = 0.2 + rng.ExpFloat64()*float64(10+seed*100) // ms
			h[binOf(time.Duration(ds[i]*float64(time.Millisecond)))]++
		}
		sortFloats(ds)
		for _, q := range []float64{0.5, 0.95} {
			exact := ds[int(q*float64(n))-1]
			got := h.quantile(q, n)
			if got < exact/1.08 || got > exact*1.08 {
				t.Errorf("seed %d: q%.2f = %.2f ms, exact %.2f", seed, q, got, exact)
			}
		}
	}
}

func sortFloats(x []float64) {
	for i := 1; i < len(x); i++ {
		for j := i; j > 0 && x[j] < x[j-1]; j-- {
			x[j], x[j-1] = x[j-1], x[j]
		}
	}
}

// writeBigJob writes a job of n requests over 2,000 hosts, a day of
// crawling, into dir.
func writeBigJob(t testing.TB, dir string, n int) {
	t0 := time.Now().Add(-24 * time.Hour)
	w, err := reqlog.Create(dir, t0)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	statuses := []int{200, 200, 200, 200, 304, 304, 404, 301, 503, 0}
	for i := range n {
		host := fmt.Sprintf("host%d.test", rng.IntN(2000))
		st := statuses[rng.IntN(len(statuses))]
		r := reqlog.Record{
			Start: t0.Add(time.Duration(i) * 80 * time.Millisecond), TTFB: time.Duration(rng.IntN(50000)) * time.Microsecond,
			Duration: time.Duration(rng.IntN(200000)) * time.Microsecond, Kind: reqlog.KindPage, Purpose: "discovery", Status: st,
			Type: "html", Wire: int64(rng.IntN(40000)), Body: int64(rng.IntN(120000)), Compressed: true,
			Host: host, URL: fmt.Sprintf("http://%s/section/%d/page-%d.html?sort=price", host, rng.IntN(100), i),
		}
		if st == 0 {
			r.Error, r.Type = "timeout", ""
		}
		w.Request(&r)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestWriteBigJob writes the job of BenchmarkRead into
// $GENTLECRAWL_REPORT_JOB, for timing the command itself (BENCHMARKS.md).
func TestWriteBigJob(t *testing.T) {
	dir := os.Getenv("GENTLECRAWL_REPORT_JOB")
	if dir == "" {
		t.Skip("set GENTLECRAWL_REPORT_JOB=DIR to write a job of 10^6 requests there")
	}
	writeBigJob(t, dir, 1_000_000)
}

// BenchmarkRead reads a job of 10⁶ requests over 2,000 hosts: the goal is
// under 10 s and 200 MB.
func BenchmarkRead(b *testing.B) {
	dir := b.TempDir()
	const n = 1_000_000
	writeBigJob(b, dir, n)
	st, _ := os.Stat(reqlog.Path(dir, 1))
	b.SetBytes(st.Size())
	b.ResetTimer()
	for b.Loop() {
		r, err := Read(dir, Options{})
		if err != nil || r.Requests != n {
			b.Fatalf("%d requests, %v", r.Requests, err)
		}
	}
}
