package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/reqlog"
)

// TestReportRefusals: what report cannot run on is refused with one line
// and exit status 2, and writes no HTML file.
func TestReportRefusals(t *testing.T) {
	old := t.TempDir()
	os.WriteFile(filepath.Join(old, "runs.jsonl"), []byte(`{"requests":3}`+"\n"), 0o644)
	html := filepath.Join(t.TempDir(), "r.html")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no job", []string{"report"}, "--job DIR is required"},
		{"argument", []string{"report", "--job", old, "extra"}, "unexpected argument"},
		{"missing", []string{"report", "--job", filepath.Join(old, "none")}, "no such file"},
		{"empty", []string{"report", "--job", t.TempDir()}, "not a crawl job"},
		{"old job", []string{"report", "--job", old, "--html", html}, "no request log"},
		{"run 0-", []string{"report", "--job", old, "--run", "-1"}, "numbered from 1"},
		{"hosts", []string{"report", "--job", old, "--hosts", "-5"}, "--hosts -5"},
	} {
		code, _, stderr := run(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q; want 2 and one line with %q", c.name, code, stderr, c.want)
		}
	}
	if _, err := os.Stat(html); !os.IsNotExist(err) {
		t.Errorf("an HTML file was written for a refused report: %v", err)
	}
}

// TestReportSharedCrawl: --job given once per process of a shared crawl
// reports them as one crawl; --run with several is refused.
func TestReportSharedCrawl(t *testing.T) {
	root := t.TempDir()
	jobs := []string{filepath.Join(root, "a"), filepath.Join(root, "b")}
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i, job := range jobs {
		w, err := reqlog.Create(job, t0.Add(time.Duration(i)*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		for k := range 2 + i {
			w.Request(&reqlog.Record{Start: t0.Add(time.Duration(i)*time.Minute + time.Duration(k)*time.Second), Duration: time.Millisecond,
				Kind: reqlog.KindPage, Purpose: "discovery", Status: 200, Type: "html", Wire: 100, Body: 100,
				Host: "shop.test", URL: fmt.Sprintf("http://shop.test/%d", k)})
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	html := filepath.Join(t.TempDir(), "r.html")
	code, stdout, stderr := run(t, "report", "--job", jobs[0], "--job", jobs[1], "--json", "--html", html)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var r struct {
		Job      string   `json:"job"`
		Jobs     []string `json:"jobs"`
		Requests int      `json:"requests"`
		Runs     []struct {
			Job      string `json:"job"`
			Run      int    `json:"run"`
			Requests int    `json:"requests"`
		} `json:"runs"`
		Hosts []struct {
			Host     string `json:"host"`
			Requests int    `json:"requests"`
			Fetched  int    `json:"urls_fetched"`
		} `json:"hosts"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	if r.Requests != 5 || r.Job != "" || strings.Join(r.Jobs, ",") != strings.Join(jobs, ",") {
		t.Errorf("requests %d, job %q, jobs %q; want 5 over %q", r.Requests, r.Job, r.Jobs, jobs)
	}
	if len(r.Runs) != 2 || r.Runs[0].Job != jobs[0] || r.Runs[0].Run != 1 || r.Runs[0].Requests != 2 ||
		r.Runs[1].Job != jobs[1] || r.Runs[1].Run != 1 || r.Runs[1].Requests != 3 {
		t.Errorf("runs %+v", r.Runs)
	}
	if len(r.Hosts) != 1 || r.Hosts[0].Requests != 5 || r.Hosts[0].Fetched != 3 {
		t.Errorf("hosts %+v; want shop.test with 5 requests of 3 URLs", r.Hosts)
	}
	if page, err := os.ReadFile(html); err != nil || !strings.Contains(string(page), jobs[1]) {
		t.Errorf("the HTML page does not name the second job (%v)", err)
	}

	code, _, stderr = run(t, "report", "--job", jobs[0], "--job", jobs[1], "--run", "1")
	if code != 2 || !strings.Contains(stderr, "--run with several --job") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("--run with two jobs: exit %d, stderr %q", code, stderr)
	}
	code, stdout, stderr = run(t, "report", "--job", jobs[0], "--job", jobs[0]+"/", "--run", "1")
	if code != 0 || !strings.Contains(stdout, "Crawl statistics for "+jobs[0]+"\n") {
		t.Errorf("one job given twice: exit %d, stderr %q, stdout %q", code, stderr, stdout)
	}
	code, _, stderr = run(t, "report", "--job", jobs[0], "--job", filepath.Join(root, "none"))
	if code != 2 || !strings.Contains(stderr, "none") || !strings.Contains(stderr, "no such file") {
		t.Errorf("a missing job among two: exit %d, stderr %q", code, stderr)
	}
}
