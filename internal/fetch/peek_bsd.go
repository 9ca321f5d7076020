//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package fetch

import "syscall"

// peekFD peeks at one byte of the socket fd without waiting, by package
// syscall's call (raw calls are made on Linux only: on OpenBSD a raw
// system call is refused).
func peekFD(fd uintptr) (int, error) {
	var b [1]byte
	n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return n, err
}
