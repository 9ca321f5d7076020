package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

// loadUsage explains the load flags in the usage text.
const loadUsage = `Load: with --capacity RPS every host is a server of --workers workers, each
request taking workers/RPS seconds, with a queue of --queue waiting requests;
a request that finds the queue full is answered --overload (503 or 429) with
Retry-After: --retry-after at once. Latency is the queue wait plus the service
time; --slowdown X multiplies the service time while requests are waiting
(2 = latency doubling at saturation). --addr-capacity RPS gives the same kind
of server to each listening address, shared by the hosts served there (with
--loopback N, hosts i, i+N, … share one), to measure per-IP politeness.
--rate-limit RPS refuses each host's requests beyond RPS per second as nginx's
limit_req with nodelay does: --burst N (default 0) more may come at once, and
without a burst requests must be 1/RPS apart. A refused request is answered
--overload with Retry-After: --retry-after at once, without queueing, so
latency stays flat; an accepted one goes on to --capacity, if any.
--outage [HOST=]START+DUR makes HOST (default: every host) answer --overload
with --retry-after from START after the server starts, for DUR; for example
--outage a.test=1m+5m --retry-after 120s. It may be repeated.
`

// loadFlags are the flags of the capacity model, the rate limit and
// outages.
type loadFlags struct {
	capacity, addrCapacity float64
	workers, queue         int
	rateLimit              float64
	burst                  int
	slowdown, jitter       float64
	overload               int
	retryAfter             time.Duration
	outages                []outageFlag
}

// outageFlag is one --outage value.
type outageFlag struct {
	host       string // "" for every host
	start, dur time.Duration
}

func (f *loadFlags) register(fs *flag.FlagSet) {
	fs.Float64Var(&f.capacity, "capacity", 0, "capacity of each host in requests/s (0: unlimited)")
	fs.Float64Var(&f.addrCapacity, "addr-capacity", 0, "capacity of each listening address in requests/s, shared by its hosts (0: unlimited)")
	fs.IntVar(&f.workers, "workers", 1, "requests a host (or address) serves at once, with --capacity")
	fs.IntVar(&f.queue, "queue", 10, "requests that may wait for a worker; beyond, they are refused (-1: no limit)")
	fs.Float64Var(&f.slowdown, "slowdown", 1, "service time multiplier while requests are waiting (≥ 1)")
	fs.Float64Var(&f.jitter, "jitter", 0, "spread of service times, ±fraction (0..1)")
	fs.Float64Var(&f.rateLimit, "rate-limit", 0, "limit each host to `RPS` requests/s as nginx limit_req nodelay (0: none)")
	fs.IntVar(&f.burst, "burst", 0, "requests a host accepts beyond --rate-limit, as nginx's burst=")
	fs.IntVar(&f.overload, "overload", 503, "`status` of refused and rate-limited requests and outages: 503 or 429")
	fs.DurationVar(&f.retryAfter, "retry-after", 0, "Retry-After sent with refusals, rate-limited requests and outages (0: none)")
	fs.Func("outage", "scripted outage `[HOST=]START+DUR`; repeatable", func(v string) error {
		o, err := parseOutage(v)
		if err == nil {
			f.outages = append(f.outages, o)
		}
		return err
	})
}

// parseOutage reads "[HOST=]START+DUR", e.g. "a.test=30s+5m".
func parseOutage(v string) (outageFlag, error) {
	var o outageFlag
	window := v
	if host, rest, ok := strings.Cut(v, "="); ok {
		o.host, window = strings.ToLower(host), rest
	}
	start, dur, ok := strings.Cut(window, "+")
	if !ok {
		return o, fmt.Errorf("%q: want [HOST=]START+DUR, e.g. 30s+5m", v)
	}
	var err error
	if o.start, err = time.ParseDuration(start); err != nil || o.start < 0 {
		return o, fmt.Errorf("%q: bad START %q", v, start)
	}
	if o.dur, err = time.ParseDuration(dur); err != nil || o.dur <= 0 {
		return o, fmt.Errorf("%q: bad DUR %q", v, dur)
	}
	return o, nil
}

// capacity returns the Capacity of rps requests per second, nil for 0.
func (f *loadFlags) capacityOf(flagName string, rps float64) (*simweb.Capacity, error) {
	if rps == 0 {
		return nil, nil
	}
	if !(rps > 0) {
		return nil, fmt.Errorf("--%s %v: must be positive", flagName, rps)
	}
	if f.workers < 1 {
		return nil, fmt.Errorf("--workers %d: must be at least 1", f.workers)
	}
	svc := time.Duration(float64(f.workers) / rps * float64(time.Second))
	if svc <= 0 {
		return nil, fmt.Errorf("--%s %v: too high", flagName, rps)
	}
	return &simweb.Capacity{
		Workers: f.workers, ServiceTime: svc, Jitter: f.jitter, SlowdownAtSaturation: f.slowdown,
		QueueLimit: f.queue, OverloadStatus: f.overload, RetryAfter: f.retryAfter,
	}, nil
}

// rateLimitOf returns the RateLimit of --rate-limit and --burst, nil
// without --rate-limit. simweb.New checks the bounds.
func (f *loadFlags) rateLimitOf() (*simweb.RateLimit, error) {
	if f.burst < 0 {
		return nil, fmt.Errorf("--burst %d: must not be negative", f.burst)
	}
	if f.rateLimit == 0 {
		return nil, nil
	}
	if !(f.rateLimit > 0) {
		return nil, fmt.Errorf("--rate-limit %v: must be positive", f.rateLimit)
	}
	return &simweb.RateLimit{Rate: f.rateLimit, Burst: f.burst, Status: f.overload, RetryAfter: f.retryAfter}, nil
}

// apply sets the load options of cfg; outages start relative to now.
func (f *loadFlags) apply(cfg *simweb.Config, now time.Time) error {
	if f.overload != 503 && f.overload != 429 {
		return fmt.Errorf("--overload %d: want 503 or 429", f.overload)
	}
	if f.retryAfter < 0 {
		return fmt.Errorf("--retry-after %v: must not be negative", f.retryAfter)
	}
	if !(f.slowdown >= 1) {
		return fmt.Errorf("--slowdown %v: must be at least 1", f.slowdown)
	}
	if !(f.jitter >= 0 && f.jitter <= 1) {
		return fmt.Errorf("--jitter %v: want 0..1", f.jitter)
	}
	hostCap, err := f.capacityOf("capacity", f.capacity)
	if err != nil {
		return err
	}
	if cfg.AddrCapacity, err = f.capacityOf("addr-capacity", f.addrCapacity); err != nil {
		return err
	}
	rateLimit, err := f.rateLimitOf()
	if err != nil {
		return err
	}
	if hostCap == nil && rateLimit == nil && len(f.outages) == 0 {
		return nil
	}
	outages := f.outages
	cfg.HostOptions = func(_ int, name string) simweb.HostOptions {
		o := simweb.HostOptions{Capacity: hostCap, RateLimit: rateLimit}
		for _, out := range outages {
			if out.host == "" || out.host == name {
				o.Outages = append(o.Outages, simweb.Outage{
					Start: now.Add(out.start), Duration: out.dur,
					Status: f.overload, RetryAfter: f.retryAfter,
				})
			}
		}
		return o
	}
	return nil
}

// checkHosts reports an --outage for a host the web does not have.
func (f *loadFlags) checkHosts(web *simweb.Web) error {
	for _, o := range f.outages {
		if o.host != "" && web.Host(o.host) == nil {
			return fmt.Errorf("--outage: no host %q", o.host)
		}
	}
	return nil
}

// describe prints the load model in the banner.
func (f *loadFlags) describe(out io.Writer) {
	server := func(rps float64) string {
		c, _ := f.capacityOf("", rps)
		queue := strconv.Itoa(c.QueueLimit)
		if c.QueueLimit < 0 {
			queue = "unlimited"
		}
		s := fmt.Sprintf("%g requests/s (%d worker(s) × %v), queue %s, then %d", rps, c.Workers, c.ServiceTime, queue, c.OverloadStatus)
		if c.RetryAfter > 0 {
			s += fmt.Sprintf(" with Retry-After %v", c.RetryAfter)
		}
		if c.SlowdownAtSaturation > 1 {
			s += fmt.Sprintf("; %g× slower while requests wait", c.SlowdownAtSaturation)
		}
		return s
	}
	if f.capacity > 0 {
		fmt.Fprintln(out, "capacity per host:", server(f.capacity))
	}
	if f.addrCapacity > 0 {
		fmt.Fprintln(out, "capacity per address:", server(f.addrCapacity))
	}
	if f.rateLimit > 0 {
		s := fmt.Sprintf("rate limit per host: %g requests/s, burst %d, then %d", f.rateLimit, f.burst, f.overload)
		if f.retryAfter > 0 {
			s += fmt.Sprintf(" with Retry-After %v", f.retryAfter)
		}
		fmt.Fprintln(out, s+" (nginx limit_req nodelay)")
	}
	for _, o := range f.outages {
		host := o.host
		if host == "" {
			host = "every host"
		}
		fmt.Fprintf(out, "outage: %s answers %d from %v after start for %v\n", host, f.overload, o.start, o.dur)
	}
}
