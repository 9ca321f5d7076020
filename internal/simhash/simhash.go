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
	var (
		acc    accumulator
		window [Shingle]uint64 // hashes of the last words, oldest first
		words  int
	)
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
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				break
			}
			i += n
		}
		if i >= len(text) {
			break
		}
		// Hash the word, lowercased, with FNV-1a.
		h := uint64(fnvOffset)
		for i < len(text) {
			w := wordByte[text[i]]
			if w == 0 {
				break
			}
			if w < utf8.RuneSelf {
				h = (h ^ uint64(w)) * fnvPrime
				i++
				continue
			}
			r, n := utf8.DecodeRune(text[i:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				break
			}
			r = unicode.ToLower(r)
			for r > 0 {
				h = (h ^ uint64(r&0xff)) * fnvPrime
				r >>= 8
			}
			i += n
		}
		copy(window[:], window[1:])
		window[Shingle-1] = h
		words++
		if words >= Shingle {
			acc.add(shingle(window[:]))
		}
	}
	if words == 0 {
		return 0
	}
	if words < Shingle {
		acc.add(shingle(window[Shingle-words:]))
	}
	return acc.sum()
}

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

// shingle combines word hashes, in order, into one well-mixed hash.
func shingle(words []uint64) uint64 {
	h := uint64(fnvOffset)
	for _, w := range words {
		h = Mix(h ^ w)
	}
	return h
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
