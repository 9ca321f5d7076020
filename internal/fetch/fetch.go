package fetch

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/gentlecrawl/gentlecrawl/internal/httpsig"
)

var (
	// ErrPrivateNetwork is returned (wrapped in *Error) when a connection
	// would go to an address that is not public; see IsPublic.
	ErrPrivateNetwork = errors.New("fetch: refusing to connect to a private or loopback address (use --allow-private-networks)")

	// ErrBodyTooLarge is the cause of a body cut at MaxRawSize; Do reports
	// the cut as Result.Truncated "length", not as an error.
	ErrBodyTooLarge = errors.New("fetch: body exceeds the size limit")

	// ErrUnsupportedScheme is returned for URLs that are not http or https.
	ErrUnsupportedScheme = errors.New("fetch: unsupported URL scheme")
)

// Error is the error Do returns when there is no response to record: the
// name did not resolve, the connection was refused or reset before the
// response head, the address was not public, or time ran out first.
type Error struct {
	Op  string // "dial" (no connection was made), "get" (failed after connecting) or "read" (cancelled during the body)
	URL string
	Err error

	// Retried says the request was sent twice (see Result.Retried) and
	// failed the second time too.
	Retried bool
}

func (e *Error) Error() string { return "fetch " + e.Op + " " + e.URL + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// Values of Result.Truncated. They are those of the WARC-Truncated field
// (WARC 1.1 §5.13), so the WARC writer can copy them.
const (
	TruncatedLength      = "length"      // MaxBodySize, MaxRawSize or MaxDecodeRatio reached
	TruncatedTime        = "time"        // Timeout (or a deadline on ctx) expired, or the transfer was too slow
	TruncatedDisconnect  = "disconnect"  // the connection failed during the body, or ended before Content-Length
	TruncatedUnspecified = "unspecified" // the body was not downloaded on purpose (Result.Skipped)
)

// Request is one URL to fetch, with the validators of a conditional GET
// taken from the previous fetch of the same URL.
type Request struct {
	URL *url.URL

	// ETag, when non-empty, is sent verbatim as If-None-Match (weak or
	// strong; RFC 9110 §13.1.2).
	ETag string

	// LastModified, when non-empty, is sent verbatim as If-Modified-Since.
	// It must be the value the server sent, never a time from our clock
	// (RFC 9110 §13.1.3). It is sent only when it is a valid HTTP-date in
	// one of the three forms of RFC 9110 §5.6.7 (a server must ignore
	// anything else) and not in the future (the server's clock was wrong and
	// the comparison would mislead).
	LastModified string

	// AllTypes downloads the body whatever its media type, ignoring
	// Config.Types: for robots.txt and sitemaps.
	AllTypes bool

	// Pooled says the caller gives the bodies back with Result.Release
	// once it is done with them: they are then copied into reused buffers
	// instead of new ones of their size. Without it the bodies are the
	// caller's to keep.
	Pooled bool
}

// Result is one HTTP exchange.
type Result struct {
	URL    *url.URL
	Status int
	Header http.Header

	// Body is the decoded body (Content-Encoding undone), at most
	// MaxBodySize bytes. It is nil when the encoding could not be decoded
	// (see Undecoded). For an unencoded response Body and RawBody share
	// their bytes; treat both as read-only.
	Body []byte

	// RawBody is the body exactly as received (still content-encoded, but
	// with any chunked transfer coding removed), at most MaxRawSize bytes:
	// the payload of the WARC response record.
	RawBody []byte

	// Undecoded is the Content-Encoding header value when it names a coding
	// this client does not decode; Body is then nil and RawBody holds the
	// body.
	Undecoded string

	// pooled are the buffers of Body and RawBody that Release gives back;
	// pool says to take them (Request.Pooled).
	pooled [2]*[]byte
	pool   bool
	digest string // PayloadDigest, once worked out

	// DecodeErr is set when the body arrived whole but did not decode (a
	// corrupt or incomplete gzip stream, or trailing garbage). Body holds
	// what decoded before the error; Truncated stays "" because RawBody is
	// complete. When the connection failed first, the failure is reported
	// in Truncated instead.
	DecodeErr error

	// RequestRaw is the request head as sent: "GET /path?q HTTP/1.1", Host,
	// User-Agent, then the other header fields sorted by name, each line
	// ending CRLF, and a final CRLF. For HTTP/1.1 this is byte for byte what
	// net/http writes; for HTTP/2 it is the HTTP/1.1 form of the same
	// request. It is the payload of the WARC request record.
	RequestRaw []byte

	// ResponseHead is the status line and header fields as received,
	// reconstructed from the parsed response: protocol, status, then the
	// fields sorted by name in canonical case, CRLF line ends and a final
	// empty line. Transfer-Encoding is left out because RawBody is
	// de-chunked; Content-Encoding is kept because RawBody is not decoded.
	ResponseHead []byte

	RemoteAddr string        // ip:port actually connected to
	Start      time.Time     // when the exchange started
	TTFB       time.Duration // Start to the first response byte
	Duration   time.Duration // Start to End
	End        time.Time     // when the body was fully read, or cut

	// Phases of a new connection; all zero when Reused. DNS is zero when
	// the name came from the cache, --resolve or an address literal.
	DNS     time.Duration // name resolution
	Connect time.Duration // TCP connect (every address tried)
	TLS     time.Duration // TLS handshake
	Reused  bool          // the request went on a kept-alive connection

	// Retried says the request was sent a second time: it had gone on a
	// kept-alive connection that failed before any byte of the answer (the
	// server most likely closed it as the request came; net/http sends a
	// GET again then, and so does Do, once, on a new connection), or, over
	// HTTP/2, the server had refused it unprocessed (GOAWAY,
	// REFUSED_STREAM). The server may have seen it twice, never more.
	// Reused and the phases above are those of the connection that
	// answered.
	Retried bool

	// MediaType is the media type of the body in lower case without
	// parameters: the Content-Type, or what the first bytes say when that
	// is missing or generic (application/octet-stream), or when it claims
	// text for the bytes of a binary format; Sniffed then reports that the
	// bytes decided. "" when there is neither header nor body.
	MediaType string
	Sniffed   bool

	// Skipped reports that the body was not downloaded because its media
	// type is not wanted (Config.Types); Cause wraps ErrUnwantedType and
	// names the type. Body and RawBody hold what had arrived (at least the
	// first bytes, used for sniffing); Truncated is "unspecified" unless
	// that was the whole body.
	Skipped bool

	// Cause says why the body is incomplete or absent: one of
	// ErrBodyTooLarge, ErrRawTooLarge, ErrDecompressionBomb, ErrTimeout,
	// ErrTooSlow, ErrContentLengthMismatch, ErrBadChunking, ErrDisconnected
	// or ErrUnwantedType (match with errors.Is), possibly wrapped with
	// detail. It is nil for a whole body. Truncated is the WARC view of the
	// same fact.
	Cause error

	// WireBytes approximates the bytes received: len(ResponseHead) +
	// len(RawBody). It ignores chunk framing, TLS and HTTP/2 framing and
	// header compression, and the header bytes net/http normalises.
	WireBytes int64

	// Truncated is "" when the whole body was read, else why it was cut:
	// "length", "time" or "disconnect".
	Truncated string

	Conditional bool // the request carried If-None-Match or If-Modified-Since
	NotModified bool // Status is 304 and the request was conditional

	// Refetched is set when the server answered 304 to a request without
	// validators and this Result is the answer to the second, unconditional
	// request (sent with Cache-Control: no-cache).
	Refetched bool
}

// Client performs HTTP exchanges for a crawler. It is safe for concurrent
// use. Create it with New; Close releases its idle connections and waits
// for DNS lookups in flight.
type Client struct {
	cfg   Config
	tr    *http.Transport // https:// URLs (HTTP/2 or HTTP/1.1)
	h1    *h1             // http:// URLs
	dial  *dialer
	dns   *dnsCache
	log   *slog.Logger
	now   func() time.Time
	stats stats
	sign  *httpsig.Signer // nil: requests are not signed
}

// New returns a Client for cfg. It fails when cfg.UserAgent is empty or a
// field is invalid. It does not check --resolve and --connect-to targets
// against private networks (see Config.CheckTargets); dialing does.
func New(cfg Config) (*Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, now: time.Now}
	if c.sign, err = cfg.signer(); err != nil {
		return nil, err
	}
	c.dns = newDNSCache(cfg.Resolver, cfg.DNSTTL, cfg.DNSNegativeTTL, cfg.DNSCacheSize, cfg.ConnectTimeout, &c.stats)
	d := &dialer{
		connectTo:    newConnectRules(cfg.ConnectTo),
		resolve:      newResolveRules(cfg.Resolve),
		allowPrivate: cfg.AllowPrivateNetworks,
		timeout:      cfg.ConnectTimeout,
		net:          net.Dialer{KeepAlive: 30 * time.Second},
		dns:          c.dns,
	}
	var proxy func(*http.Request) (*url.URL, error)
	var connectHeader http.Header
	if p := cfg.Proxy; p != nil {
		// Only the proxies the configuration names, never one from the
		// environment behind its back; the dialer lets their addresses
		// through the private network guard, and exchange checks the
		// targets.
		proxy = func(req *http.Request) (*url.URL, error) { return p.For(req.URL), nil }
		connectHeader = http.Header{"User-Agent": {cfg.UserAgent}}
		for _, u := range []*url.URL{p.HTTP, p.HTTPS} {
			if u != nil {
				d.proxies = append(d.proxies, proxyAddr(u))
			}
		}
	}
	tr := &http.Transport{
		Proxy:              proxy,
		ProxyConnectHeader: connectHeader,
		OnProxyConnectResponse: func(_ context.Context, _ *url.URL, req *http.Request, resp *http.Response) error {
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("%w: CONNECT %s: %s", ErrProxy, req.Host, resp.Status)
			}
			return nil
		},
		DialContext:            d.DialContext,
		TLSHandshakeTimeout:    cfg.TLSTimeout, // a backstop: the trace hooks in exchange time it too
		DisableCompression:     true,           // we send Accept-Encoding and decode ourselves
		MaxIdleConns:           1024,
		MaxIdleConnsPerHost:    16, // the default of 2 closes connections a host's requests in flight would reuse
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: cfg.MaxHeaderBytes,
		ForceAttemptHTTP2:      true,
	}
	c.log = cfg.Logger
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.tr, c.dial = tr, d
	c.h1 = newH1(d.DialContext, cfg.MaxHeaderBytes)
	return c, nil
}

// Close closes idle connections and waits for DNS lookups in flight. A
// Client must not be used after Close.
func (c *Client) Close() {
	c.tr.CloseIdleConnections()
	c.h1.closeIdle(true)
	c.dns.close()
}

// Do performs one GET of req.URL. Redirects are not followed.
//
// It returns an error only when there is no HTTP response to record at all,
// or when ctx is cancelled (not merely past its deadline) during the body;
// such errors are *Error and unwrap to the cause (ErrPrivateNetwork,
// ErrHeaderTooLarge, ErrConnectTimeout, ErrTLSTimeout, ErrFirstByteTimeout,
// ErrTimeout, *net.DNSError, ...; the time limits also match
// context.DeadlineExceeded). A response cut short by a limit, the deadline
// or the server is a Result with Truncated and Cause set.
//
// A 304 to a request that carried no validators is a server or cache bug;
// Do then fetches once more, unconditionally and with Cache-Control:
// no-cache, and returns that answer with Refetched set.
func (c *Client) Do(ctx context.Context, req Request) (*Result, error) {
	if req.URL == nil {
		return nil, &Error{Op: "get", Err: errors.New("fetch: nil URL")}
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" || req.URL.Host == "" {
		return nil, &Error{Op: "get", URL: req.URL.String(), Err: ErrUnsupportedScheme}
	}
	res, err := c.exchange(ctx, req, false)
	c.counted(res, err)
	if err != nil || res.Status != http.StatusNotModified || res.Conditional {
		return res, err
	}
	c.log.LogAttrs(ctx, slog.LevelDebug, "fetch: 304 without validators; fetching again", slog.String("url", req.URL.String()))
	c.stats.add(cRefetched304)
	res, err = c.exchange(ctx, Request{URL: req.URL, AllTypes: req.AllTypes}, true)
	c.counted(res, err)
	if res != nil {
		res.Refetched = true
	}
	return res, err
}

// counted adds an exchange's outcome to the counters.
func (c *Client) counted(res *Result, err error) {
	var fe *Error
	if res != nil && res.Retried || errors.As(err, &fe) && fe.Retried {
		c.stats.add(cRetried)
	}
	if err != nil {
		c.stats.count(err)
	}
}

// exchange sends one request and reads its response within the limits.
//
// A GET on a kept-alive connection that fails before any byte of the
// answer is sent once more on a new connection, as net/http does: by h1
// for http://, by the Transport for https://, whose replays the trace
// holds to the same rule (traceInfo.replayOn).
func (c *Client) exchange(parent context.Context, req Request, noCache bool) (*Result, error) {
	// Each limit cancels ctx with its own cause, so the error says which.
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	ctx, cancelT := context.WithTimeoutCause(ctx, c.cfg.Timeout, ErrTimeout)
	defer cancelT()

	u := req.URL
	host := hostHeader(u.Host)
	h := c.header(req, noCache)
	if c.sign != nil {
		// Signed for this request's authority, after every other field
		// is set: what is recorded below is what is sent.
		if err := c.sign.Sign(h, u.Scheme, host, c.now()); err != nil {
			return nil, &Error{Op: "get", URL: u.String(), Err: err}
		}
	}
	res := &Result{
		URL:         u,
		RequestRaw:  requestRaw(u, host, h),
		Conditional: h.Get("If-None-Match") != "" || h.Get("If-Modified-Since") != "",
	}

	tr := &traceInfo{now: c.now, cancel: cancel, tlsLimit: c.cfg.TLSTimeout, firstByteLimit: c.cfg.FirstByteTimeout}
	defer tr.stopTimers()
	ctx = httptrace.WithClientTrace(ctx, tr.clientTrace())
	// The request is built around u itself rather than a re-parse of its
	// string form, so what is sent is exactly the URL the crawler chose.
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
	if err != nil {
		return nil, &Error{Op: "get", URL: u.String(), Err: err}
	}
	hreq.URL = u
	hreq.Host = host
	hreq.Header = h

	res.Start = c.now()
	proxy := c.cfg.Proxy.For(u)
	if proxy != nil && !c.cfg.AllowPrivateNetworks {
		// The proxy connects to the server, but the guard is the
		// crawler's: the target is checked where it resolves here.
		if err := c.dial.checkTarget(ctx, u); err != nil {
			return nil, &Error{Op: "dial", URL: u.String(), Err: err}
		}
	}
	var resp *http.Response
	switch {
	case u.Scheme == "http" && proxy == nil:
		// Exactly the bytes recorded go out.
		resp, err = c.h1.roundTrip(hreq, res.RequestRaw, canonicalAddr(u))
	case u.Scheme == "http":
		// The same request in absolute form, to the proxy.
		resp, err = c.h1.roundTrip(hreq, proxyRequest(res.RequestRaw, host, proxyAuth(proxy)), proxyAddr(proxy))
		if err == nil && resp.StatusCode == http.StatusProxyAuthRequired {
			resp.Body.Close()
			err = fmt.Errorf("%w: 407 %s", ErrProxy, http.StatusText(http.StatusProxyAuthRequired))
		}
	default:
		// No body: a GET the Transport may replay (see replayOn).
		resp, err = c.tr.RoundTrip(hreq)
	}
	headAt := c.now()
	tr.stopTimers()
	tr.mu.Lock()
	remote, firstByte, connected, reused := tr.remote, tr.firstByte, tr.connected, tr.reused
	retried := tr.resent
	res.DNS, res.Connect, res.TLS = tr.dns, tr.connect, tr.tls
	tr.mu.Unlock()
	if err != nil {
		err = c.roundTripError(ctx, err)
		op := "get"
		if !connected {
			op = "dial"
		}
		c.log.LogAttrs(ctx, slog.LevelDebug, "fetch failed", slog.String("url", u.String()), slog.Bool("retried", retried), slog.Any("err", err))
		return nil, &Error{Op: op, URL: u.String(), Err: err, Retried: retried}
	}
	if firstByte.IsZero() {
		firstByte = headAt
	}
	res.Status = resp.StatusCode
	res.Header = resp.Header
	res.ResponseHead = responseHead(resp)
	res.RemoteAddr = remote
	res.Reused = reused
	res.Retried = retried
	res.TTFB = firstByte.Sub(res.Start)
	res.NotModified = res.Status == http.StatusNotModified && res.Conditional

	var watch *rateWatch
	if c.cfg.MinTransferBytes > 0 {
		watch = &rateWatch{min: c.cfg.MinTransferBytes, window: c.cfg.MinTransferWindow, cancel: cancel}
		watch.start()
	}
	types := c.cfg.Types
	if req.AllTypes {
		types = nil
	}
	res.pool = req.Pooled
	err = c.readBody(ctx, resp, res, types, watch)
	watch.stop()
	if err != nil {
		return nil, &Error{Op: "read", URL: u.String(), Err: err}
	}
	res.End = c.now()
	res.Duration = res.End.Sub(res.Start)
	res.WireBytes = int64(len(res.ResponseHead) + len(res.RawBody))

	c.log.LogAttrs(ctx, slog.LevelDebug, "fetched",
		slog.String("url", u.String()),
		slog.Int("status", res.Status),
		slog.Bool("retried", res.Retried),
		slog.String("remote", res.RemoteAddr),
		slog.Int("raw", len(res.RawBody)),
		slog.Int("body", len(res.Body)),
		slog.Duration("ttfb", res.TTFB),
		slog.Duration("duration", res.Duration),
		slog.String("truncated", res.Truncated))
	return res, nil
}

// roundTripError names the limit behind a RoundTrip failure.
func (c *Client) roundTripError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		if cause := context.Cause(ctx); cause != nil && !errors.Is(err, cause) {
			return fmt.Errorf("%w: %w", cause, err)
		}
		return err
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "response headers exceeded"), // HTTP/1.1
		strings.Contains(msg, "header list larger than"): // HTTP/2
		return fmt.Errorf("%w (%d bytes): %w", ErrHeaderTooLarge, c.cfg.MaxHeaderBytes, err)
	case strings.Contains(msg, "TLS handshake timeout"):
		return fmt.Errorf("%w: %w", ErrTLSTimeout, err)
	}
	if op := (*net.OpError)(nil); errors.As(err, &op) && op.Op == "proxyconnect" && !errors.Is(err, ErrPrivateNetwork) {
		return fmt.Errorf("%w: %w", ErrProxy, err)
	}
	return err
}

// header builds the request header fields other than Host.
func (c *Client) header(req Request, noCache bool) http.Header {
	h := make(http.Header, 8)
	h.Set("User-Agent", c.cfg.UserAgent)
	if c.cfg.From != "" {
		h.Set("From", c.cfg.From)
	}
	h.Set("Accept", c.cfg.Accept)
	h.Set("Accept-Encoding", c.cfg.AcceptEncoding)
	// Validators come from a server's response; one that is not a valid
	// field value would make net/http refuse the whole request, so it is
	// dropped and the request goes out unconditional.
	if req.ETag != "" && httpguts.ValidHeaderFieldValue(req.ETag) {
		h.Set("If-None-Match", req.ETag)
	}
	if lm := req.LastModified; lm != "" && httpguts.ValidHeaderFieldValue(lm) {
		// RFC 9110 §13.1.3: a recipient must ignore an If-Modified-Since
		// that is not a valid HTTP-date, so one is not worth sending.
		if t, ok := ParseHTTPDate(lm); ok && !t.After(c.now()) {
			h.Set("If-Modified-Since", lm)
		}
	}
	if noCache {
		h.Set("Cache-Control", "no-cache")
	}
	return h
}

// hostHeader returns the Host header net/http sends for a URL host: the
// IDNA (punycode) form, without an IPv6 zone.
func hostHeader(host string) string {
	if h, err := httpguts.PunycodeHostPort(host); err == nil {
		host = h
	}
	// net/http drops an IPv6 zone ("[fe80::1%25en0]") from the Host header.
	if strings.HasPrefix(host, "[") {
		if i := strings.IndexByte(host, '%'); i >= 0 {
			if j := strings.IndexByte(host[i:], ']'); j >= 0 {
				host = host[:i] + host[i+j:]
			}
		}
	}
	return host
}

// traceInfo collects what httptrace reports about one exchange, runs the
// TLS and first-byte timers, and holds the Transport's replays to Do's rule
// (replayOn). The callbacks may run on the Transport's goroutines, hence
// the lock.
type traceInfo struct {
	now            func() time.Time
	cancel         context.CancelCauseFunc
	tlsLimit       time.Duration
	firstByteLimit time.Duration

	mu         sync.Mutex
	remote     string
	connected  bool
	reused     bool // the connection had carried earlier requests
	conns      int  // connections the request was given: more than one when it was replayed
	written    int  // times the request was written in full
	resent     bool // once written, it was given another connection to be sent again
	firstByte  time.Time
	dnsStart   time.Time
	dns        time.Duration
	connStart  time.Time
	connect    time.Duration
	tlsStart   time.Time
	tls        time.Duration
	tlsTimer   *time.Timer
	firstTimer *time.Timer
	stopped    bool
}

// errReplayLimit ends an exchange whose request was sent twice when the
// Transport would replay it once more.
var errReplayLimit = errors.New("fetch: the request was sent twice; not a third time")

// replayOn says whether the request, failed on one connection and given
// conn by the Transport to be sent again, may be written on it; it is
// called with t.mu held. The rule is Do's (h1 keeps it by itself): once,
// on a new connection. net/http replays a GET whenever a kept-alive
// connection failed before any byte of the answer, on whatever connection
// its pool holds, as long as each it takes was kept alive too: with many
// idle connections to a host that closed them all, a request would go out
// as often. So a kept-alive connection offered for a replay is closed
// before anything is written to it (the Transport then takes the next, and
// in the end dials), and once the request has been let go again, a further
// replay ends the exchange: the new connection's failure is the answer.
//
// The replay of a request written before is Result.Retried from here: a
// second WroteRequest would say it too, but HTTP/2 may report that after
// the answer is in.
//
// HTTP/2 replays what the server provably did not process (a stream above
// the last one a GOAWAY names, REFUSED_STREAM) and a connection found
// unusable before anything was sent, on the same connection or another.
// Such a connection carries other requests and is not closed; the limit of
// two writes holds all the same. HTTP/2 does not replay a request whose
// connection was lost after it was sent, and neither does Do: a server
// closes an idle HTTP/2 connection with a GOAWAY, so the race that
// net/http's HTTP/1 replay is for does not arise there.
func (t *traceInfo) replayOn(conn net.Conn, reused bool) bool {
	h2 := false
	if tc, ok := conn.(*tls.Conn); ok {
		h2 = tc.ConnectionState().NegotiatedProtocol == "h2"
	}
	switch {
	case t.resent:
		t.cancel(errReplayLimit)
	case reused && !h2:
	default:
		t.resent = t.written > 0
		return true
	}
	if !h2 {
		closeRaw(conn)
	}
	return false
}

// closeRaw closes the TCP connection under conn, so that nothing more is
// written to it (a TLS close_notify included).
func closeRaw(conn net.Conn) {
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn()
	}
	if conn != nil {
		conn.Close()
	}
}

func (t *traceInfo) clientTrace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		DNSStart: func(httptrace.DNSStartInfo) {
			at := t.now()
			t.mu.Lock()
			defer t.mu.Unlock()
			t.dnsStart = at
		},
		DNSDone: func(httptrace.DNSDoneInfo) {
			at := t.now()
			t.mu.Lock()
			defer t.mu.Unlock()
			if !t.dnsStart.IsZero() {
				t.dns += at.Sub(t.dnsStart)
			}
		},
		ConnectStart: func(string, string) {
			at := t.now()
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.connStart.IsZero() {
				t.connStart = at
			}
		},
		ConnectDone: func(string, string, error) {
			at := t.now()
			t.mu.Lock()
			defer t.mu.Unlock()
			t.connect = at.Sub(t.connStart)
		},
		TLSHandshakeStart: func() {
			at := t.now()
			t.mu.Lock()
			defer t.mu.Unlock()
			t.tlsStart = at
			switch {
			case t.stopped:
			case t.tlsTimer == nil:
				t.tlsTimer = time.AfterFunc(t.tlsLimit, func() { t.cancel(ErrTLSTimeout) })
			default:
				t.tlsTimer.Reset(t.tlsLimit) // a replay's new connection
			}
		},
		TLSHandshakeDone: func(tls.ConnectionState, error) {
			at := t.now()
			t.mu.Lock()
			defer t.mu.Unlock()
			t.tls = at.Sub(t.tlsStart)
			if t.tlsTimer != nil {
				t.tlsTimer.Stop()
			}
		},
		GotConn: func(info httptrace.GotConnInfo) {
			t.mu.Lock()
			defer t.mu.Unlock()
			t.conns++
			if t.conns > 1 && !t.replayOn(info.Conn, info.Reused) {
				return
			}
			t.connected = true
			t.reused = info.Reused
			if info.Conn != nil {
				t.remote = info.Conn.RemoteAddr().String()
			}
		},
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			t.mu.Lock()
			defer t.mu.Unlock()
			if info.Err != nil {
				return
			}
			t.written++
			switch {
			case t.stopped || !t.firstByte.IsZero():
			case t.firstTimer == nil:
				t.firstTimer = time.AfterFunc(t.firstByteLimit, func() { t.cancel(ErrFirstByteTimeout) })
			default:
				t.firstTimer.Reset(t.firstByteLimit) // a replay: the limit counts from its write
			}
		},
		GotFirstResponseByte: func() {
			at := t.now()
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.firstByte.IsZero() {
				t.firstByte = at
			}
			if t.firstTimer != nil {
				t.firstTimer.Stop()
			}
		},
	}
}

// stopTimers stops the TLS and first-byte timers, for good: once the
// response head is in (or the round trip failed) they have no more to say.
func (t *traceInfo) stopTimers() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	if t.tlsTimer != nil {
		t.tlsTimer.Stop()
	}
	if t.firstTimer != nil {
		t.firstTimer.Stop()
	}
}
