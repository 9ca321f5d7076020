package servers_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
	"github.com/gentlecrawl/gentlecrawl/internal/nginxtest"
	"github.com/gentlecrawl/gentlecrawl/internal/proxytest"
)

// TestCrawlThroughProxy crawls two sites served by a real nginx twice,
// straight and then through a real proxy (Debian's tinyproxy, with
// credentials), and reads nginx's access log as the site owner would: the
// crawl through the proxy asks the same URLs in the same order, robots.txt
// first, one request at a time per site with at least the delay (one site
// sets it with Crawl-delay) between the end of one and the start of the
// next. The proxy's own log shows every request going through it, in
// absolute form. A recrawl through the proxy is answered 304 as it would
// be without. Site sizes, the delay and the Crawl-delay vary per run
// (GENTLECRAWL_SEED reproduces one).
func TestCrawlThroughProxy(t *testing.T) {
	nginxtest.Require(t)
	proxytest.Require(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("GENTLECRAWL_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	r := rand.New(rand.NewPCG(seed, 29))
	delay := time.Duration(15+r.IntN(30)) * time.Millisecond
	crawlDelay := time.Duration(40+10*r.IntN(6)) * time.Millisecond
	pages := []int{20 + r.IntN(40), 20 + r.IntN(40)}
	t.Logf("GENTLECRAWL_SEED=%d: %v pages, delay %v, Crawl-delay %v on the first site", seed, pages, delay, crawlDelay)

	var sites []nginxtest.Site
	var seeds []string
	gap := map[string]time.Duration{}
	for i, ip := range []string{"127.0.0.2", "127.0.0.3"} {
		addr := freePort(t, ip)
		root := t.TempDir()
		if _, err := nginxtest.WriteSite(root, addr, pages[i], seed+uint64(i)); err != nil {
			t.Fatal(err)
		}
		gap[ip] = delay
		if i == 0 {
			robots := fmt.Sprintf("User-agent: *\nCrawl-delay: %g\nAllow: /\n", crawlDelay.Seconds())
			if err := os.WriteFile(filepath.Join(root, "robots.txt"), []byte(robots), 0o644); err != nil {
				t.Fatal(err)
			}
			gap[ip] = max(delay, crawlDelay)
		}
		sites = append(sites, nginxtest.Site{Name: ip, Addr: addr, Root: root, Gzip: true})
		seeds = append(seeds, "http://"+addr+"/")
	}
	srv := nginxtest.Start(t, sites...)
	tp := proxytest.Start(t, proxytest.Options{User: "crawler", Password: fmt.Sprintf("pw%d", r.IntN(1000))})

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	seen := 0
	crawl := func(job, proxy string, recrawl bool) (*gentlecrawl.Summary, map[string][]nginxtest.Entry) {
		t.Helper()
		cfg := gentlecrawl.Config{
			JobDir:               job,
			Seeds:                seeds,
			Delay:                delay,
			Recrawl:              recrawl,
			AllowPrivateNetworks: true,
		}
		if proxy != "" {
			u, err := url.Parse(proxy)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Proxy = u
		}
		sum := crawltest.MustCrawl(t, ctx, cfg)
		all, err := srv.WaitEntries(ctx, seen+sum.Requests)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != seen+sum.Requests {
			t.Fatalf("nginx logged %d requests, the crawl made %d", len(all)-seen, sum.Requests)
		}
		bySite := map[string][]nginxtest.Entry{}
		for _, e := range all[seen:] {
			bySite[e.Site] = append(bySite[e.Site], e)
		}
		seen = len(all)
		for site, es := range bySite {
			sort.Slice(es, func(i, j int) bool { return es[i].Start().Before(es[j].Start()) })
			// (A recrawl within a day keeps the robots.txt it has.)
			if !recrawl && es[0].URI != "/robots.txt" {
				t.Errorf("%s (proxy %q): first request %s, want /robots.txt", site, proxy, es[0].URI)
			}
			for i := 1; i < len(es); i++ {
				// nginx logs whole milliseconds: allow 2 ms of rounding.
				if d := es[i].Start().Sub(es[i-1].Time); d < gap[site]-2*time.Millisecond {
					t.Errorf("%s (proxy %q): %s started %v after %s ended, want ≥ %v", site, proxy, es[i].URI, d, es[i-1].URI, gap[site])
				}
			}
		}
		return sum, bySite
	}

	direct, directLog := crawl(t.TempDir(), "", false)
	proxiedJob := t.TempDir()
	proxied, proxiedLog := crawl(proxiedJob, tp.URL(), false)
	if direct.Pages != proxied.Pages || direct.Requests != proxied.Requests {
		t.Errorf("direct: %d pages in %d requests; through the proxy: %d in %d", direct.Pages, direct.Requests, proxied.Pages, proxied.Requests)
	}
	for _, s := range sites {
		a, b := uris(directLog[s.Name]), uris(proxiedLog[s.Name])
		if !slices.Equal(a, b) {
			t.Errorf("%s: the crawl through the proxy asked\n%s\nwithout it\n%s", s.Name, strings.Join(b, " "), strings.Join(a, " "))
		}
	}
	reqs, err := tp.WaitRequests(ctx, proxied.Requests)
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != proxied.Requests {
		t.Errorf("tinyproxy logged %d requests, the crawl through it made %d", len(reqs), proxied.Requests)
	}
	for _, q := range reqs {
		if q.Method != "GET" || !strings.HasPrefix(q.Target, "http://127.0.0.") {
			t.Errorf("tinyproxy logged %s %s, want GET in absolute form", q.Method, q.Target)
		}
	}

	// The recrawl asks again with the validators nginx gave, through the
	// proxy, and nginx answers 304.
	_, recrawlLog := crawl(proxiedJob, tp.URL(), true)
	for _, s := range sites {
		var notModified, pages int
		for _, e := range recrawlLog[s.Name] {
			if e.URI == "/robots.txt" {
				continue
			}
			pages++
			if e.Status == 304 {
				notModified++
			}
		}
		if pages == 0 || notModified < pages*9/10 {
			t.Errorf("%s: the recrawl through the proxy got %d 304s for %d pages", s.Name, notModified, pages)
		}
	}
}

// freePort returns ip:port with a port free on ip a moment ago.
func freePort(t *testing.T, ip string) string {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func uris(es []nginxtest.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.URI
	}
	return out
}
