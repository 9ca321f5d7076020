package simweb

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// Capacity describes how much load a server takes: Workers requests are
// served at once, each for about ServiceTime; up to QueueLimit more wait
// for a worker in arrival order; a request that finds the queue full is
// refused at once with OverloadStatus and a Retry-After of RetryAfter.
//
// The model, for W = Workers, S = ServiceTime, s = SlowdownAtSaturation:
//
//	capacity        C = W / S requests per second (Rate)
//	latency         L = wait in the queue + service time
//	service time    S × s when the server is saturated as the request
//	                starts service (requests are still waiting behind it),
//	                S otherwise; then scaled by a factor drawn uniformly
//	                from [1−Jitter, 1+Jitter], whose mean is 1
//	refused         a request that arrives while QueueLimit requests wait
//
// Below capacity (no queue) every request takes S and the server completes
// what is offered. With W requests in flight it still completes C per
// second at latency S. Beyond that requests queue, and by Little's law a
// closed loop of N > W clients sees latency N / throughput. While one
// request at most waits, the throughput stays C and latency grows by the
// wait; once a request starts service with others still waiting behind
// it, the server is saturated and the service time becomes S × s, so a
// server kept saturated completes W / (S × s) per second — an overloaded
// server gets slower, as real ones do. SlowdownAtSaturation 2 is "latency
// doubling at saturation". For example, Workers 1 and ServiceTime 50ms is
// 20 requests/s: one client fetching back to back sees 50 ms; two clients
// share the 20/s and see 100 ms (one waits while the other is served);
// three keep a request waiting, and with s = 2 the server then completes
// 10/s at 300 ms.
//
// The zero value is one worker with no service time and no queue.
type Capacity struct {
	// Workers is the number of requests served at once. The default (0)
	// means 1.
	Workers int
	// ServiceTime is how long one request occupies a worker when the
	// server is not saturated. The default is 0 (requests pass at once,
	// and only concurrency is limited).
	ServiceTime time.Duration
	// Jitter spreads each service time uniformly over
	// [ServiceTime×(1−Jitter), ServiceTime×(1+Jitter)], in 0..1. The mean
	// stays ServiceTime, so the capacity does not change. The default is 0.
	Jitter float64
	// SlowdownAtSaturation multiplies the service time of a request that
	// starts service while other requests are still waiting. It is 1 or
	// more; the default (0) means 1, no slowdown.
	SlowdownAtSaturation float64
	// QueueLimit is the number of requests that may wait for a worker. The
	// default (0) means none wait: a request that finds every worker busy
	// is refused. A negative value means no limit (nothing is refused).
	QueueLimit int
	// OverloadStatus is the status of a refused request, 400..599. The
	// default (0) means 503 Service Unavailable; 429 Too Many Requests is
	// the other usual choice.
	OverloadStatus int
	// RetryAfter is announced with every refusal (in whole seconds,
	// rounded up). The default (0) sends no Retry-After.
	RetryAfter time.Duration
	// Seed seeds the jitter. Every seed, 0 included, gives a fixed
	// sequence.
	Seed uint64
}

// Rate returns the capacity W / S in requests per second: +Inf when
// ServiceTime is 0.
func (c Capacity) Rate() float64 {
	if c.ServiceTime <= 0 {
		return math.Inf(1)
	}
	return float64(max(c.Workers, 1)) / c.ServiceTime.Seconds()
}

// withDefaults returns c with its defaults filled in, or an error wrapping
// errConfig.
func (c Capacity) withDefaults() (Capacity, error) {
	switch {
	case c.Workers == 0:
		c.Workers = 1
	case c.Workers < 0:
		return c, fmt.Errorf("%w: negative Capacity.Workers %d", errConfig, c.Workers)
	}
	if c.ServiceTime < 0 {
		return c, fmt.Errorf("%w: negative Capacity.ServiceTime %v", errConfig, c.ServiceTime)
	}
	if !(c.Jitter >= 0 && c.Jitter <= 1) {
		return c, fmt.Errorf("%w: Capacity.Jitter %v not in 0..1", errConfig, c.Jitter)
	}
	switch {
	case c.SlowdownAtSaturation == 0:
		c.SlowdownAtSaturation = 1
	case !(c.SlowdownAtSaturation >= 1 && c.SlowdownAtSaturation <= 1000):
		return c, fmt.Errorf("%w: Capacity.SlowdownAtSaturation %v not in 1..1000", errConfig, c.SlowdownAtSaturation)
	}
	var err error
	if c.OverloadStatus, err = errorStatus("Capacity.OverloadStatus", c.OverloadStatus); err != nil {
		return c, err
	}
	if c.RetryAfter < 0 {
		return c, fmt.Errorf("%w: negative Capacity.RetryAfter %v", errConfig, c.RetryAfter)
	}
	return c, nil
}

// errorStatus checks a refusal status; 0 means 503.
func errorStatus(field string, status int) (int, error) {
	if status == 0 {
		return http.StatusServiceUnavailable, nil
	}
	if status < 400 || status > 599 {
		return status, fmt.Errorf("%w: %s %d not in 400..599", errConfig, field, status)
	}
	return status, nil
}

// Result is what a Model did with one request.
type Result struct {
	// Status is 200 when the request was served, or the overload status
	// when it was refused.
	Status int
	// RetryAfter is the Retry-After of a refusal, 0 for none.
	RetryAfter time.Duration
	// Wait is the time spent waiting for a worker.
	Wait time.Duration
	// Service is the time spent in service (0 for a refusal).
	Service time.Duration
}

// ModelStats are the counters of a Model.
type ModelStats struct {
	Workers   int
	Served    int64 // requests that completed their service time
	Refused   int64 // requests refused because the queue was full
	Abandoned int64 // requests whose context ended while waiting or in service
	InService int   // requests in service now
	Queued    int   // requests waiting now
	MaxQueued int   // the longest queue seen
	// Busy is the worker time spent serving, summed over workers (a
	// request in service counts up to now).
	Busy time.Duration
	// Wait is the total time that served requests waited for a worker.
	Wait time.Duration
	// Elapsed is the time from the first request to the Stats call, on
	// the Model's clock; 0 before the first request.
	Elapsed time.Duration
}

// Utilization returns Busy / (Workers × Elapsed), in 0..1; 0 before the
// first request.
func (s ModelStats) Utilization() float64 {
	if s.Elapsed <= 0 || s.Workers <= 0 {
		return 0
	}
	return float64(s.Busy) / (float64(s.Workers) * float64(s.Elapsed))
}

// Model is a server with a Capacity. It is safe for concurrent use and
// needs no goroutine of its own: Serve runs in the caller's goroutine.
// It uses only time.Now, timers, channels and a mutex, so it runs on the
// simulated clock inside a testing/synctest bubble; a Model may be created
// outside the bubble that uses it. Create it with NewModel.
type Model struct {
	c  Capacity
	mu struct {
		sync.Mutex
		busy   int       // workers in service
		queue  []*waiter // in arrival order
		rng    *rand.Rand
		stats  ModelStats
		first  time.Time // first arrival; zero before it
		since  time.Time // last change of busy
		area   time.Duration
		seenAt bool // first is set
	}
}

// waiter is a request waiting for a worker. Its fields are written under
// Model.mu, before ready is closed.
type waiter struct {
	ready   chan struct{} // closed when granted a worker
	arrived time.Time
	granted bool
	t       ticket
}

// ticket is a worker held by one request.
type ticket struct {
	start time.Time     // service start
	svc   time.Duration // the service time drawn for it
	wait  time.Duration // time spent waiting for the worker
}

// The ways a worker is given back.
const (
	releaseServed    = iota // the service time passed
	releaseAbandoned        // the client went away
	releaseReturned         // given back unused (another model refused)
)

// NewModel returns a Model for c, or an error if c is invalid.
func NewModel(c Capacity) (*Model, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &Model{c: c}
	m.mu.rng = rand.New(rand.NewPCG(c.Seed, 0x51_3e_b0))
	m.mu.stats.Workers = c.Workers
	return m, nil
}

// Capacity returns the capacity of m, with defaults filled in.
func (m *Model) Capacity() Capacity { return m.c }

// Serve takes one request through m: it waits its turn for a worker, then
// the service time, and returns Status 200; or, when the queue is full, it
// returns the overload status and Retry-After at once. If ctx ends first,
// Serve gives up its place or its worker and returns ctx.Err(): a server
// stops work for a client that went away.
func (m *Model) Serve(ctx context.Context) (Result, error) {
	t, res, err := m.admit(ctx)
	if err != nil || res.Status != http.StatusOK {
		return res, err
	}
	if !sleep(ctx, t.svc) {
		m.release(t, releaseAbandoned)
		return res, ctx.Err()
	}
	m.release(t, releaseServed)
	res.Service = t.svc
	return res, nil
}

// Stats returns the counters of m.
func (m *Model) Stats() ModelStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	s := m.mu.stats
	s.InService = m.mu.busy
	s.Queued = len(m.mu.queue)
	s.Busy = m.mu.area + time.Duration(m.mu.busy)*now.Sub(m.mu.since)
	if m.mu.seenAt {
		s.Elapsed = now.Sub(m.mu.first)
	}
	return s
}

// admit waits for a worker. It returns the worker's ticket and a Result
// with Status 200 and the wait; or a refusal Result; or ctx.Err() (with a
// zero Result) when ctx ends while waiting.
func (m *Model) admit(ctx context.Context) (ticket, Result, error) {
	m.mu.Lock()
	now := time.Now()
	if !m.mu.seenAt {
		m.mu.first, m.mu.since, m.mu.seenAt = now, now, true
	}
	if m.mu.busy < m.c.Workers {
		t := m.grantLocked(now)
		m.mu.Unlock()
		return t, Result{Status: http.StatusOK}, nil
	}
	if m.c.QueueLimit >= 0 && len(m.mu.queue) >= m.c.QueueLimit {
		m.mu.stats.Refused++
		m.mu.Unlock()
		return ticket{}, Result{Status: m.c.OverloadStatus, RetryAfter: m.c.RetryAfter}, nil
	}
	w := &waiter{ready: make(chan struct{}), arrived: now}
	m.mu.queue = append(m.mu.queue, w)
	m.mu.stats.MaxQueued = max(m.mu.stats.MaxQueued, len(m.mu.queue))
	m.mu.Unlock()

	select {
	case <-w.ready:
		return w.t, Result{Status: http.StatusOK, Wait: w.t.wait}, nil
	case <-ctx.Done():
	}
	m.mu.Lock()
	if !w.granted {
		for i, q := range m.mu.queue {
			if q == w {
				m.mu.queue = append(m.mu.queue[:i], m.mu.queue[i+1:]...)
				break
			}
		}
		m.mu.stats.Abandoned++
		m.mu.Unlock()
		return ticket{}, Result{}, ctx.Err()
	}
	m.mu.Unlock()
	m.release(w.t, releaseAbandoned) // granted as ctx ended
	return ticket{}, Result{}, ctx.Err()
}

// grantLocked gives a free worker to a request starting service at now and
// draws its service time: slowed down when requests are still waiting.
func (m *Model) grantLocked(now time.Time) ticket {
	m.accountLocked(now)
	m.mu.busy++
	d := float64(m.c.ServiceTime)
	if len(m.mu.queue) > 0 {
		d *= m.c.SlowdownAtSaturation
	}
	if m.c.Jitter > 0 {
		d *= 1 + m.c.Jitter*(2*m.mu.rng.Float64()-1)
	}
	return ticket{start: now, svc: time.Duration(d)}
}

// accountLocked adds the busy worker time up to now.
func (m *Model) accountLocked(now time.Time) {
	m.mu.area += time.Duration(m.mu.busy) * now.Sub(m.mu.since)
	m.mu.since = now
}

// release gives a worker back and hands it to the first waiting request.
func (m *Model) release(t ticket, how int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	m.accountLocked(now)
	m.mu.busy--
	switch how {
	case releaseServed:
		m.mu.stats.Served++
		m.mu.stats.Wait += t.wait
	case releaseAbandoned:
		m.mu.stats.Abandoned++
	}
	if len(m.mu.queue) > 0 {
		w := m.mu.queue[0]
		m.mu.queue[0] = nil
		m.mu.queue = m.mu.queue[1:]
		w.t = m.grantLocked(now)
		w.t.wait = now.Sub(w.arrived)
		w.granted = true
		close(w.ready)
	}
}
