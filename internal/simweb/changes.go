package simweb

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Changes makes the ordinary HTML pages of a host (the pages of
// Host.Resources; not its files, robots.txt, trap or shop pages) change
// over time, so that a crawler's revisit schedule can be measured against
// the truth (HostOptions.Changes).
//
// Each page changes as a Poisson process: its change times are
// Start+g₁, Start+g₁+g₂, … with independent exponential gaps of mean
// 1/rate, drawn from a random stream of the page's own that depends only
// on (Config.Seed, host, page), so they can be recomputed at any time
// (Host.ChangesOf). The page's rate is drawn once from the same seed: with
// probability Static it is 0 (the page never changes), otherwise it is one
// of Rates, each equally likely (Host.ChangeRate).
//
// At time t (the Web's clock, Config.Now) a page serves its version v, the
// number of its change times ≤ t. Version 0 is the page as it is without
// Changes. Version v > 0 adds, before the end of <main>, a section
// "Updated: version v at <change time>" and words drawn from (page, v);
// its links stay those of version 0 (Resource.Links). Its Last-Modified is
// its latest change time (truncated to the second, as HTTP dates are) and
// its ETag is version 0's with "-v<v>" appended inside the quotes, so a
// conditional GET answers 304 exactly when the client's validators are
// those of the current version. (If-Modified-Since is compared at the
// one-second resolution of HTTP dates: a client whose copy was replaced in
// the same second it was made gets 304 for it. ETags are exact.) Version
// 0's Last-Modified is the page's old date, moved to one second before
// Start if it was not earlier, so that Last-Modified never goes back.
//
// Host.Resources still describes version 0 (its Size and validators).
// The change times drawn are kept, so memory grows with the number of
// changes a page has had: rates of many changes per second suit short
// tests only.
type Changes struct {
	// Rates are the change rates to draw from, in changes per second
	// (1.0/3600: about once an hour); each must be finite and ≥ 0 (0:
	// never). At least one is required.
	Rates []float64
	// Static is the probability, 0..1, that a page never changes whatever
	// Rates says: about that fraction of the host's pages is static.
	Static float64
	// Lying makes the validators lie: every version keeps version 0's
	// ETag and Last-Modified, so conditional GETs answer 304 however the
	// content has changed.
	Lying bool
	// Start is the origin of the change times: every change is after it.
	// The default (zero) is the Web's clock (Config.Now) when New is
	// called.
	Start time.Time
}

// withDefaults validates c and returns a copy that shares nothing with
// the caller's. Start is filled in by New.
func (c Changes) withDefaults() (Changes, error) {
	if len(c.Rates) == 0 {
		return c, fmt.Errorf("%w: Changes.Rates is empty", errConfig)
	}
	for _, r := range c.Rates {
		if !(r >= 0) || math.IsInf(r, 0) {
			return c, fmt.Errorf("%w: Changes.Rates: %v is not a finite rate ≥ 0", errConfig, r)
		}
	}
	if !(c.Static >= 0 && c.Static <= 1) {
		return c, fmt.Errorf("%w: Changes.Static %v not in 0..1", errConfig, c.Static)
	}
	c.Rates = append([]float64(nil), c.Rates...)
	return c, nil
}

// pageChanges are the change times of one page, drawn lazily.
type pageChanges struct {
	rate float64 // changes per second; 0: never

	mu     sync.Mutex
	rng    *rand.Rand  // the exponential gaps, in units of 1/rate
	offset float64     // seconds from Start to the last time drawn
	times  []time.Time // drawn so far, in order
}

// changeState is the per-page change processes of a host with Changes.
type changeState struct {
	once  sync.Once
	pages []*pageChanges // by resource index, for the pages of the skeleton
}

// changeStreams of a page: its rate, and its gaps. The gaps are drawn in
// units of the mean gap, so a page's change times only scale with its
// rate.
const (
	changeRateStream = 0xc4a9e001
	changeGapStream  = 0xc4a9e002
	changeTextStream = 0xc4a9e003
)

// changeProcs returns the change processes of h's pages, or nil when h
// has no Changes.
func (h *Host) changeProcs() []*pageChanges {
	c := h.opts.Changes
	if c == nil || h.opts.Shop != nil {
		return nil
	}
	h.changes.once.Do(func() {
		sk := h.skeleton()
		h.changes.pages = make([]*pageChanges, sk.pages)
		for i := range sk.pages {
			seed := sk.res[i].seed
			rr := rand.New(rand.NewPCG(seed, changeRateStream))
			p := &pageChanges{rng: rand.New(rand.NewPCG(seed, changeGapStream))}
			static := rr.Float64() < c.Static
			p.rate = c.Rates[rr.IntN(len(c.Rates))]
			if static {
				p.rate = 0
			}
			h.changes.pages[i] = p
		}
	})
	return h.changes.pages
}

// upTo returns the change times of p up to and including t. The result
// is shared: callers must not modify it.
func (p *pageChanges) upTo(start, t time.Time) []time.Time {
	if p.rate == 0 || !t.After(start) {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.times) == 0 || !p.times[len(p.times)-1].After(t) {
		p.offset += p.rng.ExpFloat64() / p.rate
		p.times = append(p.times, start.Add(time.Duration(p.offset*1e9)))
	}
	n := sort.Search(len(p.times), func(k int) bool { return p.times[k].After(t) })
	return p.times[:n:n]
}

// version returns the version of resource i of h at t and the time of its
// latest change (zero for version 0).
func (h *Host) version(i int, t time.Time) (int, time.Time) {
	procs := h.changeProcs()
	if i >= len(procs) {
		return 0, time.Time{}
	}
	ts := procs[i].upTo(h.opts.Changes.Start, t)
	if len(ts) == 0 {
		return 0, time.Time{}
	}
	return len(ts), ts[len(ts)-1]
}

// validators returns the Last-Modified and ETag of version v of resource
// i, whose latest change was at changed.
func (h *Host) validators(i, v int, changed time.Time) (time.Time, string) {
	res := &h.skeleton().res[i]
	if v == 0 || h.opts.Changes.Lying {
		return res.lastModified, res.etag
	}
	return changed.Truncate(time.Second), fmt.Sprintf(`%s-v%d"`, strings.TrimSuffix(res.etag, `"`), v)
}

// clampChangeDates moves the Last-Modified of the pages of sk to before
// start, so that no later version has an earlier date.
func clampChangeDates(sk *skeleton, start time.Time) {
	limit := start.Truncate(time.Second).Add(-time.Second)
	for i := range sk.pages {
		if sk.res[i].lastModified.After(limit) {
			sk.res[i].lastModified = limit
		}
	}
}

// versionBody returns body (version 0 of page i) as version v, changed at
// the given time: a new section before the end of <main>.
func (h *Host) versionBody(i int, body []byte, v int, changed time.Time) []byte {
	res := &h.skeleton().res[i]
	rng := rand.New(rand.NewPCG(res.seed^changeTextStream, uint64(v)))
	var b strings.Builder
	fmt.Fprintf(&b, "<section class=\"update\">\n<p>Updated: version %d at %s</p>\n<p>", v, changed.UTC().Format(time.RFC3339Nano))
	for k := range 20 + rng.IntN(60) {
		if k > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[rng.IntN(len(words))])
	}
	b.WriteString(".</p>\n</section>\n")
	at := strings.LastIndex(string(body), "</main>")
	if at < 0 {
		at = len(body)
	}
	out := make([]byte, 0, len(body)+b.Len())
	out = append(out, body[:at]...)
	out = append(out, b.String()...)
	return append(out, body[at:]...)
}

// pageIndex returns the resource index of path on h.
func (h *Host) pageIndex(path string) (int, bool) {
	if h.opts.Shop != nil {
		return 0, false
	}
	i, ok := h.skeleton().byPath[path]
	return i, ok
}

// ChangeRate returns the change rate drawn for the resource at path
// (escaped, with the query if any), in changes per second: 0 for a page
// that never changes, for a file and for every resource of a host without
// Changes. It reports false when h has no such resource.
func (h *Host) ChangeRate(path string) (float64, bool) {
	i, ok := h.pageIndex(path)
	if !ok {
		return 0, false
	}
	if procs := h.changeProcs(); i < len(procs) {
		return procs[i].rate, true
	}
	return 0, true
}

// ChangesOf returns the times at which the resource at path changed, in
// order, from Changes.Start up to and including until: the ground truth
// of its versions (version v is served from the v-th time on). It is nil
// for a resource that never changes and for a path that is not h's.
func (h *Host) ChangesOf(path string, until time.Time) []time.Time {
	i, ok := h.pageIndex(path)
	if !ok {
		return nil
	}
	procs := h.changeProcs()
	if i >= len(procs) {
		return nil
	}
	return append([]time.Time(nil), procs[i].upTo(h.opts.Changes.Start, until)...)
}

// VersionAt returns the version of the resource at path that h serves at
// t: the number of its changes up to and including t (0 for a resource
// that never changes and for a path that is not h's).
func (h *Host) VersionAt(path string, t time.Time) int {
	i, ok := h.pageIndex(path)
	if !ok {
		return 0
	}
	v, _ := h.version(i, t)
	return v
}

// Staleness returns the fraction of [from, to] during which a crawler
// that fetched the resource at path at the given times (in any order)
// held an out-of-date copy: at instant t its copy is the version served at
// its latest fetch f ≤ t, and it is out of date when the resource changed
// in (f, t] — or when there is no fetch ≤ t yet. A fetch at the very
// instant of a change gets the new version. Outages and refusals are not
// considered: every time given counts as a successful fetch. Staleness
// is 0 when to is not after from, and NaN for a path that is not h's.
func (h *Host) Staleness(path string, fetches []time.Time, from, to time.Time) float64 {
	if _, ok := h.pageIndex(path); !ok {
		return math.NaN()
	}
	if !to.After(from) {
		return 0
	}
	changes := h.ChangesOf(path, to)
	fs := append([]time.Time(nil), fetches...)
	sort.Slice(fs, func(a, b int) bool { return fs[a].Before(fs[b]) })
	k := sort.Search(len(fs), func(j int) bool { return fs[j].After(from) }) // fetches ≤ from
	var stale time.Duration
	for s := from; s.Before(to); k++ {
		e := to
		if k < len(fs) && fs[k].Before(to) {
			e = fs[k]
		}
		if k == 0 {
			stale += e.Sub(s) // nothing fetched yet
		} else {
			held := fs[k-1]
			c := sort.Search(len(changes), func(j int) bool { return changes[j].After(held) })
			if c < len(changes) && changes[c].Before(e) {
				stale += e.Sub(later(s, changes[c]))
			}
		}
		s = e
		if k >= len(fs) {
			break
		}
	}
	return float64(stale) / float64(to.Sub(from))
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// setValidators sets the Last-Modified and ETag headers.
func setValidators(hdr http.Header, lm time.Time, etag string) {
	hdr.Set("Last-Modified", lm.UTC().Format(http.TimeFormat))
	hdr.Set("ETag", etag)
}
