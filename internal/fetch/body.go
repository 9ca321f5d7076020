package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/gentlecrawl/gentlecrawl/internal/inflate"
)

const (
	// sniffLen is how many decoded bytes are read before the media type is
	// decided (the 512 of the WHATWG MIME Sniffing Standard §7).
	sniffLen = 512

	// bombFloor is how many bytes must decode before MaxDecodeRatio is
	// checked, so a small page that compresses very well is never mistaken
	// for a bomb.
	bombFloor = 1 << 20
)

// readBody reads resp.Body into res within the caps, and closes it. The
// returned error is non-nil only when ctx was cancelled by the caller (the
// crawl is stopping and nothing should be recorded); every other way a body
// can end is recorded in res. types may be nil (every type wanted); watch
// may be nil (no minimum rate).
func (c *Client) readBody(ctx context.Context, resp *http.Response, res *Result, types *TypePolicy, watch *rateWatch) error {
	defer resp.Body.Close()
	codings, unsupported, tooMany := contentCodings(resp.Header, c.cfg.MaxEncodings)
	res.Undecoded = unsupported
	switch {
	case tooMany:
		res.DecodeErr = fmt.Errorf("%w: %q (at most %d)", ErrTooManyEncodings, unsupported, c.cfg.MaxEncodings)
		c.stats.add(cTooManyEncodings)
	case unsupported != "":
		c.stats.add(cUndecodable)
	}

	var src io.Reader = resp.Body
	if watch != nil {
		src = &countingReader{r: resp.Body, w: watch}
	}
	raw := &recorder{r: src, limit: c.cfg.MaxRawSize, limitErr: ErrRawTooLarge}
	defer raw.release()
	var body *recorder // the body as it streams in; nil when whole or when it cannot be decoded
	var whole wholeFunc
	switch {
	case unsupported != "":
	case len(codings) == 0:
		// Unencoded: the raw bytes are the body, so one buffer and the
		// smaller cap serve both.
		if c.cfg.MaxBodySize <= raw.limit {
			raw.limit, raw.limitErr = c.cfg.MaxBodySize, ErrBodyTooLarge
		}
		body = raw
	default:
		if whole = wholeDecoder(codings); whole == nil {
			var release func()
			body, release = c.streamBody(codings, raw, raw)
			defer release()
		}
	}
	if n := resp.ContentLength; n > 0 && n <= maxExact {
		// The size is announced: read into a buffer of exactly that size
		// (a longer body is cut by net/http, a shorter one fails).
		raw.buf = make([]byte, 0, min(n, raw.limit))
	} else {
		raw.chunked()
	}

	// The media type: declared, or sniffed from the first decoded bytes.
	ct := resp.Header.Get("Content-Type")
	sniffLater := false
	var head []byte
	var headBuf [sniffLen]byte
	switch {
	case whole != nil && !genericTypes[mediaTypeOf(ct)]:
		// A declared type is sniffed only to catch a binary format's
		// bytes behind a text type, which servers do not compress: the
		// head is read from the body once it is decoded whole, not
		// decoded twice.
		sniffLater = true
	case whole != nil:
		head = wholeHead(raw, whole, headBuf[:0])
	case body != nil:
		head = streamHead(body)
	}
	if !sniffLater && c.unwanted(res, ct, head, types) {
		c.skip(res, raw, body, head)
		// Closing the body unread drops the connection: cheaper for the
		// site than sending the rest.
		return nil
	}

	if whole != nil {
		if raw.limit <= wholeMax {
			raw.fill(raw.limit, true)
		} else {
			raw.fill(wholeMax, false)
		}
		if raw.err == nil {
			// Too long to decode whole: decode it as it streams in,
			// from its first byte.
			var release func()
			body, release = c.streamBody(codings, replay(raw), raw)
			defer release()
			whole = nil
			if sniffLater {
				sniffLater = false
				if c.unwanted(res, ct, streamHead(body), types) {
					c.skip(res, raw, body, nil)
					return nil
				}
			}
		}
	}
	if body != nil {
		body.fill(body.limit, true)
	}
	drain := body != raw && raw.err == nil
	if body != nil && body != raw && (body.over || errors.Is(body.err, ErrDecompressionBomb)) {
		drain = false // a cut: stop reading
	}
	if drain {
		// Read what follows the end of the compressed stream (or the whole
		// body when it is not decoded), so RawBody is what the server sent
		// and the connection can be reused.
		raw.fill(raw.limit, true)
	}
	if res.pool {
		res.RawBody, res.pooled[0] = raw.takePooled()
	} else {
		res.RawBody = raw.take()
	}
	var wholeErr error
	switch {
	case whole != nil:
		res.Body, res.pooled[1], wholeErr = c.wholeBody(res.RawBody, codings[0], whole, res.pool)
		if sniffLater && c.unwanted(res, ct, res.Body[:min(len(res.Body), sniffLen)], types) {
			c.markSkipped(res) // read whole, and kept
			return nil
		}
	case body == raw:
		res.Body = res.RawBody
	case body != nil && res.pool:
		res.Body, res.pooled[1] = body.takePooled()
	case body != nil:
		res.Body = body.take()
	}

	switch {
	case body != nil && body.over, wholeErr == ErrBodyTooLarge:
		res.Truncated, res.Cause = TruncatedLength, ErrBodyTooLarge
	case body != nil && errors.Is(body.err, ErrDecompressionBomb), wholeErr == ErrDecompressionBomb:
		res.Truncated, res.Cause = TruncatedLength, ErrDecompressionBomb
	case raw.over:
		res.Truncated, res.Cause = TruncatedLength, raw.limitErr
	case raw.failed():
		trunc, cause, stop := cutReason(ctx, raw.err, resp)
		if stop != nil {
			return stop
		}
		res.Truncated, res.Cause = trunc, cause
	case body != nil && body.failed(), wholeErr != nil:
		err := wholeErr
		if body != nil {
			err = body.err
		}
		res.DecodeErr = fmt.Errorf("fetch: decoding %s: %w", strings.Join(codings, ", "), err)
		c.stats.add(cDecodeError)
	}
	c.stats.count(res.Cause)
	return nil
}

// unwanted sets res's media type, declared as ct or sniffed from head,
// the first decoded bytes, and reports whether types does not want it.
func (c *Client) unwanted(res *Result, ct string, head []byte, types *TypePolicy) bool {
	res.MediaType, res.Sniffed = effectiveType(ct, head)
	if res.Sniffed {
		c.stats.add(cSniffed)
	}
	return types != nil && res.MediaType != "" && !types.Wanted(res.MediaType)
}

// markSkipped records that res's body was not wanted for its type.
func (c *Client) markSkipped(res *Result) {
	res.Skipped = true
	res.Cause = fmt.Errorf("%w: %s", ErrUnwantedType, res.MediaType)
	c.stats.add(cSkippedType)
}

// skip records a body left unread for its type: what was read of it raw
// and decoded (body's, or head when the decoding was not kept).
func (c *Client) skip(res *Result, raw, body *recorder, head []byte) {
	c.markSkipped(res)
	res.RawBody = raw.take()
	switch {
	case body == raw:
		res.Body = res.RawBody
	case body != nil:
		res.Body = body.take()
	case len(head) > 0:
		res.Body = bytes.Clone(head)
	}
	if raw.err != io.EOF {
		res.Truncated = TruncatedUnspecified
	}
}

// streamHead returns the first sniffLen bytes of a body as it streams in,
// reading them first.
func streamHead(body *recorder) []byte {
	body.fill(sniffLen, false)
	head := body.head()
	return head[:min(len(head), sniffLen)]
}

// streamBody returns a recorder of the body decoded from src as it is
// read, src being raw or a replay of it, and a function that closes the
// decoders and gives the recorder's buffers back.
func (c *Client) streamBody(codings []string, src io.Reader, raw *recorder) (*recorder, func()) {
	// The codings were applied in order, so undo them in reverse.
	r := src
	ds := make([]*lazyDecoder, 0, len(codings))
	for i := len(codings) - 1; i >= 0; i-- {
		d := &lazyDecoder{src: r, open: decoders[codings[i]]}
		ds = append(ds, d)
		r = d
	}
	guard := &bombGuard{r: r, raw: raw, ratio: c.cfg.MaxDecodeRatio, floor: bombFloor}
	// How far the body decodes is unknown until it has, so it is read
	// into chunks and copied out at its final size.
	body := &recorder{r: guard, limit: c.cfg.MaxBodySize, limitErr: ErrBodyTooLarge}
	body.chunked()
	return body, func() {
		body.release()
		for _, d := range ds {
			d.Close()
		}
	}
}

// wholeBody decodes raw, a whole body of the given coding, within the
// client's caps, into a buffer of the body pool when pool is set and one
// fits it (returned too; nil otherwise).
func (c *Client) wholeBody(raw []byte, coding string, dec wholeFunc, pool bool) ([]byte, *[]byte, error) {
	// gzip's trailer gives the decoded size of a one-member body: the
	// buffer is made once, at its size. A wrong size costs a copy.
	size := min(c.cfg.MaxBodySize, 8*int64(len(raw)))
	if n, ok := inflate.GzipSize(raw); ok && coding != "deflate" && int64(n) <= c.cfg.MaxBodySize {
		size = int64(n)
	}
	if r := c.cfg.MaxDecodeRatio; r > 0 {
		size = min(size, max(bombFloor, r*int64(len(raw)))) // a bomb's honest trailer is not a reason to allocate
	}
	size = max(size, 1)
	var p *[]byte
	var dst []byte
	if pool && size <= maxPooledBody {
		p = getBodyBuf(int(size))
		dst = (*p)[:0]
	} else {
		dst = make([]byte, 0, size)
	}
	out, err := decodeWhole(dst, dec, raw, c.cfg.MaxBodySize, c.cfg.MaxDecodeRatio, true)
	if p != nil && (len(out) == 0 || &out[:1][0] != &(*p)[:1][0]) {
		// Empty, or grown out of the pool's buffer: give it back.
		bodyPools[bodyClass(cap(*p))].Put(p)
		p = nil
	}
	if len(out) == 0 {
		return nil, nil, err
	}
	return out[:len(out):len(out)], p, err
}

// cutReason says why a body read failed: the exchange's time limits, the
// caller stopping (stop is then non-nil), or the server.
func cutReason(ctx context.Context, err error, resp *http.Response) (truncated string, cause, stop error) {
	if ctx.Err() != nil {
		c := context.Cause(ctx)
		switch {
		case errors.Is(c, ErrTooSlow):
			return TruncatedTime, ErrTooSlow, nil
		case errors.Is(c, context.DeadlineExceeded):
			return TruncatedTime, ErrTimeout, nil
		}
		return "", nil, ctx.Err()
	}
	chunked := slices.Contains(resp.TransferEncoding, "chunked")
	switch {
	case chunked && strings.Contains(err.Error(), "chunk"):
		// net/http's chunked reader: "invalid byte in chunk length",
		// "http chunk length too large", "malformed chunked encoding".
		return TruncatedDisconnect, fmt.Errorf("%w: %v", ErrBadChunking, err), nil
	case !chunked && resp.ContentLength > 0 && errors.Is(err, io.ErrUnexpectedEOF):
		return TruncatedDisconnect, fmt.Errorf("%w: Content-Length %d", ErrContentLengthMismatch, resp.ContentLength), nil
	}
	return TruncatedDisconnect, fmt.Errorf("%w: %v", ErrDisconnected, err), nil
}

// countingReader tells a rateWatch how many bytes arrive.
type countingReader struct {
	r io.Reader
	w *rateWatch
}

func (cr *countingReader) Read(p []byte) (int, error) {
	n, err := cr.r.Read(p)
	cr.w.add(n)
	return n, err
}

// maxExact is the largest Content-Length for which the raw buffer is made
// at exactly that size up front; a larger announced body is read like one of
// unknown size, so a lying header cannot make us allocate much before the
// bytes arrive.
const maxExact = 4 << 20

// Chunks: a body of unknown size is read into a chain of reused buffers and
// then copied once into a slice of its final size (take), so it costs one
// allocation of its own size instead of the about twice its size of a
// buffer growing by doubling, and nothing is copied while it grows. A
// sync.Pool alone loses its buffers at every garbage collection, which a
// crawl does often, so up to chunkFree buffers are kept in a free list
// across collections and the rest in the pool. New chunks are as large as
// what the body holds so far (at least chunkMin, at most chunkMax), so a
// large body takes few of them.
const (
	chunkMin  = 32 << 10
	chunkMax  = 256 << 10
	chunkFree = 16
)

// The free list is a stack, last in first out: the chunk given back last is
// the one still in the processor's caches.
var (
	chunkList struct {
		sync.Mutex
		free []*[]byte
	}
	chunkPool sync.Pool // *[]byte
)

// getChunk returns an empty buffer, of at least size bytes when a new one
// has to be made.
func getChunk(size int64) *[]byte {
	chunkList.Lock()
	if n := len(chunkList.free); n > 0 {
		b := chunkList.free[n-1]
		chunkList.free = chunkList.free[:n-1]
		chunkList.Unlock()
		return b
	}
	chunkList.Unlock()
	if b, ok := chunkPool.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, min(max(size, chunkMin), chunkMax))
	return &b
}

func putChunk(b *[]byte) {
	*b = (*b)[:0]
	chunkList.Lock()
	if len(chunkList.free) < chunkFree {
		chunkList.free = append(chunkList.free, b)
		chunkList.Unlock()
		return
	}
	chunkList.Unlock()
	chunkPool.Put(b)
}

// recorder keeps every byte read from r, up to limit. Read passes the
// bytes on (for a decoder); fill reads into the buffer directly. At the
// limit it probes for one more byte; if there is one, over is set and reads
// fail with limitErr, without that byte: the bytes recorded never exceed
// limit.
//
// By default the bytes are in buf, which grows by doubling and is the
// recorder's own: take returns it. After chunked, they are in a chain of
// reused buffers instead, buf being the last of them; take copies them out
// and release gives the buffers back.
type recorder struct {
	r        io.Reader
	limit    int64
	limitErr error
	buf      []byte
	over     bool  // more than limit bytes were available
	err      error // first error from r, io.EOF included; sticky

	// When chunked: the first chunk and the ones after it; the last is
	// buf's, each earlier one holds what was read into it.
	first  *[]byte
	more   []*[]byte
	before int64 // bytes in the chunks before buf
}

// chunked makes the recorder read into reused chunks. It must be called
// before anything is read.
func (rc *recorder) chunked() {
	rc.first = getChunk(chunkMin)
	rc.buf = *rc.first
}

// size returns how many bytes are recorded.
func (rc *recorder) size() int64 { return rc.before + int64(len(rc.buf)) }

// head returns the first bytes recorded: at least n when there are n and
// n <= chunkMin.
func (rc *recorder) head() []byte {
	if len(rc.more) > 0 {
		return *rc.first
	}
	return rc.buf
}

// nextChunk moves on to a new chunk when buf is full.
func (rc *recorder) nextChunk() {
	last := rc.first
	if len(rc.more) > 0 {
		last = rc.more[len(rc.more)-1]
	}
	*last = rc.buf
	rc.before += int64(len(rc.buf))
	c := getChunk(rc.before)
	rc.more = append(rc.more, c)
	rc.buf = *c
}

// record appends p to the bytes recorded.
func (rc *recorder) record(p []byte) {
	if rc.first == nil {
		rc.buf = append(rc.buf, p...)
		return
	}
	for len(p) > 0 {
		if len(rc.buf) == cap(rc.buf) {
			rc.nextChunk()
		}
		n := copy(rc.buf[len(rc.buf):cap(rc.buf)], p)
		rc.buf, p = rc.buf[:len(rc.buf)+n], p[n:]
	}
}

// take returns the bytes recorded, in a slice the caller owns: buf itself,
// or when chunked a copy of exactly their length (nil when there are none).
func (rc *recorder) take() []byte {
	if rc.first == nil {
		return rc.buf
	}
	if rc.size() == 0 {
		return nil
	}
	// bytes.Join of two or more parts allocates without zeroing first.
	var inline [8][]byte
	return bytes.Join(append(rc.parts(inline[:0]), nil), nil)
}

// parts appends the recorded bytes to dst, chunk by chunk, in order.
func (rc *recorder) parts(dst [][]byte) [][]byte {
	if len(rc.more) > 0 {
		dst = append(dst, *rc.first)
		for _, c := range rc.more[:len(rc.more)-1] {
			dst = append(dst, *c)
		}
	}
	return append(dst, rc.buf)
}

// takePooled is take, into a buffer of the body pool when the bytes are in
// chunks, which it returns too (nil when none was used): Result.Release
// gives it back.
func (rc *recorder) takePooled() ([]byte, *[]byte) {
	if rc.first == nil || rc.size() == 0 || rc.size() > maxPooledBody {
		return rc.take(), nil
	}
	p := getBodyBuf(int(rc.size()))
	b := (*p)[:0]
	var inline [8][]byte
	for _, part := range rc.parts(inline[:0]) {
		b = append(b, part...)
	}
	return b[:len(b):len(b)], p
}

// The body pool: buffers in powers of two from 4 KiB to maxPooledBody,
// for a caller that gives the bodies back (Result.Release). Decoded pages
// are a large part of what a crawl allocates; given back, they cost no
// allocation and no collection.
const (
	minPooledBody = 12 // 4 KiB, as a power of two
	maxPooledBody = 4 << 20
)

var bodyPools [23 - minPooledBody]sync.Pool // *[]byte, by size class

// bodyClass returns the class of a buffer of n bytes, n ≤ maxPooledBody.
func bodyClass(n int) int {
	return max(bits.Len(uint(n-1)), minPooledBody) - minPooledBody
}

func getBodyBuf(n int) *[]byte {
	c := bodyClass(n)
	if p, ok := bodyPools[c].Get().(*[]byte); ok {
		return p
	}
	b := make([]byte, 1<<(c+minPooledBody))
	return &b
}

// Release gives the buffers of Body and RawBody back for the bodies of
// later responses, and sets both to nil: nothing may use them after, even
// a slice taken before. A caller that keeps the bodies does not call it;
// they are then the garbage collector's as any other memory.
func (r *Result) Release() {
	for i, p := range r.pooled {
		if p != nil {
			bodyPools[bodyClass(cap(*p))].Put(p)
			r.pooled[i] = nil
		}
	}
	r.Body, r.RawBody = nil, nil
}

// release gives the chunks back for reuse; the recorder's bytes must not be
// used after. It may be called more than once.
func (rc *recorder) release() {
	if rc.first == nil {
		return
	}
	putChunk(rc.first)
	for _, c := range rc.more {
		putChunk(c)
	}
	rc.first, rc.more, rc.buf, rc.before = nil, nil, nil, 0
}

func (rc *recorder) Read(p []byte) (int, error) {
	if rc.err != nil {
		return 0, rc.err
	}
	room := rc.limit - rc.size()
	if room <= 0 {
		rc.probe()
		return 0, rc.err
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	n, err := rc.r.Read(p)
	rc.record(p[:n])
	if err != nil {
		rc.err = err
	}
	return n, err
}

// fill reads into buf until it holds upto bytes (at most limit) or r ends.
// With toEnd it goes on to the end of r or the limit, probing there.
// Without, each read asks for at most 4 KiB more than upto, so a body that
// is not wanted after its first bytes is not downloaded whole.
func (rc *recorder) fill(upto int64, toEnd bool) {
	if toEnd {
		upto = rc.limit
	}
	upto = min(upto, rc.limit)
	for rc.err == nil && rc.size() < upto {
		if len(rc.buf) == cap(rc.buf) {
			if rc.first != nil {
				rc.nextChunk()
				continue
			}
			// Full: see whether anything follows before growing, so a body
			// that exactly fills a buffer sized from Content-Length does
			// not double it to read the EOF.
			var one [1]byte
			n, err := rc.r.Read(one[:])
			if n == 0 {
				if err != nil {
					rc.err = err
				}
				continue
			}
			newCap := min(max(2*int64(cap(rc.buf)), 4096), rc.limit)
			rc.buf = append(make([]byte, 0, newCap), rc.buf...)
			rc.buf = append(rc.buf, one[0])
			if err != nil {
				rc.err = err
			}
			continue
		}
		space := rc.buf[len(rc.buf):cap(rc.buf)]
		want := rc.limit - rc.size()
		if !toEnd {
			want = min(max(upto-rc.size(), 4096), want)
		}
		if int64(len(space)) > want {
			space = space[:want]
		}
		n, err := rc.r.Read(space)
		rc.buf = rc.buf[:len(rc.buf)+n]
		if err != nil {
			rc.err = err
		}
	}
	if toEnd && rc.err == nil && rc.size() >= rc.limit {
		rc.probe()
	}
}

// probe reads one byte past the limit to tell "exactly limit bytes" from
// "more".
func (rc *recorder) probe() {
	var one [1]byte
	for {
		n, err := rc.r.Read(one[:])
		switch {
		case n > 0:
			rc.over = true
			rc.err = rc.limitErr
			return
		case err != nil:
			rc.err = err
			return
		}
	}
}

// failed reports whether reading stopped for a reason other than a clean end.
func (rc *recorder) failed() bool { return rc.err != nil && rc.err != io.EOF }
