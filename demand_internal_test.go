package gentlecrawl

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
)

func testDemand() *demand {
	return newDemand(Config{Continuous: true, RevisitMin: time.Second, RevisitMax: time.Hour, RefreshShare: 0.5})
}

// TestDemandHostsBounded: demand keeps the hosts that have pages counted
// or new URLs waiting; hosts idle otherwise are dropped once they outnumber
// those, and the count of active hosts that shares MaxRate stays exact
// without a pass over the hosts. A crawl that is not continuous keeps
// nothing at all.
func TestDemandHostsBounded(t *testing.T) {
	d := newDemand(Config{Continuous: true, RevisitMin: time.Second, RevisitMax: time.Hour, RefreshShare: 0.5, MaxRate: 10})
	page := &frontier.History{ContentType: "text/html", Observed: []frontier.Observation{{Interval: time.Hour, Before: true}}}
	const hosts = 20_000
	for i := range hosts {
		host := fmt.Sprintf("h%d.test", i)
		d.addFresh(host, 3)
		d.pace(host, time.Second)
		if i%10 == 0 {
			d.count(host, nil, page) // a page counted: active for good
		}
		d.addFresh(host, -3) // its new URLs settled
		if n := len(d.hosts); n > 2*d.active+minIdleKept {
			t.Fatalf("after %d hosts: %d kept for %d active", i+1, n, d.active)
		}
	}
	active := 0
	for _, h := range d.hosts {
		if h.active() {
			active++
		}
	}
	if active != hosts/10 || d.active != active {
		t.Errorf("active hosts: counted %d, kept %d, want %d", d.active, active, hosts/10)
	}
	if got, want := d.budget(d.hosts["h0.test"]), 10.0/float64(hosts/10); got != want {
		t.Errorf("a host's share of MaxRate: %v, want %v", got, want)
	}

	off := newDemand(Config{RevisitMin: time.Second, RevisitMax: time.Hour, RefreshShare: 0.5})
	for i := range 100 {
		off.addFresh(fmt.Sprintf("h%d.test", i), 5)
		off.pace(fmt.Sprintf("h%d.test", i), time.Second)
	}
	if len(off.hosts) != 0 {
		t.Errorf("a crawl that is not continuous kept %d hosts", len(off.hosts))
	}
}

// TestSitemapHints: a page not visited yet is planned from its sitemap's
// <changefreq> while its own visits say nothing; "never" gets the longest
// interval; a hint is taken once; hints beyond the bound are dropped.
func TestSitemapHints(t *testing.T) {
	d := testDemand()
	now := time.Now()
	empty := &frontier.History{URL: "http://a.test/x"}
	plain := d.interval("a.test", empty, now, 0)
	hourly := d.interval("a.test", empty, now, d.changeFreqRate("hourly"))
	never := d.interval("a.test", empty, now, d.changeFreqRate("never"))
	always := d.interval("a.test", empty, now, d.changeFreqRate("always"))
	t.Logf("no hint %v, hourly %v, never %v, always %v", plain, hourly, never, always)
	if !(always < plain && plain < hourly && hourly < never) || never != time.Hour || always != time.Second {
		t.Errorf("intervals: always %v, no hint %v, hourly %v, never %v", always, plain, hourly, never)
	}
	if d.changeFreqRate("sometimes") != 0 {
		t.Error("an unknown changefreq has a rate")
	}
	d.hint("http://a.test/x", now.Add(-time.Hour), "daily")
	d.hint("http://a.test/y", time.Time{}, "")
	if h, ok := d.takeHint("http://a.test/x"); !ok || h.rate != 1.0/86400 {
		t.Errorf("takeHint = %+v, %v", h, ok)
	}
	if _, ok := d.takeHint("http://a.test/x"); ok {
		t.Error("a hint was taken twice")
	}
	if _, ok := d.takeHint("http://a.test/y"); ok {
		t.Error("an empty hint was kept")
	}
	for i := range maxHints + 10 {
		d.hint(fmt.Sprint("http://a.test/", i), now, "")
	}
	if n := len(d.hints); n != maxHints {
		t.Errorf("%d hints kept, want the bound %d", n, maxHints)
	}
}

// TestObserveVisitTrust: a Last-Modified that dates a change between the
// visits is used; one that stays put while the body changed, or moves
// while it stays, makes the page's dates untrusted.
func TestObserveVisitTrust(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	lm := func(t time.Time) http.Header { return http.Header{"Last-Modified": {t.Format(http.TimeFormat)}} }
	prev := &frontier.History{Fetched: t0, LastModified: t0.Add(-time.Hour).Format(http.TimeFormat)}

	first := &frontier.History{}
	observeVisit(nil, first, lm(t0.Add(-48*time.Hour)), false, false, t0)
	if len(first.Observed) != 1 || !first.Observed[0].Before || first.Observed[0].Interval != 48*time.Hour {
		t.Errorf("first visit: %+v", first.Observed)
	}

	for _, tc := range []struct {
		name            string
		hdr             http.Header
		changed, not304 bool
		dated, distrust bool
	}{
		{"dated change", lm(t0.Add(20 * time.Minute)), true, true, true, false},
		{"change under an old date", lm(t0.Add(-time.Hour)), true, true, false, true},
		{"change dated in the future", lm(t0.Add(2 * time.Hour)), true, true, false, true},
		{"date moved, body the same", lm(t0.Add(20 * time.Minute)), false, true, false, true},
		{"no change, same date", lm(t0.Add(-time.Hour)), false, true, false, false},
		{"304", nil, false, false, false, false},
	} {
		h := &frontier.History{}
		observeVisit(prev, h, tc.hdr, tc.changed, !tc.not304, t0.Add(30*time.Minute))
		o := h.Observed[0]
		if o.Interval != 30*time.Minute || o.Changed != tc.changed || o.Dated != tc.dated || h.DatesUnreliable != tc.distrust {
			t.Errorf("%s: %+v, dates unreliable %v", tc.name, o, h.DatesUnreliable)
		}
		if tc.dated && o.Age != 10*time.Minute {
			t.Errorf("%s: age %v, want 10m", tc.name, o.Age)
		}
	}
}

// TestDropLies: the 304s before a change found without validators are
// merged into one undated interval that saw the change.
func TestDropLies(t *testing.T) {
	h := &frontier.History{Observed: []frontier.Observation{
		{Interval: time.Minute, Changed: true, Dated: true, Age: time.Second},
		{Interval: 2 * time.Minute, NotModified: true},
		{Interval: 3 * time.Minute, NotModified: true},
		{Interval: 4 * time.Minute, Changed: true, Dated: true, Age: time.Minute},
	}}
	dropLies(h)
	if len(h.Observed) != 2 || h.Observed[1].Interval != 9*time.Minute || !h.Observed[1].Changed || h.Observed[1].Dated {
		t.Errorf("after dropLies: %+v", h.Observed)
	}
}

// TestTypePriors: a page borrows from pages of its own kind: with the
// same visits, an image on a host whose HTML changes often and whose
// images never do is estimated slower than an HTML page.
func TestTypePriors(t *testing.T) {
	d := testDemand()
	page := func(ct string, age time.Duration) *frontier.History {
		return &frontier.History{ContentType: ct, Observed: []frontier.Observation{{Interval: age, Before: true}}}
	}
	for range 40 {
		d.count("a.test", nil, page("text/html; charset=utf-8", time.Hour))
		d.count("a.test", nil, page("image/png", 400*24*time.Hour))
	}
	hd := d.hosts["a.test"]
	estimate := func(h *frontier.History) float64 {
		prior := hd.priorFor(h)
		return prior.Posterior(observations(h), true)
	}
	html := estimate(page("text/html", 2*time.Hour))
	img := estimate(page("image/png", 2*time.Hour))
	t.Logf("seen once, last changed 2 hours ago: HTML page every %v, image every %v", time.Duration(float64(time.Second)/html), time.Duration(float64(time.Second)/img))
	if !(img < html/2) {
		t.Errorf("image rate %v not well below the HTML page's %v", img, html)
	}
	if hd.rates.Len() != 80 || hd.byType["html"].Len() != 40 || hd.byType["other"].Len() != 40 {
		t.Errorf("counted %d pages, %d HTML, %d other", hd.rates.Len(), hd.byType["html"].Len(), hd.byType["other"].Len())
	}
}
