// Package revisit holds the mathematics of crawl demand: how often a page
// changes, estimated from what the crawler saw on its visits, and how
// often to visit each page so that the copies kept are as fresh as a
// budget of requests allows.
//
// Pages are modelled as changing by a Poisson process of rate λ (changes
// per second), as in Cho and Garcia-Molina's work ("Synchronizing a
// database to improve freshness", SIGMOD 2000; "Estimating frequency of
// change", TOIT 2003). A visit sees only whether the page changed since the
// last one, not how many times.
//
// The package is pure: no I/O and no clock.
package revisit

import (
	"math"
	"time"
)

// Interval is the time between two visits of a page, and whether the
// second visit found it changed (a full answer with another body, rather
// than a 304 or the same body).
type Interval struct {
	Length  time.Duration
	Changed bool
}

// Rate estimates a page's change rate, in changes per second, from the
// intervals between its visits, by maximum likelihood: with a Poisson
// process of rate λ, an interval of length t shows a change with
// probability 1 − e^(−λt), so the likelihood's derivative vanishes where
//
//	Σ_changed t / (e^(λt) − 1) = Σ_unchanged t.
//
// The left side falls from +∞ to 0 as λ grows, so the root is unique;
// it is found by bisection on a log scale. The estimate is regularised so
// that it is always finite and positive: half an unchanged interval of the
// mean length is added to the evidence (so that "changed at every visit"
// gives a high rate, not an infinite one), and half a changed one (so that
// "never changed" gives a low rate, not zero). With no intervals it
// returns 0.
func Rate(intervals []Interval) float64 {
	var total float64
	n := 0
	for _, iv := range intervals {
		if iv.Length > 0 {
			total += iv.Length.Seconds()
			n++
		}
	}
	if n == 0 {
		return 0
	}
	mean := total / float64(n)
	unchanged := mean / 2 // the half unchanged interval
	for _, iv := range intervals {
		if iv.Length > 0 && !iv.Changed {
			unchanged += iv.Length.Seconds()
		}
	}
	lhs := func(lambda float64) float64 {
		s := changedTerm(lambda, mean) / 2 // the half changed interval
		for _, iv := range intervals {
			if iv.Length > 0 && iv.Changed {
				s += changedTerm(lambda, iv.Length.Seconds())
			}
		}
		return s
	}
	// Bracket the root: lhs is decreasing in λ.
	lo, hi := 1e-12/mean, 1.0/mean
	for lhs(hi) > unchanged {
		lo, hi = hi, hi*16
	}
	for lhs(lo) < unchanged && lo > 1e-30 {
		hi, lo = lo, lo/16
	}
	for range 200 {
		mid := math.Sqrt(lo * hi)
		if lhs(mid) > unchanged {
			lo = mid
		} else {
			hi = mid
		}
		if hi/lo < 1+1e-9 {
			break
		}
	}
	return math.Sqrt(lo * hi)
}

// changedTerm is t / (e^(λt) − 1), which tends to 1/λ as λt → 0.
func changedTerm(lambda, t float64) float64 {
	x := lambda * t
	if x < 1e-9 {
		return 1/lambda - t/2
	}
	if x > 700 {
		return 0
	}
	return t / math.Expm1(x)
}

// Freshness is the expected fraction of time that the copy of a page
// changing at rate lambda is up to date when it is visited every interval
// seconds: (1 − e^(−λI)) / (λI). It is 1 for a page that never changes.
func Freshness(lambda, interval float64) float64 {
	x := lambda * interval
	if x < 1e-12 {
		return 1
	}
	return -math.Expm1(-x) / x
}

// Allocate returns, for pages with the given change rates (per second),
// the visit frequencies (per second) that maximise their mean freshness
// when the frequencies sum to budget, each within [minFreq, maxFreq]
// (0 ≤ minFreq ≤ maxFreq; budget is raised to len(rates)·minFreq and
// lowered to len(rates)·maxFreq when outside what the bounds allow).
//
// The freshness of a page visited at frequency f is F(λ, f) =
// (f/λ)(1 − e^(−λ/f)), concave in f, with ∂F/∂f = (1 − e^(−x)(1 + x))/λ
// for x = λ/f. At the optimum every page not held at a bound has the same
// ∂F/∂f = μ (Cho and Garcia-Molina 2000); a page whose ∂F/∂f cannot reach
// μ even at f → 0 — one that changes too fast to be kept fresh — gets
// minFreq: fast pages get less, not more. μ is found by bisection.
func Allocate(rates []float64, budget, minFreq, maxFreq float64) []float64 {
	n := float64(len(rates))
	out := make([]float64, len(rates))
	if len(rates) == 0 {
		return out
	}
	budget = math.Max(budget, n*minFreq)
	budget = math.Min(budget, n*maxFreq)
	sum := func(mu float64) float64 {
		s := 0.0
		for i, l := range rates {
			out[i] = freqAt(l, mu, minFreq, maxFreq)
			s += out[i]
		}
		return s
	}
	// Σf falls as μ grows. ∂F/∂f ≤ 1/λ; bracket μ between 0 and the
	// largest 1/λ (plus room for pages that never change).
	lo, hi := 0.0, 0.0
	for _, l := range rates {
		if l > 0 {
			hi = math.Max(hi, 1/l)
		}
	}
	if hi == 0 {
		// Nothing changes: every page at the least frequency.
		for i := range out {
			out[i] = minFreq
		}
		return out
	}
	hi *= 2
	for range 200 {
		mid := (lo + hi) / 2
		if sum(mid) > budget {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-15*hi {
			break
		}
	}
	// Σf jumps where a page turns too fast to keep fresh (its ∂F/∂f is
	// nearly 1/λ over the whole range, so at μ = 1/λ any frequency is
	// optimal for it): share what is left of the budget between the
	// allocations at lo (over budget) and at hi (within it).
	sLo := sum(lo)
	atLo := append([]float64(nil), out...)
	sHi := sum(hi)
	if sLo > sHi && budget > sHi {
		theta := (budget - sHi) / (sLo - sHi)
		for i := range out {
			out[i] += theta * (atLo[i] - out[i])
		}
	}
	return out
}

// freqAt is the frequency of a page of rate lambda at which ∂F/∂f = mu,
// within [minFreq, maxFreq].
func freqAt(lambda, mu, minFreq, maxFreq float64) float64 {
	if lambda <= 0 {
		return minFreq // never changes: always fresh
	}
	target := lambda * mu // g(x) = 1 − e^(−x)(1 + x) must equal it
	if target >= 1 {
		return minFreq // too fast to keep fresh at this price
	}
	if target <= 0 {
		return maxFreq
	}
	// g rises from 0 to 1: bisect x.
	lo, hi := 0.0, 1.0
	for g(hi) < target {
		hi *= 2
		if hi > 1e6 {
			break
		}
	}
	for range 100 {
		mid := (lo + hi) / 2
		if g(mid) < target {
			lo = mid
		} else {
			hi = mid
		}
	}
	x := (lo + hi) / 2
	if x == 0 {
		return maxFreq
	}
	return math.Min(maxFreq, math.Max(minFreq, lambda/x))
}

func g(x float64) float64 { return -math.Expm1(-x) - x*math.Exp(-x) }
