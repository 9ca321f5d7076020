package fetch

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// aliveServer is an HTTP/1.1 server written on raw connections, so a test
// says exactly what goes on the wire and connections are kept alive
// (rawServer closes each after one request): handle answers each request read on
// a connection (conn is its index), and returns false to stop reading it.
// On https it speaks HTTP/1.1 over TLS (newAliveServerOn).
type aliveServer struct {
	ln     net.Listener
	scheme string
	handle func(conn int, req *http.Request, raw []byte, w net.Conn) bool

	ended chan int // the index of each connection the client ended

	mu    sync.Mutex
	conns int      // connections accepted
	reqs  []string // "conn request-URI", in arrival order
	heads [][]byte // the request heads as they arrived
	wg    sync.WaitGroup
}

func newAliveServer(t *testing.T, handle func(conn int, req *http.Request, raw []byte, w net.Conn) bool) *aliveServer {
	t.Helper()
	return newAliveServerOn(t, "http", handle)
}

// newAliveServerOn is newAliveServer for scheme "http" or "https".
func newAliveServerOn(t *testing.T, scheme string, handle func(conn int, req *http.Request, raw []byte, w net.Conn) bool) *aliveServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if scheme == "https" {
		ln = tls.NewListener(ln, serverTLS("http/1.1"))
	}
	s := &aliveServer{ln: ln, scheme: scheme, handle: handle, ended: make(chan int, 64)}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			id := s.conns
			s.conns++
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				rec := &recordingReader{r: c}
				br := bufio.NewReader(rec)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						select {
						case s.ended <- id:
						default:
						}
						return
					}
					// The head as read: what the recorder saw, less what
					// the buffer holds beyond it.
					head := rec.take(br.Buffered())
					s.mu.Lock()
					s.reqs = append(s.reqs, fmt.Sprintf("%d %s", id, req.RequestURI))
					s.heads = append(s.heads, head)
					s.mu.Unlock()
					if !s.handle(id, req, head, c) {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
	})
	return s
}

func (s *aliveServer) url(path string) *url.URL {
	u, _ := url.Parse(s.scheme + "://" + s.ln.Addr().String() + path)
	return u
}

func (s *aliveServer) seen() (conns int, reqs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns, append([]string(nil), s.reqs...)
}

// recordingReader keeps what was read through it until take.
type recordingReader struct {
	r   io.Reader
	buf []byte
}

func (r *recordingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.buf = append(r.buf, p[:n]...)
	return n, err
}

// take returns what was read less the last ahead bytes, which stay.
func (r *recordingReader) take(ahead int) []byte {
	n := len(r.buf) - ahead
	out := append([]byte(nil), r.buf[:n]...)
	r.buf = append(r.buf[:0], r.buf[n:]...)
	return out
}

func okResponse(w io.Writer, body string, extra string) {
	fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n%s\r\n%s", len(body), extra, body)
}

func newTestClient(t *testing.T) *Client {
	t.Helper()
	c, err := New(Config{UserAgent: testUA, AllowPrivateNetworks: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func mustDo(t *testing.T, c *Client, u *url.URL) *Result {
	t.Helper()
	res, err := c.Do(context.Background(), Request{URL: u})
	if err != nil {
		t.Fatalf("Do(%s): %v", u, err)
	}
	return res
}

// One connection carries every request of a run, and what goes out is
// byte for byte what Result.RequestRaw records.
func TestH1KeepAliveAndRawRequest(t *testing.T) {
	s := newAliveServer(t, func(_ int, req *http.Request, _ []byte, w net.Conn) bool {
		okResponse(w, "<p>"+req.URL.Path+"</p>", "")
		return true
	})
	c := newTestClient(t)
	var raws [][]byte
	for i := range 20 {
		res := mustDo(t, c, s.url(fmt.Sprintf("/p%d?q=%d", i, i)))
		if res.Status != 200 || string(res.Body) != fmt.Sprintf("<p>/p%d</p>", i) {
			t.Fatalf("request %d: status %d body %q", i, res.Status, res.Body)
		}
		if i > 0 && !res.Reused {
			t.Errorf("request %d: not on a reused connection", i)
		}
		raws = append(raws, res.RequestRaw)
	}
	conns, _ := s.seen()
	if conns != 1 {
		t.Errorf("%d connections for 20 sequential requests, want 1", conns)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, h := range s.heads {
		if !bytes.Equal(h, raws[i]) {
			t.Errorf("request %d: sent\n%q\nrecorded\n%q", i, h, raws[i])
		}
	}
}

// A kept-alive connection the server closed while it was idle is not
// used: the next request goes out once, on a new connection, and nothing
// is sent twice.
func TestH1ServerClosedIdle(t *testing.T) {
	s := newAliveServer(t, func(_ int, _ *http.Request, _ []byte, w net.Conn) bool {
		okResponse(w, "one", "")
		return false // close after one response, without saying so
	})
	c := newTestClient(t)
	for i := range 5 {
		mustDo(t, c, s.url(fmt.Sprintf("/%d", i)))
		time.Sleep(20 * time.Millisecond) // the FIN arrives
	}
	conns, reqs := s.seen()
	if conns != 5 || len(reqs) != 5 {
		t.Errorf("%d connections, requests %q; want 5 and 5", conns, reqs)
	}
	if n := c.Stats()["retried"]; n != 0 {
		t.Errorf("retried = %d; the closed connections should have been seen before use", n)
	}
}

// Connection: close, an HTTP/1.0 answer and a body that runs to the end of
// the connection each end their connection's use.
func TestH1NoReuse(t *testing.T) {
	for _, tc := range []struct {
		name, resp string
	}{
		{"connection close", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"},
		{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"},
		{"until close", "HTTP/1.1 200 OK\r\n\r\nok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newAliveServer(t, func(_ int, _ *http.Request, _ []byte, w net.Conn) bool {
				io.WriteString(w, tc.resp)
				return false
			})
			c := newTestClient(t)
			for i := range 3 {
				res := mustDo(t, c, s.url(fmt.Sprintf("/%d", i)))
				if string(res.Body) != "ok" || res.Reused {
					t.Fatalf("request %d: body %q, reused %v", i, res.Body, res.Reused)
				}
			}
			if conns, _ := s.seen(); conns != 3 {
				t.Errorf("%d connections, want 3", conns)
			}
		})
	}
}

// Bytes beyond the announced Content-Length are not taken for the next
// response: the connection is not used again.
func TestH1UnsolicitedBytes(t *testing.T) {
	s := newAliveServer(t, func(_ int, _ *http.Request, _ []byte, w net.Conn) bool {
		io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
		return true
	})
	c := newTestClient(t)
	for i := range 3 {
		res := mustDo(t, c, s.url(fmt.Sprintf("/%d", i)))
		if res.Status != 200 || string(res.Body) != "ok" {
			t.Fatalf("request %d: %d %q", i, res.Status, res.Body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if conns, _ := s.seen(); conns != 3 {
		t.Errorf("%d connections, want 3", conns)
	}
}

// A body the crawler stops reading (here at the size limit) closes its
// connection instead of being read to its end.
func TestH1UnreadBodyClosesConnection(t *testing.T) {
	// The body is far larger than loopback's socket buffers can hold
	// (a few MiB each way, autotuned): a body of 4 MiB once fit whole in
	// them before the client's close reached the server.
	chunk := []byte(strings.Repeat("x", 1<<20))
	const chunks = 256
	sent := make(chan error, 4)
	s := newAliveServer(t, func(_ int, req *http.Request, _ []byte, w net.Conn) bool {
		if req.URL.Path == "/big" {
			_, err := fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Type: application/x-thing\r\nContent-Length: %d\r\n\r\n", chunks*len(chunk))
			for i := 0; i < chunks && err == nil; i++ {
				_, err = w.Write(chunk)
			}
			sent <- err
			return err == nil
		}
		okResponse(w, "small", "")
		return true
	})
	c, err := New(Config{UserAgent: testUA, AllowPrivateNetworks: true, MaxRawSize: 64 << 10, MaxBodySize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res := mustDo(t, c, s.url("/big"))
	if res.Truncated != TruncatedLength || len(res.Body) != 64<<10 {
		t.Fatalf("the body was not cut at the limit: truncated %q, %d bytes", res.Truncated, len(res.Body))
	}
	select {
	case err := <-sent:
		if err == nil {
			t.Errorf("the server sent all of a body the client dropped")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the server is still sending a body the client dropped")
	}
	res = mustDo(t, c, s.url("/small"))
	if string(res.Body) != "small" || res.Reused {
		t.Errorf("after a dropped body: body %q, reused %v; want a new connection", res.Body, res.Reused)
	}
}

// Informational answers before the final one are read past, up to a limit.
func TestH1Informational(t *testing.T) {
	for _, n := range []int{1, max1xx, max1xx + 1} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := newAliveServer(t, func(_ int, _ *http.Request, _ []byte, w net.Conn) bool {
				for range n {
					io.WriteString(w, "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n")
				}
				okResponse(w, "final", "")
				return true
			})
			c := newTestClient(t)
			res, err := c.Do(context.Background(), Request{URL: s.url("/")})
			if n <= max1xx {
				if err != nil || res.Status != 200 || string(res.Body) != "final" {
					t.Fatalf("Do = %v, %v", res, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "1xx") {
				t.Fatalf("Do after %d 1xx answers = %v, %v; want an error", n, res, err)
			}
		})
	}
}

// A cancelled exchange stops at once, mid-body, and its connection is not
// used again.
func TestH1CancelMidBody(t *testing.T) {
	s := newAliveServer(t, func(_ int, req *http.Request, _ []byte, w net.Conn) bool {
		if req.URL.Path == "/slow" {
			io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 1000\r\n\r\nstart")
			time.Sleep(2 * time.Second)
			return false
		}
		okResponse(w, "fast", "")
		return true
	})
	c := newTestClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err := c.Do(ctx, Request{URL: s.url("/slow")})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Do cancelled mid-body = %v; want context.Canceled", err)
	}
	res := mustDo(t, c, s.url("/fast"))
	if res.Reused || string(res.Body) != "fast" {
		t.Errorf("after a cancel: body %q reused %v; want a new connection", res.Body, res.Reused)
	}
}

// Idle connections are closed after the idle timeout, and after Close no
// request is made.
func TestH1IdleTimeoutAndClose(t *testing.T) {
	s := newAliveServer(t, func(_ int, _ *http.Request, _ []byte, w net.Conn) bool {
		okResponse(w, "ok", "")
		return true
	})
	c := newTestClient(t)
	c.h1.idleTimeout = 50 * time.Millisecond
	mustDo(t, c, s.url("/"))
	select {
	case <-s.ended:
	case <-time.After(20 * time.Second):
		t.Fatal("an idle connection was not closed after the idle timeout")
	}
	c.h1.mu.Lock()
	n := c.h1.mu.n
	c.h1.mu.Unlock()
	if n != 0 {
		t.Errorf("%d idle connections counted after the sweep", n)
	}
	c.Close()
	if _, err := c.Do(context.Background(), Request{URL: s.url("/")}); err == nil {
		t.Error("Do after Close succeeded")
	}
}

// At most maxIdlePerHost connections to one address wait for reuse.
func TestH1IdleLimit(t *testing.T) {
	release := make(chan struct{})
	s := newAliveServer(t, func(_ int, _ *http.Request, _ []byte, w net.Conn) bool {
		<-release
		okResponse(w, "ok", "")
		return true
	})
	c := newTestClient(t)
	c.h1.maxIdlePerHost = 3
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() { mustDo(t, c, s.url(fmt.Sprintf("/%d", i))) })
	}
	for {
		if conns, _ := s.seen(); conns == 6 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	wg.Wait()
	c.h1.mu.Lock()
	defer c.h1.mu.Unlock()
	if c.h1.mu.n != 3 {
		t.Errorf("%d idle connections, want 3", c.h1.mu.n)
	}
}

// At most maxIdle connections wait for reuse in all, whatever the hosts.
func TestH1IdleLimitInAll(t *testing.T) {
	c := newTestClient(t)
	c.h1.maxIdle = 2
	for range 4 {
		s := newAliveServer(t, func(_ int, _ *http.Request, _ []byte, w net.Conn) bool {
			okResponse(w, "ok", "")
			return true
		})
		mustDo(t, c, s.url("/"))
	}
	c.h1.mu.Lock()
	n, hosts := c.h1.mu.n, len(c.h1.mu.idle)
	c.h1.mu.Unlock()
	if n != 2 || hosts != 2 {
		t.Errorf("%d idle connections to %d hosts after 4 hosts, want 2 and 2", n, hosts)
	}
	// Before the servers' cleanup, which waits for their connections.
	c.h1.closeIdle(false)
}
