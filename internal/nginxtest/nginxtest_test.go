package nginxtest_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/extract"
	"github.com/gentlecrawl/gentlecrawl/internal/nginxtest"
)

// TestLimits fires 20 requests back to back at two rate-limited sites
// and reads the answers and the access log.
func TestLimits(t *testing.T) {
	root := t.TempDir()
	paths, err := nginxtest.WriteSite(root, "c.test", 50, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 50 {
		t.Fatalf("WriteSite wrote %d pages, want 50", len(paths))
	}
	srv := nginxtest.Start(t,
		nginxtest.Site{Name: "a.test", Addr: "127.0.0.1:0", Root: root, Limit: nginxtest.Limit{Rate: 5, Burst: 1}, Gzip: true},
		nginxtest.Site{Name: "b.test", Addr: "127.0.0.2:0", Root: root, Limit: nginxtest.Limit{Rate: 5, Burst: 1, Status: 429, RetryAfter: 2}},
	)
	client := newClient(nil)

	type answer struct {
		status     int
		retryAfter []string
	}
	burst := func(site string) []answer {
		var out []answer
		for range 20 {
			resp, _ := get(t, client, srv.URL(site)+"/", nil)
			out = append(out, answer{resp.StatusCode, resp.Header.Values("Retry-After")})
		}
		return out
	}
	check := func(site string, answers []answer, refusal int, retryAfter string) map[int]int {
		counts := map[int]int{}
		for i, a := range answers {
			counts[a.status]++
			switch {
			case a.status != http.StatusOK && a.status != refusal:
				t.Errorf("%s request %d: status %d, want 200 or %d", site, i, a.status, refusal)
			case a.status == refusal && retryAfter != "" && (len(a.retryAfter) != 1 || a.retryAfter[0] != retryAfter):
				t.Errorf("%s request %d (%d): Retry-After %q, want %q", site, i, a.status, a.retryAfter, retryAfter)
			case (a.status == http.StatusOK || retryAfter == "") && len(a.retryAfter) != 0:
				t.Errorf("%s request %d (%d): Retry-After %q, want none", site, i, a.status, a.retryAfter)
			}
		}
		if counts[http.StatusOK] == 0 || counts[refusal] == 0 {
			t.Errorf("%s: statuses %v, want some 200 and some %d", site, counts, refusal)
		}
		return counts
	}
	wantA := check("a.test", burst("a.test"), http.StatusServiceUnavailable, "")
	wantB := check("b.test", burst("b.test"), http.StatusTooManyRequests, "2")

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	entries, err := srv.WaitEntries(ctx, 40)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[int]int{"a.test": {}, "b.test": {}}
	conns := map[string]map[uint64]bool{"a.test": {}, "b.test": {}}
	for _, e := range entries {
		if got[e.Site] == nil {
			t.Errorf("entry of an unknown site: %+v", e)
			continue
		}
		got[e.Site][e.Status]++
		conns[e.Site][e.Conn] = true
		if e.Method != http.MethodGet || e.URI != "/" || e.Remote != "127.0.0.1" || e.Host != srv.Addr(e.Site) || e.UserAgent != "nginxtest" {
			t.Errorf("entry %+v: want GET / from 127.0.0.1 with Host %s and User-Agent nginxtest", e, srv.Addr(e.Site))
		}
		if want := map[bool]string{true: "PASSED", false: "REJECTED"}[e.Status == http.StatusOK]; e.Limit != want {
			t.Errorf("entry %+v: Limit %q, want %q", e, e.Limit, want)
		}
		if e.Status == http.StatusOK && e.Bytes == 0 {
			t.Errorf("entry %+v: a 200 with no bytes", e)
		}
		if d := time.Since(e.Time); d < 0 || d > time.Minute || e.Duration < 0 || e.Duration > 10*time.Second {
			t.Errorf("entry %+v: Time %v ago, Duration %v", e, d, e.Duration)
		}
	}
	if fmt.Sprint(got["a.test"]) != fmt.Sprint(wantA) || fmt.Sprint(got["b.test"]) != fmt.Sprint(wantB) {
		t.Errorf("access log statuses %v, the client's a.test %v b.test %v", got, wantA, wantB)
	}
	// Refusals keep the connection open: each burst used one.
	for site, c := range conns {
		if len(c) != 1 {
			t.Errorf("%s: %d connections for 20 sequential requests, want 1 (keepalive)", site, len(c))
		}
	}

	// gzip on a.test, not on b.test; Vary on both ways on a.test.
	want, err := os.ReadFile(filepath.Join(root, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	gz := http.Header{"Accept-Encoding": {"gzip"}}
	resp, body := getOK(t, client, srv.URL("a.test")+"/", gz)
	if ce := resp.Header.Get("Content-Encoding"); ce != "gzip" || resp.Header.Get("Vary") != "Accept-Encoding" {
		t.Errorf("a.test with Accept-Encoding: gzip: Content-Encoding %q, Vary %q; want gzip, Accept-Encoding", ce, resp.Header.Get("Vary"))
	} else if zr, err := gzip.NewReader(bytes.NewReader(body)); err != nil {
		t.Error(err)
	} else if plain, err := io.ReadAll(zr); err != nil || !bytes.Equal(plain, want) {
		t.Errorf("a.test gzipped body: %d bytes (%v), want the %d of index.html", len(plain), err, len(want))
	}
	resp, body = getOK(t, client, srv.URL("b.test")+"/", gz)
	if ce := resp.Header.Get("Content-Encoding"); ce != "" || !bytes.Equal(body, want) {
		t.Errorf("b.test (no Gzip) with Accept-Encoding: gzip: Content-Encoding %q, %d bytes; want identity, %d", ce, len(body), len(want))
	}

	// Conditional GET.
	resp, _ = getOK(t, client, srv.URL("b.test")+"/", nil)
	etag, lm := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if etag == "" || lm == "" {
		t.Fatalf("no ETag (%q) or Last-Modified (%q)", etag, lm)
	}
	if mod, err := http.ParseTime(lm); err != nil || time.Since(mod) < 24*time.Hour {
		t.Errorf("Last-Modified %q: want simweb's date, not the time WriteSite ran", lm)
	}
	if resp, _ = getOK(t, client, srv.URL("b.test")+"/", http.Header{"If-None-Match": {etag}}); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match %s: status %d, want 304", etag, resp.StatusCode)
	}
	if resp, _ = getOK(t, client, srv.URL("b.test")+"/", http.Header{"If-Modified-Since": {lm}}); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-Modified-Since %s: status %d, want 304", lm, resp.StatusCode)
	}

	// The log unescapes what nginx escaped.
	ua := "tab\there \"quoted\" \\ back"
	getOK(t, client, srv.URL("b.test")+"/robots.txt", http.Header{"User-Agent": {ua}})
	for {
		if entries, err = srv.Entries(); err != nil {
			t.Fatal(err)
		}
		// getOK tries again after a refusal (b.test has a limit, and the
		// requests above may have used it up): the 200 is the one to read.
		if last := entries[len(entries)-1]; last.URI == "/robots.txt" && last.Status != http.StatusTooManyRequests {
			if last.UserAgent != ua || last.Status != http.StatusOK {
				t.Errorf("entry %+v, want a 200 with User-Agent %q", last, ua)
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatal("no entry for /robots.txt in the access log")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestWriteSite crawls two WriteSite sites on an nginx without limits,
// one named by its address and one by a host name mapped to its address
// (as gentlecrawl --connect-to does), and finds every page from "/".
func TestWriteSite(t *testing.T) {
	byName, byAddr := t.TempDir(), t.TempDir()
	namePaths, err := nginxtest.WriteSite(byName, "c.test", 50, 7)
	if err != nil {
		t.Fatal(err)
	}
	srv := nginxtest.Start(t,
		nginxtest.Site{Name: "c.test", Addr: "127.0.0.3:0", Root: byName},
		nginxtest.Site{Name: "d.test", Addr: "127.0.0.4:0", Root: byAddr},
	)
	// nginx serves files as they are: d.test's appear now that its
	// address is known.
	addrPaths, err := nginxtest.WriteSite(byAddr, srv.Addr("d.test"), 50, 7)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(addrPaths) != fmt.Sprint(namePaths) {
		t.Errorf("the same seed gave different pages:\n%q\n%q", addrPaths, namePaths)
	}
	client := newClient(map[string]string{"c.test:80": srv.Addr("c.test")})
	for _, start := range []string{"http://c.test/", srv.URL("d.test") + "/"} {
		t.Run(start, func(t *testing.T) {
			resp, body := get(t, client, start+"robots.txt", nil)
			if resp.StatusCode != http.StatusOK || string(body) != nginxtest.RobotsTxt {
				t.Errorf("robots.txt: %d %q", resp.StatusCode, body)
			}
			found, depth := crawl(t, client, start)
			for _, p := range namePaths {
				if !found[p] {
					t.Errorf("page %s not found from /", p)
				}
				delete(found, p)
			}
			if len(found) > 0 {
				t.Errorf("pages that WriteSite did not list: %v", found)
			}
			t.Logf("%d pages within %d hops of /", len(namePaths), depth)
		})
	}
	resp, _ := get(t, client, "http://c.test/no/such/page", nil)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown path: status %d, want 404", resp.StatusCode)
	}
	var query, bare bool
	for _, p := range namePaths {
		if strings.Contains(p, "?") {
			query = true
		} else if !strings.HasSuffix(p, "/") && !strings.Contains(filepath.Base(p), ".") {
			bare = true
			resp, _ := get(t, client, "http://c.test"+p, nil)
			if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Errorf("%s (no extension): Content-Type %q, want text/html; charset=utf-8", p, ct)
			}
		}
	}
	if !query || !bare {
		t.Errorf("the site has no page with a query (%v) or none without an extension (%v): the test misses a case", query, bare)
	}
}

// crawl fetches every page of the site at start that links reach, and
// returns the request URIs found and the largest number of hops from
// start. Every link on the site must answer 200.
func crawl(t *testing.T, client *http.Client, start string) (map[string]bool, int) {
	base, _ := url.Parse(start)
	found := map[string]bool{"/": true}
	level, depth := []string{"/"}, 0
	for ; len(level) > 0; depth++ {
		var next []string
		for _, p := range level {
			doc, _ := url.Parse(start[:len(start)-1] + p)
			resp, body := get(t, client, doc.String(), nil)
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s: status %d", doc, resp.StatusCode)
				continue
			}
			page, err := extract.HTML(doc, body)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range page.Links {
				u, _ := url.Parse(l.URL)
				if u.Hostname() != base.Hostname() || (u.Port() != base.Port() && !(base.Port() == "" && u.Port() == "80")) {
					if u.Host != "outside.example" {
						t.Errorf("%s links off the site to %s", doc, l.URL)
					}
					continue
				}
				if uri := u.RequestURI(); !found[uri] {
					found[uri] = true
					next = append(next, uri)
				}
			}
		}
		level = next
	}
	return found, depth - 1
}

// BenchmarkWriteSite measures WriteSite on a site of 2,000 pages (about
// 70 MB); its cost grows with the pages, so 20,000 take ten times as long.
func BenchmarkWriteSite(b *testing.B) {
	const pages = 2000
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		b.StartTimer()
		if _, err := nginxtest.WriteSite(dir, "a.test", pages, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*pages), "µs/page")
}

// TestLaunchRefuses checks that sites are checked before nginx runs: it
// needs no nginx.
func TestLaunchRefuses(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		site nginxtest.Site
		want string
	}{
		{nginxtest.Site{Name: "a.test", Addr: "10.1.2.3:8080", Root: root}, "loopback"},
		{nginxtest.Site{Name: "a.test", Addr: "0.0.0.0:8080", Root: root}, "loopback"},
		{nginxtest.Site{Name: "a.test", Addr: "[::]:8080", Root: root}, "loopback"},
		{nginxtest.Site{Name: "a.test", Addr: "localhost:8080", Root: root}, "loopback"},
		{nginxtest.Site{Name: "a.test", Addr: ":8080", Root: root}, "loopback"},
		{nginxtest.Site{Name: "a.test", Addr: "127.0.0.1", Root: root}, "address"},
		{nginxtest.Site{Name: "a test", Addr: "127.0.0.1:0", Root: root}, "name"},
		{nginxtest.Site{Name: "a.test", Addr: "127.0.0.1:0"}, "Root"},
		{nginxtest.Site{Name: "a.test", Addr: "127.0.0.1:0", Root: root, Limit: nginxtest.Limit{Rate: 1, Status: 200}}, "Status"},
	} {
		_, err := nginxtest.Launch(t.Context(), t.TempDir(), tc.site)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Launch(%+v): error %v, want one about %q", tc.site, err, tc.want)
		}
	}
	_, err := nginxtest.Launch(t.Context(), t.TempDir(),
		nginxtest.Site{Name: "a.test", Addr: "127.0.0.1:0", Root: root},
		nginxtest.Site{Name: "A.test", Addr: "127.0.0.1:0", Root: root})
	if err == nil {
		t.Error("Launch accepted two sites called a.test")
	}
	if _, err := nginxtest.WriteSite(root, "http://a.test/", 5, 1); err == nil {
		t.Error("WriteSite accepted a URL as its host")
	}
}

// newClient returns a client that reuses connections, does not
// decompress, sends User-Agent nginxtest, and connects to the addresses
// of connectTo ("c.test:80" → "127.0.0.3:8080") instead of those named.
func newClient(connectTo map[string]string) *http.Client {
	tr := &http.Transport{DisableCompression: true}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if a, ok := connectTo[addr]; ok {
			addr = a
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
}

// get sends a GET with the header hdr and reads the whole answer.
func get(t *testing.T, client *http.Client, u string, hdr http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "nginxtest")
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// getOK is get, waiting out the rate limit: it tries again after a
// refusal (503 or 429), up to 5 seconds.
func getOK(t *testing.T, client *http.Client, u string, hdr http.Header) (*http.Response, []byte) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		resp, body := get(t, client, u, hdr)
		if resp.StatusCode != http.StatusServiceUnavailable && resp.StatusCode != http.StatusTooManyRequests || time.Now().After(deadline) {
			return resp, body
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Example serves a simweb site of 1,000 pages with nginx's limit_req at
// 2 requests per second, as a crawler would meet it. Start does the same
// in a test, with the configuration in t.TempDir() and a Cleanup.
func Example() {
	dir, err := os.MkdirTemp("", "nginxtest")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	root := filepath.Join(dir, "site")
	if err := os.Mkdir(root, 0o755); err != nil {
		panic(err)
	}
	if _, err := nginxtest.WriteSite(root, "a.test", 1000, 1); err != nil {
		panic(err)
	}
	srv, err := nginxtest.Launch(context.Background(), dir, nginxtest.Site{
		Name:  "a.test",
		Addr:  "127.0.0.2:0",
		Root:  root,
		Limit: nginxtest.Limit{Rate: 2, Burst: 5, Status: 429, RetryAfter: 5},
		Gzip:  true,
	})
	if err != nil {
		panic(err)
	}
	defer srv.Stop()
	// The pages name their host a.test; map it to nginx's address.
	fmt.Println("gentlecrawl --allow-private-networks --connect-to a.test:80:" + srv.Addr("a.test") + " http://a.test/")
	// Then read what nginx saw.
	entries, _ := srv.Entries()
	fmt.Println(len(entries), "requests")
}

// TestFaults serves one site with each fault Site can add (Directives,
// Locations, NotFound) and one without, and reads what nginx answers.
func TestFaults(t *testing.T) {
	root := t.TempDir()
	page := []byte("<!doctype html><title>home</title><p>" + strings.Repeat("words and more words ", 100) + "\n")
	if err := os.WriteFile(filepath.Join(root, "index.html"), page, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "robots.txt"), []byte(nginxtest.RobotsTxt), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := nginxtest.Start(t,
		nginxtest.Site{Name: "plain.test", Addr: "127.0.0.1:0", Root: root},
		nginxtest.Site{Name: "faulty.test", Addr: "127.0.0.1:0", Root: root,
			Directives: []string{"etag off", "if_modified_since off"},
			Locations: []nginxtest.Location{
				{Match: "= /robots.txt", Directives: []string{"return 503"}},
				{Match: "= /ssi.html", Directives: []string{"ssi on", "try_files /index.html =404"}},
				{Match: "= /page.txt", Directives: []string{"types { }", "default_type text/html", "try_files /index.html =404"}},
			},
			NotFound: "/index.html"})
	client := newClient(nil)
	get := func(base, path string, hdr http.Header) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest("GET", base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range hdr {
			req.Header[k] = v
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, b
	}

	plain, faulty := srv.URL("plain.test"), srv.URL("faulty.test")
	resp, _ := get(plain, "/", nil)
	lm := resp.Header.Get("Last-Modified")
	if resp.Header.Get("ETag") == "" || lm == "" {
		t.Fatalf("plain site: ETag %q, Last-Modified %q; want both", resp.Header.Get("ETag"), lm)
	}
	if r, _ := get(plain, "/", http.Header{"If-Modified-Since": {lm}}); r.StatusCode != http.StatusNotModified {
		t.Errorf("plain site: If-Modified-Since → %d, want 304", r.StatusCode)
	}
	if r, _ := get(plain, "/robots.txt", nil); r.StatusCode != http.StatusOK {
		t.Errorf("plain site: robots.txt → %d, want 200", r.StatusCode)
	}
	if r, _ := get(plain, "/missing", nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("plain site: /missing → %d, want 404", r.StatusCode)
	}

	resp, _ = get(faulty, "/", nil)
	if resp.Header.Get("ETag") != "" || resp.Header.Get("Last-Modified") == "" {
		t.Errorf("etag off: ETag %q, Last-Modified %q; want only Last-Modified", resp.Header.Get("ETag"), resp.Header.Get("Last-Modified"))
	}
	if r, b := get(faulty, "/", http.Header{"If-Modified-Since": {resp.Header.Get("Last-Modified")}}); r.StatusCode != http.StatusOK || !bytes.Equal(b, page) {
		t.Errorf("if_modified_since off: If-Modified-Since → %d with %d bytes, want 200 and the page", r.StatusCode, len(b))
	}
	if r, _ := get(faulty, "/robots.txt", nil); r.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("location = /robots.txt { return 503; }: %d, want 503", r.StatusCode)
	}
	if r, _ := get(faulty, "/ssi.html", nil); r.StatusCode != http.StatusOK || r.Header.Get("ETag") != "" || r.Header.Get("Last-Modified") != "" {
		t.Errorf("ssi on: %d, ETag %q, Last-Modified %q; want 200 without validators", r.StatusCode, r.Header.Get("ETag"), r.Header.Get("Last-Modified"))
	}
	if r, b := get(faulty, "/page.txt", nil); r.StatusCode != http.StatusOK || r.Header.Get("Content-Type") != "text/html; charset=utf-8" || !bytes.Equal(b, page) {
		t.Errorf("a location with types { }: /page.txt → %d, %q, %d bytes; want 200, the home page as text/html", r.StatusCode, r.Header.Get("Content-Type"), len(b))
	}
	if r, b := get(faulty, "/no/such/page", nil); r.StatusCode != http.StatusOK || !bytes.Equal(b, page) {
		t.Errorf("NotFound /index.html: /no/such/page → %d with %d bytes, want 200 and the home page", r.StatusCode, len(b))
	}

	for _, bad := range []nginxtest.Site{
		{Name: "a.test", Addr: "127.0.0.1:0", Root: root, Directives: []string{"etag off;\nuser nobody"}},
		{Name: "a.test", Addr: "127.0.0.1:0", Root: root, Locations: []nginxtest.Location{{Directives: []string{"return 503"}}}},
		{Name: "a.test", Addr: "127.0.0.1:0", Root: root, NotFound: "index.html"},
	} {
		if _, err := nginxtest.Launch(t.Context(), t.TempDir(), bad); err == nil {
			t.Errorf("Launch accepted %+v", bad)
		}
	}
}
