package frontier

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// Limits returns the store's budgets (for reopening it in tests).
func (s *Store) Limits() Limits { return s.limits }

// WriteFormatForTest stamps the store in dir with another format version, as
// an older or newer build would have left it.
func WriteFormatForTest(dir, version string) error {
	db, err := pebble.Open(dir, &pebble.Options{Logger: pebbleLogger{slog.New(slog.DiscardHandler)}})
	if err != nil {
		return err
	}
	if err := db.Set(metaKey("version"), []byte(version), pebble.Sync); err != nil {
		db.Close()
		return err
	}
	return db.Close()
}

// CompactForTest flushes and compacts the whole store.
func (s *Store) CompactForTest() error {
	if err := s.db.Flush(); err != nil {
		return err
	}
	return s.db.Compact(context.Background(), []byte{0}, []byte{0xff}, false)
}

// SetAfterSnapshotForTest makes fn run whenever a claim's read of a queue has
// taken its snapshot, before it reads.
func (s *Store) SetAfterSnapshotForTest(fn func()) { s.afterSnapshot = fn }

// QueueForTest returns the URL of every entry of every queue, in key order.
func (s *Store) QueueForTest() ([]string, error) {
	var urls []string
	err := s.scan([]byte{prefixQueue}, func(k, v []byte) error {
		host, ok := queueKeyHost(k)
		if !ok {
			return fmt.Errorf("%w: queue key %q", errCorrupt, k)
		}
		var e Entry
		if err := decodeEntry(v, string(host), &e); err != nil {
			return err
		}
		urls = append(urls, e.URL)
		return nil
	})
	return urls, err
}

// FlushForTest flushes the memtable to a table, as a full memtable does.
func (s *Store) FlushForTest() error { return s.db.Flush() }

// StateFileForTest is the name of the file, in the store's directory, that
// Close saves the in-memory state to.
const StateFileForTest = stateFile

// SetAfterCloseStepForTest makes fn run between the steps of Close's saving
// of the in-memory state: "state written", "state renamed", "state marked".
func (s *Store) SetAfterCloseStepForTest(fn func(step string)) { s.afterCloseStep = fn }

// RestoredForTest reports whether Open restored the in-memory state from a
// saved state file rather than rebuilding it.
func (s *Store) RestoredForTest() bool { return s.restored }

// StateForTest describes the in-memory state that Open restores or
// rebuilds: per host with anything to say, its next allowed time, queue
// count, refused count and (with a queue) head due time; then the
// sequence number and the crawl's queued count, which a rebuild may find
// lower than the store had counted (it counts what the records and queues
// hold), so they are returned apart; and a checksum of the seen filter.
func (s *Store) StateForTest() (hosts []string, seq uint64, queued map[string]int, total int, filter uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	queued = make(map[string]int)
	for name, st := range s.mu.hosts {
		queued[name] = st.queued
		if st.pending == 0 && st.durableNext.IsZero() && st.overBudget == 0 {
			continue // nothing a scan would find
		}
		line := fmt.Sprintf("%s next=%d pending=%d over=%d", name, timeNanos(st.durableNext), st.pending, st.overBudget)
		if st.pending > 0 {
			line += fmt.Sprintf(" due=%d", timeNanos(st.due))
		}
		hosts = append(hosts, line)
	}
	slices.Sort(hosts)
	h := fnv.New64a()
	for _, l := range s.mu.seen.layers {
		for _, w := range l.words {
			h.Write(binary.LittleEndian.AppendUint64(nil, w))
		}
	}
	fmt.Fprintf(h, "%d/%d", s.mu.seen.n, s.mu.seen.cap)
	return hosts, s.mu.seq, queued, s.mu.queued, h.Sum64()
}

// MayHaveSeenForTest reports whether the in-memory seen filter may hold
// canonical (false: certainly never added).
func (s *Store) MayHaveSeenForTest(canonical string) bool {
	h := Hash(canonical)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.seen.mayContain(h[:])
}

// HostsInMemoryForTest returns how many hosts the store keeps in memory,
// how many of those are idle (nothing queued or leased), and how many of
// the idle ones are kept for their pacing (held in memory only, not yet
// passed).
func (s *Store) HostsInMemoryForTest() (hosts, idle, pacing int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.mu.hosts {
		if st.idleNow() {
			idle++
			if st.next.After(st.durableNext) && st.next.After(s.mu.clock) {
				pacing++
			}
		}
	}
	return len(s.mu.hosts), idle, pacing
}
