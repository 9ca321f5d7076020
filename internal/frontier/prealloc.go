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
// in /dev/shm or a tmpfs /tmp. A store in tmpfs skips it.

// storeFS returns the file system the store in dir runs on: fs, or when fs
// is nil the operating system's, without preallocation in tmpfs, and
// written to by raw system calls on a local file system (package rawio:
// the store's log is written after every page, and a plain write woke the
// runtime's monitor each time).
func storeFS(dir string, fs vfs.FS) vfs.FS {
	if fs != nil {
		return fs
	}
	noPrealloc := onTmpfs(dir) || onTmpfs(filepath.Dir(dir))
	raw := rawio.Raw() && (rawio.LocalDir(dir) || rawio.LocalDir(filepath.Dir(dir)))
	if !noPrealloc && !raw {
		return vfs.Default
	}
	return storeFiles{vfs.Default, noPrealloc, raw}
}

// storeFiles is a file system whose files written to ignore Preallocate
// (noPrealloc) or write by raw system calls (raw).
type storeFiles struct {
	vfs.FS
	noPrealloc, raw bool
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
	return storeFile{f, fs.noPrealloc, raw}, nil
}

// storeFile is a file of storeFiles.
type storeFile struct {
	vfs.File
	noPrealloc, raw bool
}

func (f storeFile) Preallocate(offset, length int64) error {
	if f.noPrealloc {
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
