package frontier

import (
	"path/filepath"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Pebble preallocates each write-ahead log at 110 % of the memtable size
// (35 MiB here), which on a disk keeps the log's extents in place and its
// fsyncs free of metadata. In tmpfs there is no disk: preallocating
// allocates and zeroes the memory, 12 ms of CPU and 35 MiB of RAM for each
// log, a twentieth of the CPU of a crawl of a thousand pages with its job
// in /dev/shm or a tmpfs /tmp. A store in tmpfs skips it.

// storeFS returns the file system the store in dir runs on: fs, or when fs
// is nil the operating system's, without preallocation in tmpfs.
func storeFS(dir string, fs vfs.FS) vfs.FS {
	if fs != nil {
		return fs
	}
	if onTmpfs(dir) || onTmpfs(filepath.Dir(dir)) {
		return noPreallocFS{vfs.Default}
	}
	return vfs.Default
}

// noPreallocFS is a file system whose files written to ignore Preallocate.
type noPreallocFS struct{ vfs.FS }

func (fs noPreallocFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return noPrealloc(fs.FS.Create(name, c))
}

func (fs noPreallocFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return noPrealloc(fs.FS.ReuseForWrite(oldname, newname, c))
}

func (fs noPreallocFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	return noPrealloc(fs.FS.OpenReadWrite(name, c, opts...))
}

type noPreallocFile struct{ vfs.File }

func (noPreallocFile) Preallocate(offset, length int64) error { return nil }

func noPrealloc(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return noPreallocFile{f}, nil
}
