package fetch

import (
	"container/list"
	"context"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Resolver looks up the addresses of a host name. *net.Resolver satisfies
// it; tests use fakes. network is "ip" (both families). Implementations must
// be safe for concurrent use.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// dnsCache caches a Resolver's answers, good and bad, and merges concurrent
// lookups of one name into one (single flight). Go's resolver does not
// report TTLs, so every answer lives for the configured TTL. The cache holds
// at most max names, dropping the least recently used.
//
// A lookup runs in a goroutine of its own, so that a caller that gives up
// (its context ends) does not fail the others waiting for the same name;
// close waits for those goroutines.
type dnsCache struct {
	r       Resolver
	ttl     time.Duration // <= 0: answers are not kept (lookups are still merged)
	neg     time.Duration // how long a failure is kept; <= 0: not kept
	max     int
	timeout time.Duration // bounds one lookup
	now     func() time.Time
	stats   *stats

	wg sync.WaitGroup
	mu struct {
		sync.Mutex
		entries map[string]*dnsEntry
		lru     list.List // of *dnsEntry, most recent first; completed entries only
		closed  bool
	}
}

type dnsEntry struct {
	host    string
	done    chan struct{} // closed when the lookup finished
	addrs   []netip.Addr
	err     error
	expires time.Time
	elem    *list.Element // in lru once done and kept
}

func newDNSCache(r Resolver, ttl, neg time.Duration, max int, timeout time.Duration, st *stats) *dnsCache {
	c := &dnsCache{r: r, ttl: ttl, neg: neg, max: max, timeout: timeout, now: time.Now, stats: st}
	c.mu.entries = map[string]*dnsEntry{}
	return c
}

// lookup returns the addresses of host, from the cache or the Resolver.
func (c *dnsCache) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	host = normHost(host)
	c.mu.Lock()
	e := c.mu.entries[host]
	if e != nil && e.elem != nil && !c.now().Before(e.expires) {
		c.removeLocked(e) // expired
		e = nil
	}
	switch {
	case e != nil:
		if e.elem != nil {
			c.mu.lru.MoveToFront(e.elem)
		}
		c.stats.add(cDNSHit)
	case c.mu.closed:
		c.mu.Unlock()
		return nil, &net.DNSError{Err: "fetch: client closed", Name: host}
	default:
		c.stats.add(cDNSMiss)
		e = &dnsEntry{host: host, done: make(chan struct{})}
		c.mu.entries[host] = e
		c.wg.Add(1)
		go c.resolve(ctx, e)
	}
	c.mu.Unlock()

	select {
	case <-e.done:
		return e.addrs, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// resolve performs the lookup for e. Its context keeps the caller's values
// (trace hooks) but not its cancellation: others may be waiting.
func (c *dnsCache) resolve(ctx context.Context, e *dnsEntry) {
	defer c.wg.Done()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.timeout)
	defer cancel()
	addrs, err := c.r.LookupNetIP(ctx, "ip", e.host)
	if err == nil && len(addrs) == 0 {
		err = &net.DNSError{Err: "no addresses", Name: e.host, IsNotFound: true}
	}
	if err != nil {
		addrs = nil
		c.stats.add(cDNSError)
	}
	for i, a := range addrs {
		addrs[i] = a.WithZone("") // as dialed; zones come only from literal URLs
	}

	keep := c.ttl
	if err != nil {
		keep = c.neg
	}
	// The TTL runs from the answer, read before the waiters are let go:
	// read after, it could start late.
	expires := c.now().Add(keep)
	c.mu.Lock()
	defer c.mu.Unlock()
	e.addrs, e.err = addrs, err
	close(e.done)
	if keep <= 0 || c.max <= 0 {
		if c.mu.entries[e.host] == e {
			delete(c.mu.entries, e.host)
		}
		return
	}
	e.expires = expires
	e.elem = c.mu.lru.PushFront(e)
	for c.mu.lru.Len() > c.max {
		c.removeLocked(c.mu.lru.Back().Value.(*dnsEntry))
	}
}

func (c *dnsCache) removeLocked(e *dnsEntry) {
	if c.mu.entries[e.host] == e {
		delete(c.mu.entries, e.host)
	}
	if e.elem != nil {
		c.mu.lru.Remove(e.elem)
		e.elem = nil
	}
}

// close stops new lookups and waits for those in flight.
func (c *dnsCache) close() {
	c.mu.Lock()
	c.mu.closed = true
	c.mu.Unlock()
	c.wg.Wait()
}

// LookupIP returns the addresses a connection for u would go to: after
// --connect-to and --resolve, from the DNS cache (filling it), or u's host
// itself when it is an address literal. The crawler uses it for per-IP
// politeness. Non-public addresses are returned as they are: refusing them
// is the dialer's job (see IsPublic).
func (c *Client) LookupIP(ctx context.Context, u *url.URL) ([]netip.Addr, error) {
	if u == nil || u.Host == "" {
		return nil, &net.DNSError{Err: "no host", Name: ""}
	}
	port := 80
	if u.Scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return nil, &net.DNSError{Err: "bad port", Name: u.Host}
		}
		port = n
	}
	host, port := c.dial.connectTo.target(u.Hostname(), port)
	ctx, cancel := context.WithTimeout(ctx, c.cfg.ConnectTimeout)
	defer cancel()
	addrs, err := c.dial.lookup(ctx, host, port)
	return slices.Clone(addrs), err
}
