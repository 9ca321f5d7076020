package frontier

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// gateDB is a database with compactions waiting: it accepts every grant
// while it has some, and counts them.
type gateDB struct {
	mu        sync.Mutex
	allowed   int
	waiting   int
	scheduled int
}

func (d *gateDB) GetAllowedWithoutPermission() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.allowed
}

func (d *gateDB) GetWaitingCompaction() (bool, pebble.WaitingCompaction) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.waiting > 0, pebble.WaitingCompaction{}
}

func (d *gateDB) Schedule(pebble.CompactionGrantHandle) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.waiting == 0 {
		return false
	}
	d.waiting--
	d.scheduled++
	return true
}

func (d *gateDB) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.scheduled
}

// TestOpenGate: no compaction is granted before the gate opens, however
// long Pebble's Open takes; then as many as the database allows, another
// when one is done, none after Unregister.
func TestOpenGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := &gateDB{allowed: 2, waiting: 5}
		g := newOpenGate()
		g.Register(2, db)
		time.Sleep(10 * grantEvery)
		if ok, _ := g.TrySchedule(); ok || db.count() != 0 {
			t.Fatalf("before the gate opened: TrySchedule %v, %d scheduled", ok, db.count())
		}
		g.open()
		synctest.Wait()
		if n := db.count(); n != 2 {
			t.Fatalf("%d compactions granted once open, want the 2 allowed", n)
		}
		if ok, _ := g.TrySchedule(); ok {
			t.Error("TrySchedule granted a third while two run")
		}
		g.Done()
		synctest.Wait()
		if n := db.count(); n != 3 {
			t.Errorf("%d granted after one was done, want 3", n)
		}
		g.Unregister()
		g.Done()
		g.Done()
		if ok, _ := g.TrySchedule(); ok {
			t.Error("TrySchedule granted after Unregister")
		}
		time.Sleep(10 * grantEvery)
		if n := db.count(); n != 3 {
			t.Errorf("%d granted after Unregister, want 3", n)
		}
		g.Unregister() // twice: as after a failed Open and Close
	})
}

// TestOpenGateUnregistered: a gate Pebble never registered (its Open failed
// early) can be unregistered without waiting for a granter that never ran.
func TestOpenGateUnregistered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newOpenGate()
		g.Unregister()
		if ok, _ := g.TrySchedule(); ok {
			t.Error("an unregistered gate granted a compaction")
		}
	})
}

// TestReopenedStoreCompacts: the gate opens with the store. Tables flushed
// into a reopened store are compacted (a gate left shut would hold every
// compaction, and writes would stall once the tree's top level filled).
func TestReopenedStoreCompacts(t *testing.T) {
	dir := t.TempDir()
	add := func(s *Store, round int) {
		t.Helper()
		var b Batch
		for i := range 200 {
			u := fmt.Sprintf("https://h%d.test/r%d/p%d", i%7, round, i)
			b.Add = append(b.Add, Candidate{Host: fmt.Sprintf("h%d.test", i%7), Canonical: u, Entry: Entry{URL: u}})
		}
		if _, err := s.Add(context.Background(), b); err != nil {
			t.Fatal(err)
		}
		if err := s.db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Open(dir, Options{ExpectedURLs: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	add(s, 0)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, Options{ExpectedURLs: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for round := 1; round <= 6; round++ {
		add(s, round) // a table in the top level each
	}
	// What must happen, however slowly the machine runs: a compaction.
	deadline := time.Now().Add(2 * time.Minute)
	for s.db.Metrics().Compact.Count == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no compaction in a reopened store with %d tables in its top level", s.db.Metrics().Levels[0].TablesCount)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPebbleFormatLeftAlone: Pebble's Open must not need a compaction while
// openGate holds them, which a format upgrade that rewrites tables would.
// Raising pebbleFormat needs the gate opened before such an Open.
func TestPebbleFormatLeftAlone(t *testing.T) {
	if pebbleFormat != pebble.FormatDefault && pebbleFormat >= pebble.FormatPrePebblev1MarkedCompacted {
		t.Fatalf("pebbleFormat %v: Open may rewrite marked tables through compactions, which openGate holds until Open returns", pebbleFormat)
	}
}
