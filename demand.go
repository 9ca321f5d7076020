package gentlecrawl

import (
	"context"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
	"github.com/gentlecrawl/gentlecrawl/internal/revisit"
)

// demand plans the revisits of a continuous crawl (Config.Continuous).
//
// Each page's rate of change is estimated from its visits
// (frontier.History.Observed, see observeVisit), and each host's rates are
// kept binned (revisit.Demand). A host's refresh budget is the request rate
// its pace allows — the gap politeness sets, and a share of MaxRate — of
// which RefreshShare while new URLs of the host wait, and all of it when
// none do. The price of the freshness-optimal allocation of that budget
// (Cho and Garcia-Molina) gives each page its visit frequency, within
// RevisitMin and RevisitMax: a page that changes faster than the budget can
// follow gets less, not more. The revisit is queued in the frontier, due at
// the last visit plus the page's interval, so it is durable and a revisit
// is a request like any other for politeness and host load.
//
// New URLs of a continuous crawl are queued due when they are found, not
// at once, so that revisits that fall due interleave with discovery in the
// order they fell due rather than wait for the whole backlog.
type demand struct {
	minFreq, maxFreq float64 // visits per second: 1/RevisitMax, 1/RevisitMin
	share            float64 // Config.RefreshShare
	maxRate          float64 // Config.MaxRate; 0: none
	// on says the crawl is continuous: only then is anything kept.
	on bool

	mu sync.Mutex
	// hosts holds the hosts with pages counted or new URLs queued
	// (hostDemand.active), and hosts paced lately: idle ones are dropped
	// once they outnumber the active ones (dropIdle). A host's pace is
	// told again at each of its turns, before its intervals are planned.
	hosts map[string]*hostDemand
	// active is how many of hosts are active, kept as they come and go,
	// so that a host's share of MaxRate costs no pass over them all.
	active int
	// hints are what sitemaps said of URLs not visited yet, by canonical
	// URL: taken (and forgotten) at the first visit.
	hints map[string]sitemapHint
}

// sitemapHint is what a sitemap says of a page: <lastmod> and <changefreq>
// as a rate (0: not given). Google ignores <changefreq> and trusts
// <lastmod> only when a site keeps it accurate; here both are used only
// until the page's own visits say something.
type sitemapHint struct {
	lastMod time.Time
	rate    float64
}

// maxHints bounds demand.hints; hints past it are dropped.
const maxHints = 1 << 20

// changeFreqRate is the rate a sitemap's <changefreq> stands for, in
// changes per second ("always" and "never" are the bounds).
func (d *demand) changeFreqRate(freq string) float64 {
	const day = 86400
	switch freq {
	case "always":
		return d.maxFreq
	case "hourly":
		return 1.0 / 3600
	case "daily":
		return 1.0 / day
	case "weekly":
		return 1.0 / (7 * day)
	case "monthly":
		return 1.0 / (30 * day)
	case "yearly":
		return 1.0 / (365 * day)
	case "never":
		// Slow enough that even the visits-per-change cap gives the
		// longest interval.
		return d.minFreq / revisit.MaxVisitsPerChange
	}
	return 0
}

// hint keeps what a sitemap said of a URL.
func (d *demand) hint(canonical string, lastMod time.Time, freq string) {
	h := sitemapHint{lastMod: lastMod, rate: d.changeFreqRate(freq)}
	if h.lastMod.IsZero() && h.rate == 0 {
		return
	}
	d.mu.Lock()
	if d.hints == nil {
		d.hints = make(map[string]sitemapHint)
	}
	if _, ok := d.hints[canonical]; ok || len(d.hints) < maxHints {
		d.hints[canonical] = h
	}
	d.mu.Unlock()
}

// takeHint returns and forgets what a sitemap said of a URL.
func (d *demand) takeHint(canonical string) (sitemapHint, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	h, ok := d.hints[canonical]
	if ok {
		delete(d.hints, canonical)
	}
	return h, ok
}

// hostDemand is what demand keeps per host.
type hostDemand struct {
	rates revisit.Demand
	// byType splits rates by kind of page (typeClass): HTML pages and
	// the rest (images, PDFs …) change at different paces, so each is
	// the other's poor prior.
	byType   map[string]*revisit.Demand
	capacity float64 // requests per second its pace allows; 0: not known yet
	fresh    int     // URLs queued as new and not settled yet
	price    float64
	priced   time.Time // when price was worked out
	dirty    int       // rate changes since
}

// active says the host has something demand must remember: pages whose
// rates are counted, or new URLs waiting that shrink its refresh budget.
func (h *hostDemand) active() bool { return h.rates.Len() > 0 || h.fresh > 0 }

// repriceEvery bounds how long a host's price is kept before the rates and
// budget that changed since are taken in.
const repriceEvery = time.Second

func newDemand(cfg Config) *demand {
	return &demand{
		minFreq: 1 / cfg.RevisitMax.Seconds(),
		maxFreq: 1 / cfg.RevisitMin.Seconds(),
		share:   cfg.RefreshShare,
		maxRate: cfg.MaxRate,
		on:      cfg.Continuous,
		hosts:   make(map[string]*hostDemand),
	}
}

// host returns the state of a host, new if it has none. Called with d.mu
// held; a change that may make the host active or idle is followed by
// settle.
func (d *demand) host(name string) *hostDemand {
	h := d.hosts[name]
	if h == nil {
		h = &hostDemand{}
		d.hosts[name] = h
	}
	return h
}

// settle counts a host whose state may have changed (wasActive: before the
// change) in or out of active. Called with d.mu held.
func (d *demand) settle(h *hostDemand, wasActive bool) {
	switch now := h.active(); {
	case now && !wasActive:
		d.active++
	case !now && wasActive:
		d.active--
	}
}

// minIdleKept is how many idle hosts demand keeps before it drops them.
const minIdleKept = 1024

// dropIdle forgets the idle hosts once they outnumber the active ones
// (and minIdleKept): what an idle host keeps is its pace, told again at
// its next turn. A pass over all hosts each time they have doubled costs
// a constant per host added. Called with d.mu held.
func (d *demand) dropIdle() {
	if len(d.hosts) <= 2*d.active+minIdleKept {
		return
	}
	for name, h := range d.hosts {
		if !h.active() {
			delete(d.hosts, name)
		}
	}
}

// rateOf is the estimated change rate of a page from its history, and false
// when its visits say nothing yet.
func rateOf(h *frontier.History) (float64, bool) {
	if h == nil || len(h.Observed) == 0 {
		return 0, false
	}
	r := revisit.Estimate(observations(h), !h.DatesUnreliable)
	return r, r > 0
}

// priorFor returns a copy of the rates a page of the host borrows from:
// those of its kind when there are enough, else the host's. Called with
// d.mu held; the copy is used without it.
func (hd *hostDemand) priorFor(h *frontier.History) revisit.Demand {
	if t := hd.byType[typeClass(h)]; t != nil && t.Len() >= 30 {
		return *t
	}
	return hd.rates
}

// observations converts a history's visits for the estimators.
func observations(h *frontier.History) []revisit.Observation {
	obs := make([]revisit.Observation, len(h.Observed))
	for i, o := range h.Observed {
		obs[i] = revisit.Observation{Interval: o.Interval, Changed: o.Changed, Dated: o.Dated, Age: o.Age, Before: o.Before}
	}
	return obs
}

// typeClass is the kind of page a history is of, for priors: "html" or
// "other".
func typeClass(h *frontier.History) string {
	if strings.Contains(strings.ToLower(h.ContentType), "html") {
		return "html"
	}
	return "other"
}

// byType returns the rates of a host's pages of one type class.
func (h *hostDemand) typeRates(class string) *revisit.Demand {
	if h.byType == nil {
		h.byType = make(map[string]*revisit.Demand)
	}
	t := h.byType[class]
	if t == nil {
		t = new(revisit.Demand)
		h.byType[class] = t
	}
	return t
}

// pace tells demand the gap its host's politeness sets between requests.
func (d *demand) pace(host string, gap time.Duration) {
	if !d.on {
		return
	}
	capacity := 1 / math.Max(gap.Seconds(), 0.01)
	d.mu.Lock()
	d.dropIdle() // first: this host's pace is wanted by its turn
	d.host(host).capacity = capacity
	d.mu.Unlock()
}

// addFresh counts n URLs of host queued as new (negative: settled). Only a
// continuous crawl plans revisits, and only it counts.
func (d *demand) addFresh(host string, n int) {
	if !d.on || n == 0 {
		return
	}
	d.mu.Lock()
	h := d.host(host)
	was := h.active()
	h.fresh = max(0, h.fresh+n)
	d.settle(h, was)
	d.dropIdle()
	d.mu.Unlock()
}

// count takes a page's estimate into its host's rates: its rate from the
// history before the visit out, the one after in.
func (d *demand) count(host string, before, after *frontier.History) {
	old, hadOld := rateOf(before)
	rate, ok := rateOf(after)
	if !hadOld && !ok {
		return
	}
	d.mu.Lock()
	h := d.host(host)
	was := h.active()
	if hadOld {
		h.rates.Add(old, -1)
		h.typeRates(typeClass(before)).Add(old, -1)
	}
	if ok {
		h.rates.Add(rate, 1)
		h.typeRates(typeClass(after)).Add(rate, 1)
	}
	h.dirty++
	d.settle(h, was)
	d.mu.Unlock()
}

// interval is how long after a visit a page of host, with the history
// after that visit, is visited again. hinted is the rate a sitemap gave
// for it (0: none), used while its visits say nothing.
func (d *demand) interval(host string, h *frontier.History, now time.Time, hinted float64) time.Duration {
	d.mu.Lock()
	hd := d.host(host)
	prior := hd.priorFor(h)
	median := d.prior(hd)
	price := d.priceOf(hd, now)
	counted := hd.rates.Len() > 0
	d.mu.Unlock()

	// The estimates work on the copy: the lock is not held through them.
	obs := observations(h)
	dates := !h.DatesUnreliable
	rate := 0.0
	if len(obs) > 0 {
		rate = prior.Posterior(obs, dates)
	}
	ok := rate > 0
	switch {
	case ok:
	case hinted > 0:
		rate = hinted
	default:
		rate = median
	}
	f := revisit.Frequency(rate, price, d.minFreq, d.maxFreq)
	if ok {
		// Over the uncertainty of the rate, not at its mean.
		if g, decided := prior.Decide(obs, dates, price, d.minFreq, d.maxFreq); decided {
			f = g
		}
	}
	if !ok || !counted {
		// Not in the host's rates (nothing seen yet, or the first page):
		// no more than the page itself is worth.
		f = math.Min(f, revisit.CappedFrequency(rate, d.minFreq, d.maxFreq))
		if !counted {
			f = revisit.CappedFrequency(rate, d.minFreq, d.maxFreq)
		}
	}
	return time.Duration(float64(time.Second) / f)
}

// prior is the rate assumed for a page whose visits say nothing yet: the
// median of its host's pages, else the geometric middle of the bounds.
func (d *demand) prior(h *hostDemand) float64 {
	if m := h.rates.Median(); m > 0 {
		return m
	}
	return math.Sqrt(d.minFreq * d.maxFreq)
}

// priceOf returns the host's price, worked out again when it is older
// than repriceEvery or a twentieth of its pages changed estimate since.
func (d *demand) priceOf(h *hostDemand, now time.Time) float64 {
	if now.Sub(h.priced) < repriceEvery && h.dirty*20 < h.rates.Len() {
		return h.price
	}
	h.price = h.rates.Price(d.budget(h), d.minFreq, d.maxFreq)
	h.priced, h.dirty = now, 0
	return h.price
}

// budget is the visits per second planned for a host's revisits.
func (d *demand) budget(h *hostDemand) float64 {
	capacity := h.capacity
	if d.maxRate > 0 {
		share := d.maxRate / float64(max(d.active, 1))
		if capacity == 0 || share < capacity {
			capacity = share
		}
	}
	if capacity == 0 {
		capacity = 1 // not paced yet: one request a second
	}
	if h.fresh > 0 {
		return capacity * d.share
	}
	return capacity
}

// revisitAt is when a continuous crawl visits a URL again after a visit
// with this outcome, or zero for none. Pages fetched, unchanged or not
// changed are planned from their estimated rate; pages gone or failing are
// looked at again after the longest interval; URLs settled without a
// request (disallowed, duplicates, skipped) are not revisited.
func (c *Crawler) revisitAt(host string, outcome frontier.Outcome, h *frontier.History, now time.Time, hinted float64) time.Time {
	if !c.cfg.Continuous || h == nil {
		return time.Time{}
	}
	switch outcome {
	case frontier.Fetched, frontier.Unchanged:
		return now.Add(c.demand.interval(host, h, now, hinted))
	case frontier.Gone, frontier.Failed:
		return now.Add(c.cfg.RevisitMax)
	}
	return time.Time{}
}

// planRevisits starts a continuous crawl: every page's estimate is counted,
// and the pages visited by earlier runs that are not queued (a job crawled
// without Continuous) are queued for their revisit. Two passes over the
// histories: the first counts, so that the second plans with every page's
// rate known.
func (c *Crawler) planRevisits(ctx context.Context, hosts []frontier.HostInfo) error {
	pendingOf := make(map[string]int)
	err := c.store.EachHistory(ctx, func(h *frontier.History) error {
		if u, err := url.Parse(h.URL); err == nil {
			host := politenessKey(u)
			c.demand.count(host, nil, h)
			if h.Pending {
				pendingOf[host]++
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, hi := range hosts {
		c.demand.addFresh(hi.Host, hi.Pending-pendingOf[hi.Host])
	}
	now := time.Now()
	return c.requeueHistories(ctx, func(h *frontier.History, cand *frontier.Candidate) bool {
		switch frontier.Outcome(h.Outcome) {
		case frontier.Fetched, frontier.Unchanged, frontier.Gone, frontier.Failed:
		default:
			return false
		}
		if h.Pending {
			return false
		}
		cand.Due = c.revisitAt(cand.Host, frontier.Outcome(h.Outcome), h, h.Fetched, 0)
		if cand.Due.Before(now) {
			cand.Due = now
		}
		return true
	})
}

// observeVisit adds what a visit saw to the page's history h (the
// history before it is prev, nil for a first visit): the interval since the
// last visit, whether the page changed, and how long ago it changed by its
// Last-Modified when that can be trusted. changed says the content
// differs from the last capture; notModified, that the server answered 304.
func observeVisit(prev, h *frontier.History, res http.Header, changed, notModified bool, now time.Time) {
	lm, lmOK := time.Time{}, false
	if v := res.Get("Last-Modified"); v != "" {
		if t, err := http.ParseTime(v); err == nil {
			lm, lmOK = t, true
		}
	}
	// HTTP dates have one-second resolution, and clocks differ a little.
	const slack = 2 * time.Second
	if prev == nil || prev.Fetched.IsZero() {
		if lmOK && lm.Before(now) {
			h.Observe(frontier.Observation{Interval: now.Sub(lm), Before: true})
		}
		return
	}
	o := frontier.Observation{Interval: max(0, now.Sub(prev.Fetched)), Changed: changed, NotModified: notModified}
	switch {
	case changed && lmOK && lm.After(prev.Fetched.Add(-slack)) && !lm.After(now.Add(slack)):
		o.Dated, o.Age = true, max(0, now.Sub(lm))
	case changed && lmOK:
		// The content changed, but its date says it did not since the
		// last visit (or names the future): the dates cannot be used.
		h.DatesUnreliable = true
	case !changed && !notModified && lmOK && prev.LastModified != "" && res.Get("Last-Modified") != prev.LastModified:
		if plm, err := http.ParseTime(prev.LastModified); err == nil && lm.After(plm) {
			// The date moved while the content stayed.
			h.DatesUnreliable = true
		}
	}
	h.Observe(o)
}

// needsRecheck says a refresh of a page is sent without validators: its
// last RecheckEvery visits were all answered 304 (a server whose
// validators lie answers 304 whatever changed), or its origin's validators
// were found to lie.
func (c *Crawler) needsRecheck(origin string, prev *frontier.History) bool {
	if c.validators.lying(origin) {
		return true
	}
	n := c.cfg.RecheckEvery
	if n <= 0 || len(prev.Observed) < n {
		return false
	}
	for _, o := range prev.Observed[len(prev.Observed)-n:] {
		if !o.NotModified {
			return false
		}
	}
	return true
}

// dropLies merges the visits answered 304 just before a visit that found,
// without validators, that the page had changed while its validators
// stayed the same: those 304s were not evidence. The change happened
// somewhere in the merged interval.
func dropLies(h *frontier.History) {
	n := len(h.Observed)
	if n == 0 {
		return
	}
	last := h.Observed[n-1]
	i := n - 1
	for i > 0 && h.Observed[i-1].NotModified {
		i--
		last.Interval += h.Observed[i].Interval
	}
	last.Dated, last.Age = false, 0
	h.Observed = append(h.Observed[:i], last)
}

// saveValidators keeps what the validator book learned in the job now,
// rather than at the end of the run: a change of an origin's mode is rare
// and worth surviving a kill.
func (c *Crawler) saveValidators(ctx context.Context) {
	if err := c.validators.save(ctx, c.store); err != nil {
		c.cfg.Logger.Warn("cannot save what was learned of validators", "err", err)
	}
}

// report says, per host with pages counted, how often its pages change
// (10th, 50th and 90th percentiles of the estimates) and its refresh
// budget against what its pages are worth.
func (d *demand) report() map[string]HostDemand {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]HostDemand)
	every := func(rate float64) time.Duration {
		if rate <= 0 {
			return 0
		}
		s := 1 / rate
		if s >= math.MaxInt64/float64(time.Second) {
			return 0 // hundreds of years: no change expected
		}
		return time.Duration(s * float64(time.Second))
	}
	for name, h := range d.hosts {
		if h.rates.Len() == 0 {
			continue
		}
		out[name] = HostDemand{
			Pages:     h.rates.Len(),
			ChangeP10: every(h.rates.Quantile(0.9)),
			ChangeP50: every(h.rates.Median()),
			ChangeP90: every(h.rates.Quantile(0.1)),
			Budget:    d.budget(h),
			Worth:     h.rates.Useful(d.minFreq, d.maxFreq),
		}
	}
	return out
}
