// Package rawio reads and writes sockets and files by system calls the Go
// scheduler is not told of, where such a call cannot block for long.
//
// Why: the runtime's monitor thread (sysmon) sleeps deeply while every P
// is idle, and a goroutine that enters a system call wakes it. Woken so,
// it polls every 20 µs for the next millisecond, each poll a sleep and a
// wake-up of its thread. A polite crawl of one host is idle between most
// requests, so every page woke it and paid for the polling: on the
// two-core VMs gentlecrawl is measured on, a crawl of postgresql-doc's
// 1,170 small pages made 6,000 context switches, and 1,500 with the
// wake-up's reset taken out of the runtime, for 0.69 s of CPU against 0.48
// (issue #18). The few system calls a page makes (the request written,
// the response read, the WARC record, the request log line, the store's
// log) are made here instead, as the runtime's own raw calls are.
//
// A raw call keeps its P for as long as it lasts, so it is only used
// where it returns at once: on sockets in non-blocking mode (a read or
// write that would block returns EAGAIN, and the goroutine waits in the
// poller as net.Conn's methods do), and for writes to files on local file
// systems, whose writes land in the page cache (see Local). Anything else
// goes through the os and net packages as usual.
//
// Built with the race detector, the same calls go through package syscall
// (sys_race.go), whose annotations tell the detector that bytes written to
// a descriptor happen before they are read; the raw calls are tested
// without it (scripts/test).
package rawio

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
)

// File writes to an open file, by raw write(2) calls when the file is on
// a local file system.
type File struct {
	f  *os.File
	rc syscall.RawConn // nil: write through f
}

// NewFile returns f's writer. f must stay open while the writer is used.
func NewFile(f *os.File) *File {
	w := &File{f: f}
	if raw && Local(f) {
		if rc, err := f.SyscallConn(); err == nil {
			w.rc = rc
		}
	}
	return w
}

// Raw reports whether w writes by raw system calls.
func (w *File) Raw() bool { return w.rc != nil }

// Write writes p whole, as os.File's Write does: it returns fewer bytes
// than len(p) only with an error.
func (w *File) Write(p []byte) (int, error) {
	if w.rc == nil {
		return w.f.Write(p)
	}
	var n int
	var errno syscall.Errno
	err := w.rc.Write(func(fd uintptr) bool {
		n, errno = writeAll(fd, p)
		return true // a regular file never asks to wait
	})
	if err == nil && errno != 0 {
		err = &os.PathError{Op: "write", Path: w.f.Name(), Err: errno}
	}
	return n, err
}

// writeAll writes p to fd by raw write(2) calls until it is all written
// or a call fails (EINTR is tried again).
func writeAll(fd uintptr, p []byte) (int, syscall.Errno) {
	n := 0
	for n < len(p) {
		m, errno := rawWrite(fd, p[n:])
		switch {
		case errno == syscall.EINTR:
			continue
		case errno != 0:
			return n, errno
		case m == 0:
			return n, syscall.EIO // write(2) wrote nothing and said nothing
		}
		n += m
	}
	return n, 0
}

// WriteFD writes p whole to the descriptor fd of a file on a local file
// system (see Local, LocalDir) by raw write(2) calls. The caller keeps the
// file open meanwhile; on systems without raw calls it returns an error
// wrapping errors.ErrUnsupported.
func WriteFD(fd uintptr, p []byte) (int, error) {
	if !raw {
		return 0, fmt.Errorf("rawio: write: %w", errors.ErrUnsupported)
	}
	n, errno := writeAll(fd, p)
	if errno != 0 {
		return n, os.NewSyscallError("write", errno)
	}
	return n, nil
}

// Raw reports whether raw calls are made at all (Linux, and not switched
// off with GENTLECRAWL_NO_RAWIO).
func Raw() bool { return raw }

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
	if !raw {
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

// raw is false where raw calls are not made (other systems, or switched
// off for a comparison): then everything goes through os and net.
var raw = rawSupported && os.Getenv("GENTLECRAWL_NO_RAWIO") == ""
