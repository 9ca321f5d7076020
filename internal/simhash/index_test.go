package simhash

import (
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// capBucket is log2 of the buckets per table that NewIndex made for
// every index before the tables grew: what a full index must still reach.
func capBucket(k, maxEntries int) uint {
	b := uint(1)
	for b < 16 && 1<<b < maxEntries {
		b++
	}
	return min(b, NewIndex[int](k, 1).width[k])
}

// checkChains walks every chain of ix and fails unless each of the live
// entries, the values lo..hi-1 of fps, is in exactly one chain per table,
// the one of its bucket, with the chains oldest first and their tails
// right: what Near's order and evictLocked rely on.
func checkChains(t *testing.T, ix *Index[int], fps []uint64, lo, hi int) {
	t.Helper()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.mu.n != hi-lo {
		t.Fatalf("n = %d, want %d", ix.mu.n, hi-lo)
	}
	for tb := 0; tb <= ix.k; tb++ {
		if len(ix.mu.head[tb]) != 1<<ix.mu.bucket || len(ix.mu.tail[tb]) != 1<<ix.mu.bucket {
			t.Fatalf("table %d: %d heads, %d tails, want 2^%d", tb, len(ix.mu.head[tb]), len(ix.mu.tail[tb]), ix.mu.bucket)
		}
		seen := 0
		for b, e := range ix.mu.head[tb] {
			last, prev := int32(-1), -1
			for ; e >= 0; e = ix.mu.next[e][tb] {
				v := ix.mu.vals[e]
				if v < lo || v >= hi || ix.mu.fps[e] != fps[v] {
					t.Fatalf("table %d bucket %d: entry %d holds value %d, not live or not its fingerprint", tb, b, e, v)
				}
				if v <= prev {
					t.Fatalf("table %d bucket %d: value %d after %d, want oldest first", tb, b, v, prev)
				}
				if ix.bucketOf(tb, fps[v]) != b {
					t.Fatalf("table %d: value %d in bucket %d, want %d", tb, v, b, ix.bucketOf(tb, fps[v]))
				}
				last, prev = e, v
				seen++
			}
			if ix.mu.tail[tb][b] != last {
				t.Fatalf("table %d bucket %d: tail %d, want %d", tb, b, ix.mu.tail[tb][b], last)
			}
		}
		if seen != hi-lo {
			t.Fatalf("table %d: %d entries in its chains, want %d", tb, seen, hi-lo)
		}
	}
}

// nearScan is Near by brute force over the live entries, the values
// lo..hi-1 of fps, in Near's order: table by table, oldest first, each
// entry in the first table whose bucket it shares with the query. Which
// bucket is the hash's, not under test; the chains are.
func nearScan(ix *Index[int], fps []uint64, lo, hi int, q uint64) []int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var want []int
	for tb := 0; tb <= ix.k; tb++ {
	entries:
		for v := lo; v < hi; v++ {
			if Distance(fps[v], q) > ix.k || ix.bucketOf(tb, fps[v]) != ix.bucketOf(tb, q) {
				continue
			}
			for u := 0; u < tb; u++ {
				if ix.bucketOf(u, fps[v]) == ix.bucketOf(u, q) {
					continue entries
				}
			}
			want = append(want, v)
		}
	}
	return want
}

// Near gives what a scan of the live entries gives, in the same order,
// while the tables grow step by step to their cap and while a full index
// evicts: growing must relink every entry, oldest first.
func TestIndexGrowsMatchesScan(t *testing.T) {
	for k := 0; k <= MaxK; k++ {
		for _, maxEntries := range []int{1, 5, 100, 300, 5000, 70_000} {
			if maxEntries == 70_000 && (k != MaxK || testing.Short()) {
				continue // past the cap of 2^16 buckets: once is enough
			}
			r := rand.New(rand.NewPCG(uint64(k), uint64(maxEntries)))
			ix := NewIndex[int](k, maxEntries)
			if got, want := ix.mu.bucket, min(initialBucket, capBucket(k, maxEntries)); got != want {
				t.Fatalf("k=%d max=%d: new index has 2^%d buckets, want 2^%d", k, maxEntries, got, want)
			}
			var fps []uint64
			n := 2*maxEntries + 700
			for i := range n {
				lo := max(0, len(fps)-maxEntries)
				fp := r.Uint64()
				switch {
				case len(fps) == 0:
				case i%4 == 1:
					// A near neighbour of a live entry, at 0..k+2 bits.
					fp = fps[lo+r.IntN(len(fps)-lo)]
					for range r.IntN(k + 3) {
						fp ^= 1 << r.IntN(64)
					}
				case i%4 == 2:
					fp = fps[lo+r.IntN(len(fps)-lo)] // a duplicate
				}
				fps = append(fps, fp)
				ix.Add(fp, i)
				lo, hi := max(0, len(fps)-maxEntries), len(fps)

				// Every Add of the small indexes. Of the others, those
				// just before and after each growth (at 2^j+1 entries),
				// as the ring wraps, and every maxEntries/20.
				live := hi - lo
				pow2 := bits.OnesCount(uint(live)) == 1 || bits.OnesCount(uint(live-1)) == 1
				if maxEntries > 300 && !pow2 && len(fps)%maxEntries > 1 && i%(maxEntries/20) != 0 {
					continue
				}
				if got, want := ix.Len(), live; got != want {
					t.Fatalf("k=%d max=%d after %d: Len %d, want %d", k, maxEntries, i+1, got, want)
				}
				// 2^8 buckets until the entries outgrow them, then the
				// fewest that hold one entry each, but never past the cap.
				if want := min(capBucket(k, maxEntries), max(initialBucket, uint(bits.Len(uint(live-1))))); ix.mu.bucket != want {
					t.Fatalf("k=%d max=%d after %d: 2^%d buckets, want 2^%d", k, maxEntries, i+1, ix.mu.bucket, want)
				}
				checkChains(t, ix, fps, lo, hi)
				queries := []uint64{fp, fps[lo], fps[lo+r.IntN(live)] ^ 1<<r.IntN(64), r.Uint64()}
				for range 2 {
					q := fps[lo+r.IntN(live)]
					for range r.IntN(k + 2) {
						q ^= 1 << r.IntN(64)
					}
					queries = append(queries, q)
				}
				for _, q := range queries {
					var got []int
					for _, m := range ix.Near(q) {
						if m.Value < lo || m.Value >= hi || m.Fingerprint != fps[m.Value] || m.Distance != Distance(m.Fingerprint, q) {
							t.Fatalf("k=%d max=%d after %d: query %x: bad match %+v", k, maxEntries, i+1, q, m)
						}
						got = append(got, m.Value)
					}
					// The set, against a plain scan: each entry within k once.
					set := slices.Sorted(slices.Values(got))
					var scan []int
					for v := lo; v < hi; v++ {
						if Distance(fps[v], q) <= k {
							scan = append(scan, v)
						}
					}
					if !slices.Equal(set, slices.Compact(slices.Clone(set))) {
						t.Fatalf("k=%d max=%d after %d: query %x: an entry reported twice: %v", k, maxEntries, i+1, q, got)
					}
					if !slices.Equal(set, scan) {
						t.Fatalf("k=%d max=%d after %d: query %x: got %v, scan finds %v", k, maxEntries, i+1, q, set, scan)
					}
					// The order: oldest first within a table.
					if want := nearScan(ix, fps, lo, hi, q); !slices.Equal(got, want) {
						t.Fatalf("k=%d max=%d after %d: query %x: got %v, want in the order %v", k, maxEntries, i+1, q, got, want)
					}
				}
			}
			if got, want := ix.mu.bucket, capBucket(k, maxEntries); got != want {
				t.Errorf("k=%d max=%d: full index has 2^%d buckets, want 2^%d as before", k, maxEntries, got, want)
			}
		}
	}
}

// An index sized for a long crawl costs little to make: its tables start
// small rather than at 2^16 buckets (2 MiB at k = 3, all of it written).
func TestNewIndexStartsSmall(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ix := NewIndex[string](3, 1<<20)
	runtime.ReadMemStats(&after)
	if b := after.TotalAlloc - before.TotalAlloc; b >= 64<<10 {
		t.Errorf("NewIndex(3, 1<<20) allocated %d bytes, want under 64 KiB", b)
	}
	// A crawl of a few hundred pages grows it a little.
	runtime.ReadMemStats(&before)
	var fp uint64
	for range 300 {
		fp += 0x9E3779B97F4A7C15
		ix.Add(fp, "u")
	}
	runtime.ReadMemStats(&after)
	if b := after.TotalAlloc - before.TotalAlloc; b >= 64<<10 {
		t.Errorf("300 Adds allocated %d bytes, want under 64 KiB", b)
	}
	if m := ix.Near(fp); len(m) != 1 || m[0].Distance != 0 {
		t.Errorf("Near after growth: %v", m)
	}
}

// Readers see whole tables while Add grows them: every match is a
// fingerprint that was added, with its own value. Run with -race.
func TestIndexGrowsConcurrently(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 14))
	fps := make([]uint64, 20_000)
	for i := range fps {
		fps[i] = r.Uint64()
	}
	ix := NewIndex[int](2, 5000)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 3 {
		wg.Go(func() {
			var dst []Match[int]
			for i := g; ; i += 3 {
				select {
				case <-stop:
					return
				default:
				}
				dst = ix.AppendNear(dst[:0], fps[i%len(fps)]^1)
				for _, m := range dst {
					if m.Fingerprint != fps[m.Value] || m.Distance > 2 {
						t.Errorf("match %+v of %x", m, fps[i%len(fps)]^1)
						return
					}
				}
			}
		})
	}
	for i, fp := range fps {
		ix.Add(fp, i)
	}
	close(stop)
	wg.Wait()
}

// BenchmarkAdd adds to a full index, each Add evicting the oldest entry:
// the steady state of a long crawl.
func BenchmarkAdd(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	const n = 1 << 20
	ix := NewIndex[int32](3, n)
	for i := range n {
		ix.Add(r.Uint64(), int32(i))
	}
	b.ReportAllocs()
	i := int32(0)
	for b.Loop() {
		ix.Add(r.Uint64(), i)
		i++
	}
}

// BenchmarkFill fills an index from empty to 2^16 entries, through every
// growth of its tables: the cost of Add while a crawl is young.
func BenchmarkFill(b *testing.B) {
	r := rand.New(rand.NewPCG(11, 12))
	fps := make([]uint64, 1<<16)
	for i := range fps {
		fps[i] = r.Uint64()
	}
	b.ReportAllocs()
	for b.Loop() {
		ix := NewIndex[int32](3, 1<<20)
		for i, fp := range fps {
			ix.Add(fp, int32(i))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(fps)), "ns/add")
}

// BenchmarkStart makes an index sized for a long crawl and adds the few
// hundred pages of a short one: what a process start pays.
func BenchmarkStart(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	fps := make([]uint64, 300)
	for i := range fps {
		fps[i] = r.Uint64()
	}
	b.ReportAllocs()
	for b.Loop() {
		ix := NewIndex[string](3, 1<<20)
		for _, fp := range fps {
			ix.Add(fp, "u")
		}
	}
}
