package frontier_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
	"github.com/gentlecrawl/gentlecrawl/internal/frontier/frontiertest"
)

var ctx = context.Background()

// TestStoreConformance runs the shared suite against the embedded store.
func TestStoreConformance(t *testing.T) {
	dirs := map[frontier.Frontier]string{}
	frontiertest.Run(t, frontiertest.Backend{
		Open: func(t *testing.T, limits frontier.Limits) frontier.Frontier {
			dir := t.TempDir()
			s, err := frontier.Open(dir, frontier.Options{Limits: limits, ExpectedURLs: 1000})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			dirs[s] = dir
			return s
		},
		Reopen: func(t *testing.T, f frontier.Frontier) frontier.Frontier {
			s := f.(*frontier.Store)
			dir := dirs[s]
			limits := s.Limits()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s2, err := frontier.Open(dir, frontier.Options{Limits: limits, ExpectedURLs: 1000})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s2.Close() })
			dirs[s2] = dir
			return s2
		},
	})
}

func cand(host, path string) frontier.Candidate {
	u := "https://" + host + path
	return frontier.Candidate{Host: host, Canonical: u, Entry: frontier.Entry{URL: u}}
}

// A URL added while a claim reads its host's queue, due before the entries
// the read saw, is not lost from the in-memory copy of the queue's head: the
// next claim takes it first.
func TestClaimReadRacesAnAdd(t *testing.T) {
	s, err := frontier.Open(t.TempDir(), frontier.Options{ExpectedURLs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var cs []frontier.Candidate
	for i := range 4 {
		c := cand("a.test", "/q"+strconv.Itoa(i))
		c.Due = t0.Add(time.Duration(100+i) * time.Second)
		cs = append(cs, c)
	}
	if _, err := s.Add(ctx, frontier.Batch{Add: cs}); err != nil {
		t.Fatal(err)
	}
	early := cand("a.test", "/early")
	early.Due = t0.Add(50 * time.Second)
	s.SetAfterSnapshotForTest(func() {
		s.SetAfterSnapshotForTest(nil)
		if _, err := s.Add(ctx, frontier.Batch{Add: []frontier.Candidate{early}}); err != nil {
			t.Error(err)
		}
	})
	now := t0.Add(200 * time.Second)
	l, _, err := s.Claim(ctx, frontier.ClaimRequest{Host: "a.test", Now: now, Max: 1})
	if err != nil || l == nil || l.Items[0].URL != "https://a.test/q0" {
		t.Fatalf("Claim = %v, %v; want /q0 (the read did not see /early)", l, err)
	}
	r := frontier.Result{Item: l.Items[0], Outcome: frontier.Fetched}
	if _, err := s.Release(ctx, frontier.ReleaseRequest{Lease: l, Results: []frontier.Result{r}, Next: now}); err != nil {
		t.Fatal(err)
	}
	l, _, err = s.Claim(ctx, frontier.ClaimRequest{Host: "a.test", Now: now, Max: 2})
	if err != nil || l == nil || len(l.Items) != 2 || l.Items[0].URL != early.URL || l.Items[1].URL != "https://a.test/q1" {
		t.Fatalf("Claim after the race = %v, %v; want /early, /q1", l, err)
	}
}

func TestStoreRefusesOtherFormat(t *testing.T) {
	dir := t.TempDir()
	s, err := frontier.Open(dir, frontier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetMeta(ctx, "version", "999"); err == nil {
		t.Fatal("SetMeta may overwrite the format version")
	}
	s.Close()
	// An older job directory: written with format 2.
	if err := frontier.WriteFormatForTest(dir, "2"); err != nil {
		t.Fatal(err)
	}
	_, err = frontier.Open(dir, frontier.Options{})
	if !errors.Is(err, frontier.ErrIncompatible) || !strings.Contains(err.Error(), `"2"`) {
		t.Fatalf("Open = %v, want ErrIncompatible naming the format", err)
	}
}

// fullDisk is the operating system's filesystem, refusing every write and
// sync with ENOSPC while failing is set.
func fullDisk(failing *atomic.Bool) vfs.FS {
	return errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if failing.Load() && (op.Kind == errorfs.OpFileWrite || op.Kind == errorfs.OpFileSync) {
			return syscall.ENOSPC
		}
		return nil
	}))
}

// TestStoreFailureIsAnError: when the disk refuses a write (a full disk),
// Pebble gives up; the store's methods return an error matching
// ErrStoreFailed, with a message saying what happened, instead of crashing
// the process, and keep returning it.
func TestStoreFailureIsAnError(t *testing.T) {
	var failing atomic.Bool
	fs := fullDisk(&failing)
	s, err := frontier.Open(t.TempDir(), frontier.Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	const a = "a.test"
	if _, err := s.Add(ctx, frontier.Batch{Add: []frontier.Candidate{cand(a, "/1")}}); err != nil {
		t.Fatal(err)
	}
	failing.Store(true)
	// Neither Add nor PutRobots waits for its sync: the failure comes with
	// a call made after the store's waiter has seen it.
	_, err = s.Add(ctx, frontier.Batch{Add: []frontier.Candidate{cand(a, "/2")}})
	for deadline := time.Now().Add(30 * time.Second); err == nil && time.Now().Before(deadline); {
		if err = s.PutRobots(ctx, a, &frontier.RobotsRecord{}); err == nil {
			time.Sleep(time.Millisecond)
		}
	}
	if !errors.Is(err, frontier.ErrStoreFailed) || !strings.Contains(err.Error(), "resumed") {
		t.Fatalf("Add on a full disk, then PutRobots = %v; want ErrStoreFailed with a clear message", err)
	}
	if err := s.PutRobots(ctx, a, &frontier.RobotsRecord{}); !errors.Is(err, frontier.ErrStoreFailed) {
		t.Errorf("after the failure PutRobots = %v, want ErrStoreFailed", err)
	}
	if _, _, err := s.Claim(ctx, frontier.ClaimRequest{}); !errors.Is(err, frontier.ErrStoreFailed) {
		t.Errorf("after the failure Claim = %v, want ErrStoreFailed", err)
	}
	if err := s.Close(); !errors.Is(err, frontier.ErrStoreFailed) {
		t.Errorf("Close = %v, want ErrStoreFailed", err)
	}
}

// TestReleaseOnFailingDisk: a release returns before its sync; when the sync
// fails, the store fails, its next call says so, and the job opened again
// has the lease's URL still pending (the release is lost, nothing else).
func TestReleaseOnFailingDisk(t *testing.T) {
	var failing atomic.Bool
	fs := fullDisk(&failing)
	dir := t.TempDir()
	s, err := frontier.Open(dir, frontier.Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, frontier.Batch{Add: []frontier.Candidate{cand("a.test", "/1")}}); err != nil {
		t.Fatal(err)
	}
	// A synced write: the Add before it is on disk too.
	if err := s.SetMeta(ctx, "note", "x"); err != nil {
		t.Fatal(err)
	}
	l, _, err := s.Claim(ctx, frontier.ClaimRequest{Host: "a.test", Max: 1})
	if err != nil || l == nil {
		t.Fatalf("Claim = %v, %v", l, err)
	}
	failing.Store(true)
	r := frontier.Result{Item: l.Items[0], Outcome: frontier.Fetched, Canonical: l.Items[0].URL, History: &frontier.History{URL: l.Items[0].URL, Status: 200}}
	_, rerr := s.Release(ctx, frontier.ReleaseRequest{Lease: l, Results: []frontier.Result{r}})
	if rerr != nil && !errors.Is(rerr, frontier.ErrStoreFailed) {
		t.Fatalf("Release on a full disk = %v; want nil (the sync not awaited) or ErrStoreFailed", rerr)
	}
	// Close waits for the sync, and reports its failure.
	if err := s.Close(); !errors.Is(err, frontier.ErrStoreFailed) {
		t.Fatalf("Close after a failed sync = %v, want ErrStoreFailed", err)
	}
	if _, _, err := s.Claim(ctx, frontier.ClaimRequest{}); !errors.Is(err, frontier.ErrStoreFailed) {
		t.Errorf("after the failure Claim = %v, want ErrStoreFailed", err)
	}
	failing.Store(false)
	s, err = frontier.Open(dir, frontier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l, _, err = s.Claim(ctx, frontier.ClaimRequest{Host: "a.test", Max: 1})
	if err != nil || l == nil || l.Items[0].URL != "https://a.test/1" {
		t.Fatalf("after reopening, Claim = %v, %v; want /1 pending again", l, err)
	}
}

// TestStoreSeenFilterPastCapacity: a crawl that sees far more URLs than the
// filter was sized for stays exact.
func TestStoreSeenFilterPastCapacity(t *testing.T) {
	dir := t.TempDir()
	s, err := frontier.Open(dir, frontier.Options{ExpectedURLs: 1})
	if err != nil {
		t.Fatal(err)
	}
	var batch []frontier.Candidate
	for i := range 20_000 {
		batch = append(batch, cand("a.test", "/"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+itoa(i)))
	}
	got, err := s.Add(ctx, frontier.Batch{Add: batch})
	if err != nil || got.Total() != len(batch) {
		t.Fatalf("Add = %d, %v; want %d", got.Total(), err, len(batch))
	}
	s.Close()
	s, err = frontier.Open(dir, frontier.Options{ExpectedURLs: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err = s.Add(ctx, frontier.Batch{Add: append(batch, cand("a.test", "/new"))})
	if err != nil || got.Total() != 1 {
		t.Fatalf("after reopen, Add = %d, %v; want only /new", got.Total(), err)
	}
}

func itoa(i int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		if i /= 10; i == 0 {
			return string(b)
		}
	}
}

// TestClaimFloor: a queue read from where its last read began (past the
// deletion markers of settled entries) still hands out an entry added
// before that point, and every entry exactly once, in due order.
func TestClaimFloor(t *testing.T) {
	s, err := frontier.Open(t.TempDir(), frontier.Options{ExpectedURLs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	add := func(path string, due time.Time) {
		c := cand("a.test", path)
		c.Due = due
		if _, err := s.Add(ctx, frontier.Batch{Add: []frontier.Candidate{c}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 300 {
		add("/q"+strconv.Itoa(i), t0.Add(time.Duration(1000+i)*time.Second))
	}
	now := t0.Add(time.Hour)
	var got []string
	claim := func() {
		t.Helper()
		l, _, err := s.Claim(ctx, frontier.ClaimRequest{Host: "a.test", Now: now, Max: 1})
		if err != nil || l == nil {
			t.Fatalf("Claim = %v, %v", l, err)
		}
		got = append(got, strings.TrimPrefix(l.Items[0].URL, "https://a.test"))
		r := frontier.Result{Item: l.Items[0], Outcome: frontier.Fetched}
		if _, err := s.Release(ctx, frontier.ReleaseRequest{Lease: l, Results: []frontier.Result{r}, Next: now}); err != nil {
			t.Fatal(err)
		}
	}
	for range 100 {
		claim() // several reads of the queue, each past the last one's start
	}
	add("/early", t0.Add(10*time.Second))                  // before every entry
	add("/mid", t0.Add(1100*time.Second+time.Millisecond)) // between two queued entries
	add("/late", t0.Add(1200*time.Second))                 // with a queued entry's due time: after it
	for range 203 {
		claim()
	}
	want := []string{}
	for i := range 100 {
		want = append(want, "/q"+strconv.Itoa(i))
	}
	want = append(want, "/early", "/q100", "/mid")
	for i := 101; i <= 200; i++ {
		want = append(want, "/q"+strconv.Itoa(i))
	}
	want = append(want, "/late")
	for i := 201; i < 300; i++ {
		want = append(want, "/q"+strconv.Itoa(i))
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("claimed\n%v\nwant\n%v", got, want)
	}
	if l, _, err := s.Claim(ctx, frontier.ClaimRequest{Host: "a.test", Now: now, Max: 1}); l != nil || err != nil {
		t.Errorf("a claim of the empty queue = %v, %v", l, err)
	}
}
