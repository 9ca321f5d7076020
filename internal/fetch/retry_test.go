package fetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// The one retry: a GET on a kept-alive connection that fails
// before any byte of the answer is sent once more on a new connection, on
// http:// (h1) and https:// (the Transport, held to the same rule by the
// trace) alike; never a third time, never after a byte of the answer,
// never when the connection was new or the context has ended.

// keptServer is an aliveServer whose handle is told whether an earlier
// request came on the request's connection (kept), and which counts the
// times each path was read.
type keptServer struct {
	*aliveServer
	mu   sync.Mutex
	reqs map[int]int // requests read, by connection
}

func newKeptServer(t *testing.T, scheme string, handle func(path string, kept bool, w net.Conn) bool) *keptServer {
	t.Helper()
	s := &keptServer{reqs: map[int]int{}}
	s.aliveServer = newAliveServerOn(t, scheme, func(conn int, req *http.Request, _ []byte, w net.Conn) bool {
		s.mu.Lock()
		kept := s.reqs[conn] > 0
		s.reqs[conn]++
		s.mu.Unlock()
		return handle(req.URL.Path, kept, w)
	})
	return s
}

// sightings returns the connections path was read on, in order.
func (s *keptServer) sightings(path string) []int {
	_, reqs := s.seen()
	var on []int
	for _, r := range reqs {
		var conn int
		var uri string
		fmt.Sscanf(r, "%d %s", &conn, &uri)
		if uri == path {
			on = append(on, conn)
		}
	}
	return on
}

// warm leaves n kept-alive connections to s idle in c's pool: n requests
// at once, answered once all n have come.
func warm(t *testing.T, c *Client, s *keptServer, n int, arrived *sync.WaitGroup) {
	t.Helper()
	arrived.Add(n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			res, err := c.Do(context.Background(), Request{URL: s.url(fmt.Sprintf("/warm/%d", i))})
			if err != nil || res.Status != 200 || res.Retried {
				t.Errorf("warm-up request: %v, %+v", err, res)
			}
		})
	}
	wg.Wait()
}

// warmHandle answers /warm/… once every warm-up request of a round has
// come (arrived), so that each has its own connection.
func warmHandle(arrived *sync.WaitGroup, w net.Conn) bool {
	arrived.Done()
	done := make(chan struct{})
	go func() { arrived.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
	okResponse(w, "warm", "")
	return true
}

// A server that closes a kept-alive connection right after reading a
// request, without a word, sees the request once more, on a new
// connection, and the Result says Retried.
func TestRetryDroppedKeptAlive(t *testing.T) {
	eachScheme(t, func(t *testing.T, scheme string) {
		var arrived sync.WaitGroup
		var dropped atomic.Bool
		s := newKeptServer(t, scheme, func(path string, kept bool, w net.Conn) bool {
			switch {
			case strings.HasPrefix(path, "/warm/"):
				return warmHandle(&arrived, w)
			case path == "/drop" && kept && dropped.CompareAndSwap(false, true):
				return false // read, and the connection closed
			}
			okResponse(w, "ok", "")
			return true
		})
		c := newClientOn(t, Config{AllowPrivateNetworks: true})
		warm(t, c, s, 1, &arrived)
		res, err := c.Do(context.Background(), Request{URL: s.url("/drop")})
		if err != nil || res.Status != 200 || string(res.Body) != "ok" {
			t.Fatalf("Do = %+v, %v; want the answer to the second request", res, err)
		}
		on := s.sightings("/drop")
		if len(on) != 2 || on[0] != 0 || on[1] == 0 {
			t.Errorf("the server read /drop on connections %v; want twice: on the kept-alive one (0), then a new one", on)
		}
		if !res.Retried || res.Reused {
			t.Errorf("Retried %v Reused %v; want true, false (the new connection)", res.Retried, res.Reused)
		}
		wantStat(t, c, "retried", 1)
	})
}

// A server that closes every connection after reading the request sees it
// twice, never more, and Do fails; with several kept-alive connections in
// the pool too (net/http's Transport alone would try each of them).
func TestRetryEveryConnectionDropped(t *testing.T) {
	for _, idle := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d idle", idle), func(t *testing.T) {
			eachScheme(t, func(t *testing.T, scheme string) {
				var arrived sync.WaitGroup
				s := newKeptServer(t, scheme, func(path string, kept bool, w net.Conn) bool {
					if strings.HasPrefix(path, "/warm/") {
						return warmHandle(&arrived, w)
					}
					return false
				})
				c := newClientOn(t, Config{AllowPrivateNetworks: true})
				warm(t, c, s, idle, &arrived)
				res, err := c.Do(context.Background(), Request{URL: s.url("/always")})
				var fe *Error
				if res != nil || !errors.As(err, &fe) || fe.Op != "get" || !fe.Retried {
					t.Fatalf("Do = %+v, %v; want an *Error{Op: get, Retried: true}", res, err)
				}
				on := s.sightings("/always")
				if len(on) != 2 || on[0] >= idle || on[1] < idle {
					t.Errorf("the server read /always on connections %v; want twice: on a kept-alive one (< %d), then a new one", on, idle)
				}
				wantStat(t, c, "retried", 1)
			})
		})
	}
}

// No retry once a byte of the answer has come, when the connection was
// new, or when the context has ended.
func TestRetryNot(t *testing.T) {
	eachScheme(t, func(t *testing.T, scheme string) {
		var arrived sync.WaitGroup
		var cancel atomic.Pointer[context.CancelFunc]
		s := newKeptServer(t, scheme, func(path string, kept bool, w net.Conn) bool {
			switch path {
			case "/byte":
				w.Write([]byte("H")) // of "HTTP/1.1 200 OK"
			case "/cancel":
				(*cancel.Load())() // the crawl stops as the server drops the connection
			case "/drop":
			default:
				return warmHandle(&arrived, w)
			}
			return false
		})
		for _, tc := range []struct {
			name, path string
			kept       bool
		}{
			{"a byte of the answer", "/byte", true},
			{"a new connection", "/drop", false},
			{"the context ended", "/cancel", true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := newClientOn(t, Config{AllowPrivateNetworks: true})
				if tc.kept {
					warm(t, c, s, 1, &arrived)
				}
				before := len(s.sightings(tc.path))
				ctx, stop := context.WithCancel(context.Background())
				defer stop()
				cancel.Store(&stop)
				res, err := c.Do(ctx, Request{URL: s.url(tc.path)})
				var fe *Error
				if res != nil || !errors.As(err, &fe) || fe.Retried {
					t.Fatalf("Do = %+v, %v; want an *Error, not Retried", res, err)
				}
				if tc.path == "/cancel" && !errors.Is(err, context.Canceled) {
					t.Errorf("Do = %v; want context.Canceled", err)
				}
				if n := len(s.sightings(tc.path)) - before; n != 1 {
					t.Errorf("the server read %s %d times, want once", tc.path, n)
				}
				wantStat(t, c, "retried", 0)
			})
		}
	})
}

// The kept-alive case that needs no retry: a connection the server closed
// while it was idle is seen closed before use (h1 peeks at
// it, the Transport's reader saw the end), and the request goes once, on
// a new connection, not Retried.
func TestRetryNotForIdleClosed(t *testing.T) {
	eachScheme(t, func(t *testing.T, scheme string) {
		s := newKeptServer(t, scheme, func(path string, kept bool, w net.Conn) bool {
			okResponse(w, "one", "")
			return false // closed after the answer, without saying so
		})
		c := newClientOn(t, Config{AllowPrivateNetworks: true})
		for i := range 3 {
			res := mustDo(t, c, s.url(fmt.Sprintf("/%d", i)))
			if res.Retried {
				t.Errorf("request %d Retried", i)
			}
			time.Sleep(20 * time.Millisecond) // the FIN arrives
		}
		if conns, reqs := s.seen(); conns != 3 || len(reqs) != 3 {
			t.Errorf("%d connections, requests %q; want 3 and 3", conns, reqs)
		}
		wantStat(t, c, "retried", 0)
	})
}

// h2Server is an HTTP/2 server written with x/net's framer, so that a test
// says which frames each stream gets: act, given the number of requests
// read so far (this one included), returns "ok" (answered 200), "refuse"
// (RST_STREAM REFUSED_STREAM) or "goaway" (a GOAWAY naming the last stream
// answered, and the connection closed). It counts the requests read, by
// connection, as "conn path".
type h2Server struct {
	base string
	mu   sync.Mutex
	reqs []string
}

func newH2Server(t *testing.T, act func(n int) string) *h2Server {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", serverTLS("h2"))
	if err != nil {
		t.Fatal(err)
	}
	s := &h2Server{base: "https://" + ln.Addr().String()}
	var wg sync.WaitGroup
	var conns sync.Map
	t.Cleanup(func() {
		ln.Close()
		conns.Range(func(c, _ any) bool { c.(net.Conn).Close(); return true })
		wg.Wait()
	})
	wg.Go(func() {
		for id := 0; ; id++ {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Store(conn, true)
			wg.Go(func() {
				defer conn.Close()
				conn.SetDeadline(time.Now().Add(30 * time.Second))
				s.serve(id, conn, act)
			})
		}
	})
	return s
}

func (s *h2Server) serve(id int, conn net.Conn, act func(n int) string) {
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(conn, preface); err != nil || string(preface) != http2.ClientPreface {
		return
	}
	fr := http2.NewFramer(conn, conn)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if err := fr.WriteSettings(); err != nil {
		return
	}
	var hbuf bytes.Buffer
	enc := hpack.NewEncoder(&hbuf)
	var last uint32
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				fr.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				fr.WritePing(true, f.Data)
			}
		case *http2.MetaHeadersFrame:
			s.mu.Lock()
			s.reqs = append(s.reqs, fmt.Sprintf("%d %s", id, f.PseudoValue("path")))
			n := len(s.reqs)
			s.mu.Unlock()
			switch act(n) {
			case "refuse":
				fr.WriteRSTStream(f.StreamID, http2.ErrCodeRefusedStream)
			case "goaway":
				fr.WriteGoAway(last, http2.ErrCodeNo, nil)
				return
			default:
				hbuf.Reset()
				enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
				enc.WriteField(hpack.HeaderField{Name: "content-type", Value: "text/plain"})
				enc.WriteField(hpack.HeaderField{Name: "content-length", Value: "2"})
				fr.WriteHeaders(http2.HeadersFrameParam{StreamID: f.StreamID, BlockFragment: hbuf.Bytes(), EndHeaders: true})
				fr.WriteData(f.StreamID, true, []byte("ok"))
				last = f.StreamID
			}
		}
	}
}

func (s *h2Server) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...)
}

// HTTP/2 has no race for the retry to mend: a server closes an idle
// connection with a GOAWAY that names the last stream it processed, and
// net/http sends again, on a new connection, what came after it; the
// Result says Retried, as on HTTP/1.1. A stream the server refuses
// (REFUSED_STREAM, processed not at all) net/http sends again up to six
// times; the limit of two holds there too: the third is never written.
func TestRetryHTTP2(t *testing.T) {
	t.Run("goaway", func(t *testing.T) {
		s := newH2Server(t, func(n int) string {
			if n == 2 {
				return "goaway"
			}
			return "ok"
		})
		c := newClientOn(t, Config{AllowPrivateNetworks: true})
		mustDo(t, c, mustURL(t, s.base+"/a"))
		res := mustDo(t, c, mustURL(t, s.base+"/b"))
		if string(res.Body) != "ok" || !res.Retried || res.Reused || !strings.HasPrefix(string(res.ResponseHead), "HTTP/2.0 200") {
			t.Errorf("Body %q Retried %v Reused %v head %q; want ok, true, false, HTTP/2.0", res.Body, res.Retried, res.Reused, res.ResponseHead)
		}
		if got := s.seen(); strings.Join(got, ",") != "0 /a,0 /b,1 /b" {
			t.Errorf("the server read %q; want /a, /b on the first connection, /b on a second", got)
		}
		wantStat(t, c, "retried", 1)
	})
	t.Run("refused", func(t *testing.T) {
		s := newH2Server(t, func(int) string { return "refuse" })
		c := newClientOn(t, Config{AllowPrivateNetworks: true})
		res, err := c.Do(context.Background(), Request{URL: mustURL(t, s.base+"/x")})
		var fe *Error
		if res != nil || !errors.As(err, &fe) || !fe.Retried || !errors.Is(err, errReplayLimit) {
			t.Fatalf("Do = %+v, %v; want an *Error, Retried, errReplayLimit", res, err)
		}
		if got := s.seen(); len(got) != 2 {
			t.Errorf("the server read %q; want the request twice", got)
		}
		wantStat(t, c, "retried", 1)
	})
}
