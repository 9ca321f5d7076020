//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package fetch

import (
	"net"
	"syscall"
)

// peekOpen reports whether conn, idle, is still open with nothing to
// read: a peek that does not wait finds no data and no end of stream.
// A connection that cannot be asked is taken to be open.
func peekOpen(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open := true
	err = rc.Read(func(fd uintptr) bool {
		n, err := peekFD(fd)
		switch {
		case err == syscall.EAGAIN || err == syscall.EINTR:
			// Nothing to read (or not asked): open.
		case n == 0 || err != nil:
			open = false // the end of the stream, or an error such as a reset
		default:
			open = false // bytes nobody asked for
		}
		return true // never wait for the descriptor
	})
	return err == nil && open
}
