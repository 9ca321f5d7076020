package inflate

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"
)

// Helpers shared by the tests: compressors and reference decoders from the
// standard library, test inputs, and a bit-level writer for hand-made
// streams the standard compressor would never produce.

func deflateBytes(tb testing.TB, data []byte, level int) []byte {
	return compressWith(tb, data, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, level) })
}

func zlibBytes(tb testing.TB, data []byte, level int) []byte {
	return compressWith(tb, data, func(w io.Writer) (io.WriteCloser, error) { return zlib.NewWriterLevel(w, level) })
}

func gzipBytes(tb testing.TB, data []byte, level int) []byte {
	return compressWith(tb, data, func(w io.Writer) (io.WriteCloser, error) { return gzip.NewWriterLevel(w, level) })
}

// compressWith compresses data with a writer newWriter makes.
func compressWith(tb testing.TB, data []byte, newWriter func(io.Writer) (io.WriteCloser, error)) []byte {
	tb.Helper()
	var b bytes.Buffer
	w, err := newWriter(&b)
	if err != nil {
		tb.Fatal(err)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// stdInflate decodes src with compress/flate, reading at most limit+1 bytes
// of output (so more than limit bytes without an error means the stream
// goes on past the limit), and reports how many bytes of src it consumed.
// Given a bytes.Reader, which is an io.ByteReader, compress/flate reads no
// further than the stream.
func stdInflate(src []byte, limit int) (out []byte, used int, err error) {
	br := bytes.NewReader(src)
	out, err = io.ReadAll(io.LimitReader(flate.NewReader(br), int64(limit)+1))
	return out, len(src) - br.Len(), err
}

// stdGunzip decodes src with compress/gzip, member by member so that it can
// tell where each header starts. reserved reports that decoding stopped at a
// header which compress/gzip accepts but this package rejects for its
// reserved flag bits.
func stdGunzip(src []byte, limit int) (out []byte, err error, reserved bool) {
	br := bytes.NewReader(src)
	var z *gzip.Reader
	for {
		off := len(src) - br.Len()
		if h := src[off:]; len(h) >= 10 && h[0] == 0x1f && h[1] == 0x8b && h[2] == 8 && h[3]&0xe0 != 0 {
			return out, nil, true
		}
		if z == nil {
			z, err = gzip.NewReader(br)
		} else {
			err = z.Reset(br)
		}
		if err == io.EOF && off > 0 {
			return out, nil, false
		}
		if err != nil {
			return out, err, false
		}
		z.Multistream(false)
		var part []byte
		part, err = io.ReadAll(io.LimitReader(z, int64(limit-len(out))+1))
		out = append(out, part...)
		if err != nil || len(out) > limit {
			return out, err, false
		}
	}
}

// isTruncation reports whether err is the standard library's or this
// package's error for input that ends early.
func isTruncation(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF)
}

// testInputs returns named inputs covering the decoder's paths: nothing,
// single bytes, runs (overlapping copies), incompressible bytes (stored
// blocks), text, and sizes past the 64 KiB block and 1 MiB marks.
func testInputs() map[string][]byte {
	r := rand.New(rand.NewPCG(7, 8))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	text := func(n int) []byte {
		words := strings.Fields("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor " +
			"incididunt ut labore et dolore magna aliqua <div> </div> <a href=\"/x\"> \n\t")
		var b bytes.Buffer
		for b.Len() < n {
			b.WriteString(words[int(float64(len(words))*r.Float64()*r.Float64())])
			b.WriteByte(' ')
		}
		return b.Bytes()[:n]
	}
	// Short runs of each period below 8 (the decoder copies those
	// differently) and matches that stretch back past the first 16 bytes.
	periods := new(bytes.Buffer)
	for p := 1; p <= 20; p++ {
		pat := random(p)
		for range 40 {
			periods.Write(pat)
		}
		periods.Write(random(3))
	}
	mixed := append(text(100_000), random(50_000)...)
	mixed = append(mixed, bytes.Repeat([]byte{'z'}, 70_000)...)
	mixed = append(mixed, text(100_000)...)
	inputs := map[string][]byte{
		"empty":     {},
		"one":       {'x'},
		"zero":      {0},
		"run1":      bytes.Repeat([]byte{'a'}, 1000),
		"run300k":   bytes.Repeat([]byte{0}, 300_000),
		"periods":   periods.Bytes(),
		"random":    random(100_000),
		"short":     []byte("hello, hello, hello world"),
		"text":      text(50_000),
		"text100k":  text(100_000),
		"mixed":     mixed,
		"random70k": random(70_000),
	}
	if !raceEnabled {
		// A stream longer than the decoder's windows and buffers many
		// times over. The package starts no goroutine, so the race
		// detector would only make it ten times slower: scripts/test
		// runs the package again without -race, with this input.
		inputs["text1_5M"] = text(1_500_000)
	}
	return inputs
}

// bitWriter writes a deflate bit stream: values first bit lowest, Huffman
// codes first bit highest.
type bitWriter struct {
	buf []byte
	acc uint64
	n   uint
}

func (w *bitWriter) bits(v uint64, k uint) {
	w.acc |= v << w.n
	w.n += k
	for w.n >= 8 {
		w.buf = append(w.buf, byte(w.acc))
		w.acc >>= 8
		w.n -= 8
	}
}

func (w *bitWriter) code(c uint16, l uint8) {
	w.bits(uint64(bits.Reverse16(c)>>(16-l)), uint(l))
}

// bytes flushes a partial byte, padded with zeros.
func (w *bitWriter) bytes() []byte {
	if w.n > 0 {
		w.buf = append(w.buf, byte(w.acc))
		w.acc, w.n = 0, 0
	}
	return w.buf
}

// canonical returns the canonical Huffman codes for lens (RFC 1951 section
// 3.2.2), computed independently of the package's table builder.
func canonical(lens []uint8) []uint16 {
	var count [16]uint16
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	var next [16]uint16
	code := uint16(0)
	for l := 1; l < 16; l++ {
		code = (code + count[l-1]) << 1
		next[l] = code
	}
	codes := make([]uint16, len(lens))
	for s, l := range lens {
		if l != 0 {
			codes[s] = next[l]
			next[l]++
		}
	}
	return codes
}

// Length and distance codes of RFC 1951 section 3.2.5.
var (
	lenBase   = [29]int{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lenExtra  = [29]uint{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase  = [30]int{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra = [30]uint{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
)

// A token is a literal (dist 0) or a match for the block writers.
type token struct{ lit, length, dist int }

func lit(b byte) token             { return token{lit: int(b)} }
func match(length, dist int) token { return token{length: length, dist: dist} }

// blockWriter encodes tokens with given lit/len and distance codes.
type blockWriter struct {
	*bitWriter
	litLens, distLens   []uint8
	litCodes, distCodes []uint16
}

func (w *blockWriter) sym(s int) { w.code(w.litCodes[s], w.litLens[s]) }

func (w *blockWriter) tokens(ts ...token) {
	for _, t := range ts {
		if t.dist == 0 {
			w.sym(t.lit)
			continue
		}
		i := 28
		if t.length < 258 {
			i = 0
			for i < 28 && lenBase[i+1] <= t.length {
				i++
			}
		}
		w.sym(257 + i)
		w.bits(uint64(t.length-lenBase[i]), lenExtra[i])
		j := 0
		for j < 29 && distBase[j+1] <= t.dist {
			j++
		}
		w.code(w.distCodes[j], w.distLens[j])
		w.bits(uint64(t.dist-distBase[j]), distExtra[j])
	}
}

func fixedLens() (lit, dist []uint8) {
	lit = make([]uint8, 288)
	for s := range lit {
		switch {
		case s < 144:
			lit[s] = 8
		case s < 256:
			lit[s] = 9
		case s < 280:
			lit[s] = 7
		default:
			lit[s] = 8
		}
	}
	dist = bytes.Repeat([]byte{5}, 32)
	return lit, dist
}

// fixedBlock writes a fixed-Huffman block header and ts, and returns a
// writer for the rest of the block, which must include end-of-block.
func fixedBlock(w *bitWriter, final bool, ts ...token) *blockWriter {
	lit, dist := fixedLens()
	bw := &blockWriter{w, lit, dist, canonical(lit), canonical(dist)}
	w.bits(b2u(final), 1)
	w.bits(1, 2)
	bw.tokens(ts...)
	return bw
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// clenLens is a complete code-length code that can express every length
// and all three repeat codes.
var clenLens = func() [19]uint8 {
	var l [19]uint8
	for s := range 16 {
		l[s] = 5
	}
	l[16], l[17], l[18] = 3, 3, 2
	return l
}()

// clItem is one code-length symbol with its extra bits.
type clItem struct {
	sym   int
	extra uint64
}

// dynamicHeader writes a dynamic block header with the given counts,
// code-length code and code-length symbols, none of which need be valid.
func dynamicHeader(w *bitWriter, final bool, nlit, ndist int, clens [19]uint8, items []clItem) {
	w.bits(b2u(final), 1)
	w.bits(2, 2)
	w.bits(uint64(nlit-257), 5)
	w.bits(uint64(ndist-1), 5)
	w.bits(19-4, 4)
	for _, s := range codeOrder {
		w.bits(uint64(clens[s]), 3)
	}
	codes := canonical(clens[:])
	for _, it := range items {
		w.code(codes[it.sym], clens[it.sym])
		switch it.sym {
		case 16:
			w.bits(it.extra, 2)
		case 17:
			w.bits(it.extra, 3)
		case 18:
			w.bits(it.extra, 7)
		}
	}
}

// dynamicBlock writes a dynamic block header for the given lit/len and
// distance code lengths, spelled out one length per symbol, and returns a
// writer for the block's data.
func dynamicBlock(w *bitWriter, final bool, litLens, distLens []uint8) *blockWriter {
	var items []clItem
	for _, l := range append(append([]uint8(nil), litLens...), distLens...) {
		items = append(items, clItem{sym: int(l)})
	}
	dynamicHeader(w, final, len(litLens), len(distLens), clenLens, items)
	return &blockWriter{w, litLens, distLens, canonical(litLens), canonical(distLens)}
}

// raceEnabled is set when the tests are built with -race (race_test.go).
var raceEnabled bool
