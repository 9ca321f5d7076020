package simweb

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func newWeb(t testing.TB, cfg Config) *Web {
	t.Helper()
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// do sends one request straight to the handler.
func do(w http.Handler, method, target string, hdr ...string) *http.Response {
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Add(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	w.ServeHTTP(rec, r)
	return rec.Result()
}

func body(t testing.TB, resp *http.Response) []byte {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHostLabel(t *testing.T) {
	for _, tc := range []struct {
		i    int
		want string
	}{{0, "a"}, {1, "b"}, {25, "z"}, {26, "aa"}, {27, "ab"}, {51, "az"}, {52, "ba"}, {701, "zz"}, {702, "aaa"}, {9999, "ntp"}} {
		if got := hostLabel(tc.i); got != tc.want {
			t.Errorf("hostLabel(%d) = %q, want %q", tc.i, got, tc.want)
		}
	}
}

func TestRelativeRef(t *testing.T) {
	for _, tc := range []struct{ base, path string }{
		{"/", "/"},
		{"/", "/list?page=3"},
		{"/articles/", "/"},
		{"/articles/", "/articles/3-x.html"},
		{"/articles/", "/list?page=3"},
		{"/blog/2020/01/5-x/", "/blog/2020/01/5-x/"},
		{"/blog/2020/01/5-x/", "/blog/2021/02/6-y/"},
		{"/blog/2020/01/5-x/", "/products/7"},
		{"/products/", "/blog/2020/01/5-x/"},
		{"/private/open/", "/private/3-a.html"},
		{"/docs/", "/docs/"},
	} {
		ref := relativeRef(tc.base, tc.path)
		if strings.HasPrefix(ref, "/") || strings.Contains(ref, "//") {
			t.Errorf("relativeRef(%q, %q) = %q is not relative", tc.base, tc.path, ref)
		}
		for _, doc := range []string{"http://a.test" + tc.base, "http://a.test" + tc.base + "page.html?x=1"} {
			got := resolve(t, doc, ref)
			if want := "http://a.test" + tc.path; got != want {
				t.Errorf("relativeRef(%q, %q) = %q resolves against %s to %s, want %s", tc.base, tc.path, ref, doc, got, want)
			}
		}
	}
}

func resolve(t testing.TB, base, ref string) string {
	t.Helper()
	b, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	r, err := url.Parse(ref)
	if err != nil {
		t.Fatal(err)
	}
	return b.ResolveReference(r).String()
}

// extractLinks is an independent link extractor for the tests: it walks
// the token stream of x/net/html, honours the first <base href>, resolves
// <a href> and <area href> with net/url and canonicalizes the result.
func extractLinks(t testing.TB, docURL string, doc []byte) []string {
	t.Helper()
	base, err := url.Parse(docURL)
	if err != nil {
		t.Fatal(err)
	}
	var links []string
	seen := map[string]bool{}
	baseSet := false
	z := html.NewTokenizer(bytes.NewReader(doc))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if z.Err() != io.EOF {
				t.Fatal(z.Err())
			}
			return links
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		href, ok := "", false
		for _, a := range tok.Attr {
			if a.Key == "href" {
				href, ok = a.Val, true
				break
			}
		}
		if !ok {
			continue
		}
		switch tok.Data {
		case "base":
			if !baseSet {
				baseSet = true
				if u, err := url.Parse(href); err == nil {
					base = base.ResolveReference(u)
				}
			}
		case "a", "area":
			u, err := url.Parse(href)
			if err != nil {
				continue
			}
			u = base.ResolveReference(u)
			if u.Scheme != "http" && u.Scheme != "https" {
				continue
			}
			u.Fragment, u.RawFragment = "", ""
			u.Host = strings.ToLower(u.Host)
			if u.Scheme == "http" {
				u.Host = strings.TrimSuffix(u.Host, ":80")
			} else {
				u.Host = strings.TrimSuffix(u.Host, ":443")
			}
			if s := u.String(); !seen[s] {
				seen[s] = true
				links = append(links, s)
			}
		}
	}
}

func TestLinksGroundTruth(t *testing.T) {
	w := newWeb(t, Config{Seed: 7, Hosts: 30, PagesPerHost: 40})
	var bases, areas, rel, upper, outside, mailto int
	for _, h := range w.Hosts()[:9] {
		for _, res := range h.Resources() {
			resp := do(w, "GET", h.URL(res.Path))
			b := body(t, resp)
			if resp.StatusCode != 200 || len(b) != res.Size {
				t.Fatalf("%s%s: status %d, %d bytes; want 200, %d bytes", h.Name, res.Path, resp.StatusCode, len(b), res.Size)
			}
			if got := resp.Header.Get("Content-Type"); got != res.ContentType {
				t.Errorf("%s%s: Content-Type %q, want %q", h.Name, res.Path, got, res.ContentType)
			}
			if !strings.HasPrefix(res.ContentType, "text/html") {
				if res.Links != nil {
					t.Errorf("%s%s: non-HTML resource has links", h.Name, res.Path)
				}
				continue
			}
			got := extractLinks(t, h.URL(res.Path), b)
			if fmt.Sprint(got) != fmt.Sprint(res.Links) {
				t.Fatalf("%s%s: links\n got %v\nwant %v", h.Name, res.Path, got, res.Links)
			}
			s := string(b)
			bases += strings.Count(s, "<base href")
			areas += strings.Count(s, "<area ")
			rel += strings.Count(s, `href="../`)
			upper += strings.Count(s, `href="HTTP://`)
			outside += strings.Count(s, outsideURL)
			mailto += strings.Count(s, `href="mailto:`)
		}
	}
	// The variety the extractor is meant to face is really there.
	for name, n := range map[string]int{"base": bases, "area": areas, "../": rel, "HTTP://": upper, "outside": outside, "mailto": mailto} {
		if n == 0 {
			t.Errorf("no %s links generated", name)
		}
	}
}

func TestReachableFromRoot(t *testing.T) {
	w := newWeb(t, Config{Seed: 3, Hosts: 12, PagesPerHost: 25})
	for _, h := range w.Hosts() {
		all := h.Resources()
		byURL := map[string]Resource{}
		for _, r := range all {
			byURL[h.URL(r.Path)] = r
		}
		seen := map[string]bool{h.URL("/"): true}
		queue := []string{h.URL("/")}
		for len(queue) > 0 {
			u := queue[0]
			queue = queue[1:]
			for _, l := range byURL[u].Links {
				if _, ours := byURL[l]; ours && !seen[l] {
					seen[l] = true
					queue = append(queue, l)
				}
			}
		}
		if len(seen) != len(all) {
			t.Errorf("%s: %d of %d resources reachable from /", h.Name, len(seen), len(all))
		}
	}
}

func TestCrossHostLinksStayInWeb(t *testing.T) {
	w := newWeb(t, Config{Hosts: 8})
	cross := 0
	for _, h := range w.Hosts() {
		for _, r := range h.Resources() {
			for _, l := range r.Links {
				u, _ := url.Parse(l)
				if u.Host == h.Name || l == outsideURL {
					continue
				}
				other := w.Host(u.Host)
				if other == nil {
					t.Fatalf("%s%s links to %s, not in the web", h.Name, r.Path, l)
				}
				if _, ok := other.Resource(u.RequestURI()); !ok {
					t.Fatalf("%s%s links to missing %s", h.Name, r.Path, l)
				}
				cross++
			}
		}
	}
	if cross == 0 {
		t.Error("no cross-host links")
	}
}

func TestSizesAndCounts(t *testing.T) {
	for _, p := range []int{1, 2, 7, 30, 100} {
		w := newWeb(t, Config{PagesPerHost: p, Hosts: 5})
		for _, h := range w.Hosts() {
			pages, files := 0, 0
			for _, r := range h.Resources() {
				if strings.HasPrefix(r.ContentType, "text/html") {
					pages++
					if r.Size < 5*1024 || r.Size > 60*1024 {
						t.Errorf("P=%d %s%s: page size %d", p, h.Name, r.Path, r.Size)
					}
				} else {
					files++
					if r.Size < 1024 || r.Size > 80*1024 {
						t.Errorf("P=%d %s%s: file size %d", p, h.Name, r.Path, r.Size)
					}
				}
				if r.LastModified.IsZero() || !r.LastModified.Equal(r.LastModified.Truncate(1e9)) {
					t.Errorf("%s%s: LastModified %v", h.Name, r.Path, r.LastModified)
				}
				if !strings.HasPrefix(strings.TrimPrefix(r.ETag, "W/"), `"`) || !strings.HasSuffix(r.ETag, `"`) {
					t.Errorf("%s%s: ETag %s not quoted", h.Name, r.Path, r.ETag)
				}
			}
			if pages < max(1, p/2) || pages > max(1, 3*p/2) {
				t.Errorf("P=%d %s: %d pages", p, h.Name, pages)
			}
			if files < 1 || files > pages {
				t.Errorf("P=%d %s: %d files for %d pages", p, h.Name, files, pages)
			}
		}
	}
}

func TestPathVariety(t *testing.T) {
	w := newWeb(t, Config{Seed: 11, Hosts: 3, PagesPerHost: 60})
	want := []string{"/articles/", "/products/", "/blog/", "/list?page=", "/private/", "/private/open/", "/search?q=", "/nogc/", "/img/", "/docs/", "/files/"}
	found := map[string]bool{}
	for _, h := range w.Hosts() {
		for _, r := range h.Resources() {
			for _, p := range want {
				if strings.HasPrefix(r.Path, p) {
					found[p] = true
				}
			}
		}
	}
	for _, p := range want {
		if !found[p] {
			t.Errorf("no path starting with %s", p)
		}
	}
}

// fingerprint fetches every resource of the first hosts, gzipped and not.
func fingerprint(t *testing.T, w *Web, hosts int) []byte {
	var all bytes.Buffer
	for _, h := range w.Hosts()[:hosts] {
		for _, r := range h.Resources() {
			for _, ae := range []string{"", "gzip"} {
				resp := do(w, "GET", h.URL(r.Path), "Accept-Encoding", ae)
				fmt.Fprintf(&all, "%s %d %s %s %s\n", h.URL(r.Path), resp.StatusCode, resp.Header.Get("ETag"), resp.Header.Get("Last-Modified"), resp.Header.Get("Content-Length"))
				all.Write(body(t, resp))
			}
		}
		all.Write(body(t, do(w, "GET", h.URL("/robots.txt"))))
	}
	return all.Bytes()
}

func TestDeterminism(t *testing.T) {
	a := fingerprint(t, newWeb(t, Config{Seed: 42, Hosts: 4, PagesPerHost: 12}), 3)
	b := fingerprint(t, newWeb(t, Config{Seed: 42, Hosts: 4, PagesPerHost: 12}), 3)
	if !bytes.Equal(a, b) {
		t.Error("same seed served different bytes")
	}
	c := fingerprint(t, newWeb(t, Config{Seed: 43, Hosts: 4, PagesPerHost: 12}), 3)
	if bytes.Equal(a, c) {
		t.Error("different seeds served the same bytes")
	}
	// A host's graph does not depend on the number of other hosts, nor on
	// which hosts were visited first.
	w := newWeb(t, Config{Seed: 42, Hosts: 4})
	w.Hosts()[3].Resources()
	if d := fingerprint(t, w, 1); !bytes.Equal(d, fingerprint(t, newWeb(t, Config{Seed: 42, Hosts: 4}), 1)) {
		t.Error("visit order changed the bytes")
	}
}

func TestManyHostsLazy(t *testing.T) {
	w := newWeb(t, Config{Hosts: MaxHosts})
	hs := w.Hosts()
	if len(hs) != MaxHosts || hs[MaxHosts-1].Name != "ntp.test" {
		t.Fatalf("%d hosts, last %s", len(hs), hs[len(hs)-1].Name)
	}
	for _, h := range []*Host{hs[0], hs[5000], hs[9999]} {
		if resp := do(w, "GET", h.URL("/")); resp.StatusCode != 200 {
			t.Errorf("%s: status %d", h.Name, resp.StatusCode)
		}
	}
	built := 0
	for _, h := range hs {
		if h.grph != nil {
			built++
		}
	}
	if built != 0 {
		t.Errorf("%d full graphs built by serving three home pages, want 0", built)
	}
	skels := 0
	for _, h := range hs {
		if h.skel != nil {
			skels++
		}
	}
	if skels > 3*(1+3*45) {
		t.Errorf("%d skeletons built, want only those of visited and linked hosts", skels)
	}
}
