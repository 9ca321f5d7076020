package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// decoders maps a content coding (RFC 9110 §8.4.1) to a function that
// returns a reader of the decoded bytes. A coding not listed here is left
// undecoded and reported in Result.Undecoded.
var decoders = map[string]func(io.Reader) (io.ReadCloser, error){
	"gzip":   newGzipReader,
	"x-gzip": newGzipReader, // RFC 9110 §8.4.1.3: treat as gzip
}

func newGzipReader(r io.Reader) (io.ReadCloser, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return zr, nil
}

// contentCodings returns the codings of a response in the order they were
// applied, without "identity". unsupported is the header value when any
// coding has no decoder.
func contentCodings(h http.Header) (codings []string, unsupported string) {
	values := h.Values("Content-Encoding")
	for _, v := range values {
		for c := range strings.SplitSeq(v, ",") {
			c = strings.ToLower(strings.TrimSpace(c))
			if c == "" || c == "identity" {
				continue
			}
			if decoders[c] == nil {
				return nil, strings.Join(values, ", ")
			}
			codings = append(codings, c)
		}
	}
	return codings, ""
}

// readBody reads resp.Body into res within the caps, and closes it. The
// returned error is non-nil only when ctx was cancelled (the caller is
// stopping and nothing should be recorded); every other way a body can end
// is recorded in res.
func (c *Client) readBody(ctx context.Context, resp *http.Response, res *Result) error {
	defer resp.Body.Close()
	codings, unsupported := contentCodings(resp.Header)
	res.Undecoded = unsupported

	rec := &recorder{r: resp.Body, limit: c.cfg.MaxRawSize}
	if len(codings) == 0 && unsupported == "" {
		// Unencoded: the raw bytes are the body, so one buffer and the
		// smaller cap serve both.
		rec.limit = min(c.cfg.MaxRawSize, c.cfg.MaxBodySize)
	}
	if n := resp.ContentLength; n > 0 {
		rec.buf.Grow(int(min(n, rec.limit, 1<<20)))
	}

	if len(codings) == 0 {
		_, _ = io.Copy(io.Discard, rec)
		res.RawBody = rec.buf.Bytes()
		if unsupported == "" {
			res.Body = res.RawBody
		}
		return c.classify(ctx, rec, res)
	}

	// Decode: the codings were applied in order, so undo them in reverse.
	var r io.Reader = rec
	var decs []*lazyDecoder
	for i := len(codings) - 1; i >= 0; i-- {
		d := &lazyDecoder{src: r, open: decoders[codings[i]]}
		decs = append(decs, d)
		r = d
	}
	defer func() {
		for _, d := range decs {
			d.Close()
		}
	}()
	body, over, err := readCapped(r, c.cfg.MaxBodySize)
	res.Body = body
	if over {
		res.RawBody = rec.buf.Bytes()
		res.Truncated = TruncatedLength
		return nil
	}
	if err != nil && !rec.failed() {
		// The wire delivered everything so far without error, so the fault
		// is in the encoded data itself.
		res.DecodeErr = fmt.Errorf("fetch: decoding %s: %w", strings.Join(codings, ", "), err)
	}
	if rec.err == nil {
		// Read what follows the end of the compressed stream, so RawBody is
		// what the server sent and the connection can be reused.
		_, _ = io.Copy(io.Discard, rec)
	}
	res.RawBody = rec.buf.Bytes()
	return c.classify(ctx, rec, res)
}

// classify sets res.Truncated from how the raw read ended.
func (c *Client) classify(ctx context.Context, rec *recorder, res *Result) error {
	switch {
	case rec.over:
		res.Truncated = TruncatedLength
	case !rec.failed():
	case ctx.Err() != nil:
		if errors.Is(ctx.Err(), context.Canceled) {
			return ctx.Err()
		}
		res.Truncated = TruncatedTime
	default:
		// Includes io.ErrUnexpectedEOF from net/http when the connection
		// ends before Content-Length bytes or mid-chunk.
		res.Truncated = TruncatedDisconnect
	}
	return nil
}

// recorder keeps every byte read through it, up to limit. At the limit it
// probes for one more byte; if there is one it reports ErrBodyTooLarge
// without passing that byte on, so RawBody never exceeds the limit.
type recorder struct {
	r     io.Reader
	limit int64
	buf   bytes.Buffer
	over  bool  // more than limit bytes were available
	err   error // first error from r, io.EOF included; sticky
}

func (rc *recorder) Read(p []byte) (int, error) {
	if rc.err != nil {
		return 0, rc.err
	}
	room := rc.limit - int64(rc.buf.Len())
	if room <= 0 {
		var probe [1]byte
		if _, err := io.ReadFull(rc.r, probe[:]); err != nil {
			if err == io.ErrUnexpectedEOF {
				err = io.EOF // ReadFull's view; zero bytes then EOF is a clean end
			}
			rc.err = err
			return 0, err
		}
		rc.over = true
		rc.err = ErrBodyTooLarge
		return 0, rc.err
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	n, err := rc.r.Read(p)
	rc.buf.Write(p[:n])
	if err != nil {
		rc.err = err
	}
	return n, err
}

// failed reports whether reading stopped for a reason other than a clean end.
func (rc *recorder) failed() bool { return rc.err != nil && rc.err != io.EOF }

// readCapped reads r to the end or to max bytes. over reports that more than
// max bytes were available; the result then holds exactly max bytes, and at
// most one byte beyond max was read from r.
func readCapped(r io.Reader, max int64) (b []byte, over bool, err error) {
	var buf bytes.Buffer
	_, err = buf.ReadFrom(io.LimitReader(r, max+1))
	if int64(buf.Len()) > max {
		return buf.Bytes()[:max], true, nil
	}
	return buf.Bytes(), false, err
}

// lazyDecoder opens its decoder on the first Read, so an empty body (a 304,
// or a 204 that still names an encoding) decodes to nothing instead of
// failing for want of a gzip header.
type lazyDecoder struct {
	src  io.Reader
	open func(io.Reader) (io.ReadCloser, error)
	r    io.ReadCloser
	err  error
}

func (d *lazyDecoder) Read(p []byte) (int, error) {
	if d.r == nil && d.err == nil {
		d.r, d.err = d.open(d.src)
	}
	if d.err != nil {
		return 0, d.err
	}
	return d.r.Read(p)
}

func (d *lazyDecoder) Close() {
	if d.r != nil {
		_ = d.r.Close()
	}
}
