// Command frontierscale measures the embedded frontier at a given size. It
// admits -urls URLs spread over -hosts hosts into a fresh store in -dir, in
// batches of 1,000 as a crawl's workers offer links, closes the store and
// opens it again, then leases and releases a sample of URLs as a crawl
// does (a claim of whichever host is due, a release with the URL settled
// and its history written). Human-readable lines go to standard error; the
// last line on standard output is one JSON object:
//
//	{"urls":…,"hosts":…,"admit_per_s":…,"bytes_per_url":…,"peak_rss_mb":…,
//	 "reopen_s":…,"lease_us_p50":…,"lease_us_p99":…,"cpu_ref_ms":…}
//
// lease_us is the time of one Claim and its Release together. Run it alone
// on the machine: it measures throughput. cpu_ref_ms measures the machine,
// not the frontier: the time one core takes to hash 64 MiB with FNV-1a,
// a byte at a time (the best of three, before the admission). A shared virtual machine's cores are not
// the same speed from day to day; figures taken on days whose cpu_ref_ms
// differ are compared through it.
//
//	go run ./cmd/frontierscale -urls 10000000 -hosts 100000 -dir /var/tmp/fs
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
	"github.com/gentlecrawl/gentlecrawl/internal/gctune"
)

type report struct {
	URLs        int     `json:"urls"`
	Hosts       int     `json:"hosts"`
	AdmitPerS   float64 `json:"admit_per_s"`
	BytesPerURL float64 `json:"bytes_per_url"`
	PeakRSSMB   float64 `json:"peak_rss_mb"`
	ReopenS     float64 `json:"reopen_s"`
	LeaseUSP50  float64 `json:"lease_us_p50"`
	LeaseUSP99  float64 `json:"lease_us_p99"`
	CPURefMS    float64 `json:"cpu_ref_ms"`
}

func main() {
	// The collector as the gentlecrawl command sets it, unless GOGC or
	// GOMEMLIMIT say otherwise: the memory measured is a crawl's.
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		gctune.Start(gctune.Config{Percent: 200, LowPercent: 50, Floor: 72 << 20, MinPercent: 40, Slack: 16 << 20})
	}
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "frontierscale:", err)
		os.Exit(1)
	}
}

const batchSize = 1000

func run(args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("frontierscale", flag.ContinueOnError)
	fl.SetOutput(stderr)
	urls := fl.Int("urls", 1_000_000, "URLs to admit")
	hosts := fl.Int("hosts", 100_000, "hosts the URLs are spread over")
	dir := fl.String("dir", "", "directory of the fresh store: absent or empty (required)")
	producers := fl.Int("producers", runtime.GOMAXPROCS(0), "goroutines offering batches at once")
	sample := fl.Int("leases", 20_000, "leases (claim and release) timed after the reopen")
	keep := fl.Bool("keep", false, "keep the store when done")
	verbose := fl.Bool("v", false, "log the store's debug messages")
	memprofile := fl.String("memprofile", "", "write a heap profile after the leases to this file")
	cpuprofile := fl.String("cpuprofile", "", "write a CPU profile of the admission to this file")
	if err := fl.Parse(args); err != nil {
		return err
	}
	switch {
	case *dir == "":
		return errors.New("-dir is required")
	case *urls < 1 || *hosts < 1 || *hosts > *urls:
		return fmt.Errorf("want 1 ≤ -hosts ≤ -urls, have -hosts %d -urls %d", *hosts, *urls)
	case *producers < 1 || *sample < 0:
		return errors.New("-producers must be at least 1 and -leases not negative")
	}
	if ents, err := os.ReadDir(*dir); err == nil && len(ents) > 0 {
		return fmt.Errorf("%s is not empty: frontierscale measures a fresh store", *dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if !*keep {
		defer os.RemoveAll(*dir)
	}
	ctx := context.Background()
	r := report{URLs: *urls, Hosts: *hosts, CPURefMS: cpuRef()}
	fmt.Fprintf(stderr, "this machine: FNV-1a of 64 MiB in %.1f ms on one core\n", r.CPURefMS)
	opts := frontier.Options{ExpectedURLs: *urls}
	if *verbose {
		opts.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}

	s, err := frontier.Open(*dir, opts)
	if err != nil {
		return err
	}
	stopProfile, err := startCPUProfile(*cpuprofile)
	if err != nil {
		s.Close()
		return err
	}
	elapsed, err := admit(ctx, s, *urls, *hosts, *producers, stderr)
	if perr := stopProfile(); err == nil {
		err = perr
	}
	if err != nil {
		s.Close()
		return err
	}
	r.AdmitPerS = float64(*urls) / elapsed.Seconds()
	if err := s.Close(); err != nil {
		return err
	}
	size, err := dirSize(*dir)
	if err != nil {
		return err
	}
	r.BytesPerURL = float64(size) / float64(*urls)
	fmt.Fprintf(stderr, "admitted %d URLs over %d hosts in %v: %.0f URLs/s; store %d bytes, %.1f per URL; peak RSS so far %.0f MB\n",
		*urls, *hosts, elapsed.Round(time.Millisecond), r.AdmitPerS, size, r.BytesPerURL, peakRSSMB())

	// As a new process would: the closed store's memory is not kept.
	s = nil
	debug.FreeOSMemory()
	start := time.Now()
	s, err = frontier.Open(*dir, opts)
	if err != nil {
		return err
	}
	r.ReopenS = time.Since(start).Seconds()
	fmt.Fprintf(stderr, "reopened in %.3f s; RSS %.0f MB, peak so far %.0f MB\n", r.ReopenS, residentMB(), peakRSSMB())

	lat, err := leases(ctx, s, *sample)
	if *memprofile != "" && err == nil {
		err = writeHeapProfile(*memprofile)
	}
	if *verbose {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Fprintf(stderr, "after the leases: Go heap %d MB in use, %d MB from the system; %s\n", ms.HeapInuse>>20, ms.Sys>>20, "")
	}
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if len(lat) > 0 {
		slices.Sort(lat)
		r.LeaseUSP50 = micros(lat[len(lat)/2])
		r.LeaseUSP99 = micros(lat[min(len(lat)-1, len(lat)*99/100)])
		fmt.Fprintf(stderr, "%d leases: p50 %.1f µs, p99 %.1f µs, max %.1f µs; RSS %.0f MB\n",
			len(lat), r.LeaseUSP50, r.LeaseUSP99, micros(lat[len(lat)-1]), residentMB())
	}
	r.PeakRSSMB = peakRSSMB()
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", line)
	return err
}

// cpuRef returns the milliseconds one core takes to hash 64 MiB with
// FNV-1a (a multiply and an exclusive or a byte, one after the other), the
// best of three: a yardstick of the machine's speed that no change to
// gentlecrawl moves. It hashes one MiB 64 times, so as not to add to the
// peak RSS measured.
func cpuRef() float64 {
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	best := time.Duration(1<<63 - 1)
	for range 3 {
		start := time.Now()
		h := fnv.New64a()
		for range 64 {
			h.Write(buf)
		}
		refSink = h.Sum64()
		best = min(best, time.Since(start))
	}
	return float64(best.Microseconds()) / 1e3
}

// refSink keeps cpuRef's hash, so that its work is not optimised away.
var refSink uint64

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// host names the i-th host; url the n-th URL, on host n mod hosts. A URL is
// about 75 bytes, as the links of a real site are.
func host(i int) string { return "h" + strconv.Itoa(i) + ".example.com" }

func candidate(n, hosts int) frontier.Candidate {
	h := host(n % hosts)
	u := "https://" + h + "/section/" + strconv.Itoa(n/hosts%97) + "/article-" + strconv.Itoa(n) + ".html?ref=list"
	return frontier.Candidate{Host: h, Canonical: u, Entry: frontier.Entry{URL: u, Depth: 2}}
}

// admit offers URLs 0..urls-1 in batches from producers goroutines and
// checks that each is queued once. It logs the rate and resident memory
// after each tenth.
func admit(ctx context.Context, s *frontier.Store, urls, hosts, producers int, log io.Writer) (time.Duration, error) {
	batches := (urls + batchSize - 1) / batchSize
	var next, done atomic.Int64
	var failed atomic.Pointer[error]
	var mu sync.Mutex
	start := time.Now()
	var wg sync.WaitGroup
	for range producers {
		wg.Go(func() {
			batch := make([]frontier.Candidate, 0, batchSize)
			for failed.Load() == nil {
				n := int(next.Add(1)) - 1
				if n >= batches {
					return
				}
				batch = batch[:0]
				for i := n * batchSize; i < min(urls, (n+1)*batchSize); i++ {
					batch = append(batch, candidate(i, hosts))
				}
				added, err := s.Add(ctx, frontier.Batch{Add: batch})
				if err == nil && added.Total() != len(batch) {
					err = fmt.Errorf("batch %d: %d of %d URLs queued", n, added.Total(), len(batch))
				}
				if err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
				step := int64(max(1, urls/10))
				before := done.Add(int64(len(batch))) - int64(len(batch))
				if after := before + int64(len(batch)); before/step != after/step {
					mu.Lock()
					now := time.Now()
					fmt.Fprintf(log, "%6.1f M URLs  %7.1f s  %7.0f URLs/s overall  RSS %.0f MB\n",
						float64(after)/1e6, now.Sub(start).Seconds(), float64(after)/now.Sub(start).Seconds(), residentMB())
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		return 0, *err
	}
	return time.Since(start), nil
}

// leases claims whichever host is due n times, one URL each, and releases
// each lease with its URL fetched and a history written, as a crawl's
// worker does; it returns the time of each claim and release together.
func leases(ctx context.Context, s *frontier.Store, n int) ([]time.Duration, error) {
	lat := make([]time.Duration, 0, n)
	fetched := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for range n {
		t0 := time.Now()
		l, _, err := s.Claim(ctx, frontier.ClaimRequest{Now: t0, Max: 1})
		if err != nil {
			return lat, err
		}
		if l == nil {
			break // everything leased
		}
		it := l.Items[0]
		h := &frontier.History{
			URL: it.URL, Status: 200, ETag: `"5f2a-61c9e0b2"`, LastModified: "Sat, 05 Dec 2026 09:14:02 GMT",
			ContentType: "text/html; charset=utf-8", Size: 48213, Fetched: fetched, Captured: fetched, Visits: 1,
		}
		res := frontier.Result{Item: it, Outcome: frontier.Fetched, Canonical: it.URL, History: h}
		if _, err := s.Release(ctx, frontier.ReleaseRequest{Lease: l, Results: []frontier.Result{res}, Next: t0}); err != nil {
			return lat, err
		}
		lat = append(lat, time.Since(t0))
	}
	return lat, nil
}

func dirSize(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			total += info.Size()
		}
		return err
	})
	return total, err
}

// peakRSSMB is the process's peak resident set: VmHWM on Linux, else the
// maximum resident set getrusage reports.
func peakRSSMB() float64 {
	if mb := procStatus("VmHWM:"); mb > 0 {
		return mb
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024
}

func residentMB() float64 { return procStatus("VmRSS:") }

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

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// startCPUProfile starts a CPU profile written to path, when path is not
// empty, and returns what stops it.
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}
