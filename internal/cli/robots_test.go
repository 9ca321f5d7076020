package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const testRobots = `# robots.txt for a test
Sitemap: https://a.test/sitemap.xml
User-agent: *
Disallow: /

User-agent: gentlecrawl
Allow: /public/
Disallow: /public/drafts/   # not yet
Crawl-delay: 2.5
Clean-param: ref&sid /forum/
Host: a.test
`

func writeRobots(t *testing.T, body string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestRobotsFile(t *testing.T) {
	file := writeRobots(t, testRobots)
	code, out, errs := run(t, "robots", file, "https://a.test/public/x", "/public/drafts/y?z=1", "/robots.txt")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (a URL is disallowed); stderr %q", code, errs)
	}
	for _, want := range []string{
		"group: gentlecrawl (user-agent on line 6)",
		`crawl-delay: 2.5s (line 9: "2.5")`,
		"https://a.test/sitemap.xml",
		"line 10: ref&sid for /forum/",
		`line 11: ignored: Host is Yandex's and obsolete: "Host: a.test"`,
		"allowed    https://a.test/public/x  (line 7: Allow: /public/)",
		"DISALLOWED /public/drafts/y?z=1  (line 8: Disallow: /public/drafts/)",
		"allowed    /robots.txt  (/robots.txt is always allowed)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "1 of 3 URLs disallowed") || strings.Count(errs, "\n") != 1 {
		t.Errorf("stderr %q", errs)
	}

	code, out, _ = run(t, "robots", file, "/public/a", "/public/b")
	if code != 0 {
		t.Errorf("all allowed: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "robots", "--agent", "OtherBot", file, "/public/a")
	if code != 1 || !strings.Contains(out, "group: * (user-agent on line 3)") || !strings.Contains(out, "line 4: Disallow: /") {
		t.Errorf("other agent: exit %d\n%s", code, out)
	}
	// No URLs: a report of the file, exit 0.
	if code, out, _ = run(t, "robots", file); code != 0 || !strings.Contains(out, "group: gentlecrawl") {
		t.Errorf("no URLs: exit %d\n%s", code, out)
	}
}

func TestRobotsJSON(t *testing.T) {
	file := writeRobots(t, testRobots+"User-agent: *\nCrawl-delay: 999999\n")
	code, out, errs := run(t, "robots", "--json", "--agent", "other", file, "/x", "/robots.txt")
	if code != 1 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var rep struct {
		Agent string `json:"agent"`
		Group struct {
			Agent string `json:"agent"`
			Lines []int  `json:"lines"`
		} `json:"group"`
		CrawlDelay *struct {
			Seconds float64 `json:"seconds"`
			Line    int     `json:"line"`
			Absurd  bool    `json:"absurd"`
		} `json:"crawl_delay"`
		Sitemaps    []string `json:"sitemaps"`
		CleanParams []struct {
			Params []string `json:"params"`
			Prefix string   `json:"prefix"`
		} `json:"clean_params"`
		Issues []struct {
			Line    int  `json:"line"`
			Ignored bool `json:"ignored"`
		} `json:"issues"`
		URLs []struct {
			URL     string `json:"url"`
			Allowed bool   `json:"allowed"`
			Rule    string `json:"rule"`
			Line    int    `json:"line"`
		} `json:"urls"`
		Disallowed int `json:"disallowed"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if rep.Agent != "other" || rep.Group.Agent != "*" || fmt.Sprint(rep.Group.Lines) != "[3 12]" {
		t.Errorf("group %+v", rep.Group)
	}
	if cd := rep.CrawlDelay; cd == nil || cd.Seconds != 999999 || cd.Line != 13 || !cd.Absurd {
		t.Errorf("crawl_delay %+v", cd)
	}
	if len(rep.Sitemaps) != 1 || len(rep.CleanParams) != 1 || rep.CleanParams[0].Prefix != "/forum/" {
		t.Errorf("sitemaps %v clean_params %+v", rep.Sitemaps, rep.CleanParams)
	}
	if len(rep.Issues) != 1 || rep.Issues[0].Line != 11 || !rep.Issues[0].Ignored {
		t.Errorf("issues %+v", rep.Issues)
	}
	if len(rep.URLs) != 2 || rep.URLs[0].Allowed || rep.URLs[0].Line != 4 || rep.URLs[0].Rule != "Disallow: /" || !rep.URLs[1].Allowed || rep.Disallowed != 1 {
		t.Errorf("urls %+v", rep.URLs)
	}
}

func TestRobotsStdin(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = old }()
	go func() {
		fmt.Fprint(w, "\ufeffuser-agent: gentlecrawl\r\ndisallow: /x\r\n")
		w.Close()
	}()
	code, out, errs := run(t, "robots", "-", "/x")
	if code != 1 || !strings.Contains(out, "DISALLOWED /x  (line 2: disallow: /x)") {
		t.Errorf("exit %d, stderr %q\n%s", code, errs, out)
	}
}

func TestRobotsErrors(t *testing.T) {
	file := writeRobots(t, testRobots)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no ROBOTS", []string{"robots"}, "ROBOTS"},
		{"missing file", []string{"robots", filepath.Join(t.TempDir(), "nope"), "/x"}, "no such file"},
		{"bad agent", []string{"robots", "--agent", "my bot/1.0", file, "/x"}, "--agent"},
		{"unknown flag", []string{"robots", "--fast", file}, "unknown flag"},
		{"loopback without the flag", []string{"robots", "http://127.0.0.1:1/robots.txt", "/x"}, "--allow-private-networks"},
		{"private connect-to", []string{"robots", "--connect-to", "a.test:80:127.0.0.1:1", "http://a.test/robots.txt"}, "--allow-private-networks"},
		{"bad resolve", []string{"robots", "--resolve", "nonsense", "http://a.test/robots.txt"}, "--resolve"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := run(t, tt.args...)
			if code != 2 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, stderr %q: want 2 and one line naming %q", code, errs, tt.want)
			}
		})
	}
}

// robotsSite serves robots.txt answers by path and records the requests.
type robotsSite struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []string
}

func newRobotsSite(t *testing.T, h http.HandlerFunc) *robotsSite {
	s := &robotsSite{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reqs = append(s.reqs, r.Host+" "+r.URL.Path+" "+r.UserAgent())
		s.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func TestRobotsURL(t *testing.T) {
	site := newRobotsSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt" && r.Host == "a.test":
			http.Redirect(w, r, "http://b.test/hop1", http.StatusMovedPermanently)
		case r.URL.Path == "/hop1":
			http.Redirect(w, r, "/shared/robots.txt", http.StatusFound)
		case r.URL.Path == "/shared/robots.txt":
			w.Header().Set("Cache-Control", "max-age=600")
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
		case strings.HasPrefix(r.URL.Path, "/loop"):
			http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
		case r.URL.Path == "/gone/robots.txt":
			http.NotFound(w, r)
		case r.URL.Path == "/busy/robots.txt":
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, "User-agent: *\nAllow: /\n") // must not be read
		}
	})
	connect := []string{"--allow-private-networks", "--connect-to", "::" + strings.TrimPrefix(site.srv.URL, "http://")}

	code, out, errs := run(t, append(append([]string{"robots"}, connect...), "http://a.test/robots.txt", "http://a.test/private/x", "http://a.test/ok")...)
	if code != 1 {
		t.Fatalf("exit %d, stderr %q\n%s", code, errs, out)
	}
	for _, want := range []string{
		"fetched http://a.test/robots.txt → 301",
		"fetched http://b.test/hop1 → 302",
		"fetched http://b.test/shared/robots.txt → 200",
		"after 2 redirects, HTTP 200",
		"kept for 10m0s",
		"DISALLOWED http://a.test/private/x  (line 2: Disallow: /private/)",
		"allowed    http://a.test/ok",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if got := site.reqs[0]; !strings.HasPrefix(got, "a.test /robots.txt gentlecrawl/") {
		t.Errorf("first request %q: want the robots.txt of a.test, with our User-Agent", got)
	}

	for _, tt := range []struct {
		path, want string
		code       int
	}{
		{"/loop", "after 5 redirects, HTTP 302: unavailable: complete disallow", 1},
		{"/gone/robots.txt", "HTTP 404: no robots.txt, no restrictions", 0},
		{"/busy/robots.txt", "HTTP 503: unavailable: complete disallow", 1},
	} {
		code, out, errs := run(t, append(append([]string{"robots", "--json"}, connect...), "http://a.test"+tt.path, "http://a.test/page")...)
		if code != tt.code || !strings.Contains(out, tt.want) {
			t.Errorf("%s: exit %d (want %d), stderr %q\n%s", tt.path, code, tt.code, errs, out)
		}
	}
	// Six requests for the loop: the first and five redirects.
	n := 0
	for _, r := range site.reqs {
		if strings.Contains(r, " /loop") {
			n++
		}
	}
	if n != 6 {
		t.Errorf("%d requests of the redirect loop, want 6", n)
	}
}

func TestRobotsUnreachable(t *testing.T) {
	site := newRobotsSite(t, func(w http.ResponseWriter, r *http.Request) {})
	addr := strings.TrimPrefix(site.srv.URL, "http://")
	site.srv.Close() // nothing listens there any more
	code, out, errs := run(t, "robots", "--allow-private-networks", "http://"+addr+"/robots.txt", "/x")
	if code != 1 || !strings.Contains(out, "no response") || !strings.Contains(out, "complete disallow") || !strings.Contains(out, "DISALLOWED /x") {
		t.Errorf("exit %d, stderr %q\n%s", code, errs, out)
	}
}
