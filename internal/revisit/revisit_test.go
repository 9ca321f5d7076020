package revisit

import (
	"math"
	"math/rand/v2"
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
