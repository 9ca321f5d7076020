package fetch

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// zstdMaxWindow is the largest zstd window accepted: RFC 9659 §3 says a
// decoder of "Content-Encoding: zstd" need not support more than 8 MB, and
// the window is memory the server would make us allocate.
const zstdMaxWindow = 8 << 20

// decoders maps a content coding (RFC 9110 §8.4.1) to a function that
// returns a reader of the decoded bytes. A coding not listed here is left
// undecoded and reported in Result.Undecoded. Decoders are pooled: one
// exchange in a crawl of many small pages would otherwise spend much of its
// time allocating decoder state.
var decoders = map[string]func(io.Reader) (io.ReadCloser, error){
	"gzip":    newGzipReader,
	"x-gzip":  newGzipReader, // RFC 9110 §8.4.1.3: treat as gzip
	"deflate": newDeflateReader,
	"br":      newBrotliReader,
	"zstd":    newZstdReader,
}

var gzipPool sync.Pool // *gzip.Reader

type gzipDecoder struct{ *gzip.Reader }

func (d gzipDecoder) Close() error {
	err := d.Reader.Close()
	gzipPool.Put(d.Reader)
	return err
}

func newGzipReader(r io.Reader) (io.ReadCloser, error) {
	if zr, ok := gzipPool.Get().(*gzip.Reader); ok {
		if err := zr.Reset(r); err != nil {
			gzipPool.Put(zr)
			return nil, err
		}
		return gzipDecoder{zr}, nil
	}
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return gzipDecoder{zr}, nil
}

var deflatePool sync.Pool // *deflateDecoder

// deflateDecoder is a pooled "deflate" decoder: the buffered reader that
// looks at the first bytes, and a zlib or raw deflate reader over it, each
// made on first use and reset after.
type deflateDecoder struct {
	br  *bufio.Reader
	zr  io.ReadCloser // zlib; also a zlib.Resetter
	fr  io.ReadCloser // raw deflate; also a flate.Resetter
	cur io.ReadCloser // zr or fr
}

func (d *deflateDecoder) Read(p []byte) (int, error) { return d.cur.Read(p) }

func (d *deflateDecoder) Close() error {
	err := d.cur.Close()
	d.br.Reset(nil) // let go of the source
	deflatePool.Put(d)
	return err
}

// newDeflateReader decodes "deflate", which RFC 9110 §8.4.1.2 defines as a
// zlib stream (RFC 1950) but which some servers send as raw deflate (RFC
// 1951). Like browsers, it looks at the first two bytes: a valid zlib header
// means zlib, anything else raw deflate.
func newDeflateReader(r io.Reader) (io.ReadCloser, error) {
	d, ok := deflatePool.Get().(*deflateDecoder)
	if ok {
		d.br.Reset(r)
	} else {
		d = &deflateDecoder{br: bufio.NewReaderSize(r, 4096)}
	}
	hdr, err := d.br.Peek(2)
	if err != nil && len(hdr) < 2 {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		d.br.Reset(nil)
		deflatePool.Put(d)
		return nil, err
	}
	if isZlibHeader(hdr[0], hdr[1]) {
		if d.zr == nil {
			d.zr, err = zlib.NewReader(d.br)
		} else {
			err = d.zr.(zlib.Resetter).Reset(d.br, nil)
		}
		if err != nil {
			// A zlib reader that failed its header is not kept.
			d.br.Reset(nil)
			d.zr = nil
			deflatePool.Put(d)
			return nil, err
		}
		d.cur = d.zr
		return d, nil
	}
	if d.fr == nil {
		d.fr = flate.NewReader(d.br)
	} else if err := d.fr.(flate.Resetter).Reset(d.br, nil); err != nil {
		return nil, err
	}
	d.cur = d.fr
	return d, nil
}

// isZlibHeader reports whether cmf, flg start a zlib stream (RFC 1950 §2.2):
// compression method 8 with a window of at most 32 KiB, no preset
// dictionary, and the check bits right.
func isZlibHeader(cmf, flg byte) bool {
	return cmf&0x0f == 8 && cmf>>4 <= 7 && flg&0x20 == 0 && (uint16(cmf)<<8|uint16(flg))%31 == 0
}

var brotliPool sync.Pool // *brotli.Reader

type brotliDecoder struct{ *brotli.Reader }

func (d brotliDecoder) Close() error {
	brotliPool.Put(d.Reader)
	return nil
}

func newBrotliReader(r io.Reader) (io.ReadCloser, error) {
	if br, ok := brotliPool.Get().(*brotli.Reader); ok {
		if err := br.Reset(r); err != nil {
			return nil, err
		}
		return brotliDecoder{br}, nil
	}
	// The large-window extension (RFC 9841) stays off: windows are at most
	// 16 MiB, which bounds what a stream can make us allocate.
	return brotliDecoder{brotli.NewReader(r)}, nil
}

var zstdPool sync.Pool // *zstd.Decoder

type zstdDecoder struct{ *zstd.Decoder }

func (d zstdDecoder) Close() error {
	// Reset(nil) releases the source and keeps the decoder reusable; Close
	// would make it unusable.
	if d.Decoder.Reset(nil) == nil {
		zstdPool.Put(d.Decoder)
	}
	return nil
}

func newZstdReader(r io.Reader) (io.ReadCloser, error) {
	if zd, ok := zstdPool.Get().(*zstd.Decoder); ok {
		if err := zd.Reset(r); err != nil {
			return nil, err
		}
		return zstdDecoder{zd}, nil
	}
	zd, err := zstd.NewReader(r,
		zstd.WithDecoderConcurrency(1), // decode in the caller's goroutine; no goroutines to own
		zstd.WithDecoderMaxWindow(zstdMaxWindow),
		zstd.WithDecoderLowmem(true),
	)
	if err != nil {
		return nil, err
	}
	return zstdDecoder{zd}, nil
}

// contentCodings returns the codings of a response in the order they were
// applied, without "identity". unsupported is the header value when any
// coding has no decoder, or when there are more than max codings (tooMany is
// then set too).
func contentCodings(h http.Header, max int) (codings []string, unsupported string, tooMany bool) {
	values := h.Values("Content-Encoding")
	for _, v := range values {
		for c := range strings.SplitSeq(v, ",") {
			c = strings.ToLower(strings.TrimSpace(c))
			if c == "" || c == "identity" {
				continue
			}
			if decoders[c] == nil {
				return nil, strings.Join(values, ", "), false
			}
			codings = append(codings, c)
		}
	}
	if len(codings) > max {
		return nil, strings.Join(values, ", "), true
	}
	return codings, "", false
}

// lazyDecoder opens its decoder on the first Read, so an empty body (a 304,
// or a 204 that still names an encoding) decodes to nothing instead of
// failing for want of a header.
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

// bombGuard fails with ErrDecompressionBomb when the bytes decoded pass
// ratio times the raw bytes received, once more than floor bytes have been
// decoded. A real page compresses perhaps 5–20×; a bomb gives 1000× (gzip)
// or far more (brotli, zstd).
type bombGuard struct {
	r       io.Reader
	raw     *recorder
	ratio   int64
	floor   int64
	decoded int64
}

func (g *bombGuard) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	g.decoded += int64(n)
	if g.ratio > 0 && g.decoded > g.floor && g.decoded > g.ratio*g.raw.size() {
		return n, ErrDecompressionBomb
	}
	return n, err
}
