package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
	"github.com/gentlecrawl/gentlecrawl/internal/frontier/frontiertest"
	"github.com/gentlecrawl/gentlecrawl/internal/frontier/postgres"
	"github.com/gentlecrawl/gentlecrawl/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// open opens a Store on dsn, closed when the test ends.
func open(t testing.TB, dsn string, opts postgres.Options) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConformance runs the suite every frontier passes against a real
// PostgreSQL, a database per test. Reopen closes the store — which gives
// back its leases, as the death of its process does LeaseTTL later — and
// opens the database again.
func TestConformance(t *testing.T) {
	type opened struct {
		dsn  string
		opts postgres.Options
	}
	var mu = map[frontier.Frontier]opened{}
	frontiertest.Run(t, frontiertest.Backend{
		Open: func(t *testing.T, limits frontier.Limits) frontier.Frontier {
			dsn := pgtest.DB(t)
			opts := postgres.Options{Limits: limits}
			s := open(t, dsn, opts)
			mu[s] = opened{dsn, opts}
			return s
		},
		Reopen: func(t *testing.T, f frontier.Frontier) frontier.Frontier {
			o := mu[f]
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			s := open(t, o.dsn, o.opts)
			mu[s] = o
			return s
		},
	})
}

var ctx = context.Background()

func cand(host, path string) frontier.Candidate {
	u := "https://" + host + path
	return frontier.Candidate{Host: host, Canonical: u, Entry: frontier.Entry{URL: u}}
}

func done(item *frontier.Item) frontier.Result {
	return frontier.Result{Item: item, Outcome: frontier.Fetched, Canonical: item.URL,
		History: &frontier.History{URL: item.URL, Status: 200}}
}

func pending(t *testing.T, f frontier.Frontier) map[string]int {
	t.Helper()
	hosts, err := f.Hosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, h := range hosts {
		out[h.Host] = h.Pending
	}
	return out
}

// TestFencing: two stores on one database are two workers. A's lease
// ends on the database's clock once A stops renewing it — the claimant's
// clock has not moved, and the lease's own TTL is an hour — and B claims
// the host. A's release then fails with ErrLeaseLost and changes
// nothing: no history, no link admitted (Admit not even asked), the URL
// still B's.
func TestFencing(t *testing.T) {
	dsn := pgtest.DB(t)
	a := open(t, dsn, postgres.Options{LeaseTTL: 300 * time.Millisecond})
	b := open(t, dsn, postgres.Options{})
	const h = "a.test"
	if _, err := a.Add(ctx, frontier.Batch{Add: []frontier.Candidate{cand(h, "/1"), cand(h, "/2")}}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	la, _, err := a.Claim(ctx, frontier.ClaimRequest{Host: h, Now: now, Max: 1, TTL: time.Hour})
	if err != nil || la == nil {
		t.Fatalf("A's claim = %v, %v", la, err)
	}
	// While A renews, its lease holds past its LeaseTTL.
	time.Sleep(600 * time.Millisecond)
	if lb, next, err := b.Claim(ctx, frontier.ClaimRequest{Host: h, Now: now, Max: 1}); err != nil || lb != nil || !next.Equal(la.Expires) {
		t.Fatalf("B's claim of a renewed lease = %v, %v, %v; want none until %v", lb, next, err, la.Expires)
	}
	a.StopRenewingForTest()
	var lb *frontier.Lease
	for deadline := time.Now().Add(10 * time.Second); lb == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("A's lease never expired on the database's clock")
		}
		if lb, _, err = b.Claim(ctx, frontier.ClaimRequest{Host: h, Now: now, Max: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if len(lb.Items) != 1 || lb.Items[0].URL != la.Items[0].URL || lb.ID == la.ID {
		t.Fatalf("B's lease = %+v (epoch %d); want A's URL, a new epoch (A's %d)", lb.Items, lb.ID, la.ID)
	}
	asked := 0
	r := done(la.Items[0])
	r.Add = []frontier.Candidate{cand("b.test", "/from-a")}
	_, err = a.Release(ctx, frontier.ReleaseRequest{Lease: la, Results: []frontier.Result{r}, Next: now.Add(time.Hour),
		Admit: func(frontier.Candidate) bool { asked++; return true }})
	if !errors.Is(err, frontier.ErrLeaseLost) {
		t.Fatalf("A's release after B's claim = %v, want ErrLeaseLost", err)
	}
	// The same without links: its pipeline has no first round trip.
	if _, err := a.Release(ctx, frontier.ReleaseRequest{Lease: la, Results: []frontier.Result{done(la.Items[0])}, Next: now.Add(time.Hour)}); !errors.Is(err, frontier.ErrLeaseLost) {
		t.Fatalf("A's release without links = %v, want ErrLeaseLost", err)
	}
	if asked != 0 {
		t.Errorf("Admit asked %d times by a release whose lease was lost", asked)
	}
	if hist, _ := b.History(ctx, la.Items[0].URL); hist != nil {
		t.Errorf("the lost release wrote a history: %+v", hist)
	}
	if seen, _ := b.Seen(ctx, "https://b.test/from-a"); seen {
		t.Error("the lost release's link is in the seen-set")
	}
	if got := pending(t, b); got[h] != 2 || len(got) != 1 {
		t.Errorf("pending after the lost release = %v; want %s:2", got, h)
	}
	// The host's next allowed time is B's to set, not A's.
	if _, err := b.Release(ctx, frontier.ReleaseRequest{Lease: lb, Results: []frontier.Result{done(lb.Items[0])}, Next: now}); err != nil {
		t.Fatal(err)
	}
	l, _, err := b.Claim(ctx, frontier.ClaimRequest{Host: h, Now: now, Max: 5})
	if err != nil || l == nil || len(l.Items) != 1 || l.Items[0].URL != "https://"+h+"/2" {
		t.Fatalf("after B's release, claim = %+v, %v; want /2 at once", l, err)
	}
	if _, err := a.Release(ctx, frontier.ReleaseRequest{Lease: la, Next: now}); !errors.Is(err, frontier.ErrLeaseLost) {
		t.Errorf("A's release while B holds the host again = %v, want ErrLeaseLost", err)
	}
}

// TestClaimAnyAfterDeadline: Claim of whichever host is due finds one whose
// holder stopped renewing, though its expiry on the claimants' clock is
// far off.
func TestClaimAnyAfterDeadline(t *testing.T) {
	dsn := pgtest.DB(t)
	a := open(t, dsn, postgres.Options{LeaseTTL: 200 * time.Millisecond})
	b := open(t, dsn, postgres.Options{})
	if _, err := a.Add(ctx, frontier.Batch{Add: []frontier.Candidate{cand("a.test", "/1")}}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	la, _, err := a.Claim(ctx, frontier.ClaimRequest{Now: now, Max: 1, TTL: time.Hour})
	if err != nil || la == nil {
		t.Fatalf("claim = %v, %v", la, err)
	}
	a.StopRenewingForTest()
	if l, next, _ := b.Claim(ctx, frontier.ClaimRequest{Now: now, Max: 1}); l != nil || !next.Equal(la.Expires) {
		t.Fatalf("claim before the deadline = %v, next %v", l, next)
	}
	time.Sleep(300 * time.Millisecond)
	l, _, err := b.Claim(ctx, frontier.ClaimRequest{Now: now, Max: 1})
	if err != nil || l == nil || l.Host != "a.test" {
		t.Fatalf("claim after the deadline = %v, %v; want a.test", l, err)
	}
}

// TestSchemaRefused: a database whose schema is newer than this build's is
// refused, and left as it was.
func TestSchemaRefused(t *testing.T) {
	dsn := pgtest.DB(t)
	s, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetMeta(ctx, "seeds", "x"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "UPDATE gc_schema SET version = 99"); err != nil {
		t.Fatal(err)
	}
	if s, err := postgres.Open(ctx, dsn, postgres.Options{}); !errors.Is(err, postgres.ErrIncompatible) || !strings.Contains(err.Error(), "99") {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open of a schema at version 99 = %v; want ErrIncompatible naming the version", err)
	}
	var version int
	var seeds string
	if err := conn.QueryRow(ctx, "SELECT (SELECT version FROM gc_schema), (SELECT value FROM gc_meta WHERE name = 'seeds')").Scan(&version, &seeds); err != nil || version != 99 || seeds != "x" {
		t.Errorf("after the refusal: version %d, seeds %q, %v; want both untouched", version, seeds, err)
	}

	// Tables of the frontier's names without a version are not ours.
	other := pgtest.DB(t)
	oc, err := pgx.Connect(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Close(ctx)
	if _, err := oc.Exec(ctx, "CREATE TABLE gc_hosts (x int)"); err != nil {
		t.Fatal(err)
	}
	if s, err := postgres.Open(ctx, other, postgres.Options{}); !errors.Is(err, postgres.ErrIncompatible) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open over someone else's gc_hosts = %v; want ErrIncompatible", err)
	}
}

// TestConcurrentFirstOpen: processes opening a new database at once create
// the schema once, and all of them work.
func TestConcurrentFirstOpen(t *testing.T) {
	dsn := pgtest.DB(t)
	const n = 6
	stores := make([]*postgres.Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = postgres.Open(ctx, dsn, postgres.Options{}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
			continue
		}
		defer stores[i].Close()
		if _, err := stores[i].Add(ctx, frontier.Batch{Add: []frontier.Candidate{cand("a.test", "/"+strconv.Itoa(i))}}); err != nil {
			t.Errorf("Add through store %d: %v", i, err)
		}
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var rows, version int
	if err := conn.QueryRow(ctx, "SELECT count(*), max(version) FROM gc_schema").Scan(&rows, &version); err != nil || rows != 1 || version != postgres.SchemaVersion {
		t.Errorf("gc_schema: %d rows, version %d, %v", rows, version, err)
	}
}

// TestBadDSN: a DSN that does not parse, or names no server, is a clear
// error, which does not repeat the password.
func TestBadDSN(t *testing.T) {
	for _, tc := range []struct{ dsn, want string }{
		{"postgres://u:sekrit@127.0.0.1:5432/db?sslmode=bogus", "bad DSN"},
		{"postgres://u:sekrit@127.0.0.1:1/db?sslmode=disable&connect_timeout=5", "connect"},
	} {
		s, err := postgres.Open(ctx, tc.dsn, postgres.Options{})
		if err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", tc.dsn)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "sekrit") {
			t.Errorf("Open(%q) = %v; want an error saying %q, without the password", tc.dsn, err, tc.want)
		}
	}
}

// TestLargeBatches: batches from copyMin candidates on go through COPY;
// seen-set, Admit, budgets and requeues behave as with a few.
func TestLargeBatches(t *testing.T) {
	dsn := pgtest.DB(t)
	s := open(t, dsn, postgres.Options{Limits: frontier.Limits{HostBudget: 350}})
	var cs []frontier.Candidate
	for i := range 1000 {
		cs = append(cs, cand("h"+strconv.Itoa(i%2)+".test", "/"+strconv.Itoa(i)))
	}
	// h0 and h1 get 500 new URLs each, a budget of 350; Admit refuses the
	// multiples of ten, 100 URLs of h0.
	a, err := s.Add(ctx, frontier.Batch{Add: cs, Admit: func(c frontier.Candidate) bool {
		return !strings.HasSuffix(c.URL, "0")
	}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Queued["h0.test"] != 350 || a.OverBudget["h0.test"] != 50 || a.Queued["h1.test"] != 350 || a.OverBudget["h1.test"] != 150 {
		t.Fatalf("Add = %+v", a)
	}
	if a, err := s.Add(ctx, frontier.Batch{Add: cs}); err != nil || a.Total() != 0 {
		t.Fatalf("the same batch again = %+v, %v; want nothing", a, err)
	}
	// Settle 300 URLs of h1, then requeue all 1000: those 300 come back.
	l, _, err := s.Claim(ctx, frontier.ClaimRequest{Host: "h1.test", Now: time.Now(), Max: 300})
	if err != nil || l == nil || len(l.Items) != 300 {
		t.Fatalf("claim = %v, %v", l, err)
	}
	var rs []frontier.Result
	for _, it := range l.Items {
		rs = append(rs, done(it))
	}
	if _, err := s.Release(ctx, frontier.ReleaseRequest{Lease: l, Results: rs, Next: time.Now()}); err != nil {
		t.Fatal(err)
	}
	a, err = s.Add(ctx, frontier.Batch{Requeue: cs})
	if err != nil || a.Total() != 300 || a.Queued["h1.test"] != 300 {
		t.Fatalf("Requeue = %+v, %v; want the 300 settled URLs of h1", a, err)
	}
	if got := pending(t, s); got["h0.test"] != 350 || got["h1.test"] != 350 {
		t.Errorf("pending = %v", got)
	}
}

// TestAddr: a host's address is kept for the workers' budget per address.
func TestAddr(t *testing.T) {
	s := open(t, pgtest.DB(t), postgres.Options{})
	if a, err := s.Addr(ctx, "a.test"); a != "" || err != nil {
		t.Fatalf("Addr of an unknown host = %q, %v", a, err)
	}
	if err := s.SetAddr(ctx, "a.test", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, frontier.Batch{Add: []frontier.Candidate{cand("a.test", "/")}}); err != nil {
		t.Fatal(err)
	}
	if a, err := s.Addr(ctx, "a.test"); a != "192.0.2.1" || err != nil {
		t.Fatalf("Addr = %q, %v", a, err)
	}
	if got := pending(t, s); got["a.test"] != 1 {
		t.Errorf("pending = %v", got)
	}
}

// TestMigrateFromV1: a database an earlier build created (schema version
// 1) with a crawl in it is migrated forward on Open, in place: the queue
// is kept, and the new column is there.
func TestMigrateFromV1(t *testing.T) {
	dsn := pgtest.DB(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, postgres.SchemaV1ForTest); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		`INSERT INTO gc_hosts (bucket, host, pending, queued, due) VALUES ($1, 'a.test', 1, 1, now())`,
		`INSERT INTO gc_queue (bucket, host, due, url) VALUES ($1, 'a.test', now(), 'http://a.test/')`,
	} {
		if _, err := conn.Exec(ctx, sql, int32(postgres.Bucket("a.test"))); err != nil {
			t.Fatal(err)
		}
	}
	s := open(t, dsn, postgres.Options{})
	var version int
	var deferred bool
	if err := conn.QueryRow(ctx, "SELECT (SELECT version FROM gc_schema), (SELECT deferred FROM gc_hosts WHERE host = 'a.test')").Scan(&version, &deferred); err != nil || version != postgres.SchemaVersion || deferred {
		t.Fatalf("after Open: version %d, deferred %v, %v; want %d, false", version, deferred, err, postgres.SchemaVersion)
	}
	l, _, err := s.Claim(ctx, frontier.ClaimRequest{Now: time.Now().Add(time.Second), Max: 4})
	if err != nil || l == nil || len(l.Items) != 1 || l.Items[0].URL != "http://a.test/" {
		t.Fatalf("claim after the migration: %+v, %v", l, err)
	}
}

// TestOutstanding: a shared crawl is over when no host has work that is
// leased or not deferred — whatever the deferred hosts still hold.
func TestOutstanding(t *testing.T) {
	dsn := pgtest.DB(t)
	s := open(t, dsn, postgres.Options{})
	other := open(t, dsn, postgres.Options{})
	outstanding := func(want bool, when string) {
		t.Helper()
		for _, st := range []*postgres.Store{s, other} {
			if got, err := st.Outstanding(ctx); err != nil || got != want {
				t.Fatalf("%s: Outstanding = %v, %v; want %v", when, got, err, want)
			}
		}
	}
	outstanding(false, "empty")
	now := time.Now()
	if _, err := s.Add(ctx, frontier.Batch{Add: []frontier.Candidate{cand("a.test", "/"), cand("b.test", "/")}}); err != nil {
		t.Fatal(err)
	}
	outstanding(true, "two hosts queued")

	// a.test is deferred (its robots.txt unavailable) for an hour.
	la, _, err := s.Claim(ctx, frontier.ClaimRequest{Host: "a.test", Now: now, Max: 1})
	if err != nil || la == nil {
		t.Fatalf("claim a.test: %v, %v", la, err)
	}
	if _, err := s.Release(ctx, frontier.ReleaseRequest{Lease: la, Next: now.Add(time.Hour), Deferred: true}); err != nil {
		t.Fatal(err)
	}
	outstanding(true, "b.test still queued")

	// b.test leased by the other worker: outstanding while it is held,
	// since its holder may queue more.
	lb, _, err := other.Claim(ctx, frontier.ClaimRequest{Host: "b.test", Now: now, Max: 1})
	if err != nil || lb == nil {
		t.Fatalf("claim b.test: %v, %v", lb, err)
	}
	outstanding(true, "b.test leased")
	if _, err := other.Release(ctx, frontier.ReleaseRequest{Lease: lb, Next: now, Results: []frontier.Result{
		{Item: lb.Items[0], Outcome: frontier.Fetched, Canonical: "http://b.test/", History: &frontier.History{URL: "http://b.test/"}},
	}}); err != nil {
		t.Fatal(err)
	}
	outstanding(false, "only the deferred a.test left")

	// The deferred host is still claimed when its time comes, and a lease
	// on it is outstanding again; released without deferral, it is work.
	if l, _, err := s.Claim(ctx, frontier.ClaimRequest{Now: now.Add(30 * time.Minute)}); err != nil || l != nil {
		t.Fatalf("claim before a.test's time: %v, %v; want none", l, err)
	}
	la, _, err = s.Claim(ctx, frontier.ClaimRequest{Now: now.Add(2 * time.Hour), Max: 1})
	if err != nil || la == nil || la.Host != "a.test" {
		t.Fatalf("claim after a.test's time: %v, %v", la, err)
	}
	outstanding(true, "a.test leased")
	if _, err := s.Release(ctx, frontier.ReleaseRequest{Lease: la, Next: now.Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	outstanding(true, "a.test released without deferral")
}

// TestMergeList: workers storing their seeds at once all end up in the
// list, first stored first, none twice; a value that is not a list is an
// error, left as it was.
func TestMergeList(t *testing.T) {
	dsn := pgtest.DB(t)
	const n = 8
	stores := make([]*postgres.Store, n)
	for i := range stores {
		stores[i] = open(t, dsn, postgres.Options{})
	}
	if got, err := stores[0].MergeList(ctx, "seeds", []string{"http://a.test/", "http://b.test/"}); err != nil || !slices.Equal(got, []string{"http://a.test/", "http://b.test/"}) {
		t.Fatalf("first merge: %q, %v", got, err)
	}
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Go(func() {
			for j := range 5 {
				if _, err := s.MergeList(ctx, "seeds", []string{"http://a.test/", fmt.Sprintf("http://w%d.test/%d", i, j)}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	got, err := stores[0].MergeList(ctx, "seeds", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2+n*5 || got[0] != "http://a.test/" || got[1] != "http://b.test/" {
		t.Fatalf("after %d concurrent merges: %d values %q", n*5, len(got), got)
	}
	seen := map[string]bool{}
	for _, v := range got {
		if seen[v] {
			t.Errorf("%s twice", v)
		}
		seen[v] = true
	}
	if v, err := stores[0].Meta(ctx, "seeds"); err != nil || !strings.HasPrefix(v, `["http://a.test/", "http://b.test/"`) {
		t.Errorf("Meta after the merges: %q, %v", v, err)
	}
	if err := stores[0].SetMeta(ctx, "other", `{"a": 1}`); err != nil {
		t.Fatal(err)
	}
	if _, err := stores[0].MergeList(ctx, "other", []string{"x"}); err == nil {
		t.Error("merge into a JSON object: no error")
	}
	if v, _ := stores[0].Meta(ctx, "other"); v != `{"a": 1}` {
		t.Errorf("the object after the failed merge: %q", v)
	}
}

// TestHostState: what a release leaves as the host's state is handed to
// the next lease of the host, whichever worker takes it; a release without
// one keeps it.
func TestHostState(t *testing.T) {
	dsn := pgtest.DB(t)
	a := open(t, dsn, postgres.Options{})
	b := open(t, dsn, postgres.Options{})
	now := time.Now()
	if _, err := a.Add(ctx, frontier.Batch{Add: []frontier.Candidate{cand("a.test", "/1"), cand("a.test", "/2"), cand("a.test", "/3")}}); err != nil {
		t.Fatal(err)
	}
	claim := func(s *postgres.Store, want string) *frontier.Lease {
		t.Helper()
		l, _, err := s.Claim(ctx, frontier.ClaimRequest{Now: now, Max: 1})
		if err != nil || l == nil {
			t.Fatalf("claim: %v, %v", l, err)
		}
		if string(l.HostState) != want {
			t.Fatalf("lease's host state %q, want %q", l.HostState, want)
		}
		return l
	}
	settle := func(l *frontier.Lease) []frontier.Result {
		return []frontier.Result{{Item: l.Items[0], Outcome: frontier.Fetched, Canonical: l.Items[0].URL, History: &frontier.History{URL: l.Items[0].URL}}}
	}
	l := claim(a, "")
	if _, err := a.Release(ctx, frontier.ReleaseRequest{Lease: l, Next: now, Results: settle(l), HostState: []byte(`{"ceil":2}`)}); err != nil {
		t.Fatal(err)
	}
	l = claim(b, `{"ceil":2}`)
	if _, err := b.Release(ctx, frontier.ReleaseRequest{Lease: l, Next: now, Results: settle(l)}); err != nil {
		t.Fatal(err)
	}
	claim(a, `{"ceil":2}`)
}

// TestMaxPerAddr: with a budget of two per address, a third host of the
// same address is not claimed while two are leased, by any worker — by
// name or as the host due longest; hosts of another address, or of none
// known, are; a lease whose holder died does not count.
func TestMaxPerAddr(t *testing.T) {
	dsn := pgtest.DB(t)
	opts := postgres.Options{MaxPerAddr: 2, LeaseTTL: time.Second}
	a, b := open(t, dsn, opts), open(t, dsn, opts)
	now := time.Now()
	var add []frontier.Candidate
	for _, h := range []string{"a.test", "b.test", "c.test", "d.test", "e.test"} {
		add = append(add, cand(h, "/"))
	}
	if _, err := a.Add(ctx, frontier.Batch{Add: add}); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"a.test", "b.test", "c.test"} {
		if err := a.SetAddr(ctx, h, "192.0.2.1"); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.SetAddr(ctx, "d.test", "192.0.2.2"); err != nil {
		t.Fatal(err)
	}
	claim := func(s *postgres.Store, host string) *frontier.Lease {
		t.Helper()
		l, _, err := s.Claim(ctx, frontier.ClaimRequest{Host: host, Now: now, Max: 1})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	la, lb := claim(a, "a.test"), claim(b, "b.test")
	if la == nil || lb == nil {
		t.Fatalf("the first two hosts of the address: %v, %v", la, lb)
	}
	if l := claim(a, "c.test"); l != nil {
		t.Fatalf("c.test claimed by name with two hosts of its address leased")
	}
	for _, h := range []string{"a.test", "b.test", "d.test", "e.test"} {
		if busy, err := b.AddrBusy(ctx, h); err != nil || busy {
			t.Errorf("AddrBusy(%s) = %v, %v with the budget just used", h, busy, err)
		}
	}
	got := map[string]bool{}
	for {
		l := claim(b, "")
		if l == nil {
			break
		}
		got[l.Host] = true
	}
	if !got["d.test"] || !got["e.test"] || got["c.test"] || len(got) != 2 {
		t.Fatalf("claimed as due longest: %v; want d.test and e.test only", got)
	}
	// A third host of the address whose address became known during its
	// lease (the claims' race, or a first request) is over the budget.
	le := claim(a, "e.test")
	if le != nil {
		t.Fatal("e.test claimed while b holds it")
	}
	if err := a.SetAddr(ctx, "e.test", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	if busy, err := b.AddrBusy(ctx, "e.test"); err != nil || !busy {
		t.Errorf("AddrBusy(e.test) = %v, %v with three hosts of its address leased", busy, err)
	}
	if _, err := a.Release(ctx, frontier.ReleaseRequest{Lease: la, Next: now}); err != nil {
		t.Fatal(err)
	}
	if busy, err := b.AddrBusy(ctx, "e.test"); err != nil || busy {
		t.Errorf("AddrBusy(e.test) = %v, %v after a release", busy, err)
	}
	if l := claim(b, ""); l != nil {
		t.Fatalf("after a release: %s claimed; want none, b.test and e.test using the budget", l.Host)
	}
	// b.test's holder dies: once its lease's deadline passes it no
	// longer counts, and its host is claimed again.
	a.StopRenewingForTest()
	b.StopRenewingForTest()
	time.Sleep(1500 * time.Millisecond)
	c := open(t, dsn, opts)
	n := 0
	for claim(c, "") != nil {
		n++
	}
	if n == 0 {
		t.Error("nothing claimed after every holder stopped renewing")
	}
}
