package site

import (
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
)

// TestNonces: a nonce is new once, until it expires; the cache holds at
// most its size, the nonce closest to expiring going first.
func TestNonces(t *testing.T) {
	n := newNonces(3)
	t0 := time.Unix(1_700_000_000, 0)
	if !n.firstUse("a", "k", "n1", t0.Add(time.Minute), t0) || n.firstUse("a", "k", "n1", t0.Add(time.Minute), t0) {
		t.Fatal("n1: new, then seen")
	}
	if !n.firstUse("b", "k", "n1", t0.Add(time.Minute), t0) || !n.firstUse("a", "k2", "n1", t0.Add(time.Minute), t0) {
		t.Error("the same nonce from another agent or key is another nonce")
	}
	// Full: n1 of a expires first with the others; a fourth evicts one.
	if !n.firstUse("a", "k", "n2", t0.Add(time.Hour), t0) || n.len() != 3 {
		t.Errorf("%d nonces, want 3", n.len())
	}
	if n.firstUse("a", "k", "n2", t0.Add(time.Hour), t0) {
		t.Error("n2 forgotten: the eviction took the nonce furthest from expiring")
	}
	// Once expired, a nonce is forgotten.
	later := t0.Add(2 * time.Hour)
	if !n.firstUse("a", "k", "n2", later.Add(time.Minute), later) || n.len() != 1 {
		t.Errorf("after expiry: %d nonces", n.len())
	}
	big := newNonces(1000)
	for i := range 5000 {
		big.firstUse("a", "k", string(rune(i)), t0.Add(time.Duration(i)*time.Second), t0)
	}
	if big.len() != 1000 || len(big.exp) != 1000 {
		t.Errorf("%d nonces, %d in the heap; at most 1000", big.len(), len(big.exp))
	}
}

// TestPublicAddr: the guard of directory fetches agrees with the
// crawler's.
func TestPublicAddr(t *testing.T) {
	for _, s := range []string{
		"127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
		"224.0.0.1", "255.255.255.255", "192.0.2.1", "::1", "fe80::1", "fc00::1", "::ffff:127.0.0.1",
		"64:ff9b::a00:1", "64:ff9b::808:808", "2001:db8::1", "8.8.8.8", "2606:4700::1111", "198.18.0.1",
	} {
		a := netip.MustParseAddr(s)
		if got, want := publicAddr(a), fetch.IsPublic(a); got != want {
			t.Errorf("publicAddr(%s) = %v, fetch.IsPublic says %v", s, got, want)
		}
	}
}

func TestDirectoryTTL(t *testing.T) {
	d := newDirectories(&BotAuth{})
	for cc, want := range map[string]time.Duration{
		"":                          5 * time.Minute,
		"max-age=3600":              time.Hour,
		"public, max-age=60":        5 * time.Minute,
		"max-age=99999999999999999": 24 * time.Hour,
		"no-store":                  5 * time.Minute,
		`max-age="7200"`:            2 * time.Hour,
		"max-age=-1":                5 * time.Minute,
	} {
		h := http.Header{}
		if cc != "" {
			h.Set("Cache-Control", cc)
		}
		if got := d.ttl(h); got != want {
			t.Errorf("Cache-Control %q: %v, want %v", cc, got, want)
		}
	}
}
