package check_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/check"
)

// seeds are the seeds each fault is tried with: the shape of the site
// (pages, links, which page is slow) changes with them, so that a check
// fitted to one shape fails another. GENTLECRAWL_CHECK_SEED picks one.
func seeds() []uint64 {
	if s := os.Getenv("GENTLECRAWL_CHECK_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err == nil {
			return []uint64{n}
		}
	}
	return []uint64{1, 2, 3}
}

// forSeeds runs f in a subtest per seed, all at once, with a number of
// pages drawn from the seed between lo and hi.
func forSeeds(t *testing.T, lo, hi int, f func(t *testing.T, seed uint64, pages int)) {
	var names []string
	var pages []int
	for _, seed := range seeds() {
		n := lo + rand.New(rand.NewPCG(seed, 7)).IntN(hi-lo+1)
		names = append(names, fmt.Sprintf("seed%d-pages%d", seed, n))
		pages = append(pages, n)
	}
	concurrently(t, names, func(t *testing.T, i int) { f(t, seeds()[i], pages[i]) })
}

// each runs f in a subtest per case, all at once (see concurrently).
func each[T any](t *testing.T, cases []T, name func(T) string, f func(t *testing.T, c T)) {
	names := make([]string, len(cases))
	for i, c := range cases {
		names[i] = name(c)
	}
	concurrently(t, names, func(t *testing.T, i int) { f(t, cases[i]) })
}

// seedCase is a case of a table tried with every seed.
type seedCase[T any] struct {
	c     T
	seed  uint64
	pages int
}

// eachSeed runs f for every case of a table with every seed, all at once,
// with a number of pages drawn from the seed between lo and hi.
func eachSeed[T any](t *testing.T, cases []T, name func(T) string, lo, hi int, f func(t *testing.T, c T, seed uint64, pages int)) {
	var all []seedCase[T]
	for _, c := range cases {
		for _, seed := range seeds() {
			all = append(all, seedCase[T]{c, seed, lo + rand.New(rand.NewPCG(seed, 7)).IntN(hi-lo+1)})
		}
	}
	each(t, all, func(sc seedCase[T]) string { return fmt.Sprintf("%s/seed%d-pages%d", name(sc.c), sc.seed, sc.pages) },
		func(t *testing.T, sc seedCase[T]) { f(t, sc.c, sc.seed, sc.pages) })
}

// concurrently runs f in a subtest per name, all at once. The checks
// spend their time waiting between requests, so they need not take
// turns for the two slots of `go test`'s -parallel on a two-core
// machine: the subtests run in goroutines of their own (t.Run may be
// called from several at once), within the one slot of t.
func concurrently(t *testing.T, names []string, f func(t *testing.T, i int)) {
	t.Parallel()
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { t.Run(name, func(t *testing.T) { f(t, i) }) })
	}
	wg.Wait()
}

const gap = 20 * time.Millisecond

func TestCleanSite(t *testing.T) {
	forSeeds(t, 3, 90, func(t *testing.T, seed uint64, pages int) {
		s := &site{Pages: pages, Seed: seed}
		rep := run(t, s.start(t)+"/", nil)
		expect(t, rep)
		politeness(t, s.hits(), gap, 0, nil)
		for _, id := range []string{check.IDValidators, check.IDCompression, check.IDNotFound, check.IDResponseTime, check.IDSample} {
			finding(t, rep, id)
		}
		if rep.Requests > check.DefaultRequests || rep.Requests != len(s.hits()) {
			t.Errorf("report says %d requests, the server saw %d; want at most %d", rep.Requests, len(s.hits()), check.DefaultRequests)
		}
		if want := min(pages, check.DefaultRequests-5); rep.Pages < want {
			t.Errorf("%d HTML pages sampled, want at least %d", rep.Pages, want)
		}
	})
}

func TestNoValidators(t *testing.T) {
	forSeeds(t, 2, 40, func(t *testing.T, seed uint64, pages int) {
		s := &site{Pages: pages, Seed: seed, NoValidators: true}
		rep := run(t, s.start(t)+"/", nil)
		expect(t, rep, check.IDNoValidators)
		f := finding(t, rep, check.IDNoValidators)
		if want := fmt.Sprintf("%d of %d HTML page", rep.Pages, rep.Pages); !strings.HasPrefix(f.Message, want) {
			t.Errorf("message %q, want it to start %q", f.Message, want)
		}
	})
}

func TestConditionalIgnored(t *testing.T) {
	forSeeds(t, 2, 40, func(t *testing.T, seed uint64, pages int) {
		s := &site{Pages: pages, Seed: seed, IgnoreConditional: true}
		rep := run(t, s.start(t)+"/", nil)
		expect(t, rep, check.IDConditionalIgnored)
		f := finding(t, rep, check.IDConditionalIgnored)
		// Every try is evidence: a re-request with the validators and a
		// 200 with the same bytes.
		for _, e := range f.Evidence {
			if !strings.Contains(e, "If-") || !strings.Contains(e, "→ 200, the same") {
				t.Errorf("evidence %q: want the validators sent and a 200 with the same bytes", e)
			}
		}
		conditional := 0
		for _, x := range rep.Log {
			if x.Purpose == "conditional" {
				conditional++
			}
		}
		if min(pages, 3)+1 < conditional {
			t.Errorf("%d conditional requests for %d pages", conditional, pages)
		}
	})
}

// TestETagGzipSuffix is Apache's mod_deflate as internal/apachetest
// records it: "-gzip" on the ETag of compressed answers, which then does
// not match; the ETag without it, or the date, gets a 304. That is not
// conditional-ignored.
func TestETagGzipSuffix(t *testing.T) {
	forSeeds(t, 2, 40, func(t *testing.T, seed uint64, pages int) {
		s := &site{Pages: pages, Seed: seed, GzipSuffixETag: true}
		rep := run(t, s.start(t)+"/", nil)
		expect(t, rep)
		f := finding(t, rep, check.IDETagGzipSuffix)
		if !strings.Contains(f.Message, `-gzip"`) || !strings.Contains(strings.Join(f.Evidence, "\n"), "→ 304") {
			t.Errorf("finding %+v: want the ETag and a 304 in evidence", f)
		}
		if rep.Has(check.IDValidators) {
			t.Error("validators reported as working as sent")
		}
	})
}

func TestETagIgnored(t *testing.T) {
	forSeeds(t, 2, 20, func(t *testing.T, seed uint64, pages int) {
		s := &site{Pages: pages, Seed: seed, ETagUnknown: true}
		rep := run(t, s.start(t)+"/", nil)
		expect(t, rep)
		finding(t, rep, check.IDETagIgnored)
	})
}

func TestNoCompression(t *testing.T) {
	forSeeds(t, 1, 40, func(t *testing.T, seed uint64, pages int) {
		s := &site{Pages: pages, Seed: seed, NoGzip: true}
		rep := run(t, s.start(t)+"/", nil)
		expect(t, rep, check.IDNoCompression)
		f := finding(t, rep, check.IDNoCompression)
		if want := fmt.Sprintf("%d of %d text page", rep.Pages, rep.Pages); !strings.HasPrefix(f.Message, want) {
			t.Errorf("message %q, want it to start %q", f.Message, want)
		}
	})
}

// TestSmallPagesUncompressed: pages under MinCompressible sent plain are
// no fault.
func TestSmallPagesUncompressed(t *testing.T) {
	t.Parallel()
	s := &site{Pages: 5, Seed: 1, NoGzip: true}
	rep := run(t, s.start(t)+"/", func(c *check.Config) { c.MinCompressible = 1 << 20 })
	expect(t, rep)
}

func TestVaryMissing(t *testing.T) {
	forSeeds(t, 1, 30, func(t *testing.T, seed uint64, pages int) {
		s := &site{Pages: pages, Seed: seed, NoVary: true}
		rep := run(t, s.start(t)+"/", nil)
		expect(t, rep) // no warning: the default of nginx's gzip
		if !slices.ContainsFunc(rep.Findings, func(f check.Finding) bool { return f.ID == check.IDVaryMissing }) {
			t.Errorf("no %s finding", check.IDVaryMissing)
		}
	})
}

func TestSessionIDs(t *testing.T) {
	type session struct{ name, param string }
	eachSeed(t, []session{
		{"known", "sid"},           // urlnorm knows it by name (with a value of 16+ hex digits)
		{"PHPSESSID", "PHPSESSID"}, // whatever its value
		{"invented", "visit"},      // known only by its values changing
	}, func(c session) string { return c.name }, 6, 40, func(t *testing.T, tc session, seed uint64, pages int) {
		s := &site{Pages: pages, Seed: seed, Session: tc.param}
		rep := run(t, s.start(t)+"/", nil)
		expect(t, rep, check.IDSessionIDs)
		f := finding(t, rep, check.IDSessionIDs)
		if !strings.Contains(f.Message, tc.param) {
			t.Errorf("message %q does not name %s", f.Message, tc.param)
		}
		// The sample fetches pages without the ids it knows; an
		// invented one is learned from the first pages' links.
		withID := 0
		for _, h := range s.hits() {
			if strings.Contains(h.Path, tc.param+"=") {
				withID++
				t.Logf("fetched %s", h.Path)
			}
		}
		if allowed := map[bool]int{true: 4, false: 0}[tc.name == "invented"]; withID > allowed {
			t.Errorf("%d requests for URLs with the session id, want at most %d", withID, allowed)
		}
	})
}

func TestSoft404(t *testing.T) {
	forSeeds(t, 1, 40, func(t *testing.T, seed uint64, pages int) {
		s := &site{Pages: pages, Seed: seed, Soft404: true}
		rep := run(t, s.start(t)+"/", nil)
		expect(t, rep, check.IDSoft404)
		f := finding(t, rep, check.IDSoft404)
		if ev := strings.Join(f.Evidence, "\n"); !strings.Contains(ev, "→ 200") || !strings.Contains(ev, "Sorry, not found") {
			t.Errorf("evidence %q: want the probe's 200 and its title", ev)
		}
	})
}

// TestSlowResponse makes most pages slow, with a short threshold; then a
// single slow page (drawn from the seed), which the median ignores.
func TestSlowResponse(t *testing.T) {
	// Far apart, so that a machine busy with other tests does not make
	// fast answers look slow: under a CI run with another package's race
	// tests beside it, answers that take no time had a median of 215 ms.
	const slow, limit = 1500 * time.Millisecond, 750 * time.Millisecond
	short := func(c *check.Config) { c.SlowTTFB = limit }
	eachSeed(t, []string{"most", "one"}, func(s string) string { return s }, 3, 12, func(t *testing.T, which string, seed uint64, pages int) {
		if which == "most" {
			s := &site{Pages: pages, Seed: seed, Slow: func(path string) time.Duration {
				if path == "/robots.txt" {
					return 0
				}
				return slow
			}}
			rep := run(t, s.start(t)+"/", short)
			expect(t, rep, check.IDSlowResponse)
			return
		}
		slowPage := "/p/" + strconv.Itoa(1+int(seed)%(pages-1))
		s := &site{Pages: pages, Seed: seed, Slow: func(path string) time.Duration {
			if path == slowPage {
				return slow
			}
			return 0
		}}
		rep := run(t, s.start(t)+"/", short)
		expect(t, rep)
		if f := finding(t, rep, check.IDResponseTime); rep.Pages > 3 && !strings.Contains(strings.Join(f.Evidence, "\n"), slowPage) {
			t.Errorf("the slowest answers %q do not name %s", f.Evidence, slowPage)
		}
	})
}

func redirect(to string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to, http.StatusFound) }
}

func TestRobotsRedirects(t *testing.T) {
	type chain struct {
		name     string
		handle   map[string]http.HandlerFunc
		requests int
		want     string
	}
	each(t, []chain{
		{"loop", map[string]http.HandlerFunc{"/robots.txt": redirect("/a/robots.txt"), "/a/robots.txt": redirect("/b/robots.txt"), "/b/robots.txt": redirect("/robots.txt")}, 3, "loop"},
		{"self", map[string]http.HandlerFunc{"/robots.txt": redirect("/robots.txt")}, 1, "loop"},
		{"six", map[string]http.HandlerFunc{"/robots.txt": redirect("/r1"), "/r1": redirect("/r2"), "/r2": redirect("/r3"), "/r3": redirect("/r4"), "/r4": redirect("/r5"), "/r5": redirect("/r6"), "/r6": redirect("/robots2.txt")}, 6, "more than 5"},
		{"no-location", map[string]http.HandlerFunc{"/robots.txt": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusMovedPermanently) }}, 1, "Location"},
		// Five redirects are followed (RFC 9309 §2.3.1.2): no finding.
		{"five", map[string]http.HandlerFunc{"/robots.txt": redirect("/r1"), "/r1": redirect("/r2"), "/r2": redirect("/r3"), "/r3": redirect("/r4"), "/r4": redirect("/r5"),
			"/r5": func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "User-agent: *\nDisallow: /p/3\n") }}, 0, ""},
	}, func(c chain) string { return c.name }, func(t *testing.T, tc chain) {
		s := &site{Pages: 5, Handle: tc.handle}
		if tc.name == "five" {
			rep := run(t, s.start(t)+"/", nil)
			expect(t, rep)
			politeness(t, s.hits(), gap, 0, func(p string) bool { return p == "/p/3" })
			return
		}
		rep := run(t, s.start(t)+"/", nil)
		expect(t, rep, check.IDRobotsRedirects)
		if f := finding(t, rep, check.IDRobotsRedirects); !strings.Contains(f.Message, tc.want) || len(f.Evidence) != tc.requests {
			t.Errorf("%+v: want %q and %d requests in evidence", f, tc.want, tc.requests)
		}
		if rep.Requests != tc.requests || len(s.hits()) != tc.requests {
			t.Errorf("%d requests (server: %d), want %d: nothing but the robots.txt chain", rep.Requests, len(s.hits()), tc.requests)
		}
	})
}

func TestRobotsTooLarge(t *testing.T) {
	forSeeds(t, 3, 20, func(t *testing.T, seed uint64, pages int) {
		var b strings.Builder
		b.WriteString("User-agent: *\n")
		rng := rand.New(rand.NewPCG(seed, 1))
		for b.Len() < 500<<10 {
			fmt.Fprintf(&b, "Disallow: /archive/%d/%x/\n", rng.IntN(1e6), rng.Uint64())
		}
		rules := 3 + rng.IntN(50)
		for i := range rules {
			fmt.Fprintf(&b, "Disallow: /p/%d\n", 1000+i)
		}
		s := &site{Pages: pages, Seed: seed, Robots: b.String()}
		rep := run(t, s.start(t)+"/", nil)
		expect(t, rep, check.IDRobotsTooLarge)
		f := finding(t, rep, check.IDRobotsTooLarge)
		if ev := strings.Join(f.Evidence, "\n"); !strings.Contains(ev, fmt.Sprintf("%d bytes", b.Len())) || !strings.Contains(ev, fmt.Sprintf("%d of them Allow or Disallow rules", rules)) {
			t.Errorf("evidence %q: want the size (%d) and the %d rules ignored", ev, b.Len(), rules)
		}
	})
}

func TestRobotsDisallowAll(t *testing.T) {
	type rules struct {
		name, robots string
		all          bool
	}
	each(t, []rules{
		{"all", "User-agent: *\nDisallow: /\n", true},
		{"wildcard", "User-agent: *\nDisallow: /*\nAllow: /robots.txt\n", true},
		{"agent", "User-agent: gentlecrawl\nDisallow: /\n\nUser-agent: *\nAllow: /\n", true},
		{"others", "User-agent: otherbot\nDisallow: /\n", false},
		{"open-dir", "User-agent: *\nDisallow: /\nAllow: /p/\n", false},
		{"open-page", "User-agent: *\nDisallow: /\nAllow: /$\n", false},
	}, func(r rules) string { return r.name }, func(t *testing.T, tc rules) {
		s := &site{Pages: 8, Seed: 4, Robots: tc.robots}
		start := "/"
		if tc.name == "open-dir" {
			start = "/p/1"
		}
		rep := run(t, s.start(t)+start, nil)
		if tc.all {
			expect(t, rep, check.IDRobotsDisallowAll)
			if rep.Requests != 1 {
				t.Errorf("%d requests, want robots.txt alone", rep.Requests)
			}
			return
		}
		expect(t, rep)
	})
}

func TestRobotsUnavailable(t *testing.T) {
	each(t, []int{500, 503, 429, 0}, func(s int) string {
		if s == 0 {
			return "timeout"
		}
		return strconv.Itoa(s)
	}, func(t *testing.T, status int) {
		if status != 0 {
			s := &site{Pages: 5, RobotsStatus: status}
			rep := run(t, s.start(t)+"/", nil)
			expect(t, rep, check.IDRobotsUnavailable)
			if len(s.hits()) != 1 {
				t.Errorf("%d requests, want robots.txt alone: nothing else may be fetched", len(s.hits()))
			}
			return
		}
		s := &site{Pages: 5, Slow: func(p string) time.Duration {
			if p == "/robots.txt" {
				return 600 * time.Millisecond
			}
			return 0
		}}
		rep := run(t, s.start(t)+"/", func(c *check.Config) { c.Timeout = 200 * time.Millisecond })
		expect(t, rep, check.IDRobotsUnavailable)
		if f := finding(t, rep, check.IDRobotsUnavailable); !strings.Contains(f.Message, "did not answer") {
			t.Errorf("message %q", f.Message)
		}
	})
}

func TestRobotsHTML(t *testing.T) {
	page := "<!DOCTYPE html>\n<html><head><title>Welcome</title></head><body><p>Our shop</p></body></html>\n"
	each(t, []string{"text/html; charset=utf-8", "text/plain"}, func(c string) string { return strings.Fields(c)[0] }, func(t *testing.T, ctype string) {
		s := &site{Pages: 6, Handle: map[string]http.HandlerFunc{"/robots.txt": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ctype)
			fmt.Fprint(w, page)
		}}}
		rep := run(t, s.start(t)+"/", nil)
		expect(t, rep, check.IDRobotsHTML)
	})
}

// TestCrawlDelay lists many URLs in a sitemap (gzipped, behind an index)
// and asks for a Crawl-delay that makes one pass over them longer than a
// day; then one that does not.
func TestCrawlDelay(t *testing.T) {
	type delay struct {
		name  string
		delay string
		urls  int
		index bool // two sitemaps behind an index, rather than one
		warn  bool
		says  string
	}
	each(t, []delay{
		{"days", "2", 50000, false, true, "50,000 × 2 s = 100,000 s (1.2 days)"},
		{"index", "1", 100000, true, true, "100,000 × 1 s = 100,000 s (1.2 days)"},
		{"fraction", "1.5", 48000, false, false, "48,000 × 1.5 s = 72,000 s (20.0 hours)"},
		{"hours", "1", 20000, true, false, "20,000 × 1 s = 20,000 s (5.6 hours)"},
	}, func(d delay) string { return d.name }, func(t *testing.T, tc delay) {
		s := &site{Pages: 10, Seed: 3}
		base := s.start(t)
		// The sitemaps are made before the check starts, so that
		// the race detector's slower gzip does not eat its time.
		flat, half2 := urlset(base, 0, tc.urls), urlset(base, tc.urls/2, tc.urls)
		var half1 bytes.Buffer
		zw := gzip.NewWriter(&half1)
		zw.Write(urlset(base, 0, tc.urls/2))
		zw.Close()
		s.Robots = fmt.Sprintf("User-agent: *\nCrawl-delay: %s\nDisallow: /private/\n\nSitemap: %s/sitemap.xml\n", tc.delay, base)
		s.Handle = map[string]http.HandlerFunc{
			"/sitemap.xml": func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/xml")
				if !tc.index {
					w.Write(flat)
					return
				}
				fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>%s/sitemap-1.xml.gz</loc></sitemap><sitemap><loc>%s/sitemap-2.xml</loc></sitemap></sitemapindex>`, base, base)
			},
			"/sitemap-1.xml.gz": func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/gzip")
				w.Write(half1.Bytes())
			},
			"/sitemap-2.xml": func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/xml")
				w.Write(half2)
			},
		}
		d, _ := strconv.ParseFloat(tc.delay, 64)
		// Time for robots.txt, the sitemaps (the check leaves four
		// requests to the rest) and a page or two.
		n := 4.0
		if tc.index {
			n = 7
		}
		// And room beyond: reading a sitemap of 50,000 URLs under the
		// race detector on a busy machine took seconds, and the check
		// reads fewer sitemaps when its time runs short.
		rep := run(t, base+"/", func(c *check.Config) { c.Time = time.Duration(n*d*float64(time.Second)) + 15*time.Second })
		if tc.warn {
			expect(t, rep, check.IDCrawlDelay)
		} else {
			expect(t, rep)
		}
		id := check.IDCrawlRate
		if tc.warn {
			id = check.IDCrawlDelay
		}
		if f := finding(t, rep, id); !strings.Contains(f.Message, tc.says) {
			t.Errorf("message %q, want it to say %q", f.Message, tc.says)
		}
		politeness(t, s.hits(), time.Duration(d*float64(time.Second)), 0, func(p string) bool { return strings.HasPrefix(p, "/private/") })
		finding(t, rep, check.IDSample)
	})
}

// urlset is a sitemap of the URLs /item/lo … /item/(hi-1).
func urlset(base string, lo, hi int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for i := lo; i < hi; i++ {
		fmt.Fprintf(&b, "<url><loc>%s/item/%d</loc></url>\n", base, i)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// TestTimeBudget: with a Crawl-delay longer than a few requests fit in
// the time budget, the sample is smaller and the report says so.
func TestTimeBudget(t *testing.T) {
	t.Parallel()
	s := &site{Pages: 30, Seed: 5, Robots: "User-agent: *\nCrawl-delay: 0.4\n"}
	rep := run(t, s.start(t)+"/", func(c *check.Config) { c.Time = 1500 * time.Millisecond })
	expect(t, rep)
	// 0.4 s between requests leaves room for four or five in 1.5 s: not
	// the 30 pages (a loaded machine makes it fewer, never more).
	if !strings.Contains(rep.Cut, "time budget") || rep.Requests > 6 || len(s.hits()) > 6 {
		t.Errorf("%d requests (%d hits), cut %q: want the time budget to cut the sample", rep.Requests, len(s.hits()), rep.Cut)
	}
	if !strings.Contains(rep.Cut, "time budget") || !strings.Contains(finding(t, rep, check.IDSample).Message, "stopped early") {
		t.Errorf("cut %q: want the time budget named", rep.Cut)
	}
	// At most four gaps fit in 1.5 s; a loaded machine may make fewer
	// requests, which says nothing of the budget.
	if rep.Requests < 1 || rep.Requests > 5 {
		t.Errorf("%d requests in 1.5 s at 0.4 s apart", rep.Requests)
	}
	politeness(t, s.hits(), 400*time.Millisecond, 0, nil)
}

// TestRequestBudget: a large site gets the planned number of requests,
// and never more than MaxRequests whatever is asked.
func TestRequestBudget(t *testing.T) {
	each(t, []int{0, 20, 100}, strconv.Itoa, func(t *testing.T, asked int) {
		s := &site{Pages: 500, Seed: 6}
		rep := run(t, s.start(t)+"/", func(c *check.Config) { c.MaxRequests = asked; c.Delay = 5 * time.Millisecond })
		want := map[int]int{0: check.DefaultRequests, 20: 20, 100: check.MaxRequests}[asked]
		if n := len(s.hits()); n != want || rep.Requests != n {
			t.Errorf("%d requests (report: %d), want %d", n, rep.Requests, want)
		}
		expect(t, rep)
		finding(t, rep, check.IDNotFound)
		if got := finding(t, rep, check.IDValidators); !strings.Contains(got.Message, "3 of 3") {
			t.Errorf("validators: %q, want 3 of 3 pages", got.Message)
		}
	})
}

func TestRetryAfter(t *testing.T) {
	forSeeds(t, 6, 30, func(t *testing.T, seed uint64, pages int) {
		busy := "/p/" + strconv.Itoa(1+int(seed)%(pages-1))
		for _, ra := range []string{"", "1"} {
			s := &site{Pages: pages, Seed: seed, Handle: map[string]http.HandlerFunc{busy: func(w http.ResponseWriter, r *http.Request) {
				if ra != "" {
					w.Header().Set("Retry-After", ra)
				}
				http.Error(w, "busy", http.StatusServiceUnavailable)
			}}}
			rep := run(t, s.start(t)+"/", nil)
			if ra == "" {
				expect(t, rep, check.IDRetryAfterMissing)
				politeness(t, s.hits(), gap, 0, nil)
				continue
			}
			expect(t, rep)
			finding(t, rep, check.IDRetryAfter)
			// The check waits as long as the site asks.
			hits := s.hits()
			for i, h := range hits[:len(hits)-1] {
				if h.Path == busy && hits[i+1].Start.Sub(h.End) < time.Second {
					t.Errorf("the request after a 503 with Retry-After: 1 came %v later", hits[i+1].Start.Sub(h.End))
				}
			}
		}
	})
}

func TestSitemapErrors(t *testing.T) {
	type sitemap struct {
		name   string
		handle http.HandlerFunc
	}
	each(t, []sitemap{
		{"404", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }},
		{"html", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<!doctype html><title>Site map</title><ul><li><a href=/>Home</a></ul>")
		}},
		{"garbage", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprint(w, "<?xml version=\"1.0\"?><urlset><url><loc>")
		}},
	}, func(c sitemap) string { return c.name }, func(t *testing.T, tc sitemap) {
		s := &site{Pages: 6, Seed: 2}
		base := s.start(t)
		s.Robots = "User-agent: *\nAllow: /\nSitemap: " + base + "/sitemap.xml\n"
		s.Handle = map[string]http.HandlerFunc{"/sitemap.xml": tc.handle}
		rep := run(t, base+"/", nil)
		expect(t, rep, check.IDSitemapErrors)
	})
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "example.org", "ftp://example.org/", "http:///x", "http://exa mple.org/"} {
		if _, err := check.Run(t.Context(), check.Config{}, u); err == nil {
			t.Errorf("Run(%q): no error", u)
		}
	}
	s := &site{Pages: 2}
	base := s.start(t)
	_, err := check.Run(t.Context(), check.Config{}, base+"/")
	if err == nil || !strings.Contains(err.Error(), "allow-private-networks") {
		t.Errorf("a loopback site without AllowPrivateNetworks: %v", err)
	}
	if len(s.hits()) != 0 {
		t.Errorf("%d requests to a refused address", len(s.hits()))
	}
}

// TestDynamicPages: pages that change on every request under the same
// validators, which the server never honours, are not conditional-ignored:
// a full 200 with other bytes proves nothing. The check says it could not
// judge.
func TestDynamicPages(t *testing.T) {
	forSeeds(t, 3, 30, func(t *testing.T, seed uint64, pages int) {
		s := &site{Pages: pages, Seed: seed, Dynamic: true, IgnoreConditional: true}
		rep := run(t, s.start(t)+"/", nil)
		expect(t, rep)
		if f := finding(t, rep, check.IDNotJudged); !strings.Contains(strings.Join(f.Evidence, "\n"), "differ from the first answer") {
			t.Errorf("not-judged evidence %q: want the answers that differ", f.Evidence)
		}
	})
}

// TestStartRedirect: the start URL redirects to another origin (as http
// to https does); the check reads that origin's robots.txt before its
// pages, and samples it.
func TestStartRedirect(t *testing.T) {
	t.Parallel()
	b := &site{Pages: 12, Seed: 8, Robots: "User-agent: *\nDisallow: /p/5\n"}
	to := b.start(t)
	a := &site{Pages: 3, Handle: map[string]http.HandlerFunc{"/": func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, to+"/", http.StatusMovedPermanently)
	}}}
	rep := run(t, a.start(t)+"/", nil)
	expect(t, rep)
	if rep.Pages < 10 {
		t.Errorf("%d pages sampled, want the 11 of the origin redirected to", rep.Pages)
	}
	if got := len(a.hits()); got != 2 {
		t.Errorf("%d requests to the first origin, want robots.txt and the start page", got)
	}
	politeness(t, a.hits(), gap, 0, nil)
	politeness(t, b.hits(), gap, 0, func(p string) bool { return p == "/p/5" })
}

func TestRobotsMissing(t *testing.T) {
	t.Parallel()
	s := &site{Pages: 7, Seed: 9, RobotsStatus: http.StatusNotFound}
	rep := run(t, s.start(t)+"/", nil)
	expect(t, rep)
	if f := finding(t, rep, check.IDRobots); !strings.Contains(f.Message, "no restrictions") || rep.Pages != 7 {
		t.Errorf("robots: %q, %d pages; want no restrictions and all 7 pages", f.Message, rep.Pages)
	}
}

// TestSlowSite: answers that take longer than the time budget allows
// for make the sample smaller, and the check still ends about on time.
func TestSlowSite(t *testing.T) {
	t.Parallel()
	s := &site{Pages: 20, Seed: 10, Slow: func(string) time.Duration { return 250 * time.Millisecond }}
	rep := run(t, s.start(t)+"/", func(c *check.Config) { c.Time = 1200 * time.Millisecond; c.SlowTTFB = time.Second })
	expect(t, rep)
	if !strings.Contains(rep.Cut, "time budget") || rep.Requests > 5 {
		t.Errorf("%d requests, cut %q", rep.Requests, rep.Cut)
	}
}

// TestAbsurdCrawlDelay: a Crawl-delay of more than a day leaves the check
// robots.txt alone, and is a finding of its own.
func TestAbsurdCrawlDelay(t *testing.T) {
	t.Parallel()
	s := &site{Pages: 4, Robots: "User-agent: *\nCrawl-delay: 100000\n"}
	rep := run(t, s.start(t)+"/", nil)
	if len(s.hits()) != 1 {
		t.Errorf("%d requests, want robots.txt alone", len(s.hits()))
	}
	expect(t, rep, check.IDCrawlDelay)
	if f := finding(t, rep, check.IDCrawlDelay); !strings.Contains(f.Message, "more than a day") {
		t.Errorf("message %q", f.Message)
	}
}

// TestSessionRedirect: the start page redirects to itself with a path
// parameter session id, as a servlet container does on a first visit
// without cookies; the page is fetched without it.
func TestSessionRedirect(t *testing.T) {
	t.Parallel()
	s := &site{Pages: 6, Seed: 12}
	s.Handle = map[string]http.HandlerFunc{"/": func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery == "" && !strings.Contains(r.URL.RawPath+r.URL.Path, ";") {
			http.Redirect(w, r, "/index.html;jsessionid=9F2C4B7D1E0A3C5B8D6F4A2E1C0B9D8F", http.StatusFound)
			return
		}
		s.write(w, r, s.page(0, nil), true)
	}, "/index.html": func(w http.ResponseWriter, r *http.Request) { s.write(w, r, s.page(0, nil), true) }}
	rep := run(t, s.start(t)+"/", nil)
	expect(t, rep, check.IDSessionIDs)
	for _, h := range s.hits() {
		if strings.Contains(h.Path, "jsessionid") {
			t.Errorf("fetched %s", h.Path)
		}
	}
}
