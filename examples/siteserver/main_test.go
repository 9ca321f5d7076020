package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/xml"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/robots"
)

// The test is a politeness checker's visit: it crawls the site from its
// home page and its sitemap and checks what a crawler hopes for.

const testUA = "Mozilla/5.0 (compatible; checker/1.0; +https://example.org/checker)"

type response struct {
	*http.Response
	body []byte // as received: gzipped if Content-Encoding says so
}

// fetch makes a request with no automatic decompression, so the test sees
// the bytes on the wire.
func fetch(t *testing.T, method, url string, header ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", testUA)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp, body}
}

// text returns the body, decompressed.
func (r response) text(t *testing.T) string {
	t.Helper()
	if r.Header.Get("Content-Encoding") != "gzip" {
		return string(r.body)
	}
	zr, err := gzip.NewReader(bytes.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var hrefRE = regexp.MustCompile(`href="([^"]*)"`)

// crawl returns the site's HTML pages, reached by links from the home
// page, and checks each link on the way.
func crawl(t *testing.T, base string) []string {
	t.Helper()
	seen := map[string]bool{"/": true}
	queue := []string{"/"}
	var pages []string
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		r := fetch(t, "GET", base+path)
		if r.StatusCode != 200 {
			t.Errorf("GET %s: %d, want 200 (a link led here)", path, r.StatusCode)
			continue
		}
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
			continue
		}
		pages = append(pages, path)
		for _, m := range hrefRE.FindAllStringSubmatch(r.text(t), -1) {
			link := strings.TrimPrefix(m[1], base)
			if strings.HasPrefix(link, "http") {
				t.Errorf("%s links off the site: %s", path, link)
				continue
			}
			if strings.ContainsAny(link, "?;#") || regexp.MustCompile(`(?i)sess|sid=|token`).MatchString(link) {
				t.Errorf("%s: link %q carries parameters or a session id", path, link)
			}
			if !seen[link] {
				seen[link] = true
				queue = append(queue, link)
			}
		}
	}
	return pages
}

func newTestServer(t *testing.T) (*httptest.Server, *store) {
	st := newStore()
	srv := httptest.NewServer(newHandler(st, nil))
	t.Cleanup(srv.Close)
	return srv, st
}

func TestPages(t *testing.T) {
	srv, _ := newTestServer(t)
	pages := crawl(t, srv.URL)
	for _, want := range []string{"/", "/about", "/posts/gzip", "/tags/http"} {
		if !slices.Contains(pages, want) {
			t.Errorf("the crawl did not reach %s: %v", want, pages)
		}
	}
	if len(pages) < 8 {
		t.Errorf("the crawl found %d pages: %v", len(pages), pages)
	}
	for _, path := range pages {
		r := fetch(t, "GET", srv.URL+path)
		etag, lm := r.Header.Get("ETag"), r.Header.Get("Last-Modified")
		if etag == "" || lm == "" {
			t.Errorf("%s: ETag %q, Last-Modified %q: want both", path, etag, lm)
			continue
		}
		if _, err := http.ParseTime(lm); err != nil {
			t.Errorf("%s: Last-Modified %q: %v", path, lm, err)
		}
		if !strings.Contains(r.text(t), `<link rel="canonical" href="`+srv.URL+path+`">`) {
			t.Errorf("%s: no canonical link to itself", path)
		}
		// The validators are honoured, together and alone, for GET and
		// HEAD.
		for _, c := range []struct {
			method string
			header []string
		}{
			{"GET", []string{"If-None-Match", etag}},
			{"GET", []string{"If-Modified-Since", lm}},
			{"GET", []string{"If-None-Match", etag, "If-Modified-Since", lm}},
			{"GET", []string{"If-None-Match", etag, "Accept-Encoding", "gzip"}},
			{"HEAD", []string{"If-None-Match", etag}},
		} {
			r := fetch(t, c.method, srv.URL+path, c.header...)
			if r.StatusCode != 304 || len(r.body) != 0 {
				t.Errorf("%s %s %q: %d with %d bytes, want 304 and none", c.method, path, c.header, r.StatusCode, len(r.body))
			}
			if r.Header.Get("ETag") != etag || r.Header.Get("Vary") != "Accept-Encoding" || r.Header.Get("Cache-Control") == "" {
				t.Errorf("%s %s %q: 304 without the 200's ETag, Vary and Cache-Control: %v", c.method, path, c.header, r.Header)
			}
		}
		// Other validators get the page.
		if r := fetch(t, "GET", srv.URL+path, "If-None-Match", `W/"old"`); r.StatusCode != 200 {
			t.Errorf("GET %s with a stale ETag: %d, want 200", path, r.StatusCode)
		}
		if r := fetch(t, "GET", srv.URL+path, "If-Modified-Since", "Mon, 01 Jan 2024 00:00:00 GMT"); r.StatusCode != 200 {
			t.Errorf("GET %s modified since 2024: %d, want 200", path, r.StatusCode)
		}
	}
}

// After an edit, the old validators get the new page.
func TestEdit(t *testing.T) {
	srv, st := newTestServer(t)
	before := fetch(t, "GET", srv.URL+"/posts/gzip")
	home := fetch(t, "GET", srv.URL+"/")
	edited := time.Date(2025, 7, 1, 10, 0, 0, 0, time.UTC)
	st.edit("gzip", []string{"Brotli too, where clients ask for it."}, edited)
	for _, r := range []response{before, home} {
		path := r.Request.URL.Path
		after := fetch(t, "GET", srv.URL+path, "If-None-Match", r.Header.Get("ETag"), "If-Modified-Since", r.Header.Get("Last-Modified"))
		if after.StatusCode != 200 || after.Header.Get("ETag") == r.Header.Get("ETag") {
			t.Errorf("%s after the edit: %d, ETag %s", path, after.StatusCode, after.Header.Get("ETag"))
		}
		if got := after.Header.Get("Last-Modified"); got != edited.Format(http.TimeFormat) {
			t.Errorf("%s after the edit: Last-Modified %s", path, got)
		}
	}
	if r := fetch(t, "GET", srv.URL+"/posts/soft-404", "If-None-Match", fetch(t, "GET", srv.URL+"/posts/soft-404").Header.Get("ETag")); r.StatusCode != 304 {
		t.Errorf("a post that was not edited: %d, want 304", r.StatusCode)
	}
}

func TestGzip(t *testing.T) {
	srv, _ := newTestServer(t)
	for _, path := range []string{"/", "/posts/conditional-get", "/robots.txt", "/sitemap.xml", "/no-such-page"} {
		plain := fetch(t, "GET", srv.URL+path)
		for _, c := range []struct {
			accept string
			gzip   bool
		}{
			{"gzip", true},
			{"gzip, deflate, br", true},
			{"br;q=1.0, gzip;q=0.8", true},
			{"x-gzip", true},
			{"*", true},
			{"identity", false},
			{"gzip;q=0", false},
			{"*;q=0", false},
			{"br", false},
			{"*, gzip;q=0", false},
		} {
			r := fetch(t, "GET", srv.URL+path, "Accept-Encoding", c.accept)
			if got := r.Header.Get("Content-Encoding") == "gzip"; got != c.gzip {
				t.Errorf("%s with Accept-Encoding %q: gzipped %v, want %v", path, c.accept, got, c.gzip)
			}
			if r.Header.Get("Vary") != "Accept-Encoding" {
				t.Errorf("%s with Accept-Encoding %q: Vary %q", path, c.accept, r.Header.Get("Vary"))
			}
			if r.StatusCode != plain.StatusCode || r.text(t) != plain.text(t) {
				t.Errorf("%s with Accept-Encoding %q: a different answer than without", path, c.accept)
			}
		}
		if r := fetch(t, "GET", srv.URL+path, "Accept-Encoding", "gzip"); len(r.body) >= len(plain.body) && len(plain.body) > 200 {
			t.Errorf("%s: gzipped %d bytes, plain %d", path, len(r.body), len(plain.body))
		}
	}
}

func TestRobotsAndSitemap(t *testing.T) {
	srv, _ := newTestServer(t)
	r := fetch(t, "GET", srv.URL+"/robots.txt")
	if r.StatusCode != 200 || r.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("robots.txt: %d %q", r.StatusCode, r.Header.Get("Content-Type"))
	}
	rb := robots.Parse([]byte(r.text(t)))
	if got := rb.Sitemaps(); len(got) != 1 || got[0] != srv.URL+"/sitemap.xml" {
		t.Errorf("robots.txt Sitemap lines: %q", got)
	}
	g := rb.Group("checker")
	if !g.Allowed("/") || !g.Allowed("/posts/gzip") {
		t.Error("robots.txt disallows pages")
	}
	if d, ok := g.CrawlDelay(); !ok || d != time.Second {
		t.Errorf("Crawl-delay %v %v, want 1s", d, ok)
	}
	if r := fetch(t, "GET", srv.URL+"/robots.txt", "If-None-Match", r.Header.Get("ETag")); r.StatusCode != 304 {
		t.Errorf("robots.txt revisited: %d, want 304", r.StatusCode)
	}

	sm := fetch(t, "GET", srv.URL+"/sitemap.xml")
	if sm.StatusCode != 200 || !strings.HasPrefix(sm.Header.Get("Content-Type"), "application/xml") {
		t.Fatalf("sitemap.xml: %d %q", sm.StatusCode, sm.Header.Get("Content-Type"))
	}
	var urlset struct {
		XMLName xml.Name
		URLs    []struct {
			Loc     string `xml:"loc"`
			LastMod string `xml:"lastmod"`
		} `xml:"url"`
	}
	if err := xml.Unmarshal([]byte(sm.text(t)), &urlset); err != nil {
		t.Fatal(err)
	}
	if urlset.XMLName.Space != "http://www.sitemaps.org/schemas/sitemap/0.9" || urlset.XMLName.Local != "urlset" {
		t.Errorf("sitemap root %v", urlset.XMLName)
	}
	pages := crawl(t, srv.URL)
	var locs []string
	for _, u := range urlset.URLs {
		path := strings.TrimPrefix(u.Loc, srv.URL)
		locs = append(locs, path)
		lastmod, err := time.Parse(time.RFC3339, u.LastMod)
		if err != nil {
			t.Errorf("%s: lastmod %q: %v", u.Loc, u.LastMod, err)
			continue
		}
		// The sitemap and the page agree on when it last changed.
		r := fetch(t, "GET", u.Loc)
		if r.StatusCode != 200 || r.Header.Get("Last-Modified") != lastmod.Format(http.TimeFormat) {
			t.Errorf("%s: %d, Last-Modified %q, sitemap says %s", u.Loc, r.StatusCode, r.Header.Get("Last-Modified"), u.LastMod)
		}
	}
	slices.Sort(locs)
	slices.Sort(pages)
	if !slices.Equal(locs, pages) {
		t.Errorf("the sitemap lists %v, the links reach %v", locs, pages)
	}
}

func TestNotFound(t *testing.T) {
	srv, _ := newTestServer(t)
	for _, path := range []string{"/nope", "/posts/nope", "/posts/", "/tags/nope", "/about/", "/index.html", "/posts/gzip/extra", "/robots.txt/"} {
		r := fetch(t, "GET", srv.URL+path)
		if r.StatusCode != 404 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
			t.Errorf("GET %s: %d %q, want a 404 page", path, r.StatusCode, r.Header.Get("Content-Type"))
		}
		if r.Header.Get("ETag") != "" {
			t.Errorf("GET %s: a 404 with an ETag", path)
		}
		if r := fetch(t, "GET", srv.URL+path, "If-None-Match", "*"); r.StatusCode != 404 {
			t.Errorf("GET %s If-None-Match: *: %d, want 404", path, r.StatusCode)
		}
	}
	if r := fetch(t, "POST", srv.URL+"/about"); r.StatusCode != 405 || r.Header.Get("Allow") == "" {
		t.Errorf("POST /about: %d, Allow %q; want 405 with Allow", r.StatusCode, r.Header.Get("Allow"))
	}
}

// The first byte comes at once: nothing waits, nothing sleeps. The bound
// is loose enough to hold on a loaded machine under the race detector; a
// handler that slept or blocked would break it.
func TestTimeToFirstByte(t *testing.T) {
	srv, _ := newTestServer(t)
	paths := []string{"/", "/about", "/posts/gzip", "/tags/http", "/sitemap.xml", "/robots.txt"}
	client := srv.Client()
	var ttfb []time.Duration
	for i := range 60 {
		var start, first time.Time
		trace := &httptrace.ClientTrace{
			WroteRequest:         func(httptrace.WroteRequestInfo) { start = time.Now() },
			GotFirstResponseByte: func() { first = time.Now() },
		}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", srv.URL+paths[i%len(paths)], nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		ttfb = append(ttfb, first.Sub(start))
	}
	slices.Sort(ttfb)
	median := ttfb[len(ttfb)/2]
	t.Logf("time to first byte: median %v, max %v", median, ttfb[len(ttfb)-1])
	if median > time.Second {
		t.Errorf("median time to first byte %v", median)
	}
}

// Under load, crawlers are asked to come back later and people are
// served; robots.txt is served to all.
func TestLoadShedding(t *testing.T) {
	// A clock that moves 800 ms each time it is read: every answer seems
	// to take 800 ms, more than the 500 ms the site allows.
	var mu sync.Mutex
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	shedder := newShedder()
	shedder.Now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(800 * time.Millisecond)
		return now
	}
	srv := httptest.NewServer(newHandler(newStore(), shedder))
	defer srv.Close()
	const (
		person    = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
		googlebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	)
	for range 5 {
		if r := fetch(t, "GET", srv.URL+"/", "User-Agent", person); r.StatusCode != 200 {
			t.Fatalf("person: %d", r.StatusCode)
		}
	}
	for _, ua := range []string{googlebot, testUA} {
		r := fetch(t, "GET", srv.URL+"/posts/gzip", "User-Agent", ua)
		if r.StatusCode != 503 || r.Header.Get("Retry-After") == "" {
			t.Errorf("%s under load: %d, Retry-After %q; want 503 with one", ua, r.StatusCode, r.Header.Get("Retry-After"))
		}
		if r := fetch(t, "GET", srv.URL+"/robots.txt", "User-Agent", ua); r.StatusCode != 200 {
			t.Errorf("robots.txt for %s under load: %d, want 200", ua, r.StatusCode)
		}
	}
	if r := fetch(t, "GET", srv.URL+"/posts/gzip", "User-Agent", person); r.StatusCode != 200 {
		t.Errorf("person under load: %d, want 200", r.StatusCode)
	}
	if st := shedder.Stats(); st.Shed != 2 {
		t.Errorf("Stats %+v, want 2 shed", st)
	}
}

// TestRun starts the command as main does, on a port of its own, and stops
// it.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan net.Addr, 1)
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-addr", "127.0.0.1:0"}, &out, func(a net.Addr) { addrs <- a }) }()
	var addr net.Addr
	select {
	case addr = <-addrs:
	case err := <-done:
		t.Fatalf("run: %v", err)
	}
	base := "http://" + addr.String()
	if r := fetch(t, "GET", base+"/"); r.StatusCode != 200 || r.Header.Get("ETag") == "" {
		t.Errorf("GET /: %d", r.StatusCode)
	}
	if r := fetch(t, "GET", base+"/robots.txt"); !strings.Contains(r.text(t), "Sitemap: "+base+"/sitemap.xml") {
		t.Errorf("robots.txt: %q", r.text(t))
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run after cancel: %v", err)
	}
	if !strings.Contains(out.String(), "serving "+base+"/") {
		t.Errorf("run printed %q", out.String())
	}
	if err := run(context.Background(), []string{"-addr", "not-an-address"}, io.Discard, nil); err == nil {
		t.Error("run with a bad address: no error")
	}
	if err := run(context.Background(), []string{"extra"}, io.Discard, nil); err == nil {
		t.Error("run with an argument: no error")
	}
}
