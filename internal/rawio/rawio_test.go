//go:build linux

package rawio

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// pair returns the two ends of a TCP connection on loopback: the client's
// through NewConn, and the server's as the net package gives it.
func pair(t *testing.T) (client net.Conn, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := <-accepted
	if s == nil {
		t.Fatal("accept failed")
	}
	client = NewConn(c)
	t.Cleanup(func() { client.Close(); s.Close() })
	return client, s
}

func TestConnIsRaw(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("raw calls on Linux only")
	}
	c, _ := pair(t)
	if _, ok := c.(*Conn); !ok {
		t.Fatalf("NewConn of a TCP connection is a %T, want *Conn", c)
	}
}

// TestConnCarriesBytes sends random bytes both ways, in more than the
// socket buffers hold, so that writes wait for room and reads for data.
func TestConnCarriesBytes(t *testing.T) {
	c, s := pair(t)
	r := rand.New(rand.NewPCG(1, 2))
	big := make([]byte, 8<<20)
	for i := range big {
		big[i] = byte(r.Uint32())
	}
	// Client to server: one Write larger than the buffers.
	done := make(chan error, 1)
	go func() {
		n, err := c.Write(big)
		if err == nil && n != len(big) {
			err = errors.New("short write without an error")
		}
		done <- err
	}()
	s.SetReadDeadline(time.Now().Add(20 * time.Second)) // a short write fails, not hangs
	got, err := io.ReadAll(io.LimitReader(s, int64(len(big))))
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("server read %d bytes (err %v), equal %v", len(got), err, bytes.Equal(got, big))
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s.SetReadDeadline(time.Time{})
	// Server to client, read in small pieces.
	go func() {
		_, err := s.Write(big)
		done <- err
	}()
	var back bytes.Buffer
	buf := make([]byte, 1000)
	for back.Len() < len(big) {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("after %d bytes: %v", back.Len(), err)
		}
		back.Write(buf[:n])
	}
	if !bytes.Equal(back.Bytes(), big) {
		t.Fatal("client read other bytes than the server wrote")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n, err := c.Read(nil); n != 0 || err != nil {
		t.Fatalf("Read(nil) = %d, %v", n, err)
	}
}

// TestConnEnds: the peer's close is io.EOF, a deadline a timeout as the
// net package reports it, a reset a *net.OpError over a syscall error.
func TestConnEnds(t *testing.T) {
	c, s := pair(t)
	// A deadline passed, as the fetcher's context sets on cancel.
	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	start := time.Now()
	_, err := c.Read(make([]byte, 10))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v (%T), want a timeout", err, err)
	}
	if time.Since(start) < 15*time.Millisecond {
		t.Fatalf("read returned after %v, before its deadline", time.Since(start))
	}
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "read" || oe.Addr == nil {
		t.Fatalf("read past the deadline: %#v, want a *net.OpError with the address", err)
	}
	c.SetReadDeadline(time.Time{})

	// Bytes then the peer's close: the bytes, then io.EOF.
	s.Write([]byte("bye"))
	s.Close()
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "bye" {
		t.Fatalf("ReadAll = %q, %v; want \"bye\" and no error (io.EOF)", got, err)
	}
	if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("read after the end = %d, %v; want io.EOF", n, err)
	}

	// A reset: the server closes with unread bytes (SO_LINGER 0).
	c2, s2 := pair(t)
	s2.(*net.TCPConn).SetLinger(0)
	s2.Close()
	time.Sleep(20 * time.Millisecond)
	_, err = c2.Read(make([]byte, 10))
	if !errors.As(err, &oe) || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read of a reset connection: %v, want ECONNRESET in a *net.OpError", err)
	}
	// Writing to it fails too (EPIPE or ECONNRESET), with what was written.
	for i := 0; ; i++ {
		if _, err := c2.Write([]byte("x")); err != nil {
			if !errors.As(err, &oe) || oe.Op != "write" {
				t.Fatalf("write to a reset connection: %v, want a *net.OpError", err)
			}
			break
		}
		if i == 100 {
			t.Fatal("writes to a reset connection never failed")
		}
	}

	// Closed on our side: net.ErrClosed, as net.Conn's.
	c3, _ := pair(t)
	c3.Close()
	if _, err := c3.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read of a closed connection: %v, want net.ErrClosed", err)
	}
	if _, err := c3.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write to a closed connection: %v, want net.ErrClosed", err)
	}
}

// TestConnWriteDeadline: a write that waits for room ends at its
// deadline, with the bytes written so far (none, at times, when the
// kernel is short of socket memory).
func TestConnWriteDeadline(t *testing.T) {
	c, _ := pair(t) // the server never reads
	c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	n, err := c.Write(make([]byte, 64<<20))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write to a full socket: %d bytes, %v; want a timeout", n, err)
	}
	if n < 0 || n >= 64<<20 {
		t.Fatalf("write to a full socket reported %d bytes written", n)
	}
}

func TestNewConnOfOtherConns(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if got := NewConn(a); got != a {
		t.Fatalf("NewConn of a pipe = %T, want the pipe itself", got)
	}
}

// TestDisable: once raw calls are switched off, Raw says so and a new
// connection is the net package's own, and it still carries bytes.
func TestDisable(t *testing.T) {
	t.Cleanup(func() { disabled.Store(false) })
	Disable()
	if Raw() {
		t.Fatal("Raw() after Disable")
	}
	c, s := pair(t)
	if _, ok := c.(*Conn); ok {
		t.Fatal("NewConn after Disable wrapped the connection")
	}
	if _, err := c.Write([]byte("hi")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 2)
	if _, err := io.ReadFull(s, b); err != nil || string(b) != "hi" {
		t.Fatalf("read %q, %v", b, err)
	}
}
