package inflate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
)

var (
	// ErrCorrupt reports a stream that breaks a rule of its format. Returned
	// errors wrap it with what was wrong and where.
	ErrCorrupt = errors.New("inflate: corrupt stream")

	// ErrTruncated reports input that ends before the stream does. It wraps
	// io.ErrUnexpectedEOF, the error the standard library's readers give for
	// the same condition, so callers may test for either.
	ErrTruncated = fmt.Errorf("inflate: input ends inside the stream: %w", io.ErrUnexpectedEOF)

	// ErrTooLarge reports a stream that decodes to more than the caller's
	// maximum; the output returned with it holds exactly that maximum.
	ErrTooLarge = errors.New("inflate: output exceeds limit")

	// ErrChecksum reports decoded data that does not match the gzip CRC-32
	// and size or the zlib Adler-32 stored after it.
	ErrChecksum = errors.New("inflate: checksum mismatch")

	// ErrHeader reports a gzip or zlib header this package cannot accept.
	ErrHeader = errors.New("inflate: invalid header")
)

// Append appends to dst the decoding of the raw DEFLATE stream at the start
// of src and returns the extended slice and the number of bytes of src the
// stream used (through its final block, the last partial byte included), so
// a caller can find what follows it.
//
// At most max bytes are appended: when the stream would decode to more,
// Append returns dst with exactly max bytes appended and ErrTooLarge. A
// negative max allows no output at all, like zero. On a corrupt or truncated
// stream it returns what was decoded before the fault, all of it correct
// output of the stream so far, and the error; used then says how far into
// src decoding got.
//
// Back-references may reach only into this stream's own output, never into
// the bytes dst already held. The spare capacity of dst is written to as
// scratch space, up to len(dst)+max, so it must not overlap src.
func Append(dst, src []byte, max int) (out []byte, used int, err error) {
	d := getDecoder()
	defer putDecoder(d)
	d.init(dst, max)
	d.reset(src)
	err = d.inflate()
	return d.out[:d.n], d.used(), err
}

// A decoder holds the state of one call. It is about 8 KiB, mostly Huffman
// tables, and comes from a pool: on the caller's stack it made a new
// goroutine's stack grow, and be copied, on its first page.
type decoder struct {
	src  []byte
	pos  int    // next byte of src to load into b
	b    uint64 // bits loaded but not consumed, the next one lowest
	nb   uint   // how many bits of b are loaded
	over uint   // how many of those bits are zero padding past the end of src

	out   []byte // out[:n] is output; the rest of it is room to decode into
	n     int
	start int // where the current stream's output begins in out
	limit int // offset in out that output may not reach beyond

	dyn  tables // for dynamic blocks
	clen [1 << clenBits]uint32
	lens [maxLitSyms + maxDistSyms]uint8
}

var decoderPool = sync.Pool{New: func() any { return new(decoder) }}

// getDecoder returns a zeroed decoder; zeroing it costs less than a
// stack's growth, and leaves nothing of an earlier stream to be read.
func getDecoder() *decoder {
	d := decoderPool.Get().(*decoder)
	*d = decoder{}
	return d
}

func putDecoder(d *decoder) {
	d.src, d.out = nil, nil
	decoderPool.Put(d)
}

// fastMargin is the output room the fast loop needs before each symbol: the
// longest match plus the overshoot of copying it 32 bytes at a time.
const fastMargin = 258 + 32

func (d *decoder) init(dst []byte, maxOut int) {
	d.out = dst[:cap(dst)]
	d.n = len(dst)
	// Clamping keeps len(dst)+maxOut from overflowing for huge limits.
	d.limit = len(dst) + min(max(maxOut, 0), math.MaxInt-len(dst))
}

// reset starts a new, independent stream at the start of src, whose output
// follows what has been decoded so far.
func (d *decoder) reset(src []byte) {
	d.src, d.pos, d.b, d.nb, d.over = src, 0, 0, 0, 0
	d.start = d.n
}

// used returns how many bytes of src have been consumed, counting a partly
// consumed byte.
func (d *decoder) used() int {
	return d.pos - int((d.nb-d.over)>>3)
}

// corrupt returns ErrCorrupt saying what is wrong and about where.
func (d *decoder) corrupt(what string) error {
	return fmt.Errorf("%w: %s near input offset %d", ErrCorrupt, what, d.used())
}

// refill loads input until b holds at least 56 bits. Past the end of src it
// loads zeros and counts them in over, so that lookups can always index a
// table with a full width of bits; whoever consumes bits checks that they do
// not reach into the padding.
//
// Loading eight bytes at once also sets the bits above nb to the input that
// follows, which the next load ORs in again unchanged, so they do no harm.
func (d *decoder) refill() {
	if d.pos <= len(d.src)-8 {
		d.b |= binary.LittleEndian.Uint64(d.src[d.pos:]) << d.nb
		d.pos += int((63 - d.nb) >> 3)
		d.nb |= 56
		return
	}
	for d.nb < 56 {
		if d.pos < len(d.src) {
			d.b |= uint64(d.src[d.pos]) << d.nb
			d.pos++
		} else {
			d.over += 8
		}
		d.nb += 8
	}
}

// bits consumes and returns the next k bits, k <= 32, and reports false if
// the input ends first.
func (d *decoder) bits(k uint) (uint32, bool) {
	if d.nb < k {
		d.refill()
	}
	if k > d.nb-d.over {
		return 0, false
	}
	v := uint32(d.b & (1<<k - 1))
	d.b >>= k
	d.nb -= k
	return v, true
}

// sym decodes the next symbol with table t, whose primary part is indexed by
// root bits, and returns its entry; code names the code for errors. The
// checks come in the order compress/flate makes them, so both classify a
// damaged end alike: a code that runs past the input is truncation, one that
// matches no symbol (or a symbol deflate forbids) is corruption.
func (d *decoder) sym(t []uint32, root uint, code string) (uint32, error) {
	if d.nb < 56 {
		d.refill()
	}
	e := t[d.b&(1<<root-1)]
	if e&entLink != 0 {
		e = t[e>>16+uint32(d.b>>root)&(1<<(e>>4&15)-1)]
	}
	cl := uint(e & 15)
	if cl > d.nb-d.over {
		return 0, ErrTruncated
	}
	if e&entInvalid != 0 {
		return 0, d.corrupt("invalid " + code)
	}
	d.b >>= cl
	d.nb -= cl
	return e, nil
}

// room makes out hold k more bytes if it can and returns how many of them
// fit under the limit. Growth doubles, as append does, but never past the
// limit, so a decompression bomb cannot make it allocate more than the
// caller allowed.
func (d *decoder) room(k int) int {
	end := min(len(d.out), d.limit)
	if d.n+k > end && end < d.limit {
		c := min(max(2*len(d.out), d.n+k, 4096), d.limit)
		d.out = append(d.out[:d.n], make([]byte, c-d.n)...)
		d.out = d.out[:cap(d.out)]
		end = min(len(d.out), d.limit)
	}
	return min(k, end-d.n)
}

// inflate decodes blocks until the final one.
func (d *decoder) inflate() error {
	for {
		hdr, ok := d.bits(3)
		if !ok {
			return ErrTruncated
		}
		var err error
		switch hdr >> 1 {
		case 0:
			err = d.stored()
		case 1:
			err = d.huffman(&fixed, fixedLitMin)
		case 2:
			err = d.dynamic()
		default:
			err = d.corrupt("invalid block type")
		}
		if err != nil || hdr&1 != 0 {
			return err
		}
	}
}

// stored copies a stored block (RFC 1951 section 3.2.4), which starts at the
// next byte boundary.
func (d *decoder) stored() error {
	// Give the whole bytes still in b back to src; the partial one is skipped.
	d.pos -= int((d.nb - d.over) >> 3)
	d.b, d.nb, d.over = 0, 0, 0
	if len(d.src)-d.pos < 4 {
		return ErrTruncated
	}
	n := binary.LittleEndian.Uint16(d.src[d.pos:])
	if n != ^binary.LittleEndian.Uint16(d.src[d.pos+2:]) {
		return d.corrupt("stored block length check")
	}
	d.pos += 4
	want := int(n)
	have := min(want, len(d.src)-d.pos)
	k := d.room(have)
	d.n += copy(d.out[d.n:d.n+k], d.src[d.pos:])
	d.pos += k
	switch {
	case k < have:
		return ErrTooLarge
	case have < want:
		return ErrTruncated
	}
	return nil
}

// codeOrder is the order in which a dynamic block lists the code lengths of
// the code-length alphabet (RFC 1951 section 3.2.7).
var codeOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// dynamic reads the code descriptions of a dynamic block (RFC 1951 section
// 3.2.7) and then decodes its data. It accepts and rejects exactly the
// codes compress/flate does.
func (d *decoder) dynamic() error {
	hdr, ok := d.bits(14)
	if !ok {
		return ErrTruncated
	}
	nlit := int(hdr&31) + 257
	ndist := int(hdr>>5&31) + 1
	nclen := int(hdr>>10) + 4
	if nlit > maxLitSyms {
		return d.corrupt("too many literal/length codes")
	}
	if ndist > maxDistSyms {
		return d.corrupt("too many distance codes")
	}

	var clens [19]uint8
	for _, s := range codeOrder[:nclen] {
		v, ok := d.bits(3)
		if !ok {
			return ErrTruncated
		}
		clens[s] = uint8(v)
	}
	if _, ok = build(d.clen[:], clenBits, clens[:], clenEntries[:]); !ok {
		return d.corrupt("bad code lengths code")
	}

	// A block spends a few hundred symbols on code lengths, which matters
	// for small pages, so this loop does sym's and bits' work inline. The
	// code-length code is at most 7 bits, which a 7-bit table covers
	// without sub-tables, and a symbol with its extra bits takes at most 14.
	lens := d.lens[:nlit+ndist]
	for i := 0; i < len(lens); {
		if d.nb < 14 {
			d.refill()
		}
		e := d.clen[d.b&(1<<clenBits-1)]
		cl := uint(e & 15)
		if cl > d.nb-d.over {
			return ErrTruncated
		}
		if e&entInvalid != 0 {
			return d.corrupt("invalid code length code")
		}
		d.b >>= cl
		d.nb -= cl
		s := e >> 16
		if s < 16 {
			lens[i] = uint8(s)
			i++
			continue
		}
		// Repeats: 16 repeats the previous length 3-6 times (2 extra
		// bits), 17 and 18 repeat zero 3-10 and 11-138 times (3 and 7).
		rep, x, v := uint32(3), uint(2), uint8(0)
		switch s {
		case 16:
			if i == 0 {
				return d.corrupt("repeat of no previous code length")
			}
			v = lens[i-1]
		case 17:
			x = 3
		default:
			rep, x = 11, 7
		}
		if x > d.nb-d.over {
			return ErrTruncated
		}
		rep += uint32(d.b & (1<<x - 1))
		d.b >>= x
		d.nb -= x
		if i+int(rep) > len(lens) {
			return d.corrupt("code length repeat past the end")
		}
		for range rep {
			lens[i] = v
			i++
		}
	}

	litMin, ok := build(d.dyn.lit[:], litBits, lens[:nlit], litEntries[:])
	if !ok {
		return d.corrupt("bad literal/length code lengths")
	}
	if _, ok = build(d.dyn.dist[:], distBits, lens[nlit:], distEntries[:]); !ok {
		return d.corrupt("bad distance code lengths")
	}
	// Every block ends with an end-of-block code, so a lit/len symbol that
	// leaves too little input for it means truncation; compress/flate reads
	// that many bits before any lookup, and so does the careful path here.
	return d.huffman(&d.dyn, max(litMin, uint(lens[256])))
}

// huffman decodes the data of a compressed block with the given tables. It
// runs the fast loop for as long as input and output have room, and the
// careful step for the rest: the last few bytes of input, output close to
// the limit, and the end of the block.
func (d *decoder) huffman(t *tables, litMin uint) error {
	for {
		if err := d.fast(t); err != nil {
			return err
		}
		if end, err := d.step(t, litMin); end || err != nil {
			return err
		}
	}
}

// step decodes one symbol, checking everything: that its bits exist, that
// the output has room, growing the output as needed. It reports whether the
// symbol ended the block.
func (d *decoder) step(t *tables, litMin uint) (bool, error) {
	if d.nb < 56 {
		d.refill()
	}
	if litMin > d.nb-d.over {
		return false, ErrTruncated
	}
	e, err := d.sym(t.lit[:], litBits, "literal/length code")
	if err != nil {
		return false, err
	}
	switch {
	case e&entLiteral != 0:
		if d.room(1) == 0 {
			return false, ErrTooLarge
		}
		d.out[d.n] = byte(e >> 16)
		d.n++
		return false, nil
	case e&entEnd != 0:
		return true, nil
	}
	x, ok := d.bits(uint(e >> 4 & 15))
	if !ok {
		return false, ErrTruncated
	}
	length := int(e>>16 + x)
	if e, err = d.sym(t.dist[:], distBits, "distance code"); err != nil {
		return false, err
	}
	if x, ok = d.bits(uint(e >> 4 & 15)); !ok {
		return false, ErrTruncated
	}
	dist := int(e>>16 + x)
	if dist > d.n-d.start {
		return false, d.corrupt("distance too far back")
	}
	k := d.room(length)
	copyMatch(d.out, d.n, dist, k)
	d.n += k
	if k < length {
		return false, ErrTooLarge
	}
	return false, nil
}

// copyMatch writes out[n:n+length] from dist bytes back. When the two
// overlap, the source repeats with period dist, so each copy can take all
// the bytes produced so far as its source, doubling the run every time.
func copyMatch(out []byte, n, dist, length int) {
	if dist >= length {
		copy(out[n:n+length], out[n-dist:])
		return
	}
	for k := 0; k < length; {
		k += copy(out[n+k:n+length], out[n-dist:n+k])
	}
}

// fast is the hot loop. While at least 8 bytes of input remain, one 8-byte
// load before each symbol leaves at least 56 bits, more than the 48 a
// length/distance pair can take, so no symbol needs a bounds or truncation
// check; while the output has fastMargin bytes free, no match needs a room
// check either. It leaves end-of-block and invalid lit/len codes to step,
// which handles them once per block, and returns errors only for bad
// distances.
//
// The loop keeps few variables live so that they all stay in registers:
// out starts at the stream's first byte, so n doubles as the distance
// limit, and both tables hang off one pointer.
func (d *decoder) fast(t *tables) error {
	in, b, nb := d.src[d.pos:], d.b, d.nb
	out, n := d.out[d.start:min(len(d.out), d.limit)], d.n-d.start
	bad := ""
	for len(in) >= 8 && n+fastMargin <= len(out) {
		b |= binary.LittleEndian.Uint64(in) << (nb & 63)
		in = in[(63-nb&63)>>3:]
		nb |= 56

		e := t.lit[b&litMask]
		if e&entLink != 0 {
			e = t.lit[e>>16+uint32(b>>litBits)&(1<<(e>>4&15)-1)]
		}
		if e&entLiteral != 0 {
			b >>= e & 15
			nb -= uint(e & 15)
			out[n] = byte(e >> 16)
			n++
			// At least 41 bits remain, enough for one more literal
			// without reloading; literal runs are common in text.
			e = t.lit[b&litMask]
			if e&entLiteral != 0 {
				b >>= e & 15
				nb -= uint(e & 15)
				out[n] = byte(e >> 16)
				n++
			}
			continue
		}
		if e&(entEnd|entInvalid) != 0 {
			break
		}
		cl, x := e&15, e>>4&15
		length := int(e>>16) + int(b>>cl&(1<<x-1))
		b >>= cl + x
		nb -= uint(cl + x)

		e = t.dist[b&distMask]
		if e&entLink != 0 {
			e = t.dist[e>>16+uint32(b>>distBits)&(1<<(e>>4&15)-1)]
		}
		if e&entInvalid != 0 {
			bad = "invalid distance code"
			break
		}
		cl, x = e&15, e>>4&15
		dist := int(e>>16) + int(b>>cl&(1<<x-1))
		b >>= cl + x
		nb -= uint(cl + x)
		if dist > n {
			bad = "distance too far back"
			break
		}

		if s := n - dist; dist >= 8 {
			// 32 bytes a round, eight at a time, overshooting into the
			// margin. Each load reads only bytes already written, since
			// dist >= 8, so overlap needs no special case. Most matches
			// are done in one round, which keeps the exit predictable.
			for i := 0; ; i += 32 {
				to, from := out[n+i:n+i+32], out[s+i:s+i+32]
				binary.LittleEndian.PutUint64(to, binary.LittleEndian.Uint64(from))
				binary.LittleEndian.PutUint64(to[8:], binary.LittleEndian.Uint64(from[8:]))
				binary.LittleEndian.PutUint64(to[16:], binary.LittleEndian.Uint64(from[16:]))
				binary.LittleEndian.PutUint64(to[24:], binary.LittleEndian.Uint64(from[24:]))
				if i+32 >= length {
					break
				}
			}
		} else {
			copyMatch(out, n, dist, length)
		}
		n += length
	}
	d.pos, d.b, d.nb, d.n = len(d.src)-len(in), b, nb, d.start+n
	if bad != "" {
		return d.corrupt(bad)
	}
	return nil
}
