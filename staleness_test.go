package gentlecrawl_test

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
	"github.com/gentlecrawl/gentlecrawl/internal/revisit"
	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

// The staleness benchmark (crawl demand). Staleness is the mean
// over a host's pages of the fraction of a window of time during which the
// crawler's copy of the page was out of date, judged from the server's side:
// simweb knows when each page changed (simweb.Changes) and its log says when
// each page was fetched. gentlecrawl's continuous crawl is compared, at the
// same number of fetches in the same window, with three policies simulated
// against the same ground truth: every page at one interval (uniform),
// Apache Nutch's AdaptiveFetchSchedule, and the freshness-optimal allocation
// for the known rates (revisit.Allocate).

// stalenessShape is the web and the budget of one seed.
type stalenessShape struct {
	seed   int64
	pages  int       // HTML pages of the one host
	static float64   // simweb.Changes.Static
	rates  []float64 // simweb.Changes.Rates, changes per second
	budget float64   // the crawl's MaxRate, requests per second
}

// stalenessShapeOf draws the shape of seed: 80–300 pages, 20–60 % of them
// static, the others changing at one of 3–6 rates spread over two orders
// of magnitude (about once every 15 s to once every 2000 s), and a budget
// that fetches every page once in 25–40 s. At that budget the fastest pages
// cannot be kept fresh (they change two or three times between two uniform
// visits), so where the fetches go matters; and one pass over the host fits
// in the warm-up of the default run, so that every page has been fetched
// once before the window opens.
func stalenessShapeOf(seed int64) stalenessShape {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x57a1e))
	sh := stalenessShape{seed: seed, pages: 80 + rng.IntN(221), static: 0.2 + 0.4*rng.Float64()}
	k := 3 + rng.IntN(4)
	fast, slow := math.Log(1.0/15), math.Log(1.0/2000)
	for i := range k {
		// Log-spaced from fast to slow, each moved by up to ±15 %.
		r := math.Exp(fast + float64(i)/float64(k-1)*(slow-fast))
		sh.rates = append(sh.rates, r*(0.85+0.3*rng.Float64()))
	}
	pass := 25 + 15*rng.Float64() // seconds to fetch every page once
	sh.budget = float64(sh.pages) / pass
	return sh
}

// stalenessHistory is how long the pages have been changing when the crawl
// starts: long enough (over four mean gaps of the slowest rate) that the
// web is in its steady state, its Last-Modified dates recent, from the
// first request on.
const stalenessHistory = 4 * time.Hour

// stalenessTruth is the ground truth of a host's pages, from simweb.
type stalenessTruth struct {
	host  *simweb.Host
	paths []string    // every ordinary HTML page, static ones included
	rates []float64   // by page: Host.ChangeRate
	lm0   []time.Time // by page: Last-Modified of version 0
	// changes are the change times of each page up to the end of the
	// window they were computed for (see at).
	changes [][]time.Time
}

// stalenessWeb returns a web of one host shaped by sh, whose pages have been
// changing since stalenessHistory before t0, and its ground truth up to to.
func stalenessWeb(sh stalenessShape, t0, to time.Time) (*simweb.Web, *stalenessTruth, error) {
	web, err := simweb.New(simweb.Config{Seed: sh.seed, Hosts: 1, Profiles: []simweb.Profile{simweb.ProfileAllow},
		HostOptions: func(int, string) simweb.HostOptions {
			return simweb.HostOptions{Pages: sh.pages, NoFiles: true, Changes: &simweb.Changes{
				Rates: sh.rates, Static: sh.static, Start: t0.Add(-stalenessHistory),
			}}
		}})
	if err != nil {
		return nil, nil, err
	}
	h := web.Hosts()[0]
	tr := &stalenessTruth{host: h}
	for _, u := range h.DistinctPages() {
		path, ok := strings.CutPrefix(u, h.URL(""))
		if !ok {
			return nil, nil, fmt.Errorf("page %s is not of host %s", u, h.Name)
		}
		rate, ok := h.ChangeRate(path)
		res, ok2 := h.Resource(path)
		if !ok || !ok2 {
			return nil, nil, fmt.Errorf("page %s: no change rate or resource", path)
		}
		tr.paths = append(tr.paths, path)
		tr.rates = append(tr.rates, rate)
		tr.lm0 = append(tr.lm0, res.LastModified)
		tr.changes = append(tr.changes, h.ChangesOf(path, to))
	}
	if len(tr.paths) != sh.pages {
		return nil, nil, fmt.Errorf("%d pages, want %d", len(tr.paths), sh.pages)
	}
	return web, tr, nil
}

// at returns the version of page i at t and the time it was last changed
// (its truthful Last-Modified), for t up to the end of the truth.
func (tr *stalenessTruth) at(i int, t time.Time) (version int, changed time.Time) {
	cs := tr.changes[i]
	v := sort.Search(len(cs), func(k int) bool { return cs[k].After(t) })
	if v == 0 {
		return 0, tr.lm0[i]
	}
	return v, cs[v-1]
}

// stalenessWindow is a run from start to `to`, measured from `from` on: the
// time before it is the warm-up.
type stalenessWindow struct {
	start, from, to time.Time
}

func (w stalenessWindow) seconds() float64 { return w.to.Sub(w.from).Seconds() }

// staleness is the mean over the pages of the fraction of the window their
// copies were out of date, for the fetch times given by page.
func (tr *stalenessTruth) staleness(fetches [][]time.Time, w stalenessWindow) float64 {
	sum := 0.0
	for i, p := range tr.paths {
		sum += tr.host.Staleness(p, fetches[i], w.from, w.to)
	}
	return sum / float64(len(tr.paths))
}

// fetchesIn returns the number of fetches in the window.
func fetchesIn(fetches [][]time.Time, w stalenessWindow) int {
	n := 0
	for _, fs := range fetches {
		for _, f := range fs {
			if !f.Before(w.from) && f.Before(w.to) {
				n++
			}
		}
	}
	return n
}

// lateFirsts returns the number of pages not fetched before the window: a
// policy in its steady state has fetched every page by then.
func lateFirsts(fetches [][]time.Time, w stalenessWindow) int {
	late := 0
	for _, fs := range fetches {
		if !slices.ContainsFunc(fs, func(f time.Time) bool { return f.Before(w.from) }) {
			late++
		}
	}
	return late
}

// periodicFetches returns fetches every interval seconds at a random
// phase, the first at most one interval before the window (so the copy
// held when it opens is as old as in the steady state) and the last
// before its end.
func periodicFetches(interval float64, w stalenessWindow, rng *rand.Rand) []time.Time {
	d := time.Duration(interval * float64(time.Second))
	var out []time.Time
	for f := w.from.Add(-time.Duration(rng.Float64() * float64(d))); f.Before(w.to); f = f.Add(d) {
		out = append(out, f)
	}
	return out
}

// uniformFetches visits every page every P·W/n seconds: n fetches in the
// window W, shared equally among the P pages.
func (tr *stalenessTruth) uniformFetches(w stalenessWindow, n int, rng *rand.Rand) [][]time.Time {
	interval := float64(len(tr.paths)) * w.seconds() / float64(n)
	out := make([][]time.Time, len(tr.paths))
	for i := range out {
		out[i] = periodicFetches(interval, w, rng)
	}
	return out
}

// uniformAnalytic is the staleness uniformFetches expects: 1 − mean
// Freshness at its interval.
func (tr *stalenessTruth) uniformAnalytic(w stalenessWindow, n int) float64 {
	interval := float64(len(tr.paths)) * w.seconds() / float64(n)
	fresh := 0.0
	for _, l := range tr.rates {
		fresh += revisit.Freshness(l, interval)
	}
	return 1 - fresh/float64(len(tr.paths))
}

// optimumFetches visits every page at the frequency that the
// freshness-optimal allocation of n fetches in the window gives it for its
// known rate, and returns also the staleness the allocation expects,
// 1 − mean Freshness. A page given no visits (a static one, or one that
// changes too fast to be worth it) is fetched once, when the run starts,
// as a crawl's first pass does.
func (tr *stalenessTruth) optimumFetches(w stalenessWindow, n int, rng *rand.Rand) (fetches [][]time.Time, analytic float64) {
	budget := float64(n) / w.seconds()
	// No page can be visited more often than the whole budget allows.
	freqs := revisit.Allocate(tr.rates, budget, 0, budget)
	fetches = make([][]time.Time, len(tr.paths))
	fresh := 0.0
	for i, f := range freqs {
		switch {
		case f > 0:
			fetches[i] = periodicFetches(1/f, w, rng)
			fresh += revisit.Freshness(tr.rates[i], 1/f)
		default:
			fetches[i] = []time.Time{w.start}
			if tr.rates[i] == 0 {
				fresh++ // never changes: fresh from its first fetch on
			}
		}
	}
	return fetches, 1 - fresh/float64(len(tr.paths))
}

// nutchSchedule is Apache Nutch's AdaptiveFetchSchedule
// (src/java/org/apache/nutch/crawl/AdaptiveFetchSchedule.java), with its
// settings as conf/nutch-default.xml gives them, time in seconds. After
// each fetch of a page:
//
//   - a page found changed since the previous fetch has its interval cut
//     by DecRate, and from then on counts as changed at this fetch;
//     one found unchanged has its interval raised by IncRate; on the first
//     fetch of a page (nothing to compare with) it keeps the initial one;
//   - with SyncDelta, the time since the page last changed (by its
//     Last-Modified, or this fetch when it was found changed) is its
//     "delta": the interval is raised to the delta when shorter, and the
//     next fetch is reckoned from SyncDeltaRate·delta before this one, to
//     fall closer to the page's next change. A shift larger than
//     MaxInterval is dropped (Nutch means to rescale it to a fraction of
//     MaxInterval, but its integer arithmetic makes that fraction 0);
//   - the interval is held within [MinInterval, MaxInterval], and the page
//     is due again at the reference time plus the interval.
//
// The Last-Modified the schedule is given is the page's true latest change,
// which can only help it. (Nutch 1.x as shipped does not carry the header
// into its CrawlDb: the modified time it passes is the fetch at which it
// last found the page changed.)
//
// CrawlDb's own limit, db.fetch.interval.max (90 days, scaled like the
// others: an interval longer than that makes Nutch fetch the page again at
// the next generate), is not modelled: it is not the schedule's, and since
// SyncDelta lifts a static page's interval to its maximum, 365 days, it
// would fetch every static page at every round, which says nothing about
// how the schedule spends a budget.
type nutchSchedule struct {
	IncRate, DecRate         float64
	MinInterval, MaxInterval float64
	Initial                  float64 // db.fetch.interval.default: a new page's interval
	SyncDelta                bool
	SyncDeltaRate            float64
}

// nutchDefaults returns Nutch's defaults with its three lengths of time —
// the initial, minimum and maximum intervals — multiplied by scale. The
// defaults are made for the real web's days and years (a new page is due
// again after 30 days); simweb's pages change in seconds and minutes, so
// the benchmark shrinks Nutch's clock until it spends the same number of
// fetches as the crawler (see nutchMatched). All three shrink together:
// with SyncDelta an unchanged page's interval is at least the time since
// its last change, whatever the initial and minimum intervals, so that
// with the maximum at 365 days Nutch never spends more than about a third
// of a budget like the crawler's, at any scale; the maximum is what brings
// static and slow pages back.
func nutchDefaults(scale float64) nutchSchedule {
	return nutchSchedule{
		IncRate:       0.4,                     // db.fetch.schedule.adaptive.inc_rate
		DecRate:       0.2,                     // db.fetch.schedule.adaptive.dec_rate
		MinInterval:   60 * scale,              // db.fetch.schedule.adaptive.min_interval, 60 s
		MaxInterval:   365 * 24 * 3600 * scale, // db.fetch.schedule.adaptive.max_interval, 365 days
		Initial:       30 * 24 * 3600 * scale,  // db.fetch.interval.default, 30 days
		SyncDelta:     true,                    // db.fetch.schedule.adaptive.sync_delta
		SyncDeltaRate: 0.3,                     // db.fetch.schedule.adaptive.sync_delta_rate
	}
}

// nutchState is what a fetch found, as Nutch's CrawlDb classifies it.
type nutchState int

const (
	nutchUnknown     nutchState = iota // first fetch: no earlier signature
	nutchModified                      // the content changed since the last fetch
	nutchNotModified                   // it did not
)

// next returns a page's interval and the time it is due again, after a
// fetch at now that found state, for a page whose interval was interval
// and which last changed at changed.
func (s nutchSchedule) next(interval, now, changed float64, state nutchState) (float64, float64) {
	switch state {
	case nutchModified:
		interval *= 1 - s.DecRate
		changed = now
	case nutchNotModified:
		interval *= 1 + s.IncRate
	}
	ref := now
	if s.SyncDelta {
		delta := now - changed
		interval = max(interval, delta)
		shift := delta * s.SyncDeltaRate
		if shift > s.MaxInterval {
			shift = 0
		}
		ref = now - shift
	}
	interval = min(max(interval, s.MinInterval), s.MaxInterval)
	return interval, ref + interval
}

// nutchFetches simulates Nutch's schedule over the run: every page is due
// when the run starts, and a fetcher of rate fetches per second takes, at
// each of its turns, the due page that has been due longest (it waits
// when none is due). A fetch sees the version the page has then, and its
// Last-Modified (the time of its latest change).
func (tr *stalenessTruth) nutchFetches(w stalenessWindow, rate float64, s nutchSchedule) [][]time.Time {
	P := len(tr.paths)
	secs := func(t time.Time) float64 { return t.Sub(w.start).Seconds() }
	at := func(x float64) time.Time { return w.start.Add(time.Duration(x * float64(time.Second))) }
	q := &dueHeap{due: make([]float64, P), interval: make([]float64, P)}
	version := make([]int, P)
	fetched := make([]bool, P)
	for i := range P {
		q.interval[i] = s.Initial
		q.order = append(q.order, i)
	}
	heap.Init(q)
	out := make([][]time.Time, P)
	end := secs(w.to)
	for clock := 0.0; ; clock += 1 / rate {
		i := q.order[0]
		clock = max(clock, q.due[i])
		if clock >= end {
			break
		}
		now := at(clock)
		out[i] = append(out[i], now)
		v, changed := tr.at(i, now)
		state := nutchUnknown
		if fetched[i] {
			state = nutchNotModified
			if v != version[i] {
				state = nutchModified
			}
		}
		fetched[i], version[i] = true, v
		q.interval[i], q.due[i] = s.next(q.interval[i], clock, secs(changed), state)
		heap.Fix(q, 0)
	}
	return out
}

// dueHeap orders pages by the time they are due, the earliest first (ties
// by page index).
type dueHeap struct {
	order         []int     // page indices, a heap
	due, interval []float64 // by page
}

func (h *dueHeap) Len() int { return len(h.order) }
func (h *dueHeap) Less(a, b int) bool {
	i, j := h.order[a], h.order[b]
	return h.due[i] < h.due[j] || h.due[i] == h.due[j] && i < j
}
func (h *dueHeap) Swap(a, b int) { h.order[a], h.order[b] = h.order[b], h.order[a] }
func (h *dueHeap) Push(x any)    { h.order = append(h.order, x.(int)) }
func (h *dueHeap) Pop() any {
	x := h.order[len(h.order)-1]
	h.order = h.order[:len(h.order)-1]
	return x
}

// nutchMatched runs Nutch's schedule with a fetcher of rate fetches per
// second (the crawl's budget) and finds by bisection, on a log scale, the
// scale of its intervals (nutchDefaults) at which it makes n fetches in
// the window, or as close as it gets: shorter intervals make every page
// due sooner and more often, so the count falls as the scale grows (from
// all the fetcher can do to none). It returns the fetches and the scale.
func (tr *stalenessTruth) nutchMatched(w stalenessWindow, rate float64, n int) ([][]time.Time, float64) {
	best, bestScale, bestErr := [][]time.Time(nil), 0.0, math.Inf(1)
	try := func(scale float64) int {
		f := tr.nutchFetches(w, rate, nutchDefaults(scale))
		c := fetchesIn(f, w)
		if e := math.Abs(float64(c-n)) / float64(n); e < bestErr {
			best, bestScale, bestErr = f, scale, e
		}
		return c
	}
	lo, hi := math.Log(1e-9), math.Log(1.0) // 30 days × 1e-9 is 3 ms; × 1, Nutch as shipped
	for range 60 {
		mid := (lo + hi) / 2
		c := try(math.Exp(mid))
		if bestErr < 0.005 {
			break
		}
		if c > n {
			lo = mid
		} else {
			hi = mid
		}
	}
	return best, bestScale
}

// stalenessFigures are the staleness of the baselines in one window, at n
// fetches in it.
type stalenessFigures struct {
	n                                int
	uniform, nutch, optimum          float64
	optimumAnalytic, uniformAnalytic float64
	nUniform, nNutch, nOptimum       int // the fetches each made in the window
	late                             int // pages some baseline had not fetched before the window
	nutchScale                       float64
}

// baselines simulates the three policies against tr in w at n fetches, with
// Nutch's fetcher at rate fetches per second.
func (tr *stalenessTruth) baselines(w stalenessWindow, n int, rate float64, seed int64) stalenessFigures {
	rng := rand.New(rand.NewPCG(uint64(seed), 0xba5e))
	fig := stalenessFigures{n: n}
	uf := tr.uniformFetches(w, n, rng)
	fig.uniform, fig.nUniform, fig.late = tr.staleness(uf, w), fetchesIn(uf, w), lateFirsts(uf, w)
	fig.uniformAnalytic = tr.uniformAnalytic(w, n)
	of, analytic := tr.optimumFetches(w, n, rng)
	fig.optimum, fig.optimumAnalytic, fig.nOptimum = tr.staleness(of, w), analytic, fetchesIn(of, w)
	fig.late += lateFirsts(of, w)
	nf, scale := tr.nutchMatched(w, rate, n)
	fig.nutch, fig.nNutch, fig.nutchScale = tr.staleness(nf, w), fetchesIn(nf, w), scale
	fig.late += lateFirsts(nf, w)
	return fig
}

// countMatches reports whether got is within ±3 % of want.
func countMatches(got, want int) bool {
	return math.Abs(float64(got-want)) <= 0.03*float64(want)
}

// TestStalenessBaselines checks the benchmark's yardsticks, without a
// crawler. In the window the benchmark uses by default, at the number of
// fetches a crawl that spends its whole budget makes: the optimum is no
// staler than uniform, every baseline makes the fetches asked for (±3 %)
// and has fetched every page before the window opens, and the shape leaves the benchmark's goal within reach (the optimum's
// expected staleness at most 0.7× uniform's). Over a run of three hours
// (two measured), long enough for the noise of the change times to average
// out: the simulated optimum and uniform are within 3 % of what their
// analytic freshness says.
func TestStalenessBaselines(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, seed := range []int64{1, 2} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			sh := stalenessShapeOf(seed)
			d := stalenessDefaultFor
			w := stalenessWindow{start: t0, from: t0.Add(d / 3), to: t0.Add(d)}
			_, tr, err := stalenessWeb(sh, t0, w.to)
			if err != nil {
				t.Fatal(err)
			}
			n := budgetFetches(sh.budget, w)
			fig := tr.baselines(w, n, sh.budget, seed)
			t.Logf("%d pages, %.0f%% static, rates %s, %.2f fetches/s; %v window: n=%d; staleness uniform %.4f (analytic %.4f, %d fetches), Nutch %.4f (scale %.3g, %d fetches), optimum %.4f (analytic %.4f, %d fetches)",
				sh.pages, 100*sh.static, ratesString(sh.rates), sh.budget, w.to.Sub(w.from), n,
				fig.uniform, fig.uniformAnalytic, fig.nUniform, fig.nutch, fig.nutchScale, fig.nNutch, fig.optimum, fig.optimumAnalytic, fig.nOptimum)
			if fig.optimum > fig.uniform {
				t.Errorf("optimum's staleness %.4f above uniform's %.4f", fig.optimum, fig.uniform)
			}
			for _, c := range []struct {
				name string
				n    int
			}{{"uniform", fig.nUniform}, {"Nutch", fig.nNutch}, {"optimum", fig.nOptimum}} {
				if !countMatches(c.n, n) {
					t.Errorf("%s made %d fetches in the window, want %d ± 3%%", c.name, c.n, n)
				}
			}
			if fig.late > 0 {
				t.Errorf("the baselines had not fetched %d pages before the window: they do not start it in their steady state", fig.late)
			}
			if fig.optimumAnalytic > 0.7*fig.uniformAnalytic {
				t.Errorf("optimum %.4f is above 0.7× uniform's %.4f: no schedule can meet the goal on this shape", fig.optimumAnalytic, fig.uniformAnalytic)
			}

			d = 3 * time.Hour
			w = stalenessWindow{start: t0, from: t0.Add(d / 3), to: t0.Add(d)}
			if _, tr, err = stalenessWeb(sh, t0, w.to); err != nil {
				t.Fatal(err)
			}
			n = budgetFetches(sh.budget, w)
			rng := rand.New(rand.NewPCG(uint64(seed), 0xba5e))
			uf := tr.uniformFetches(w, n, rng)
			of, optimumAnalytic := tr.optimumFetches(w, n, rng)
			for _, c := range []struct {
				name            string
				simulated, want float64
			}{
				{"uniform", tr.staleness(uf, w), tr.uniformAnalytic(w, n)},
				{"optimum", tr.staleness(of, w), optimumAnalytic},
			} {
				t.Logf("%v window: %s's staleness %.4f, analytic %.4f", w.to.Sub(w.from), c.name, c.simulated, c.want)
				if math.Abs(c.simulated-c.want) > 0.03*c.want {
					t.Errorf("%s: simulated staleness %.4f, analytic %.4f: more than 3%% apart", c.name, c.simulated, c.want)
				}
			}
		})
	}
}

// budgetFetches is the number of fetches a crawl that spends its whole
// budget makes in the window: MaxRate spaces requests 1.01/R apart.
func budgetFetches(budget float64, w stalenessWindow) int {
	return int(budget * w.seconds() / 1.01)
}

func ratesString(rates []float64) string {
	var b strings.Builder
	for i, r := range rates {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "1/%.0fs", 1/r)
	}
	return b.String()
}

// stalenessDefaultFor is the default length of a benchmark run; the first
// third is the warm-up.
const stalenessDefaultFor = 300 * time.Second

// stalenessRow is the benchmark's result for one seed.
type stalenessRow struct {
	shape     stalenessShape
	crawler   float64 // gentlecrawl's staleness
	fig       stalenessFigures
	max10s    int     // most requests started in any 10 s
	limit10s  int     // what the budget allows in 10 s
	used      float64 // N ÷ (budget × window): the share of the budget spent on pages
	byPurpose map[string]int
	stopped   string
}

// TestStalenessBenchmark runs gentlecrawl's continuous crawl against a host
// whose pages change at known rates, and compares its staleness with the
// baselines' at the same number of fetches. The goal: at most
// 0.7× uniform's staleness, below Nutch's, within 1.25× the optimum's,
// and never more requests in 10 s than the budget allows.
//
// It takes minutes, so it runs only with GENTLECRAWL_STALENESS=1.
// GENTLECRAWL_STALENESS_SEEDS=N runs seeds 1..N (default 3), all at the
// same time; GENTLECRAWL_STALENESS_FOR is the length of each crawl (a Go
// duration, default 300s; the first third is the warm-up, before which the
// crawler has fetched every page once and started learning their rates).
// The crawls run side by side whatever -parallel says (they wait on their
// budgets, not on the CPU), so the test takes about one crawl's time.
func TestStalenessBenchmark(t *testing.T) {
	if os.Getenv("GENTLECRAWL_STALENESS") != "1" {
		t.Skip("the staleness benchmark takes minutes: set GENTLECRAWL_STALENESS=1 to run it")
	}
	seeds := 3
	if s := os.Getenv("GENTLECRAWL_STALENESS_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("GENTLECRAWL_STALENESS_SEEDS=%q: want a positive number", s)
		}
		seeds = n
	}
	d := stalenessDefaultFor
	if s := os.Getenv("GENTLECRAWL_STALENESS_FOR"); s != "" {
		v, err := time.ParseDuration(s)
		if err != nil || v <= 0 {
			t.Fatalf("GENTLECRAWL_STALENESS_FOR=%q: want a positive duration", s)
		}
		d = v
	}
	rows := make([]*stalenessRow, seeds)
	errs := make([]error, seeds)
	var wg sync.WaitGroup
	for i := range seeds {
		wg.Go(func() { rows[i], errs[i] = stalenessCrawl(t, int64(i+1), d) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("seed %d: %v", i+1, err)
		}
	}
	t.Logf("%d s runs, measured over the last %d s; staleness = mean fraction of the window a page's copy was out of date",
		int(d.Seconds()), int((d - d/3).Seconds()))
	t.Logf("(optimum: simulated, then expected; opt÷unif: the best ratio to uniform any schedule can expect)")
	t.Logf("%4s %5s %6s %6s %6s %5s | %8s %8s %8s %8s %8s | %6s %6s %8s | %9s | %s",
		"seed", "pages", "static", "req/s", "N", "used", "gentle", "uniform", "Nutch", "optimum", "expected", "÷unif", "÷opt", "opt÷unif", "max/10s", "by purpose (end)")
	for _, r := range rows {
		if r == nil {
			continue
		}
		f := r.fig
		t.Logf("%4d %5d %5.0f%% %6.2f %6d %4.0f%% | %8.4f %8.4f %8.4f %8.4f %8.4f | %6.2f %6.2f %8.2f | %4d/%4d | %v (%s)",
			r.shape.seed, r.shape.pages, 100*r.shape.static, r.shape.budget, f.n, 100*r.used,
			r.crawler, f.uniform, f.nutch, f.optimum, f.optimumAnalytic,
			r.crawler/f.uniform, r.crawler/f.optimum, f.optimumAnalytic/f.uniformAnalytic,
			r.max10s, r.limit10s, r.byPurpose, r.stopped)
	}
	for _, r := range rows {
		if r == nil {
			continue
		}
		f := r.fig
		if r.max10s > r.limit10s {
			t.Errorf("seed %d: %d requests in 10 s, the budget allows %d", r.shape.seed, r.max10s, r.limit10s)
		}
		if f.late > 0 {
			t.Errorf("seed %d: the baselines had not fetched %d pages before the window", r.shape.seed, f.late)
		}
		if !countMatches(f.nNutch, f.n) {
			t.Errorf("seed %d: Nutch made %d fetches in the window, the crawler %d: the comparison is not at the same count", r.shape.seed, f.nNutch, f.n)
		}
		if r.crawler > 0.7*f.uniform {
			t.Errorf("seed %d: goal missed: staleness %.4f is %.2f× uniform's (goal ≤ 0.7×; the optimum's is %.2f× here)", r.shape.seed, r.crawler, r.crawler/f.uniform, f.optimum/f.uniform)
		}
		if r.crawler >= f.nutch {
			t.Errorf("seed %d: goal missed: staleness %.4f is not below Nutch's %.4f", r.shape.seed, r.crawler, f.nutch)
		}
		if r.crawler > 1.25*f.optimum {
			t.Errorf("seed %d: goal missed: staleness %.4f is %.2f× the optimum's (goal ≤ 1.25×)", r.shape.seed, r.crawler, r.crawler/f.optimum)
		}
	}
}

// stalenessCrawl runs the crawler for d against the web of seed and measures
// it and the baselines. It may run on a goroutine of its own: it reports
// what stops it as an error, not with t.Fatal.
func stalenessCrawl(t *testing.T, seed int64, d time.Duration) (*stalenessRow, error) {
	sh := stalenessShapeOf(seed)
	t0 := time.Now()
	w := stalenessWindow{start: t0, from: t0.Add(d / 3), to: t0.Add(d)}
	web, tr, err := stalenessWeb(sh, t0, w.to)
	if err != nil {
		return nil, err
	}
	srv, err := web.Start("127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), d+time.Minute)
	defer cancel()
	c, err := gentlecrawl.New(gentlecrawl.Config{
		JobDir: t.TempDir(), Seeds: []string{tr.host.URL("/")},
		Continuous: true, For: d, MaxRate: sh.budget,
		RevisitMin: time.Second, RevisitMax: time.Hour,
		Delay:     time.Millisecond, // the budget, not the gap, sets the pace
		ConnectTo: crawltest.ConnectTo(srv.CatchAll()), AllowPrivateNetworks: true,
	})
	if err != nil {
		return nil, err
	}
	sum, err := c.Run(ctx)
	if err != nil {
		return nil, err
	}
	if err := web.Drain(ctx); err != nil {
		return nil, err
	}

	// The server's log is all we know of what the crawler did. A fetch is
	// a GET of a page answered 200 or 304; the version it got is the one
	// served when the request started.
	log := web.Requests()
	sort.Slice(log, func(a, b int) bool { return log[a].Start.Before(log[b].Start) })
	index := make(map[string]int, len(tr.paths))
	for i, p := range tr.paths {
		index[p] = i
	}
	fetches := make([][]time.Time, len(tr.paths))
	starts := make([]time.Time, len(log))
	for k, e := range log {
		starts[k] = e.Start
		i, ok := index[e.Path]
		if ok && e.Method == "GET" && (e.Status == 200 || e.Status == 304) {
			fetches[i] = append(fetches[i], e.Start)
		}
	}
	row := &stalenessRow{
		shape:     sh,
		crawler:   tr.staleness(fetches, w),
		max10s:    maxInWindow(starts, 10*time.Second),
		limit10s:  int(math.Floor(sh.budget*10 + 1)),
		byPurpose: sum.ByPurpose,
		stopped:   sum.Stopped,
	}
	n := fetchesIn(fetches, w)
	if n == 0 {
		return nil, fmt.Errorf("no page fetched in the window (the crawl stopped: %s, after %v)", sum.Stopped, sum.Elapsed.Round(time.Second))
	}
	if late := lateFirsts(fetches, w); late > 0 {
		// The baselines start the window with every page fetched.
		t.Logf("seed %d: %d of %d pages first fetched in the window or never: the warm-up (%v) was too short for the crawl's first pass",
			seed, late, len(fetches), w.from.Sub(w.start))
	}
	row.fig = tr.baselines(w, n, sh.budget, seed)
	row.used = float64(n) / (sh.budget * w.seconds())
	tr.logClasses(t, seed, fetches, w, n)
	return row, nil
}

// logClasses logs, per true rate, the pages, the crawler's and the
// optimum's mean fetches per page in the window, and each one's staleness
// over those pages: where the crawler's fetches go, against where they
// should.
func (tr *stalenessTruth) logClasses(t *testing.T, seed int64, crawler [][]time.Time, w stalenessWindow, n int) {
	opt, _ := tr.optimumFetches(w, n, rand.New(rand.NewPCG(uint64(seed), 0xc1a5)))
	type class struct {
		pages                   int
		fetches, optFetches     int
		staleness, optStaleness float64
		least, most             int // fetches of one page
	}
	classes := map[float64]*class{}
	var rates []float64
	for i, r := range tr.rates {
		c := classes[r]
		if c == nil {
			c = &class{}
			classes[r] = c
			rates = append(rates, r)
		}
		one := func(fs []time.Time) int { return fetchesIn([][]time.Time{fs}, w) }
		if c.pages == 0 || one(crawler[i]) < c.least {
			c.least = one(crawler[i])
		}
		c.most = max(c.most, one(crawler[i]))
		c.pages++
		c.fetches += one(crawler[i])
		c.optFetches += one(opt[i])
		c.staleness += tr.host.Staleness(tr.paths[i], crawler[i], w.from, w.to)
		c.optStaleness += tr.host.Staleness(tr.paths[i], opt[i], w.from, w.to)
	}
	slices.Sort(rates)
	for _, r := range rates {
		c := classes[r]
		p := float64(c.pages)
		mean := "static"
		if r > 0 {
			mean = fmt.Sprintf("1/%.0fs", 1/r)
		}
		t.Logf("seed %d class %8s: %3d pages; fetches per page %6.2f, %d–%d (optimum %6.2f); staleness %.3f (optimum %.3f)",
			seed, mean, c.pages, float64(c.fetches)/p, c.least, c.most, float64(c.optFetches)/p, c.staleness/p, c.optStaleness/p)
	}
}

// maxInWindow returns the most times (sorted) that fall in any closed
// window of length d.
func maxInWindow(times []time.Time, d time.Duration) int {
	best, j := 0, 0
	for i := range times {
		for times[i].Sub(times[j]) > d {
			j++
		}
		best = max(best, i-j+1)
	}
	return best
}
