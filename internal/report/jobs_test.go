package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/reqlog"
)

// appendSummary appends a runs.jsonl line for run of the job in dir.
func appendSummary(t *testing.T, dir string, run int, started, finished time.Time, rest string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "runs.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintf(f, `{"run":%d,"started":%q,"finished":%q,%s}`+"\n", run, started.Format(time.RFC3339Nano), finished.Format(time.RFC3339Nano), rest)
}

// pageRec is a request of the shared-crawl tests.
func pageRec(start time.Time, status int, host, path string) reqlog.Record {
	return reqlog.Record{Start: start, TTFB: 5 * time.Millisecond, Duration: 10 * time.Millisecond, Kind: reqlog.KindPage,
		Purpose: "discovery", Status: status, Type: "html", Wire: 1000, Body: 3000, Host: host, URL: "http://" + host + path}
}

// sharedCrawl writes the job directories of two processes sharing one
// crawl, each with its own run 1, over overlapping hosts:
//
//   - a: run 1 from t0, a long run that ends last (t0+10m), and says
//     shop.test has 7 URLs queued; run 2 an hour later, killed.
//   - b: run 1 from t0+30s, a short run ending at t0+2m, which says
//     shop.test has 40 queued: it started later, but the queue at its end
//     is older than a's.
func sharedCrawl(t *testing.T) (a, b string, t0 time.Time) {
	root := t.TempDir()
	a, b = filepath.Join(root, "a"), filepath.Join(root, "b")
	t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	sec := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

	robots := reqlog.Record{Start: t0, TTFB: time.Millisecond, Duration: 2 * time.Millisecond, Kind: reqlog.KindRobots,
		Status: 200, Type: "other", Wire: 200, Body: 100, Host: "shop.test", URL: "http://shop.test/robots.txt"}
	writeRun(t, a, t0, []reqlog.Record{robots, pageRec(sec(1), 200, "shop.test", "/"), pageRec(sec(2), 200, "shop.test", "/a"),
		pageRec(sec(3), 404, "a-only.test", "/x")},
		map[string]time.Duration{"shop.test": 10 * time.Second}, map[string]int{"shop.test": 7}, "")
	appendSummary(t, a, 1, t0, t0.Add(10*time.Minute), `"stopped":"interrupted","slowed":{"shop.test":"from a, the latest"}`)
	writeRun(t, a, t0.Add(time.Hour), []reqlog.Record{pageRec(t0.Add(time.Hour+time.Second), 200, "shop.test", "/b")}, nil, nil, "")

	writeRun(t, b, sec(30), []reqlog.Record{pageRec(sec(31), 200, "shop.test", "/"), pageRec(sec(32), 503, "shop.test", "/c"),
		pageRec(sec(33), 200, "b-only.test", "/"), pageRec(sec(34), 200, "b-only.test", "/y")},
		nil, map[string]int{"shop.test": 40, "b-only.test": 3}, "")
	appendSummary(t, b, 1, sec(30), t0.Add(2*time.Minute), `"stopped":"interrupted","slowed":{"shop.test":"from b, older"}`)
	return a, b, t0
}

func findHost(r *Report, name string) *Host {
	for i := range r.Hosts {
		if r.Hosts[i].Host == name {
			return &r.Hosts[i]
		}
	}
	return nil
}

// TestReadJobs: the job directories of a shared crawl are reported as one
// crawl: requests summed, hosts merged, one timeline from the first
// request, runs with their jobs, the queue and the host words from the
// run that ended last.
func TestReadJobs(t *testing.T) {
	a, b, t0 := sharedCrawl(t)
	ra, err := Read(a, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := Read(b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReadJobs([]string{a, b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != ra.Requests+rb.Requests || r.Requests != 9 {
		t.Errorf("requests %d, want %d + %d = 9", r.Requests, ra.Requests, rb.Requests)
	}
	if got, want := fmt.Sprint(r.ByStatus), fmt.Sprint(map[string]int{"200": 7, "404": 1, "503": 1}); got != want {
		t.Errorf("by status %s, want %s", got, want)
	}
	if r.Bytes.Wire != ra.Bytes.Wire+rb.Bytes.Wire || r.ByKind["robots"] != 1 || r.ByKind["page"] != 8 {
		t.Errorf("bytes %+v, by kind %v", r.Bytes, r.ByKind)
	}
	if r.Job != "" || !reflect.DeepEqual(r.Jobs, []string{a, b}) {
		t.Errorf("job %q, jobs %q", r.Job, r.Jobs)
	}
	if !r.First.Equal(t0) || !r.Last.Equal(t0.Add(time.Hour+time.Second+10*time.Millisecond)) {
		t.Errorf("period %v – %v", r.First, r.Last)
	}

	// Runs: run 1 of each job apart, in the order they started.
	type run struct {
		job      string
		run, n   int
		stopped  string
		finished bool
	}
	var runs []run
	for _, x := range r.Runs {
		runs = append(runs, run{x.Job, x.Run, x.Requests, x.Stopped, !x.Finished.IsZero()})
	}
	want := []run{{a, 1, 4, "interrupted", true}, {b, 1, 4, "interrupted", true}, {a, 2, 1, "killed", false}}
	if !reflect.DeepEqual(runs, want) {
		t.Errorf("runs %+v, want %+v", runs, want)
	}

	// Hosts merged: shop.test's requests of both jobs, its distinct URLs
	// once (/ was fetched by both).
	if r.HostsTotal != 3 {
		t.Errorf("%d hosts, want 3", r.HostsTotal)
	}
	shop := findHost(r, "shop.test")
	if shop == nil || shop.Requests != 6 || shop.Fetched != 4 || shop.ByStatus["200"] != 5 || shop.ByStatus["503"] != 1 {
		t.Fatalf("shop.test %+v", shop)
	}
	// The queue of the run that ended last (a's run 1, 7), not of the one
	// read last (b's) nor their sum; b-only.test's from b.
	if shop.Queued != 7 {
		t.Errorf("shop.test queued %d, want 7 (a's run ended last)", shop.Queued)
	}
	if h := findHost(r, "b-only.test"); h == nil || h.Queued != 3 || h.Requests != 2 {
		t.Errorf("b-only.test %+v", h)
	}
	if shop.Slowed != "from a, the latest" || shop.CrawlDelay != 10 {
		t.Errorf("shop.test slowed %q, Crawl-delay %v", shop.Slowed, shop.CrawlDelay)
	}

	// One timeline from the first request, the same whichever job is given
	// first.
	sum := 0
	for _, bk := range r.OverTime.Buckets {
		sum += bk.Requests
	}
	if sum != r.Requests || !r.OverTime.Start.Equal(t0) {
		t.Errorf("timeline from %v has %d requests, want %d from %v", r.OverTime.Start, sum, r.Requests, t0)
	}
	rev, err := ReadJobs([]string{b, a}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rev.OverTime, r.OverTime) || rev.Requests != r.Requests || !reflect.DeepEqual(rev.Runs, r.Runs) ||
		!reflect.DeepEqual(rev.Hosts, r.Hosts) {
		t.Errorf("the order of the jobs changed the report:\n%+v\n%+v", rev, r)
	}

	var text bytes.Buffer
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"shared by 2 jobs: " + a + ", " + b, "run 1 of " + a + ":", "run 1 of " + b + ":", "run 2 of " + a + ":", "Total requests      9"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	var doc bytes.Buffer
	if err := WriteHTML(&doc, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Jobs " + a + ", " + b, "<h2>Runs</h2>", "<td>" + b + "</td>"} {
		if !strings.Contains(doc.String(), want) {
			t.Errorf("HTML report lacks %q", want)
		}
	}
	var js bytes.Buffer
	WriteJSON(&js, r)
	var top struct {
		Job  string   `json:"job"`
		Jobs []string `json:"jobs"`
		Runs []struct {
			Job string `json:"job"`
			Run int    `json:"run"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(js.Bytes(), &top); err != nil || len(top.Jobs) != 2 || top.Runs[1].Job != b || top.Runs[1].Run != 1 {
		t.Errorf("JSON: %+v, %v", top, err)
	}
}

// TestReadJobsOne: one job, or the same one given twice, is the report it
// always was: no jobs list, no job in its runs.
func TestReadJobsOne(t *testing.T) {
	a, _, _ := sharedCrawl(t)
	one, err := Read(a, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	WriteJSON(&want, one)
	if one.Job != a || one.Jobs != nil || one.Runs[0].Job != "" {
		t.Errorf("one job: job %q, jobs %q, runs %+v", one.Job, one.Jobs, one.Runs)
	}
	if js := want.String(); strings.Contains(js, `"jobs"`) || strings.Count(js, `"job"`) != 1 {
		t.Errorf("one job's JSON has a jobs list or runs with their job:\n%s", js)
	}
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, a)
	if err != nil {
		t.Fatal(err)
	}
	twice, err := ReadJobs([]string{a, a + string(filepath.Separator), filepath.Join(a, "requests", ".."), rel}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	WriteJSON(&got, twice)
	if got.String() != want.String() {
		t.Errorf("a job given twice is not its report:\n%s\nwant\n%s", got.String(), want.String())
	}
	if r, err := ReadJobs([]string{a, a}, Options{Run: 2}); err != nil || r.Requests != 1 {
		t.Errorf("--run 2 of a job given twice: %+v, %v", r, err)
	}
}

// TestReadJobsRefused: --run over several jobs, and a directory of them
// that is not a job, are refused, naming the directory.
func TestReadJobsRefused(t *testing.T) {
	a, b, _ := sharedCrawl(t)
	if _, err := ReadJobs([]string{a, b}, Options{Run: 1}); !errors.Is(err, ErrRunSeveralJobs) || !strings.Contains(err.Error(), "--run with several --job") {
		t.Errorf("--run with two jobs: %v", err)
	}
	empty := t.TempDir()
	if _, err := ReadJobs([]string{a, empty}, Options{}); !errors.Is(err, ErrNoJob) || !strings.Contains(err.Error(), empty) {
		t.Errorf("an empty directory among the jobs: %v", err)
	}
	missing := filepath.Join(empty, "none")
	if _, err := ReadJobs([]string{missing, a}, Options{}); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("a missing directory among the jobs: %v", err)
	}
	old := t.TempDir()
	os.WriteFile(filepath.Join(old, "runs.jsonl"), []byte(`{"requests":5}`+"\n"), 0o644)
	if _, err := ReadJobs([]string{a, old}, Options{}); !errors.Is(err, ErrNoRequestLog) || !strings.Contains(err.Error(), old) {
		t.Errorf("a job from before the request log among the jobs: %v", err)
	}
	if _, err := ReadJobs(nil, Options{}); err == nil {
		t.Error("no job directory: no error")
	}
}
