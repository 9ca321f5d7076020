package simweb

import (
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// trapWeb returns a one-host web whose host has the given traps.
func trapWeb(t *testing.T, o HostOptions) (*Web, *Host) {
	t.Helper()
	w := newWeb(t, Config{Seed: 5, Hosts: 2, PagesPerHost: 20, Profiles: []Profile{ProfileAllow},
		HostOptions: func(i int, _ string) HostOptions {
			if i == 0 {
				return o
			}
			return HostOptions{}
		}})
	return w, w.Hosts()[0]
}

// fetch GETs u from w and returns the response and its body.
func fetch(t *testing.T, w *Web, u string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	resp := do(w, "GET", u, hdr...)
	return resp, body(t, resp)
}

// linkTo returns the first link of doc (at docURL) whose text is text.
func linkTo(t *testing.T, docURL string, doc []byte, text string) string {
	t.Helper()
	i := bytes.Index(doc, []byte(">"+text+"</a>"))
	if i < 0 {
		t.Fatalf("%s: no link %q in\n%s", docURL, text, doc)
	}
	j := bytes.LastIndex(doc[:i], []byte(`href="`))
	href := strings.ReplaceAll(string(doc[j+6:i-1]), "&amp;", "&")
	return resolve(t, docURL, href)
}

func TestSessionIDs(t *testing.T) {
	for _, name := range []string{"sid", "PHPSESSID", "jsessionid"} {
		t.Run(name, func(t *testing.T) {
			w, h := trapWeb(t, HostOptions{Traps: Traps{SessionIDs: name, Facets: true, Calendar: true}})
			marker := name + "="
			if name == "jsessionid" {
				marker = ";jsessionid="
			}
			urlsOf := map[string]map[string]bool{} // canonical page → URLs that lead to it
			for _, res := range h.Resources() {
				if !strings.HasPrefix(res.ContentType, "text/html") {
					continue
				}
				resp, b := fetch(t, w, h.URL(res.Path))
				if resp.StatusCode != 200 || len(b) != res.Size {
					t.Fatalf("%s: %d, %d bytes", res.Path, resp.StatusCode, len(b))
				}
				got := extractLinks(t, h.URL(res.Path), b)
				if !slices.Equal(got, res.Links) {
					t.Fatalf("%s: links\n got %v\nwant %v", res.Path, got, res.Links)
				}
				for _, l := range got {
					if !strings.HasPrefix(l, h.URL("/")) {
						continue
					}
					if !strings.Contains(l, marker) {
						t.Errorf("%s: link %s has no session id", res.Path, l)
					}
					if c, ok := h.PageOf(l); ok {
						if urlsOf[c] == nil {
							urlsOf[c] = map[string]bool{}
						}
						urlsOf[c][l] = true
					}
				}
			}
			many := 0
			for _, us := range urlsOf {
				if len(us) > 1 {
					many++
				}
			}
			if many < len(urlsOf)/2 {
				t.Errorf("only %d of %d pages are linked under more than one URL", many, len(urlsOf))
			}

			// The same page under many session ids: the same bytes and ETag.
			for c, us := range urlsOf {
				ref, refBody := fetch(t, w, c)
				for u := range us {
					resp, b := fetch(t, w, u)
					if resp.StatusCode != 200 || !bytes.Equal(b, refBody) || resp.Header.Get("ETag") != ref.Header.Get("ETag") {
						t.Fatalf("%s: status %d, ETag %s; differs from %s (ETag %s)", u, resp.StatusCode, resp.Header.Get("ETag"), c, ref.Header.Get("ETag"))
					}
					if resp := do(w, "GET", u, "If-None-Match", ref.Header.Get("ETag")); resp.StatusCode != 304 {
						t.Fatalf("%s with its ETag: %d", u, resp.StatusCode)
					}
				}
			}
			// A made-up id is served too.
			made := h.opts.Traps.withSession("/catalog?color=red", "0123abcd")
			if resp, _ := fetch(t, w, h.URL(made)); resp.StatusCode != 200 {
				t.Errorf("%s: %d", made, resp.StatusCode)
			}
			// The other host has none.
			other := w.Hosts()[1]
			for _, l := range other.Resources()[0].Links {
				if strings.Contains(l, marker) {
					t.Errorf("%s links %s", other.Name, l)
				}
			}
		})
	}
}

func TestStripSession(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"sid", "/a?sid=1", "/a"},
		{"sid", "/a?x=1&sid=2&y=3", "/a?x=1&y=3"},
		{"sid", "/a?sidx=1", "/a?sidx=1"},
		{"sid", "/a", "/a"},
		{"jsessionid", "/a;jsessionid=AB?x=1", "/a?x=1"},
		{"jsessionid", "/d/;jsessionid=AB", "/d/"},
		{"jsessionid", "/d;JSESSIONID=AB/e", "/d/e"},
		{"jsessionid", "/a;v=1", "/a;v=1"},
	} {
		tr := Traps{SessionIDs: tc.name}
		if got := tr.stripSession(tc.in); got != tc.want {
			t.Errorf("%s: stripSession(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
		if got := tr.stripSession(tr.withSession(tc.want, "ff")); got != tc.want {
			t.Errorf("%s: strip(with(%q)) = %q", tc.name, tc.want, got)
		}
	}
}

func TestCalendar(t *testing.T) {
	w, h := trapWeb(t, HostOptions{Traps: Traps{Calendar: true}})
	_, home := fetch(t, w, h.URL("/"))
	start := linkTo(t, h.URL("/"), home, "Events")
	_, first := fetch(t, w, start)
	if !bytes.Contains(first, []byte("June 2025")) {
		t.Fatalf("/calendar is not June 2025:\n%s", first)
	}
	for _, dir := range []string{"Next month »", "« Previous month"} {
		u, seen := start, map[string]bool{}
		for range 40 {
			resp, b := fetch(t, w, u)
			if resp.StatusCode != 200 {
				t.Fatalf("%s: %d", u, resp.StatusCode)
			}
			if d := len(b) - len(first); d < -200 || d > 200 {
				t.Errorf("%s: %d bytes, /calendar %d: not the same template", u, len(b), len(first))
			}
			seen[u] = true
			u = linkTo(t, u, b, dir)
		}
		if len(seen) != 40 {
			t.Errorf("%s: %d distinct months in 40 steps", dir, len(seen))
		}
	}
	// Beyond any bound.
	for _, tc := range []struct{ from, link, want string }{
		{"9999-12", "Next month »", "month=10000-01"},
		{"0000-01", "« Previous month", "month=-0001-12"},
		{"-0001-12", "Next month »", "month=0000-01"},
		{"123456789-05", "Next month »", "month=123456789-06"},
	} {
		u := h.URL("/calendar?month=" + tc.from)
		resp, b := fetch(t, w, u)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", u, resp.StatusCode)
		}
		if got := linkTo(t, u, b, tc.link); !strings.HasSuffix(got, tc.want) {
			t.Errorf("%s: %s is %s, want …%s", u, tc.link, got, tc.want)
		}
	}
	for _, bad := range []string{"month=2026-13", "month=2026-1", "month=02026-01", "month=x", "m=2026-01", "month=2026-01&x=1"} {
		if resp, _ := fetch(t, w, h.URL("/calendar?"+bad)); resp.StatusCode != 404 {
			t.Errorf("/calendar?%s: %d, want 404", bad, resp.StatusCode)
		}
	}
	if _, ok := h.PageOf(start); ok {
		t.Error("a calendar page counts as a real page")
	}
}

// crawlCatalog follows every catalog link from /catalog and returns the
// URLs found and their bodies.
func crawlCatalog(t *testing.T, w *Web, h *Host) map[string][]byte {
	t.Helper()
	found := map[string][]byte{}
	queue := []string{h.URL("/catalog")}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		if _, ok := found[u]; ok {
			continue
		}
		resp, b := fetch(t, w, u)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", u, resp.StatusCode)
		}
		found[u] = b
		for _, l := range extractLinks(t, u, b) {
			if strings.HasPrefix(l, h.URL("/catalog")) {
				queue = append(queue, l)
			}
		}
	}
	return found
}

func TestCatalog(t *testing.T) {
	w, h := trapWeb(t, HostOptions{Traps: Traps{Facets: true}})
	found := crawlCatalog(t, w, h)
	if n := len(catalogDistinct()); n != CatalogPages {
		t.Fatalf("catalogDistinct has %d pages, CatalogPages is %d", n, CatalogPages)
	}
	var want []string
	for _, q := range catalogDistinct() {
		want = append(want, h.URL(q.canonical()))
	}
	canon := map[string]bool{}
	orders := map[string]bool{}
	for u := range found {
		c, ok := h.PageOf(u)
		if !ok {
			t.Fatalf("PageOf(%s) failed", u)
		}
		canon[c] = true
		if i := strings.Index(u, "?"); i >= 0 {
			var names []string
			for _, kv := range strings.Split(u[i+1:], "&") {
				names = append(names, kv[:strings.IndexByte(kv, '=')])
			}
			orders[strings.Join(names, ",")] = true
		}
	}
	var got []string
	for c := range canon {
		got = append(got, c)
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("distinct catalog pages\n got %v\nwant %v", got, want)
	}
	// Filters × sorts × pages, in many spellings: far more URLs than pages.
	t.Logf("%d catalog URLs for %d distinct pages, %d parameter orders", len(found), len(canon), len(orders))
	if len(found) < 10*CatalogPages {
		t.Errorf("%d catalog URLs for %d pages: not much of a trap", len(found), CatalogPages)
	}
	if !orders["color,size"] || !orders["size,color"] || !orders["page"] {
		t.Errorf("parameter orders %v lack color,size / size,color / page", orders)
	}

	// The same page in other spellings: the same bytes.
	same := [][]string{
		{"/catalog?color=red&size=m", "/catalog?size=m&color=red", "/catalog?size=m&page=1&color=red", "/catalog?color=red&size=m&page=99"},
		{"/catalog?color=blue&page=2", "/catalog?page=2&color=blue", "/catalog?color=blue&page=3"},
		{"/catalog?page=5", "/catalog?page=6", "/catalog?page=1000000000"},
	}
	for _, group := range same {
		_, first := fetch(t, w, h.URL(group[0]))
		for _, u := range group[1:] {
			if _, b := fetch(t, w, h.URL(u)); !bytes.Equal(b, first) {
				t.Errorf("%s and %s differ", group[0], u)
			}
		}
	}
	// Sorting reorders the same products.
	items := func(b []byte) []string {
		var out []string
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "<li>") {
				out = append(out, l)
			}
		}
		return out
	}
	_, rel := fetch(t, w, h.URL("/catalog?page=2"))
	for _, s := range catalogSorts {
		_, b := fetch(t, w, h.URL("/catalog?sort="+s+"&page=2"))
		a, c := items(rel), items(b)
		if len(a) != catalogPerPage || slices.Equal(a, c) {
			t.Errorf("sort=%s: %d items, same order: %v", s, len(a), slices.Equal(a, c))
		}
		slices.Sort(a)
		slices.Sort(c)
		if !slices.Equal(a, c) {
			t.Errorf("sort=%s shows other products", s)
		}
	}
	for _, bad := range []string{"?color=purple", "?page=0", "?page=x", "?page=01", "?color=red&color=blue", "?q=1"} {
		if resp, _ := fetch(t, w, h.URL("/catalog"+bad)); resp.StatusCode != 404 {
			t.Errorf("/catalog%s: %d, want 404", bad, resp.StatusCode)
		}
	}
}

func TestDeepPath(t *testing.T) {
	w, h := trapWeb(t, HostOptions{Traps: Traps{DeepPath: true, SessionIDs: "jsessionid"}})
	_, home := fetch(t, w, h.URL("/"))
	u := linkTo(t, h.URL("/"), home, "Browse")
	var first []byte
	for n := range 30 {
		resp, b := fetch(t, w, u)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", u, resp.StatusCode)
		}
		if first == nil {
			first = b
		} else if !bytes.Equal(b, first) {
			t.Fatalf("%s: not the bytes of /deep/", u)
		}
		if want := "/deep/" + strings.Repeat("x/", n); !strings.HasPrefix(u, h.URL(want)) || strings.Contains(u[len(h.URL(want)):], "/") {
			t.Fatalf("step %d: %s, want %s…", n, u, want)
		}
		u = linkTo(t, u, b, "Go one level deeper")
	}
	for _, bad := range []string{"/deep/y/", "/deep/x", "/deep/x/?q=1"} {
		if resp, _ := fetch(t, w, h.URL(bad)); resp.StatusCode != 404 {
			t.Errorf("%s: %d, want 404", bad, resp.StatusCode)
		}
	}
}

func TestSoft404(t *testing.T) {
	w, h := trapWeb(t, HostOptions{Traps: Traps{Soft404: true}})
	_, home := fetch(t, w, h.URL("/"))
	dead := linkTo(t, h.URL("/"), home, "Old version")
	var first []byte
	for _, u := range []string{dead, h.URL("/pages/"), h.URL("/pages/no/such/thing.html?x=1"), h.URL("/pages/zz")} {
		resp, b := fetch(t, w, u)
		if resp.StatusCode != 200 || !bytes.Contains(b, []byte("could not be found")) {
			t.Fatalf("%s: %d\n%s", u, resp.StatusCode, b)
		}
		if first == nil {
			first = b
		} else if !bytes.Equal(b, first) {
			t.Errorf("%s: another body", u)
		}
	}
	if resp, _ := fetch(t, w, h.URL("/elsewhere/x")); resp.StatusCode != 404 {
		t.Errorf("outside /pages/: %d, want 404", resp.StatusCode)
	}
}

type urlset struct {
	URLs []struct {
		Loc     string `xml:"loc"`
		LastMod string `xml:"lastmod"`
	} `xml:"url"`
}

func TestSitemaps(t *testing.T) {
	w, h := trapWeb(t, HostOptions{Traps: Traps{Sitemaps: true, Facets: true, SessionIDs: "sid"}})
	_, robots := fetch(t, w, h.URL("/robots.txt"))
	if !strings.Contains(string(robots), "\nSitemap: http://a.test/sitemap.xml\n") {
		t.Fatalf("robots.txt lacks the Sitemap line:\n%s", robots)
	}
	if _, b := fetch(t, w, w.Hosts()[1].URL("/robots.txt")); strings.Contains(string(b), "Sitemap") {
		t.Error("a host without sitemaps announces one")
	}
	resp, b := fetch(t, w, h.URL("/sitemap.xml"))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/xml" {
		t.Fatalf("index: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var index struct {
		Sitemaps []struct {
			Loc     string `xml:"loc"`
			LastMod string `xml:"lastmod"`
		} `xml:"sitemap"`
	}
	if err := xml.Unmarshal(b, &index); err != nil {
		t.Fatal(err)
	}
	if len(index.Sitemaps) != 2 || index.Sitemaps[0].Loc != h.URL("/sitemap-1.xml") || index.Sitemaps[1].Loc != h.URL("/sitemap-2.xml.gz") {
		t.Fatalf("index %+v", index)
	}
	var listed []string
	for i, sm := range index.Sitemaps {
		resp, b := fetch(t, w, sm.Loc, "Accept-Encoding", "gzip")
		ct := resp.Header.Get("Content-Type")
		if i == 1 {
			if ct != "application/gzip" || resp.Header.Get("Content-Encoding") != "" {
				t.Fatalf("%s: Content-Type %s, Content-Encoding %q", sm.Loc, ct, resp.Header.Get("Content-Encoding"))
			}
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if b, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		} else if ct != "application/xml" {
			t.Fatalf("%s: Content-Type %s", sm.Loc, ct)
		}
		var us urlset
		if err := xml.Unmarshal(b, &us); err != nil {
			t.Fatalf("%s: %v", sm.Loc, err)
		}
		if len(us.URLs) == 0 {
			t.Fatalf("%s lists nothing", sm.Loc)
		}
		for _, u := range us.URLs {
			if _, err := time.Parse(time.RFC3339, u.LastMod); err != nil {
				t.Errorf("%s: lastmod %q: %v", u.Loc, u.LastMod, err)
			}
			listed = append(listed, u.Loc)
		}
	}
	sort.Strings(listed)
	if want := h.DistinctPages(); !slices.Equal(listed, want) {
		t.Errorf("sitemaps list\n%v\nwant\n%v", listed, want)
	}
	if !slices.Contains(listed, h.URL("/catalog?color=red&page=2")) {
		t.Error("the catalog's pages are not listed")
	}
}

// TestFiveHundredPages is the ground truth the URL-space tests rely on: a
// host of exactly 500 real pages behind session ids, facets and a
// calendar, all of which a crawler that recognizes them reaches from "/"
// with one request per page.
func TestFiveHundredPages(t *testing.T) {
	w := newWeb(t, Config{Hosts: 1, Profiles: []Profile{ProfileAllow},
		HostOptions: func(int, string) HostOptions {
			return HostOptions{Pages: 500, NoFiles: true, Traps: Traps{SessionIDs: "sid", Facets: true, Calendar: true}}
		}})
	h := w.Hosts()[0]
	want := h.DistinctPages()
	if len(want) != 500 {
		t.Fatalf("%d distinct pages, want 500", len(want))
	}
	for _, r := range h.Resources() {
		if !strings.HasPrefix(r.ContentType, "text/html") {
			t.Fatalf("a file: %s", r.Path)
		}
	}
	// An oracle crawler: it fetches a URL only if PageOf says it is a
	// real page it has not fetched yet.
	fetched := map[string]bool{}
	queue := []string{h.URL("/")}
	raw := map[string]bool{}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		c, ok := h.PageOf(u)
		if !ok || fetched[c] {
			continue
		}
		fetched[c] = true
		resp, b := fetch(t, w, u)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", u, resp.StatusCode)
		}
		for _, l := range extractLinks(t, u, b) {
			raw[l] = true
			queue = append(queue, l)
		}
	}
	if n := len(w.Requests()); n != 500 || len(fetched) != 500 {
		t.Errorf("%d requests, %d pages fetched; want 500", n, len(fetched))
	}
	t.Logf("%d distinct URLs seen for 500 pages", len(raw))
	if len(raw) < 5*500 {
		t.Errorf("only %d distinct URLs: the traps do not multiply the URL space", len(raw))
	}
}

func TestTrapOptionsErrors(t *testing.T) {
	for _, o := range []HostOptions{
		{Pages: -1},
		{Pages: MaxPagesPerHost + 1},
		{Pages: CatalogPages, Traps: Traps{Facets: true}},
		{Traps: Traps{SessionIDs: "a b"}},
		{Traps: Traps{SessionIDs: "s=1"}},
	} {
		_, err := New(Config{Hosts: 1, HostOptions: func(int, string) HostOptions { return o }})
		if !errors.Is(err, errConfig) {
			t.Errorf("%+v: %v", o, err)
		}
	}
	w := newWeb(t, Config{Hosts: 1, HostOptions: func(int, string) HostOptions {
		return HostOptions{Pages: CatalogPages + 1, Traps: Traps{Facets: true}}
	}})
	if n := len(w.Hosts()[0].DistinctPages()); n != CatalogPages+1 {
		t.Errorf("%d pages", n)
	}
}
