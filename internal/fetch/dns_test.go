package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestDNSCacheSingleFlight: many concurrent lookups of one name make one
// query; the answer is then served from the cache.
func TestDNSCacheSingleFlight(t *testing.T) {
	f := &fakeResolver{answers: map[string][]netip.Addr{"a.example": addrs("192.0.2.7")}, block: make(chan struct{})}
	var st stats
	c := newDNSCache(f, time.Minute, time.Minute, 100, 5*time.Second, &st)
	defer c.close()
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			got, err := c.lookup(context.Background(), "A.example.")
			if err != nil || !slices.Equal(got, addrs("192.0.2.7")) {
				t.Errorf("lookup = %v, %v", got, err)
			}
		})
	}
	time.Sleep(50 * time.Millisecond) // let them queue behind the one query
	close(f.block)
	wg.Wait()
	if n := f.count("a.example"); n != 1 {
		t.Errorf("%d queries for 20 concurrent lookups, want 1", n)
	}
	if _, err := c.lookup(context.Background(), "a.example"); err != nil || f.count("a.example") != 1 {
		t.Errorf("a cached name was queried again (%d queries, %v)", f.count("a.example"), err)
	}
	if st[cDNSMiss].Load() != 1 || st[cDNSHit].Load() != 20 {
		t.Errorf("misses %d hits %d, want 1 and 20", st[cDNSMiss].Load(), st[cDNSHit].Load())
	}
}

// TestDNSCacheWaiterGivesUp: a caller whose context ends stops waiting
// without failing the lookup for the others.
func TestDNSCacheWaiterGivesUp(t *testing.T) {
	f := &fakeResolver{answers: map[string][]netip.Addr{"a.example": addrs("192.0.2.7")}, block: make(chan struct{})}
	c := newDNSCache(f, time.Minute, time.Minute, 100, 5*time.Second, &stats{})
	defer c.close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { _, err := c.lookup(ctx, "a.example"); done <- err }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled lookup: %v", err)
	}
	close(f.block)
	if got, err := c.lookup(context.Background(), "a.example"); err != nil || len(got) != 1 {
		t.Errorf("lookup after a waiter gave up: %v, %v", got, err)
	}
	if n := f.count("a.example"); n != 1 {
		t.Errorf("%d queries, want 1", n)
	}
}

// TestDNSCacheTTL: answers expire after the TTL, failures after the
// negative TTL; with negative TTLs nothing is kept.
func TestDNSCacheTTL(t *testing.T) {
	f := &fakeResolver{answers: map[string][]netip.Addr{"a.example": addrs("192.0.2.7")}}
	var clock sync.Mutex // the cache reads the clock in its lookup goroutines
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	advance := func(d time.Duration) { clock.Lock(); now = now.Add(d); clock.Unlock() }
	c := newDNSCache(f, 5*time.Minute, time.Minute, 100, 5*time.Second, &stats{})
	c.now = func() time.Time { clock.Lock(); defer clock.Unlock(); return now }
	defer c.close()
	ctx := context.Background()
	look := func(host string) error { _, err := c.lookup(ctx, host); return err }

	look("a.example")
	if err := look("nx.example"); err == nil {
		t.Fatal("unknown name resolved")
	}
	advance(59 * time.Second)
	look("a.example")
	look("nx.example")
	if f.count("a.example") != 1 || f.count("nx.example") != 1 {
		t.Errorf("within both TTLs: %d and %d queries, want 1 and 1", f.count("a.example"), f.count("nx.example"))
	}
	advance(2 * time.Second) // past the negative TTL
	look("a.example")
	look("nx.example")
	if f.count("a.example") != 1 || f.count("nx.example") != 2 {
		t.Errorf("past the negative TTL: %d and %d queries, want 1 and 2", f.count("a.example"), f.count("nx.example"))
	}
	advance(5 * time.Minute) // past the TTL
	look("a.example")
	if f.count("a.example") != 2 {
		t.Errorf("past the TTL: %d queries, want 2", f.count("a.example"))
	}

	off := newDNSCache(f, -1, -1, 100, 5*time.Second, &stats{})
	defer off.close()
	off.lookup(ctx, "a.example")
	off.lookup(ctx, "a.example")
	if f.count("a.example") != 4 {
		t.Errorf("uncached: %d queries in all, want 4", f.count("a.example"))
	}
}

// TestDNSCacheBounded: the cache keeps at most its size, dropping the
// least recently used name.
func TestDNSCacheBounded(t *testing.T) {
	f := &fakeResolver{answers: map[string][]netip.Addr{}}
	for i := range 10 {
		f.answers[fmt.Sprintf("h%d.example", i)] = addrs(fmt.Sprintf("192.0.2.%d", i+1))
	}
	c := newDNSCache(f, time.Hour, time.Hour, 3, 5*time.Second, &stats{})
	defer c.close()
	ctx := context.Background()
	for i := range 10 {
		c.lookup(ctx, fmt.Sprintf("h%d.example", i))
		c.lookup(ctx, "h0.example") // keep h0 recent
	}
	c.mu.Lock()
	n := len(c.mu.entries)
	c.mu.Unlock()
	if n > 3 {
		t.Errorf("%d names cached, want at most 3", n)
	}
	if f.count("h0.example") != 1 {
		t.Errorf("the most used name was evicted (%d queries)", f.count("h0.example"))
	}
	c.lookup(ctx, "h1.example")
	if f.count("h1.example") != 2 {
		t.Errorf("an evicted name was not queried again")
	}
}

// TestLookupIP: the addresses a URL's connection would go to, after
// --connect-to and --resolve, through the cache the dialer uses.
func TestLookupIP(t *testing.T) {
	f := &fakeResolver{answers: map[string][]netip.Addr{
		"www.example": addrs("192.0.2.1", "2001:db8::1"),
		"backend":     addrs("192.0.2.99"),
	}}
	c := newClient(t, Config{
		Resolver:  f,
		Resolve:   []Resolve{{Host: "pinned.example", Port: 443, Addrs: addrs("198.51.100.5")}},
		ConnectTo: []ConnectTo{{FromHost: "moved.example", ToHost: "backend"}},
	})
	for _, tt := range []struct {
		url  string
		want []netip.Addr
	}{
		{"http://www.example/", addrs("192.0.2.1", "2001:db8::1")},
		{"https://pinned.example/x", addrs("198.51.100.5")},
		{"http://pinned.example/x", nil}, // the rule is for port 443
		{"http://moved.example:8080/", addrs("192.0.2.99")},
		{"http://[2001:db8::5]:8080/", addrs("2001:db8::5")},
	} {
		got, err := c.LookupIP(context.Background(), mustURL(t, tt.url))
		if tt.want == nil {
			if err == nil {
				t.Errorf("%s: got %v, want an error", tt.url, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, %v; want %v", tt.url, got, err, tt.want)
		}
	}
	c.LookupIP(context.Background(), mustURL(t, "http://www.example/again"))
	if n := f.count("www.example"); n != 1 {
		t.Errorf("www.example queried %d times, want 1 (cached)", n)
	}
}

// TestDNSRebinding: with the cache off, every connection asks DNS again
// and checks the new answer: a name that first resolves to an allowed
// address and then to 127.0.0.1 is refused the second time.
func TestDNSRebinding(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	allowed := netip.MustParseAddrPort(s.Listener.Addr().String())
	r := &rebinder{first: addrs("127.0.0.1"), then: addrs("127.0.0.2")}
	c := newClient(t, Config{Resolver: r, DNSTTL: -1, DNSNegativeTTL: -1})
	c.dial.allow = func(ap netip.AddrPort) bool { return ap == allowed } // stands in for a public address
	c.tr.DisableKeepAlives = true                                        // a new connection, so a new lookup, each time
	c.h1.keepAlive = false
	u := mustURL(t, fmt.Sprintf("http://rebind.example:%d/", allowed.Port()))
	if res := do(t, c, Request{URL: u}); string(res.Body) != "ok" {
		t.Fatalf("first fetch: %q", res.Body)
	}
	if _, err := c.Do(context.Background(), Request{URL: u}); !errors.Is(err, ErrPrivateNetwork) {
		t.Errorf("after rebinding: %v, want ErrPrivateNetwork", err)
	}
}

type rebinder struct {
	mu          sync.Mutex
	n           int
	first, then []netip.Addr
}

func (r *rebinder) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	if r.n == 1 {
		return r.first, nil
	}
	return r.then, nil
}

// TestTimings: a new connection reports DNS, connect and first-byte
// timings and is not Reused; the next request on it is Reused with no
// connection phases.
func TestTimings(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	f := &fakeResolver{answers: map[string][]netip.Addr{"t.example": addrs("127.0.0.1")}}
	c := newClient(t, Config{AllowPrivateNetworks: true, Resolver: f})
	u := &url.URL{Scheme: "http", Host: fmt.Sprintf("t.example:%d", s.port()), Path: "/"}
	res := do(t, c, Request{URL: u})
	if res.Reused || res.Connect <= 0 || res.DNS <= 0 || res.TTFB <= 0 || res.Duration < res.TTFB {
		t.Errorf("first: Reused %v DNS %v Connect %v TTFB %v Duration %v", res.Reused, res.DNS, res.Connect, res.TTFB, res.Duration)
	}
	res = do(t, c, Request{URL: u})
	if !res.Reused || res.Connect != 0 || res.DNS != 0 || res.TLS != 0 {
		t.Errorf("second: Reused %v DNS %v Connect %v TLS %v", res.Reused, res.DNS, res.Connect, res.TLS)
	}
}

var _ Resolver = (*net.Resolver)(nil)
