package rawio

import (
	"os"
	"syscall"
)

const rawSupported = true

// localFS are the file systems whose writes land in the page cache and
// return without waiting on a network or a user-space server: tmpfs and
// the common disk file systems (and overlayfs, a container's root).
var localFS = map[int64]bool{
	0x01021994: true, // tmpfs
	0xEF53:     true, // ext2, ext3, ext4
	0x58465342: true, // xfs
	0x9123683E: true, // btrfs
	0x794c7630: true, // overlayfs
	0xF2F52010: true, // f2fs
	0x2fc12fc1: true, // zfs
}

// Local reports whether f is on a local file system (localFS), where a
// write to the page cache does not block for long. On NFS, FUSE and the
// like a write can wait on a server: those are written through os.File,
// so that the runtime can hand the P to other goroutines meanwhile.
func Local(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var st syscall.Statfs_t
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.Fstatfs(int(fd), &st) }); err != nil || serr != nil {
		return false
	}
	return localFS[int64(st.Type)]
}

// LocalDir reports whether the directory dir is on a local file system,
// as Local does for a file.
func LocalDir(dir string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(dir, &st) == nil && localFS[int64(st.Type)]
}
