package hostload

import (
	"fmt"
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
	// It applies once a host's address is known. Default 2.
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
		c.MaxPerAddr = 2
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

// Load follows how one host copes and decides the gap before its next
// request: never below the floor a site sets (Crawl-delay, the configured
// delay), wider at once when responses slow down or errors come back, and
// narrower step by step while the host is healthy (AIMD on the request
// rate). Every decision comes with its reason.
//
// A Load is not safe for concurrent use; the scheduler's holder of a host
// owns its Load.
type Load struct {
	cfg LoadConfig

	floor     time.Duration
	floorWhy  string
	gap       time.Duration // current gap, ≥ floor
	until     time.Time     // no request before this (Retry-After, pause)
	untilWhy  string
	clamped   time.Duration // the Retry-After asked for, when it was clamped
	failures  int           // consecutive load signals
	cooldown  int           // observations to ignore latency after widening
	healthy   int           // healthy answers in a row at the floor
	gapWhy    string
	latencies [32]time.Duration // recent response times, a ring
	n         int               // samples seen
	baseline  time.Duration     // low percentile of recent response times
	rand      *rand.Rand
}

// NewLoad returns the load state of a host with the given floor (the
// smallest gap the site and the configuration allow) and its reason.
func NewLoad(cfg LoadConfig, floor time.Duration, why string, seed uint64) *Load {
	l := &Load{cfg: cfg.withDefaults(), rand: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
	l.SetFloor(floor, why)
	l.gap = l.floor
	return l
}

// SetFloor changes the floor (a new robots.txt Crawl-delay, an override).
func (l *Load) SetFloor(floor time.Duration, why string) {
	l.floor, l.floorWhy = floor, why
	if l.gap < floor {
		l.gap = floor
	}
	if l.cfg.MaxGap < floor {
		l.cfg.MaxGap = floor
	}
}

// Gap returns the current gap between requests.
func (l *Load) Gap() time.Duration { return l.gap }

// Baseline returns the host's baseline response time (0 until known).
func (l *Load) Baseline() time.Duration { return l.baseline }

// Decision is when a host may be asked again, and why.
type Decision struct {
	Next   time.Time
	Reason Reason // for the progress display: delay, or backoff
	Why    string // for people: "Crawl-delay 10s", "Retry-After 2m0s until 14:03:10", ...
}

// Observe takes the outcome of a request and decides when the next one may
// start.
func (l *Load) Observe(o Outcome) Decision {
	if o.IsLoadSignal() {
		l.failures++
		l.widen(fmt.Sprintf("%s: backing off", describe(o)), true)
		if ra, ok := ParseRetryAfter(o.RetryAfter, o.End); ok {
			wait := ra
			l.clamped = 0
			if wait > l.cfg.RetryAfterMax {
				l.clamped, wait = wait, l.cfg.RetryAfterMax
			}
			l.setUntil(o.End.Add(wait), fmt.Sprintf("Retry-After %s", wait))
		}
		if l.failures >= l.cfg.PauseAfter {
			pause := l.cfg.PauseBase << min(l.failures-l.cfg.PauseAfter, 30)
			if pause <= 0 || pause > l.cfg.PauseMax {
				pause = l.cfg.PauseMax
			}
			l.setUntil(o.End.Add(pause), fmt.Sprintf("paused after %d failures in a row", l.failures))
		}
	} else {
		l.failures = 0
		if o.Latency > 0 {
			l.sample(o.Latency)
		}
		switch {
		case l.cooldown > 0:
			l.cooldown--
		case l.struggling():
			l.widen(fmt.Sprintf("response time %.1f× baseline %v", float64(l.recent())/float64(l.baseline), l.baseline.Round(time.Millisecond)), false)
		default:
			l.narrow()
			if l.gap <= l.floor {
				l.healthy++
			}
		}
	}
	return l.Next(o.End)
}

// healthyForMore is how many healthy answers in a row a host must give
// before it is asked two things at once.
const healthyForMore = 10

// Concurrency returns how many requests the host may have in flight at once,
// at most max. It is one — the rule — unless the host has no floor (no
// delay was configured, no Crawl-delay asked) and has stayed fast: then it
// grows to max, and falls back to one at the first sign of strain.
func (l *Load) Concurrency(max int) int {
	if max > 1 && l.floor == 0 && l.gap == 0 && l.healthy >= healthyForMore && !l.until.After(time.Now()) {
		return max
	}
	return 1
}

// Next decides the earliest start of the next request after a request that
// ended at end.
func (l *Load) Next(end time.Time) Decision {
	d := Decision{Next: After(end, l.gap), Reason: ReasonDelay, Why: l.gapWhy}
	if l.gap <= l.floor {
		d.Why = l.floorWhy
	} else {
		d.Reason = ReasonBackoff
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

func (l *Load) setUntil(t time.Time, why string) {
	if t.After(l.until) {
		l.until, l.untilWhy = t, why
	}
}

// widen multiplies the gap by two (with ±10% jitter for errors, so that
// many crawlers backing off together do not return together).
func (l *Load) widen(why string, jitter bool) {
	g := max(l.gap*2, l.floor*2, 100*time.Millisecond)
	if jitter {
		g = time.Duration(float64(g) * (0.9 + 0.2*l.rand.Float64()))
	}
	l.gap = min(max(g, l.floor), l.cfg.MaxGap)
	l.gapWhy = why
	l.cooldown = 3
	l.healthy = 0
}

// narrow raises the request rate by a small step toward the floor's rate.
func (l *Load) narrow() {
	if l.gap <= l.floor {
		return
	}
	rate := 1 / l.gap.Seconds()
	floorRate := 1 / max(l.floor, time.Millisecond).Seconds()
	step := max(floorRate/20, 0.01)
	rate += step
	if rate >= floorRate {
		l.gap = l.floor
		return
	}
	l.gap = max(time.Duration(float64(time.Second)/rate), l.floor)
	l.gapWhy = "recovering: " + strings.TrimPrefix(l.gapWhy, "recovering: ")
}

func (l *Load) sample(d time.Duration) {
	l.latencies[l.n%len(l.latencies)] = d
	l.n++
	var buf [len(Load{}.latencies)]time.Duration
	s := buf[:min(l.n, len(l.latencies))]
	copy(s, l.latencies[:len(s)])
	slices.Sort(s)
	// The 10th percentile of recent samples: what the host answers in when
	// it is not busy. It rises slowly if the host is slow for long, so a
	// permanently slow host is not throttled for ever.
	l.baseline = s[len(s)/10]
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

func describe(o Outcome) string {
	if o.Status != 0 {
		return strconv.Itoa(o.Status)
	}
	return "no response"
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
