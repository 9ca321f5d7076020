package frontier

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// The copies of queue heads stay within their memory limit, dropping those
// used longest ago, and claims stay right when their copy was dropped.
func TestHeadCacheLimit(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), Options{ExpectedURLs: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const limit = 8 << 10
	s.mu.heads.limit = limit
	host := func(h int) string { return "h" + strconv.Itoa(h) + ".test" }
	var b Batch
	for h := range 100 {
		for i := range 20 {
			u := "https://" + host(h) + "/" + strconv.Itoa(i)
			b.Add = append(b.Add, Candidate{Host: host(h), Canonical: u, Entry: Entry{URL: u}})
		}
	}
	if _, err := s.Add(ctx, b); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for round := range 3 {
		for h := range 100 {
			l, _, err := s.Claim(ctx, ClaimRequest{Host: host(h), Now: now, Max: 2})
			if err != nil || l == nil || len(l.Items) != 2 {
				t.Fatalf("round %d, Claim(%s) = %v, %v", round, host(h), l, err)
			}
			for i, it := range l.Items {
				if want := "https://" + host(h) + "/" + strconv.Itoa(2*round+i); it.URL != want {
					t.Fatalf("round %d, %s: item %d = %s, want %s", round, host(h), i, it.URL, want)
				}
			}
			rs := []Result{{Item: l.Items[0], Outcome: Fetched}, {Item: l.Items[1], Outcome: Fetched}}
			if _, err := s.Release(ctx, ReleaseRequest{Lease: l, Results: rs, Next: now}); err != nil {
				t.Fatal(err)
			}
			s.mu.Lock()
			n, cached := s.mu.heads.bytes, 0
			for st := s.mu.heads.first; st != nil; st = st.head.next {
				cached += st.head.bytes
			}
			s.mu.Unlock()
			if n > limit || n != cached {
				t.Fatalf("round %d: %d bytes cached (%d counted in the list), limit %d", round, n, cached, limit)
			}
		}
	}
}
