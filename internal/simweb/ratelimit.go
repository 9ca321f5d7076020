package simweb

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// The bounds of RateLimit.Rate and RateLimit.Burst. They lie beyond any
// real limit and keep the Limiter's arithmetic inside int64.
const (
	minRateLimit  = 0.001 // one thousandth, the unit nginx counts in
	maxRateLimit  = 1e9
	maxRateBurst  = 1_000_000_000
	milliRequests = 1000 // thousandths of a request in one request
)

// RateLimit refuses requests that come faster than Rate, the way nginx's
// limit_req module with nodelay does (ngx_http_limit_req_module, the
// directives "limit_req_zone … rate=R" and "limit_req … burst=B nodelay"):
// an accepted request passes at once and a refused one is answered at once
// with Status, so latency stays flat however hard the host is pushed —
// unlike Capacity, whose latency rises with load. It is the usual shape of
// the limits that real sites put in front of bots.
//
// The model is nginx's leaky bucket, counted in thousandths of a request
// and whole milliseconds as nginx counts them. The state is excess, the
// requests accepted beyond the rate, and last, the millisecond of the last
// accepted request. For a request arriving at millisecond now, with
// r = Rate and b = Burst:
//
//	ms       now − last, whole milliseconds, 0 if the clock went back
//	excess'  max(0, excess − r×1000×ms/1000 + 1000)  (integer division)
//	refused  if excess' > b×1000: the state is not changed
//	accepted otherwise: excess = excess', last = now
//
// The first request is accepted with excess 0. Consequences:
//
//   - With Burst 0 requests must be at least 1/Rate apart, measured in
//     whole milliseconds from the last accepted one: at Rate 13.5 (1/Rate
//     = 74.07 ms) a request 74 ms after the last is refused and one 75 ms
//     after is accepted, so a client pacing exactly at 1/Rate sees some
//     refusals.
//   - With Burst b, b requests beyond the first may come at once; after
//     that the bucket drains at Rate.
//   - A refused request does not fill the bucket, which goes on draining,
//     but it is not served later either (nodelay): a client sending
//     faster than Rate gets at most Rate accepted per second. With Burst
//     b ≥ 1 it gets that much, and the share refused is 1 − Rate/offered:
//     a client at 110 % of Rate sees 1 request in 11 refused.
//   - With Burst 0 a refusal wastes the rest of the client's interval: a
//     client whose requests are s < 1/Rate apart gets one in
//     ⌈1/(Rate×s)⌉ through, so one at 110 % of Rate has every other
//     request refused and gets 55 % of Rate.
//
// Unlike nginx, which forgets a key idle for a minute once its bucket has
// drained, a Limiter never forgets; the two differ only for rates below
// (Burst+1)/60 per second.
//
// The zero value is not valid: Rate must be set.
type RateLimit struct {
	// Rate is the sustained rate in requests per second, at least 0.001
	// and at most 1e9. It is kept in thousandths of a request per second,
	// rounded down, as nginx keeps rate=…r/m (1r/m is 0.016 r/s). It has
	// no default.
	Rate float64
	// Burst is the number of requests allowed beyond the rate, 0 to 1e9,
	// as nginx's burst=. The default (0) allows none: requests must be
	// 1/Rate apart.
	Burst int
	// Status is the status of a refused request, 400..599. The default
	// (0) means 503 Service Unavailable, as nginx's limit_req_status;
	// 429 Too Many Requests is the other usual choice.
	Status int
	// RetryAfter is announced with every refusal (in whole seconds,
	// rounded up, or as a date with HostOptions.RetryAfterDate). The
	// default (0) sends no Retry-After, as nginx sends none.
	RetryAfter time.Duration
}

// withDefaults returns l with its defaults filled in, or an error wrapping
// errConfig.
func (l RateLimit) withDefaults() (RateLimit, error) {
	// NaN fails both comparisons, and ±Inf is out of range.
	if !(l.Rate >= minRateLimit && l.Rate <= maxRateLimit) {
		return l, fmt.Errorf("%w: RateLimit.Rate %v not in %v..%v", errConfig, l.Rate, minRateLimit, maxRateLimit)
	}
	if l.Burst < 0 || l.Burst > maxRateBurst {
		return l, fmt.Errorf("%w: RateLimit.Burst %d not in 0..%d", errConfig, l.Burst, maxRateBurst)
	}
	var err error
	if l.Status, err = errorStatus("RateLimit.Status", l.Status); err != nil {
		return l, err
	}
	if l.RetryAfter < 0 {
		return l, fmt.Errorf("%w: negative RateLimit.RetryAfter %v", errConfig, l.RetryAfter)
	}
	return l, nil
}

// LimiterStats are the counters of a Limiter.
type LimiterStats struct {
	Accepted int64 // requests allowed
	Refused  int64 // requests refused for coming too fast
}

// Limiter is a RateLimit at work: one nginx limit_req key. It is safe for
// concurrent use and keeps no goroutine or timer; the caller passes the
// time of each request to Allow, so it runs on any clock, the simulated
// one of a testing/synctest bubble included. Create it with NewLimiter.
type Limiter struct {
	l     RateLimit
	rate  int64 // thousandths of a request per second
	burst int64 // thousandths of a request
	mu    struct {
		sync.Mutex
		excess int64 // thousandths of a request
		last   int64 // Unix milliseconds of the last accepted request
		seen   bool  // a request has been accepted
		stats  LimiterStats
	}
}

// NewLimiter returns a Limiter for l, or an error wrapping errConfig if l
// is invalid.
func NewLimiter(l RateLimit) (*Limiter, error) {
	l, err := l.withDefaults()
	if err != nil {
		return nil, err
	}
	// Rounded down as nginx's rate*1000/scale; the small addend keeps a
	// rate written in decimal (13.5, or 810.0/60) from losing a
	// thousandth to binary rounding.
	rate := int64(math.Floor(l.Rate*milliRequests + 1e-6))
	return &Limiter{l: l, rate: rate, burst: int64(l.Burst) * milliRequests}, nil
}

// RateLimit returns the RateLimit of lim, with defaults filled in.
func (lim *Limiter) RateLimit() RateLimit { return lim.l }

// Allow reports whether a request arriving at now is accepted, and counts
// it. A refused request leaves the bucket as it was.
func (lim *Limiter) Allow(now time.Time) bool {
	ms := now.UnixMilli() // nginx's clock: whole milliseconds
	lim.mu.Lock()
	defer lim.mu.Unlock()
	if !lim.mu.seen {
		lim.mu.seen, lim.mu.excess, lim.mu.last = true, 0, ms
		lim.mu.stats.Accepted++
		return true
	}
	excess := lim.excessLocked(ms)
	if excess > lim.burst {
		lim.mu.stats.Refused++
		return false
	}
	lim.mu.excess, lim.mu.last = excess, ms
	lim.mu.stats.Accepted++
	return true
}

// excessLocked returns the excess a request at Unix millisecond now would
// leave: max(0, excess − rate×ms/1000 + 1000).
func (lim *Limiter) excessLocked(now int64) int64 {
	ms := max(now-lim.mu.last, 0)
	full := lim.mu.excess + milliRequests // ≤ 1e12+1000
	// Past this many milliseconds the bucket has drained whatever it
	// held; stopping there keeps rate×ms inside int64 (rate ≤ 1e12).
	if ms > full*1000/lim.rate+1 {
		return 0
	}
	return max(full-lim.rate*ms/1000, 0)
}

// Stats returns the counters of lim.
func (lim *Limiter) Stats() LimiterStats {
	lim.mu.Lock()
	defer lim.mu.Unlock()
	return lim.mu.stats
}
