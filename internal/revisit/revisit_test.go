package revisit

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// simulate visits a page changing at rate lambda (per second) n times,
// at intervals drawn exponentially around mean seconds (irregular, as a
// crawler's are), and returns what the visits saw.
func simulate(r *rand.Rand, lambda, mean float64, n int) []Interval {
	out := make([]Interval, n)
	for i := range out {
		t := r.ExpFloat64() * mean
		// P(no change in t) = e^(−λt).
		out[i] = Interval{Length: time.Duration(t * float64(time.Second)), Changed: r.Float64() >= math.Exp(-lambda*t)}
	}
	return out
}

func TestRate(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tt := range []struct{ lambda, mean float64 }{
		{0.1, 1}, {1, 1}, {3, 1}, {1.0 / 3600, 600}, {1.0 / 86400, 86400 * 2},
	} {
		// The mean of the estimates over many pages is near the truth;
		// a single page of 2,000 visits within 35 % (the rarest changes
		// here are seen about 190 times: a standard error near 7 %).
		var sum float64
		const pages = 30
		worst := 0.0
		for range pages {
			est := Rate(simulate(r, tt.lambda, tt.mean, 2000))
			sum += est
			worst = math.Max(worst, math.Abs(est/tt.lambda-1))
		}
		if bias := sum/pages/tt.lambda - 1; math.Abs(bias) > 0.08 {
			t.Errorf("λ=%g, visits every %gs on average: mean estimate off by %.1f%%", tt.lambda, tt.mean, 100*bias)
		}
		if worst > 0.35 {
			t.Errorf("λ=%g, visits every %gs: one page's estimate off by %.0f%%", tt.lambda, tt.mean, 100*worst)
		}
	}
}

func TestRateEdges(t *testing.T) {
	if got := Rate(nil); got != 0 {
		t.Errorf("no visits: %g, want 0", got)
	}
	hour := Interval{Length: time.Hour}
	never := []Interval{hour, hour, hour, hour}
	always := []Interval{{time.Hour, true}, {time.Hour, true}, {time.Hour, true}, {time.Hour, true}}
	n, a := Rate(never), Rate(always)
	if !(n > 0 && n < 1.0/3600/4) {
		t.Errorf("never changed in 4 hours: %g per second, want positive and below one change in 16 hours", n)
	}
	if math.IsInf(a, 0) || a < 1.0/3600 {
		t.Errorf("changed at every hourly visit: %g per second, want finite and at least one change an hour", a)
	}
	// More changes seen, higher rate.
	half := []Interval{{time.Hour, true}, hour, {time.Hour, true}, hour}
	if h := Rate(half); !(n < h && h < a) {
		t.Errorf("rates never %g < half %g < always %g", n, h, a)
	}
}

func meanFreshness(rates, freqs []float64) float64 {
	s := 0.0
	for i, l := range rates {
		if freqs[i] == 0 {
			continue
		}
		s += Freshness(l, 1/freqs[i])
	}
	return s / float64(len(rates))
}

func TestAllocateOptimal(t *testing.T) {
	// Two pages: Allocate is at least as good as every split on a fine grid.
	for _, rates := range [][]float64{{1, 9}, {0.5, 2}, {1, 1}, {0.1, 20}} {
		const budget = 4.0
		f := Allocate(rates, budget, 0, math.Inf(1))
		if s := f[0] + f[1]; math.Abs(s-budget) > 1e-6 {
			t.Errorf("rates %v: frequencies %v sum to %g, want %g", rates, f, s, budget)
		}
		got := meanFreshness(rates, f)
		best := 0.0
		for k := 0; k <= 4000; k++ {
			a := budget * float64(k) / 4000
			best = math.Max(best, meanFreshness(rates, []float64{a, budget - a}))
		}
		if got < best-1e-6 {
			t.Errorf("rates %v: freshness %.6f with %v, a grid split reaches %.6f", rates, got, f, best)
		}
	}
}

// TestAllocateFastPagesGetLess: Cho and Garcia-Molina's example — five
// pages changing 1 to 5 times a day, five visits a day in all. The optimum
// gives the fastest page less than the slower ones, and uniform visits
// beat visits in proportion to the change rate.
func TestAllocateFastPagesGetLess(t *testing.T) {
	day := 86400.0
	rates := []float64{1 / day, 2 / day, 3 / day, 4 / day, 5 / day}
	budget := 5 / day
	opt := Allocate(rates, budget, 0, math.Inf(1))
	uniform := []float64{1 / day, 1 / day, 1 / day, 1 / day, 1 / day}
	prop := make([]float64, 5)
	for i, l := range rates {
		prop[i] = budget * l / (15 / day)
	}
	fo, fu, fp := meanFreshness(rates, opt), meanFreshness(rates, uniform), meanFreshness(rates, prop)
	t.Logf("freshness: optimal %.4f (visits a day %.2f %.2f %.2f %.2f %.2f), uniform %.4f, proportional %.4f",
		fo, opt[0]*day, opt[1]*day, opt[2]*day, opt[3]*day, opt[4]*day, fu, fp)
	if !(fo > fu && fu > fp) {
		t.Errorf("freshness optimal %.4f, uniform %.4f, proportional %.4f: want optimal > uniform > proportional", fo, fu, fp)
	}
	if !(opt[4] < opt[1]) {
		t.Errorf("the fastest page gets %.3f visits a day, the second slowest %.3f: the fastest should get less", opt[4]*day, opt[1]*day)
	}
	// A page far too fast to keep fresh gets nothing beyond the minimum.
	f := Allocate([]float64{1 / day, 1000 / day}, 2/day, 0, math.Inf(1))
	if f[1] > f[0]/10 {
		t.Errorf("a page changing 1,000 times a day gets %.3f visits a day beside %.3f for a daily one", f[1]*day, f[0]*day)
	}
}

func TestAllocateBounds(t *testing.T) {
	hour, month := 1/3600.0, 1/(30*86400.0)
	rates := []float64{0, 1e-9, 1 / 86400.0, 1 / 600.0, 10}
	f := Allocate(rates, 3*hour, month, hour)
	sum := 0.0
	for i, x := range f {
		if x < month*(1-1e-9) || x > hour*(1+1e-9) {
			t.Errorf("page %d (rate %g): frequency %g outside [%g, %g]", i, rates[i], x, month, hour)
		}
		sum += x
	}
	if math.Abs(sum-3*hour) > 1e-9*hour {
		t.Errorf("frequencies sum to %g, want the budget %g", sum, 3*hour)
	}
	if f[0] != month {
		t.Errorf("a page that never changed gets %g, want the minimum %g", f[0], month)
	}
	// A budget the bounds cannot spend, or cannot meet, is clamped.
	if g := Allocate([]float64{1, 2}, 100, 0, 1); g[0] != 1 || g[1] != 1 {
		t.Errorf("over the bounds: %v, want [1 1]", g)
	}
	if g := Allocate([]float64{1, 2}, 0, 0.5, 1); g[0] != 0.5 || g[1] != 0.5 {
		t.Errorf("under the bounds: %v, want [0.5 0.5]", g)
	}
	if g := Allocate(nil, 1, 0, 1); len(g) != 0 {
		t.Errorf("no pages: %v", g)
	}
}

func TestFreshness(t *testing.T) {
	if f := Freshness(0, 100); f != 1 {
		t.Errorf("a page that never changes: %g", f)
	}
	// Visited as often as it changes: (1 − 1/e) ≈ 0.632.
	if f := Freshness(1, 1); math.Abs(f-(1-1/math.E)) > 1e-12 {
		t.Errorf("λI = 1: %g", f)
	}
	if f := Freshness(1e-3, 1); math.Abs(f-1) > 1e-3 {
		t.Errorf("rarely changing: %g", f)
	}
}

// simulateVisits visits a page changing at rate lambda (a Poisson process)
// n times at irregular intervals (exponential, mean meanGap seconds) and
// returns what each visit saw, with the age of the last change when
// dated.
func simulateVisits(rng *rand.Rand, lambda, meanGap float64, n int) []Observation {
	var obs []Observation
	nextChange := rng.ExpFloat64() / lambda
	lastChange := math.Inf(-1)
	now := 0.0
	for range n {
		gap := rng.ExpFloat64() * meanGap
		now += gap
		changed := false
		for nextChange <= now {
			changed, lastChange = true, nextChange
			nextChange += rng.ExpFloat64() / lambda
		}
		o := Observation{Interval: time.Duration(gap * 1e9), Changed: changed}
		if changed {
			o.Dated, o.Age = true, time.Duration((now-lastChange)*1e9)
		}
		obs = append(obs, o)
	}
	return obs
}

// TestDatedRate: over many pages visited 32 times at irregular intervals,
// the dated estimator's median is within 10 % of the true rate when
// visits are as frequent as changes or much rarer, and within 20 % when
// they are ten times as frequent (32 visits then see about 3 changes, too
// few for a precise estimate). When visits are not more
// frequent than changes it is more precise than the estimate that ignores
// the dates, which can only say "changed" when visits are rare.
func TestDatedRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const lambda = 1.0 / 600
	for _, meanGap := range []float64{60, 600, 6000} {
		tolerance := 0.1
		if meanGap < 600 {
			tolerance = 0.2
		}
		var dated, undated []float64
		for range 400 {
			obs := simulateVisits(rng, lambda, meanGap, 32)
			dated = append(dated, Estimate(obs, true)/lambda)
			undated = append(undated, Estimate(obs, false)/lambda)
		}
		md, mu := median(dated), median(undated)
		sd, su := spread(dated), spread(undated)
		t.Logf("visits every %v s on average: dated median %.3f spread %.3f; undated median %.3f spread %.3f", meanGap, md, sd, mu, su)
		if math.Abs(md-1) > tolerance {
			t.Errorf("visits every %v s: dated estimate's median is %.3f of the true rate", meanGap, md)
		}
		if meanGap >= 600 && sd > su {
			t.Errorf("visits every %v s: dated spread %.3f above undated %.3f", meanGap, sd, su)
		}
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	slices.Sort(s)
	return s[len(s)/2]
}

// spread is the interquartile range of log(x).
func spread(xs []float64) float64 {
	s := make([]float64, len(xs))
	for i, x := range xs {
		s[i] = math.Log(x)
	}
	slices.Sort(s)
	return s[3*len(s)/4] - s[len(s)/4]
}

// TestEstimateFallsBack: a change seen without its date makes the dated
// estimator unusable, and a page never seen changed still gets a small
// positive rate.
func TestEstimateFallsBack(t *testing.T) {
	obs := []Observation{{Interval: time.Hour}, {Interval: time.Hour, Changed: true}, {Interval: time.Hour}}
	if got, want := Estimate(obs, true), Estimate(obs, false); got != want {
		t.Errorf("an undated change: Estimate with dates = %v, want the undated %v", got, want)
	}
	still := []Observation{{Interval: 100 * 24 * time.Hour, Before: true}, {Interval: time.Hour}}
	r := Estimate(still, true)
	if !(r > 0 && r < 1.0/(50*24*3600)) {
		t.Errorf("a page unchanged for 100 days and an hour: rate %v, want small and positive", r)
	}
	if r := Estimate(nil, true); r != 0 {
		t.Errorf("Estimate(nil) = %v", r)
	}
}

// TestDemandPrice: the price found from the binned rates spends the budget
// on the real rates within a few percent (the bins are a twelfth of a
// decade wide) and agrees with Allocate; a budget beyond what the pages are
// worth (Useful) is spent only up to that.
func TestDemandPrice(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	var rates []float64
	var d Demand
	for range 3000 {
		r := math.Pow(10, -6+4*rng.Float64()) // 1e-6 .. 1e-2 per second
		rates = append(rates, r)
		d.Add(r, 1)
	}
	minF, maxF := 1.0/(30*86400), 1.0/60
	for _, budget := range []float64{0.05, 0.5, 2} {
		mu := d.Price(budget, minF, maxF)
		spent, useful := 0.0, 0.0
		for _, r := range rates {
			spent += Frequency(r, mu, minF, maxF)
			useful += CappedFrequency(r, minF, maxF)
		}
		want := math.Min(budget, useful)
		if math.Abs(spent/want-1) > 0.05 {
			t.Errorf("budget %v (worth spending: %v): the allocation spends %v", budget, useful, spent)
		}
		t.Logf("budget %v: %v spent; the pages are worth %v", budget, spent, useful)
		opt := Allocate(rates, budget, minF, maxF)
		var fOpt, fOurs float64
		for i, r := range rates {
			fOpt += Freshness(r, 1/opt[i])
			fOurs += Freshness(r, 1/Frequency(r, mu, minF, maxF))
		}
		// Past what the pages are worth, the budget is not all spent.
		if budget < useful && fOurs < fOpt*0.99 {
			t.Errorf("budget %v: mean freshness %.4f, Allocate's %.4f", budget, fOurs/3000, fOpt/3000)
		}
	}
	mu := d.Price(1e6, minF, maxF)
	spent, useful := 0.0, d.Useful(minF, maxF)
	for _, r := range rates {
		spent += Frequency(r, mu, minF, maxF)
	}
	if math.Abs(spent/useful-1) > 0.05 {
		t.Errorf("a budget beyond use: %v spent, the pages are worth %v", spent, useful)
	}
	d.Add(rates[0], -1)
	if d.Len() != 2999 {
		t.Errorf("Len after taking one out = %d", d.Len())
	}
	if m := d.Median(); m < 1e-5 || m > 1e-3 {
		t.Errorf("median %v, want about 1e-4", m)
	}
}

// TestPosterior: with the host's pages as the prior, a page seen a few
// times is estimated closer to its true rate than from its own visits
// alone, on a mix of fast, slow and near-static pages; a page seen many
// times keeps about its own estimate; with too small a prior it is
// Estimate.
func TestPosterior(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 5))
	classes := []float64{1.0 / 20, 1.0 / 600, 1.0 / 20000}
	type page struct {
		lambda float64
		obs    []Observation
	}
	visit := func(lambda float64, n int, gap float64) []Observation {
		// The first visit dates the last change (a Before observation):
		// by memorylessness its age is exponential.
		obs := []Observation{{Interval: time.Duration(rng.ExpFloat64() / lambda * 1e9), Before: true}}
		return append(obs, simulateVisits(rng, lambda, gap, n)...)
	}
	var prior Demand
	var pages []page
	for range 300 {
		l := classes[rng.IntN(len(classes))]
		p := page{lambda: l, obs: visit(l, 3, 60)}
		pages = append(pages, p)
		prior.Add(Estimate(p.obs, true), 1)
	}
	var own, pooled float64
	for _, p := range pages {
		own += math.Abs(math.Log(Estimate(p.obs, true) / p.lambda))
		pooled += math.Abs(math.Log(prior.Posterior(p.obs, true) / p.lambda))
	}
	own, pooled = own/300, pooled/300
	t.Logf("mean |log error| over 300 pages seen 4 times: own visits %.3f, with the prior %.3f", own, pooled)
	if pooled >= own {
		t.Errorf("the prior did not help: %.3f against %.3f", pooled, own)
	}
	// Many visits: about the page's own rate, even against the prior.
	rich := simulateVisits(rng, 1.0/5000, 2000, 32)
	if got, want := prior.Posterior(rich, true), Estimate(rich, true); math.Abs(math.Log(got/want)) > 0.25 {
		t.Errorf("a page with 32 visits: posterior %v, its own estimate %v", got, want)
	}
	// Undated visits work too.
	undated := simulateVisits(rng, 1.0/600, 300, 10)
	if r := prior.Posterior(undated, false); !(r > 1.0/6000 && r < 1.0/60) {
		t.Errorf("undated visits of a page changing every 600 s: posterior %v", r)
	}
	var small Demand
	small.Add(1, 5)
	if got, want := small.Posterior(rich, true), Estimate(rich, true); got != want {
		t.Errorf("a prior of 5 pages: %v, want Estimate's %v", got, want)
	}
}

// TestDecide: over a sharp posterior (many visits) Decide agrees with
// Frequency at the posterior rate; it falls as the price rises; and a page
// whose mean rate is just past the point where the allocation gives up on
// it still gets visits when its rate may be slower.
func TestDecide(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	var prior Demand
	for range 200 {
		prior.Add(math.Pow(10, -4+3*rng.Float64()), 1)
	}
	minF, maxF := 1.0/3600, 1.0
	rich := simulateVisits(rng, 1.0/300, 60, 32)
	lambda := prior.Posterior(rich, true)
	mu := 2 / lambda * g(0.5) // at this price the page's best x is about 0.5
	f, ok := prior.Decide(rich, true, mu, minF, maxF)
	if want := Frequency(lambda, mu, minF, maxF); !ok || math.Abs(math.Log(f/want)) > 0.15 {
		t.Errorf("sharp posterior: Decide %v, Frequency at the posterior rate %v", f, want)
	}
	last := math.Inf(1)
	for _, m := range []float64{mu / 4, mu / 2, mu, 2 * mu, 4 * mu} {
		f, _ := prior.Decide(rich, true, m, minF, maxF)
		if f > last {
			t.Errorf("price %v: frequency %v above the %v of a lower price", m, f, last)
		}
		last = f
	}
	// One dated change 20 s before the first visit: the mean rate is fast.
	young := []Observation{{Interval: 20 * time.Second, Before: true}}
	l := prior.Posterior(young, true)
	price := 1.05 / l // just past the point where a page of rate l gets nothing
	if fr := Frequency(l, price, minF, maxF); fr != minF {
		t.Fatalf("at the mean rate %v the page should get the least frequency, got %v", l, fr)
	}
	if f, _ := prior.Decide(young, true, price, minF, maxF); !(f > 2*minF) {
		t.Errorf("over the posterior the page gets %v, no more than at its mean rate (%v)", f, minF)
	}
	if _, ok := new(Demand).Decide(young, true, price, minF, maxF); ok {
		t.Error("an empty prior decided")
	}
}
