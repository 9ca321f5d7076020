package simweb

import (
	"bytes"
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// testClock is a settable clock for Config.Now.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

var changeOrigin = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// changesWeb returns a web of one host with Changes ch (nil: none) on a
// test clock at changeOrigin.
func changesWeb(t *testing.T, seed int64, pages int, ch *Changes) (*Web, *Host, *testClock) {
	t.Helper()
	clk := &testClock{t: changeOrigin}
	w := newWeb(t, Config{Seed: seed, Hosts: 1, Now: clk.Now, HostOptions: func(int, string) HostOptions {
		o := HostOptions{Pages: pages}
		if ch != nil {
			c := *ch
			o.Changes = &c
		}
		return o
	}})
	return w, w.Hosts()[0], clk
}

// pagePaths returns the paths of h's HTML pages.
func pagePaths(h *Host) []string {
	var ps []string
	for _, r := range h.Resources() {
		if strings.HasPrefix(r.ContentType, "text/html") {
			ps = append(ps, r.Path)
		}
	}
	return ps
}

func httpDate(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

func TestChangesDeterministic(t *testing.T) {
	ch := &Changes{Rates: []float64{1.0 / 60, 1.0 / 600}, Static: 0.2}
	until := changeOrigin.Add(6 * time.Hour)
	_, h1, _ := changesWeb(t, 7, 30, ch)
	_, h2, _ := changesWeb(t, 7, 30, ch)
	_, h3, _ := changesWeb(t, 8, 30, ch)
	for _, p := range pagePaths(h1) {
		r1, _ := h1.ChangeRate(p)
		r2, _ := h2.ChangeRate(p)
		if r1 != r2 {
			t.Errorf("%s: rates %v and %v", p, r1, r2)
		}
		// Asked in pieces or at once, in another order: the same times.
		c2 := h2.ChangesOf(p, until)
		h1.ChangesOf(p, changeOrigin.Add(time.Hour))
		c1 := h1.ChangesOf(p, until)
		if len(c1) != len(c2) {
			t.Fatalf("%s: %d and %d changes", p, len(c1), len(c2))
		}
		for k := range c1 {
			if !c1[k].Equal(c2[k]) {
				t.Fatalf("%s: change %d at %v and %v", p, k, c1[k], c2[k])
			}
			if !c1[k].After(changeOrigin) || k > 0 && c1[k].Before(c1[k-1]) {
				t.Fatalf("%s: change times out of order: %v", p, c1)
			}
		}
		if r1 > 0 && len(c1) == 0 {
			t.Errorf("%s: rate %v, no change in 6h", p, r1)
		}
	}
	// Another seed gives the pages other times.
	c1, c3 := h1.ChangesOf("/", until), h3.ChangesOf("/", until)
	if len(c1) > 0 && len(c3) > 0 && c1[0].Equal(c3[0]) {
		t.Errorf("seeds 7 and 8 change their home pages at the same time %v", c1[0])
	}
}

// TestChangesServe follows one page through its changes on a test clock:
// body, validators and conditional GETs change exactly at the change
// times.
func TestChangesServe(t *testing.T) {
	w, h, clk := changesWeb(t, 3, 12, &Changes{Rates: []float64{1.0 / 30}})
	_, plain, _ := changesWeb(t, 3, 12, nil)
	path := pagePaths(h)[3]
	res0, _ := h.Resource(path)
	u := h.URL(path)
	changes := h.ChangesOf(path, changeOrigin.Add(10*time.Minute))
	if len(changes) < 5 {
		t.Fatalf("%d changes in 10 minutes at 2/min", len(changes))
	}

	// Before the first change: version 0, byte for byte the page without
	// Changes.
	clk.Set(changes[0].Add(-time.Nanosecond))
	resp, b := fetch(t, w, u)
	presp, pb := fetch(t, plain.web, u)
	if !bytes.Equal(b, pb) || resp.Header.Get("ETag") != presp.Header.Get("ETag") ||
		resp.Header.Get("Last-Modified") != presp.Header.Get("Last-Modified") {
		t.Fatalf("version 0 differs from the page without Changes")
	}
	if h.VersionAt(path, clk.Now()) != 0 {
		t.Fatalf("version before the first change is not 0")
	}

	prevETag, prevLM := res0.ETag, res0.LastModified
	bodies := map[string]int{string(b): 0}
	for k, c := range changes[:5] {
		v := k + 1
		clk.Set(c.Add(-time.Nanosecond))
		if resp, _ := fetch(t, w, u); resp.Header.Get("ETag") != prevETag {
			t.Fatalf("version %d changed before its time: ETag %s", v, resp.Header.Get("ETag"))
		}
		clk.Set(c)
		if got := h.VersionAt(path, c); got != v {
			t.Fatalf("VersionAt(change %d) = %d", v, got)
		}
		resp, b := fetch(t, w, u)
		etag, lm := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
		if !strings.HasSuffix(etag, "-v"+strconv.Itoa(v)+`"`) || etag == prevETag {
			t.Errorf("version %d: ETag %s (before %s)", v, etag, prevETag)
		}
		if lm != httpDate(c) {
			t.Errorf("version %d: Last-Modified %s, want %s", v, lm, httpDate(c))
		}
		want := "Updated: version " + strconv.Itoa(v) + " at " + c.UTC().Format(time.RFC3339Nano)
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("version %d: body lacks %q", v, want)
		}
		if old, ok := bodies[string(b)]; ok {
			t.Errorf("version %d serves the body of version %d", v, old)
		}
		bodies[string(b)] = v
		// The gzipped body is of the same version (the cache is keyed by
		// version).
		gresp := do(w, "GET", u, "Accept-Encoding", "gzip")
		zr, err := gzip.NewReader(gresp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if gb, _ := io.ReadAll(zr); !bytes.Equal(gb, b) {
			t.Errorf("version %d: gzipped body differs", v)
		}
		// 304 exactly for the current version's validators.
		for _, tc := range []struct {
			hdr  []string
			want int
		}{
			{[]string{"If-None-Match", etag}, 304},
			{[]string{"If-None-Match", prevETag}, 200},
			{[]string{"If-None-Match", res0.ETag}, 200},
			{[]string{"If-Modified-Since", lm}, 304},
		} {
			if got := do(w, "GET", u, tc.hdr...).StatusCode; got != tc.want {
				t.Errorf("version %d, %q: status %d, want %d", v, tc.hdr, got, tc.want)
			}
		}
		if prevLM.Truncate(time.Second).Before(c.Truncate(time.Second)) {
			if got := do(w, "GET", u, "If-Modified-Since", httpDate(prevLM)).StatusCode; got != 200 {
				t.Errorf("version %d, If-Modified-Since of version %d: status %d", v, k, got)
			}
		}
		prevETag, prevLM = etag, c
	}
	// Resources still describe version 0.
	if r, _ := h.Resource(path); r.ETag != res0.ETag || r.Size != len(pb) {
		t.Errorf("Resource changed with the versions: %+v", r)
	}
}

func TestChangesStatic(t *testing.T) {
	w, h, clk := changesWeb(t, 5, 20, &Changes{Rates: []float64{1}, Static: 1})
	_, plain, _ := changesWeb(t, 5, 20, nil)
	clk.Set(changeOrigin.Add(24 * time.Hour))
	for _, p := range pagePaths(h) {
		if c := h.ChangesOf(p, clk.Now()); c != nil {
			t.Errorf("%s: static page changed at %v", p, c)
		}
		if r, ok := h.ChangeRate(p); !ok || r != 0 {
			t.Errorf("%s: ChangeRate %v, %v", p, r, ok)
		}
		_, b := fetch(t, w, h.URL(p))
		_, pb := fetch(t, plain.web, h.URL(p))
		if !bytes.Equal(b, pb) {
			t.Errorf("%s: static page differs from the page without Changes", p)
		}
	}
	// About half static with Static 0.5.
	_, h2, _ := changesWeb(t, 5, 400, &Changes{Rates: []float64{1}, Static: 0.5})
	static := 0
	paths := pagePaths(h2)
	for _, p := range paths {
		if r, _ := h2.ChangeRate(p); r == 0 {
			static++
		}
	}
	if f := float64(static) / float64(len(paths)); f < 0.4 || f > 0.6 {
		t.Errorf("Static 0.5: %d of %d pages static", static, len(paths))
	}
}

func TestChangesLying(t *testing.T) {
	w, h, clk := changesWeb(t, 9, 10, &Changes{Rates: []float64{1.0 / 10}, Lying: true})
	path := pagePaths(h)[2]
	res0, _ := h.Resource(path)
	u := h.URL(path)
	_, b0 := fetch(t, w, u)
	changes := h.ChangesOf(path, changeOrigin.Add(time.Hour))
	clk.Set(changes[2])
	resp, b := fetch(t, w, u)
	if bytes.Equal(b, b0) || !bytes.Contains(b, []byte("Updated: version 3 ")) {
		t.Errorf("the content did not change")
	}
	if resp.Header.Get("ETag") != res0.ETag || resp.Header.Get("Last-Modified") != httpDate(res0.LastModified) {
		t.Errorf("lying validators changed: %s %s", resp.Header.Get("ETag"), resp.Header.Get("Last-Modified"))
	}
	if got := do(w, "GET", u, "If-None-Match", res0.ETag).StatusCode; got != 304 {
		t.Errorf("version 0's ETag: status %d, want a lying 304", got)
	}
	if got := do(w, "GET", u, "If-Modified-Since", httpDate(res0.LastModified)).StatusCode; got != 304 {
		t.Errorf("version 0's date: status %d, want a lying 304", got)
	}
}

// TestChangesRate checks that the changes of each page over a long window
// are as many as its drawn rate says, within a statistical tolerance, and
// that the rates are drawn from the whole mix.
func TestChangesRate(t *testing.T) {
	rates := []float64{1.0 / 60, 1.0 / 600, 1.0 / 3600}
	_, h, _ := changesWeb(t, 11, 300, &Changes{Rates: rates})
	window := 30 * 24 * time.Hour
	until := changeOrigin.Add(window)
	drawn := map[float64]int{}
	var sumN, sumMean float64
	for _, p := range pagePaths(h) {
		rate, _ := h.ChangeRate(p)
		drawn[rate]++
		n := float64(len(h.ChangesOf(p, until)))
		mean := rate * window.Seconds()
		// A Poisson count: 5 standard deviations (a false alarm about
		// once in 3.5 million pages).
		if math.Abs(n-mean) > 5*math.Sqrt(mean) {
			t.Errorf("%s: %v changes in %v at rate %v (mean %v)", p, n, window, rate, mean)
		}
		sumN += n
		sumMean += mean
	}
	if math.Abs(sumN-sumMean) > 5*math.Sqrt(sumMean) {
		t.Errorf("%v changes in all, mean %v", sumN, sumMean)
	}
	for _, r := range rates {
		if drawn[r] < 60 {
			t.Errorf("rate %v drawn for %d pages of 300", r, drawn[r])
		}
	}
}

func TestStaleness(t *testing.T) {
	_, h, _ := changesWeb(t, 13, 10, &Changes{Rates: []float64{1.0 / 60}})
	path := pagePaths(h)[1]
	from, to := changeOrigin, changeOrigin.Add(time.Hour)
	span := to.Sub(from).Seconds()
	changes := h.ChangesOf(path, to)
	if len(changes) < 10 {
		t.Fatalf("%d changes in an hour at 1/min", len(changes))
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }

	if got := h.Staleness(path, nil, from, to); got != 1 {
		t.Errorf("never fetched: %v, want 1", got)
	}
	// Fetched at from and then 1s after each change: stale 1s per change.
	const lag = time.Second
	fetches := []time.Time{from}
	for _, c := range changes {
		fetches = append(fetches, c.Add(lag))
	}
	last := changes[len(changes)-1]
	want := (float64(len(changes)-1)*lag.Seconds() + min(to.Sub(last), lag).Seconds()) / span
	if got := h.Staleness(path, fetches, from, to); !near(got, want) || got > 0.05 {
		t.Errorf("fetched 1s after each change: %v, want %v", got, want)
	}
	// The same fetches in another order.
	rev := append([]time.Time(nil), fetches...)
	for l, r := 0, len(rev)-1; l < r; l, r = l+1, r-1 {
		rev[l], rev[r] = rev[r], rev[l]
	}
	if got := h.Staleness(path, rev, from, to); !near(got, want) {
		t.Errorf("fetches reversed: %v, want %v", got, want)
	}
	// Fetched at each change exactly: the new version, never stale.
	if got := h.Staleness(path, append([]time.Time{from}, changes...), from, to); got != 0 {
		t.Errorf("fetched at each change: %v, want 0", got)
	}
	// Fetched once at from: stale from the first change on.
	if got, want := h.Staleness(path, []time.Time{from}, from, to), to.Sub(changes[0]).Seconds()/span; !near(got, want) {
		t.Errorf("fetched once: %v, want %v", got, want)
	}
	// First fetched half-way, before from too: stale until the fetch
	// inside the window, and after the first change following it.
	mid := from.Add(30 * time.Minute)
	var after time.Time
	for _, c := range changes {
		if c.After(mid) {
			after = c
			break
		}
	}
	want = (mid.Sub(changes[0]).Seconds() + to.Sub(after).Seconds()) / span
	if got := h.Staleness(path, []time.Time{from.Add(-time.Hour), mid}, from, to); !near(got, want) {
		t.Errorf("fetched before the window and half-way: %v, want %v", got, want)
	}
	// A page that never changes is fresh from its first fetch.
	_, hs, _ := changesWeb(t, 13, 10, &Changes{Rates: []float64{1}, Static: 1})
	if got := hs.Staleness(path, []time.Time{from.Add(15 * time.Minute)}, from, to); !near(got, 0.25) {
		t.Errorf("static page fetched at a quarter: %v, want 0.25", got)
	}
	if got := h.Staleness("/no/such/page", nil, from, to); !math.IsNaN(got) {
		t.Errorf("unknown path: %v, want NaN", got)
	}
	if got := h.Staleness(path, nil, to, from); got != 0 {
		t.Errorf("empty window: %v, want 0", got)
	}
}

// TestChangesDefaultStart checks that the changes start at the Web's clock
// when New is called, and that old dates are moved before it.
func TestChangesDefaultStart(t *testing.T) {
	early := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC) // a synctest bubble's epoch
	clk := &testClock{t: early}
	w := newWeb(t, Config{Hosts: 1, Now: clk.Now, HostOptions: func(int, string) HostOptions {
		return HostOptions{Changes: &Changes{Rates: []float64{1}}}
	}})
	h := w.Hosts()[0]
	if got := h.Options().Changes.Start; !got.Equal(early) {
		t.Errorf("Start %v, want %v", got, early)
	}
	for _, r := range h.Resources() {
		if strings.HasPrefix(r.ContentType, "text/html") && !r.LastModified.Before(early) {
			t.Errorf("%s: version 0 Last-Modified %v not before Start", r.Path, r.LastModified)
		}
		if c := h.ChangesOf(r.Path, early.Add(time.Minute)); len(c) > 0 && !c[0].After(early) {
			t.Errorf("%s: change at %v, not after Start", r.Path, c[0])
		}
	}
}

func TestChangesConfigErrors(t *testing.T) {
	for _, c := range []*Changes{
		{},
		{Rates: []float64{-1}},
		{Rates: []float64{math.NaN()}},
		{Rates: []float64{math.Inf(1)}},
		{Rates: []float64{1}, Static: 1.5},
		{Rates: []float64{1}, Static: -0.1},
	} {
		if _, err := New(Config{Hosts: 1, HostOptions: func(int, string) HostOptions { return HostOptions{Changes: c} }}); err == nil {
			t.Errorf("Changes %+v accepted", *c)
		}
	}
	if _, err := New(Config{Hosts: 1, HostOptions: func(int, string) HostOptions {
		return HostOptions{Shop: &Shop{}, Changes: &Changes{Rates: []float64{1}}}
	}}); err == nil {
		t.Errorf("Shop with Changes accepted")
	}
}
