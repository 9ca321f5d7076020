package fetch

import (
	"bytes"
	"errors"
	"io"

	"github.com/gentlecrawl/gentlecrawl/internal/inflate"
)

// Whole-body decoding. gzip and deflate, the codings nearly every server
// uses, are decoded from the raw bytes once they have all arrived, rather
// than as they stream in: the raw body is kept whole anyway (for the WARC
// record), and a decoder that sees all its input and writes into one
// output buffer does without a sliding window, the copy out of it, and a
// read call per input byte: decoding is one of the larger costs of a page.

// wholeMax is the most raw bytes read before a body is decoded whole. A
// longer body is decoded as it streams in, from its first byte, so that a
// bomb or an overlong body is cut without reading the rest of it: a bomb
// costs the site at most this much of its transfer (and a read's chunk).
// A page this large compressed is rare.
const wholeMax = 512 << 10

// wholeFunc appends the decoding of src to dst, at most max bytes of it
// (inflate.ErrTooLarge past that), and returns how much of src it used.
type wholeFunc func(dst, src []byte, max int) ([]byte, int, error)

// wholeDecoder returns the whole-body decoder of a body with these
// content codings, or nil when it has to stream.
func wholeDecoder(codings []string) wholeFunc {
	if len(codings) != 1 {
		return nil
	}
	switch codings[0] {
	case "gzip", "x-gzip":
		return inflate.Gunzip
	case "deflate":
		return inflateDeflate
	}
	return nil
}

// inflateDeflate decodes "deflate" as newDeflateReader does: zlib when the
// first two bytes are a zlib header, raw deflate otherwise.
func inflateDeflate(dst, src []byte, max int) ([]byte, int, error) {
	if len(src) < 2 {
		return dst, 0, io.ErrUnexpectedEOF
	}
	if isZlibHeader(src[0], src[1]) {
		return inflate.Zlib(dst, src, max)
	}
	return inflate.Append(dst, src, max)
}

// decodeWhole decodes raw, all of a body's bytes, with dec, appending to
// dst. It stops at maxSize decoded bytes (ErrBodyTooLarge), or with
// ErrDecompressionBomb past bombFloor once the output passes ratio times
// the input: the input used so far when progressive (as bombGuard sees a
// stream), or all of raw (ratio <= 0: no check). Any other error is the
// decoder's.
func decodeWhole(dst []byte, dec wholeFunc, raw []byte, maxSize, ratio int64, progressive bool) ([]byte, error) {
	if len(raw) == 0 {
		return dst, nil // an empty body (a 304, a 204 naming a coding) decodes to nothing
	}
	limit, bombLimit := maxSize, false
	if ratio > 0 {
		if b := max(bombFloor, ratio*int64(len(raw))); b < limit {
			limit, bombLimit = b, true
		}
	}
	start := len(dst)
	out, used, err := dec(dst, raw, int(limit))
	if !errors.Is(err, inflate.ErrTooLarge) {
		return out, err
	}
	n := int64(len(out) - start)
	if bombLimit || progressive && ratio > 0 && n > bombFloor && n > ratio*int64(used) {
		return out, ErrDecompressionBomb
	}
	return out, ErrBodyTooLarge
}

// wholeHead decodes the first sniffLen bytes of the body for sniffing,
// reading raw only as far as that takes, into buf.
func wholeHead(raw *recorder, dec wholeFunc, buf []byte) []byte {
	for {
		in := raw.head()
		out, _, err := dec(buf[:0], in, sniffLen)
		// raw.head() is only the first chunk once there are several: a
		// stream whose first 32 KiB hold no 512 bytes of output is
		// sniffed by what they hold.
		if len(out) >= sniffLen || !errors.Is(err, io.ErrUnexpectedEOF) || raw.err != nil ||
			int64(len(in)) < raw.size() || raw.size() >= raw.limit {
			return out
		}
		raw.fill(raw.size()+1, false)
	}
}

// replay returns a reader of what raw has recorded followed by what it
// reads next, for a body that turned out too long to decode whole.
func replay(raw *recorder) io.Reader {
	var inline [8][]byte
	parts := raw.parts(inline[:0])
	rs := make([]io.Reader, 0, len(parts)+1)
	for _, p := range parts {
		rs = append(rs, bytes.NewReader(p))
	}
	return io.MultiReader(append(rs, raw)...)
}
