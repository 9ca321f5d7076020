package gentlecrawl

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
	"github.com/gentlecrawl/gentlecrawl/internal/frontier/postgres"
	"github.com/gentlecrawl/gentlecrawl/internal/hostload"
	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

// A shared crawl (Config.Frontier) is many crawlers, most often in as many
// processes, on one frontier in
// PostgreSQL. The database's host lease is what makes a host one
// process's for a turn: a process fetches a host only under a lease, and
// gives it back with the host's next allowed time (and any pause it asked
// for), which the database then holds against every process. So one
// request at a time per host, the gap, Crawl-delay and Retry-After hold
// across processes as they do across the workers of one; robots.txt
// records are read from and written to the database, so the first process
// to reach an origin fetches its robots.txt for all.
//
// Within a process the scheduler (hostload.Scheduler) still hands hosts to
// workers, but it learns of hosts from the feeder: whenever a worker waits
// with no host of its own due, the feeder claims the host due longest in
// the whole crawl and hands the lease over. A host a process fetched stays
// in its scheduler until its next allowed time, when the process claims it
// again by name — unless another process took it first, and then it is
// forgotten here. A process ends when every worker waits, it holds
// nothing, and the database says no host has work that is not deferred.

// sharedPoll bounds how long the feeder waits before asking the database
// again when nothing is due: other processes add URLs and give up hosts
// that this process's scheduler knows nothing of.
const sharedPoll = 200 * time.Millisecond

// sharedScopeEvery is how often a process reads the crawl's seeds again:
// a process that joins with seeds widens the scope of every other.
const sharedScopeEvery = 2 * time.Second

// shared is the part of a crawler that only a shared crawl has.
type shared struct {
	frontier *SharedFrontier // Config.Frontier
	pg       *postgres.Store // its store
	mu       sync.Mutex
	// claimed are the leases the feeder took, each waiting for the worker
	// that the scheduler gives its host to.
	claimed map[string]*frontier.Lease
	// scopeSeeds is the number of seeds the scope was last built from.
	scopeSeeds int
	// addrs are the addresses this process recorded for its hosts in
	// the database, so that each is written once; at most maxSharedAddrs
	// (noteAddr).
	addrs map[string]string
	// restarts is the database server's restarts (postgres.Store.Restarts)
	// that the feeder has made up for.
	restarts uint64
}

// take hands over the lease the feeder took for host, if any.
func (s *shared) take(host string) *frontier.Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.claimed[host]
	delete(s.claimed, host)
	return l
}

func (s *shared) has(host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.claimed[host] != nil
}

func (s *shared) put(l *frontier.Lease) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.claimed[l.Host] = l
}

func (s *shared) held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.claimed)
}

// claimHost leases host's due URLs for a turn. In a shared crawl it first
// takes the lease the feeder may have claimed for it, and a nil lease means
// the host is not this process's to fetch now: the caller forgets it (the
// database knows when it is due, to whichever process claims it).
func (c *Crawler) claimHost(ctx context.Context, host string) (*frontier.Lease, time.Time, error) {
	if c.shared != nil {
		if l := c.shared.take(host); l != nil {
			return l, time.Time{}, nil
		}
	}
	lease, due, err := c.store.Claim(ctx, frontier.ClaimRequest{Host: host, Now: time.Now(), Max: leaseMax, TTL: leaseTTL})
	if err != nil || lease != nil || c.shared == nil {
		return lease, due, err
	}
	if l := c.shared.take(host); l != nil {
		return l, time.Time{}, nil // the feeder claimed it meanwhile
	}
	return nil, time.Time{}, nil
}

// forget drops a host from the scheduler when the frontier has nothing of
// it due for this process.
func (c *Crawler) forget(host string) {
	c.sched.Release(host, maxPending, time.Now(), hostload.ReasonDelay)
	if c.shared != nil && c.shared.has(host) {
		// The feeder claimed it between the claim that failed and now,
		// and may have told the scheduler before the line above.
		c.sched.Add(host, 1)
	}
}

// maxPending settles every URL the scheduler counts for a host.
const maxPending = 1 << 30

// feed keeps the workers of a shared crawl supplied with hosts, and ends
// the crawl (the scheduler closes) when nothing is left anywhere. It runs
// until ctx is done or the crawl is over.
func (c *Crawler) feed(ctx context.Context) {
	defer c.sched.SetOpen(false)
	lastScope := time.Now()
	pause := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		}
	}
	failures := 0
	for ctx.Err() == nil {
		if err := c.afterRestart(ctx); err != nil {
			if ctx.Err() == nil {
				c.setStop("error: " + err.Error())
				c.stopAcquiring()
			}
			return
		}
		if time.Since(lastScope) >= sharedScopeEvery {
			lastScope = time.Now()
			if err := c.refreshScope(ctx); err != nil && ctx.Err() == nil {
				c.cfg.Logger.Warn("shared frontier: cannot read the crawl's seeds", "err", err)
			}
		}
		if c.sched.Waiters() <= c.shared.held() {
			// Every worker has a host, or one on its way: wait until one
			// waits (or a while, for the seeds and the end).
			select {
			case <-ctx.Done():
				return
			case <-c.sched.Waiting():
			case <-time.After(sharedPoll):
			}
			continue
		}
		lease, next, err := c.store.Claim(ctx, frontier.ClaimRequest{Now: time.Now(), Max: leaseMax, TTL: leaseTTL})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			c.cfg.Logger.Warn("shared frontier: claim failed", "err", err, "failures", failures)
			if failures >= 10 {
				c.setStop("error: " + err.Error())
				c.stopAcquiring()
				return
			}
			if !pause(time.Duration(failures) * sharedPoll) {
				return
			}
			continue
		}
		failures = 0
		if lease != nil {
			if u, err := url.Parse(lease.Items[0].URL); err == nil && !c.inScope.has(u) {
				// Queued by a process whose seeds this one has not read
				// yet: read them before a page of the host is fetched, or
				// its links would be dropped as out of scope.
				lastScope = time.Now()
				if err := c.refreshScope(ctx); err != nil && ctx.Err() == nil {
					c.cfg.Logger.Warn("shared frontier: cannot read the crawl's seeds", "err", err)
				}
			}
			c.shared.put(lease)
			c.sched.Add(lease.Host, len(lease.Items))
			c.sched.Wake(lease.Host)
			continue
		}
		if c.sched.Waiters() == c.cfg.Workers && c.shared.held() == 0 {
			out, err := c.shared.pg.Outstanding(ctx)
			if err == nil && !out && c.shared.pg.Restarts() == c.shared.restarts {
				return // nothing left that anyone is working on or waiting for
			}
		}
		wait := sharedPoll
		if !next.IsZero() {
			wait = min(wait, max(time.Until(next), time.Millisecond))
		}
		if !pause(wait) {
			return
		}
	}
}

// afterRestart makes up for a restart of the database server since the
// feeder last looked: a crash of the server may have lost the changes of
// its last moment (postgres.Store.Restarts), the seeds among them if the
// crawl had just begun. The process merges its seeds into the crawl's list
// and offers them again, as a resumed crawl does; the links it remembers
// as queued are forgotten by the frontier's count itself (offeredLinks),
// and the pages whose releases were lost are queued again.
func (c *Crawler) afterRestart(ctx context.Context) error {
	n := c.shared.pg.Restarts()
	if n == c.shared.restarts {
		return nil
	}
	c.cfg.Logger.Warn("shared frontier: the database server was restarted; offering this process's seeds again")
	if err := c.rememberSeeds(ctx); err != nil {
		return err
	}
	if err := c.offerSeeds(ctx); err != nil {
		return err
	}
	c.shared.restarts = n
	return nil
}

// refreshScope reads the crawl's seeds and scope settings again, and
// rebuilds the scope when another process added seeds.
func (c *Crawler) refreshScope(ctx context.Context) error {
	stored, err := c.store.Meta(ctx, "seeds")
	if err != nil || stored == "" {
		return err
	}
	var all []string
	if err := json.Unmarshal([]byte(stored), &all); err != nil {
		return err
	}
	if len(all) == c.shared.scopeSeeds {
		return nil
	}
	return c.rememberSeeds(ctx)
}

// scopeOf holds the crawl's scope, which a shared crawl rebuilds while
// workers read it.
type scopeOf struct {
	p atomic.Pointer[func(*url.URL) bool]
}

func (s *scopeOf) set(f func(*url.URL) bool) { s.p.Store(&f) }

func (s *scopeOf) has(u *url.URL) bool {
	f := s.p.Load()
	return f != nil && (*f)(u)
}

// seedList merges stored, the seeds of the crawl so far, with this
// process's, keeping the order.
func seedList(stored []string, seeds []*url.URL) (all []string, scope []*url.URL) {
	known := make(map[string]bool, len(stored)+len(seeds))
	for _, s := range stored {
		if known[s] {
			continue
		}
		known[s] = true
		all = append(all, s)
		if u, err := urlnorm.Parse(s); err == nil {
			scope = append(scope, u)
		}
	}
	for _, u := range seeds {
		if s := u.String(); !known[s] {
			known[s] = true
			all = append(all, s)
			scope = append(scope, u)
		}
	}
	return all, scope
}

// giveBack returns the leases the feeder claimed that no worker took,
// when the crawl stops: at once, rather than when they expire.
func (c *Crawler) giveBack() {
	if c.shared == nil {
		return
	}
	c.shared.mu.Lock()
	leases := c.shared.claimed
	c.shared.claimed = make(map[string]*frontier.Lease)
	c.shared.mu.Unlock()
	for _, l := range leases {
		if _, err := c.store.Release(context.Background(), frontier.ReleaseRequest{Lease: l, Next: time.Now()}); err != nil {
			c.cfg.Logger.Warn("shared frontier: cannot give a lease back", "host", l.Host, "err", err)
		}
	}
}

// lostLease is what a failed release means for the crawl. In a shared
// crawl a lease can expire under a process that stalled past the lease
// TTL, and another process has the host now: what this one fetched is
// fetched again there, and the crawl goes on. Any other error stops it.
func (c *Crawler) lostLease(host string, err error) error {
	if c.shared != nil && errors.Is(err, frontier.ErrLeaseLost) {
		c.cfg.Logger.Warn("shared frontier: a lease expired before its release; another process has the host", "host", host)
		return nil
	}
	return err
}

// sharedHost is what a process of a shared crawl leaves with a host for
// the next (frontier.ReleaseRequest.HostState), as JSON.
type sharedHost struct {
	// Rate is what the host's Load learned at its last congestion event:
	// a process that takes the host over goes on at that rate.
	Rate *hostload.RateMemo `json:"rate,omitempty"`
}

// hostState is the state a turn leaves with its host in a shared crawl,
// or nil (nothing to say, or not shared).
func (c *Crawler) hostState(t *turn) []byte {
	if c.shared == nil || t.load == nil {
		return nil
	}
	m := t.load.Memo()
	if m == nil {
		return nil
	}
	b, _ := json.Marshal(sharedHost{Rate: m})
	return b
}

// recallHost takes up what the last process to hold the turn's host
// learned of it, when that is newer than what this one knows.
func (c *Crawler) recallHost(t *turn) {
	if c.shared == nil || len(t.lease.HostState) == 0 {
		return
	}
	var s sharedHost
	if err := json.Unmarshal(t.lease.HostState, &s); err != nil {
		c.cfg.Logger.Warn("shared frontier: unreadable host state", "host", t.host, "err", err)
		return
	}
	t.load.Recall(s.Rate, time.Now())
}

// noteAddr records the address a host was reached at.
func (c *Crawler) noteAddr(ctx context.Context, host, addr string) {
	c.sched.SetAddr(host, addr)
	c.shareAddr(ctx, host, addr)
}

// shareAddr records a host's address in a shared crawl's database, where
// every process's claims count it against the address's budget: hosts of
// one shared server are then fetched by the whole crawl no more at once
// than by one process.
func (c *Crawler) shareAddr(ctx context.Context, host, addr string) {
	if c.shared == nil || addr == "" {
		return
	}
	if c.shared.noteAddr(host, addr) {
		return
	}
	if err := c.shared.pg.SetAddr(ctx, host, addr); err != nil && ctx.Err() == nil {
		c.cfg.Logger.Warn("shared frontier: cannot record a host's address", "host", host, "err", err)
	}
}

// maxSharedAddrs bounds shared.addrs. Past it the memo starts again: an
// address written again costs one statement, a memo of every host ever
// met grows without end.
const maxSharedAddrs = 100_000

// noteAddr records that host was reached at addr, and reports whether
// this process recorded that in the database already.
func (s *shared) noteAddr(host, addr string) (known bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.addrs[host] == addr {
		return true
	}
	if len(s.addrs) >= maxSharedAddrs {
		clear(s.addrs)
	}
	s.addrs[host] = addr
	return false
}

// addrBusyWait is how long a host whose address was found over the shared
// budget after its claim waits before it is claimed again.
const addrBusyWait = 50 * time.Millisecond

// addrBusy reports whether, in a shared crawl, the host's address has more
// hosts leased than the budget, this one included: claims that raced past
// the budget each see the other here, before any request, and give their
// host back.
func (c *Crawler) addrBusy(ctx context.Context, host string) (bool, error) {
	if c.shared == nil {
		return false, nil
	}
	return c.shared.pg.AddrBusy(ctx, host)
}
