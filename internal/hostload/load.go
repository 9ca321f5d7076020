package hostload

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// LoadConfig tunes how a host's gap follows the way it copes. The zero value
// of each field selects the default given in its comment.
type LoadConfig struct {
	// MaxGap bounds the gap that slow responses and errors can widen to.
	// Default 2 minutes.
	MaxGap time.Duration
	// RetryAfterMax clamps a Retry-After the server asks for. Default 1 hour.
	RetryAfterMax time.Duration
	// PauseAfter is the number of consecutive failures (errors or load
	// statuses) after which the host is paused. Default 3.
	PauseAfter int
	// PauseBase is the first pause; each further failure doubles it, up to
	// PauseMax. Defaults 30 s and 1 hour.
	PauseBase, PauseMax time.Duration
	// MaxPerAddr is how many requests may be in flight at once to one IP
	// address, whatever the hosts: sites on shared hosting share a server.
	// It applies once a host's address is known. Default DefaultMaxPerAddr.
	MaxPerAddr int
	// Slow is how many times its baseline a host's recent response time must
	// be to count as struggling. Default 2.
	Slow float64
}

func (c LoadConfig) withDefaults() LoadConfig {
	if c.MaxGap <= 0 {
		c.MaxGap = 2 * time.Minute
	}
	if c.RetryAfterMax <= 0 {
		c.RetryAfterMax = time.Hour
	}
	if c.PauseAfter <= 0 {
		c.PauseAfter = 3
	}
	if c.PauseBase <= 0 {
		c.PauseBase = 30 * time.Second
	}
	if c.PauseMax <= 0 {
		c.PauseMax = time.Hour
	}
	if c.MaxPerAddr <= 0 {
		c.MaxPerAddr = DefaultMaxPerAddr
	}
	if c.Slow <= 1 {
		c.Slow = 2
	}
	return c
}

// Outcome is what one request to a host came to, as far as load goes.
type Outcome struct {
	Start, End time.Time
	// Latency is the server's response time (time to first byte).
	Latency time.Duration
	// Status is the HTTP status; 0 when there was no response.
	Status int
	// Failed is true for a request that got no response because of the
	// server or the network: refused, reset, timed out.
	Failed bool
	// RetryAfter is the raw Retry-After header, if any.
	RetryAfter string
	// Addr is the IP address the request reached, if known.
	Addr string
}

// IsLoadSignal reports whether an outcome says the server is struggling.
// 403, 404 and 410 are answers, not load: they never slow a host down.
func (o Outcome) IsLoadSignal() bool {
	switch o.Status {
	case 429, 500, 502, 503, 504:
		return true
	}
	return o.Failed
}

// Load follows how one host copes and decides when its next request may
// start. Two things set the pace:
//
//   - the floor: the smallest gap from the end of one request to the start
//     of the next that the site or the configuration allows (--delay,
//     Crawl-delay, an override). It is never undercut.
//   - the rate: how many requests per second the host is sent, learned from
//     how it answers. It spaces request starts, on top of the floor.
//
// The rate is controlled in time, the way TCP's CUBIC (RFC 9438) controls
// a window in round trips:
//
//   - Slow start. A host's rate starts at slowStartRate and doubles every
//     slowStartDoubling answers, but no faster than every
//     slowStartMinDoubling, until the first congestion event, which halves
//     it (as TCP's window at its first loss). It never runs far ahead of
//     the rate the host is really answering at.
//   - A congestion event is a refusal (429, 502, 503, 504, a 500 that is
//     not alone, a connection refused, reset or timed out) or response
//     times well above the host's baseline. It cuts the rate to beta times
//     the rate measured over the last requests — what the server really
//     got, not the target — and that measured rate becomes the host's
//     ceiling. Load signals from requests sent before the cut took effect,
//     or with no success since, belong to the same event, as losses within
//     one window do in TCP.
//   - The rate then climbs back, fast at first and more and more slowly as
//     it nears the ceiling, levelling off headroom under it after one cycle
//     (long enough for about cycleRequests requests, and at least
//     pauseShare times the pause, within minCycle..maxCycle); then it grows
//     faster and faster again, so the ceiling decays and a server that got
//     faster is found again.
//
// Slow answers are weaker evidence than a refusal: the cut they cause does
// not halve a slow start, and when the answers stay as slow at the lower
// rate the cut asked for, the host is slow for another reason (its own
// jobs, a busy neighbour): the slow answers become its baseline and the
// cuts of that run of latency events are undone, so that slowness the
// crawler does not cause cannot starve the rate.
//
// A host with a fixed limit is thus crawled just under it, and the limit is
// touched about once a cycle. A refusal also pauses the host: for as long
// as Retry-After asks (clamped to RetryAfterMax), or else briefly (seconds);
// refusals that go on without a success in between pause it longer each
// time (PauseAfter, PauseBase). 403, 404 and 410 are answers, not load.
// Every decision comes with its reason.
//
// A Load is not safe for concurrent use; the scheduler's holder of a host
// owns its Load.
type Load struct {
	cfg LoadConfig

	floor    time.Duration
	floorWhy string
	until    time.Time // no request before this (Retry-After, pause)
	untilWhy string
	clamped  time.Duration // the Retry-After asked for, when it was clamped
	failures int           // consecutive load signals
	cooldown int           // observations to ignore latency after a latency event
	healthy  int           // healthy answers in a row

	latencies [32]time.Duration // recent response times, a ring
	n         int               // samples seen
	baseline  time.Duration     // low percentile of recent response times
	sampledAt time.Time         // end of the last request sampled
	rand      *rand.Rand

	// The rate.
	started bool // the host's first request has been seen
	rateState
	// beforeSlow is the rate as it was before a run of latency events: a
	// run that turns out not to be the crawler's doing is undone.
	beforeSlow rateState
	cutAt      time.Time // end of the request that caused the last cut
	answered   bool      // a request sent after the cut was answered
	// slowAnswers counts the healthy answers of slow start.
	slowAnswers  int
	slowEvent    bool          // the last congestion event was slow answers, not a refusal
	eventLatency time.Duration // the recent response time at the last latency event
	// lastSignal is the number of starts (ns) at the last load signal.
	lastSignal int
	paced      time.Time         // earliest start of the next request by the rate
	starts     [rateWindow]int64 // recent request starts (Unix ns), a ring
	ns         int               // starts seen
	resumed    time.Time         // the end of the last pause: earlier starts are not measured

	// For the summary.
	events     int
	decayed    float64   // request starts, exponentially decayed over settleWindow
	decayedAt  time.Time // the start last counted in decayed
	firstStart time.Time
}

// The rate control's constants (see Load).
const (
	slowStartRate        = 20.0 // requests/s
	slowStartDoubling    = 2    // answers
	slowStartMinDoubling = 150 * time.Millisecond
	beta                 = 0.75 // the rate after a cut, as a share of the measured rate
	// slowStartCut is the cut that ends slow start: the rate may have
	// doubled since the limit was passed, as TCP's window halves then.
	slowStartCut = 0.5
	// headroom is how far under its ceiling the rate levels off: the
	// rate measured at a refusal is a little above the host's limit.
	headroom      = 0.03
	cycleRequests = 600
	pauseShare    = 10
	minCycle      = 10 * time.Second
	maxCycle      = 2 * time.Minute
	// rateWindow and rateSpan bound the requests that measure the rate a
	// host is sent: the last rateWindow starts within rateSpan.
	rateWindow = 16
	rateSpan   = 5 * time.Second
	// aheadOfMeasured is how far the rate may run ahead of the measured
	// one: a host whose answers take longer than the rate's interval sets
	// the pace itself, and the rate must not climb on while it does.
	aheadOfMeasured = 4
	// settleWindow is the time over which the summary's settled rate is
	// averaged.
	settleWindow = 30 * time.Second
	// latencyCooldown is how many answers after a latency event are not
	// read for latency: the server's queue needs them to drain.
	latencyCooldown = 5
	// latencyQuiet is how long after a cut latency is not read: a server's
	// queue takes a while to drain, and its answers to show it.
	latencyQuiet = 2 * time.Second
	// baselineRise is the time over which the baseline follows response
	// times that rise and stay up.
	baselineRise = time.Minute
	// isolatedSignal is how many requests apart two load signals must be
	// for a 500 to be taken for a broken page rather than load.
	isolatedSignal = 20
)

// rateState is what the rate's curve depends on.
type rateState struct {
	low       float64       // the rate at growFrom, requests/s
	ceil      float64       // the rate measured at the last congestion event; 0 before the first
	growFrom  time.Time     // the rate grows from low from here on
	cycle     time.Duration // time from low back to ceil
	event     Congestion    // what the host did at the last congestion event, for the summary
	eventRate float64       // the rate measured then
	paceWhy   string        // why the rate holds requests back, for Decision.Why
}

// NewLoad returns the load state of a host with the given floor (the
// smallest gap the site and the configuration allow) and its reason.
func NewLoad(cfg LoadConfig, floor time.Duration, why string, seed uint64) *Load {
	l := &Load{cfg: cfg.withDefaults(), rand: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
	l.SetFloor(floor, why)
	return l
}

// SetFloor changes the floor (a new robots.txt Crawl-delay, an override).
func (l *Load) SetFloor(floor time.Duration, why string) {
	l.floor, l.floorWhy = floor, why
	if l.cfg.MaxGap < floor {
		l.cfg.MaxGap = floor
	}
}

// Gap returns the current smallest interval between requests: the floor,
// or the rate's interval when that is longer.
func (l *Load) Gap() time.Duration {
	return max(l.floor, l.interval(l.rateAt(l.decayedAt)))
}

// Rate returns the host's current rate in requests per second (+Inf before
// its first request).
func (l *Load) Rate() float64 { return l.rateAt(l.decayedAt) }

// Baseline returns the host's baseline response time (0 until known).
func (l *Load) Baseline() time.Duration { return l.baseline }

// Decision is when a host may be asked again, and why.
type Decision struct {
	Next   time.Time
	Reason Reason // for the progress display: delay, rate, or backoff
	Why    string // for people: "Crawl-delay 10s", "Retry-After 2m0s until 14:03:10", ...
}

// Observe takes the outcome of a request and decides when the next one may
// start.
func (l *Load) Observe(o Outcome) Decision {
	l.noteStart(o.Start)
	if o.IsLoadSignal() {
		l.failures++
		l.healthy = 0
		ra, hasRA := ParseRetryAfter(o.RetryAfter, o.End)
		cause := Congestion{Status: o.Status, RetryAfter: ra, HasRetryAfter: hasRA}
		why := cause.String()
		// A lone 500 among successes is a broken page, not load (RFC
		// 9110 §15.6.1: an unexpected condition); a second load signal
		// within isolatedSignal requests makes it one.
		lone := o.Status == 500 && (l.lastSignal == 0 || l.ns-l.lastSignal > isolatedSignal)
		l.lastSignal = l.ns
		if lone {
			l.failures--
			return l.pace(o)
		}
		// Refusals with no success in between, or of requests sent
		// before the last cut, are one congestion event: the rate is
		// cut once, and the pause grows instead.
		event := l.answered && !o.Start.Before(l.cutAt)
		if event {
			l.congestion(o, cause, true)
		}
		if hasRA {
			wait := ra
			l.clamped = 0
			if wait > l.cfg.RetryAfterMax {
				l.clamped, wait = wait, l.cfg.RetryAfterMax
			}
			l.setUntil(o.End.Add(wait), fmt.Sprintf("Retry-After %s", wait))
		}
		// A 429 or 503 is a server that is up and says how it copes (a
		// rate limiter's window may take seconds to reopen): its pause
		// doubles as refusals go on. A host that fails otherwise gets
		// the long pauses after PauseAfter failures in a row.
		refusal := o.Status == 429 || o.Status == 503
		if (refusal || l.failures < l.cfg.PauseAfter) && (!hasRA || l.failures > 1) {
			pause := min(l.briefPause()<<min(l.failures-1, 30), l.cfg.PauseMax)
			l.setUntil(o.End.Add(pause), fmt.Sprintf("%s: paused %v", why, pause.Round(time.Millisecond)))
		}
		if !refusal && l.failures >= l.cfg.PauseAfter {
			pause := l.cfg.PauseBase << min(l.failures-l.cfg.PauseAfter, 30)
			if pause <= 0 || pause > l.cfg.PauseMax {
				pause = l.cfg.PauseMax
			}
			l.setUntil(o.End.Add(pause), fmt.Sprintf("paused after %d failures in a row", l.failures))
		}
		if event {
			// The longer a refusal's pause, the rarer the probes: a
			// cycle is at least pauseShare pauses long.
			l.cycle = min(max(l.cycle, pauseShare*l.until.Sub(o.End)), maxCycle)
		}
		// The rate grows again, and is measured afresh, once the pause
		// is over.
		l.growFrom = later(l.growFrom, l.until)
		l.resumed = later(l.resumed, l.until)
	} else {
		l.failures = 0
		if !o.Start.Before(l.cutAt) {
			l.answered = true
		}
		if o.Latency > 0 {
			l.sample(o.Latency, o.End)
		}
		switch {
		case l.cooldown > 0 || o.Start.Before(l.cutAt.Add(latencyQuiet)):
			l.cooldown = max(l.cooldown-1, 0)
		case l.struggling():
			if m, ok := l.measured(); l.slowEvent && ok && m >= 0.9*l.low && m < 0.9*l.eventRate && 10*l.recent() >= 9*l.eventLatency {
				// As slow as at the last latency event, though sent
				// clearly slower since, at the rate that event set: the
				// host is slow for another reason, and cutting again
				// would only starve the rate. Its slow answers are the
				// norm now, and the cuts it caused are undone. (Sent
				// slower, but not as slow as the cut asked, the
				// answers still set the pace: cut again.)
				l.baseline = l.recent()
				l.rateState = l.beforeSlow
				l.slowEvent = false
			} else {
				l.eventLatency = l.recent()
				l.congestion(o, Congestion{Slow: float64(l.recent()) / float64(l.baseline), Baseline: l.baseline}, false)
				l.resumed = o.End
			}
			l.cooldown = latencyCooldown
			l.healthy = 0
		default:
			l.healthy++
			if l.ceil == 0 {
				l.slowAnswers++
			}
		}
	}
	return l.pace(o)
}

// pace spaces the next request from o's start by the rate's interval and
// decides when it may start.
func (l *Load) pace(o Outcome) Decision {
	l.paced = later(l.paced, o.Start).Add(l.interval(l.rateAt(o.End)))
	return l.Next(o.End)
}

// noteStart counts a request that started at t.
func (l *Load) noteStart(t time.Time) {
	if !l.started {
		l.started, l.answered = true, true
		l.low, l.growFrom, l.resumed, l.firstStart = slowStartRate, t, t, t
	}
	l.starts[l.ns%len(l.starts)] = t.UnixNano()
	l.ns++
	if !l.decayedAt.IsZero() && t.After(l.decayedAt) {
		l.decayed *= math.Exp(-t.Sub(l.decayedAt).Seconds() / settleWindow.Seconds())
	}
	l.decayed++
	l.decayedAt = later(l.decayedAt, t)
}

// congestion cuts the rate: o is the first load signal of a new event.
// refused says it is a refusal, not slow answers: only a refusal ends slow
// start with slowStartCut, since only a limiter lets slow start overshoot
// by as much as that.
func (l *Load) congestion(o Outcome, why Congestion, refused bool) {
	m, ok := l.measured()
	if !ok {
		// Too few requests since the last pause to measure: the rate
		// they were sent at, or the pace the floor and the answer
		// allowed, is the best estimate.
		m = min(l.rateAt(o.Start), 1/max(o.End.Sub(o.Start)+l.floor, time.Millisecond).Seconds())
	}
	cut := beta
	if l.ceil == 0 && refused {
		cut = slowStartCut
	}
	if !refused && !l.slowEvent {
		l.beforeSlow = l.rateState
	}
	l.slowEvent = !refused
	l.ceil = m
	l.low = max(cut*m, l.minRate())
	l.cutAt = o.End
	l.answered = false
	l.growFrom = o.End
	l.cycle = min(max(time.Duration(cycleRequests/m*float64(time.Second)), minCycle), maxCycle)
	l.events++
	l.event, l.eventRate = why, m
	l.paceWhy = fmt.Sprintf("learned rate, after %s at %.1f/s", why, m)
}

// measured returns the rate at which the host was sent its last requests
// since the last pause: at least three within rateSpan, or ok false. In
// slow start, where the rate doubles quickly, only the last four count.
func (l *Load) measured() (rate float64, ok bool) {
	k := min(l.ns, len(l.starts))
	if l.ceil == 0 {
		k = min(k, 4)
	}
	if k < 3 {
		return 0, false
	}
	newest := l.starts[(l.ns-1)%len(l.starts)]
	oldest, count := newest, 1
	resumed := l.resumed.UnixNano()
	for i := 1; i < k; i++ {
		s := l.starts[(l.ns-1-i)%len(l.starts)]
		if s < resumed || time.Duration(newest-s) > rateSpan {
			break
		}
		oldest, count = s, count+1
	}
	if count < 3 || newest <= oldest {
		return 0, false
	}
	return float64(count-1) / time.Duration(newest-oldest).Seconds(), true
}

// rateAt returns the rate the host may be sent at time t: +Inf before its
// first request.
func (l *Load) rateAt(t time.Time) float64 {
	if !l.started {
		return math.Inf(1)
	}
	s := max(t.Sub(l.growFrom).Seconds(), 0)
	var r float64
	if l.ceil == 0 {
		// Doubling every slowStartDoubling answers, but no faster than
		// every slowStartMinDoubling: a limiter's burst answers the first
		// requests at any speed, and the rate it hides must not be
		// overshot by more than about twice.
		d := min(float64(l.slowAnswers)/slowStartDoubling, s/slowStartMinDoubling.Seconds())
		r = l.low * math.Exp2(min(d, 60))
	} else {
		// CUBIC's curve: low at growFrom, flat just under the ceiling
		// after one cycle, and growing past it after that.
		top := (1 - headroom) * l.ceil
		x := 1 - s/l.cycle.Seconds()
		r = top - (top-l.low)*x*x*x
	}
	if m, ok := l.measured(); ok {
		r = min(r, max(aheadOfMeasured*m, l.low))
	}
	return max(r, l.minRate())
}

// minRate is the slowest the rate goes: one request per MaxGap.
func (l *Load) minRate() float64 { return 1 / l.cfg.MaxGap.Seconds() }

// interval is the time between request starts at rate r.
func (l *Load) interval(r float64) time.Duration {
	if math.IsInf(r, 1) || r <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / r)
}

// briefPause is the pause after a refusal without Retry-After: long enough
// for a server's queue or a rate limiter's bucket to take about ten
// requests at the measured rate, within 0.5..5 s, with ±10% jitter so that
// crawlers refused together do not return together.
func (l *Load) briefPause() time.Duration {
	p := min(max(time.Duration(10/l.ceil*float64(time.Second)), 500*time.Millisecond), 5*time.Second)
	return time.Duration(float64(p) * (0.9 + 0.2*l.rand.Float64()))
}

// healthyForMore is how many healthy answers in a row a host must give
// before it is asked two things at once.
const healthyForMore = 10

// Concurrency returns how many requests the host may have in flight at once,
// at most max. It is one — the rule — unless the host has no floor (no
// delay was configured, no Crawl-delay asked), has stayed fast, and is not
// held back by its rate: then it grows to max, and falls back to one at the
// first sign of strain.
func (l *Load) Concurrency(max int) int {
	if max <= 1 || l.floor != 0 || l.healthy < healthyForMore || l.until.After(time.Now()) {
		return 1
	}
	if l.ceil > 0 {
		// A host that has pushed back gets more than one request at once
		// only while its answers, not its rate, set the pace.
		m, ok := l.measured()
		if !ok || m > 0.5*l.rateAt(l.decayedAt) {
			return 1
		}
	}
	return max
}

// Next decides the earliest start of the next request after a request that
// ended at end.
func (l *Load) Next(end time.Time) Decision {
	d := Decision{Next: After(end, l.floor), Reason: ReasonDelay, Why: l.floorWhy}
	if l.paced.After(d.Next) {
		d.Next, d.Reason = l.paced, ReasonRate
		d.Why = cmp.Or(l.paceWhy, "slow start")
	}
	if l.until.After(d.Next) {
		d.Next, d.Reason = l.until, ReasonBackoff
		d.Why = l.untilWhy + " until " + l.until.Format("15:04:05")
		if l.clamped > 0 {
			d.Why += fmt.Sprintf(" (asked for %v, clamped)", l.clamped)
		}
	}
	return d
}

// Congestion is what a host did at a congestion event: it refused a
// request (an HTTP status such as 429 or 503, or no response at all), or
// answered slower than its baseline.
type Congestion struct {
	// Status is the HTTP status of the refusal; 0 when no response came,
	// or for slow answers.
	Status int `json:"status,omitempty"`
	// RetryAfter is the refusal's Retry-After, when HasRetryAfter.
	RetryAfter    time.Duration `json:"retry_after,omitempty"`
	HasRetryAfter bool          `json:"has_retry_after,omitempty"`
	// Slow, for answers slower than the host's usual, is their response
	// time as a multiple of Baseline, the host's usual response time; 0
	// for a refusal.
	Slow     float64       `json:"slow,omitempty"`
	Baseline time.Duration `json:"baseline,omitempty"`
}

// String says what the host did, for logs and Decision.Why: "503, no
// Retry-After", "429, Retry-After 5s", "no response", "response time 3.1×
// baseline 40ms".
func (c Congestion) String() string {
	if c.Slow > 0 {
		return fmt.Sprintf("response time %.1f× baseline %v", c.Slow, c.Baseline.Round(time.Millisecond))
	}
	if c.Status == 0 {
		return "no response"
	}
	if c.HasRetryAfter {
		return fmt.Sprintf("%d, Retry-After %v", c.Status, c.RetryAfter)
	}
	return strconv.Itoa(c.Status) + ", no Retry-After"
}

// Summary is where the rate of a host that pushed back settled, and why,
// for the crawl's summary.
type Summary struct {
	Last      Congestion // the last congestion event
	EventRate float64    // the rate the host was sent at then, requests/s
	Settled   float64    // the rate it was sent at lately (over about settleWindow), requests/s
	Events    int        // congestion events so far
}

// Summary says where the host's rate settled and why; ok is false for a
// host that never pushed back.
func (l *Load) Summary() (s Summary, ok bool) {
	if l.events == 0 {
		return Summary{}, false
	}
	return Summary{Last: l.event, EventRate: l.eventRate, Settled: l.settled(), Events: l.events}, true
}

// settled is the rate the host was sent at over about the last
// settleWindow.
func (l *Load) settled() float64 {
	span := l.decayedAt.Sub(l.firstStart).Seconds()
	if span <= 0 {
		return 0
	}
	tau := settleWindow.Seconds()
	return l.decayed / (tau * (1 - math.Exp(-span/tau)))
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func (l *Load) setUntil(t time.Time, why string) {
	if t.After(l.until) {
		l.until, l.untilWhy = t, why
	}
}

func (l *Load) sample(d time.Duration, at time.Time) {
	l.latencies[l.n%len(l.latencies)] = d
	l.n++
	var buf [len(Load{}.latencies)]time.Duration
	s := buf[:min(l.n, len(l.latencies))]
	copy(s, l.latencies[:len(s)])
	slices.Sort(s)
	// The 10th percentile of recent samples: what the host answers in when
	// it is not busy. It follows a fall at once and a rise slowly, over
	// baselineRise, whatever the rate: a host kept busy does not make its
	// busy answers the norm, and a host that is slow for good is not
	// throttled for ever.
	p10 := s[len(s)/10]
	if l.baseline == 0 || p10 <= l.baseline {
		l.baseline = p10
	} else if dt := at.Sub(l.sampledAt); dt > 0 {
		l.baseline += time.Duration(float64(p10-l.baseline) * min(dt.Seconds()/baselineRise.Seconds(), 1))
	}
	l.sampledAt = at
}

// recent is the median of the last five response times.
func (l *Load) recent() time.Duration {
	k := min(l.n, 5)
	var buf [5]time.Duration
	for i := 0; i < k; i++ {
		buf[i] = l.latencies[(l.n-1-i)%len(l.latencies)]
	}
	s := buf[:k]
	slices.Sort(s)
	return s[k/2]
}

func (l *Load) struggling() bool {
	if l.n < 5 || l.baseline <= 0 {
		return false
	}
	// A few milliseconds of noise on a fast host are not a struggle.
	return float64(l.recent()) > l.cfg.Slow*float64(l.baseline) && l.recent()-l.baseline > 20*time.Millisecond
}

// ParseRetryAfter reads a Retry-After value (RFC 9110 §10.2.3): seconds, or
// an HTTP-date taken relative to now. Negative or unparseable values give
// ok false.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		if n > int64(365*24*time.Hour/time.Second) {
			n = int64(365 * 24 * time.Hour / time.Second)
		}
		return time.Duration(n) * time.Second, true
	}
	for _, layout := range []string{time.RFC1123, time.RFC850, time.ANSIC} {
		if t, err := time.Parse(layout, v); err == nil {
			return max(t.Sub(now), 0), true
		}
	}
	return 0, false
}

// DefaultMaxPerAddr is LoadConfig.MaxPerAddr when it is not set: requests
// in flight at once to one IP address.
const DefaultMaxPerAddr = 2

// RateMemo is what a Load learned of its host's rate at its last
// congestion event: enough for another process of a shared crawl, taking
// the host over, to go on at the rate this one settled on rather than
// start again in slow start and overshoot a limit already found.
type RateMemo struct {
	Low       float64       `json:"low"`             // the rate after the cut, requests/s
	Ceil      float64       `json:"ceil"`            // the rate measured at the event
	GrowFrom  time.Time     `json:"grow_from"`       // the rate grows from Low from here on
	Cycle     time.Duration `json:"cycle"`           // from Low back to Ceil
	Event     *Congestion   `json:"event,omitempty"` // what the host did then
	EventRate float64       `json:"event_rate,omitempty"`
}

// Memo returns what the Load learned of the rate, or nil before its first
// congestion event.
func (l *Load) Memo() *RateMemo {
	if l.ceil == 0 {
		return nil
	}
	// A copy of the event: a pointer into l would keep the whole Load
	// alive as long as the memo.
	ev := l.event
	return &RateMemo{Low: l.low, Ceil: l.ceil, GrowFrom: l.growFrom, Cycle: l.cycle, Event: &ev, EventRate: l.eventRate}
}

// Recall takes up the memo of another Load of the same host (another
// process's, or an earlier one this process forgot while the host was
// idle) when its congestion event is newer than this Load's last, and
// ignores it otherwise or when it does not make sense.
func (l *Load) Recall(m *RateMemo, now time.Time) {
	valid := func(f float64) bool { return f > 0 && !math.IsInf(f, 0) && !math.IsNaN(f) }
	if m == nil || !valid(m.Low) || !valid(m.Ceil) || m.Cycle <= 0 || m.GrowFrom.IsZero() {
		return
	}
	if l.ceil > 0 && !m.GrowFrom.After(l.growFrom) {
		return // this Load knows something newer
	}
	if !l.started {
		l.started, l.answered = true, true
		l.firstStart, l.resumed = now, now
	}
	l.low, l.ceil, l.growFrom = max(m.Low, l.minRate()), m.Ceil, m.GrowFrom
	l.cycle = min(max(m.Cycle, minCycle), maxCycle)
	l.event, l.eventRate = Congestion{}, m.EventRate
	if m.Event != nil {
		l.event = *m.Event
	}
	l.slowAnswers, l.slowEvent = 0, false
	// The cut was made where the memo comes from: this Load does not cut
	// again on the answers the server is still draining its queue with,
	// as the Load that cut would not have (latencyCooldown, latencyQuiet).
	l.cutAt = later(l.cutAt, m.GrowFrom)
	l.cooldown = latencyCooldown
	l.paceWhy = fmt.Sprintf("learned rate, after %s at %.1f/s (recalled)", l.event, m.EventRate)
}
