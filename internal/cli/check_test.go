package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// checkSite serves a small clean site: robots.txt, three pages with
// Last-Modified and conditional GET, 404 for anything else. robots, if
// not nil, answers /robots.txt instead.
func checkSite(t *testing.T, robots http.HandlerFunc) *httptest.Server {
	t.Helper()
	mod := time.Date(2025, 2, 3, 4, 5, 6, 0, time.UTC)
	pages := map[string]string{
		"/":  `<!doctype html><title>Home</title><p>Welcome. <a href="/a">A</a> <a href="/b">B</a>`,
		"/a": `<!doctype html><title>A</title><p>Page A. <a href="/">Home</a> <a href="/b">B</a>`,
		"/b": `<!doctype html><title>B</title><p>Page B. <a href="/a">A</a>`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			if robots != nil {
				robots(w, r)
				return
			}
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
			return
		}
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		http.ServeContent(w, r, "", mod, strings.NewReader(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCheckExitStatus(t *testing.T) {
	t.Parallel()
	clean := checkSite(t, nil)
	unavailable := checkSite(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "maintenance", http.StatusServiceUnavailable)
	})
	// A loopback port that refuses connections: listen, note it, close.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().(*net.TCPAddr).Port
	ln.Close()

	fast := []string{"check", "--delay", "10ms", "--allow-private-networks"}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string // in stdout
		stderr string // in stderr
	}{
		{"clean", append(fast, clean.URL+"/"), 0, "no problem found", ""},
		{"robots 503", append(fast, unavailable.URL+"/"), 1, "FAIL  robots-unavailable", "1 finding to look at"},
		{"bad URL", append(fast, "not a URL"), 2, "", "not an absolute http(s) URL"},
		{"ftp", append(fast, "ftp://example.org/"), 2, "", "not an absolute http(s) URL"},
		{"no URL", fast, 2, "", "want one URL"},
		{"two URLs", append(fast, clean.URL+"/", clean.URL+"/a"), 2, "", "want one URL"},
		{"bad flag", append(fast, "--no-such-flag", clean.URL+"/"), 2, "", "unknown flag"},
		{"bad agent", append(fast, "--agent", "Foo Bar", clean.URL+"/"), 2, "", "--agent"},
		{"unresolvable", append(fast, "http://no-such-host.invalid/"), 2, "", "no such host"},
		{"refused", append(fast, "--resolve", fmt.Sprintf("a.test:%d:127.0.0.1", closed), fmt.Sprintf("http://a.test:%d/", closed)), 2, "", "refused"},
		{"refused via connect-to", append(fast, "--connect-to", fmt.Sprintf("a.test:80:127.0.0.1:%d", closed), "http://a.test/"), 2, "", "refused"},
		{"private", []string{"check", clean.URL + "/"}, 2, "", "--allow-private-networks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := run(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr: %s", code, tc.code, out, errs)
			}
			if !strings.Contains(out, tc.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.stdout, out)
			}
			if !strings.Contains(errs, tc.stderr) || tc.code != 0 && strings.Count(errs, "\n") != 1 {
				t.Errorf("stderr %q, want one line with %q", errs, tc.stderr)
			}
			if tc.code == 2 && out != "" {
				t.Errorf("a check that could not run printed a report:\n%s", out)
			}
		})
	}
}

func TestCheckJSON(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var uas []string
	srv := checkSite(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		uas = append(uas, r.UserAgent())
		mu.Unlock()
		fmt.Fprint(w, "User-agent: *\nAllow: /\n")
	})
	code, out, errs := run(t, "check", "--json", "--delay", "10ms", "--allow-private-networks", "--agent", "examplebot", srv.URL+"/")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	var doc struct {
		URL       string `json:"url"`
		Agent     string `json:"agent"`
		UserAgent string `json:"user_agent"`
		Findings  []struct {
			ID       string   `json:"id"`
			Severity string   `json:"severity"`
			Message  string   `json:"message"`
			Evidence []string `json:"evidence"`
		} `json:"findings"`
		Requests int               `json:"requests"`
		Pages    int               `json:"pages"`
		Log      []json.RawMessage `json:"log"`
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, out)
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"url", "findings", "requests", "pages", "log", "seconds", "gap_seconds"} {
		if _, ok := raw[key]; !ok {
			t.Errorf("no %q in %s", key, out)
		}
	}
	if doc.URL != srv.URL+"/" || doc.Agent != "examplebot" || doc.Pages != 3 || doc.Requests != len(doc.Log) || doc.Requests < 5 {
		t.Errorf("url %q agent %q pages %d requests %d log %d", doc.URL, doc.Agent, doc.Pages, doc.Requests, len(doc.Log))
	}
	if !strings.HasPrefix(doc.UserAgent, "examplebot/") || !strings.Contains(doc.UserAgent, "check") {
		t.Errorf("user_agent %q: want the crawler's for --agent, saying check", doc.UserAgent)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(uas) != 1 || uas[0] != doc.UserAgent {
		t.Errorf("robots.txt was fetched with User-Agent %q, the report says %q", uas, doc.UserAgent)
	}
	if len(doc.Findings) == 0 {
		t.Fatal("no findings")
	}
	for _, f := range doc.Findings {
		if f.ID == "" || f.Message == "" || f.Evidence == nil {
			t.Errorf("finding %+v: want id, message and evidence", f)
		}
		switch f.Severity {
		case "info":
		case "fail", "warn":
			t.Errorf("finding %s is %s on a clean site", f.ID, f.Severity)
		default:
			t.Errorf("finding %s: severity %q", f.ID, f.Severity)
		}
	}
}
