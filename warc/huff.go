package warc

import (
	"bytes"
	"container/heap"
	"slices"
)

// Records of headers alone (a request, or a response whose body is
// stored) are a few hundred bytes of WARC and HTTP header text. A deflate
// compressor at any level builds a Huffman code for each such record, which
// costs more than the rest of writing it. headCode is one Huffman code for
// all of them, made once from the letters such headers are written in:
// writing a record is then a table look-up per byte.
//
// The code covers the bytes of header text (printable ASCII, tab, CR and
// LF). A record with any other byte is compressed the usual way.

// headSample is text of the kind headCode encodes, for its byte counts.
const headSample = "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:5f1c2a0e-8a43-4b5e-9d7e-3c1f2b4a6d8e>\r\n" +
	"WARC-Warcinfo-ID: <urn:uuid:0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9>\r\nWARC-Concurrent-To: <urn:uuid:9e8d7c6b-5a49-3827-1605-f4e3d2c1b0a9>\r\n" +
	"WARC-Target-URI: https://www.example.org/shop/category/item-1234.html?sort=price&page=2\r\nWARC-Date: 2026-12-02T07:29:50.123456Z\r\n" +
	"WARC-IP-Address: 192.0.2.17\r\nWARC-Block-Digest: sha1:ABCDEFGHIJKLMNOPQRSTUVWXYZ234567\r\nWARC-Payload-Digest: sha1:QRSTUVWXYZ234567ABCDEFGHIJKLMNOP\r\n" +
	"Content-Type: application/http; msgtype=response\r\nContent-Length: 23456\r\n\r\n" +
	"HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Wed, 02 Dec 2026 07:29:50 GMT\r\nContent-Type: text/html; charset=utf-8\r\n" +
	"Last-Modified: Mon, 01 Jan 2024 00:00:00 GMT\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\nETag: W/\"65920080-5ba0\"\r\n" +
	"Content-Encoding: gzip\r\nCache-Control: max-age=3600, public\r\nVary: Accept-Encoding\r\n\r\n" +
	"GET /shop/category/item-1234.html HTTP/1.1\r\nHost: www.example.org\r\nUser-Agent: gentlecrawl/1.0 (+https://example.org/bot)\r\n" +
	"Accept: text/html,application/xhtml+xml;q=0.9,*/*;q=0.8\r\nAccept-Encoding: gzip, deflate, br, zstd\r\n" +
	"If-None-Match: \"65920080-5ba0\"\r\nIf-Modified-Since: Mon, 01 Jan 2024 00:00:00 GMT\r\n\r\n"

// headByte reports whether headCode has a code for c.
func headByte(c byte) bool {
	return c == '\t' || c == '\n' || c == '\r' || ' ' <= c && c <= '~'
}

// endOfBlock is deflate's end-of-block symbol (RFC 1951 §3.2.5).
const endOfBlock = 256

// staticCode is a Huffman code for the literals and the end of block of a
// deflate block with a dynamic code, fixed once, with the block header
// that declares it.
type staticCode struct {
	codes [endOfBlock + 1]uint16 // bit-reversed, as deflate writes them
	lens  [endOfBlock + 1]uint8  // 0: no code
	// entry holds, for each byte, its code shifted left by 8 and its
	// length: one load per byte.
	entry [256]uint32
	// header is the block header after its first three bits (BFINAL and
	// BTYPE): headerBits bits, least significant first.
	header     []byte
	headerBits int
}

var headCode = newStaticCode(headSample, headByte)

func newStaticCode(sample string, has func(byte) bool) *staticCode {
	var freq [endOfBlock + 1]int
	for c := range 256 {
		if has(byte(c)) {
			freq[c] = 1
		}
	}
	for i := 0; i < len(sample); i++ {
		freq[sample[i]] += 4
	}
	freq[endOfBlock] = 1
	sc := &staticCode{}
	huffmanLengths(freq[:], 15, sc.lens[:])
	canonicalCodes(sc.lens[:], sc.codes[:])
	for c := range 256 {
		sc.entry[c] = uint32(sc.codes[c])<<8 | uint32(sc.lens[c])
	}
	sc.header, sc.headerBits = dynamicHeader(sc.lens[:])
	return sc
}

// bitWriter appends bits to a byte slice, least significant first.
type bitWriter struct {
	out   []byte
	bits  uint64
	nbits uint
}

func (w *bitWriter) write(v uint64, n uint) {
	w.bits |= v << w.nbits
	w.nbits += n
	for w.nbits >= 8 {
		w.out = append(w.out, byte(w.bits))
		w.bits >>= 8
		w.nbits -= 8
	}
}

// flushByte pads to a byte boundary.
func (w *bitWriter) flushByte() {
	if w.nbits > 0 {
		w.out = append(w.out, byte(w.bits))
		w.bits, w.nbits = 0, 0
	}
}

// encode appends to dst one deflate block of parts coded with sc, final
// or not. A final block is padded to a byte boundary; after one that is not,
// an empty stored block (a sync flush) ends the data on one, for stored
// blocks to follow. It reports false, appending nothing, when a byte of
// parts has no code.
func (sc *staticCode) encode(dst *bytes.Buffer, final bool, parts ...[]byte) bool {
	n := 3 + sc.headerBits/8 + 16
	for _, p := range parts {
		n += len(p) * 2 // codes are at most 15 bits
	}
	dst.Grow(n)
	b := dst.AvailableBuffer()
	// BFINAL, BTYPE=10 (dynamic), then the header's bits.
	var acc uint64 = 2 << 1
	if final {
		acc |= 1
	}
	nbits := uint(3)
	hb := sc.header
	for i, c := range hb {
		k := uint(8)
		if i == len(hb)-1 && sc.headerBits%8 != 0 {
			k = uint(sc.headerBits % 8)
		}
		acc |= uint64(c) << nbits
		nbits += k
		for nbits >= 8 {
			b = append(b, byte(acc))
			acc >>= 8
			nbits -= 8
		}
	}
	for _, p := range parts {
		for _, c := range p {
			e := sc.entry[c]
			if e&0xff == 0 {
				return false // b is dst's spare capacity: nothing is written
			}
			acc |= uint64(e>>8) << nbits
			nbits += uint(e & 0xff)
			if nbits >= 32 {
				b = append(b, byte(acc), byte(acc>>8), byte(acc>>16), byte(acc>>24))
				acc >>= 32
				nbits -= 32
			}
		}
	}
	acc |= uint64(sc.codes[endOfBlock]) << nbits
	nbits += uint(sc.lens[endOfBlock])
	if !final {
		// An empty stored block, not final: three zero bits, then to the
		// byte boundary, then LEN 0 and NLEN 0xffff.
		nbits += 3
	}
	for nbits > 0 {
		b = append(b, byte(acc))
		acc >>= 8
		nbits -= min(nbits, 8)
	}
	if !final {
		b = append(b, 0, 0, 0xff, 0xff)
	}
	dst.Write(b)
	return true
}

// huffmanLengths sets lens[i] to the length of symbol i's code in a
// Huffman code for the frequencies freq (0: no code), no longer than
// maxLen: frequencies are halved until the code fits.
func huffmanLengths(freq []int, maxLen int, lens []uint8) {
	f := slices.Clone(freq)
	for {
		if treeLengths(f, lens) <= maxLen {
			return
		}
		for i := range f {
			if f[i] > 0 {
				f[i] = (f[i] + 1) / 2
			}
		}
	}
}

type hnode struct {
	freq        int
	sym         int // leaf: the symbol; inner: -1
	left, right *hnode
}

type hheap []*hnode

func (h hheap) Len() int { return len(h) }
func (h hheap) Less(i, j int) bool {
	if h[i].freq != h[j].freq {
		return h[i].freq < h[j].freq
	}
	return h[i].sym < h[j].sym
}
func (h hheap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *hheap) Push(x any)   { *h = append(*h, x.(*hnode)) }
func (h *hheap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// treeLengths sets lens from a Huffman tree for freq and returns the
// longest length. It needs two symbols with a frequency at least.
func treeLengths(freq []int, lens []uint8) int {
	var h hheap
	for s, f := range freq {
		lens[s] = 0
		if f > 0 {
			h = append(h, &hnode{freq: f, sym: s})
		}
	}
	heap.Init(&h)
	for h.Len() > 1 {
		a, b := heap.Pop(&h).(*hnode), heap.Pop(&h).(*hnode)
		heap.Push(&h, &hnode{freq: a.freq + b.freq, sym: -1, left: a, right: b})
	}
	longest := 0
	var walk func(n *hnode, depth int)
	walk = func(n *hnode, depth int) {
		if n.sym >= 0 {
			lens[n.sym] = uint8(depth)
			longest = max(longest, depth)
			return
		}
		walk(n.left, depth+1)
		walk(n.right, depth+1)
	}
	walk(h[0], 0)
	return longest
}

// canonicalCodes sets codes from lens as RFC 1951 §3.2.2 assigns them,
// each bit-reversed (deflate writes a code most significant bit first into
// a stream read least significant bit first).
func canonicalCodes(lens []uint8, codes []uint16) {
	var count [16]int
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	var next [16]int
	code := 0
	for bits := 1; bits < 16; bits++ {
		code = (code + count[bits-1]) << 1
		next[bits] = code
	}
	for s, l := range lens {
		if l == 0 {
			continue
		}
		c := next[l]
		next[l]++
		var r uint16
		for i := range int(l) {
			r |= uint16((c>>i)&1) << (int(l) - 1 - i)
		}
		codes[s] = r
	}
}

// codeLengthOrder is the order code length code lengths are written in
// (RFC 1951 §3.2.7).
var codeLengthOrder = [19]int{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// dynamicHeader returns the bits of a dynamic block's header after BFINAL
// and BTYPE, for the literal code lens (257 symbols, 0 to 256) and a
// distance code of two one-bit codes (none is used).
func dynamicHeader(lens []uint8) ([]byte, int) {
	all := append(slices.Clone(lens), 1, 1) // then the two distance codes
	// Code lengths as symbols of the code length alphabet: 0-15 as they
	// are, 17 and 18 for runs of zeros (3-10, 11-138), 16 for repeats of
	// the length before (3-6).
	type sym struct{ s, extra, nextra int }
	var syms []sym
	for i := 0; i < len(all); {
		l := all[i]
		j := i
		for j < len(all) && all[j] == l {
			j++
		}
		run := j - i
		if l == 0 {
			for run >= 11 {
				n := min(run, 138)
				syms = append(syms, sym{18, n - 11, 7})
				run -= n
			}
			if run >= 3 {
				syms = append(syms, sym{17, run - 3, 3})
				run = 0
			}
			for ; run > 0; run-- {
				syms = append(syms, sym{0, 0, 0})
			}
		} else {
			syms = append(syms, sym{int(l), 0, 0})
			run--
			for run >= 3 {
				n := min(run, 6)
				syms = append(syms, sym{16, n - 3, 2})
				run -= n
			}
			for ; run > 0; run-- {
				syms = append(syms, sym{int(l), 0, 0})
			}
		}
		i = j
	}
	var freq [19]int
	for _, s := range syms {
		freq[s.s]++
	}
	var clLens [19]uint8
	var clCodes [19]uint16
	huffmanLengths(freq[:], 7, clLens[:])
	canonicalCodes(clLens[:], clCodes[:])
	hclen := 19
	for hclen > 4 && clLens[codeLengthOrder[hclen-1]] == 0 {
		hclen--
	}
	var w bitWriter
	w.write(uint64(len(lens)-257), 5) // HLIT
	w.write(1, 5)                     // HDIST: two distance codes
	w.write(uint64(hclen-4), 4)       // HCLEN
	for _, s := range codeLengthOrder[:hclen] {
		w.write(uint64(clLens[s]), 3)
	}
	for _, s := range syms {
		w.write(uint64(clCodes[s.s]), uint(clLens[s.s]))
		if s.nextra > 0 {
			w.write(uint64(s.extra), uint(s.nextra))
		}
	}
	n := len(w.out)*8 + int(w.nbits)
	w.flushByte()
	return w.out, n
}
