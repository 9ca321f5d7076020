//go:build linux

package fetch

import (
	"syscall"
	"unsafe"

	"github.com/gentlecrawl/gentlecrawl/internal/rawio"
)

// peekFD peeks at one byte of the socket fd without waiting. Where package
// rawio makes raw calls (Linux, unless rawio.Disable was called) it is
// one too: the socket is non-blocking and MSG_DONTWAIT makes sure the
// call returns at once, and as the first system call of most requests a
// plain one woke the runtime's monitor. Otherwise it is package syscall's.
func peekFD(fd uintptr) (int, error) {
	var b [1]byte
	if !rawio.Raw() {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return n, err
	}
	r, _, errno := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1, syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
	if errno != 0 {
		return int(r), errno
	}
	return int(r), nil
}
