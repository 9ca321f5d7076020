package warc

import (
	"os"
	"sync"
	"sync/atomic"
	"testing"
)

// TestSyncWritten: after SyncWritten returns, every exchange whose Write
// returned before the call is covered by an fsync; callers share fsyncs,
// a call with nothing new makes none, and rotation under way (small files)
// neither loses a sync nor fails one.
func TestSyncWritten(t *testing.T) {
	var syncs atomic.Int64
	orig := fileSync
	fileSync = func(f *os.File) error {
		syncs.Add(1)
		return orig(f)
	}
	t.Cleanup(func() { fileSync = orig })

	w, err := Create(Options{Dir: t.TempDir(), MaxFileSize: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SyncWritten(); err != nil || syncs.Load() != 0 {
		t.Fatalf("SyncWritten before any write: %v, %d fsyncs", err, syncs.Load())
	}
	const workers, each = 8, 40
	var wg sync.WaitGroup
	calls := atomic.Int64{}
	for g := range workers {
		wg.Go(func() {
			for i := range each {
				if _, err := w.Write(testExchange(g*each + i)); err != nil {
					t.Error(err)
					return
				}
				w.mu.Lock()
				mine := w.mu.written
				w.mu.Unlock()
				calls.Add(1)
				if err := w.SyncWritten(); err != nil {
					t.Error(err)
					return
				}
				w.syncMu.Lock()
				covered := w.synced
				w.syncMu.Unlock()
				if covered < mine {
					t.Errorf("SyncWritten returned covering %d writes, the caller's was write %d", covered, mine)
				}
			}
		})
	}
	wg.Wait()
	if n := syncs.Load(); n == 0 || n > calls.Load()+int64(len(w.Files())) {
		t.Errorf("%d fsyncs for %d calls and %d files", n, calls.Load(), len(w.Files()))
	}
	before := syncs.Load()
	if err := w.SyncWritten(); err != nil {
		t.Fatal(err)
	}
	if err := w.SyncWritten(); err != nil {
		t.Fatal(err)
	}
	if d := syncs.Load() - before; d > 1 {
		t.Errorf("two SyncWritten with nothing new between: %d fsyncs, want at most one", d)
	}
	if len(w.Files()) < 3 {
		t.Errorf("%d files: the test meant to rotate under SyncWritten", len(w.Files()))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.SyncWritten(); err == nil {
		t.Error("SyncWritten after Close succeeded")
	}
}
