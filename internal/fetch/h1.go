package fetch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/idna"

	"github.com/gentlecrawl/gentlecrawl/internal/rawio"
)

// h1 carries the exchanges of http:// URLs: HTTP/1.1 over kept-alive
// connections, the request written and the response read on the caller's
// goroutine, through package rawio (raw system calls on Linux). net/http's
// Transport, which https:// URLs keep (for HTTP/2), hands every request to
// a writing and a reading goroutine of the connection and back; in a polite
// crawl those handoffs wake a sleeping thread about once per request, and
// with the Transport's own bookkeeping they were a large share of the
// crawl's CPU.
//
// It parses responses with net/http's own reader (http.ReadResponse:
// status line, fields, Content-Length, chunking, Connection), and keeps
// the Transport's rules where they matter to a server: the response head
// is capped at maxHeader bytes read, at most maxIdlePerHost connections
// per host and port wait for reuse and none longer than idleTimeout, a body
// closed before its end closes its connection instead of being read to
// the end, and a request that fails on a kept-alive connection before any
// byte of the answer is sent once more, on a new connection, and never a
// third time.
type h1 struct {
	dial           func(ctx context.Context, network, addr string) (net.Conn, error)
	maxHeader      int64
	maxIdlePerHost int
	maxIdle        int
	idleTimeout    time.Duration
	keepAlive      bool // false: a connection carries one request (tests)

	mu struct {
		sync.Mutex
		idle     map[string][]*h1Conn // by address; the most recently used last
		n        int                  // connections in idle
		sweeping bool                 // a sweep of expired connections is due
		closed   bool
	}
}

// max1xx is how many informational (1xx) responses may come before the
// final one, as in net/http.
const max1xx = 5

// errH1Closed is the error of an exchange begun after Close.
var errH1Closed = errors.New("fetch: client closed")

// aLongTimeAgo is a deadline that has passed: set on a connection, it
// makes the reads and writes blocked on it return at once.
var aLongTimeAgo = time.Unix(1, 0)

func newH1(dial func(ctx context.Context, network, addr string) (net.Conn, error), maxHeader int64) *h1 {
	t := &h1{
		dial:           dial,
		maxHeader:      maxHeader,
		maxIdlePerHost: 16, // as the Transport (see New)
		maxIdle:        1024,
		idleTimeout:    90 * time.Second,
		keepAlive:      true,
	}
	t.mu.idle = make(map[string][]*h1Conn)
	return t
}

// h1Conn is one connection. Its Read is what the response parser reads
// through: it counts the bytes of a response head against the limit.
type h1Conn struct {
	t      *h1
	key    string
	conn   net.Conn
	br     *bufio.Reader
	limit  int64 // bytes the response head may still take; < 0: no limit (the body)
	used   bool  // it has carried a request before
	idleAt time.Time
}

func (pc *h1Conn) Read(p []byte) (int, error) {
	if pc.limit < 0 {
		return pc.conn.Read(p)
	}
	if pc.limit == 0 {
		return 0, errHeadLimit
	}
	if int64(len(p)) > pc.limit {
		p = p[:pc.limit]
	}
	n, err := pc.conn.Read(p)
	pc.limit -= int64(n)
	return n, err
}

// errHeadLimit stops the response parser when the head has taken all the
// bytes it may; roundTrip reports it as headers exceeding the limit.
var errHeadLimit = errors.New("fetch: response head limit reached")

// roundTrip writes raw, the request head of req (bodies are never sent),
// and reads the response head. The response's Body reads from the
// connection; closing it, or reading it to its end, hands the connection
// back for reuse or closes it. req's context bounds the whole exchange,
// body included, and req's client trace hears of the connection, the
// request written and the first byte of the response.
//
// When a kept-alive connection fails before any byte of the answer came
// (the request could not be written, or the connection ended or was reset
// after it), the request goes once more on a new connection, as net/http's
// Transport sends a GET again: most likely the server closed the idle
// connection as the request came. The trace hears of both connections.
// Not when the context has ended, when the connection was new, or when
// any byte of the answer arrived; and the new connection's failure is the
// answer.
//
// addr is the host:port to connect to: the URL's, or a proxy's (raw is
// then in absolute form).
func (t *h1) roundTrip(req *http.Request, raw []byte, addr string) (*http.Response, error) {
	if !httpguts.ValidHostHeader(req.Host) {
		return nil, fmt.Errorf("fetch: invalid Host header %q", req.Host)
	}
	resp, replay, err := t.send(req, raw, addr, false)
	if replay {
		resp, _, err = t.send(req, raw, addr, true)
	}
	return resp, err
}

// send is one attempt of roundTrip, on a new connection when fresh is set.
// replay says the attempt failed on a kept-alive connection before any
// byte of the answer, and the context is still live.
func (t *h1) send(req *http.Request, raw []byte, addr string, fresh bool) (*http.Response, bool, error) {
	ctx := req.Context()
	trace := httptrace.ContextClientTrace(ctx)
	pc, err := t.conn(ctx, addr, fresh)
	if err != nil {
		return nil, false, err
	}
	reused := pc.used
	if trace != nil && trace.GotConn != nil {
		info := httptrace.GotConnInfo{Conn: pc.conn, Reused: pc.used, WasIdle: pc.used}
		if pc.used {
			info.IdleTime = time.Since(pc.idleAt)
		}
		trace.GotConn(info)
	}
	// Whatever ends the context ends the exchange: the connection's
	// blocked reads and writes return, and it is not reused.
	stop := context.AfterFunc(ctx, func() { pc.conn.SetDeadline(aLongTimeAgo) })
	fail := func(err error) (*http.Response, bool, error) {
		stop()
		pc.conn.Close()
		if ctx.Err() != nil {
			// As net/http: the context's error, whatever the connection said.
			return nil, false, fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		return nil, false, err
	}
	// Nothing of the answer came: sent again if the connection was kept
	// alive (roundTrip).
	unanswered := func(err error) (*http.Response, bool, error) {
		resp, _, err := fail(err)
		return resp, reused && ctx.Err() == nil, err
	}

	_, err = pc.conn.Write(raw)
	if trace != nil && trace.WroteRequest != nil {
		trace.WroteRequest(httptrace.WroteRequestInfo{Err: err})
	}
	if err != nil {
		return unanswered(err)
	}
	pc.used = true

	pc.limit = t.maxHeader
	if _, err := pc.br.Peek(1); err != nil {
		if errors.Is(err, errHeadLimit) {
			return fail(t.headTooLarge())
		}
		return unanswered(err)
	}
	if trace != nil && trace.GotFirstResponseByte != nil {
		trace.GotFirstResponseByte()
	}
	var resp *http.Response
	for n1xx := 0; ; n1xx++ {
		resp, err = http.ReadResponse(pc.br, req)
		if err == nil && pc.limit == 0 {
			// The head took every byte it may (net/http's rule, too: what
			// was read ahead of the body counts).
			err = errHeadLimit
		}
		if errors.Is(err, errHeadLimit) {
			return fail(t.headTooLarge())
		}
		if err != nil {
			return fail(err)
		}
		code := resp.StatusCode
		if code < 100 || code > 199 || code == http.StatusSwitchingProtocols {
			break
		}
		if n1xx == max1xx {
			return fail(errors.New("fetch: too many 1xx informational responses"))
		}
		if trace != nil && trace.Got1xxResponse != nil {
			if err := trace.Got1xxResponse(code, textproto.MIMEHeader(resp.Header)); err != nil {
				return fail(err)
			}
		}
		pc.limit = t.maxHeader // each head has its own limit, as in net/http
	}
	pc.limit = -1

	b := &h1Body{
		rc:   resp.Body,
		pc:   pc,
		stop: stop,
		keep: t.keepAlive && !resp.Close && !req.Close && resp.StatusCode != http.StatusSwitchingProtocols,
	}
	if resp.Body == http.NoBody {
		b.finish(true)
		return resp, false, nil
	}
	resp.Body = b
	return resp, false, nil
}

func (t *h1) headTooLarge() error {
	// roundTripError recognises the wording, as it does net/http's.
	return fmt.Errorf("fetch: server response headers exceeded %d bytes; aborted", t.maxHeader)
}

// canonicalAddr is the address net/http dials for an http:// URL: the
// host in its IDNA (punycode) form and the port, 80 when none is given.
func canonicalAddr(u *url.URL) string {
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "80"
	}
	for i := 0; i < len(host); i++ {
		if host[i] >= 0x80 {
			if a, err := idna.Lookup.ToASCII(host); err == nil {
				host = a
			}
			break
		}
	}
	return net.JoinHostPort(host, port)
}

// conn returns a connection to addr: the most recently used idle one that
// is still open, or a new one; with fresh, a new one.
func (t *h1) conn(ctx context.Context, addr string, fresh bool) (*h1Conn, error) {
	for {
		t.mu.Lock()
		if t.mu.closed {
			t.mu.Unlock()
			return nil, errH1Closed
		}
		list := t.mu.idle[addr]
		if fresh || len(list) == 0 {
			t.mu.Unlock()
			break
		}
		pc := list[len(list)-1]
		list[len(list)-1] = nil
		if len(list) == 1 {
			delete(t.mu.idle, addr)
		} else {
			t.mu.idle[addr] = list[:len(list)-1]
		}
		t.mu.n--
		t.mu.Unlock()
		if time.Since(pc.idleAt) < t.idleTimeout && pc.usable() {
			return pc, nil
		}
		pc.conn.Close()
	}
	conn, err := t.dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	// Read and written without waking the runtime's monitor on every page
	// (package rawio).
	conn = rawio.NewConn(conn)
	pc := &h1Conn{t: t, key: addr, conn: conn, limit: -1}
	pc.br = bufio.NewReaderSize(pc, 16<<10)
	return pc, nil
}

// usable reports whether an idle connection can carry a request: the
// server has not closed it, and has sent nothing unasked. (net/http's
// Transport keeps reading every idle connection to know this; here it is
// asked when the connection is taken.)
func (pc *h1Conn) usable() bool {
	if pc.br.Buffered() > 0 {
		return false
	}
	return peekOpen(pc.conn)
}

// put hands back a connection whose exchange is complete.
func (t *h1) put(pc *h1Conn) {
	pc.idleAt = time.Now()
	t.mu.Lock()
	if t.mu.closed || t.mu.n >= t.maxIdle || len(t.mu.idle[pc.key]) >= t.maxIdlePerHost {
		t.mu.Unlock()
		pc.conn.Close()
		return
	}
	t.mu.idle[pc.key] = append(t.mu.idle[pc.key], pc)
	t.mu.n++
	sweep := !t.mu.sweeping
	t.mu.sweeping = true
	t.mu.Unlock()
	if sweep {
		time.AfterFunc(t.idleTimeout, t.sweep)
	}
}

// sweep closes the connections idle longer than idleTimeout and comes
// back while any are left.
func (t *h1) sweep() {
	var old []*h1Conn
	t.mu.Lock()
	for key, list := range t.mu.idle {
		keep := list[:0]
		for _, pc := range list {
			if time.Since(pc.idleAt) >= t.idleTimeout {
				old = append(old, pc)
			} else {
				keep = append(keep, pc)
			}
		}
		clear(list[len(keep):])
		if len(keep) == 0 {
			delete(t.mu.idle, key)
		} else {
			t.mu.idle[key] = keep
		}
	}
	t.mu.n -= len(old)
	again := t.mu.n > 0 && !t.mu.closed
	t.mu.sweeping = again
	t.mu.Unlock()
	for _, pc := range old {
		pc.conn.Close()
	}
	if again {
		time.AfterFunc(t.idleTimeout/2, t.sweep)
	}
}

// closeIdle closes the idle connections; with final, the transport takes
// no more.
func (t *h1) closeIdle(final bool) {
	t.mu.Lock()
	idle := t.mu.idle
	t.mu.idle = make(map[string][]*h1Conn)
	t.mu.n = 0
	if final {
		t.mu.closed = true
	}
	t.mu.Unlock()
	for _, list := range idle {
		for _, pc := range list {
			pc.conn.Close()
		}
	}
}

// h1Body is a response body read from its connection. It is read by one
// goroutine at a time, as the http.Response contract says.
type h1Body struct {
	rc   io.ReadCloser // the body http.ReadResponse made
	pc   *h1Conn
	stop func() bool // stops the context's hold on the connection
	keep bool        // the connection may carry another request after the body
	done bool
	err  error // what Read returns once done
}

func (b *h1Body) Read(p []byte) (int, error) {
	if b.done {
		return 0, b.err
	}
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.finish(true)
	}
	return n, err
}

// Close ends the exchange. A body not read to its end closes the
// connection: reading the rest only to reuse it would cost the site the
// bytes the crawler chose not to take.
func (b *h1Body) Close() error {
	if !b.done {
		b.finish(false)
		b.err = errors.New("fetch: read on closed response body")
	}
	return nil
}

func (b *h1Body) finish(complete bool) {
	b.done, b.err = true, io.EOF
	// stop fails when the context ended first and its deadline may be on
	// the connection: then the connection is not reused.
	if b.stop() && complete && b.keep {
		b.pc.t.put(b.pc)
		return
	}
	b.pc.conn.Close()
}
