package frontier

import (
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// A job directory in tmpfs (/dev/shm, or a tmpfs /tmp) is memory, which a
// power loss empties whole, so the precautions a disk needs buy nothing
// there:
//
//   - Pebble preallocates each write-ahead log at 110 % of the memtable
//     size, which on a disk keeps the log's extents in place and its
//     fsyncs free of metadata. In tmpfs, preallocating allocates and
//     zeroes memory for each log, to no end: the store skips it.
//   - tmpfs's fsync does nothing, but as a blocking system call it still
//     wakes the runtime's monitor thread: the store skips its fsyncs, and
//     the crawler skips the WARC file's ([Volatile]).
//
// Nothing else changes: the store's files are written through the
// operating system as Pebble writes them.

// storeFS returns the file system the store in dir runs on: fs, or when fs
// is nil the operating system's, without preallocation or fsyncs when the
// store's directory is in tmpfs. The directory is judged by itself, or by
// its nearest ancestor that exists when it is not made yet: a mount point
// is its own file system, whatever its parent's.
func storeFS(dir string, fs vfs.FS) vfs.FS {
	if fs != nil {
		return fs
	}
	if !onTmpfs(nearestExisting(dir)) {
		return vfs.Default
	}
	return storeFiles{vfs.Default}
}

// Volatile reports whether dir, judged as storeFS judges the store's, is in
// tmpfs: memory, which a power loss empties whole, so that fsyncs there
// buy nothing. The crawler asks it of the WARC directory, to skip the
// WARC file's fsyncs there too.
func Volatile(dir string) bool { return onTmpfs(nearestExisting(dir)) }

// nearestExisting returns path, or its nearest ancestor that exists.
func nearestExisting(path string) string {
	path = filepath.Clean(path)
	for {
		if _, err := os.Stat(path); err == nil {
			return path
		}
		parent := filepath.Dir(path)
		if parent == path {
			return path
		}
		path = parent
	}
}

// storeFiles is a file system in tmpfs whose files written to skip
// Preallocate and the fsyncs.
type storeFiles struct {
	vfs.FS
}

func (fs storeFiles) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return fs.wrap(fs.FS.Create(name, c))
}

func (fs storeFiles) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return fs.wrap(fs.FS.ReuseForWrite(oldname, newname, c))
}

func (fs storeFiles) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	return fs.wrap(fs.FS.OpenReadWrite(name, c, opts...))
}

func (fs storeFiles) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return storeFile{f}, nil
}

// storeFile is a file of storeFiles.
type storeFile struct {
	vfs.File
}

func (f storeFile) Preallocate(offset, length int64) error { return nil }

// Sync, SyncData and SyncTo do nothing in tmpfs, whose fsync does
// nothing: what is written is in memory, which is all tmpfs has.
func (f storeFile) Sync() error { return nil }

func (f storeFile) SyncData() error { return nil }

func (f storeFile) SyncTo(length int64) (fullSync bool, err error) { return true, nil }
