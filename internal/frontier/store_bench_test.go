package frontier

import (
	"io/fs"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

const (
	benchHosts = 1000 // hosts the benchmark URLs spread over
	benchBatch = 100  // candidates per Apply, as from one page's links
)

// benchHost returns the host key of host h.
func benchHost(h int) string {
	return "https://www.site" + strconv.Itoa(h) + ".example.com"
}

// benchCandidate returns the i-th URL of the benchmarks: URL i is on host
// i%benchHosts, about 75 bytes long, shaped like an article link.
func benchCandidate(i int) Candidate {
	h := i % benchHosts
	u := benchHost(h) + "/section/" + strconv.Itoa(i%37) + "/article-" + strconv.Itoa(i) + ".html?ref=list"
	return Candidate{Host: benchHost(h), Canonical: u, Entry: Entry{URL: u, Depth: 2}}
}

func openBench(b *testing.B) *Store {
	b.Helper()
	s, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// admit adds URLs [from, to) in batches of benchBatch.
func admit(b *testing.B, s *Store, from, to int) {
	b.Helper()
	batch := make([]Candidate, 0, benchBatch)
	for i := from; i < to; i++ {
		batch = append(batch, benchCandidate(i))
		if len(batch) == benchBatch || i == to-1 {
			if _, err := s.Apply(Update{Add: batch}); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

// BenchmarkApplyAdd measures admission: one op is one Apply of a batch of
// 100 candidates spread over 1,000 hosts, each checked against the
// seen-set. The candidates are built before the timer starts.
//
//   - new: every candidate is new, so each one is written (seen key and
//     queue entry).
//   - half-seen: half of each batch was admitted before and is dropped by
//     the seen-check, as most links of a real crawl are.
func BenchmarkApplyAdd(b *testing.B) {
	for _, tc := range []struct {
		name string
		seen int // candidates per batch already admitted
	}{
		{"new", 0},
		{"half-seen", benchBatch / 2},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := openBench(b)
			fresh := benchBatch - tc.seen
			// Admit the URLs the batches will repeat.
			const old = 100_000
			if tc.seen > 0 {
				admit(b, s, 0, old)
			}
			batches := make([][]Candidate, b.N)
			next := old
			for n := range batches {
				batch := make([]Candidate, 0, benchBatch)
				for j := range benchBatch {
					if j < tc.seen {
						batch = append(batch, benchCandidate((n*benchBatch+j)%old))
					} else {
						batch = append(batch, benchCandidate(next))
						next++
					}
				}
				batches[n] = batch
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for n := 0; n < b.N; n++ {
				added, err := s.Apply(Update{Add: batches[n]})
				if err != nil {
					b.Fatal(err)
				}
				if total := sumCounts(added); total != fresh {
					b.Fatalf("batch %d: %d added, want %d", n, total, fresh)
				}
			}
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N*benchBatch)/elapsed.Seconds(), "candidates/s")
			b.ReportMetric(float64(b.N*fresh)/elapsed.Seconds(), "URLs/s")
		})
	}
}

func sumCounts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// BenchmarkPeekApplyDone measures the visit of one URL as the crawler does
// it: Peek the head of a host's queue, then Apply its completion (queue entry
// deleted, history record written) with no new links. Hosts are visited in
// turn over 1,000 hosts, so each queue's head moves forward past the
// entries deleted before it.
func BenchmarkPeekApplyDone(b *testing.B) {
	s := openBench(b)
	perHost := max(100, b.N/benchHosts+1)
	admit(b, s, 0, perHost*benchHosts)
	fetched := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		host := benchHost(n % benchHosts)
		item, err := s.Peek(host)
		if err != nil {
			b.Fatal(err)
		}
		if item == nil {
			b.Fatalf("queue of %s is empty at op %d", host, n)
		}
		h := &History{
			URL:          item.URL,
			Status:       200,
			Outcome:      "fetched",
			ETag:         `"5f2a-61c9e0b2"`,
			LastModified: "Sat, 28 Nov 2026 09:14:02 GMT",
			ContentType:  "text/html; charset=utf-8",
			Digest:       "sha1:2CU3AZ6ZQ3YKQD6V7XNNS2J7A3TXQJ4U",
			Size:         48213,
			Fetched:      fetched,
			Captured:     fetched,
			Visits:       1,
		}
		if _, err := s.Apply(Update{Done: item, Canonical: item.URL, History: h}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDiskBytesPerURL admits 200,000 URLs (in batches of 100 over
// 1,000 hosts) into an empty store and reports the size of the store's
// directory per URL:
//
//   - bytes/URL: after Close, as a crawl leaves it (the write-ahead log
//     still holds what the memtable had not flushed);
//   - bytes/URL-compacted: after a flush and a full compaction, the
//     steady state of the same data.
//
// A queued URL costs a seen-set key and a queue entry.
func BenchmarkDiskBytesPerURL(b *testing.B) {
	const urls = 200_000
	var raw, compacted int64
	for n := 0; n < b.N; n++ {
		b.StopTimer()
		dir := b.TempDir()
		dir2 := b.TempDir()
		b.StartTimer()

		s, err := Open(dir, nil)
		if err != nil {
			b.Fatal(err)
		}
		admit(b, s, 0, urls)
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		raw = dirSize(b, dir)

		s, err = Open(dir2, nil)
		if err != nil {
			b.Fatal(err)
		}
		admit(b, s, 0, urls)
		if err := s.db.Flush(); err != nil {
			b.Fatal(err)
		}
		if err := s.db.Compact(b.Context(), []byte{0}, []byte{0xff}, false); err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		compacted = dirSize(b, dir2)
	}
	b.ReportMetric(float64(raw)/urls, "bytes/URL")
	b.ReportMetric(float64(compacted)/urls, "bytes/URL-compacted")
}

func dirSize(b *testing.B, dir string) int64 {
	b.Helper()
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return total
}
