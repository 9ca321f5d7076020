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

// Observation is one visit of a page as an estimator sees it.
type Observation struct {
	// Interval is the time since the previous visit; for a Before
	// observation, the time from the page's Last-Modified date to its
	// first visit.
	Interval time.Duration
	// Changed says the visit found the page changed.
	Changed bool
	// Dated says Age is known: the time from the page's last change (its
	// Last-Modified) to the visit, for a visit that found it changed.
	Dated bool
	Age   time.Duration
	// Before marks the time before the first visit during which the page,
	// by its Last-Modified date, did not change.
	Before bool
}

// Estimate returns a page's change rate, in changes per second, from its
// visits, or 0 when they say nothing. With dates (its Last-Modified
// dates are trusted, and every visit that found a change is dated) it is
// DatedRate; otherwise Rate over the visits' intervals.
func Estimate(obs []Observation, dates bool) float64 {
	if dates {
		if _, t, dated := datedEvidence(obs); dated && t > 0 {
			return DatedRate(obs)
		}
	}
	ivs := make([]Interval, 0, len(obs))
	for _, o := range obs {
		if !o.Before {
			ivs = append(ivs, Interval{Length: o.Interval, Changed: o.Changed})
		}
	}
	return Rate(ivs)
}

// DatedRate estimates a page's change rate from visits whose changes are
// dated, as in Cho and Garcia-Molina's estimator for a known date of last
// change ("Estimating frequency of change", §5). A visit that found no
// change shows the page still for its whole interval; one that found a
// change shows it still from its last change (Age) to the visit, and a
// change at that date, whatever happened before it. So does the first
// visit (a Before observation): its Last-Modified dates a change, and the
// page was still since. With a Poisson process of rate λ the likelihood is
// λ^X·e^(−λT), for X dated changes and T the total still time, so the
// maximum likelihood estimate is X/T. With no dated change yet it is
// regularised as Rate is, with half a change: ½/T, finite and positive.
// It returns 0 when T is 0.
func DatedRate(obs []Observation) float64 {
	x, t, _ := datedEvidence(obs)
	if t <= 0 {
		return 0
	}
	return math.Max(x, 0.5) / t
}

// datedEvidence returns the dated changes X and the still time T of a
// page's visits (see DatedRate), and whether every change seen is dated.
func datedEvidence(obs []Observation) (x, t float64, dated bool) {
	dated = true
	for _, o := range obs {
		switch {
		case o.Changed:
			x++
			t += o.Age.Seconds()
			dated = dated && o.Dated
		case o.Before:
			x++
			t += o.Interval.Seconds()
		default:
			t += o.Interval.Seconds()
		}
	}
	return x, t, dated
}

// MaxVisitsPerChange bounds what a set of pages is worth visiting: the
// visits per second it takes to see each page MaxVisitsPerChange times
// per expected change (each copy then fresh about 94 % of the time, and a
// further visit buys less than a percent), within the bounds. A budget
// larger than that is not spent (Demand.Useful): a site's requests are not
// spent where they buy almost nothing.
const MaxVisitsPerChange = 8

// Frequency is the visit frequency (per second) of a page of rate lambda
// at the price mu of the freshness-optimal allocation (see Allocate),
// within [minFreq, maxFreq].
func Frequency(lambda, mu, minFreq, maxFreq float64) float64 {
	return freqAt(lambda, mu, minFreq, maxFreq)
}

// CappedFrequency is the most a single page of rate lambda is worth: at
// most MaxVisitsPerChange visits per expected change, within [minFreq,
// maxFreq].
func CappedFrequency(lambda, minFreq, maxFreq float64) float64 {
	return capFreq(lambda, minFreq, maxFreq)
}

func capFreq(lambda, minFreq, maxFreq float64) float64 {
	return math.Max(minFreq, math.Min(maxFreq, MaxVisitsPerChange*lambda))
}

// Demand is the distribution of the change rates of a set of pages, in
// bins of a twelfth of a decade between 10⁻¹⁰ and 10³ changes per second
// (a page that never changed in its visits still gets a small rate), from
// which Price finds the allocation of a budget. It is a few kilobytes
// whatever the number of pages. The zero value is empty.
type Demand struct {
	bins  [demandBins]int32
	total int
}

const (
	demandPerDecade = 12
	demandMinExp    = -10
	demandBins      = 13 * demandPerDecade
)

func demandBin(rate float64) int {
	if !(rate > 0) {
		return 0
	}
	b := int(math.Floor((math.Log10(rate) - demandMinExp) * demandPerDecade))
	return min(max(b, 0), demandBins-1)
}

// binRate is the rate a bin stands for: its geometric middle.
func binRate(b int) float64 {
	return math.Pow(10, demandMinExp+(float64(b)+0.5)/demandPerDecade)
}

// Add counts n pages (−n to take them out) of the given rate.
func (d *Demand) Add(rate float64, n int) {
	b := demandBin(rate)
	c := max(0, d.bins[b]+int32(n))
	d.total += int(c - d.bins[b])
	d.bins[b] = c
}

// Len is the number of pages counted.
func (d *Demand) Len() int { return d.total }

// Median is the median rate of the pages counted, or 0 with none.
func (d *Demand) Median() float64 { return d.Quantile(0.5) }

// Quantile is the q-quantile (0 ≤ q ≤ 1) of the rates of the pages
// counted, to the bin, or 0 with none.
func (d *Demand) Quantile(q float64) float64 {
	if d.total == 0 {
		return 0
	}
	seen := 0
	for b, c := range d.bins {
		seen += int(c)
		if float64(seen) >= q*float64(d.total) && seen > 0 {
			return binRate(b)
		}
	}
	return binRate(demandBins - 1)
}

// Useful is the most visits per second the pages are worth: each at its
// CappedFrequency. A budget is spent up to that and no further.
func (d *Demand) Useful(minFreq, maxFreq float64) float64 {
	s := 0.0
	for b, c := range d.bins {
		if c > 0 {
			s += float64(c) * capFreq(binRate(b), minFreq, maxFreq)
		}
	}
	return s
}

// Price returns the price μ of the freshness-optimal allocation of budget
// (visits per second for all the pages) within [minFreq, maxFreq], or 0
// when the budget is more than they can use. The budget is lowered to
// Useful first: what is worth spending is spent where it buys most,
// rather than each page capped on its own, which hands what the slow pages
// are not given to the fast ones.
func (d *Demand) Price(budget, minFreq, maxFreq float64) float64 {
	sum := func(mu float64) float64 {
		s := 0.0
		for b, c := range d.bins {
			if c > 0 {
				r := binRate(b)
				s += float64(c) * freqAt(r, mu, minFreq, maxFreq)
			}
		}
		return s
	}
	budget = math.Min(budget, d.Useful(minFreq, maxFreq))
	if d.total == 0 || sum(0) <= budget {
		return 0
	}
	// Σf falls as μ grows; at μ ≥ 1/λ for the slowest page, every page is
	// at minFreq.
	lo, hi := 0.0, 2/binRate(0)
	for range 200 {
		mid := math.Sqrt(math.Max(lo, 1e-300) * hi)
		if lo == 0 {
			mid = hi / 1e6
			if sum(mid) > budget {
				lo = mid
				continue
			}
			hi = mid
			continue
		}
		if sum(mid) > budget {
			lo = mid
		} else {
			hi = mid
		}
		if hi/lo < 1+1e-6 {
			break
		}
	}
	return hi
}

// minPriorPages is how many pages a Demand must count before Posterior
// uses it as a prior.
const minPriorPages = 30

// Posterior estimates a page's change rate from its visits with the rates
// of the other pages of its host (d) as the prior: the posterior mean over
// d's bins, each weighted by its pages (plus a little, so that no rate is
// ruled out) and by the likelihood of the visits at its rate — λ^X·e^(−λT)
// when the visits are dated (see DatedRate), Π(1 − e^(−λt)) over the
// intervals that saw a change times e^(−λ·Σt) over those that did not
// otherwise (see Rate). A page with many visits gets about its own
// estimate; one with few borrows from pages like it, which keeps a single
// lucky or unlucky visit from deciding its schedule. With fewer than 30
// pages in d it is Estimate.
func (d *Demand) Posterior(obs []Observation, dates bool) float64 {
	w, ok := d.posterior(obs, dates)
	if !ok {
		return Estimate(obs, dates)
	}
	var num, den float64
	for b := range w {
		num += w[b] * binRate(b)
		den += w[b]
	}
	return num / den
}

// posterior returns the posterior weights of d's bins for a page with
// these visits (see Posterior), unnormalised, and false when d is too
// small to be a prior or the visits say nothing.
func (d *Demand) posterior(obs []Observation, dates bool) (w [demandBins]float64, ok bool) {
	if d.total < minPriorPages || len(obs) == 0 {
		return w, false
	}
	x, t, dated := datedEvidence(obs)
	dated = dates && dated && t > 0
	var changed []float64
	var still float64
	if !dated {
		for _, o := range obs {
			switch {
			case o.Before || o.Interval <= 0:
			case o.Changed:
				changed = append(changed, o.Interval.Seconds())
			default:
				still += o.Interval.Seconds()
			}
		}
		if len(changed) == 0 && still == 0 {
			return w, false
		}
	}
	logLik := func(l float64) float64 {
		if dated {
			return x*math.Log(l) - l*t
		}
		s := -l * still
		for _, c := range changed {
			s += math.Log(-math.Expm1(-l * c))
		}
		return s
	}
	const floor = 0.01 // pages a bin counts at least
	best := math.Inf(-1)
	for b, c := range d.bins {
		w[b] = math.Log(float64(c)+floor) + logLik(binRate(b))
		best = math.Max(best, w[b])
	}
	for b := range w {
		w[b] = math.Exp(w[b] - best)
	}
	return w, true
}

// Decide returns the visit frequency, within [minFreq, maxFreq], that is
// best for a page at the price mu when its rate is uncertain: the one at
// which the expected gain in freshness of one more visit per second, over
// the posterior of its rate (see Posterior), equals mu —
// Σ w_b·∂F/∂f(λ_b, f) = mu·Σ w_b. At a single rate, the best frequency
// drops to minFreq where a page turns too fast to keep fresh; over the
// posterior it falls smoothly, so an estimate that lands just past that
// point does not cost a page all its visits. It reports false when d
// cannot be a prior (then Frequency at the Posterior rate applies).
func (d *Demand) Decide(obs []Observation, dates bool, mu, minFreq, maxFreq float64) (float64, bool) {
	w, ok := d.posterior(obs, dates)
	if !ok {
		return 0, false
	}
	if mu <= 0 {
		return maxFreq, true
	}
	var total float64
	for _, x := range w {
		total += x
	}
	// gain is Σ w_b·∂F/∂f(λ_b, f)/Σ w_b − mu, which falls as f grows.
	gain := func(f float64) float64 {
		s := 0.0
		for b, x := range w {
			if x > 1e-12*total {
				l := binRate(b)
				s += x * g(l/f) / l
			}
		}
		return s/total - mu
	}
	if gain(maxFreq) >= 0 {
		return maxFreq, true
	}
	if minFreq <= 0 || gain(minFreq) <= 0 {
		return minFreq, true
	}
	lo, hi := minFreq, maxFreq
	for range 100 {
		mid := math.Sqrt(lo * hi)
		if gain(mid) > 0 {
			lo = mid
		} else {
			hi = mid
		}
		if hi/lo < 1+1e-6 {
			break
		}
	}
	return math.Sqrt(lo * hi), true
}
