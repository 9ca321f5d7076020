package fetch

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Errors for the limits a hostile or broken server can hit. Each has a
// counter in [Client.Stats]. Those that end an exchange before the response
// head come back from Do wrapped in *Error; those that end or spoil a body
// are in [Result.Cause] (and Result.Truncated says how the WARC record is
// marked).
var (
	// ErrRawTooLarge: more than MaxRawSize bytes came off the wire for one
	// body. Truncated "length".
	ErrRawTooLarge = errors.New("fetch: raw body exceeds the size limit")

	// ErrDecompressionBomb: the body decoded to more than MaxDecodeRatio
	// times the bytes received (once past 1 MiB). Truncated "length".
	ErrDecompressionBomb = errors.New("fetch: decompression bomb (decoded/received ratio exceeds the limit)")

	// ErrTooManyEncodings: Content-Encoding lists more codings than
	// MaxEncodings. The body is kept raw, not decoded (Result.Undecoded).
	ErrTooManyEncodings = errors.New("fetch: too many content codings")

	// ErrHeaderTooLarge: the response head exceeded MaxHeaderBytes. Do
	// returns it wrapped in *Error.
	ErrHeaderTooLarge = errors.New("fetch: response header exceeds the size limit")

	// ErrContentLengthMismatch: the connection ended before Content-Length
	// bytes arrived. Truncated "disconnect".
	ErrContentLengthMismatch = errors.New("fetch: body shorter than Content-Length")

	// ErrBadChunking: the chunked transfer coding was malformed (a chunk
	// size that is not hex, or too large). Truncated "disconnect".
	ErrBadChunking = errors.New("fetch: malformed chunked encoding")

	// ErrDisconnected: the connection failed or was reset during the body.
	// Truncated "disconnect".
	ErrDisconnected = errors.New("fetch: connection lost during the body")

	// ErrUnwantedType: the media type is not wanted by the TypePolicy; the
	// body was not downloaded (Result.Skipped).
	ErrUnwantedType = errors.New("fetch: unwanted media type")
)

// The time limits. Each also matches context.DeadlineExceeded with
// errors.Is and has a Timeout method returning true, so code that asks
// "was it a timeout?" keeps working.
var (
	// ErrConnectTimeout: name resolution plus TCP connect took longer than
	// ConnectTimeout.
	ErrConnectTimeout error = &timeoutError{"fetch: connect timeout"}

	// ErrTLSTimeout: the TLS handshake took longer than TLSTimeout.
	ErrTLSTimeout error = &timeoutError{"fetch: TLS handshake timeout"}

	// ErrFirstByteTimeout: no response byte arrived within FirstByteTimeout
	// of the request being sent.
	ErrFirstByteTimeout error = &timeoutError{"fetch: time to first byte exceeded"}

	// ErrTimeout: the exchange took longer than Timeout.
	ErrTimeout error = &timeoutError{"fetch: total time exceeded"}

	// ErrTooSlow: fewer than MinTransferBytes arrived in a MinTransferWindow
	// after the first byte. Truncated "time".
	ErrTooSlow error = &timeoutError{"fetch: transfer rate below the minimum"}
)

type timeoutError struct{ msg string }

func (e *timeoutError) Error() string        { return e.msg }
func (e *timeoutError) Timeout() bool        { return true }
func (e *timeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// counter indexes Client.stats. The names are those of Client.Stats.
type counter int

const (
	cBodyTooLarge counter = iota
	cRawTooLarge
	cDecompressionBomb
	cTooManyEncodings
	cUndecodable
	cDecodeError
	cHeaderTooLarge
	cConnectTimeout
	cTLSTimeout
	cFirstByteTimeout
	cTimeout
	cTooSlow
	cContentLengthMismatch
	cBadChunking
	cDisconnected
	cPrivateNetwork
	cSkippedType
	cSniffed
	cRefetched304
	cRetried
	cDNSHit
	cDNSMiss
	cDNSError
	numCounters
)

var counterNames = [numCounters]string{
	cBodyTooLarge:          "body_too_large",
	cRawTooLarge:           "raw_too_large",
	cDecompressionBomb:     "decompression_bomb",
	cTooManyEncodings:      "too_many_encodings",
	cUndecodable:           "undecodable_encoding",
	cDecodeError:           "decode_error",
	cHeaderTooLarge:        "header_too_large",
	cConnectTimeout:        "connect_timeout",
	cTLSTimeout:            "tls_timeout",
	cFirstByteTimeout:      "first_byte_timeout",
	cTimeout:               "timeout",
	cTooSlow:               "too_slow",
	cContentLengthMismatch: "content_length_mismatch",
	cBadChunking:           "bad_chunking",
	cDisconnected:          "disconnected",
	cPrivateNetwork:        "private_network",
	cSkippedType:           "skipped_type",
	cSniffed:               "sniffed_type",
	cRefetched304:          "refetched_304",
	cRetried:               "retried",
	cDNSHit:                "dns_cache_hit",
	cDNSMiss:               "dns_cache_miss",
	cDNSError:              "dns_error",
}

// counterFor maps the sentinel errors to their counters. It is a slice,
// not a map: looking up an arbitrary error in a map panics when its dynamic
// type is not comparable.
var counterFor = []struct {
	err error
	c   counter
}{
	{ErrBodyTooLarge, cBodyTooLarge},
	{ErrRawTooLarge, cRawTooLarge},
	{ErrDecompressionBomb, cDecompressionBomb},
	{ErrTooManyEncodings, cTooManyEncodings},
	{ErrHeaderTooLarge, cHeaderTooLarge},
	{ErrConnectTimeout, cConnectTimeout},
	{ErrTLSTimeout, cTLSTimeout},
	{ErrFirstByteTimeout, cFirstByteTimeout},
	{ErrTimeout, cTimeout},
	{ErrTooSlow, cTooSlow},
	{ErrContentLengthMismatch, cContentLengthMismatch},
	{ErrBadChunking, cBadChunking},
	{ErrDisconnected, cDisconnected},
	{ErrPrivateNetwork, cPrivateNetwork},
	{ErrUnwantedType, cSkippedType},
}

type stats [numCounters]atomic.Int64

func (s *stats) add(c counter) { s[c].Add(1) }

// count increments the counter of the first sentinel in err's chain.
func (s *stats) count(err error) {
	if c, ok := findCounter(err); ok {
		s.add(c)
	}
}

// findCounter returns the counter of the first sentinel in err's chain.
func findCounter(err error) (counter, bool) {
	if err == nil {
		return 0, false
	}
	for _, e := range counterFor {
		if e.err == err {
			return e.c, true
		}
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return findCounter(u.Unwrap())
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if c, ok := findCounter(e); ok {
				return c, true
			}
		}
	}
	return 0, false
}

// Stats returns a snapshot of the Client's counters: how often each limit
// was hit, bodies skipped for their type, requests sent a second time
// (retried: Result.Retried), DNS cache hits and misses, and so on. Every
// name is present, with 0 when it never happened. The names are stable
// (snake_case) so a crawl summary can print them as they are.
func (c *Client) Stats() map[string]int64 {
	m := make(map[string]int64, numCounters)
	for i := range c.stats {
		m[counterNames[i]] = c.stats[i].Load()
	}
	return m
}

// rateWatch cuts a body off when fewer than min bytes arrive in a window.
// It is armed when the response head arrives and checks once per window; a
// failing check cancels the exchange's context with ErrTooSlow.
type rateWatch struct {
	min    int64
	window time.Duration
	cancel context.CancelCauseFunc
	bytes  atomic.Int64

	mu struct {
		sync.Mutex
		t       *time.Timer
		last    int64
		stopped bool
	}
}

func (w *rateWatch) start() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.mu.stopped {
		w.mu.t = time.AfterFunc(w.window, w.check)
	}
}

func (w *rateWatch) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.stopped {
		return
	}
	n := w.bytes.Load()
	if n-w.mu.last < w.min {
		w.mu.stopped = true
		w.cancel(ErrTooSlow)
		return
	}
	w.mu.last = n
	w.mu.t.Reset(w.window)
}

func (w *rateWatch) stop() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.mu.stopped = true
	if w.mu.t != nil {
		w.mu.t.Stop()
	}
}

func (w *rateWatch) add(n int) {
	if w != nil && n > 0 {
		w.bytes.Add(int64(n))
	}
}
