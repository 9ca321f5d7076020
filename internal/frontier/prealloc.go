package frontier

import (
	"path/filepath"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/gentlecrawl/gentlecrawl/internal/rawio"
)

// Pebble preallocates each write-ahead log at 110 % of the memtable size
// (35 MiB here), which on a disk keeps the log's extents in place and its
// fsyncs free of metadata. In tmpfs there is no disk: preallocating
// allocates and zeroes the memory, 12 ms of CPU and 35 MiB of RAM for each
// log, a twentieth of the CPU of a crawl of a thousand pages with its job
// in /dev/shm or a tmpfs /tmp. A store in tmpfs skips it, and its fsyncs
// too: tmpfs's fsync does nothing, but as a blocking system call every
// 10 ms it woke the runtime's monitor thread (see package rawio), 40 % of
// a small crawl's context switches.

// storeFS returns the file system the store in dir runs on: fs, or when fs
// is nil the operating system's, without preallocation or fsyncs in tmpfs,
// and written to by raw system calls on a local file system (package
// rawio: the store's log is written after every page, and a plain write
// woke the runtime's monitor each time).
func storeFS(dir string, fs vfs.FS) vfs.FS {
	if fs != nil {
		return fs
	}
	tmpfs := onTmpfs(dir) || onTmpfs(filepath.Dir(dir))
	raw := rawio.Raw() && (rawio.LocalDir(dir) || rawio.LocalDir(filepath.Dir(dir)))
	if !tmpfs && !raw {
		return vfs.Default
	}
	return storeFiles{vfs.Default, tmpfs, raw}
}

// storeFiles is a file system whose files written to skip Preallocate and
// the fsyncs in tmpfs, and write by raw system calls when raw.
type storeFiles struct {
	vfs.FS
	tmpfs, raw bool
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
	raw := fs.raw && f.Fd() != vfs.InvalidFd
	return storeFile{f, fs.tmpfs, raw}, nil
}

// storeFile is a file of storeFiles.
type storeFile struct {
	vfs.File
	tmpfs, raw bool
}

func (f storeFile) Preallocate(offset, length int64) error {
	if f.tmpfs {
		return nil
	}
	return f.File.Preallocate(offset, length)
}

func (f storeFile) Write(p []byte) (int, error) {
	if f.raw {
		return rawio.WriteFD(f.Fd(), p)
	}
	return f.File.Write(p)
}

// Sync, SyncData and SyncTo do nothing in tmpfs, whose fsync does
// nothing: what is written is in memory, which is all tmpfs has.
func (f storeFile) Sync() error {
	if f.tmpfs {
		return nil
	}
	return f.File.Sync()
}

func (f storeFile) SyncData() error {
	if f.tmpfs {
		return nil
	}
	return f.File.SyncData()
}

func (f storeFile) SyncTo(length int64) (fullSync bool, err error) {
	if f.tmpfs {
		return true, nil
	}
	return f.File.SyncTo(length)
}
