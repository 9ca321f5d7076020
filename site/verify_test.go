package site_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/site"
)

// fakeDNS answers from maps and counts the questions. A name or address
// missing from the maps does not exist; one in fail gets that error.
type fakeDNS struct {
	mu      sync.Mutex
	ptr     map[string][]string // address → names
	addr    map[string][]string // name → addresses
	fail    map[string]error    // address or name → error
	reverse atomic.Int32
	forward atomic.Int32
	// gate, if set, holds every lookup until it is closed.
	gate chan struct{}
}

func (d *fakeDNS) LookupAddr(ctx context.Context, addr string) ([]string, error) {
	d.reverse.Add(1)
	if err := d.wait(ctx); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.fail[addr]; err != nil {
		return nil, err
	}
	names, ok := d.ptr[addr]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: addr, IsNotFound: true}
	}
	return names, nil
}

func (d *fakeDNS) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	d.forward.Add(1)
	if err := d.wait(ctx); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.fail[host]; err != nil {
		return nil, err
	}
	addrs, ok := d.addr[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, a := range addrs {
		out = append(out, net.IPAddr{IP: net.ParseIP(a)})
	}
	return out, nil
}

func (d *fakeDNS) wait(ctx context.Context) error {
	if d.gate == nil {
		return nil
	}
	select {
	case <-d.gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *fakeDNS) set(f func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f()
}

// clock is a time that only moves when told.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

const (
	googlebotUA = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	bingbotUA   = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"
	chromeUA    = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
)

// dns is the world of TestVerify: a Googlebot address (IPv4 and IPv6), a
// Bingbot address, and attackers.
func newDNS() *fakeDNS {
	return &fakeDNS{
		ptr: map[string][]string{
			"66.249.66.1":          {"crawl-66-249-66-1.googlebot.com."},
			"2001:4860:4801:10::1": {"crawl-2001-4860-4801-10--1.googlebot.com."},
			"157.55.39.1":          {"msnbot-157-55-39-1.search.msn.com."},
			"203.0.113.7":          {"host-7.example.net."},                                   // PTR in the wrong domain
			"203.0.113.8":          {"crawl-66-249-66-1.googlebot.com."},                      // the classic attack: a PTR it does not own
			"203.0.113.9":          {"crawl-203-0-113-9.googlebot.com.evil."},                 // suffix trick
			"203.0.113.10":         {"evilgooglebot.com."},                                    // no dot before the domain
			"203.0.113.11":         {"x.bc.googleusercontent.com."},                           // any Cloud VM
			"66.249.66.2":          {"unrelated.example.", "crawl-66-249-66-2.googlebot.com"}, // several names, no final dot
		},
		addr: map[string][]string{
			"crawl-66-249-66-1.googlebot.com.":          {"66.249.66.1"},
			"crawl-2001-4860-4801-10--1.googlebot.com.": {"2001:4860:4801:10::1"},
			"msnbot-157-55-39-1.search.msn.com.":        {"157.55.39.1"},
			"host-7.example.net.":                       {"203.0.113.7"},
			"crawl-203-0-113-9.googlebot.com.evil.":     {"203.0.113.9"},
			"evilgooglebot.com.":                        {"203.0.113.10"},
			"x.bc.googleusercontent.com.":               {"203.0.113.11"},
			"crawl-66-249-66-2.googlebot.com":           {"10.0.0.1", "66.249.66.2"},
		},
	}
}

func TestVerify(t *testing.T) {
	for _, tt := range []struct {
		name, ip, ua string
		want         site.Result
	}{
		{"genuine Googlebot", "66.249.66.1", googlebotUA,
			site.Result{Crawler: "Googlebot", Token: "Googlebot", Verified: true, By: site.ByDNS, Host: "crawl-66-249-66-1.googlebot.com"}},
		{"genuine Googlebot over IPv6", "2001:4860:4801:10::1", googlebotUA,
			site.Result{Crawler: "Googlebot", Token: "Googlebot", Verified: true, By: site.ByDNS, Host: "crawl-2001-4860-4801-10--1.googlebot.com"}},
		{"IPv4 in IPv6 form", "::ffff:66.249.66.1", googlebotUA,
			site.Result{Crawler: "Googlebot", Token: "Googlebot", Verified: true, By: site.ByDNS, Host: "crawl-66-249-66-1.googlebot.com"}},
		{"genuine Bingbot", "157.55.39.1", bingbotUA,
			site.Result{Crawler: "Bingbot", Token: "bingbot", Verified: true, By: site.ByDNS, Host: "msnbot-157-55-39-1.search.msn.com"}},
		{"one of several names confirms", "66.249.66.2", "AdsBot-Google (+http://www.google.com/adsbot.html)",
			site.Result{Crawler: "Googlebot", Token: "AdsBot-Google", Verified: true, By: site.ByDNS, Host: "crawl-66-249-66-2.googlebot.com"}},
		{"Bingbot's address claiming Googlebot", "157.55.39.1", googlebotUA,
			site.Result{Crawler: "Googlebot", Token: "Googlebot", Spoofed: true}},
		{"no PTR record", "198.51.100.1", googlebotUA,
			site.Result{Crawler: "Googlebot", Token: "Googlebot", Spoofed: true}},
		{"PTR in the wrong domain", "203.0.113.7", googlebotUA,
			site.Result{Crawler: "Googlebot", Token: "Googlebot", Spoofed: true}},
		{"PTR right, forward mismatch", "203.0.113.8", googlebotUA,
			site.Result{Crawler: "Googlebot", Token: "Googlebot", Spoofed: true}},
		{"domain as a prefix", "203.0.113.9", googlebotUA,
			site.Result{Crawler: "Googlebot", Token: "Googlebot", Spoofed: true}},
		{"domain without a dot before it", "203.0.113.10", googlebotUA,
			site.Result{Crawler: "Googlebot", Token: "Googlebot", Spoofed: true}},
		{"a Cloud VM's name", "203.0.113.11", googlebotUA,
			site.Result{Crawler: "Googlebot", Token: "Googlebot", Spoofed: true}},
		{"a browser claims nothing", "203.0.113.7", chromeUA, site.Result{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dns := newDNS()
			v := &site.Verifier{Resolver: dns}
			got, err := v.Verify(context.Background(), netip.MustParseAddr(tt.ip), tt.ua)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			if tt.want.Crawler == "" && dns.reverse.Load()+dns.forward.Load() != 0 {
				t.Errorf("%d lookups for a request that claims no crawler", dns.reverse.Load()+dns.forward.Load())
			}
		})
	}
}

// A name outside the crawler's domains is never looked up: its DNS is the
// attacker's, who would learn of the check and could stall it.
func TestVerifyDoesNotAskForeignDNS(t *testing.T) {
	dns := newDNS()
	v := &site.Verifier{Resolver: dns}
	if _, err := v.Verify(context.Background(), netip.MustParseAddr("203.0.113.7"), googlebotUA); err != nil {
		t.Fatal(err)
	}
	if n := dns.forward.Load(); n != 0 {
		t.Errorf("%d forward lookups of a name outside googlebot.com", n)
	}
}

func TestVerifyCache(t *testing.T) {
	dns := newDNS()
	clk := newClock()
	v := &site.Verifier{Resolver: dns, Now: clk.Now, TTL: time.Hour, NegativeTTL: 10 * time.Minute}
	ctx := context.Background()
	genuine, spoofer := netip.MustParseAddr("66.249.66.1"), netip.MustParseAddr("203.0.113.8")
	verify := func(ip netip.Addr) site.Result {
		t.Helper()
		res, err := v.Verify(ctx, ip, googlebotUA)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	lookups := func() int32 { return dns.reverse.Load() + dns.forward.Load() }

	verify(genuine)
	verify(spoofer)
	if n := lookups(); n != 4 {
		t.Fatalf("%d lookups for two addresses, want 4", n)
	}
	for range 10 {
		if !verify(genuine).Verified || !verify(spoofer).Spoofed {
			t.Fatal("a cached answer changed")
		}
	}
	if n := lookups(); n != 4 {
		t.Errorf("%d lookups after cache hits, want still 4", n)
	}

	// The negative answer expires first…
	clk.Advance(10 * time.Minute)
	verify(genuine)
	verify(spoofer)
	if n := lookups(); n != 6 {
		t.Errorf("%d lookups after the negative TTL, want 6", n)
	}
	// …then the positive one. Meanwhile the address changed hands.
	dns.set(func() { dns.ptr["66.249.66.1"] = []string{"someone.example."} })
	clk.Advance(50 * time.Minute)
	if res := verify(genuine); res.Verified || !res.Spoofed {
		t.Errorf("after the TTL, an address that is no longer Google's: %+v", res)
	}
	if n := lookups(); n != 7 {
		t.Errorf("%d lookups after the TTL, want 7", n)
	}

	// Another claim for the same address is looked up on its own.
	if res, _ := v.Verify(ctx, genuine, bingbotUA); !res.Spoofed {
		t.Errorf("Googlebot's address claiming Bingbot: %+v", res)
	}
}

func TestVerifyCacheSize(t *testing.T) {
	dns := newDNS()
	v := &site.Verifier{Resolver: dns, CacheSize: 2, Now: newClock().Now}
	ctx := context.Background()
	a, b, c := netip.MustParseAddr("198.51.100.1"), netip.MustParseAddr("198.51.100.2"), netip.MustParseAddr("198.51.100.3")
	for _, ip := range []netip.Addr{a, b, a, c} { // c evicts b, the least recently used
		v.Verify(ctx, ip, googlebotUA)
	}
	before := dns.reverse.Load()
	v.Verify(ctx, a, googlebotUA)
	v.Verify(ctx, c, googlebotUA)
	if n := dns.reverse.Load() - before; n != 0 {
		t.Errorf("%d lookups for the two recent addresses, want 0", n)
	}
	v.Verify(ctx, b, googlebotUA)
	if n := dns.reverse.Load() - before; n != 1 {
		t.Errorf("%d lookups for the evicted address, want 1", n)
	}
}

// A failed lookup is neither a verification nor a refutation, and it is
// remembered only for ErrorTTL.
func TestVerifyResolverErrors(t *testing.T) {
	timeout := &net.DNSError{Err: "i/o timeout", Name: "66.249.66.1", IsTimeout: true, IsTemporary: true}
	servfail := &net.DNSError{Err: "server misbehaving", Name: "crawl-66-249-66-1.googlebot.com.", IsTemporary: true}
	for _, tt := range []struct {
		name string
		key  string
		err  error
		op   string
	}{
		{"reverse lookup times out", "66.249.66.1", timeout, "reverse lookup"},
		{"forward lookup fails", "crawl-66-249-66-1.googlebot.com.", servfail, "forward lookup of crawl-66-249-66-1.googlebot.com."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dns := newDNS()
			dns.fail = map[string]error{tt.key: tt.err}
			clk := newClock()
			v := &site.Verifier{Resolver: dns, Now: clk.Now, ErrorTTL: 5 * time.Second, NegativeTTL: time.Hour}
			ip := netip.MustParseAddr("66.249.66.1")
			res, err := v.Verify(context.Background(), ip, googlebotUA)
			var verr *site.VerifyError
			if !errors.As(err, &verr) || !errors.Is(err, tt.err) || verr.Op != tt.op {
				t.Fatalf("error %v, want a VerifyError of %q wrapping %v", err, tt.op, tt.err)
			}
			if res.Verified || res.Spoofed || res.Crawler != "Googlebot" {
				t.Errorf("result %+v: a failed lookup must not decide", res)
			}
			// Within ErrorTTL the failure is remembered…
			lookups := dns.reverse.Load() + dns.forward.Load()
			if _, err := v.Verify(context.Background(), ip, googlebotUA); err == nil {
				t.Error("no error from the remembered failure")
			}
			if n := dns.reverse.Load() + dns.forward.Load(); n != lookups {
				t.Errorf("%d more lookups within ErrorTTL", n-lookups)
			}
			// …and after it, the DNS is back and answers.
			dns.set(func() { dns.fail = nil })
			clk.Advance(5 * time.Second)
			res, err = v.Verify(context.Background(), ip, googlebotUA)
			if err != nil || !res.Verified {
				t.Errorf("after ErrorTTL: %+v, %v; want verified", res, err)
			}
		})
	}
}

// A caller that gives up does not leave its cancellation in the cache.
func TestVerifyCanceled(t *testing.T) {
	dns := newDNS()
	dns.gate = make(chan struct{})
	v := &site.Verifier{Resolver: dns, Now: newClock().Now}
	ip := netip.MustParseAddr("66.249.66.1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := v.Verify(ctx, ip, googlebotUA); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	close(dns.gate)
	res, err := v.Verify(context.Background(), ip, googlebotUA)
	if err != nil || !res.Verified {
		t.Errorf("after a canceled verification: %+v, %v; want verified", res, err)
	}
}

// Concurrent verifications of one address share its lookups.
func TestVerifyConcurrent(t *testing.T) {
	dns := newDNS()
	dns.gate = make(chan struct{})
	v := &site.Verifier{Resolver: dns}
	ip := netip.MustParseAddr("66.249.66.1")
	var wg sync.WaitGroup
	results := make(chan site.Result, 20)
	for range 20 {
		wg.Go(func() {
			res, err := v.Verify(context.Background(), ip, googlebotUA)
			if err != nil {
				t.Error(err)
			}
			results <- res
		})
	}
	// Let the first lookup start, then let it finish.
	for dns.reverse.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	close(dns.gate)
	wg.Wait()
	close(results)
	for res := range results {
		if !res.Verified {
			t.Errorf("result %+v", res)
		}
	}
	if r, f := dns.reverse.Load(), dns.forward.Load(); r != 1 || f != 1 {
		t.Errorf("%d reverse and %d forward lookups for 20 concurrent requests, want 1 and 1", r, f)
	}
}

func TestVerifyByIPRange(t *testing.T) {
	dns := newDNS()
	v := &site.Verifier{Resolver: dns}
	ranges, err := site.ParseIPRanges(strings.NewReader(`{"creationTime":"2025-06-01T00:00:00.000000","prefixes":[
		{"ipv4Prefix":"66.249.64.0/27"},{"ipv6Prefix":"2001:4860:4801:10::/64"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	v.SetRanges("Googlebot", ranges)
	for _, tt := range []struct {
		ip   string
		want site.Result
	}{
		{"66.249.64.5", site.Result{Crawler: "Googlebot", Token: "Googlebot", Verified: true, By: site.ByIPRange}},
		{"2001:4860:4801:10::abcd", site.Result{Crawler: "Googlebot", Token: "Googlebot", Verified: true, By: site.ByIPRange}},
		// Outside the list, DNS still decides: lists lag.
		{"66.249.66.1", site.Result{Crawler: "Googlebot", Token: "Googlebot", Verified: true, By: site.ByDNS, Host: "crawl-66-249-66-1.googlebot.com"}},
		{"203.0.113.8", site.Result{Crawler: "Googlebot", Token: "Googlebot", Spoofed: true}},
	} {
		before := dns.reverse.Load()
		got, err := v.Verify(context.Background(), netip.MustParseAddr(tt.ip), googlebotUA)
		if err != nil || got != tt.want {
			t.Errorf("%s: %+v, %v; want %+v", tt.ip, got, err, tt.want)
		}
		if tt.want.By == site.ByIPRange && dns.reverse.Load() != before {
			t.Errorf("%s: DNS asked for an address in the published ranges", tt.ip)
		}
	}
	// Ranges are per crawler: Google's list does not verify Bingbot.
	if got, _ := v.Verify(context.Background(), netip.MustParseAddr("66.249.64.5"), bingbotUA); got.Verified {
		t.Errorf("Google's address claiming Bingbot: %+v", got)
	}
	v.SetRanges("Googlebot", nil)
	if got, _ := v.Verify(context.Background(), netip.MustParseAddr("66.249.64.5"), googlebotUA); got.Verified {
		t.Errorf("after the ranges were removed: %+v", got)
	}
}

func TestVerifyRequest(t *testing.T) {
	v := &site.Verifier{Resolver: newDNS()}
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "[2001:4860:4801:10::1]:51234"
	r.Header.Set("User-Agent", googlebotUA)
	if res, err := v.VerifyRequest(r); err != nil || !res.Verified {
		t.Errorf("VerifyRequest: %+v, %v", res, err)
	}
	r.RemoteAddr = "not an address"
	if res, err := v.VerifyRequest(r); !errors.Is(err, site.ErrNoClientIP) || res.Crawler != "Googlebot" || res.Spoofed {
		t.Errorf("without a client address: %+v, %v", res, err)
	}
	// Behind a proxy, the address the proxy gives.
	v = &site.Verifier{Resolver: newDNS(), ClientIP: func(r *http.Request) netip.Addr {
		a, _ := netip.ParseAddr(r.Header.Get("X-Real-IP"))
		return a
	}}
	r.RemoteAddr = "10.0.0.2:80"
	r.Header.Set("X-Real-IP", "66.249.66.1")
	if res, err := v.VerifyRequest(r); err != nil || !res.Verified {
		t.Errorf("VerifyRequest with ClientIP: %+v, %v", res, err)
	}
}

func TestClaim(t *testing.T) {
	for _, tt := range []struct {
		ua, crawler, token string
	}{
		{googlebotUA, "Googlebot", "Googlebot"},
		{"Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.6478.126 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "Googlebot", "Googlebot"},
		{"Googlebot-Image/1.0", "Googlebot", "Googlebot"},
		{"Mediapartners-Google", "Googlebot", "Mediapartners-Google"},
		{bingbotUA, "Bingbot", "bingbot"},
		{"Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", "YandexBot", "YandexBot"},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)", "Applebot", "Applebot"},
		{"DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)", "DuckDuckBot", "DuckDuckBot"},
		{"Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)", "Baiduspider", "Baiduspider"},
		{"Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)", "Yahoo! Slurp", "Slurp"},
		{"Sogou web spider/4.0(+http://www.sogou.com/docs/help/webmasters.htm#07)", "Sogou", "Sogou web spider"},
		{"Mozilla/5.0 (compatible; SeznamBot/4.0; +http://napoveda.seznam.cz/seznambot-intro/)", "SeznamBot", "SeznamBot"},
		{"Mozilla/5.0 (compatible; Yeti/1.1; +https://naver.me/spd)", "Yeti", "Yeti/"},
		{"Mozilla/5.0 (compatible; Qwantbot/1.0_12345; +https://help.qwant.com/bot/)", "Qwantbot", "Qwantbot"},
		{"Mozilla/5.0 (Linux; Android 7.0;) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; PetalBot;+https://webmaster.petalsearch.com/site/petalbot)", "PetalBot", "PetalBot"},
		{"GOOGLEBOT", "Googlebot", "Googlebot"},
		{chromeUA, "", ""},
		// Sogou's browser is a person's.
		{"Mozilla/5.0 (Windows NT 10.0; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/86.0.4240.198 Safari/537.36 SE 2.X MetaSr 1.0 SogouMobileBrowser/5.0", "", ""},
		{"", "", ""},
	} {
		c, tok, ok := site.Claim(tt.ua, nil)
		if c.Name != tt.crawler || tok != tt.token || ok != (tt.crawler != "") {
			t.Errorf("Claim(%q) = %q, %q, %v; want %q, %q", tt.ua, c.Name, tok, ok, tt.crawler, tt.token)
		}
	}
	// Every known crawler has a name, tokens and domains, and the copy is
	// the caller's.
	cs := site.KnownCrawlers()
	if len(cs) < 12 {
		t.Errorf("%d known crawlers", len(cs))
	}
	for _, c := range cs {
		if c.Name == "" || len(c.Tokens) == 0 || len(c.Domains) == 0 {
			t.Errorf("incomplete: %+v", c)
		}
	}
	cs[0].Tokens[0] = "changed"
	if site.KnownCrawlers()[0].Tokens[0] == "changed" {
		t.Error("KnownCrawlers returned the table itself")
	}
}
