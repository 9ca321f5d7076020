package hostload

import (
	"container/heap"
	"context"
	"errors"
	"sync"
	"time"
)

// ErrDone is returned by Acquire when no host has work that can be done in
// this crawl: every queue is empty, or the hosts left are deferred.
var ErrDone = errors.New("hostload: no work left")

// Reason says why a host is waiting.
type Reason string

// Reasons a parked host waits.
const (
	ReasonDelay   Reason = "delay"   // the gap after its last request (--delay, Crawl-delay)
	ReasonRobots  Reason = "robots"  // robots.txt unavailable; retried later
	ReasonRate    Reason = "rate"    // the rate learned from how the host answers (Load)
	ReasonBackoff Reason = "backoff" // the host pushed back: a pause after refusals, errors, Retry-After
	ReasonAddr    Reason = "address" // other hosts at the same IP address are being fetched
)

// Scheduler hands out hosts to workers: at most one worker holds a host at a
// time, and a host is handed out only when its next allowed time has come.
// Hosts that must wait are parked in a heap ordered by that time, so a worker
// never sleeps holding a host: it waits for whichever host is due first.
//
// A deferred host (see Defer) still has work but is not worth keeping the
// crawl alive for: when only deferred hosts remain and none is held, Acquire
// returns ErrDone.
//
// Scheduler is safe for concurrent use. Its zero value is not usable; create
// it with NewScheduler.
type Scheduler struct {
	loadCfg LoadConfig
	// Idle hosts are forgotten once sweepMin of them are idle, at most
	// once every sweepEvery (SetIdleSweep).
	sweepMin   int
	sweepEvery time.Duration
	wake       chan struct{}
	waiting    chan struct{} // a goroutine began to wait in Acquire (Waiting)
	timers     sync.Pool     // of *time.Timer: waiting in Acquire allocates nothing
	mu         struct {
		sync.Mutex
		hosts map[string]*hostState // every host with work, held, or waiting
		idle  map[string]*hostState // hosts with no work whose gap has not yet passed
		// memos keep what the Loads of forgotten hosts learned of their
		// rate, for a host that gets work again (see sweepIdleLocked).
		memos    map[string]*RateMemo
		addrs    map[string]*addrState // addresses with requests in flight or hosts waiting
		blocked  int                   // hosts in some addrState.waiting
		swept    time.Time
		parked   hostHeap
		held     int
		parks    uint64
		live     int // parked hosts that are not deferred
		deferred int
		waiters  int  // goroutines in Acquire with no host due
		open     bool // more work may come from elsewhere: no ErrDone
	}
}

type hostState struct {
	key      string
	pending  int
	next     time.Time
	reason   Reason
	deferred bool
	held     bool
	index    int    // in the heap, -1 when not parked
	order    uint64 // parking order: hosts due at the same time go first in, first out
	load     *Load  // how the host copes; used by its holder only
	addr     string // the address the host was last reached at ("" unknown)
	heldAddr string // the address counted for the current hold
	blocked  bool   // due, but waiting for its address to be free
}

// addrState is what the hosts sharing one IP address have in flight.
type addrState struct {
	inFlight int
	waiting  []*hostState // due hosts waiting for the address, first come first served
}

// NewScheduler returns an empty scheduler whose hosts follow cfg.
func NewScheduler(cfg LoadConfig) *Scheduler {
	s := &Scheduler{loadCfg: cfg.withDefaults(), sweepMin: idleSweepMin, sweepEvery: time.Second,
		wake: make(chan struct{}, 1), waiting: make(chan struct{}, 1)}
	s.mu.hosts = make(map[string]*hostState)
	s.mu.idle = make(map[string]*hostState)
	s.mu.memos = make(map[string]*RateMemo)
	s.mu.addrs = make(map[string]*addrState)
	return s
}

func (s *Scheduler) notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Add records n more URLs queued for host. A host seen for the first time is
// due at once.
func (s *Scheduler) Add(host string, n int) { s.AddAt(host, n, time.Time{}) }

// AddAt is Add for a host that must not be asked before notBefore: a crawl
// resumed soon after its last request to the host keeps the gap.
func (s *Scheduler) AddAt(host string, n int, notBefore time.Time) {
	if n <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.mu.hosts[host]
	if h == nil {
		s.sweepIdleLocked(time.Now())
		h = &hostState{key: host, index: -1, reason: ReasonDelay, next: notBefore}
		s.mu.hosts[host] = h
	}
	delete(s.mu.idle, host)
	h.pending += n
	if !h.held && !h.blocked && h.index < 0 {
		s.parkLocked(h)
	}
	s.notify()
}

func (s *Scheduler) parkLocked(h *hostState) {
	s.mu.parks++
	h.order = s.mu.parks
	heap.Push(&s.mu.parked, h)
	if h.deferred {
		s.mu.deferred++
	} else {
		s.mu.live++
	}
}

func (s *Scheduler) unparkLocked(h *hostState) {
	heap.Remove(&s.mu.parked, h.index)
	if h.deferred {
		s.mu.deferred--
	} else {
		s.mu.live--
	}
}

// Acquire waits until a host is due and returns it, held by the caller until
// Release. It returns ErrDone when no work is left, and ctx.Err() when ctx is
// done.
func (s *Scheduler) Acquire(ctx context.Context) (string, error) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			// Since Go 1.23 a stopped timer's channel holds no stale tick,
			// so it can be reused by the next waiter as it is.
			timer.Stop()
			s.timers.Put(timer)
		}
	}()
	for {
		s.mu.Lock()
		if s.mu.held == 0 && s.mu.live == 0 && s.mu.blocked == 0 && !s.mu.open {
			s.mu.Unlock()
			s.notify() // let other waiters see it too
			return "", ErrDone
		}
		var wait time.Duration = -1
		for len(s.mu.parked) > 0 {
			h := s.mu.parked[0]
			wait = time.Until(h.next)
			if wait > 0 {
				break
			}
			s.unparkLocked(h)
			if a := s.mu.addrs[h.addr]; h.addr != "" && a != nil && a.inFlight >= s.loadCfg.MaxPerAddr {
				// Its address is busy with other hosts: wait in line there.
				h.blocked = true
				a.waiting = append(a.waiting, h)
				s.mu.blocked++
				wait = -1
				continue
			}
			s.holdLocked(h)
			s.mu.Unlock()
			return h.key, nil
		}
		s.mu.waiters++
		s.mu.Unlock()
		select {
		case s.waiting <- struct{}{}:
		default:
		}

		var tc <-chan time.Time
		if wait >= 0 {
			if timer == nil {
				if t, ok := s.timers.Get().(*time.Timer); ok {
					timer = t
					timer.Reset(wait)
				} else {
					timer = time.NewTimer(wait)
				}
			} else {
				timer.Reset(wait)
			}
			tc = timer.C
		}
		select {
		case <-ctx.Done():
			s.unwait()
			return "", ctx.Err()
		case <-s.wake:
		case <-tc:
		}
		s.unwait()
	}
}

func (s *Scheduler) unwait() {
	s.mu.Lock()
	s.mu.waiters--
	s.mu.Unlock()
}

// Waiters is the number of goroutines waiting in Acquire because no host
// of this scheduler is due: workers a shared crawl can give more hosts.
func (s *Scheduler) Waiters() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.waiters
}

// Waiting receives a value when a goroutine begins to wait in Acquire
// with no host due (at most one value is kept): the moment to hand the
// scheduler more hosts, for one who feeds it.
func (s *Scheduler) Waiting() <-chan struct{} { return s.waiting }

// SetOpen says whether more work may come from elsewhere (the other
// workers of a shared frontier). While open, Acquire waits rather than
// return ErrDone when no host has work.
func (s *Scheduler) SetOpen(open bool) {
	s.mu.Lock()
	s.mu.open = open
	s.mu.Unlock()
	s.notify()
}

// holdLocked marks h held, counting it against its address.
func (s *Scheduler) holdLocked(h *hostState) {
	h.held = true
	h.deferred = false
	s.mu.held++
	h.heldAddr = h.addr
	if h.addr != "" {
		a := s.mu.addrs[h.addr]
		if a == nil {
			a = &addrState{}
			s.mu.addrs[h.addr] = a
		}
		a.inFlight++
	}
}

// unholdLocked ends h's hold and lets the first host waiting for its address
// go back to the heap.
func (s *Scheduler) unholdLocked(h *hostState) {
	h.held = false
	s.mu.held--
	if h.heldAddr == "" {
		return
	}
	key := h.heldAddr
	h.heldAddr = ""
	s.freeAddrSlotLocked(key)
}

// freeAddrSlotLocked ends one request's claim on an address: the first host
// waiting in line there goes back to the heap if a slot is free, and an
// address with nothing in flight and nobody waiting is forgotten.
func (s *Scheduler) freeAddrSlotLocked(key string) {
	a := s.mu.addrs[key]
	a.inFlight--
	if len(a.waiting) > 0 && a.inFlight < s.loadCfg.MaxPerAddr {
		w := a.waiting[0]
		a.waiting[0] = nil
		a.waiting = a.waiting[1:]
		w.blocked = false
		s.mu.blocked--
		s.parkLocked(w)
		s.notify()
	}
	if a.inFlight == 0 && len(a.waiting) == 0 {
		delete(s.mu.addrs, key)
	}
}

// TryExtra takes one more request slot at a held host's address, for a
// second request in flight to the host (Load.Concurrency). It returns false
// when the address is at its limit. Each true is given back with
// ReleaseExtra.
func (s *Scheduler) TryExtra(host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.mu.hosts[host]
	if h == nil || !h.held {
		panic("hostload: TryExtra for a host that is not held: " + host)
	}
	if h.heldAddr == "" {
		return true
	}
	a := s.mu.addrs[h.heldAddr]
	if a.inFlight >= s.loadCfg.MaxPerAddr {
		return false
	}
	a.inFlight++
	return true
}

// ReleaseExtra gives back a slot taken with TryExtra.
func (s *Scheduler) ReleaseExtra(host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.mu.hosts[host]
	if h == nil || !h.held || h.heldAddr == "" {
		return
	}
	s.freeAddrSlotLocked(h.heldAddr)
}

// AddrOf returns the address recorded for a host, or "".
func (s *Scheduler) AddrOf(host string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.mu.hosts[host]; h != nil {
		return h.addr
	}
	return ""
}

// ClaimAddr records the address of a held host whose address was not known
// when it was acquired (its first request: the address comes from a DNS
// lookup), and counts the hold against it. It returns false when the
// address is at its limit: the caller must release the host without a
// request; it will wait in line at the address.
func (s *Scheduler) ClaimAddr(host, addr string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.mu.hosts[host]
	if h == nil || !h.held {
		panic("hostload: ClaimAddr for a host that is not held: " + host)
	}
	h.addr = addr
	if h.heldAddr != "" || addr == "" {
		return true
	}
	a := s.mu.addrs[addr]
	if a == nil {
		a = &addrState{}
		s.mu.addrs[addr] = a
	}
	if a.inFlight >= s.loadCfg.MaxPerAddr {
		if a.inFlight == 0 && len(a.waiting) == 0 {
			delete(s.mu.addrs, addr)
		}
		return false
	}
	a.inFlight++
	h.heldAddr = addr
	return true
}

// SetAddr records the IP address a held host was reached at; from then on
// it shares LoadConfig.MaxPerAddr with the other hosts at that address.
func (s *Scheduler) SetAddr(host, addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.mu.hosts[host]; h != nil {
		h.addr = addr
	}
}

// Release returns a held host. done is how many of its queued URLs were
// finished while it was held; next is the earliest time it may be fetched
// again, and reason says why it waits until then.
func (s *Scheduler) Release(host string, done int, next time.Time, reason Reason) {
	s.release(host, done, next, reason, false)
}

// Defer returns a held host whose work cannot go on for now (its robots.txt
// is unavailable): it is tried again at next, but the crawl does not wait
// for it when nothing else is left.
func (s *Scheduler) Defer(host string, done int, next time.Time, reason Reason) {
	s.release(host, done, next, reason, true)
}

func (s *Scheduler) release(host string, done int, next time.Time, reason Reason, deferred bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.mu.hosts[host]
	if h == nil || !h.held {
		panic("hostload: Release of a host that is not held: " + host)
	}
	s.unholdLocked(h)
	h.pending -= done
	if h.pending < 0 {
		h.pending = 0
	}
	h.next = next
	h.reason = reason
	h.deferred = deferred
	if h.pending > 0 {
		s.parkLocked(h)
	} else {
		// Keep an idle host's next allowed time: new URLs for it may be
		// found before that time, and must wait for it.
		s.mu.idle[host] = h
		// A crawl whose hosts were all known from the start adds no new
		// host that would sweep: hosts going idle sweep too.
		s.sweepIdleLocked(time.Now())
	}
	s.notify()
}

// Bounds of what the scheduler keeps of hosts that have no work.
const (
	// idleSweepMin is how many idle hosts are kept before any is
	// forgotten.
	idleSweepMin = 1024
	// maxMemos bounds the rate memos of forgotten hosts.
	maxMemos = 1 << 16
	// memoFresh is how long after its congestion event a forgotten host's
	// rate memo is kept: past a few cycles (at most maxCycle each) the
	// rate has grown back beyond the ceiling, and the memo says little
	// that slow start would not find.
	memoFresh = 10 * maxCycle
)

// SetIdleSweep sets when idle hosts are forgotten: once minIdle hosts are
// idle, at most once every every (by default 1,024 and a second). Tests
// use it to make eviction happen at once.
func (s *Scheduler) SetIdleSweep(minIdle int, every time.Duration) {
	s.mu.Lock()
	s.sweepMin, s.sweepEvery = minIdle, every
	s.mu.Unlock()
}

// sweepIdleLocked forgets idle hosts whose next allowed time has passed: they
// are due at once anyway, so forgetting them changes nothing of when they
// may be asked. A pause still in force (Retry-After, a backoff) is a next
// allowed time that has not passed, and is kept. What a forgotten host's
// Load learned of its rate at a congestion event is kept as a RateMemo
// (some 150 bytes, against a kilobyte for the Load) for memoFresh, taken
// up by the host's next Load, so that a host that gets work again does not
// slow-start into a limit it showed. The sweep runs at most once a second,
// when there are many idle hosts or memos, so that per-host state stays
// bounded by the hosts with work, a wait, or a fresh memo.
func (s *Scheduler) sweepIdleLocked(now time.Time) {
	if len(s.mu.idle)+len(s.mu.memos) < s.sweepMin || now.Sub(s.mu.swept) < s.sweepEvery {
		return
	}
	s.mu.swept = now
	for k, m := range s.mu.memos {
		if now.Sub(m.GrowFrom) > memoFresh {
			delete(s.mu.memos, k)
		}
	}
	for k, h := range s.mu.idle {
		if h.next.After(now) {
			continue
		}
		delete(s.mu.idle, k)
		delete(s.mu.hosts, k)
		if h.load == nil {
			continue
		}
		if m := h.load.Memo(); m != nil && now.Sub(m.GrowFrom) <= memoFresh && len(s.mu.memos) < maxMemos {
			s.mu.memos[k] = m
		}
	}
}

// Wake makes a waiting host due now: what it waited for was done on
// another host's turn (a robots.txt redirect hop). A held, idle or unknown
// host is left as it is.
func (s *Scheduler) Wake(host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.mu.hosts[host]
	now := time.Now()
	if h == nil || h.index < 0 || !h.next.After(now) {
		return
	}
	h.next = now
	heap.Fix(&s.mu.parked, h.index)
	s.notify()
}

// TryAcquire holds host at once if no one holds it and it is due, for a
// request made on another host's turn (a robots.txt redirect to another
// host). Otherwise it returns false and the time worth trying again. A host
// held this way is given back with Release.
func (s *Scheduler) TryAcquire(host string) (ok bool, retry time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	h := s.mu.hosts[host]
	if h == nil {
		h = &hostState{key: host, index: -1, reason: ReasonDelay}
		s.mu.hosts[host] = h
		s.mu.idle[host] = h
	}
	switch {
	case h.held || h.blocked:
		return false, now.Add(100 * time.Millisecond)
	case h.next.After(now):
		return false, h.next
	}
	if a := s.mu.addrs[h.addr]; h.addr != "" && a != nil && a.inFlight >= s.loadCfg.MaxPerAddr {
		return false, now.Add(100 * time.Millisecond)
	}
	if h.index >= 0 {
		s.unparkLocked(h)
	}
	delete(s.mu.idle, host)
	s.holdLocked(h)
	return true, time.Time{}
}

// Load returns the load state of a host the caller holds, creating it with
// the given floor, or updating the floor of the existing one. Only the
// holder of a host may use its Load.
func (s *Scheduler) Load(host string, floor time.Duration, why string) *Load {
	s.mu.Lock()
	h := s.mu.hosts[host]
	if h == nil || !h.held {
		s.mu.Unlock()
		panic("hostload: Load of a host that is not held: " + host)
	}
	l := h.load
	if l == nil {
		l = NewLoad(s.loadCfg, floor, why, hashString(host))
		h.load = l
		if m := s.mu.memos[host]; m != nil {
			// The host was forgotten while idle: go on from what was
			// learned of its rate then.
			l.Recall(m, time.Now())
			delete(s.mu.memos, host)
		}
	}
	s.mu.Unlock()
	l.SetFloor(floor, why)
	return l
}

func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// Snapshot counts hosts by state.
type Snapshot struct {
	Held    int            // being fetched now
	Due     int            // parked and due now
	Waiting map[Reason]int // parked, not yet due, by reason
	Pending int            // queued URLs over all hosts
}

// Snapshot returns the current counts.
func (s *Scheduler) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	snap := Snapshot{Held: s.mu.held, Waiting: make(map[Reason]int)}
	for _, h := range s.mu.hosts {
		snap.Pending += h.pending
	}
	if s.mu.blocked > 0 {
		snap.Waiting[ReasonAddr] = s.mu.blocked
	}
	for _, h := range s.mu.parked {
		if h.next.After(now) {
			snap.Waiting[h.reason]++
		} else {
			snap.Due++
		}
	}
	return snap
}

// hostHeap orders parked hosts by next allowed time.
type hostHeap []*hostState

func (h hostHeap) Len() int { return len(h) }
func (h hostHeap) Less(i, j int) bool {
	if !h[i].next.Equal(h[j].next) {
		return h[i].next.Before(h[j].next)
	}
	return h[i].order < h[j].order
}
func (h hostHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *hostHeap) Push(x any) {
	e := x.(*hostState)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *hostHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	e.index = -1
	*h = old[:len(old)-1]
	return e
}

// After returns the earliest start of the next request to a host whose last
// request ended at end, for a gap of gap. It adds a margin: the server
// finishes its side of a request — and stamps its log — after the crawler
// has read the last byte, and on a busy server that lag reaches milliseconds,
// so a site owner measuring gaps in the access log would otherwise see them
// a little short. The margin is 2% of the gap, at least 30 ms (or half the
// gap, for gaps under 60 ms) and at most 200 ms; no gap, no margin.
func After(end time.Time, gap time.Duration) time.Time {
	return end.Add(gap + margin(gap))
}

func margin(gap time.Duration) time.Duration {
	return min(max(gap/50, min(30*time.Millisecond, gap/2)), 200*time.Millisecond)
}
