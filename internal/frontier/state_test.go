package frontier_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
)

// stateWork drives a store as a crawl does, in a shape the seed picks:
// URLs admitted (some due later, some refused by Admit, some over a
// budget), hosts leased and their URLs settled, retried, revisited or
// paused, links admitted with releases, URLs marked seen; a few leases are
// left outstanding, as a crawl stopped mid-turn leaves them. It returns
// every URL offered.
func stateWork(t *testing.T, s *frontier.Store, rng *rand.Rand) []string {
	t.Helper()
	hosts := 2 + rng.IntN(40)
	base := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	now := base
	var offered []string
	next := 0
	cand := func() frontier.Candidate {
		h := "h" + strconv.Itoa(rng.IntN(hosts)) + ".test"
		u := "https://" + h + "/p" + strconv.Itoa(next)
		next++
		offered = append(offered, u)
		c := frontier.Candidate{Host: h, Canonical: u, Entry: frontier.Entry{URL: u, Depth: rng.IntN(5)}}
		if rng.IntN(5) == 0 {
			c.Due = now.Add(time.Duration(rng.IntN(600)) * time.Second)
		}
		return c
	}
	refuse := func(c frontier.Candidate) bool { return len(c.URL)%7 != 0 }
	var open []*frontier.Lease
	for range 30 + rng.IntN(120) {
		now = now.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
		switch rng.IntN(6) {
		case 0, 1:
			var b frontier.Batch
			for range 1 + rng.IntN(40) {
				b.Add = append(b.Add, cand())
			}
			if rng.IntN(3) == 0 {
				b.Admit = refuse
			}
			if _, err := s.Add(ctx, b); err != nil {
				t.Fatal(err)
			}
		case 2:
			c := cand()
			if err := s.MarkSeen(ctx, c.Canonical); err != nil {
				t.Fatal(err)
			}
		default:
			l, _, err := s.Claim(ctx, frontier.ClaimRequest{Now: now, Max: 1 + rng.IntN(4)})
			if err != nil {
				t.Fatal(err)
			}
			if l == nil {
				continue
			}
			if rng.IntN(8) == 0 {
				open = append(open, l)
				continue
			}
			req := frontier.ReleaseRequest{Lease: l, Next: now.Add(time.Duration(rng.IntN(2000)) * time.Millisecond)}
			if rng.IntN(5) == 0 {
				req.Next, req.Pause = now.Add(time.Duration(1+rng.IntN(900))*time.Second), true
			}
			for i, it := range l.Items {
				if rng.IntN(4) == 0 && i > 0 {
					break // the rest stay queued
				}
				r := frontier.Result{Item: it, Outcome: frontier.Fetched, Canonical: it.URL,
					History: &frontier.History{URL: it.URL, Status: 200, Fetched: now, Captured: now, Visits: 1}}
				switch rng.IntN(5) {
				case 0:
					r = frontier.Result{Item: it, Outcome: frontier.Retry, RetryAt: now.Add(time.Duration(rng.IntN(120)) * time.Second)}
				case 1:
					r.Revisit = now.Add(time.Duration(1+rng.IntN(3600)) * time.Second)
				}
				for range rng.IntN(4) {
					r.Add = append(r.Add, cand())
				}
				req.Results = append(req.Results, r)
			}
			if _, err := s.Release(ctx, req); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("%d hosts, %d URLs offered, %d leases left open", hosts, len(offered), len(open))
	return offered
}

// storeState is what a test compares of a store opened again: its queues
// and its in-memory state.
type storeState struct {
	queue    []string
	hosts    []string
	seq      uint64
	queued   map[string]int
	total    int
	filter   uint64
	restored bool
}

func stateOf(t *testing.T, s *frontier.Store) storeState {
	t.Helper()
	q, err := s.QueueForTest()
	if err != nil {
		t.Fatal(err)
	}
	st := storeState{queue: q, restored: s.RestoredForTest()}
	st.hosts, st.seq, st.queued, st.total, st.filter = s.StateForTest()
	return st
}

// sameAsScan fails unless restored, the state a store was opened with from
// its saved state file, is what a scan of the same store rebuilds:
// the same queues, hosts' counts, next allowed times and head due times;
// sequence numbers and queued counts at least the scan's (a scan counts
// only what the records and queues hold, the saved state what the store
// had counted).
func sameAsScan(t *testing.T, restored, scanned storeState) {
	t.Helper()
	if !slices.Equal(restored.queue, scanned.queue) {
		t.Errorf("queues differ:\nrestored %d: %.300q\nscanned  %d: %.300q", len(restored.queue), restored.queue, len(scanned.queue), scanned.queue)
	}
	if !slices.Equal(restored.hosts, scanned.hosts) {
		var only []string
		for _, h := range restored.hosts {
			if !slices.Contains(scanned.hosts, h) {
				only = append(only, "restored "+h)
			}
		}
		for _, h := range scanned.hosts {
			if !slices.Contains(restored.hosts, h) {
				only = append(only, "scanned "+h)
			}
		}
		t.Errorf("hosts differ (%d restored, %d scanned): %q", len(restored.hosts), len(scanned.hosts), only[:min(len(only), 6)])
	}
	if restored.seq < scanned.seq {
		t.Errorf("sequence number %d restored, below the scan's %d", restored.seq, scanned.seq)
	}
	if restored.total < scanned.total {
		t.Errorf("crawl's queued count %d restored, below the scan's %d", restored.total, scanned.total)
	}
	for h, n := range scanned.queued {
		if restored.queued[h] < n {
			t.Errorf("host %s: queued count %d restored, below the scan's %d", h, restored.queued[h], n)
		}
	}
}

// rescan closes s and opens its store again without the saved state (the
// file removed), so that the state is rebuilt by a scan.
func rescan(t *testing.T, s *frontier.Store, fs vfs.FS, dir string, opts frontier.Options) *frontier.Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fs.Remove(fs.PathJoin(dir, frontier.StateFileForTest)); err != nil {
		t.Fatal(err)
	}
	s, err := frontier.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.RestoredForTest() {
		t.Fatal("opened without its state file, the store says it restored it")
	}
	return s
}

// TestStateSavedMatchesScan: a store closed and opened again restores its
// in-memory state from the file Close saved — the seen filter bit for bit,
// every URL offered in it — and that state is what a scan rebuilds. A
// crawl then goes on from it: every queued URL is handed out once.
// reopenRestored closes a store and opens it again, and returns it with
// its state, which must have been restored from the file Close wrote.
func reopenRestored(t *testing.T, s *frontier.Store, dir string, opts frontier.Options) (*frontier.Store, storeState) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := frontier.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	st := stateOf(t, s)
	if !st.restored {
		t.Fatal("the store was closed cleanly but its state was rebuilt, not restored")
	}
	return s, st
}

func TestStateSavedMatchesScan(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 32))
			var limits frontier.Limits
			switch rng.IntN(3) {
			case 1:
				limits.HostBudget = 5 + rng.IntN(30)
			case 2:
				limits.CrawlBudget = 50 + rng.IntN(300)
			}
			dir := t.TempDir()
			opts := frontier.Options{Limits: limits, ExpectedURLs: 64 + rng.IntN(2000)}
			s, err := frontier.Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			offered := stateWork(t, s, rng)
			before := stateOf(t, s)
			s, restored := reopenRestored(t, s, dir, opts)
			if restored.filter != before.filter {
				t.Error("the seen filter restored is not the one the store had")
			}
			for _, u := range offered {
				if !s.MayHaveSeenForTest(u) {
					t.Fatalf("%s was offered but the restored filter says it was never seen", u)
				}
			}
			if !slices.Equal(restored.hosts, before.hosts) || restored.total != before.total {
				t.Errorf("state before Close and after:\n%q\n%q", before.hosts, restored.hosts)
			}
			s = rescan(t, s, vfs.Default, dir, opts)
			sameAsScan(t, restored, stateOf(t, s))
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}

			// Restored again (the rescanned store saved its state at
			// Close), the crawl goes on: every queued URL is handed out
			// once, and the counts say nothing is left.
			s, err = frontier.Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if !s.RestoredForTest() {
				t.Fatal("second reopen: state rebuilt, not restored")
			}
			drain(t, s, restored.queue)
		})
	}
}

// drain claims and settles everything queued in s, far in the future, and
// fails unless the URLs handed out are exactly want, each once.
func drain(t *testing.T, s *frontier.Store, want []string) {
	t.Helper()
	later := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	var got []string
	for range len(want) + 1 {
		l, _, err := s.Claim(ctx, frontier.ClaimRequest{Now: later, Max: 50})
		if err != nil {
			t.Fatal(err)
		}
		if l == nil {
			break
		}
		req := frontier.ReleaseRequest{Lease: l, Next: later}
		for _, it := range l.Items {
			got = append(got, it.URL)
			req.Results = append(req.Results, frontier.Result{Item: it, Outcome: frontier.Gone})
		}
		if _, err := s.Release(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("drained %d URLs, want the %d queued:\n%.400q\n%.400q", len(got), len(want), got, want)
	}
	for _, h := range mustHosts(t, s) {
		if h.Pending != 0 {
			t.Errorf("host %s counts %d queued after the drain", h.Host, h.Pending)
		}
	}
}

func mustHosts(t *testing.T, s *frontier.Store) []frontier.HostInfo {
	t.Helper()
	hs, err := s.Hosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return hs
}

// TestStateRefused: a saved state that is torn, of another store, or
// claims more than its size could hold, is not used: the store is opened
// by a scan, with the same state as from a clean rebuild, and a warning
// says why.
func TestStateRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, path string, other []byte)
	}{
		{"truncated", func(t *testing.T, path string, _ []byte) {
			b := readFile(t, path)
			writeFile(t, path, b[:len(b)*2/3])
		}},
		{"byte flipped", func(t *testing.T, path string, _ []byte) {
			b := readFile(t, path)
			b[len(b)/2] ^= 0x20
			writeFile(t, path, b)
		}},
		{"a byte more", func(t *testing.T, path string, _ []byte) {
			writeFile(t, path, append(readFile(t, path), 0))
		}},
		{"another store's", func(t *testing.T, path string, other []byte) {
			writeFile(t, path, other)
		}},
		{"empty", func(t *testing.T, path string, _ []byte) { writeFile(t, path, nil) }},
		{"missing", func(t *testing.T, path string, _ []byte) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}},
		{"huge counts", func(t *testing.T, path string, _ []byte) {
			// The right magic and token, then a count of hosts no file
			// of this size can hold: refused before anything is
			// allocated for it.
			b := readFile(t, path)
			huge := slices.Clone(b[:8+16])
			huge = append(huge, 1, 1) // sequence number, queued count
			huge = append(huge, 0xff, 0xff, 0xff, 0xff, 0x0f)
			writeFile(t, path, huge)
		}},
		{"huge filter", func(t *testing.T, path string, _ []byte) {
			// No hosts, a filter with one layer of 2^30 blocks.
			b := readFile(t, path)
			huge := slices.Clone(b[:8+16])
			huge = append(huge, 1, 0, 0, 0, 1, 1, 0x80, 0x80, 0x80, 0x80, 0x04)
			writeFile(t, path, append(huge, make([]byte, 100)...))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 32))
			other := t.TempDir()
			o, err := frontier.Open(other, frontier.Options{})
			if err != nil {
				t.Fatal(err)
			}
			stateWork(t, o, rand.New(rand.NewPCG(8, 32)))
			if err := o.Close(); err != nil {
				t.Fatal(err)
			}

			dir := t.TempDir()
			var logs bytes.Buffer
			opts := frontier.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			s, err := frontier.Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			stateWork(t, s, rng)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			// The state a clean rebuild makes, for comparison.
			s, err = frontier.Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			s = rescan(t, s, vfs.Default, dir, opts)
			want := stateOf(t, s)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, frontier.StateFileForTest)
			tc.spoil(t, path, readFile(t, filepath.Join(other, frontier.StateFileForTest)))
			logs.Reset()
			s, err = frontier.Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got := stateOf(t, s)
			if got.restored {
				t.Fatal("a spoilt state file was used")
			}
			if !slices.Equal(got.queue, want.queue) || !slices.Equal(got.hosts, want.hosts) || got.seq != want.seq || got.filter != want.filter {
				t.Errorf("rebuilt state differs from a clean rebuild:\n%q\n%q", got.hosts, want.hosts)
			}
			if !strings.Contains(logs.String(), "saved state is unusable") {
				t.Errorf("no warning says the saved state was not used: %q", logs.String())
			}
		})
	}
}

// TestStateCloseCut cuts the power at each step of Close's saving of the
// state, on Pebble's crash-testing file system (the writes not yet synced
// dropped, all or some of them): the store opened on what the disk holds
// has everything it had, and restores the saved state only when the cut
// came after the file was whole and named current; otherwise it rebuilds
// it. Either way the state is what a scan makes.
func TestStateCloseCut(t *testing.T) {
	steps := []string{"state written", "state renamed", "state marked"}
	for seed := range uint64(9) {
		step := steps[seed%3]
		t.Run(fmt.Sprintf("%d/%s", seed, step), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 33))
			fs := vfs.NewCrashableMem()
			opts := frontier.Options{FS: fs, ExpectedURLs: 500}
			s, err := frontier.Open(powerDir, opts)
			if err != nil {
				t.Fatal(err)
			}
			stateWork(t, s, rng)
			want, err := s.QueueForTest()
			if err != nil {
				t.Fatal(err)
			}
			var crashed *vfs.MemFS
			s.SetAfterCloseStepForTest(func(got string) {
				if got == step {
					pct := []int{0, 50, 100}[rng.IntN(3)]
					crashed = fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: pct, RNG: rng})
				}
			})
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if crashed == nil {
				t.Fatalf("Close never reached step %q", step)
			}
			opts.FS = crashed
			s, err = frontier.Open(powerDir, opts)
			if err != nil {
				t.Fatal(err)
			}
			got := stateOf(t, s)
			if wantRestored := step == "state marked"; got.restored != wantRestored {
				t.Errorf("cut after %q: restored %v, want %v", step, got.restored, wantRestored)
			}
			if !slices.Equal(got.queue, want) {
				t.Errorf("cut after %q: %d URLs queued, want %d", step, len(got.queue), len(want))
			}
			s = rescan(t, s, crashed, powerDir, opts)
			scanned := stateOf(t, s)
			if got.restored {
				sameAsScan(t, got, scanned)
			} else if !slices.Equal(got.hosts, scanned.hosts) || got.filter != scanned.filter {
				t.Errorf("two rebuilds differ:\n%q\n%q", got.hosts, scanned.hosts)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestStateKilledAfterOpen: once a store opened from its saved state has
// changed, that state is no longer current — a process killed before it
// closes the store leaves no state to restore, and the next open scans.
// (The token naming the file is deleted as the store opens, before any
// change in Pebble's log.)
func TestStateKilledAfterOpen(t *testing.T) {
	fs := vfs.NewCrashableMem()
	opts := frontier.Options{FS: fs, ExpectedURLs: 500}
	s, err := frontier.Open(powerDir, opts)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 34))
	stateWork(t, s, rng)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = frontier.Open(powerDir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !s.RestoredForTest() {
		t.Fatal("not restored after a clean close")
	}
	// The crawl goes on: a URL admitted and made durable by a synced
	// write (SetMeta waits for its sync).
	u := "https://killed.test/after-open"
	if _, err := s.Add(ctx, frontier.Batch{Add: []frontier.Candidate{{Host: "killed.test", Canonical: u, Entry: frontier.Entry{URL: u}}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMeta(ctx, "sync", "1"); err != nil {
		t.Fatal(err)
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	s.Close()
	opts.FS = crashed
	s, err = frontier.Open(powerDir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.RestoredForTest() {
		t.Fatal("killed after a change, the store restored a saved state older than it")
	}
	if !s.MayHaveSeenForTest(u) {
		t.Fatalf("%s, admitted after the open, is not in the rebuilt filter", u)
	}
	q, err := s.QueueForTest()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(q, u) {
		t.Fatalf("%s, admitted after the open, is not queued", u)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStateAtScale is the small version of bench/cmd/frontierscale: 100,000
// URLs over 1,000 hosts, a share of them leased and settled, the store
// closed and opened again: the state restored from the saved file is what
// a scan of the store rebuilds, and every URL is in the restored filter.
func TestStateAtScale(t *testing.T) {
	const urls, hosts = 100_000, 1_000
	dir := t.TempDir()
	opts := frontier.Options{ExpectedURLs: urls}
	s, err := frontier.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	url := func(i int) string {
		return "https://h" + strconv.Itoa(i%hosts) + ".example/a/" + strconv.Itoa(i) + ".html"
	}
	batch := make([]frontier.Candidate, 0, 1000)
	for i := range urls {
		u := url(i)
		batch = append(batch, frontier.Candidate{Host: "h" + strconv.Itoa(i%hosts) + ".example", Canonical: u, Entry: frontier.Entry{URL: u}})
		if len(batch) == cap(batch) {
			if _, err := s.Add(ctx, frontier.Batch{Add: batch}); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for i := range 2000 {
		l, _, err := s.Claim(ctx, frontier.ClaimRequest{Now: now, Max: 2})
		if err != nil || l == nil {
			t.Fatalf("claim %d: %v, %v", i, l, err)
		}
		req := frontier.ReleaseRequest{Lease: l, Next: now}
		for _, it := range l.Items {
			req.Results = append(req.Results, frontier.Result{Item: it, Outcome: frontier.Fetched, Canonical: it.URL,
				History: &frontier.History{URL: it.URL, Status: 200, Fetched: now, Captured: now, Visits: 1}})
		}
		if _, err := s.Release(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	s, restored := reopenRestored(t, s, dir, opts)
	for i := range urls {
		if !s.MayHaveSeenForTest(url(i)) {
			t.Fatalf("%s is not in the restored filter", url(i))
		}
	}
	s = rescan(t, s, vfs.Default, dir, opts)
	defer s.Close()
	sameAsScan(t, restored, stateOf(t, s))
	if n := len(restored.queue); n != urls-4000 {
		t.Errorf("%d URLs queued, want %d", n, urls-4000)
	}
}
