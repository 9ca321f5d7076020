// Package simhash computes 64-bit simhash fingerprints of text and finds
// stored fingerprints within a few bits of a query (Charikar 2002; Manku,
// Jain and Das Sarma, "Detecting near-duplicates for web crawling", 2007).
//
// A page's fingerprint is the simhash of its 3-word shingles: pages that
// differ in a word or two differ in a few bits, unrelated pages in about
// 32. The package is pure and imports nothing of the project.
package simhash

import (
	"math/bits"
	"unicode"
	"unicode/utf8"
)

// Shingle is the number of consecutive words hashed together.
const Shingle = 3

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// Sum returns the simhash of text (UTF-8): the sign, bit by bit, of the
// sum of the hashes of its shingles of Shingle words. Words are runs of
// letters and digits, compared ignoring case. Text of fewer than Shingle
// words is one shingle; text without words sums to 0. Sum does not
// allocate.
func Sum(text []byte) uint64 {
	var b Builder
	for i := 0; i < len(text); {
		// Skip to the next word.
		for i < len(text) {
			w := wordByte[text[i]]
			if w == 0 {
				i++
				continue
			}
			if w < utf8.RuneSelf {
				break
			}
			r, n := utf8.DecodeRune(text[i:])
			if _, ok := HashRune(0, r); ok {
				break
			}
			i += n
		}
		if i >= len(text) {
			break
		}
		h := uint64(WordOffset)
		for i < len(text) {
			w := wordByte[text[i]]
			if w == 0 {
				break
			}
			if w < utf8.RuneSelf {
				h = HashByte(h, w)
				i++
				continue
			}
			r, n := utf8.DecodeRune(text[i:])
			var ok bool
			if h, ok = HashRune(h, r); !ok {
				break
			}
			i += n
		}
		b.Add(h)
	}
	return b.Sum()
}

// A word's hash, as Sum and Builder take it, is FNV-1a of its bytes
// lowercased: WordOffset, then HashByte for each ASCII letter or digit
// (lowercased) and HashRune for each other rune. A caller that reads the
// words itself (with more to do in the same reading) hashes them so, and
// its Builder's sum is Sum's.
const WordOffset = fnvOffset

// HashByte extends a word's hash h by the byte c.
func HashByte(h uint64, c byte) uint64 {
	return (h ^ uint64(c)) * fnvPrime
}

// HashRune extends a word's hash h by the rune r lowercased, and reports
// whether r belongs in a word (a letter or a digit); when not, h is
// returned as it is.
func HashRune(h uint64, r rune) (uint64, bool) {
	if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
		return h, false
	}
	r = unicode.ToLower(r)
	for r > 0 {
		h = (h ^ uint64(r&0xff)) * fnvPrime
		r >>= 8
	}
	return h, true
}

// Builder sums the shingles of words given one at a time, by their hashes
// (see WordOffset). The zero Builder holds no words.
type Builder struct {
	acc    accumulator
	w1, w2 uint64 // hashes of the two words before the next, oldest first
	words  int
}

// Add adds the next word, by its hash.
func (b *Builder) Add(word uint64) {
	b.words++
	if b.words >= Shingle {
		// shingle of the last Shingle (3) words, written out.
		b.acc.add(Mix(bits.RotateLeft64(b.w1, 42) ^ bits.RotateLeft64(b.w2, 21) ^ word))
	}
	b.w1, b.w2 = b.w2, word
}

// Sum returns the simhash of the words added, as Sum does of a text. It
// ends the Builder: nothing may be added after.
func (b *Builder) Sum() uint64 {
	switch b.words {
	case 0:
		return 0
	case 1:
		b.acc.add(shingle([]uint64{b.w2}))
	case 2:
		b.acc.add(shingle([]uint64{b.w1, b.w2}))
	}
	return b.acc.sum()
}

// WordByte classifies a byte of UTF-8 text as Sum does: an ASCII letter
// or digit is itself lowercased (and HashByte takes it), any other ASCII
// byte is 0 (not in a word), and a byte of a multi-byte sequence is
// utf8.RuneSelf (decode the rune, for HashRune).
func WordByte(c byte) byte { return wordByte[c] }

// wordByte classifies a byte of UTF-8 text for Sum in one load: an ASCII
// letter or digit maps to itself lowercased, any other ASCII byte to 0 (not
// in a word), and a byte of a multi-byte sequence to utf8.RuneSelf (decode
// the rune). One table load instead of up to six comparisons per byte.
var wordByte = func() (t [256]byte) {
	for c := range 256 {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = utf8.RuneSelf
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			t[c] = byte(c)
		case 'A' <= c && c <= 'Z':
			t[c] = byte(c) + 'a' - 'A'
		}
	}
	return t
}()

// shingle combines word hashes, in order, into one well-mixed hash: each
// word's hash rotated by 21 bits per word after it, the rotations XORed,
// and the result mixed once. (A Mix after each word would cost more for no
// better spread: the word hashes differ in their high bits, which the
// rotations bring to every position.)
func shingle(words []uint64) uint64 {
	var h uint64
	for _, w := range words {
		h = bits.RotateLeft64(h, 21) ^ w
	}
	return Mix(h)
}

// Mix is the finalizer of SplitMix64: every input bit affects every
// output bit, which simhash needs from its feature hashes (and which the
// crawler's duplicate prints use too).
func Mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// accumulator counts, for each of the 64 bits, how many features had the
// bit set. It adds eight bits at a time: spread[b] holds the eight bits of
// byte b one per byte, so one addition counts eight bits in byte lanes,
// which are flushed to the wide counters before they can overflow.
type accumulator struct {
	lanes [8]uint64 // lanes[j] byte k counts bit 8*j+k
	wide  [64]int64
	n     int // features in lanes
	total int // features in all
}

var spread = func() (t [256]uint64) {
	for b := range 256 {
		for k := range 8 {
			if b&(1<<k) != 0 {
				t[b] |= 1 << (8 * k)
			}
		}
	}
	return t
}()

func (a *accumulator) add(h uint64) {
	for j := range 8 {
		a.lanes[j] += spread[byte(h>>(8*j))]
	}
	a.n++
	a.total++
	if a.n == 255 {
		a.flush()
	}
}

func (a *accumulator) flush() {
	for j := range 8 {
		l := a.lanes[j]
		for k := range 8 {
			a.wide[8*j+k] += int64(byte(l >> (8 * k)))
		}
		a.lanes[j] = 0
	}
	a.n = 0
}

// sum sets each bit set in more than half of the features.
func (a *accumulator) sum() uint64 {
	a.flush()
	var s uint64
	for i, c := range a.wide {
		if 2*c > int64(a.total) {
			s |= 1 << i
		}
	}
	return s
}

// Distance returns the Hamming distance between two fingerprints: the
// number of bits in which they differ.
func Distance(a, b uint64) int {
	return bits.OnesCount64(a ^ b)
}
