package postgres_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
	"github.com/gentlecrawl/gentlecrawl/internal/frontier/postgres"
	"github.com/gentlecrawl/gentlecrawl/internal/pgtest"
)

// TestServerRestart: the database server restarted under a store — a fast
// shutdown, then an immediate one while calls are being made — costs the
// store's caller nothing but time. A release of a lease taken before the
// restart goes through after it; every call made while the server is down
// returns once it is back, without an error; Restarts counts each restart
// once, by the time the first call after it returns; and the frontier
// holds what it was told (commits wait for their flush here, so that the
// immediate shutdown loses none: the test server's default, and the
// store's, is not to).
func TestServerRestart(t *testing.T) {
	srv := pgtest.Own(t, pgtest.Config{})
	dsn, err := srv.CreateDB(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var log lockedLog
	s := open(t, dsn+"&synchronous_commit=on", postgres.Options{LeaseTTL: time.Minute,
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	var add []frontier.Candidate
	for _, p := range []string{"/1", "/2", "/3"} {
		add = append(add, cand("a.test", p), cand("b.test", p))
	}
	if _, err := s.Add(ctx, frontier.Batch{Add: add}); err != nil {
		t.Fatal(err)
	}
	l, _, err := s.Claim(ctx, frontier.ClaimRequest{Host: "a.test", Max: 10})
	if err != nil || l == nil || len(l.Items) != 3 {
		t.Fatalf("Claim = %v, %v", l, err)
	}
	if err := srv.Restart(t.Context(), pgtest.Fast); err != nil {
		t.Fatal(err)
	}
	var results []frontier.Result
	for _, it := range l.Items {
		results = append(results, done(it))
	}
	results[0].Add = []frontier.Candidate{cand("c.test", "/x")}
	if _, err := s.Release(ctx, frontier.ReleaseRequest{Lease: l, Results: results, Next: time.Now()}); err != nil {
		t.Fatalf("Release after a restart: %v", err)
	}
	if n := s.Restarts(); n != 1 {
		t.Errorf("after a restart and a call, Restarts = %d, want 1", n)
	}

	// An immediate shutdown while calls are made: each waits for the
	// server, and none fails.
	restarted := make(chan error, 1)
	go func() { restarted <- srv.Restart(t.Context(), pgtest.Immediate) }()
	calls := 0
	for waiting := true; waiting; calls++ {
		select {
		case err := <-restarted:
			if err != nil {
				t.Fatal(err)
			}
			waiting = false
		default:
		}
		if seen, err := s.Seen(ctx, "https://c.test/x"); err != nil || !seen {
			t.Fatalf("call %d, during the restart: Seen = %v, %v", calls, seen, err)
		}
	}
	if _, err := s.Hosts(ctx); err != nil {
		t.Fatal(err)
	}
	// Some call found the server gone, and was made again.
	if out := log.String(); !strings.Contains(out, "the database is out of reach") || !strings.Contains(out, "the database is back") {
		t.Errorf("%d calls during the restart, and none waited for the server; the store's log:\n%s", calls, out)
	}
	if n := s.Restarts(); n != 2 {
		t.Errorf("after two restarts, Restarts = %d, want 2", n)
	}
	got := pending(t, s)
	if len(got) != 2 || got["b.test"] != 3 || got["c.test"] != 1 {
		t.Errorf("queued after the restarts: %v; want b.test 3, c.test 1", got)
	}
	for _, p := range []string{"/1", "/2", "/3"} {
		if h, err := s.History(ctx, "https://a.test"+p); err != nil || h == nil {
			t.Errorf("the history of a.test%s, released across a restart: %v, %v", p, h, err)
		}
	}
	// The leases of before the restarts are renewed, claimed and released
	// as any.
	l, _, err = s.Claim(ctx, frontier.ClaimRequest{Host: "b.test", Max: 10})
	if err != nil || l == nil || len(l.Items) != 3 {
		t.Fatalf("Claim after the restarts = %v, %v", l, err)
	}
	if _, err := s.Release(ctx, frontier.ReleaseRequest{Lease: l, Next: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close after the restarts: %v", err)
	}
}

// lockedLog collects a logger's lines from any goroutine.
type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLostClaimSameEpoch: a crash of the database server that loses the
// commits of its last moment can take a claim with it; the host's next
// claim then gets the same epoch again. The holder of the lost lease, who
// goes on with its turn, must neither release the new lease nor settle
// its URLs: its release fails with ErrLeaseLost, and the new holder's
// succeeds. (The loss is made here by putting the host's row back as it
// was before the first claim.)
func TestLostClaimSameEpoch(t *testing.T) {
	dsn := pgtest.DB(t)
	s := open(t, dsn, postgres.Options{})
	if _, err := s.Add(ctx, frontier.Batch{Add: []frontier.Candidate{cand("a.test", "/1"), cand("a.test", "/2")}}); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var epoch int64
	if err := conn.QueryRow(ctx, "SELECT lease_epoch FROM gc_hosts WHERE host = 'a.test'").Scan(&epoch); err != nil {
		t.Fatal(err)
	}
	lost, _, err := s.Claim(ctx, frontier.ClaimRequest{Host: "a.test", Max: 1})
	if err != nil || lost == nil {
		t.Fatalf("Claim = %v, %v", lost, err)
	}
	if _, err := conn.Exec(ctx, `UPDATE gc_hosts SET lease_owner = NULL, lease_expires = NULL, lease_deadline = NULL,
		lease_epoch = $1 WHERE host = 'a.test'`, epoch); err != nil {
		t.Fatal(err)
	}
	again, _, err := s.Claim(ctx, frontier.ClaimRequest{Host: "a.test", Max: 1})
	if err != nil || again == nil {
		t.Fatalf("Claim after the loss = %v, %v", again, err)
	}
	if again.ID != lost.ID {
		t.Fatalf("epochs %d then %d: the loss was not made as a crash makes it", lost.ID, again.ID)
	}
	_, err = s.Release(ctx, frontier.ReleaseRequest{Lease: lost, Results: []frontier.Result{done(lost.Items[0])}, Next: time.Now()})
	if !errors.Is(err, frontier.ErrLeaseLost) {
		t.Fatalf("release of the lost lease = %v, want ErrLeaseLost", err)
	}
	if h, err := s.History(ctx, lost.Items[0].URL); err != nil || h != nil {
		t.Errorf("the lost lease's result was written: %v, %v", h, err)
	}
	if _, err := s.Release(ctx, frontier.ReleaseRequest{Lease: again, Results: []frontier.Result{done(again.Items[0])}, Next: time.Now()}); err != nil {
		t.Fatalf("release of the new lease: %v", err)
	}
	if got := pending(t, s); got["a.test"] != 1 {
		t.Errorf("queued after the new lease's release: %v, want a.test 1", got)
	}
}

// TestLostReleaseGivenBack: a crash of the database server that loses a
// release leaves its lease in the table, held by nobody; the store that
// took it gives it back when it finds the server restarted, so that the
// host is claimed again at once, not a LeaseTTL later. A lease it still
// holds is left alone. (The loss is made here by putting the row back as
// the release found it, then restarting the server.)
func TestLostReleaseGivenBack(t *testing.T) {
	srv := pgtest.Own(t, pgtest.Config{})
	dsn, err := srv.CreateDB(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, dsn, postgres.Options{LeaseTTL: time.Hour})
	if _, err := s.Add(ctx, frontier.Batch{Add: []frontier.Candidate{cand("a.test", "/1"), cand("b.test", "/1")}}); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		epoch             int64
		owner             [16]byte
		expires, deadline time.Time
	}
	a, _, err := s.Claim(ctx, frontier.ClaimRequest{Host: "a.test", Max: 1})
	if err != nil || a == nil {
		t.Fatalf("Claim = %v, %v", a, err)
	}
	var leased row
	if err := conn.QueryRow(ctx, "SELECT lease_epoch, lease_owner, lease_expires, lease_deadline FROM gc_hosts WHERE host = 'a.test'").
		Scan(&leased.epoch, &leased.owner, &leased.expires, &leased.deadline); err != nil {
		t.Fatal(err)
	}
	b, _, err := s.Claim(ctx, frontier.ClaimRequest{Host: "b.test", Max: 1})
	if err != nil || b == nil {
		t.Fatalf("Claim = %v, %v", b, err)
	}
	if _, err := s.Release(ctx, frontier.ReleaseRequest{Lease: a, Next: time.Now()}); err != nil {
		t.Fatal(err)
	}
	// The release lost: the row as the claim left it.
	if _, err := conn.Exec(ctx, `UPDATE gc_hosts SET lease_epoch = $1, lease_owner = $2,
		lease_expires = $3, lease_deadline = $4 WHERE host = 'a.test'`,
		leased.epoch, leased.owner, leased.expires, leased.deadline); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if l, _, err := s.Claim(ctx, frontier.ClaimRequest{Host: "a.test", Max: 1}); err != nil || l != nil {
		t.Fatalf("before the restart, a.test's lease is in the table: Claim = %v, %v; want none", l, err)
	}
	if err := srv.Restart(t.Context(), pgtest.Fast); err != nil {
		t.Fatal(err)
	}
	l, _, err := s.Claim(ctx, frontier.ClaimRequest{Host: "a.test", Max: 1})
	if err != nil || l == nil {
		t.Fatalf("after the restart: Claim of a.test = %v, %v; want its lease, given back", l, err)
	}
	if _, err := s.Release(ctx, frontier.ReleaseRequest{Lease: l, Next: time.Now()}); err != nil {
		t.Fatal(err)
	}
	// b.test's lease, held all along, is still this store's to release.
	if _, err := s.Release(ctx, frontier.ReleaseRequest{Lease: b, Results: []frontier.Result{done(b.Items[0])}, Next: time.Now()}); err != nil {
		t.Fatalf("release of the lease held across the restart: %v", err)
	}
}
