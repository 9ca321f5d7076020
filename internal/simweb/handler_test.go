package simweb

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// pickResource returns a resource of h whose ETag is weak (or strong).
func pickResource(t *testing.T, h *Host, weak bool) Resource {
	t.Helper()
	for _, r := range h.Resources() {
		if (r.ETag[0] == 'W') == weak {
			return r
		}
	}
	t.Fatalf("%s has no resource with weak=%v", h.Name, weak)
	return Resource{}
}

func TestConditionalGet(t *testing.T) {
	w := newWeb(t, Config{Hosts: 2, PagesPerHost: 40})
	h := w.Hosts()[0]
	strong, weak := pickResource(t, h, false), pickResource(t, h, true)
	lm := strong.LastModified
	date := func(t time.Time) string { return t.UTC().Format(http.TimeFormat) }
	opaque := weak.ETag[2:]
	for _, tc := range []struct {
		name string
		res  Resource
		hdr  []string
		want int
	}{
		{"none", strong, nil, 200},
		{"etag", strong, []string{"If-None-Match", strong.ETag}, 304},
		{"etag other", strong, []string{"If-None-Match", `"nope"`}, 200},
		{"etag list", strong, []string{"If-None-Match", `"a", ` + strong.ETag + `, "b"`}, 304},
		{"etag list with comma inside", strong, []string{"If-None-Match", `"a,b",` + strong.ETag}, 304},
		{"etag two headers", strong, []string{"If-None-Match", `"a"`, "If-None-Match", strong.ETag}, 304},
		{"star", strong, []string{"If-None-Match", "*"}, 304},
		{"weak vs strong", strong, []string{"If-None-Match", "W/" + strong.ETag}, 304},
		{"weak exact", weak, []string{"If-None-Match", weak.ETag}, 304},
		{"weak vs opaque", weak, []string{"If-None-Match", opaque}, 304},
		{"malformed", strong, []string{"If-None-Match", "abc"}, 200},
		{"truncated weak", strong, []string{"If-None-Match", `"x", W/`}, 200},
		{"unterminated", strong, []string{"If-None-Match", `"abc`}, 200},
		{"ims equal", strong, []string{"If-Modified-Since", date(lm)}, 304},
		{"ims newer", strong, []string{"If-Modified-Since", date(lm.Add(time.Hour))}, 304},
		{"ims older", strong, []string{"If-Modified-Since", date(lm.Add(-time.Second))}, 200},
		{"ims rfc850", strong, []string{"If-Modified-Since", lm.UTC().Format(time.RFC850)}, 304},
		{"ims invalid", strong, []string{"If-Modified-Since", "yesterday"}, 200},
		{"inm wins over ims (no match)", strong, []string{"If-None-Match", `"x"`, "If-Modified-Since", date(lm)}, 200},
		{"inm wins over ims (match)", strong, []string{"If-None-Match", strong.ETag, "If-Modified-Since", date(lm.Add(-time.Hour))}, 304},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := do(w, "GET", h.URL(tc.res.Path), tc.hdr...)
			b := body(t, resp)
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if got := resp.Header.Get("ETag"); got != tc.res.ETag {
				t.Errorf("ETag %s, want %s", got, tc.res.ETag)
			}
			if got := resp.Header.Get("Last-Modified"); got != date(tc.res.LastModified) {
				t.Errorf("Last-Modified %s, want %s", got, date(tc.res.LastModified))
			}
			if tc.want == 304 && len(b) != 0 {
				t.Errorf("304 with %d body bytes", len(b))
			}
		})
	}
}

func TestGzip(t *testing.T) {
	w := newWeb(t, Config{Hosts: 1})
	h := w.Hosts()[0]
	var page, file Resource
	for _, r := range h.Resources() {
		if r.ContentType == kindInfo[kindPage].contentType {
			page = r
		} else {
			file = r
		}
	}
	for _, tc := range []struct {
		ae   string
		gzip bool
	}{
		{"", false},
		{"gzip", true},
		{"GZIP", true},
		{"x-gzip", true},
		{"br, gzip;q=0.5, deflate", true},
		{"gzip;q=0", false},
		{"gzip; q=0.000", false},
		{"*", true},
		{"*;q=0", false},
		{"gzip;q=0, *", false},
		{"identity", false},
		{"deflate, br", false},
		{"gzip;q=1.0", true},
		{"gzip;q=bogus", false},
	} {
		resp := do(w, "GET", h.URL(page.Path), "Accept-Encoding", tc.ae)
		b := body(t, resp)
		if got := resp.Header.Get("Vary"); got != "Accept-Encoding" {
			t.Errorf("%q: Vary %q", tc.ae, got)
		}
		if cl, _ := strconv.Atoi(resp.Header.Get("Content-Length")); cl != len(b) {
			t.Errorf("%q: Content-Length %d, body %d", tc.ae, cl, len(b))
		}
		gz := resp.Header.Get("Content-Encoding") == "gzip"
		if gz != tc.gzip {
			t.Errorf("Accept-Encoding %q: gzip %v, want %v", tc.ae, gz, tc.gzip)
			continue
		}
		if gz {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if b, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		if len(b) != page.Size {
			t.Errorf("%q: %d bytes decoded, want %d", tc.ae, len(b), page.Size)
		}
	}
	// Binary bodies are never compressed.
	resp := do(w, "GET", h.URL(file.Path), "Accept-Encoding", "gzip")
	if b := body(t, resp); resp.Header.Get("Content-Encoding") != "" || len(b) != file.Size {
		t.Errorf("file: Content-Encoding %q, %d bytes", resp.Header.Get("Content-Encoding"), len(b))
	}
}

func TestHead(t *testing.T) {
	w := newWeb(t, Config{Hosts: 1})
	h := w.Hosts()[0]
	get := do(w, "GET", h.URL("/"), "Accept-Encoding", "gzip")
	head := do(w, "HEAD", h.URL("/"), "Accept-Encoding", "gzip")
	if b := body(t, head); len(b) != 0 || head.StatusCode != 200 {
		t.Errorf("HEAD: status %d, %d body bytes", head.StatusCode, len(b))
	}
	if g, hd := get.Header.Get("Content-Length"), head.Header.Get("Content-Length"); g != hd || g == "" {
		t.Errorf("Content-Length GET %s, HEAD %s", g, hd)
	}
}

func TestStatuses(t *testing.T) {
	w := newWeb(t, Config{Hosts: 3})
	for _, tc := range []struct {
		method, url string
		want        int
	}{
		{"GET", "http://a.test/", 200},
		{"GET", "http://A.TEST:8080/", 200},
		{"GET", "http://a.test./", 200},
		{"GET", "http://zz.test/", 404},
		{"GET", "http://outside.example/", 404},
		{"GET", "http://a.test/no/such/page.html", 404},
		{"GET", "http://a.test/list?page=999999", 404},
		{"POST", "http://a.test/", 405},
		{"PUT", "http://a.test/robots.txt", 405},
		{"DELETE", "http://a.test/nothing", 405},
		{"GET", "http://a.test/robots-moved.txt", 404}, // a.test is not a redirect host
	} {
		resp := do(w, tc.method, tc.url)
		b := body(t, resp)
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s: status %d, want %d", tc.method, tc.url, resp.StatusCode, tc.want)
		}
		if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(b)) {
			t.Errorf("%s %s: Content-Length %q, body %d", tc.method, tc.url, cl, len(b))
		}
		if tc.want == 405 && resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s %s: Allow %q", tc.method, tc.url, resp.Header.Get("Allow"))
		}
	}
	if n := len(w.Requests()); n != 11 {
		t.Errorf("%d requests logged, want 11 (unknown hosts too)", n)
	}
}

func TestRobotsProfiles(t *testing.T) {
	profiles := []Profile{ProfileAllow, ProfileDisallow, ProfileCrawlDelay, ProfileNotFound, ProfileError, ProfileHTML, ProfileRedirect, ProfileAgent}
	w := newWeb(t, Config{Hosts: len(profiles), Profiles: profiles, CrawlDelay: 1500 * time.Millisecond})
	for i, tc := range []struct {
		status   int
		ctype    string
		body     string
		location string
	}{
		{200, "text/plain; charset=utf-8", "User-agent: *\nDisallow:\n", ""},
		{200, "text/plain; charset=utf-8", "User-agent: *\nDisallow: /private/\nAllow: /private/open/\nDisallow: /search\n", ""},
		{200, "text/plain; charset=utf-8", "User-agent: *\nCrawl-delay: 1.5\nDisallow: /private/\n", ""},
		{404, "text/plain; charset=utf-8", "", ""},
		{500, "text/plain; charset=utf-8", "", ""},
		{200, "text/html; charset=utf-8", "", ""},
		{301, "text/html; charset=utf-8", "", "/robots-moved.txt"},
		{200, "text/plain; charset=utf-8", "User-agent: gentlecrawl\nDisallow: /nogc/\n\nUser-agent: *\nDisallow: /\n", ""},
	} {
		h := w.Hosts()[i]
		if h.Profile != profiles[i] {
			t.Fatalf("host %d profile %s, want %s", i, h.Profile, profiles[i])
		}
		resp := do(w, "GET", h.URL("/robots.txt"))
		b := string(body(t, resp))
		if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != tc.ctype || resp.Header.Get("Location") != tc.location {
			t.Errorf("%s: %d %q Location %q", h.Profile, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Location"))
		}
		if tc.body != "" && b != tc.body {
			t.Errorf("%s: body %q, want %q", h.Profile, b, tc.body)
		}
		if h.Profile == ProfileHTML && (!bytes.Contains([]byte(b), []byte("<html>")) || bytes.Contains([]byte(b), []byte("llow:"))) {
			t.Errorf("html profile body %q", b)
		}
		if h.Profile == ProfileRedirect {
			resp := do(w, "GET", h.URL("/robots-moved.txt"))
			if b := string(body(t, resp)); resp.StatusCode != 200 || b != disallowRules {
				t.Errorf("robots-moved.txt: %d %q", resp.StatusCode, b)
			}
		}
	}
}

func TestAllowed(t *testing.T) {
	profiles := []Profile{ProfileAllow, ProfileDisallow, ProfileCrawlDelay, ProfileNotFound, ProfileError, ProfileHTML, ProfileRedirect, ProfileAgent}
	w := newWeb(t, Config{Hosts: len(profiles), Profiles: profiles})
	paths := []string{"/", "/robots.txt", "/private/1-x.html", "/private/open/2-y.html", "/private/open", "/search?q=a", "/searchable", "/nogc/3.html", "/articles/1-a.html", "/robots-moved.txt"}
	const Y, N = true, false
	want := map[Profile][]bool{
		ProfileAllow:      {Y, Y, Y, Y, Y, Y, Y, Y, Y, Y},
		ProfileDisallow:   {Y, Y, N, Y, N, N, N, Y, Y, Y},
		ProfileCrawlDelay: {Y, Y, N, N, N, Y, Y, Y, Y, Y},
		ProfileNotFound:   {Y, Y, Y, Y, Y, Y, Y, Y, Y, Y},
		ProfileError:      {N, Y, N, N, N, N, N, N, N, N},
		ProfileHTML:       {Y, Y, Y, Y, Y, Y, Y, Y, Y, Y},
		ProfileRedirect:   {Y, Y, N, Y, N, N, N, Y, Y, Y},
		ProfileAgent:      {Y, Y, Y, Y, Y, Y, Y, N, Y, Y},
	}
	for _, h := range w.Hosts() {
		for j, p := range paths {
			if got := w.Allowed(h.Name, p, "GentleCrawl/0.1 (+https://example.org/bot)"); got != want[h.Profile][j] {
				t.Errorf("%s Allowed(%s) = %v, want %v", h.Profile, p, got, want[h.Profile][j])
			}
		}
	}
	agentHost := w.Hosts()[7].Name
	if w.Allowed(agentHost, "/", "otherbot") || !w.Allowed(agentHost, "/robots.txt", "otherbot") {
		t.Error("agent profile: other agents must be disallowed everything but robots.txt")
	}
	if !w.Allowed(agentHost, "/", "gentlecrawl") {
		t.Error("agent profile: bare token not matched")
	}
	if w.Allowed("nope.test", "/", "gentlecrawl") {
		t.Error("unknown host allowed")
	}
	// Every host really has pages at the disallowed paths.
	for _, p := range []string{"/private/", "/private/open/", "/search?q=", "/nogc/"} {
		found := false
		for _, r := range w.Hosts()[1].Resources() {
			if len(r.Path) >= len(p) && r.Path[:len(p)] == p {
				found = true
			}
		}
		if !found {
			t.Errorf("no page under %s", p)
		}
	}
}

func TestDefaultProfiles(t *testing.T) {
	w := newWeb(t, Config{})
	seen := map[Profile]int{}
	for _, h := range w.Hosts() {
		seen[h.Profile]++
	}
	if len(seen) != len(knownProfiles) {
		t.Errorf("20 hosts show %d profiles, want %d", len(seen), len(knownProfiles))
	}
	if crawlable := 20 - seen[ProfileError]; crawlable < 15 {
		t.Errorf("only %d crawlable hosts", crawlable)
	}
}

func TestLatencyHonoursCancel(t *testing.T) {
	w := newWeb(t, Config{Hosts: 1, Latency: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	r := httptest.NewRequest("GET", "http://a.test/", nil).WithContext(ctx)
	done := make(chan struct{})
	go func() {
		w.ServeHTTP(httptest.NewRecorder(), r)
		close(done)
	}()
	cancel()
	<-done
	if log := w.Requests(); len(log) != 1 || log[0].Status != 0 {
		t.Errorf("log %+v, want one entry with status 0", log)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{Hosts: -1},
		{Hosts: MaxHosts + 1},
		{PagesPerHost: -3},
		{PagesPerHost: MaxPagesPerHost + 1},
		{Profiles: []Profile{"sometimes"}},
		{CrawlDelay: -time.Second},
		{Latency: -time.Millisecond},
		{Domain: "bad domain"},
		{Domain: "-x.test"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		} else if s := err.Error(); len(s) < 8 || s[:8] != "simweb: " {
			t.Errorf("error %q lacks the simweb: prefix", s)
		}
	}
	w, err := New(Config{Domain: "Example.ORG.", Hosts: 1})
	if err != nil || w.Hosts()[0].Name != "a.example.org" {
		t.Errorf("Domain normalization: %v %v", err, w)
	}
}
