package gentlecrawl_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/apachetest"
	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
)

// TestValidatorsLearned: servers that ignore the validators as they sent
// them — Apache's mod_deflate way (If-None-Match with the "-gzip" ETag it
// sent is never matched), one that honours only If-Modified-Since, and one
// that honours nothing — are re-crawled with 304s wherever the server can
// give them: after at most one full answer, the crawl sends what works, and
// the summary says what it found.
func TestValidatorsLearned(t *testing.T) {
	const pages = 30
	lastMod := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC).Format(http.TimeFormat)
	for _, tt := range []struct {
		name     string
		etag     func(p string) string
		honoured func(r *http.Request, p string) bool
		max200   int                        // full answers allowed in the re-crawl
		sent     gentlecrawl.ValidatorsSent // "": not in the summary
	}{
		{"apache mod_deflate", func(p string) string { return `"` + p + `-5f3a-gzip"` },
			func(r *http.Request, p string) bool {
				inm := r.Header.Get("If-None-Match")
				return inm == `"`+p+`-5f3a"` || inm == "" && r.Header.Get("If-Modified-Since") == lastMod
			}, 1, gentlecrawl.ValidatorsStripped},
		{"dates only", func(p string) string { return `"` + p + `-v7"` },
			func(r *http.Request, p string) bool {
				return r.Header.Get("If-Modified-Since") == lastMod && r.Header.Get("If-None-Match") == ""
			},
			1, gentlecrawl.ValidatorsDateOnly},
		{"nothing honoured", func(p string) string { return `"` + p + `-x"` },
			func(*http.Request, string) bool { return false }, pages + 1, gentlecrawl.ValidatorsAsGiven},
		{"honours both", func(p string) string { return `"` + p + `-ok"` },
			func(r *http.Request, p string) bool { return r.Header.Get("If-None-Match") == `"`+p+`-ok"` }, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			full, notModified := 0, 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				p := strings.TrimPrefix(r.URL.Path, "/")
				if p == "robots.txt" {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("ETag", tt.etag(p))
				w.Header().Set("Last-Modified", lastMod)
				mu.Lock()
				defer mu.Unlock()
				if tt.honoured(r, p) {
					notModified++
					w.WriteHeader(http.StatusNotModified)
					return
				}
				full++
				var b strings.Builder
				fmt.Fprintf(&b, "<title>%s</title><p>The page %s, a page of its own.</p>", p, p)
				if p == "" {
					for i := range pages {
						fmt.Fprintf(&b, `<a href="/p%d">%d</a> `, i, i)
					}
				}
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprint(w, b.String())
			}))
			defer srv.Close()
			cfg := gentlecrawl.Config{
				JobDir: t.TempDir(), Seeds: []string{"http://a.test/"}, Delay: time.Millisecond,
				ConnectTo: crawltest.ConnectTo("a.test:80:" + srv.Listener.Addr().String()), AllowPrivateNetworks: true,
			}
			crawltest.MustCrawl(t, t.Context(), cfg)
			mu.Lock()
			full, notModified = 0, 0
			mu.Unlock()
			cfg.Recrawl = true
			sum := crawltest.MustCrawl(t, t.Context(), cfg)
			mu.Lock()
			defer mu.Unlock()
			t.Logf("re-crawl: %d full answers, %d not modified; validators %v", full, notModified, sum.Validators)
			if full > tt.max200 {
				t.Errorf("%d full answers in the re-crawl of %d unchanged pages, want at most %d", full, pages+1, tt.max200)
			}
			if full+notModified != pages+1 {
				t.Errorf("%d requests in the re-crawl, want %d", full+notModified, pages+1)
			}
			got, ok := sum.Validators["http://a.test"]
			if ok != (tt.sent != "") || got.Sent != tt.sent || ok && (got.Ignored < 1 || got.ETag == "") {
				t.Errorf("summary %+v (%v), want validators sent %q and what was ignored", got, ok, tt.sent)
			}
		})
	}
}

// TestValidatorsApache: Debian's Apache with mod_deflate as installed
// (DeflateAlterETag left at its default: compressed pages carry ETag
// "…-gzip", and If-None-Match with that ETag never matches). A re-crawl
// of its unchanged pages gets 304s — all but one — as the server's log
// shows, and the summary names what was learned.
func TestValidatorsApache(t *testing.T) {
	apachetest.Require(t)
	const pages = 40
	root := t.TempDir()
	var index strings.Builder
	filler := strings.Repeat("Pages long enough to be worth compressing, so that mod_deflate compresses them. ", 30)
	for i := range pages {
		fmt.Fprintf(&index, `<a href="/p%d.html">page %d</a> `, i, i)
		page := fmt.Sprintf("<!DOCTYPE html><title>Page %d</title><p>Page %d of its own. %s</p>", i, i, filler)
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("p%d.html", i)), []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	home := "<!DOCTYPE html><title>Home</title><p>" + filler + "</p>" + index.String()
	if err := os.WriteFile(filepath.Join(root, "index.html"), []byte(home), 0o644); err != nil {
		t.Fatal(err)
	}
	// Files modified in the same second as a request get weak ETags from
	// Apache: date them well before.
	old := time.Now().Add(-48 * time.Hour)
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		os.Chtimes(filepath.Join(root, e.Name()), old, old)
	}
	srv := apachetest.Start(t, apachetest.Site{Name: "apache.test", Addr: "127.0.0.4:0", Root: root, Deflate: true})
	cfg := gentlecrawl.Config{
		JobDir: t.TempDir(), Seeds: []string{"http://apache.test/"}, Delay: time.Millisecond,
		ConnectTo: crawltest.ConnectTo("apache.test:80:" + srv.Addr("apache.test")), AllowPrivateNetworks: true,
	}
	first := crawltest.MustCrawl(t, t.Context(), cfg)
	before, err := srv.WaitEntries(t.Context(), first.Requests)
	if err != nil {
		t.Fatal(err)
	}
	gzipped := 0
	for _, e := range before {
		if strings.HasSuffix(e.ETag, `-gzip"`) {
			gzipped++
		}
	}
	if gzipped < pages {
		t.Fatalf("only %d of the first crawl's answers carry a -gzip ETag: is mod_deflate on?", gzipped)
	}
	cfg.Recrawl = true
	second := crawltest.MustCrawl(t, t.Context(), cfg)
	all, err := srv.WaitEntries(t.Context(), first.Requests+second.Requests)
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[int]int{}
	for _, e := range all[len(before):] {
		statuses[e.Status]++
	}
	t.Logf("re-crawl of %d unchanged pages: Apache answered %v; summary: %v", pages+1, statuses, second.Validators)
	if statuses[304] < pages || statuses[200] > 1 {
		t.Errorf("Apache answered %v to the re-crawl of %d unchanged pages; want at most one full 200, the rest 304", statuses, pages+1)
	}
	if got := second.Validators["http://apache.test"]; got.Sent != gentlecrawl.ValidatorsStripped || got.Honoured == 0 {
		t.Errorf("summary %+v should say the ETag is sent without its encoding suffix, and honoured", got)
	}
}
