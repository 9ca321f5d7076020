package postgres_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
	"github.com/gentlecrawl/gentlecrawl/internal/frontier/postgres"
	"github.com/gentlecrawl/gentlecrawl/internal/pgtest"
)

// TestEachHistoryPages: EachHistory calls fn with none of its statements
// open — no connection of the store in use — so that a walk over a large
// crawl's histories holds no snapshot while the caller works on them (the
// leases of the other workers would meanwhile leave behind what no vacuum
// can remove). Each history is seen once, over pages of a few histories
// and buckets of several pages.
func TestEachHistoryPages(t *testing.T) {
	postgres.SetHistoryPageForTest(t, 2)
	s := open(t, pgtest.DB(t), postgres.Options{})
	const hosts, perHost = 6, 100
	var cs []frontier.Candidate
	for h := range hosts {
		for i := range perHost {
			cs = append(cs, cand("h"+strconv.Itoa(h)+".test", "/"+strconv.Itoa(i)))
		}
	}
	if _, err := s.Add(ctx, frontier.Batch{Add: cs}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for h := range hosts {
		host := "h" + strconv.Itoa(h) + ".test"
		l, _, err := s.Claim(ctx, frontier.ClaimRequest{Host: host, Now: now, Max: perHost, TTL: time.Minute})
		if err != nil || l == nil || len(l.Items) != perHost {
			t.Fatalf("claim of %s: %v, %v", host, l, err)
		}
		var rs []frontier.Result
		for _, it := range l.Items {
			rs = append(rs, done(it))
		}
		if _, err := s.Release(ctx, frontier.ReleaseRequest{Lease: l, Results: rs, Next: now}); err != nil {
			t.Fatal(err)
		}
	}
	seen := make(map[string]int)
	err := s.EachHistory(ctx, func(h *frontier.History) error {
		seen[h.URL]++
		if n := s.AcquiredConnsForTest(); n != 0 {
			t.Fatalf("%d connections in use while fn runs: a statement of the walk is still open", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != hosts*perHost {
		t.Errorf("%d histories seen, want %d", len(seen), hosts*perHost)
	}
	for u, n := range seen {
		if n != 1 {
			t.Errorf("%s seen %d times", u, n)
		}
	}
}

// TestAnalyzeSample: every column of the tables that grow by the URL has
// a small statistics target, so that ANALYZE samples few rows and holds
// its snapshot briefly; a column added without one would bring back the
// default sample of 30,000 rows.
func TestAnalyzeSample(t *testing.T) {
	dsn := pgtest.DB(t)
	open(t, dsn, postgres.Options{})
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `
SELECT attrelid::regclass::text, attname, attstattarget FROM pg_attribute
WHERE attrelid IN ('gc_queue'::regclass, 'gc_seen'::regclass, 'gc_history'::regclass) AND attnum > 0 AND NOT attisdropped`)
	if err != nil {
		t.Fatal(err)
	}
	var (
		table, column string
		target        int32
		n             int
	)
	_, err = pgx.ForEachRow(rows, []any{&table, &column, &target}, func() error {
		n++
		if target < 0 || target > 10 {
			t.Errorf("%s.%s: statistics target %d, want at most 10", table, column, target)
		}
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("%d columns, %v", n, err)
	}
}
