// Package rawio reads and writes TCP sockets by system calls the Go
// scheduler is not told of, on Linux, where such a call cannot block.
//
// Why: the runtime's monitor thread (sysmon) sleeps deeply while every P
// is idle, and a goroutine that enters a system call wakes it. Woken so,
// it polls every 20 µs for the next millisecond, each poll a sleep and a
// wake-up of its thread. A polite crawl of one host is idle between most
// requests, so every request woke it and paid for the polling. Package
// fetch's HTTP/1.1 client, which carries the http:// exchanges, wraps its
// connections here ([NewConn]), so that their requests are written and
// their responses read as the runtime's own raw calls are. https://
// exchanges go through net/http's Transport and crypto/tls, whose
// connections are not wrapped: their system calls are the net package's.
//
// A raw call keeps its P for as long as it lasts, so it is only made
// where it returns at once: on sockets in non-blocking mode, which the
// net package's connections are (a read or write that would block
// returns EAGAIN, and the goroutine waits in the poller as net.Conn's
// methods do). Files are never written here: a write to a local file can
// block (dirty-page throttling, writeback, a cgroup's I/O limit, a frozen
// file system), and while it did the P would be held, every
// stop-the-world would wait for it, and with one P the whole process
// would stop. They go through package os.
//
// [Disable] switches the raw calls off (everything goes through package
// net; the command does so when GENTLECRAWL_NO_RAWIO is set), and on other
// systems they are never made. The package reads no environment itself.
//
// Built with the race detector, the same calls go through package syscall
// (sys_race.go), whose annotations tell the detector that bytes written to
// a descriptor happen before they are read; the raw calls are tested
// without it (scripts/test).
package rawio

import (
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
)

// Raw reports whether raw calls are made at all (Linux, and not switched
// off with Disable).
func Raw() bool { return rawSupported && !disabled.Load() }

// Disable switches the raw calls off for the rest of the process: new
// connections are left to package net, and Raw reports false. Call it
// before any connection is made, as a program's main does; a connection
// wrapped before it keeps its raw calls.
func Disable() { disabled.Store(true) }

// Conn is a TCP connection whose Read and Write are raw system calls on
// its non-blocking socket, waiting in the runtime's poller as net.Conn's
// do, with the same deadlines. Its other methods are the connection's.
type Conn struct {
	net.Conn
	rc syscall.RawConn
}

// NewConn returns c read and written by raw system calls when it is a
// TCP connection (else c itself).
func NewConn(c net.Conn) net.Conn {
	if !Raw() {
		return c
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	return &Conn{Conn: c, rc: rc}
}

// Read reads into p as net.Conn's Read does: it waits until some bytes
// come, the peer closes (io.EOF) or a deadline passes.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := c.rc.Read(func(fd uintptr) bool {
		for {
			n, errno = rawRead(fd, p)
			if errno != syscall.EINTR {
				return errno != syscall.EAGAIN
			}
		}
	})
	switch {
	case err != nil:
		return 0, c.opError("read", err)
	case errno != 0:
		return 0, c.opError("read", os.NewSyscallError("read", errno))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write writes p whole as net.Conn's Write does, waiting while the
// socket's buffer is full.
func (c *Conn) Write(p []byte) (int, error) {
	n := 0
	var errno syscall.Errno
	err := c.rc.Write(func(fd uintptr) bool {
		for n < len(p) {
			m, e := rawWrite(fd, p[n:])
			switch e {
			case 0:
				n += m
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // wait until writable
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return n, c.opError("write", err)
	case errno != 0:
		return n, c.opError("write", os.NewSyscallError("write", errno))
	}
	return n, nil
}

// SyscallConn returns the connection's raw descriptor access, as
// net.TCPConn's does.
func (c *Conn) SyscallConn() (syscall.RawConn, error) { return c.rc, nil }

// opError wraps err as the net package does its connections' errors, so
// that callers classify them the same way (timeouts, resets, closed).
func (c *Conn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

// disabled is set by Disable: raw calls are switched off (for a
// comparison, or a system where they misbehave), and everything goes
// through package net.
var disabled atomic.Bool
