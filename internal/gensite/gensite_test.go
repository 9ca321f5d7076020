package gensite

import (
	"bytes"
	"flag"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// links returns the site-relative targets of a page's <a href="…">s,
// without fragments. The generated HTML always writes href first and
// double-quoted, but the scan does not rely on it.
func links(body []byte) []string {
	var out []string
	for {
		i := bytes.Index(body, []byte("<a "))
		if i < 0 {
			return out
		}
		body = body[i+3:]
		end := bytes.IndexByte(body, '>')
		if end < 0 {
			return out
		}
		tag := body[:end]
		j := bytes.Index(tag, []byte(`href="`))
		if j < 0 {
			continue
		}
		v := tag[j+6:]
		k := bytes.IndexByte(v, '"')
		if k < 0 {
			continue
		}
		u := html.UnescapeString(string(v[:k]))
		if h := strings.IndexByte(u, '#'); h >= 0 {
			u = u[:h]
		}
		if strings.HasPrefix(u, "/") && !strings.HasPrefix(u, "//") {
			out = append(out, u)
		}
	}
}

type crawlResult struct {
	fetched    int
	discovered map[string]bool
	status     map[string]int
	realSeen   int
	maxDepth   int // of a real page
}

var fullCrawl = flag.Bool("gensite.full", false, "crawl every site to the 20,000-request cap (slow) instead of stopping once every real page was fetched and the traps are 3× the site")

// crawl fetches the site breadth first from "/", following every link and
// redirect, until the frontier is empty or limit requests were made. When
// stopWhenDone, it stops early once every real page was fetched and three
// times as many URLs as real pages were found.
func crawl(t *testing.T, s *Site, limit int, stopWhenDone bool) crawlResult {
	real := map[string]bool{}
	for _, u := range s.RealPages() {
		real[u] = true
	}
	res := crawlResult{discovered: map[string]bool{"/": true}, status: map[string]int{}}
	type item struct {
		u     string
		depth int
	}
	queue := []item{{"/", 0}}
	for len(queue) > 0 && res.fetched < limit {
		it := queue[0]
		queue = queue[1:]
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, it.u, nil)
		req.RequestURI = it.u
		s.ServeHTTP(rec, req)
		res.fetched++
		res.status[it.u] = rec.Code
		if real[it.u] {
			res.realSeen++
			res.maxDepth = max(res.maxDepth, it.depth)
		}
		if stopWhenDone && res.realSeen == len(real) && len(res.discovered) >= 3*len(real) {
			break
		}
		var next []string
		switch rec.Code {
		case http.StatusOK:
			if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Errorf("%s: Content-Type %q", it.u, ct)
			}
			next = links(rec.Body.Bytes())
		case http.StatusFound:
			loc := rec.Header().Get("Location")
			if i := strings.IndexByte(loc, '#'); i >= 0 {
				loc = loc[:i]
			}
			next = []string{loc}
		}
		for _, u := range next {
			if !res.discovered[u] {
				res.discovered[u] = true
				queue = append(queue, item{u, it.depth + 1})
			}
		}
	}
	return res
}

func seeds(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i*7919 + 1)
	}
	return out
}

func TestNewAllSeeds(t *testing.T) {
	for _, k := range Kinds {
		for seed := int64(0); seed < 200; seed++ {
			s, err := New(k, seed)
			if err != nil {
				t.Fatalf("%s %d: %v", k, seed, err)
			}
			if n := len(s.RealPages()); n < 250 || n > 700 {
				t.Errorf("%s %d: %d real pages", k, seed, n)
			}
		}
	}
	if _, err := New("blog", 1); err == nil {
		t.Error("New accepted an unknown kind")
	}
}

func TestDeterministic(t *testing.T) {
	for _, k := range Kinds {
		a, _ := New(k, 42)
		b, _ := New(k, 42)
		if a.Describe() != b.Describe() || !slices.Equal(a.RealPages(), b.RealPages()) {
			t.Fatalf("%s: two sites of one seed differ", k)
		}
		res := crawl(t, a, 300, false)
		n := 0
		for u := range res.discovered {
			if n++; n > 300 {
				break
			}
			sa, ba := a.Body(u)
			sb, bb := b.Body(u)
			if sa != sb || !bytes.Equal(ba, bb) {
				t.Fatalf("%s: %s differs between two sites of one seed", k, u)
			}
			if _, bc := a.Body(u); !bytes.Equal(ba, bc) {
				t.Fatalf("%s: %s differs between two requests", k, u)
			}
		}
	}
}

// TestSurfacesDiffer checks that 20 seeds draw different URL surfaces: the
// set of parameter names and first path segments differs between seeds.
func TestSurfacesDiffer(t *testing.T) {
	for _, k := range Kinds {
		seen := map[string]int64{}
		names := map[string]bool{}
		for _, seed := range seeds(20) {
			s, _ := New(k, seed)
			var sig []string
			for n := range s.c.usedParams {
				sig = append(sig, n)
				names[n] = true
			}
			slices.Sort(sig)
			key := strings.Join(sig, ",") + "|" + s.RealPages()[len(s.RealPages())/2]
			if other, dup := seen[key]; dup {
				t.Errorf("%s: seeds %d and %d have the same surface %s", k, other, seed, key)
			}
			seen[key] = seed
		}
		if len(names) < 20 {
			t.Errorf("%s: only %d parameter names over 20 seeds", k, len(names))
		}
		t.Logf("%s: %d distinct parameter names over 20 seeds", k, len(names))
	}
}

func TestRobotsAndUnknown(t *testing.T) {
	for _, k := range Kinds {
		s, _ := New(k, 7)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/robots.txt", nil))
		if rec.Code != 200 || rec.Body.String() != "User-agent: *\nAllow: /\n" || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
			t.Errorf("%s: robots.txt: %d %q", k, rec.Code, rec.Body.String())
		}
		if s.FamilyOf("/robots.txt") != FamRobots {
			t.Errorf("%s: robots.txt family %q", k, s.FamilyOf("/robots.txt"))
		}
		real := s.RealPages()
		unknown := []string{"/no-such-page", "/no/such/page/", "/?x=1", "/?page=2", "/%zz", "/index.html"}
		for _, u := range real[:40] {
			unknown = append(unknown, addParam(u, "zzunknown", "1"), u+"zz", strings.TrimSuffix(u, "/")+"/zz/")
			if strings.Contains(u, "?") {
				unknown = append(unknown, u+"9x")
			}
		}
		for _, u := range unknown {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.RequestURI = u
			s.ServeHTTP(rec, req)
			if rec.Code != 404 || s.FamilyOf(u) != FamNotFound {
				if _, ok := s.PageOf(u); ok || rec.Code != 404 {
					t.Errorf("%s: %s: status %d family %q, want 404", k, u, rec.Code, s.FamilyOf(u))
				}
			}
			if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Errorf("%s: %s: Content-Type %q", k, u, ct)
			}
		}
		if got := s.Requests(); len(got) != len(unknown)+1 || got[0] != (Request{"/robots.txt", 200}) {
			t.Errorf("%s: log has %d entries, first %v", k, len(got), got[0])
		}
	}
}

// TestCrawl is the ground-truth check: a breadth-first crawl that follows
// every link reaches every real page within 20,000 requests, every URL
// answers as FamilyOf says, and the traps are far larger than the site.
// It crawls 20 seeds of each kind, 4 under -short or -race, or
// GENTLECRAWL_GENSITE_SEEDS.
func TestCrawl(t *testing.T) {
	n := 20
	if testing.Short() || raceEnabled {
		n = 4
	}
	if v, _ := strconv.Atoi(os.Getenv("GENTLECRAWL_GENSITE_SEEDS")); v > 0 {
		n = v // scripts/test: 4, as under -race
	}
	for _, k := range Kinds {
		for _, seed := range seeds(n) {
			t.Run(fmt.Sprintf("%s-%d", k, seed), func(t *testing.T) {
				t.Parallel()
				checkCrawl(t, k, seed)
			})
		}
	}
}

func checkCrawl(t *testing.T, k Kind, seed int64) {
	s, err := New(k, seed)
	if err != nil {
		t.Fatal(err)
	}
	real := s.RealPages()
	realSet := map[string]bool{}
	for _, u := range real {
		realSet[u] = true
		if p, ok := s.PageOf(u); !ok || p != u {
			t.Errorf("PageOf(%s) = %q, %v", u, p, ok)
		}
		if f := s.FamilyOf(u); f != "" {
			t.Errorf("FamilyOf(%s) = %q for a real page", u, f)
		}
		if st := s.Status(u); st != 200 {
			t.Errorf("%s: status %d", u, st)
		}
	}
	res := crawl(t, s, 20000, !*fullCrawl)
	if res.realSeen != len(real) {
		var missed []string
		for _, u := range real {
			if _, ok := res.status[u]; !ok {
				missed = append(missed, u)
			}
		}
		t.Errorf("crawl of %d requests reached %d of %d real pages; missed e.g. %v", res.fetched, res.realSeen, len(real), missed[:min(5, len(missed))])
	}
	fam := map[string]int{}
	for u := range res.discovered {
		fam[s.FamilyOf(u)]++
	}
	for _, f := range mustHave[k] {
		if fam[f] == 0 {
			t.Errorf("no URL of family %s found", f)
		}
	}
	broken := 0
	for u, st := range res.status {
		f := s.FamilyOf(u)
		pg, full := s.PageOf(u)
		switch {
		case st == 404:
			broken++
			if f != FamNotFound {
				t.Errorf("%s: 404 but family %q", u, f)
			}
		case f == FamNotFound:
			t.Errorf("%s: family 404 but status %d", u, st)
		case f == "" && !realSet[u]:
			t.Errorf("%s: family \"\" but not a real page", u)
		case full && !realSet[pg]:
			t.Errorf("%s: PageOf gives %s, not a real page", u, pg)
		}
		switch f {
		case FamDefault, FamTracking, FamParamOrder, FamEncoding, FamExtraParam, FamPostLink:
			if !full {
				t.Errorf("%s: family %s but PageOf false", u, f)
			} else if _, b1 := s.Body(u); !bytes.Equal(b1, mustBody(s, pg)) {
				t.Errorf("%s (%s) does not serve %s in full", u, f, pg)
			}
		case "":
		default:
			if full {
				t.Errorf("%s: trap family %s but PageOf gives %s", u, f, pg)
			}
		}
	}
	if broken > 12 {
		t.Errorf("%d broken links", broken)
	}
	ratio := float64(len(res.discovered)) / float64(len(real))
	more := ""
	if res.fetched >= 20000 || !*fullCrawl {
		more = "≥"
	}
	t.Logf("%s seed %d: %d real pages, %d requests, %s%d distinct URLs reachable (%s%.1f× the real pages), real pages at depth ≤ %d, families %v",
		k, seed, len(real), res.fetched, more, len(res.discovered), more, ratio, res.maxDepth, fam)
	if ratio < 3 {
		t.Errorf("only %.1f× as many reachable URLs as real pages", ratio)
	}
	// Every family seen has a non-empty sample of pages that render.
	if len(fam) < 3 {
		t.Errorf("only families %v", fam)
	}
}

// mustHave lists the trap families every site of a kind has.
var mustHave = map[Kind][]string{
	Shop:  {FamFacet, FamSort, FamPerPage, FamAction},
	News:  {FamFilter, FamTagX, FamSort},
	Forum: {FamSort, FamDayRange, FamPrint},
	Wiki:  {FamHistory, FamRevision, FamDiff, FamAction},
}

func mustBody(s *Site, u string) []byte {
	_, b := s.Body(u)
	return b
}

// TestConcurrent serves a site of every kind from many goroutines, its
// real pages and the other URLs they link to, and checks that the log has
// every request and that each URL answers as when served alone. It is the
// package's test of concurrent use: scripts/test runs it with -race, and
// the others, which serve a site from one goroutine, without.
func TestConcurrent(t *testing.T) {
	for _, k := range Kinds {
		s, _ := New(k, 3)
		ref, _ := New(k, 3) // served from one goroutine, for the expected answers
		srv := httptest.NewServer(s)
		defer srv.Close()
		var urls []string
		seen := map[string]bool{}
		for _, u := range s.RealPages()[:32] {
			urls = append(urls, u)
			_, body := ref.Body(u)
			for _, l := range links(body) {
				if !seen[l] && len(urls) < 96 {
					seen[l] = true
					urls = append(urls, l)
				}
			}
		}
		type answer struct {
			status   int
			body     []byte
			location string // of a redirect, whose body Body leaves out
		}
		want := make([]answer, len(urls))
		for i, u := range urls {
			want[i].status, want[i].body = ref.Body(u)
			want[i].location = ref.Location(u)
		}
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
				for i := g; i < len(urls); i += 8 {
					resp, err := c.Get(srv.URL + urls[i])
					if err != nil {
						t.Error(err)
						return
					}
					body, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil {
						t.Error(err)
						return
					}
					w := want[i]
					if w.location != "" {
						body = nil
					}
					if resp.StatusCode != w.status || !bytes.Equal(body, w.body) || resp.Header.Get("Location") != w.location {
						t.Errorf("%s %s: status %d, %d bytes, Location %q; want %d, %d bytes, %q", k, urls[i], resp.StatusCode, len(body), resp.Header.Get("Location"), w.status, len(w.body), w.location)
					}
				}
			}(g)
		}
		wg.Wait()
		if n := len(s.Requests()); n != len(urls) {
			t.Errorf("%s: log has %d requests, want %d", k, n, len(urls))
		}
	}
}

// TestHints checks that the crawler hints are drawn: on in some seeds, off
// in others, absent together in a good share, and present on variant pages
// exactly when drawn.
func TestHints(t *testing.T) {
	for _, k := range Kinds {
		none := 0
		var on [3]int
		for _, seed := range seeds(20) {
			s, _ := New(k, seed)
			h := s.c.hint
			if !h.canonical && !h.nofollow && h.robots == "" {
				none++
			}
			for i, b := range []bool{h.canonical, h.nofollow, h.robots != ""} {
				if b {
					on[i]++
				}
			}
			res := crawl(t, s, 150, false)
			var sawCanon, sawNofollow, sawRobots bool
			for u, st := range res.status {
				if st != 200 {
					continue
				}
				_, b := s.Body(u)
				sawCanon = sawCanon || bytes.Contains(b, []byte(`rel="canonical"`))
				sawNofollow = sawNofollow || bytes.Contains(b, []byte(`rel="nofollow"`)) && !bytes.Contains(b, []byte(`wikilink-missing`))
				sawRobots = sawRobots || bytes.Contains(b, []byte(`name="robots"`))
				if f := s.FamilyOf(u); h.canonical && f != "" {
					if p, ok := s.PageOf(u); ok && !bytes.Contains(b, []byte(`<link rel="canonical" href="`+html.EscapeString(p)+`">`)) {
						t.Errorf("%s %d: %s (%s) lacks its canonical link to %s", k, seed, u, f, p)
					}
				}
			}
			if sawCanon != h.canonical || sawRobots != (h.robots != "") || (sawNofollow && !h.nofollow) {
				t.Errorf("%s %d: hints %+v but saw canonical %v, nofollow %v, robots %v", k, seed, h, sawCanon, sawNofollow, sawRobots)
			}
		}
		if none < 5 || none == 20 || on[0] == 0 || on[1] == 0 || on[2] == 0 || on[0] == 20 || on[1] == 20 || on[2] == 20 {
			t.Errorf("%s: %d of 20 seeds without hints; canonical, nofollow, robots on in %v", k, none, on)
		}
	}
}

// TestRevisions checks that each wiki revision changes 5–15 % of the
// words of the one before and keeps the links.
func TestRevisions(t *testing.T) {
	s, _ := New(Wiki, 5)
	w := s.impl.(*wiki)
	for i := 0; i < 20; i++ {
		for k := 1; k < len(w.pages[i].revs); k++ {
			a, b := w.texts(i, k-1, k)
			words, changed := 0, 0
			for pi := range b {
				for ti := range b[pi].toks {
					if b[pi].toks[ti].link != a[pi].toks[ti].link {
						t.Fatalf("page %d revision %d moved a link", i, k)
					}
					words++
					if b[pi].toks[ti].w != a[pi].toks[ti].w {
						changed++
					}
				}
			}
			if pct := changed * 100 / words; pct < 3 || pct > 16 {
				t.Errorf("page %d revision %d changed %d%% of the words", i, k, pct)
			}
		}
	}
}

// TestAMPDrawn checks that AMP copies exist in some news seeds only.
func TestAMPDrawn(t *testing.T) {
	with := 0
	for _, seed := range seeds(20) {
		s, _ := New(News, seed)
		n := s.impl.(*news)
		if n.amp == 0 {
			continue
		}
		with++
		u := n.ampURI(3)
		if f := s.FamilyOf(u); f != FamAMP {
			t.Errorf("seed %d: %s is family %q", seed, u, f)
		}
		_, amp := s.Body(u)
		_, full := s.Body(n.artURI(3))
		for _, p := range n.body(3) {
			if !bytes.Contains(amp, []byte(html.EscapeString(p))) || !bytes.Contains(full, []byte(html.EscapeString(p))) {
				t.Errorf("seed %d: the AMP copy's text differs from the article's", seed)
			}
		}
		if bytes.Contains(amp, []byte("<aside")) {
			t.Errorf("seed %d: the AMP copy has a sidebar", seed)
		}
	}
	if with == 0 || with == 20 {
		t.Errorf("AMP in %d of 20 seeds", with)
	}
}

// BenchmarkNew measures building a web of each kind: a test makes one for
// every seed it crawls.
func BenchmarkNew(b *testing.B) {
	for _, k := range Kinds {
		b.Run(string(k), func(b *testing.B) {
			for i := range b.N {
				if _, err := New(k, int64(i%200)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
