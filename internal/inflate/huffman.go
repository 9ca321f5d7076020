package inflate

import "math/bits"

// Decoding tables map the next bits of input straight to an entry that says
// everything needed about the symbol they start with. Deflate sends Huffman
// codes first bit first into the low end of each byte, so a table is indexed
// by the code's bits in reverse, which is the order they sit in the bit
// buffer. A code of length l <= root fills 2^(root-l) slots of the primary
// table, every 2^l-th; the slots of longer codes hold links to sub-tables
// indexed by the bits after the first root.
//
// An entry packs, from the low end:
//
//	bits 0-3    code length, consumed at once (0 in slots no code reaches)
//	bits 4-7    extra bits after the code; for a link, the sub-table's index width
//	bits 8-11   kind flags
//	bits 16-31  literal byte, length or distance base, code-length symbol,
//	            or a link's sub-table offset
//
// so that a length or distance decodes with one lookup plus its extra bits.
const (
	entLiteral = 1 << 8
	entEnd     = 1 << 9
	// entInvalid marks slots no code reaches (deflate accepts one incomplete
	// code, a single code of length 1) and the symbols deflate forbids
	// (lit/len 286 and 287, distance 30 and 31, codeable only in fixed
	// blocks), so both fail only if they are actually used.
	entInvalid = 1 << 10
	entLink    = 1 << 11
)

const (
	maxLitSyms  = 286 // lit/len symbols a dynamic block may define
	maxDistSyms = 30  // distance symbols a dynamic block may define

	// Primary table widths: 10 bits cover most lit/len codes of real pages
	// and keep the table within 4 KiB, near L1 alongside the output.
	litBits  = 10
	litMask  = 1<<litBits - 1
	distBits = 8
	distMask = 1<<distBits - 1
	clenBits = 7 // code-length codes are at most 7 bits: no sub-tables

	// Worst-case entries over all codes, primary table and sub-tables
	// together, as computed by zlib's "enough" utility for 288 lit/len
	// symbols (fixed blocks have 288) with 10 root bits, and 32 distance
	// symbols with 8, both with codes of up to 15 bits.
	litTableSize  = 1334
	distTableSize = 402
)

// Entries for each symbol, without the code length, which build adds.
var (
	litEntries  [288]uint32
	distEntries [32]uint32
	clenEntries [19]uint32
)

// tables holds the decoding tables of a compressed block.
type tables struct {
	lit  [litTableSize]uint32
	dist [distTableSize]uint32
}

// fixed holds the tables of the fixed codes of RFC 1951 section 3.2.6,
// shared by every call.
var fixed tables

// fixedLitMin is the shortest fixed lit/len code, which is also the length
// of the end-of-block code.
const fixedLitMin = 7

func init() {
	for s := range 256 {
		litEntries[s] = entLiteral | uint32(s)<<16
	}
	litEntries[256] = entEnd
	// Length codes 257-284 come in groups of four sharing a count of extra
	// bits; 285 is 258 alone (RFC 1951 section 3.2.5).
	base := uint32(3)
	for s := 257; s < 285; s++ {
		x := uint32(0)
		if s >= 265 {
			x = uint32(s-261) / 4
		}
		litEntries[s] = base<<16 | x<<4
		base += 1 << x
	}
	litEntries[285] = 258 << 16
	litEntries[286] = entInvalid
	litEntries[287] = entInvalid

	base = 1
	for s := range 30 {
		x := uint32(0)
		if s >= 4 {
			x = uint32(s)/2 - 1
		}
		distEntries[s] = base<<16 | x<<4
		base += 1 << x
	}
	distEntries[30] = entInvalid
	distEntries[31] = entInvalid

	for s := range clenEntries {
		clenEntries[s] = uint32(s) << 16
	}

	var lens [288]uint8
	for s := range lens {
		switch {
		case s < 144:
			lens[s] = 8
		case s < 256:
			lens[s] = 9
		case s < 280:
			lens[s] = 7
		default:
			lens[s] = 8
		}
	}
	build(fixed.lit[:], litBits, lens[:], litEntries[:])
	for s := range lens[:32] {
		lens[s] = 5
	}
	build(fixed.dist[:], distBits, lens[:32], distEntries[:])
}

// build fills t with the decoding table, root bits wide at the top level, of
// the canonical Huffman code (RFC 1951 section 3.2.2) in which symbol s has
// code length lens[s] (0 for unused, at most 15), s's entry being syms[s].
// It returns the shortest code length, and false for the codes
// compress/flate rejects: over-subscribed ones and incomplete ones other
// than a single code of length 1. A code with no symbols is accepted; any
// use of it fails.
//
// t must hold the worst case for its alphabet (litTableSize, distTableSize,
// or 1<<clenBits for the 7-bit code-length codes).
func build(t []uint32, root uint, lens []uint8, syms []uint32) (uint, bool) {
	// Four tallies, summed after, break the chain of increments to the
	// same counter that runs of equal lengths would otherwise form.
	var tally [4][16]int
	i := 0
	for ; i+4 <= len(lens); i += 4 {
		tally[0][lens[i]&15]++ // lengths are below 16; the mask spares a bounds check
		tally[1][lens[i+1]&15]++
		tally[2][lens[i+2]&15]++
		tally[3][lens[i+3]&15]++
	}
	for ; i < len(lens); i++ {
		tally[0][lens[i]&15]++
	}
	var count [16]int
	for l := 1; l < 16; l++ {
		count[l] = tally[0][l] + tally[1][l] + tally[2][l] + tally[3][l]
	}
	left, total, minLen := 1, 0, uint(0)
	for l := 1; l < 16; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return 0, false
		}
		if minLen == 0 && count[l] > 0 {
			minLen = uint(l)
		}
		total += count[l]
	}
	if left > 0 {
		if total > 1 || total == 1 && count[1] == 0 {
			return 0, false
		}
		// The doubling below spreads this to every slot no code reaches.
		t[0] = entInvalid
	}

	// Symbols sorted by code length, then by value: canonical order.
	var offs [16]int
	for l := 1; l < 15; l++ {
		offs[l+1] = offs[l] + count[l]
	}
	var sorted [288]uint16
	for s, l := range lens {
		if l != 0 {
			sorted[offs[l&15]] = uint16(s)
			offs[l&15]++
		}
	}

	// The primary table is built up by doubling: when it covers l bits,
	// each code of length l goes in its one slot; doubling to l+1 bits then
	// repeats every entry, as a shorter code matches both values of the
	// extra bit. Slots still unfilled belong to longer codes, and end up
	// holding links when the table reaches root bits.
	code := 0 // next code of the current length, first bit highest
	i = 0     // next symbol in sorted
	for l := uint(1); l <= root; l++ {
		copy(t[1<<(l-1):1<<l], t[:1<<(l-1)])
		for range count[l] {
			rev := int(bits.Reverse16(uint16(code)) >> (16 - l))
			t[rev] = syms[sorted[i]] | uint32(l)
			i++
			code++
		}
		code <<= 1
	}
	next := 1 << root // where the next sub-table goes
	prefix, sub, w := -1, 0, uint(0)
	for l := root + 1; l < 16; l++ {
		for k := count[l]; k > 0; k-- {
			rev := int(bits.Reverse16(uint16(code)) >> (16 - l))
			if p := rev & (1<<root - 1); p != prefix {
				// Codes sharing their first root bits are consecutive in
				// canonical order, shortest first, and fill the slot's
				// share of the code space exactly. The sub-table is as wide
				// as the longest of them needs: the smallest width whose
				// space the codes still to place, from this one on, fill.
				count[l] = k
				w = l - root
				for space, ll := 1<<w, l; ll < 15; ll++ {
					space -= count[ll]
					if space <= 0 {
						break
					}
					space <<= 1
					w++
				}
				prefix, sub = p, next
				t[p] = entLink | uint32(sub)<<16 | uint32(w)<<4
				next += 1 << w
			}
			e := syms[sorted[i]] | uint32(l)
			i++
			code++
			for j := rev >> root; j < 1<<w; j += 1 << (l - root) {
				t[sub+j] = e
			}
		}
		code <<= 1
	}
	return minLen, true
}
