package site

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// Resolver is the DNS a Verifier asks; *net.Resolver satisfies it.
//
// LookupAddr returns the names whose PTR records point at addr (an IP
// address in text form). LookupIPAddr returns the addresses of host (its
// A and AAAA records). Both return, when a name has no such records, a
// *net.DNSError with IsNotFound set: that is an answer, and other errors
// are failures to get one.
type Resolver interface {
	LookupAddr(ctx context.Context, addr string) ([]string, error)
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Method says how a crawler was verified.
type Method uint8

const (
	// NotVerified: the claim was not verified, or there was none.
	NotVerified Method = iota
	// ByIPRange: the address is in the crawler's published IP ranges.
	ByIPRange
	// ByDNS: the address's reverse DNS name is in the crawler's domains
	// and that name's addresses include it.
	ByDNS
)

func (m Method) String() string {
	switch m {
	case ByIPRange:
		return "ip-range"
	case ByDNS:
		return "dns"
	}
	return "none"
}

// Result is what a Verifier found about a request.
type Result struct {
	// Crawler is the Name of the crawler the User-Agent claims, "" if it
	// claims none; Token is the part of the User-Agent that made the
	// claim ("AdsBot-Google").
	Crawler, Token string
	// Verified says the claim holds, By how, and Host is the forward
	// confirmed name when By is ByDNS.
	Verified bool
	By       Method
	Host     string
	// Spoofed says the User-Agent claims a known crawler and the address
	// is definitely not the crawler's: its reverse DNS names are missing
	// or outside the crawler's domains, or do not resolve back to it. A
	// lookup that failed (a timeout, a server failure) leaves both
	// Verified and Spoofed false, and Verify returns the error.
	Spoofed bool
}

// VerifyError is a DNS lookup that failed without an answer: the claim
// could be neither confirmed nor refuted.
type VerifyError struct {
	IP      netip.Addr
	Crawler string
	Op      string // "reverse lookup" or "forward lookup of NAME"
	Err     error
}

func (e *VerifyError) Error() string {
	return fmt.Sprintf("site: verifying %s as %s: %s: %v", e.IP, e.Crawler, e.Op, e.Err)
}

func (e *VerifyError) Unwrap() error { return e.Err }

// ErrNoClientIP is returned by VerifyRequest when the request's client
// address cannot be read.
var ErrNoClientIP = errors.New("site: no client IP address in the request")

// maxNames bounds the reverse DNS names of one address that are looked up
// forward: an address has one or two; a long list is not a crawler's.
const maxNames = 8

// Verifier checks that a request which claims, in its User-Agent, to come
// from a search engine's crawler comes from that crawler's addresses: by
// its published IP ranges when it was given them (SetRanges), else by the
// method the search engines document — the reverse DNS name of the address
// must be in the crawler's domains, and that name must resolve back to the
// address.
//
// Answers are cached per address and crawler: verified ones for TTL,
// refuted ones for NegativeTTL, failed lookups for ErrorTTL only, so that
// a DNS outage does not brand a crawler a spoofer for long. Concurrent
// verifications of the same address share one lookup.
//
// Set the fields before the first Verify; a zero Verifier is ready to
// use. A Verifier is safe for concurrent use.
type Verifier struct {
	// Resolver answers the DNS lookups; nil means net.DefaultResolver.
	Resolver Resolver
	// Crawlers are the crawlers a User-Agent may claim; nil means
	// KnownCrawlers.
	Crawlers []Crawler
	// ClientIP returns the address of the client that sent r; the zero
	// Addr if there is none. nil means the address of r.RemoteAddr. Behind
	// a proxy, take the address the proxy reports — and only from a proxy
	// you run, since anyone can send X-Forwarded-For.
	ClientIP func(r *http.Request) netip.Addr
	// Timeout bounds the DNS lookups of one verification. The default is
	// 5 seconds.
	Timeout time.Duration
	// TTL is how long a verified answer is kept. The default is 6 hours.
	TTL time.Duration
	// NegativeTTL is how long a refuted answer is kept. The default is 1
	// hour.
	NegativeTTL time.Duration
	// ErrorTTL is how long a failed lookup is remembered, so that a flood
	// from one address does not send a flood of queries to a failing DNS.
	// The default is 10 seconds; a negative value means not at all.
	ErrorTTL time.Duration
	// CacheSize bounds the answers kept; the least recently used go
	// first. The default is 10000.
	CacheSize int
	// Now returns the current time; nil means time.Now. Tests set it.
	Now func() time.Time

	mu struct {
		sync.Mutex
		ranges   map[string]*IPRanges // by crawler name
		cache    *lru
		inflight map[cacheKey]*call
	}
}

type cacheKey struct {
	ip      netip.Addr
	crawler string
}

// answer is a cached verification: verified with host, refuted, or failed
// with err.
type answer struct {
	verified bool
	host     string
	err      error
}

// call is a verification in progress, which other callers wait for. ans
// and abandoned are written before done is closed.
type call struct {
	done      chan struct{}
	ans       answer
	abandoned bool
}

// SetRanges sets the published IP ranges of the crawler named name (a
// Crawler's Name, such as "Googlebot"); nil removes them. An address in
// them is verified without DNS; one outside them is still checked by DNS,
// since a list may lag behind. Reload lists as often as their publishers
// ask (Google: daily) and call SetRanges again; it is safe to call at any
// time.
func (v *Verifier) SetRanges(name string, r *IPRanges) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if r == nil {
		delete(v.mu.ranges, name)
		return
	}
	if v.mu.ranges == nil {
		v.mu.ranges = make(map[string]*IPRanges)
	}
	v.mu.ranges[name] = r
}

// VerifyRequest is Verify with r's client address and User-Agent.
func (v *Verifier) VerifyRequest(r *http.Request) (Result, error) {
	ip := v.clientIP(r)
	if !ip.IsValid() {
		if c, tok, ok := Claim(r.UserAgent(), v.Crawlers); ok {
			return Result{Crawler: c.Name, Token: tok}, ErrNoClientIP
		}
		return Result{}, ErrNoClientIP
	}
	return v.Verify(r.Context(), ip, r.UserAgent())
}

// clientIP is the address of the client that sent r, as ClientIP says.
func (v *Verifier) clientIP(r *http.Request) netip.Addr {
	if v.ClientIP != nil {
		return v.ClientIP(r)
	}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ap.Addr()
	}
	if a, err := netip.ParseAddr(r.RemoteAddr); err == nil {
		return a
	}
	return netip.Addr{}
}

// Verify checks the claim userAgent makes for ip. A User-Agent that claims
// no known crawler gives a zero Result and no lookups. An error means the
// claim could not be checked: a *VerifyError (a lookup failed), ctx's
// error, or ErrNoClientIP for an invalid ip.
func (v *Verifier) Verify(ctx context.Context, ip netip.Addr, userAgent string) (Result, error) {
	c, tok, ok := Claim(userAgent, v.Crawlers)
	if !ok {
		return Result{}, nil
	}
	res := Result{Crawler: c.Name, Token: tok}
	ip = ip.Unmap().WithZone("")
	if !ip.IsValid() {
		return res, ErrNoClientIP
	}
	v.mu.Lock()
	ranges := v.mu.ranges[c.Name]
	v.mu.Unlock()
	if ranges.Contains(ip) {
		res.Verified, res.By = true, ByIPRange
		return res, nil
	}

	ans, err := v.lookup(ctx, cacheKey{ip, c.Name}, c.Domains)
	if err != nil {
		return res, err
	}
	switch {
	case ans.err != nil:
		return res, ans.err
	case ans.verified:
		res.Verified, res.By, res.Host = true, ByDNS, ans.host
	default:
		res.Spoofed = true
	}
	return res, nil
}

// lookup returns the answer for k from the cache, from a lookup in
// progress, or from a new one. err is set only when ctx ends first.
func (v *Verifier) lookup(ctx context.Context, k cacheKey, domains []string) (answer, error) {
	for {
		v.mu.Lock()
		if v.mu.cache == nil {
			v.mu.cache = newLRU(orDefault(v.CacheSize, 10000))
			v.mu.inflight = make(map[cacheKey]*call)
		}
		if ans, ok := v.mu.cache.get(k, v.now()); ok {
			v.mu.Unlock()
			return ans, nil
		}
		if c, ok := v.mu.inflight[k]; ok {
			v.mu.Unlock()
			select {
			case <-c.done:
			case <-ctx.Done():
				return answer{}, ctx.Err()
			}
			if c.abandoned {
				// The caller that looked it up gave up; look again.
				continue
			}
			return c.ans, nil
		}
		c := &call{done: make(chan struct{})}
		v.mu.inflight[k] = c
		v.mu.Unlock()

		c.ans = v.resolve(ctx, k.ip, k.crawler, domains)
		// A lookup cut short by the caller's context says nothing about
		// the address: it is neither kept nor shared.
		c.abandoned = c.ans.err != nil && ctx.Err() != nil

		v.mu.Lock()
		delete(v.mu.inflight, k)
		if ttl := v.ttlOf(c.ans); ttl > 0 && !c.abandoned {
			v.mu.cache.put(k, c.ans, v.now().Add(ttl))
		}
		v.mu.Unlock()
		close(c.done)
		if c.abandoned {
			return answer{}, ctx.Err()
		}
		return c.ans, nil
	}
}

func (v *Verifier) ttlOf(a answer) time.Duration {
	switch {
	case a.err != nil:
		if v.ErrorTTL < 0 {
			return 0
		}
		return orDefault(v.ErrorTTL, 10*time.Second)
	case a.verified:
		return orDefault(v.TTL, 6*time.Hour)
	default:
		return orDefault(v.NegativeTTL, time.Hour)
	}
}

// resolve does the reverse-then-forward lookup. A name outside domains is
// never looked up: its DNS belongs to whoever set the PTR record.
func (v *Verifier) resolve(ctx context.Context, ip netip.Addr, crawler string, domains []string) answer {
	ctx, cancel := context.WithTimeout(ctx, orDefault(v.Timeout, 5*time.Second))
	defer cancel()
	res := v.Resolver
	if res == nil {
		res = net.DefaultResolver
	}
	names, err := res.LookupAddr(ctx, ip.String())
	if err != nil && !isNotFound(err) {
		return answer{err: &VerifyError{IP: ip, Crawler: crawler, Op: "reverse lookup", Err: err}}
	}
	var failed error
	tried := 0
	for _, name := range names {
		if !inDomain(name, domains) {
			continue
		}
		if tried++; tried > maxNames {
			break
		}
		addrs, err := res.LookupIPAddr(ctx, name)
		if err != nil {
			if !isNotFound(err) && failed == nil {
				failed = &VerifyError{IP: ip, Crawler: crawler, Op: "forward lookup of " + name, Err: err}
			}
			continue
		}
		for _, a := range addrs {
			if got, ok := netip.AddrFromSlice(a.IP); ok && got.Unmap() == ip {
				return answer{verified: true, host: trimDot(name)}
			}
		}
	}
	if failed != nil {
		// Another name might have confirmed the address.
		return answer{err: failed}
	}
	return answer{}
}

func (v *Verifier) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return time.Now()
}

func isNotFound(err error) bool {
	var dnsErr *net.DNSError
	return errors.As(err, &dnsErr) && dnsErr.IsNotFound
}

func trimDot(name string) string {
	if n := len(name); n > 0 && name[n-1] == '.' {
		return name[:n-1]
	}
	return name
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
