package simhash

import (
	"fmt"
	"sync"
)

// MaxK is the largest distance an Index can search for.
const MaxK = 3

// Match is a stored fingerprint near a query.
type Match[V any] struct {
	Fingerprint uint64
	Value       V
	Distance    int
}

// Index stores up to a fixed number of fingerprints, each with a value
// (say, the URL of the page), and finds those within k bits of a query.
// When full, adding evicts the oldest entry.
//
// It splits the 64 bits into k+1 blocks and keeps one table per block: by
// the pigeonhole principle, two fingerprints within k bits agree exactly
// on at least one block, so a query looks at the entries that share a
// block with it, in each table, and checks their distance. The tables are
// hash chains threaded through a ring of entries, in insertion order, so
// that the oldest entry is at the head of each of its chains and is
// unlinked in constant time. Memory is about 24 bytes per entry plus the
// values, and 8(k+1)·2^b bytes of chain heads and tails for 2^b buckets
// per table. The buckets grow with the entries, not with maxEntries, so
// that a short crawl in an index sized for a long one stays small and
// starts fast: 2^b starts at 2^8 (less if maxEntries is smaller) and
// doubles, relinking every entry, whenever there are more entries than
// buckets, up to its cap, the least b ≥ 1 with 2^b ≥ maxEntries but at
// most 16, which a full index has. Add stays amortized constant time.
//
// An Index is safe for concurrent use. Create one with NewIndex.
type Index[V any] struct {
	k          int
	maxEntries int
	shift      [MaxK + 1]uint // block t is bits [shift[t], shift[t]+width[t])
	width      [MaxK + 1]uint
	maxBucket  uint // cap of mu.bucket, reached as the entries need it

	mu struct {
		sync.RWMutex
		bucket uint // log2 of buckets per table, now
		fps    []uint64
		vals   []V
		next   [][MaxK + 1]int32 // next entry in each table's chain, -1 at the end
		head   [MaxK + 1][]int32 // first (oldest) entry of each bucket, -1 if empty
		tail   [MaxK + 1][]int32
		n      int // entries stored
		oldest int // ring position of the oldest entry
	}
}

// initialBucket is log2 of the buckets per table of a new index: 2 KiB
// of chain heads and tails per table, 8 KiB at k = 3, cheap to make for
// a crawl of a few pages.
const initialBucket = 8

// NewIndex returns an index for queries within k bits (0 ≤ k ≤ MaxK)
// holding at most maxEntries fingerprints (at least 1). It panics on
// other arguments.
func NewIndex[V any](k, maxEntries int) *Index[V] {
	if k < 0 || k > MaxK || maxEntries < 1 || maxEntries > 1<<31-1 {
		panic(fmt.Sprintf("simhash: NewIndex(%d, %d): k must be in [0, %d] and maxEntries at least 1", k, maxEntries, MaxK))
	}
	ix := &Index[V]{k: k}
	blocks := uint(k + 1)
	var off uint
	for t := uint(0); t < blocks; t++ {
		w := 64 / blocks
		if t < 64%blocks {
			w++
		}
		ix.shift[t], ix.width[t] = off, w
		off += w
	}
	// As many buckets as entries, up to what the narrowest block can
	// tell apart, and at most 2^16 per table. That is the cap: the
	// tables start smaller and grow to it as entries come (see Add).
	b := uint(1)
	for b < 16 && 1<<b < maxEntries {
		b++
	}
	ix.maxBucket = min(b, ix.width[k])
	ix.mu.fps = make([]uint64, 0, min(maxEntries, 1<<10))
	ix.mu.vals = make([]V, 0, min(maxEntries, 1<<10))
	ix.mu.next = make([][MaxK + 1]int32, 0, min(maxEntries, 1<<10))
	ix.makeTablesLocked(min(initialBucket, ix.maxBucket))
	ix.maxEntries = maxEntries
	return ix
}

// makeTablesLocked replaces the tables with empty ones of 2^bucket
// buckets each; the entries must be relinked after. The caller holds
// ix.mu for writing, or is NewIndex, which has the only reference.
func (ix *Index[V]) makeTablesLocked(bucket uint) {
	ix.mu.bucket = bucket
	for t := 0; t <= ix.k; t++ {
		// Heads and tails share one allocation, filled with -1 at once.
		ht := make([]int32, 2<<bucket)
		for i := range ht {
			ht[i] = -1
		}
		ix.mu.head[t], ix.mu.tail[t] = ht[:1<<bucket:1<<bucket], ht[1<<bucket:]
	}
}

// bucketOf returns the bucket of fp in table t: the block's bits, mixed
// and cut to the tables' current size. The caller holds ix.mu, which
// guards the size.
func (ix *Index[V]) bucketOf(t int, fp uint64) int {
	blk := (fp >> ix.shift[t]) & (1<<ix.width[t] - 1)
	return int((blk * 0x9E3779B97F4A7C15) >> (64 - ix.mu.bucket))
}

// Len returns the number of entries stored.
func (ix *Index[V]) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.mu.n
}

// Add stores fp with its value, evicting the oldest entry when the index
// is full.
func (ix *Index[V]) Add(fp uint64, v V) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var pos int32
	switch {
	case len(ix.mu.fps) < ix.maxEntries:
		pos = int32(len(ix.mu.fps))
		ix.mu.fps = append(ix.mu.fps, fp)
		ix.mu.vals = append(ix.mu.vals, v)
		ix.mu.next = append(ix.mu.next, [MaxK + 1]int32{})
		ix.mu.n++
	default:
		pos = int32(ix.mu.oldest)
		ix.evictLocked(pos)
		ix.mu.oldest = (ix.mu.oldest + 1) % ix.maxEntries
		ix.mu.fps[pos], ix.mu.vals[pos] = fp, v
	}
	ix.linkLocked(pos)
	// One bucket per entry keeps the chains short. Entries come one at a
	// time, so one doubling restores it; once the index is full, n stays
	// at maxEntries and the tables at their cap.
	if ix.mu.n > 1<<ix.mu.bucket && ix.mu.bucket < ix.maxBucket {
		ix.growLocked()
	}
}

// linkLocked appends the entry at pos, the newest, to the tail of its
// chain in every table.
func (ix *Index[V]) linkLocked(pos int32) {
	fp := ix.mu.fps[pos]
	for t := 0; t <= ix.k; t++ {
		b := ix.bucketOf(t, fp)
		ix.mu.next[pos][t] = -1
		if last := ix.mu.tail[t][b]; last >= 0 {
			ix.mu.next[last][t] = pos
		} else {
			ix.mu.head[t][b] = pos
		}
		ix.mu.tail[t][b] = pos
	}
}

// growLocked doubles the buckets of every table and relinks the entries
// from the oldest to the newest, so that each chain is again in insertion
// order with its oldest entry at the head, as evictLocked needs. It costs
// O(n(k+1)), and comes only after the entries doubled, at most
// 16-initialBucket times, so Add stays amortized constant time.
func (ix *Index[V]) growLocked() {
	ix.makeTablesLocked(ix.mu.bucket + 1)
	// The ring holds the entries oldest first from ix.mu.oldest, wrapping
	// at maxEntries once full; before that, oldest is 0 and no wrap.
	for i, pos := 0, ix.mu.oldest; i < ix.mu.n; i++ {
		ix.linkLocked(int32(pos))
		if pos++; pos == ix.maxEntries {
			pos = 0
		}
	}
}

// evictLocked unlinks the entry at pos, the oldest, from the head of its
// chains.
func (ix *Index[V]) evictLocked(pos int32) {
	fp := ix.mu.fps[pos]
	for t := 0; t <= ix.k; t++ {
		b := ix.bucketOf(t, fp)
		// The oldest entry heads every chain it is in.
		nx := ix.mu.next[pos][t]
		ix.mu.head[t][b] = nx
		if nx < 0 {
			ix.mu.tail[t][b] = -1
		}
	}
	var zero V
	ix.mu.vals[pos] = zero
}

// Near returns the stored entries within k bits of fp, each once, oldest
// first within a table (the order is otherwise unspecified).
func (ix *Index[V]) Near(fp uint64) []Match[V] {
	return ix.AppendNear(nil, fp)
}

// AppendNear is Near appending to dst.
func (ix *Index[V]) AppendNear(dst []Match[V], fp uint64) []Match[V] {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var qb [MaxK + 1]int
	for t := 0; t <= ix.k; t++ {
		qb[t] = ix.bucketOf(t, fp)
	}
	for t := 0; t <= ix.k; t++ {
	chain:
		for e := ix.mu.head[t][qb[t]]; e >= 0; e = ix.mu.next[e][t] {
			c := ix.mu.fps[e]
			d := Distance(c, fp)
			if d > ix.k {
				continue
			}
			// Report each entry once: from the first table whose bucket
			// it shares with the query.
			for u := 0; u < t; u++ {
				if ix.bucketOf(u, c) == qb[u] {
					continue chain
				}
			}
			dst = append(dst, Match[V]{Fingerprint: c, Value: ix.mu.vals[e], Distance: d})
		}
	}
	return dst
}
