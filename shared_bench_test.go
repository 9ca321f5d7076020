package gentlecrawl_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
	"github.com/gentlecrawl/gentlecrawl/internal/pgtest"
	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

// The web of the shared-frontier benchmarks: many hosts on many loopback
// addresses, so that neither the per-address budget (MaxPerAddr, 2) nor
// one listener limits the crawl, with pages only (no files) and robots.txt
// that allows everything (no Crawl-delay).
const (
	sharedBenchHosts     = 1000
	sharedBenchPages     = 6 // mean pages per host
	sharedBenchAddrs     = 250
	sharedBenchWorkers   = 64 // BenchmarkSharedCrawl: the total over all processes
	sharedBenchEach      = 32 // BenchmarkSharedCrawlPerProcess: per process
	sharedBenchOpTimeout = 10 * time.Minute
)

// BenchmarkSharedCrawl crawls one simweb of 1,000 hosts (about 6,000
// pages, on 250 loopback addresses) as 1, 2 and 4 gentlecrawl processes
// sharing one frontier in a durable PostgreSQL (fsync on, asynchronous
// commit: the frontier's default). The total number of workers is the same
// for every count of processes (64, split evenly), so that more processes
// mean the same concurrency spread over more runtimes and connections, not
// more of it. One op is one whole crawl into a fresh database and fresh job
// directories; the seeds are split round-robin among the processes, and
// the op ends when every process has exited 0.
//
// Metrics: pages/s and requests/s over the op's wall time (pages: 200
// answers for paths other than /robots.txt, from simweb's log); CPU per
// page of the crawler processes (their rusage), of PostgreSQL
// (pgtest.Server.CPUTime) and of this process, which is mostly the simweb
// server; busy-cores is all of that CPU over the wall time; refetches/op
// counts 200 answers beyond the first for one URL. Run it with
// -benchtime 1x -count N: one op is a 10-30 s crawl.
func BenchmarkSharedCrawl(b *testing.B) {
	benchmarkSharedCrawl(b, func(procs int) int { return sharedBenchWorkers / procs }, 0)
}

// BenchmarkSharedCrawlPerProcess is BenchmarkSharedCrawl with 32 workers in
// every process: 2 and 4 processes bring 64 and 128 workers.
func BenchmarkSharedCrawlPerProcess(b *testing.B) {
	benchmarkSharedCrawl(b, func(int) int { return sharedBenchEach }, 0)
}

// BenchmarkSharedCrawlFarServers is BenchmarkSharedCrawlPerProcess with
// servers far away: every answer takes sharedBenchFar (a long network path
// and a server's own time), as on the Internet, where a crawler process is
// bound by how many requests its workers keep in flight, not by the cores.
// 16 workers per process: what each process adds is its workers, as each
// machine of a shared crawl would.
func BenchmarkSharedCrawlFarServers(b *testing.B) {
	benchmarkSharedCrawl(b, func(int) int { return sharedBenchFarEach }, sharedBenchFar)
}

const (
	sharedBenchFar     = 150 * time.Millisecond
	sharedBenchFarEach = 16
)

func benchmarkSharedCrawl(b *testing.B, workers func(procs int) int, latency time.Duration) {
	ctx := context.Background()
	pg, err := pgtest.Start(ctx, pgtest.Config{Durable: true})
	if errors.Is(err, pgtest.ErrNoPostgres) {
		b.Skip(err)
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pg.Stop() })

	web, err := simweb.New(simweb.Config{
		Seed: 17, Hosts: sharedBenchHosts, PagesPerHost: sharedBenchPages,
		Latency:  latency,
		Profiles: []simweb.Profile{simweb.ProfileAllow},
		HostOptions: func(int, string) simweb.HostOptions {
			return simweb.HostOptions{NoFiles: true}
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := web.ServeLoopback(sharedBenchAddrs, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })

	// One --connect-to per host is too long for the child's environment
	// (one variable holds at most 128 KiB on Linux): a config file.
	dir := b.TempDir()
	config := filepath.Join(dir, "connect.toml")
	var toml strings.Builder
	toml.WriteString("connect-to = [\n")
	for _, c := range srv.ConnectTo() {
		fmt.Fprintf(&toml, "  %q,\n", c)
	}
	toml.WriteString("]\n")
	if err := os.WriteFile(config, []byte(toml.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	var seeds []string
	for _, h := range web.Hosts() {
		seeds = append(seeds, h.URL("/"))
	}

	for _, procs := range []int{1, 2, 4} {
		b.Run("procs="+strconv.Itoa(procs), func(b *testing.B) {
			var (
				wall                     time.Duration
				pages, requests, refetch int
				runPages                 int
				crawlCPU, pgCPU, selfCPU time.Duration
				emptyProcs               int
			)
			for n := 0; n < b.N; n++ {
				b.StopTimer()
				dsn, err := pg.CreateDB(ctx)
				if err != nil {
					b.Fatal(err)
				}
				web.ResetLog()
				jobs := b.TempDir()
				pg0, err := pg.CPUTime()
				if err != nil {
					b.Fatal(err)
				}
				self0 := selfCPUTime()
				b.StartTimer()

				start := time.Now()
				var children []*crawltest.Child
				for p := range procs {
					name := "p" + strconv.Itoa(p+1)
					args := []string{"crawl", "-q", "--config", config,
						"--job", filepath.Join(jobs, name), "--frontier", dsn, "--lease-ttl", "30s",
						"--workers", strconv.Itoa(workers(procs)), "--delay", "1ms",
						"--allow-private-networks"}
					for i := p; i < len(seeds); i += procs {
						args = append(args, seeds[i])
					}
					children = append(children, crawltest.StartChild(b, name, args))
				}
				for _, c := range children {
					c.Wait(b, sharedBenchOpTimeout-time.Since(start))
				}
				elapsed := time.Since(start)

				b.StopTimer()
				dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				web.Drain(dctx)
				cancel()
				pg1, err := pg.CPUTime()
				if err != nil {
					b.Fatal(err)
				}
				selfCPU += selfCPUTime() - self0
				pgCPU += pg1 - pg0
				wall += elapsed
				seen := map[string]bool{}
				for _, e := range web.Requests() {
					requests++
					if e.Status != 200 || e.Path == "/robots.txt" {
						continue
					}
					pages++
					if seen[e.Host+" "+e.Path] {
						refetch++
					}
					seen[e.Host+" "+e.Path] = true
				}
				for _, c := range children {
					crawlCPU += c.Cmd.ProcessState.UserTime() + c.Cmd.ProcessState.SystemTime()
					rp := runsPages(b, filepath.Join(jobs, c.Name, "runs.jsonl"))
					runPages += rp
					if rp == 0 {
						emptyProcs++
					}
				}
				if pages == 0 {
					b.Fatalf("the crawl fetched nothing")
				}
				if err := pg.DropDB(ctx, dsn); err != nil {
					b.Logf("drop database: %v", err)
				}
				if n == 0 {
					for _, c := range children {
						if out := strings.TrimSpace(c.Out.String()); out != "" {
							b.Logf("%s (%d workers): %.1500s", c.Name, workers(procs), out)
						}
					}
				}
			}
			secs := wall.Seconds()
			perPage := func(d time.Duration) float64 { return d.Seconds() * 1e3 / float64(pages) }
			b.ReportMetric(float64(pages)/secs, "pages/s")
			b.ReportMetric(float64(requests)/secs, "requests/s")
			b.ReportMetric(float64(pages)/float64(b.N), "pages/op")
			b.ReportMetric(float64(runPages)/float64(b.N), "runs-pages/op")
			b.ReportMetric(float64(refetch)/float64(b.N), "refetches/op")
			b.ReportMetric(float64(emptyProcs)/float64(b.N), "idle-procs/op")
			b.ReportMetric(perPage(crawlCPU), "crawler-cpu-ms/page")
			b.ReportMetric(perPage(pgCPU), "pg-cpu-ms/page")
			b.ReportMetric(perPage(selfCPU), "simweb-cpu-ms/page")
			b.ReportMetric((crawlCPU+pgCPU+selfCPU).Seconds()/secs, "busy-cores")
			b.ReportMetric(float64(runtime.NumCPU()), "cores")
		})
	}
}

// runsPages sums the pages of every run in a job's runs.jsonl.
func runsPages(tb testing.TB, path string) int {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sum := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var run struct {
			Pages int `json:"pages"`
		}
		if err := json.Unmarshal(sc.Bytes(), &run); err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		sum += run.Pages
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return sum
}

// selfCPUTime is this process's user and system time so far.
func selfCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
