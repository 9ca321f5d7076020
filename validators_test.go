package gentlecrawl_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
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
		max200   int // full answers allowed in the re-crawl
		report   string
	}{
		{"apache mod_deflate", func(p string) string { return `"` + p + `-5f3a-gzip"` },
			func(r *http.Request, p string) bool {
				inm := r.Header.Get("If-None-Match")
				return inm == `"`+p+`-5f3a"` || inm == "" && r.Header.Get("If-Modified-Since") == lastMod
			}, 1, "without its encoding suffix"},
		{"dates only", func(p string) string { return `"` + p + `-v7"` },
			func(r *http.Request, p string) bool {
				return r.Header.Get("If-Modified-Since") == lastMod && r.Header.Get("If-None-Match") == ""
			},
			1, "If-Modified-Since alone"},
		{"nothing honoured", func(p string) string { return `"` + p + `-x"` },
			func(*http.Request, string) bool { return false }, pages + 1, "no way"},
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
				ConnectTo: []string{"a.test:80:" + srv.Listener.Addr().String()}, AllowPrivateNetworks: true,
			}
			mustCrawl(t, t.Context(), cfg)
			mu.Lock()
			full, notModified = 0, 0
			mu.Unlock()
			cfg.Recrawl = true
			sum := mustCrawl(t, t.Context(), cfg)
			mu.Lock()
			defer mu.Unlock()
			t.Logf("re-crawl: %d full answers, %d not modified; validators %v", full, notModified, sum.Validators)
			if full > tt.max200 {
				t.Errorf("%d full answers in the re-crawl of %d unchanged pages, want at most %d", full, pages+1, tt.max200)
			}
			if full+notModified != pages+1 {
				t.Errorf("%d requests in the re-crawl, want %d", full+notModified, pages+1)
			}
			got := sum.Validators["http://a.test"]
			if tt.report == "" && got != "" || !strings.Contains(got, tt.report) {
				t.Errorf("summary %q, want it to mention %q", got, tt.report)
			}
		})
	}
}
