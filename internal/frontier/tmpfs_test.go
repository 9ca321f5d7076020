package frontier_test

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
)

// TestNoPreallocationInTmpfs: a store in tmpfs (/dev/shm) writes its log
// without preallocating it, so the log holds only the memory its records
// need; on a disk (t.TempDir, under /tmp) Pebble preallocates as before.
// The store works the same on both, and opens again.
func TestNoPreallocationInTmpfs(t *testing.T) {
	if !isTmpfs("/dev/shm") || isTmpfs(os.TempDir()) {
		t.Skip("needs /dev/shm in tmpfs and the temporary directory on a disk")
	}
	shm, err := os.MkdirTemp("/dev/shm", "gentlecrawl-frontier-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	for _, tc := range []struct {
		dir      string
		prealloc bool
	}{{filepath.Join(shm, "store"), false}, {filepath.Join(t.TempDir(), "store"), true}} {
		s, err := frontier.Open(tc.dir, frontier.Options{ExpectedURLs: 1000})
		if err != nil {
			t.Fatal(err)
		}
		var cs []frontier.Candidate
		for i := range 100 {
			cs = append(cs, cand("a.test", "/p"+strconv.Itoa(i)))
		}
		if _, err := s.Add(ctx, frontier.Batch{Add: cs}); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		logs, _ := filepath.Glob(filepath.Join(tc.dir, "*.log"))
		var allocated int64
		for _, l := range logs {
			var st syscall.Stat_t
			if err := syscall.Stat(l, &st); err == nil {
				allocated += st.Blocks * 512
			}
		}
		if len(logs) == 0 || (allocated > 16<<20) != tc.prealloc {
			t.Errorf("%s: %d logs, %d bytes allocated; preallocated: want %v", tc.dir, len(logs), allocated, tc.prealloc)
		}
		s, err = frontier.Open(tc.dir, frontier.Options{ExpectedURLs: 1000})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
}

func isTmpfs(path string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(path, &st) == nil && st.Type == 0x01021994
}
