package fetch

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
)

const testUA = "gentlecrawl-test/1.0 (+https://example.org/bot)"

// newClient returns a Client allowed to reach the loopback test servers,
// with cfg's non-zero fields applied on top.
func newClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	if cfg.UserAgent == "" {
		cfg.UserAgent = testUA
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second // roomy: the test machine is loaded
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func do(t *testing.T, c *Client, req Request) *Result {
	t.Helper()
	res, err := c.Do(context.Background(), req)
	if err != nil {
		t.Fatalf("Do(%s): %v", req.URL, err)
	}
	return res
}

// server is an httptest server on 127.0.0.1 that counts the connections it
// accepts and keeps the headers of every request.
type server struct {
	*httptest.Server
	conns atomic.Int64
	mu    sync.Mutex
	reqs  []*http.Request
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	return newServerOn(t, "http", h)
}

// newServerOn is newServer for scheme "http" or "https"; on https it
// speaks HTTP/2 (and HTTP/1.1) with testCert.
func newServerOn(t *testing.T, scheme string, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reqs = append(s.reqs, r.Clone(context.Background()))
		s.mu.Unlock()
		h(w, r)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	if scheme == "https" {
		s.EnableHTTP2 = true
		s.TLS = serverTLS()
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

func (s *server) requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.reqs...)
}

func (s *server) port() int {
	return s.Listener.Addr().(*net.TCPAddr).Port
}

func gzipped(t *testing.T, p []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(p); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestNewRequiresUserAgent(t *testing.T) {
	if _, err := New(Config{}); err == nil || !strings.Contains(err.Error(), "UserAgent") {
		t.Errorf("New(Config{}) error = %v, want one naming UserAgent", err)
	}
	if _, err := New(Config{UserAgent: "bot\r\nX-Evil: 1"}); err == nil {
		t.Error("New accepted a User-Agent containing CRLF")
	}
}

func TestHeadersSent(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "abc"})
		fmt.Fprint(w, "hello")
	})
	c := newClient(t, Config{AllowPrivateNetworks: true, From: "crawler@example.org"})
	for range 2 { // the second request must not send back the cookie
		res := do(t, c, Request{URL: mustURL(t, s.URL+"/page?q=1")})
		if res.Status != 200 || string(res.Body) != "hello" {
			t.Fatalf("got %d %q", res.Status, res.Body)
		}
		if res.Conditional || res.NotModified {
			t.Errorf("Conditional, NotModified = %v, %v for a plain GET", res.Conditional, res.NotModified)
		}
	}
	for i, r := range s.requests() {
		for k, want := range map[string]string{
			"User-Agent":        testUA,
			"From":              "crawler@example.org",
			"Accept":            "*/*",
			"Accept-Encoding":   "gzip, deflate, br, zstd",
			"Cookie":            "",
			"Referer":           "",
			"If-None-Match":     "",
			"If-Modified-Since": "",
			"Authorization":     "",
		} {
			if got := r.Header.Get(k); got != want {
				t.Errorf("request %d: %s = %q, want %q", i, k, got, want)
			}
		}
		if r.URL.RequestURI() != "/page?q=1" {
			t.Errorf("request %d: URI %q", i, r.URL.RequestURI())
		}
	}
}

func TestNoFromByDefault(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {})
	c := newClient(t, Config{AllowPrivateNetworks: true, Accept: "text/html", AcceptEncoding: "gzip, br"})
	do(t, c, Request{URL: mustURL(t, s.URL)})
	r := s.requests()[0]
	if _, ok := r.Header["From"]; ok {
		t.Errorf("From sent without Config.From: %q", r.Header.Get("From"))
	}
	if r.Header.Get("Accept") != "text/html" || r.Header.Get("Accept-Encoding") != "gzip, br" {
		t.Errorf("Accept %q, Accept-Encoding %q", r.Header.Get("Accept"), r.Header.Get("Accept-Encoding"))
	}
}

func TestConditionalGet(t *testing.T) {
	const etag = `W/"v1-abc"`
	const lastMod = "Wed, 21 Oct 2015 07:28:00 GMT"
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Modified-Since") != "" {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		fmt.Fprint(w, "full")
	})
	c := newClient(t, Config{AllowPrivateNetworks: true})
	u := mustURL(t, s.URL+"/doc")

	res := do(t, c, Request{URL: u, ETag: etag, LastModified: lastMod})
	if res.Status != 304 || !res.Conditional || !res.NotModified || res.Refetched {
		t.Errorf("got status %d, Conditional %v, NotModified %v, Refetched %v; want 304 true true false",
			res.Status, res.Conditional, res.NotModified, res.Refetched)
	}
	r := s.requests()[0]
	if got := r.Header.Get("If-None-Match"); got != etag {
		t.Errorf("If-None-Match = %q, want %q", got, etag)
	}
	if got := r.Header.Get("If-Modified-Since"); got != lastMod {
		t.Errorf("If-Modified-Since = %q, want %q", got, lastMod)
	}
	if !bytes.Contains(res.RequestRaw, []byte("If-None-Match: "+etag+"\r\n")) {
		t.Errorf("RequestRaw lacks If-None-Match:\n%s", res.RequestRaw)
	}

	// Only a Last-Modified in the future: it is not sent, so the request is
	// unconditional.
	future := time.Now().Add(48 * time.Hour).UTC().Format(http.TimeFormat)
	res = do(t, c, Request{URL: u, LastModified: future})
	if res.Status != 200 || res.Conditional || res.NotModified {
		t.Errorf("future Last-Modified: status %d Conditional %v NotModified %v", res.Status, res.Conditional, res.NotModified)
	}
	if got := s.requests()[1].Header.Get("If-Modified-Since"); got != "" {
		t.Errorf("future Last-Modified sent as If-Modified-Since %q", got)
	}

	// A value that does not parse as an HTTP-date is not sent: RFC 9110
	// §13.1.3 has the server ignore it, so sending it would be noise.
	do(t, c, Request{URL: u, LastModified: "yesterday-ish"})
	if got := s.requests()[2].Header.Get("If-Modified-Since"); got != "" {
		t.Errorf("If-Modified-Since = %q, want none for a malformed date", got)
	}
}

func TestNotModifiedWithoutValidatorsRefetches(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		// A broken cache: 304 to everything it thinks it has seen, unless
		// told not to use its cache.
		if r.Header.Get("Cache-Control") != "no-cache" {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		fmt.Fprint(w, "fresh")
	})
	c := newClient(t, Config{AllowPrivateNetworks: true})
	res := do(t, c, Request{URL: mustURL(t, s.URL)})
	if res.Status != 200 || string(res.Body) != "fresh" || !res.Refetched || res.NotModified || res.Conditional {
		t.Errorf("got %d %q Refetched %v NotModified %v Conditional %v; want 200 \"fresh\" true false false",
			res.Status, res.Body, res.Refetched, res.NotModified, res.Conditional)
	}
	if n := len(s.requests()); n != 2 {
		t.Errorf("server saw %d requests, want 2", n)
	}
}

func TestGzip(t *testing.T) {
	plain := bytes.Repeat([]byte("<p>gentle crawling</p>\n"), 500)
	gz := gzipped(t, plain)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		enc := r.URL.Query().Get("enc")
		w.Header().Set("Content-Encoding", enc)
		w.Header().Set("Content-Type", "text/html")
		w.Write(gz)
	})
	c := newClient(t, Config{AllowPrivateNetworks: true})
	for _, enc := range []string{"gzip", "x-gzip", "GZIP", "identity, gzip"} {
		res := do(t, c, Request{URL: mustURL(t, s.URL+"/?enc="+url.QueryEscape(enc))})
		if !bytes.Equal(res.Body, plain) {
			t.Errorf("%s: Body is %d bytes, want the %d decoded bytes", enc, len(res.Body), len(plain))
		}
		if !bytes.Equal(res.RawBody, gz) {
			t.Errorf("%s: RawBody is not the compressed bytes as sent", enc)
		}
		if res.Truncated != "" || res.DecodeErr != nil || res.Undecoded != "" {
			t.Errorf("%s: Truncated %q DecodeErr %v Undecoded %q", enc, res.Truncated, res.DecodeErr, res.Undecoded)
		}
		if !bytes.Contains(res.ResponseHead, []byte("Content-Encoding: "+enc+"\r\n")) {
			t.Errorf("%s: ResponseHead lacks Content-Encoding:\n%s", enc, res.ResponseHead)
		}
		if want := int64(len(res.ResponseHead) + len(gz)); res.WireBytes != want {
			t.Errorf("%s: WireBytes = %d, want %d", enc, res.WireBytes, want)
		}
	}
}

func TestGzipTwice(t *testing.T) {
	plain := []byte("twice wrapped")
	gz2 := gzipped(t, gzipped(t, plain))
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip, gzip")
		w.Write(gz2)
	})
	res := do(t, newClient(t, Config{AllowPrivateNetworks: true}), Request{URL: mustURL(t, s.URL)})
	if string(res.Body) != string(plain) || !bytes.Equal(res.RawBody, gz2) {
		t.Errorf("Body %q, RawBody %d bytes", res.Body, len(res.RawBody))
	}
}

func TestUndecodedEncoding(t *testing.T) {
	raw := []byte("\x1f\x9d\x90not really compress")
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "compress")
		w.Write(raw)
	})
	res := do(t, newClient(t, Config{AllowPrivateNetworks: true}), Request{URL: mustURL(t, s.URL)})
	if res.Undecoded != "compress" || res.Body != nil || !bytes.Equal(res.RawBody, raw) || res.Truncated != "" {
		t.Errorf("Undecoded %q, Body %q, RawBody %q, Truncated %q", res.Undecoded, res.Body, res.RawBody, res.Truncated)
	}
}

func TestEmptyGzipBody(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.WriteHeader(http.StatusNoContent)
	})
	res := do(t, newClient(t, Config{AllowPrivateNetworks: true}), Request{URL: mustURL(t, s.URL)})
	if res.Status != 204 || len(res.Body) != 0 || res.DecodeErr != nil || res.Truncated != "" {
		t.Errorf("status %d Body %q DecodeErr %v Truncated %q", res.Status, res.Body, res.DecodeErr, res.Truncated)
	}
}

func TestCorruptGzip(t *testing.T) {
	plain := bytes.Repeat([]byte("abcdefghij"), 2000)
	gz := gzipped(t, plain)
	cut := gz[:len(gz)/2] // delivered whole (Content-Length matches), but the stream is incomplete
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", strconv.Itoa(len(cut)))
		w.Write(cut)
	})
	res := do(t, newClient(t, Config{AllowPrivateNetworks: true}), Request{URL: mustURL(t, s.URL)})
	if res.DecodeErr == nil {
		t.Error("DecodeErr = nil for an incomplete gzip stream")
	}
	if res.Truncated != "" {
		t.Errorf("Truncated = %q; the raw body arrived whole", res.Truncated)
	}
	if !bytes.HasPrefix(plain, res.Body) {
		t.Error("Body is not a prefix of the original")
	}
	if !bytes.Equal(res.RawBody, cut) {
		t.Errorf("RawBody is %d bytes, want the %d sent", len(res.RawBody), len(cut))
	}
}

func TestBodyCap(t *testing.T) {
	const max = 1000
	plain := make([]byte, 5000)
	for i := range plain {
		plain[i] = byte('a' + i%26)
	}
	gz := gzipped(t, plain)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if r.URL.Query().Get("gzip") != "" {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gz)
			return
		}
		w.Write(plain[:n])
	})
	c := newClient(t, Config{AllowPrivateNetworks: true, MaxBodySize: max})
	for _, tt := range []struct {
		query     string
		wantLen   int
		truncated string
	}{
		{"n=999", 999, ""},
		{"n=1000", 1000, ""},
		{"n=1001", 1000, "length"},
		{"n=5000", 1000, "length"},
		{"gzip=1", 1000, "length"},
	} {
		res := do(t, c, Request{URL: mustURL(t, s.URL+"/?"+tt.query)})
		if len(res.Body) != tt.wantLen || res.Truncated != tt.truncated {
			t.Errorf("%s: Body %d bytes, Truncated %q; want %d, %q", tt.query, len(res.Body), res.Truncated, tt.wantLen, tt.truncated)
		}
		if !bytes.Equal(res.Body, plain[:len(res.Body)]) {
			t.Errorf("%s: Body is not the start of the content", tt.query)
		}
	}
}

func TestRawCap(t *testing.T) {
	// A gzip body whose compressed size passes MaxRawSize although what it
	// decodes to would fit in MaxBodySize (random data does not compress).
	plain := make([]byte, 4000)
	var x uint32 = 1
	for i := range plain {
		x = x*1664525 + 1013904223
		plain[i] = byte(x >> 24)
	}
	gz := gzipped(t, plain)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(gz)
	})
	c := newClient(t, Config{AllowPrivateNetworks: true, MaxBodySize: 10000, MaxRawSize: 1000})
	res := do(t, c, Request{URL: mustURL(t, s.URL)})
	if res.Truncated != "length" || len(res.RawBody) != 1000 || !bytes.Equal(res.RawBody, gz[:1000]) {
		t.Errorf("Truncated %q, RawBody %d bytes; want length, the first 1000", res.Truncated, len(res.RawBody))
	}
	if res.DecodeErr != nil {
		t.Errorf("DecodeErr = %v; a cut is not a decoding fault", res.DecodeErr)
	}
}

func TestTimeoutMidBody(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.Write([]byte("first part"))
		w.(http.Flusher).Flush()
		select { // trickle: never send the rest
		case <-r.Context().Done():
		case <-release:
		}
	})
	c := newClient(t, Config{AllowPrivateNetworks: true, Timeout: 2 * time.Second})
	res := do(t, c, Request{URL: mustURL(t, s.URL)})
	if res.Truncated != "time" || string(res.Body) != "first part" || res.Status != 200 {
		t.Errorf("status %d, Truncated %q, Body %q; want 200, time, \"first part\"", res.Status, res.Truncated, res.Body)
	}
	if res.End.Before(res.Start) || res.Duration < res.TTFB {
		t.Errorf("timings out of order: Start %v TTFB %v Duration %v End %v", res.Start, res.TTFB, res.Duration, res.End)
	}
}

func TestTimeoutBeforeHeaders(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	c := newClient(t, Config{AllowPrivateNetworks: true, Timeout: time.Second})
	res, err := c.Do(context.Background(), Request{URL: mustURL(t, s.URL)})
	var fe *Error
	if res != nil || !errors.As(err, &fe) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Do = %v, %v; want nil and an *Error wrapping context.DeadlineExceeded", res, err)
	}
	if fe.Op != "get" || fe.URL != s.URL {
		t.Errorf("Error{Op: %q, URL: %q}", fe.Op, fe.URL)
	}
}

// stallingBody yields its data, then blocks until ctx is done.
type stallingBody struct {
	ctx  context.Context
	data []byte
}

func (b *stallingBody) Read(p []byte) (int, error) {
	if len(b.data) > 0 {
		n := copy(p, b.data)
		b.data = b.data[n:]
		return n, nil
	}
	<-b.ctx.Done()
	return 0, b.ctx.Err()
}

func (b *stallingBody) Close() error { return nil }

func TestCancelMidBody(t *testing.T) {
	// Cancellation by the caller (the crawl is stopping) is an error, not a
	// truncated record; an expired deadline is "time".
	c := newClient(t, Config{})
	for _, tt := range []struct {
		name   string
		ctx    func() (context.Context, context.CancelFunc)
		errIs  error
		result string
	}{
		{"cancel", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, context.Canceled, ""},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		}, nil, "time"},
	} {
		ctx, cancel := tt.ctx()
		resp := &http.Response{Header: http.Header{}, Body: &stallingBody{ctx: ctx, data: []byte("part")}, ContentLength: 1000}
		res := &Result{}
		err := c.readBody(ctx, resp, res, nil, nil)
		cancel()
		if !errors.Is(err, tt.errIs) || (tt.errIs == nil) != (err == nil) {
			t.Errorf("%s: readBody error %v, want %v", tt.name, err, tt.errIs)
		}
		if err == nil && (res.Truncated != tt.result || string(res.Body) != "part") {
			t.Errorf("%s: Truncated %q Body %q", tt.name, res.Truncated, res.Body)
		}
	}
}

func TestDisconnectBeforeContentLength(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		conn, bw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		bw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100\r\nContent-Type: text/plain\r\n\r\n0123456789")
		bw.Flush()
	})
	res := do(t, newClient(t, Config{AllowPrivateNetworks: true}), Request{URL: mustURL(t, s.URL)})
	if res.Truncated != "disconnect" || string(res.Body) != "0123456789" {
		t.Errorf("Truncated %q, Body %q; want disconnect, the 10 bytes sent", res.Truncated, res.Body)
	}
}

func TestResetBeforeHeaders(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		conn.Close()
	})
	res, err := newClient(t, Config{AllowPrivateNetworks: true}).Do(context.Background(), Request{URL: mustURL(t, s.URL)})
	var fe *Error
	if res != nil || !errors.As(err, &fe) || fe.Op != "get" {
		t.Errorf("Do = %v, %v; want an *Error{Op: get}", res, err)
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
			return
		}
		fmt.Fprint(w, "new")
	})
	res := do(t, newClient(t, Config{AllowPrivateNetworks: true}), Request{URL: mustURL(t, s.URL+"/old")})
	if res.Status != 301 || res.Header.Get("Location") != "/new" {
		t.Errorf("status %d Location %q; want 301 /new", res.Status, res.Header.Get("Location"))
	}
	if n := len(s.requests()); n != 1 {
		t.Errorf("server saw %d requests, want 1", n)
	}
}

func TestConnectToRoutesFakeHost(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Host)
	})
	port := s.port()
	for _, tt := range []struct {
		name string
		cfg  Config
	}{
		{"connect-to address", Config{ConnectTo: []ConnectTo{{FromHost: "a.test", FromPort: 80, ToHost: "127.0.0.1", ToPort: port}}}},
		{"connect-to name then resolve", Config{
			ConnectTo: []ConnectTo{{FromHost: "a.test", FromPort: 80, ToHost: "backend.test", ToPort: port}},
			Resolve:   []Resolve{{Host: "backend.test", Port: port, Addrs: addrs("127.0.0.1")}},
		}},
		{"resolve wildcard with port rewrite", Config{
			ConnectTo: []ConnectTo{{ToPort: port}},
			Resolve:   []Resolve{{Host: "*", Port: port, Addrs: addrs("127.0.0.1")}},
		}},
	} {
		tt.cfg.AllowPrivateNetworks = true
		c := newClient(t, tt.cfg)
		res := do(t, c, Request{URL: mustURL(t, "http://a.test/x")})
		if string(res.Body) != "a.test" {
			t.Errorf("%s: server saw Host %q, want a.test", tt.name, res.Body)
		}
		if res.RemoteAddr != s.Listener.Addr().String() {
			t.Errorf("%s: RemoteAddr %q, want %q", tt.name, res.RemoteAddr, s.Listener.Addr())
		}
		if !bytes.HasPrefix(res.RequestRaw, []byte("GET /x HTTP/1.1\r\nHost: a.test\r\n")) {
			t.Errorf("%s: RequestRaw starts %q", tt.name, res.RequestRaw)
		}
	}

	// --resolve alone, with the test server's own port.
	c := newClient(t, Config{AllowPrivateNetworks: true, Resolve: []Resolve{{Host: "b.test", Port: port, Addrs: addrs("127.0.0.1")}}})
	res := do(t, c, Request{URL: mustURL(t, fmt.Sprintf("http://b.test:%d/", port))})
	if want := fmt.Sprintf("b.test:%d", port); string(res.Body) != want {
		t.Errorf("--resolve: server saw Host %q, want %q", res.Body, want)
	}
}

func TestAddressFallback(t *testing.T) {
	// A closed port first: the dialer moves on to the next address.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	c := newClient(t, Config{
		AllowPrivateNetworks: true,
		ConnectTo:            []ConnectTo{{FromHost: "a.test", ToHost: "127.0.0.1", ToPort: closed}},
	})
	if _, err := c.Do(context.Background(), Request{URL: mustURL(t, "http://a.test/")}); err == nil {
		t.Fatal("connecting to a closed port succeeded")
	}
	c = newClient(t, Config{
		AllowPrivateNetworks: true,
		Resolve:              []Resolve{{Host: "a.test", Port: s.port(), Addrs: addrs("127.0.0.2", "127.0.0.1")}},
	})
	// The server listens on 127.0.0.1 only, so 127.0.0.2 (also loopback on
	// Linux) refuses and the dialer moves on.
	res := do(t, c, Request{URL: mustURL(t, fmt.Sprintf("http://a.test:%d/", s.port()))})
	if string(res.Body) != "ok" {
		t.Errorf("Body %q", res.Body)
	}
}

func TestPrivateNetworksRefused(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "should not be reached") })
	port := s.port()
	rule := func(to string) []ConnectTo {
		return []ConnectTo{{FromHost: "a.test", ToHost: to, ToPort: port}}
	}
	for _, tt := range []struct {
		name string
		url  string
		cfg  Config
	}{
		{"direct 127.0.0.1", s.URL, Config{}},
		{"direct [::1]", fmt.Sprintf("http://[::1]:%d/", port), Config{}},
		{"resolve to 127.0.0.1", fmt.Sprintf("http://a.test:%d/", port), Config{Resolve: []Resolve{{Host: "a.test", Port: port, Addrs: addrs("127.0.0.1")}}}},
		{"connect-to 127.0.0.1", "http://a.test/", Config{ConnectTo: rule("127.0.0.1")}},
		{"connect-to ::1", "http://a.test/", Config{ConnectTo: rule("::1")}},
		{"connect-to 169.254.169.254", "http://a.test/", Config{ConnectTo: rule("169.254.169.254")}},
		{"connect-to ::ffff:127.0.0.1", "http://a.test/", Config{ConnectTo: rule("::ffff:127.0.0.1")}},
		{"connect-to 10.0.0.1", "http://a.test/", Config{ConnectTo: rule("10.0.0.1")}},
		{"https", fmt.Sprintf("https://127.0.0.1:%d/", port), Config{}},
	} {
		c := newClient(t, tt.cfg)
		res, err := c.Do(context.Background(), Request{URL: mustURL(t, tt.url)})
		var fe *Error
		if res != nil || !errors.Is(err, ErrPrivateNetwork) || !errors.As(err, &fe) {
			t.Errorf("%s: Do = %v, %v; want an *Error wrapping ErrPrivateNetwork", tt.name, res, err)
			continue
		}
		if fe.Op != "dial" || fe.URL != tt.url {
			t.Errorf("%s: Error{Op: %q, URL: %q}", tt.name, fe.Op, fe.URL)
		}
	}
	if n := s.conns.Load(); n != 0 {
		t.Errorf("server accepted %d connections from refused requests", n)
	}
	// The counter works: an allowed request is seen (and, being accepted in
	// order, would have come after any connection the refusals had made).
	do(t, newClient(t, Config{AllowPrivateNetworks: true}), Request{URL: mustURL(t, s.URL)})
	if n := s.conns.Load(); n != 1 {
		t.Errorf("server accepted %d connections, want exactly the 1 allowed", n)
	}
}

func TestDialerChecksEveryAddress(t *testing.T) {
	// Every address of a rule is private: none is dialed (a zero
	// net.Dialer would connect to 127.0.0.1:80 if asked).
	d := &dialer{
		resolve: newResolveRules([]Resolve{{Host: "a.test", Port: 80, Addrs: addrs("127.0.0.1", "10.0.0.1", "::1")}}),
		timeout: 5 * time.Second,
	}
	_, err := d.DialContext(context.Background(), "tcp", "a.test:80")
	if !errors.Is(err, ErrPrivateNetwork) {
		t.Errorf("DialContext = %v, want ErrPrivateNetwork", err)
	}
}

func TestRequestRawAndResponseHeadMatchWire(t *testing.T) {
	const response = "HTTP/1.1 200 OK\r\n" +
		"Content-Type: text/plain\r\n" +
		"Transfer-Encoding: chunked\r\n" +
		"X-Zeta: z\r\n" +
		"Set-Cookie: a=1\r\n" +
		"\r\n" +
		"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
	l, gotReq := answerOnce(t, response)
	c := newClient(t, Config{AllowPrivateNetworks: true, From: "ops@example.org"})
	u := mustURL(t, "http://"+l.Addr().String()+"/a%20b/c?x=1&y=%2F#frag")
	res := do(t, c, Request{URL: u, ETag: `"e1"`, LastModified: "Mon, 02 Jan 2006 15:04:05 GMT"})
	wire := <-gotReq
	if !bytes.Equal(res.RequestRaw, wire) {
		t.Errorf("RequestRaw differs from the bytes on the wire:\nRequestRaw:\n%s\nwire:\n%s", res.RequestRaw, wire)
	}
	wantReq := "GET /a%20b/c?x=1&y=%2F HTTP/1.1\r\n" +
		"Host: " + l.Addr().String() + "\r\n" +
		"User-Agent: " + testUA + "\r\n" +
		"Accept: */*\r\n" +
		"Accept-Encoding: gzip, deflate, br, zstd\r\n" +
		"From: ops@example.org\r\n" +
		"If-Modified-Since: Mon, 02 Jan 2006 15:04:05 GMT\r\n" +
		"If-None-Match: \"e1\"\r\n" +
		"\r\n"
	if string(res.RequestRaw) != wantReq {
		t.Errorf("RequestRaw:\n%s\nwant:\n%s", res.RequestRaw, wantReq)
	}
	wantHead := "HTTP/1.1 200 OK\r\n" +
		"Content-Type: text/plain\r\n" +
		"Set-Cookie: a=1\r\n" +
		"X-Zeta: z\r\n" +
		"\r\n"
	if string(res.ResponseHead) != wantHead {
		t.Errorf("ResponseHead:\n%q\nwant:\n%q", res.ResponseHead, wantHead)
	}
	if string(res.RawBody) != "hello world" || string(res.Body) != "hello world" {
		t.Errorf("RawBody %q Body %q; want the de-chunked body", res.RawBody, res.Body)
	}
	if res.WireBytes != int64(len(wantHead)+len("hello world")) {
		t.Errorf("WireBytes = %d", res.WireBytes)
	}
	if res.RemoteAddr != l.Addr().String() {
		t.Errorf("RemoteAddr = %q, want %q", res.RemoteAddr, l.Addr())
	}
	if res.Start.IsZero() || res.End.Before(res.Start) || res.TTFB < 0 || res.Duration < res.TTFB || res.URL != u {
		t.Errorf("Start %v TTFB %v Duration %v End %v URL %v", res.Start, res.TTFB, res.Duration, res.End, res.URL)
	}
}

func TestConnectionReuse(t *testing.T) {
	gz := gzipped(t, bytes.Repeat([]byte("reuse "), 1000))
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("gzip") != "" {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gz)
			return
		}
		if r.URL.Query().Get("redirect") != "" {
			http.Redirect(w, r, "/", http.StatusFound)
			return
		}
		fmt.Fprint(w, strings.Repeat("x", 10000))
	})
	c := newClient(t, Config{AllowPrivateNetworks: true})
	for i := range 10 {
		q := []string{"", "gzip=1", "redirect=1"}[i%3]
		res := do(t, c, Request{URL: mustURL(t, s.URL+"/?"+q)})
		if res.Truncated != "" {
			t.Fatalf("request %d truncated: %q", i, res.Truncated)
		}
	}
	// net/http hands a connection back to its pool from its own goroutine
	// just after the body's end is read, so on a busy machine the next
	// request can beat it and dial; one connection per request would be 10.
	if n := s.conns.Load(); n > 3 {
		t.Errorf("server saw %d connections for 10 sequential requests, want them reused (1, rarely 2 or 3)", n)
	}
}

func TestHTTPS(t *testing.T) {
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(gzipped(t, []byte("secure "+r.Host)))
	}))
	s.EnableHTTP2 = true
	s.StartTLS()
	defer s.Close()
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())

	// httptest's certificate is for example.com, so --connect-to is also
	// what makes the TLS name check pass.
	c := newClient(t, Config{
		AllowPrivateNetworks: true,
		ConnectTo:            []ConnectTo{{FromHost: "example.com", FromPort: 443, ToHost: "127.0.0.1", ToPort: s.Listener.Addr().(*net.TCPAddr).Port}},
	})
	c.tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	res := do(t, c, Request{URL: mustURL(t, "https://example.com/")})
	if string(res.Body) != "secure example.com" {
		t.Errorf("Body %q", res.Body)
	}
	if !bytes.HasPrefix(res.ResponseHead, []byte("HTTP/2.0 200 OK\r\n")) {
		t.Errorf("ResponseHead starts %q, want HTTP/2.0", res.ResponseHead[:min(20, len(res.ResponseHead))])
	}

	// Without the test CA, verification fails and there is nothing to record.
	c = newClient(t, Config{AllowPrivateNetworks: true, ConnectTo: c.cfg.ConnectTo})
	if _, err := c.Do(context.Background(), Request{URL: mustURL(t, "https://example.com/")}); err == nil {
		t.Error("an untrusted certificate was accepted")
	}
}

func TestBadRequests(t *testing.T) {
	c := newClient(t, Config{})
	for _, u := range []*url.URL{nil, mustURL(t, "ftp://example.com/"), mustURL(t, "mailto:a@example.com"), mustURL(t, "http:///path")} {
		res, err := c.Do(context.Background(), Request{URL: u})
		var fe *Error
		if res != nil || !errors.As(err, &fe) {
			t.Errorf("Do(%v) = %v, %v; want an *Error", u, res, err)
		}
	}
}

func TestDNSFailure(t *testing.T) {
	// .invalid never resolves (RFC 6761 §6.4); the stub resolver answers
	// without the network, or fails, which is what is being tested.
	c := newClient(t, Config{ConnectTimeout: 5 * time.Second})
	res, err := c.Do(context.Background(), Request{URL: mustURL(t, "http://no-such-host.invalid/")})
	var fe *Error
	if res != nil || !errors.As(err, &fe) || fe.Op != "dial" {
		t.Errorf("Do = %v, %v; want an *Error{Op: dial}", res, err)
	}
}

func TestMaxHeaderBytes(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Big", strings.Repeat("h", 8<<10))
	})
	c := newClient(t, Config{AllowPrivateNetworks: true, MaxHeaderBytes: 1 << 10})
	res, err := c.Do(context.Background(), Request{URL: mustURL(t, s.URL)})
	var fe *Error
	if res != nil || !errors.As(err, &fe) || fe.Op != "get" {
		t.Errorf("Do = %v, %v; want an *Error{Op: get} for an oversized header", res, err)
	}
}

func TestConcurrentUse(t *testing.T) {
	gz := gzipped(t, []byte("shared"))
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(gz)
	})
	c := newClient(t, Config{AllowPrivateNetworks: true})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 5 {
				res, err := c.Do(context.Background(), Request{URL: mustURL(t, fmt.Sprintf("%s/%d/%d", s.URL, g, i))})
				if err != nil || string(res.Body) != "shared" {
					t.Errorf("goroutine %d request %d: %v", g, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	// net/http may dial a spare connection when a request races one being
	// returned to the pool, so more than 8 can happen under load; what must
	// not happen is a connection per request (40).
	if n := s.conns.Load(); n >= 20 {
		t.Errorf("%d connections for 40 requests by 8 concurrent clients: connections are not reused", n)
	}
}

// answerOnce listens on loopback for one connection, reads the request's
// head, sends it on the returned channel (nil if no connection came) and
// answers with response, as written.
func answerOnce(t *testing.T, response string) (net.Listener, <-chan []byte) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	got := make(chan []byte, 1)
	go func() {
		conn, err := l.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer conn.Close()
		br := bufio.NewReader(conn)
		var head bytes.Buffer
		for {
			line, err := br.ReadString('\n')
			head.WriteString(line)
			if err != nil || line == "\r\n" {
				break
			}
		}
		got <- head.Bytes()
		io.WriteString(conn, response)
	}()
	return l, got
}
