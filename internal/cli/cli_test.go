package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/warccheck"
)

// localSite is a small server that knows nothing of gentlecrawl: three pages,
// no robots.txt. It records the requests it gets.
type localSite struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []string // "Host PATH"
}

func newLocalSite(t *testing.T) *localSite {
	s := &localSite{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reqs = append(s.reqs, r.Host+" "+r.URL.RequestURI())
		s.mu.Unlock()
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<html><body><a href="/one">one</a> <a href="two">two</a> <a href="http://elsewhere.example/">out</a></body></html>`)
		case "/one", "/two":
			fmt.Fprint(w, `<html><body><a href="/">home</a></body></html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *localSite) port() string {
	_, port, _ := net.SplitHostPort(s.srv.Listener.Addr().String())
	return port
}

func (s *localSite) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...)
}

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code = Run(ctx, args, &out, &errb)
	// The WARC files of a crawl are read back as it ends (internal/warccheck),
	// not when the test does: some tests damage them on purpose.
	for i, a := range args {
		if code == 0 && args[0] == "crawl" && a == "--job" && i+1 < len(args) {
			warccheck.Job(t, args[i+1])
		}
	}
	return code, out.String(), errb.String()
}

func TestCrawlWithConnectTo(t *testing.T) {
	site := newLocalSite(t)
	job := filepath.Join(t.TempDir(), "job")
	code, out, errs := run(t, "crawl", "--quiet", "--delay", "50ms", "--job", job, "--allow-private-networks",
		"--connect-to", "a.test:80:127.0.0.1:"+site.port(), "http://a.test/")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	want := []string{"a.test /robots.txt", "a.test /", "a.test /one", "a.test /two"}
	if got := site.requests(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("requests %q, want %q", got, want)
	}
	for _, s := range []string{"Crawl finished", "200: 3", "unrestricted: 1", "WARC"} {
		if !strings.Contains(out, s) {
			t.Errorf("summary lacks %q:\n%s", s, out)
		}
	}
}

func TestCrawlWithResolve(t *testing.T) {
	site := newLocalSite(t)
	job := filepath.Join(t.TempDir(), "job")
	code, _, errs := run(t, "crawl", "-q", "--delay", "50ms", "--job", job, "--allow-private-networks",
		"--resolve", "a.test:"+site.port()+":127.0.0.1", "http://a.test:"+site.port()+"/")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if got := len(site.requests()); got != 4 {
		t.Errorf("%d requests, want 4: %q", got, site.requests())
	}
	if got := site.requests()[1]; got != "a.test:"+site.port()+" /" {
		t.Errorf("Host header and path %q, want the name, not the address", got)
	}
}

// TestRefusals: each bad invocation fails with one clear line, a non-zero
// status, no request sent and no job directory left behind.
func TestRefusals(t *testing.T) {
	site := newLocalSite(t)
	file := filepath.Join(t.TempDir(), "a-file")
	os.WriteFile(file, []byte("x"), 0o644)
	tests := []struct {
		name string
		args []string
		want string // in the one line on stderr
	}{
		{"private connect-to", []string{"--connect-to", "a.test:80:127.0.0.1:" + site.port(), "http://a.test/"}, "--allow-private-networks"},
		{"private resolve", []string{"--resolve", "a.test:" + site.port() + ":127.0.0.1", "http://a.test:" + site.port() + "/"}, "--allow-private-networks"},
		{"loopback seed", []string{site.srv.URL + "/"}, "--allow-private-networks"},
		{"malformed seed", []string{"http://exa mple.org/"}, "seed"},
		{"ftp seed", []string{"ftp://example.org/"}, "scheme"},
		{"bad connect-to", []string{"--connect-to", "nonsense", "http://a.test/"}, "--connect-to"},
		{"bad crawl-delay", []string{"--crawl-delay", "sometimes", "http://a.test/"}, "--crawl-delay"},
		{"bad agent", []string{"--user-agent", "my bot/1.0", "http://a.test/"}, "--user-agent"},
		{"unknown flag", []string{"--speed", "fast", "http://a.test/"}, "unknown flag"},
		{"revisit bounds without continuous", []string{"--revisit-min", "5m", "http://a.test/"}, "--continuous"},
		{"continuous and recrawl", []string{"--continuous", "--recrawl", "http://a.test/"}, "--recrawl"},
		{"revisit-min under a second", []string{"--continuous", "--revisit-min", "500ms", "http://a.test/"}, "--revisit-min"},
		{"revisit-max below revisit-min", []string{"--continuous", "--revisit-min", "2h", "--revisit-max", "1h", "http://a.test/"}, "--revisit-max"},
		{"refresh share above 1", []string{"--continuous", "--refresh-share", "1.5", "http://a.test/"}, "--refresh-share"},
		{"recheck-every 0", []string{"--continuous", "--recheck-every", "0", "http://a.test/"}, "--recheck-every"},
		{"negative for", []string{"--for", "-1s", "http://a.test/"}, "--for"},
		{"unknown log format", []string{"--log-format", "xml", "http://a.test/"}, "--log-format"},
		{"frontier not postgres", []string{"--frontier", "mysql://u:sekrit@db.test/crawl", "http://a.test/"}, "--frontier"},
		{"continuous on a shared frontier", []string{"--frontier", "postgres://u@db.test/crawl", "--continuous", "http://a.test/"}, "--continuous"},
		{"socks proxy", []string{"--proxy", "socks5://127.0.0.1:1080", "http://a.test/"}, "--proxy"},
		{"https proxy", []string{"--proxy", "https://u:sekrit@proxy.test:443", "http://a.test/"}, "--proxy"},
		{"proxy with a path", []string{"--proxy", "http://proxy.test:3128/path", "http://a.test/"}, "--proxy"},
		{"lease-ttl under a second", []string{"--frontier", "postgres://u@db.test/crawl", "--lease-ttl", "500ms", "http://a.test/"}, "--lease-ttl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := filepath.Join(t.TempDir(), "job")
			args := append([]string{"crawl", "-q", "--job", job}, tt.args...)
			code, _, errs := run(t, args...)
			if code == 0 {
				t.Fatalf("exit 0, want failure")
			}
			if lines := strings.Count(errs, "\n"); lines != 1 || !strings.Contains(errs, tt.want) {
				t.Errorf("stderr %q: want one line naming %q", errs, tt.want)
			}
			if strings.Contains(errs, "sekrit") {
				t.Errorf("stderr %q repeats the password", errs)
			}
			if _, err := os.Stat(job); !os.IsNotExist(err) {
				t.Errorf("job directory was created (%v): nothing should be written on bad input", err)
			}
		})
	}
	if n := len(site.requests()); n != 0 {
		t.Errorf("the server got %d requests from refused crawls", n)
	}

	t.Run("unwritable job", func(t *testing.T) {
		code, _, errs := run(t, "crawl", "-q", "--job", filepath.Join(file, "job"), "--allow-private-networks",
			"--connect-to", "a.test:80:127.0.0.1:"+site.port(), "http://a.test/")
		if code == 0 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "job directory") {
			t.Errorf("exit %d, stderr %q: want one line about the job directory", code, errs)
		}
	})
	t.Run("unreachable frontier", func(t *testing.T) {
		// Nothing listens on port 1: one line, naming --frontier, without
		// the password; no request to the site.
		code, _, errs := run(t, "crawl", "-q", "--job", filepath.Join(t.TempDir(), "job"), "--allow-private-networks",
			"--frontier", "postgres://u:sekrit@127.0.0.1:1/crawl?sslmode=disable&connect_timeout=5",
			"--connect-to", "a.test:80:127.0.0.1:"+site.port(), "http://a.test/")
		if code == 0 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "--frontier") || strings.Contains(errs, "sekrit") {
			t.Errorf("exit %d, stderr %q: want one line about --frontier, without the password", code, errs)
		}
		if n := len(site.requests()); n != 0 {
			t.Errorf("the server got %d requests", n)
		}
	})
	t.Run("no job", func(t *testing.T) {
		code, _, errs := run(t, "crawl", "http://a.test/")
		if code == 0 || !strings.Contains(errs, "--job") {
			t.Errorf("exit %d, stderr %q", code, errs)
		}
	})
}

func TestJobInUse(t *testing.T) {
	site := newLocalSite(t)
	job := t.TempDir()
	lock, err := os.OpenFile(filepath.Join(job, "LOCK"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	code, _, errs := run(t, "crawl", "-q", "--job", job, "--allow-private-networks",
		"--connect-to", "a.test:80:127.0.0.1:"+site.port(), "http://a.test/")
	if code == 0 || !strings.Contains(errs, "in use by another crawl") {
		t.Errorf("exit %d, stderr %q: want a refusal saying the job is in use", code, errs)
	}
	if n := len(site.requests()); n != 0 {
		t.Errorf("%d requests sent while the job was locked", n)
	}
}

func TestConfigFile(t *testing.T) {
	site := newLocalSite(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "crawl.toml")
	os.WriteFile(conf, []byte(fmt.Sprintf(`
delay = "20ms"
allow-private-networks = true
connect-to = ["a.test:80:127.0.0.1:%s"]
max-pages = 1
`, site.port())), 0o644)
	// max-pages from the file, overridden on the command line.
	code, out, errs := run(t, "crawl", "-q", "--config", conf, "--max-pages", "2", "--job", filepath.Join(dir, "job"), "http://a.test/")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if !strings.Contains(out, "Crawl max-pages") || !strings.Contains(out, "(2 pages") {
		t.Errorf("want a crawl stopped after 2 pages:\n%s", out)
	}

	os.WriteFile(conf, []byte("delya = \"1s\"\n"), 0o644)
	code, _, errs = run(t, "crawl", "-q", "--config", conf, "--job", filepath.Join(dir, "job2"), "http://a.test/")
	if code == 0 || !strings.Contains(errs, `unknown setting "delya"`) {
		t.Errorf("exit %d, stderr %q: want the unknown setting named", code, errs)
	}
}

func TestProgressLine(t *testing.T) {
	// A smoke test of the wording; the numbers come from the crawler.
	line := progressLine(progressFixture(), 2.5)
	for _, s := range []string{"12 pages (2.5/s)", "30 queued", "1 waiting for robots.txt", "2 waiting for their address", "3 errors"} {
		if !strings.Contains(line, s) {
			t.Errorf("progress line %q lacks %q", line, s)
		}
	}
}

// TestDemo runs the demo on a small web: both crawls, the server's view,
// and the saving from conditional GETs.
func TestDemo(t *testing.T) {
	code, out, errs := run(t, "demo", "--hosts", "12", "--pages", "3", "--delay", "20ms", "--site-crawl-delay", "100ms")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q\n%s", code, errs, out)
	}
	for _, s := range []string{
		"robots.txt fails (500)",
		"What the site owners saw",
		"Never two requests at once to a host",
		"Second crawl (--recrawl)",
		"not modified",
		"answers were 304",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("demo output lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "PROBLEM") {
		t.Errorf("the demo's own check of the server log found a problem:\n%s", out)
	}
}

// TestResumeWithoutSeeds: a job run again without its seed URLs goes on
// with the same scope.
func TestResumeWithoutSeeds(t *testing.T) {
	site := newLocalSite(t)
	job := filepath.Join(t.TempDir(), "job")
	common := []string{"crawl", "-q", "--delay", "20ms", "--job", job, "--allow-private-networks",
		"--connect-to", "a.test:80:127.0.0.1:" + site.port()}
	code, out, errs := run(t, append(common, "--max-pages", "1", "http://a.test/")...)
	if code != 0 || !strings.Contains(out, "still queued    2 URLs") {
		t.Fatalf("first run: exit %d, stderr %q\n%s", code, errs, out)
	}
	code, out, errs = run(t, common...)
	if code != 0 || !strings.Contains(out, "Crawl finished") {
		t.Fatalf("resume: exit %d, stderr %q\n%s", code, errs, out)
	}
	want := []string{"a.test /robots.txt", "a.test /", "a.test /one", "a.test /two"}
	if got := site.requests(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("requests %q, want %q", got, want)
	}
	// Nothing left: a third run says so and fails.
	code, _, errs = run(t, common...)
	if code == 0 || !strings.Contains(errs, "nothing to do") {
		t.Errorf("third run: exit %d, stderr %q", code, errs)
	}
}

func TestConfigFileHostRules(t *testing.T) {
	dir := t.TempDir()
	fs := newCrawlCmd(io.Discard, io.Discard).Flags()
	write := func(s string) string {
		p := filepath.Join(dir, "c.toml")
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	rules, err := loadConfigFile(fs, write(`
delay = "2s"
[[host]]
name = "Shop.Example.org"
delay = "10s"
until = "2027-01-31"
hours = ["09:00-18:00 UTC 20s"]
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 1 || rules[0].Host != "shop.example.org" || rules[0].Delay != 10*time.Second ||
		rules[0].Until.IsZero() || len(rules[0].Windows) != 1 || rules[0].Windows[0].Delay != 20*time.Second {
		t.Errorf("rules %+v", rules)
	}
	for _, bad := range []string{
		"[[host]]\ndelay = \"10s\"\n",
		"[[host]]\nname = \"a\"\ndelay = \"-1s\"\n",
		"[[host]]\nname = \"a\"\nuntil = \"next week\"\n",
		"[[host]]\nname = \"a\"\nhours = [\"all day\"]\n",
		"[[host]]\nname = \"a\"\nrate = \"1/s\"\n",
		"host = \"a\"\n",
	} {
		if _, err := loadConfigFile(newCrawlCmd(io.Discard, io.Discard).Flags(), write(bad)); err == nil {
			t.Errorf("config %q accepted", bad)
		}
	}
}

func TestIncludeExclude(t *testing.T) {
	site := newLocalSite(t)
	job := filepath.Join(t.TempDir(), "job")
	code, _, errs := run(t, "crawl", "-q", "--delay", "10ms", "--job", job, "--allow-private-networks",
		"--connect-to", "a.test:80:127.0.0.1:"+site.port(), "--exclude", `/two$`, "http://a.test/")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	want := []string{"a.test /robots.txt", "a.test /", "a.test /one"}
	if got := site.requests(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("requests %q, want %q", got, want)
	}
	code, _, errs = run(t, "crawl", "-q", "--job", filepath.Join(t.TempDir(), "j"), "--include", "([", "http://a.test/")
	if code != 2 || !strings.Contains(errs, "--include") {
		t.Errorf("bad --include: exit %d, stderr %q", code, errs)
	}
}

// TestResumeKeepsExclude: a job resumed without --exclude keeps the one it
// was started with, for links found after the resume.
func TestResumeKeepsExclude(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<a href="/one">one</a>`)
		case "/one":
			fmt.Fprint(w, `<a href="/two">two</a> <a href="/three">three</a>`)
		case "/robots.txt":
			http.NotFound(w, r)
		default:
			fmt.Fprint(w, "ok")
		}
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	job := filepath.Join(t.TempDir(), "job")
	common := []string{"crawl", "-q", "--delay", "10ms", "--job", job, "--allow-private-networks",
		"--connect-to", "a.test:80:127.0.0.1:" + port}
	if code, _, errs := run(t, append(common, "--max-pages", "1", "--exclude", `/two$`, "http://a.test/")...); code != 0 {
		t.Fatalf("first run: exit %d, %q", code, errs)
	}
	if code, _, errs := run(t, common...); code != 0 {
		t.Fatalf("resume: exit %d, %q", code, errs)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := "/robots.txt / /one /three"; strings.Join(got, " ") != want {
		t.Errorf("requests %q, want %q (/two excluded by the first run)", strings.Join(got, " "), want)
	}
}

// TestLogFormatJSON: with --log-format json every log line is a JSON
// object with a message and a level.
func TestLogFormatJSON(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	job := filepath.Join(t.TempDir(), "job")
	_, _, errs := run(t, "crawl", "-q", "-v", "--log-format", "json", "--delay", "1ms", "--job", job,
		"--allow-private-networks", "http://"+closed+"/")
	lines := 0
	for _, line := range strings.Split(strings.TrimSpace(errs), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue // the one-line reason the crawl failed, if any
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil || m["msg"] == nil || m["level"] == nil {
			t.Errorf("log line %q: %v", line, err)
		}
		lines++
	}
	if lines == 0 {
		t.Errorf("no JSON log line on stderr:\n%s", errs)
	}
}
