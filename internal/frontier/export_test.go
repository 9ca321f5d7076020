package frontier

import (
	"context"
	"fmt"
	"log/slog"

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
