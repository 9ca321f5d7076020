package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/proxytest"
)

// TestCrawlWithProxy: --proxy sends the crawl through a real proxy
// (tinyproxy), loopback included; the environment's proxies leave
// loopback alone, as Go's do; an empty --proxy ignores them; a bad proxy in the
// environment is refused in one line naming the variable.
func TestCrawlWithProxy(t *testing.T) {
	tp := proxytest.Start(t, proxytest.Options{User: "cli", Password: "pw"})
	site := newLocalSite(t)
	job := filepath.Join(t.TempDir(), "job")
	code, _, errs := run(t, "crawl", "-q", "--delay", "20ms", "--job", job, "--allow-private-networks",
		"--proxy", tp.URL(), site.srv.URL+"/")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reqs, err := tp.WaitRequests(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range reqs {
		got = append(got, r.Method+" "+strings.TrimPrefix(r.Target, site.srv.URL))
	}
	want := "GET /robots.txt,GET /,GET /one,GET /two"
	if strings.Join(got, ",") != want {
		t.Errorf("through the proxy: %q, want %q", got, want)
	}
	if n := len(site.requests()); n != 4 {
		t.Errorf("the site got %d requests, want 4", n)
	}

	// From the environment: loopback goes direct, so a proxy that does
	// not exist is never asked.
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	t.Setenv("http_proxy", "")
	code, _, errs = run(t, "crawl", "-q", "--delay", "20ms", "--job", filepath.Join(t.TempDir(), "job"), "--allow-private-networks", site.srv.URL+"/")
	if code != 0 || len(site.requests()) != 8 {
		t.Errorf("with HTTP_PROXY set, a loopback crawl: exit %d, stderr %q, %d requests at the site (want 8)", code, errs, len(site.requests()))
	}
	// --proxy '' connects directly whatever the environment says.
	t.Setenv("HTTP_PROXY", "socks5://127.0.0.1:1")
	code, _, errs = run(t, "crawl", "-q", "--delay", "20ms", "--job", filepath.Join(t.TempDir(), "job"), "--allow-private-networks", "--proxy", "", site.srv.URL+"/")
	if code != 0 || len(site.requests()) != 12 {
		t.Errorf("--proxy '' with a bad HTTP_PROXY: exit %d, stderr %q, %d requests at the site (want 12)", code, errs, len(site.requests()))
	}
	job = filepath.Join(t.TempDir(), "job")
	code, _, errs = run(t, "crawl", "-q", "--job", job, "--allow-private-networks", site.srv.URL+"/")
	if code != 2 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "HTTP_PROXY") {
		t.Errorf("a socks5 HTTP_PROXY: exit %d, stderr %q; want 2 and one line naming HTTP_PROXY", code, errs)
	}
	if len(site.requests()) != 12 {
		t.Errorf("a refused crawl sent requests")
	}
}
