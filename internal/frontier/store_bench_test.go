package frontier_test

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
)

const (
	benchHosts = 100_000 // hosts the benchmark URLs spread over
	benchBatch = 1000    // candidates per Add
)

// benchHost returns the politeness key of host h.
func benchHost(h int) string { return "www.site" + strconv.Itoa(h) + ".example.com" }

// benchCandidate returns the i-th URL of the benchmarks: URL i is on host
// i%benchHosts, about 75 bytes long, shaped like an article link.
func benchCandidate(i int) frontier.Candidate {
	h := benchHost(i % benchHosts)
	u := "https://" + h + "/section/" + strconv.Itoa(i%37) + "/article-" + strconv.Itoa(i) + ".html?ref=list"
	return frontier.Candidate{Host: h, Canonical: u, Entry: frontier.Entry{URL: u, Depth: 2}}
}

func openBench(b *testing.B, dir string) *frontier.Store {
	b.Helper()
	s, err := frontier.Open(dir, frontier.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// admit adds URLs [from, to) in batches of benchBatch.
func admit(b *testing.B, s *frontier.Store, from, to int) {
	b.Helper()
	batch := make([]frontier.Candidate, 0, benchBatch)
	for i := from; i < to; i++ {
		batch = append(batch, benchCandidate(i))
		if len(batch) == benchBatch || i == to-1 {
			if _, err := s.Add(ctx, frontier.Batch{Add: batch}); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

// BenchmarkAdd measures admission: one op is one Add of a batch of 1,000
// candidates spread over 100,000 hosts, each checked against the seen-set,
// committed with an fsync asked for (not awaited: see frontier.Frontier). The
// candidates are built before the timer starts.
//
//   - new: every candidate is new (seen key, queue entry, host records).
//   - half-seen: half of each batch was admitted before and is dropped by
//     the seen-check, as most links of a real crawl are.
func BenchmarkAdd(b *testing.B) {
	for _, tc := range []struct {
		name string
		seen int // candidates per batch already admitted
	}{
		{"new", 0},
		{"half-seen", benchBatch / 2},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := openBench(b, b.TempDir())
			fresh := benchBatch - tc.seen
			const old = 200_000
			if tc.seen > 0 {
				admit(b, s, 0, old)
			}
			batches := make([][]frontier.Candidate, b.N)
			next := old
			for n := range batches {
				batch := make([]frontier.Candidate, 0, benchBatch)
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
				added, err := s.Add(ctx, frontier.Batch{Add: batches[n]})
				if err != nil {
					b.Fatal(err)
				}
				if added.Total() != fresh {
					b.Fatalf("batch %d: %d added, want %d", n, added.Total(), fresh)
				}
			}
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N*benchBatch)/elapsed.Seconds(), "candidates/s")
			b.ReportMetric(float64(b.N*fresh)/elapsed.Seconds(), "URLs/s")
		})
	}
}

// BenchmarkClaimRelease measures one host lease: Claim of whichever host is
// due first (one URL), then Release with the URL fetched, its history
// written, and the host due again at once. 10,000 hosts hold 50 URLs each.
//
//   - serial: one worker (its releases' fsyncs are not awaited, see
//     frontier.Frontier, so they are shared too).
//   - workers=32: 32 workers, as the crawler runs by default; workers=128,
//     a larger crawl. Their releases share fsyncs.
func BenchmarkClaimRelease(b *testing.B) {
	for _, workers := range []int{1, 32, 128} {
		name := "serial"
		if workers > 1 {
			name = "workers=" + strconv.Itoa(workers)
		}
		b.Run(name, func(b *testing.B) {
			s := openBench(b, b.TempDir())
			const hosts, perHost = 10_000, 50
			batch := make([]frontier.Candidate, 0, benchBatch)
			for i := range hosts * perHost {
				h := benchHost(i % hosts)
				u := "https://" + h + "/a/" + strconv.Itoa(i) + ".html"
				batch = append(batch, frontier.Candidate{Host: h, Canonical: u, Entry: frontier.Entry{URL: u}})
				if len(batch) == benchBatch {
					if _, err := s.Add(ctx, frontier.Batch{Add: batch}); err != nil {
						b.Fatal(err)
					}
					batch = batch[:0]
				}
			}
			// Settle the set-up's compactions, so that they do not count.
			if err := s.CompactForTest(); err != nil {
				b.Fatal(err)
			}
			fetched := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
			var ops atomic.Int64
			b.ReportAllocs()
			stop := profileTimed(b)
			cpu0 := cpuTime()
			b.ResetTimer()
			// RunParallel starts parallelism × GOMAXPROCS goroutines.
			b.SetParallelism(max(1, workers/runtime.GOMAXPROCS(0)))
			run := func(pb interface{ Next() bool }) {
				for pb.Next() {
					now := time.Now()
					l, _, err := s.Claim(ctx, frontier.ClaimRequest{Now: now, Max: 1})
					if err != nil || l == nil {
						b.Errorf("Claim = %v, %v at op %d", l, err, ops.Load())
						return
					}
					it := l.Items[0]
					h := &frontier.History{
						URL: it.URL, Status: 200, ETag: `"5f2a-61c9e0b2"`,
						LastModified: "Sat, 28 Nov 2026 09:14:02 GMT", ContentType: "text/html; charset=utf-8",
						Digest: "sha1:2CU3AZ6ZQ3YKQD6V7XNNS2J7A3TXQJ4U", Size: 48213, Fetched: fetched, Captured: fetched, Visits: 1,
					}
					r := frontier.Result{Item: it, Outcome: frontier.Fetched, Canonical: it.URL, History: h}
					if _, err := s.Release(ctx, frontier.ReleaseRequest{Lease: l, Results: []frontier.Result{r}, Next: now}); err != nil {
						b.Errorf("Release: %v", err)
						return
					}
					ops.Add(1)
				}
			}
			if workers == 1 {
				n := 0
				run(nextFunc(func() bool { n++; return n <= b.N }))
			} else {
				b.RunParallel(func(pb *testing.PB) { run(pb) })
			}
			// CPU time of the whole process (Pebble's goroutines included)
			// per lease: the work a claim and release cost, apart from the
			// wait for the disk.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
			stop()
		})
	}
}

// profileTimed starts a CPU profile of the timed part of a benchmark when
// FRONTIER_BENCH_CPUPROFILE names a file (-cpuprofile would also take in the
// set-up, which is most of the run); the returned func stops it. The last
// run of the benchmark (the one with the largest b.N) overwrites the others.
func profileTimed(b *testing.B) func() {
	name := os.Getenv("FRONTIER_BENCH_CPUPROFILE")
	if name == "" {
		return func() {}
	}
	f, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

type nextFunc func() bool

func (f nextFunc) Next() bool { return f() }

// BenchmarkDiskBytesPerURL admits 1,000,000 URLs (in batches of 1,000 over
// 100,000 hosts) into an empty store and reports the size of the store's
// directory per URL after Close, as a crawl leaves it, and after a full
// compaction, the steady state of the same data.
func BenchmarkDiskBytesPerURL(b *testing.B) {
	const urls = 1_000_000
	var raw, compacted int64
	for range b.N {
		dir := b.TempDir()
		s, err := frontier.Open(dir, frontier.Options{})
		if err != nil {
			b.Fatal(err)
		}
		admit(b, s, 0, urls)
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		raw = dirSize(b, dir)
		s, err = frontier.Open(dir, frontier.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.CompactForTest(); err != nil {
			b.Fatal(err)
		}
		s.Close()
		compacted = dirSize(b, dir)
	}
	b.ReportMetric(float64(raw)/urls, "bytes/URL")
	b.ReportMetric(float64(compacted)/urls, "bytes/URL-compacted")
}

// BenchmarkAdmissionAtScale measures admission into a large store:
// FRONTIER_BENCH_URLS URLs (default 1,000,000; BENCHMARKS.md's figures are
// for 10,000,000) over 100,000 hosts, admitted in batches of 1,000 into an
// empty store by FRONTIER_BENCH_PRODUCERS goroutines at once (default 1; a crawl
// admits from all its workers). It reports the admission rate over the
// whole run, the resident memory after each tenth and at the end, the
// store's size per URL, and how long opening it again takes. Run it alone,
// once:
//
//	FRONTIER_BENCH_URLS=10000000 go test -tags pebblegozstd -run XXX \
//	    -bench AdmissionAtScale -benchtime 1x -timeout 30m ./internal/frontier/
func BenchmarkAdmissionAtScale(b *testing.B) {
	total, producers := 1_000_000, 1
	for _, p := range []struct {
		env string
		v   *int
		min int
	}{{"FRONTIER_BENCH_URLS", &total, benchBatch}, {"FRONTIER_BENCH_PRODUCERS", &producers, 1}} {
		if v := os.Getenv(p.env); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < p.min {
				b.Fatalf("%s=%q: want a number ≥ %d", p.env, v, p.min)
			}
			*p.v = n
		}
	}
	batches := (total + benchBatch - 1) / benchBatch
	for range b.N {
		dir := b.TempDir()
		s, err := frontier.Open(dir, frontier.Options{ExpectedURLs: total})
		if err != nil {
			b.Fatal(err)
		}
		var next, admitted atomic.Int64 // batches taken, URLs admitted
		var mu sync.Mutex
		var rss []string
		stop := profileTimed(b)
		cpu0 := cpuTime()
		start := time.Now()
		var wg sync.WaitGroup
		for range producers {
			wg.Go(func() {
				batch := make([]frontier.Candidate, 0, benchBatch)
				for {
					n := int(next.Add(1)) - 1
					if n >= batches {
						return
					}
					batch = batch[:0]
					for i := n * benchBatch; i < min(total, (n+1)*benchBatch); i++ {
						batch = append(batch, benchCandidate(i))
					}
					added, err := s.Add(ctx, frontier.Batch{Add: batch})
					if err != nil || added.Total() != len(batch) {
						b.Errorf("batch %d: %d added of %d, %v", n, added.Total(), len(batch), err)
						return
					}
					before := admitted.Load()
					after := admitted.Add(int64(len(batch)))
					if step := int64(total / 10); before/step != after/step {
						mu.Lock()
						rss = append(rss, strconv.FormatFloat(float64(after)/1e6, 'f', 1, 64)+"M:"+strconv.Itoa(int(residentMB()))+"MB")
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		cpu := cpuTime() - cpu0
		stop()
		if b.Failed() {
			return
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		size := dirSize(b, dir)
		b.ReportMetric(float64(total)/elapsed.Seconds(), "URLs/s")
		// The process's CPU time over the run, Pebble's goroutines
		// included, in cores: the machine's core count is all of it.
		b.ReportMetric(cpu.Seconds()/elapsed.Seconds(), "cores")
		b.ReportMetric(float64(size)/float64(total), "bytes/URL")
		b.ReportMetric(residentMB(), "RSS-MB")
		b.ReportMetric(peakMB(), "peak-RSS-MB")
		b.Logf("%d URLs by %d producers in %v; resident memory %s", total, producers, elapsed.Round(time.Millisecond), strings.Join(rss, " "))

		// Opening the job again rebuilds the in-memory state.
		reopen := time.Now()
		s, err = frontier.Open(dir, frontier.Options{ExpectedURLs: total})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(reopen).Seconds(), "reopen-s")
		s.Close()
		runtime.GC()
	}
}

// cpuTime is the user and system CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// residentMB is the process's resident set, from /proc/self/status.
func residentMB() float64 { return procStatus("VmRSS:") }

// peakMB is the process's peak resident set.
func peakMB() float64 { return procStatus("VmHWM:") }

func procStatus(field string) float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return float64(kb) / 1024
		}
	}
	return 0
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
