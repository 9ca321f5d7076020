package site

import (
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Who says which requests a LoadShedder may turn away.
type Who uint8

const (
	// ShedCrawlers sheds requests whose User-Agent names a known crawler
	// (Claim): verified ones and ones that only say so alike, since a
	// crawler that pretends to be Googlebot is a crawler too.
	ShedCrawlers Who = iota
	// ShedBots sheds what ShedCrawlers does and requests whose User-Agent
	// matches the LoadShedder's BotPattern.
	ShedBots
)

// DefaultBotPattern matches the User-Agent of most crawlers, scrapers and
// link previewers: a "bot" name ending the word (Googlebot/2.1,
// AhrefsBot/7.0, Slackbot-LinkExpanding), "crawl", "spider", "slurp", or
// a "+http" link, which crawlers add and browsers do not. "bot" followed
// by a space does not count, so that an Android phone such as the CUBOT
// X19 ("Linux; Android 9; CUBOT X19") keeps its browser a person's.
var DefaultBotPattern = regexp.MustCompile(`(?i)crawl|spider|slurp|\+https?://|bot(?:$|[/;:),+-])`)

// LoadShedder is middleware that, when the server is overloaded, answers
// crawlers 503 Service Unavailable with a Retry-After, so that the people
// it cannot turn away get the capacity. A person's request is never shed:
// only the requests Who names are, and only while the server is
// overloaded.
//
// The server is overloaded when the requests in progress reach
// MaxInFlight, or the 90th percentile of the time the handler took over
// the last Window exceeds MaxLatency. Retry-After grows with the overload:
// MinRetryAfter at the threshold, doubling for each quarter above it, up
// to MaxRetryAfter. Search engines read a 503 as "slow down" and come back
// — Google advises it for a day or two at most, since pages that keep
// failing drop out of its index — while a 403 or 404 would say the page
// is gone.
//
// Set the fields before the first request; the zero LoadShedder is ready
// to use. A LoadShedder is safe for concurrent use.
type LoadShedder struct {
	// MaxInFlight is the number of requests in progress at which crawlers
	// are turned away. The default is 100.
	MaxInFlight int
	// MaxLatency is the 90th percentile of handler durations above which
	// crawlers are turned away; it counts once the window holds at least
	// 5 requests. The default is 1 second; a negative value turns the
	// latency measure off.
	MaxLatency time.Duration
	// Window is how far back durations count. The default is 10 seconds.
	Window time.Duration
	// Who is which requests may be shed; the zero value is ShedCrawlers.
	Who Who
	// Crawlers are the crawlers a User-Agent may name; nil means
	// KnownCrawlers.
	Crawlers []Crawler
	// BotPattern is the pattern of ShedBots; nil means DefaultBotPattern.
	BotPattern *regexp.Regexp
	// MinRetryAfter and MaxRetryAfter bound Retry-After, which is sent in
	// whole seconds. The defaults are 1 second and 1 hour.
	MinRetryAfter, MaxRetryAfter time.Duration
	// Now returns the current time; nil means time.Now. Tests set it.
	Now func() time.Time
	// Logger, if not nil, gets a line at Debug level for each request
	// shed.
	Logger *slog.Logger

	inFlight atomic.Int64
	shed     atomic.Uint64
	mu       struct {
		sync.Mutex
		window latencyWindow
	}
}

// LoadStats is a LoadShedder's view of the load.
type LoadStats struct {
	InFlight int           // requests in progress
	P90      time.Duration // of handler durations over the window; 0 with too few
	Samples  int           // durations in the window
	// Load is the larger of InFlight/MaxInFlight and P90/MaxLatency:
	// crawlers are shed from 1 on.
	Load float64
	// Shed counts the requests turned away so far.
	Shed uint64
}

// minLatencySamples is how many durations the window must hold for its
// percentile to count: one slow request is not an overload.
const minLatencySamples = 5

// Stats returns the current load.
func (s *LoadShedder) Stats() LoadStats {
	inFlight, p90, n := s.measure()
	st := LoadStats{InFlight: inFlight, P90: p90, Samples: n, Shed: s.shed.Load()}
	st.Load, _ = s.load(inFlight, p90, n)
	return st
}

// Handler returns next behind the shedder.
func (s *LoadShedder) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.sheddable(r) {
			inFlight, p90, n := s.measure()
			if load, over := s.load(inFlight, p90, n); over {
				s.refuse(w, r, load)
				return
			}
		}
		s.inFlight.Add(1)
		start := s.now()
		defer func() {
			s.inFlight.Add(-1)
			end := s.now()
			s.mu.Lock()
			s.mu.window.add(end, s.window(), end.Sub(start))
			s.mu.Unlock()
		}()
		next.ServeHTTP(w, r)
	})
}

// sheddable reports whether r is one of the requests Who names.
func (s *LoadShedder) sheddable(r *http.Request) bool {
	ua := r.UserAgent()
	if _, _, ok := Claim(ua, s.Crawlers); ok {
		return true
	}
	if s.Who != ShedBots {
		return false
	}
	p := s.BotPattern
	if p == nil {
		p = DefaultBotPattern
	}
	return p.MatchString(ua)
}

func (s *LoadShedder) measure() (inFlight int, p90 time.Duration, n int) {
	now := s.now()
	s.mu.Lock()
	p90, n = s.mu.window.quantile(now, s.window(), 0.9)
	s.mu.Unlock()
	return int(s.inFlight.Load()), p90, n
}

// load returns the load and whether it calls for shedding.
func (s *LoadShedder) load(inFlight int, p90 time.Duration, n int) (float64, bool) {
	byCount := float64(inFlight) / float64(orDefault(s.MaxInFlight, 100))
	over := byCount >= 1
	load := byCount
	if s.MaxLatency >= 0 && n >= minLatencySamples {
		byLatency := float64(p90) / float64(orDefault(s.MaxLatency, time.Second))
		over = over || byLatency > 1
		load = max(load, byLatency)
	}
	return load, over
}

// retryAfter maps a load of 1 or more to whole seconds: MinRetryAfter at
// 1, doubling for each 0.25 above, within the bounds.
func (s *LoadShedder) retryAfter(load float64) int {
	lo := orDefault(s.MinRetryAfter, time.Second).Seconds()
	hi := orDefault(s.MaxRetryAfter, time.Hour).Seconds()
	d := lo * math.Exp2(4*(load-1))
	if math.IsNaN(d) || d > hi {
		d = hi
	}
	return max(1, int(math.Ceil(max(d, lo))))
}

func (s *LoadShedder) refuse(w http.ResponseWriter, r *http.Request, load float64) {
	s.shed.Add(1)
	secs := s.retryAfter(load)
	if s.Logger != nil {
		s.Logger.Debug("shed", "path", r.URL.Path, "user_agent", r.UserAgent(), "load", load, "retry_after", secs)
	}
	h := w.Header()
	h.Set("Retry-After", strconv.Itoa(secs))
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprintf(w, "503 service unavailable: the server is busy; please retry in %d seconds\n", secs)
}

func (s *LoadShedder) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *LoadShedder) window() time.Duration { return orDefault(s.Window, 10*time.Second) }

// Durations are counted in buckets whose bounds grow by a quarter of a
// doubling, from 1 ms to about 12 days: a percentile is the upper bound of
// its bucket, at most 19% above the true value.
const (
	bucketsPerDoubling = 4
	numBuckets         = 30 * bucketsPerDoubling
	windowSlots        = 10
)

// latencyWindow counts durations over a sliding window, in windowSlots
// slots of a tenth of the window each, the oldest reused for the newest.
type latencyWindow struct {
	slots [windowSlots]struct {
		epoch  int64 // index of the tenth of the window it counts; 0 is unused
		n      int
		counts [numBuckets]uint32
	}
}

func slotEpoch(t time.Time, window time.Duration) int64 {
	slot := max(int64(window/windowSlots), 1)
	return t.UnixNano()/slot + 1
}

func bucketOf(d time.Duration) int {
	if d <= time.Millisecond {
		return 0
	}
	b := int(math.Ceil(math.Log2(float64(d)/float64(time.Millisecond)) * bucketsPerDoubling))
	return min(b, numBuckets-1)
}

func bucketBound(b int) time.Duration {
	return time.Duration(float64(time.Millisecond) * math.Exp2(float64(b)/bucketsPerDoubling))
}

func (w *latencyWindow) add(now time.Time, window, d time.Duration) {
	e := slotEpoch(now, window)
	s := &w.slots[e%windowSlots]
	if s.epoch != e {
		s.epoch, s.n, s.counts = e, 0, [numBuckets]uint32{}
	}
	s.n++
	s.counts[bucketOf(d)]++
}

// quantile returns the q-quantile of the durations of the last window,
// and how many there are.
func (w *latencyWindow) quantile(now time.Time, window time.Duration, q float64) (time.Duration, int) {
	e := slotEpoch(now, window)
	n := 0
	for i := range w.slots {
		if s := &w.slots[i]; s.epoch > e-windowSlots && s.epoch <= e {
			n += s.n
		}
	}
	if n == 0 {
		return 0, 0
	}
	rank := uint32(math.Ceil(q * float64(n)))
	var seen uint32
	for b := range numBuckets {
		for i := range w.slots {
			if s := &w.slots[i]; s.epoch > e-windowSlots && s.epoch <= e {
				seen += s.counts[b]
			}
		}
		if seen >= rank {
			return bucketBound(b), n
		}
	}
	return bucketBound(numBuckets - 1), n
}
