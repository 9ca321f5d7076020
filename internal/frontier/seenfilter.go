package frontier

import (
	"encoding/binary"
	"math/bits"
)

// seenFilter is the in-memory Bloom filter in front of the seen-set: a URL it
// has never been told of is certainly new, so most new URLs are admitted
// without reading the disk. A "maybe" costs one read of the exact seen-set.
//
// It grows with the crawl, as a scalable Bloom filter (Almeida et al.,
// 2007): layers, each sized for twice the keys of the one before and at two
// more bits per key (up to 20), so that their false positives, added up,
// stay near 2% however many layers there are (each two bits more take off
// more than half). New keys go to the last layer; a key is
// "maybe" seen when any layer says so. A filter sized up front for the
// largest crawl would weigh on every small one; the first layer is sized
// for ExpectedURLs instead, by default a quarter of a million (320 KiB).
//
// Each layer is a blocked filter: all the probes of a key fall in one 64-byte
// block, one cache miss per lookup instead of one per probe, for a slightly
// higher false-positive rate (about 1.2% at 10 bits per key instead of 0.8%).
type seenFilter struct {
	layers []bloomLayer // the first made first
	n      int          // keys added to the last layer
	cap    int          // keys the last layer was sized for
}

type bloomLayer struct {
	words  []uint64
	blocks uint64 // number of 512-bit blocks
}

// bitsPerURL gives about 1% false positives in the first layer when full.
const bitsPerURL = 10

// probesPerKey is the number of bits set per key: ln 2 × 10 bits per key.
const probesPerKey = 7

// newSeenFilter returns a filter whose first layer is sized for n keys.
func newSeenFilter(n int) *seenFilter {
	f := &seenFilter{}
	f.grow(max(n, 1024), bitsPerURL)
	return f
}

// grow adds a layer for keys keys at bitsPerKey bits each.
func (f *seenFilter) grow(keys, bitsPerKey int) {
	blocks := (uint64(keys)*uint64(bitsPerKey) + 511) / 512
	f.layers = append(f.layers, bloomLayer{words: make([]uint64, blocks*8), blocks: blocks})
	f.n, f.cap = 0, keys
}

// split derives a block and the probes within it from a 16-byte seen-set
// hash. FNV-1a's bits are not uniform for short keys that differ only at
// the end, so both halves are mixed first (splitmix64's finaliser): without
// it, keys like "u0" to "u299999" set far fewer bits than they should, and
// the false positives went well past the design's.
func (b *bloomLayer) split(h []byte) (block []uint64, probes uint64) {
	x := binary.LittleEndian.Uint64(h[:8])
	y := binary.LittleEndian.Uint64(h[8:16])
	hi, _ := bits.Mul64(mix64(x^y), b.blocks) // uniform in [0, blocks)
	i := hi * 8
	return b.words[i : i+8 : i+8], mix64(y + 0x9e3779b97f4a7c15)
}

// mix64 is the splitmix64 finaliser: every input bit changes about half of
// the output bits. (simhash.Mix is the same, but simhash is not among the
// packages the frontier may import: docs/architecture.md, "Packages".)
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

func (f *seenFilter) add(h []byte) {
	if f.n >= f.cap {
		f.grow(2*f.cap, min(bitsPerURL+2*len(f.layers), 2*bitsPerURL))
	}
	f.n++
	block, p := f.layers[len(f.layers)-1].split(h)
	for range probesPerKey {
		bit := p & 511
		block[bit>>6] |= 1 << (bit & 63)
		p >>= 9
	}
}

// mayContain reports false when h was certainly never added.
func (f *seenFilter) mayContain(h []byte) bool {
	// The last layer first: it holds the most keys.
	for i := len(f.layers) - 1; i >= 0; i-- {
		if f.layers[i].mayContain(h) {
			return true
		}
	}
	return false
}

func (b *bloomLayer) mayContain(h []byte) bool {
	block, p := b.split(h)
	for range probesPerKey {
		bit := p & 511
		if block[bit>>6]&(1<<(bit&63)) == 0 {
			return false
		}
		p >>= 9
	}
	return true
}

// bytes is the filter's size in memory.
func (f *seenFilter) bytes() int {
	n := 0
	for _, l := range f.layers {
		n += len(l.words) * 8
	}
	return n
}
