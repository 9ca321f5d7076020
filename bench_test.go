package gentlecrawl_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

// BenchmarkCrawlSimweb crawls a synthetic web of 200 hosts of about 10 pages
// each, served on loopback, from every host's home page, with a 1 ms delay
// and a 1 ms Crawl-delay so that politeness gaps stay small: it measures the
// engine (fetch, WARC, store, extraction, scheduling). One op is one whole
// crawl in a fresh job directory; run it with -benchtime=3x or so.
//
// Note that every gap also gets the scheduler's margin (hostload.After: at
// least 10 ms), so a host with k pages takes at least about k×11 ms.
func BenchmarkCrawlSimweb(b *testing.B) {
	web, err := simweb.New(simweb.Config{Seed: 1, Hosts: 200, PagesPerHost: 10, CrawlDelay: time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := web.Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	var seeds []string
	for _, h := range web.Hosts() {
		seeds = append(seeds, h.URL("/"))
	}

	var pages, requests int
	var wire int64
	var elapsed time.Duration
	b.ReportAllocs()
	for n := 0; n < b.N; n++ {
		b.StopTimer()
		job := b.TempDir()
		web.ResetLog()
		b.StartTimer()

		start := time.Now()
		c, err := gentlecrawl.New(gentlecrawl.Config{
			JobDir:               job,
			Seeds:                seeds,
			Delay:                time.Millisecond,
			Workers:              64,
			ConnectTo:            crawltest.ConnectTo(srv.CatchAll()),
			AllowPrivateNetworks: true,
			RobotsRetry:          time.Hour, // the 500 host is deferred, not retried
		})
		if err != nil {
			b.Fatal(err)
		}
		sum, err := c.Run(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start)
		if sum.Pages == 0 {
			b.Fatalf("crawl fetched nothing: %+v", sum)
		}
		pages += sum.Pages
		requests += sum.Requests
		wire += sum.WireBytes
	}
	b.ReportMetric(float64(pages)/elapsed.Seconds(), "pages/s")
	b.ReportMetric(float64(requests)/elapsed.Seconds(), "requests/s")
	b.ReportMetric(float64(pages)/float64(b.N), "pages/crawl")
	b.ReportMetric(float64(wire)/elapsed.Seconds()/1e6, "wireMB/s")
}

// The web of BenchmarkCrawlEngine: the same as BenchmarkCrawlSimweb's, but
// every host on its own loopback address.
const (
	engineHosts = 200
	engineChild = "GENTLECRAWL_BENCH_SIMWEB" // set: TestEngineSimweb serves
)

func engineWeb() (*simweb.Web, error) {
	return simweb.New(simweb.Config{Seed: 1, Hosts: engineHosts, PagesPerHost: 10, CrawlDelay: time.Millisecond})
}

// BenchmarkCrawlEngine is BenchmarkCrawlSimweb with every host on its own
// loopback address (127.0.0.2 … 127.0.0.201), so that the per-address
// budget (2 requests in flight per IP) does not bind and Workers sets the
// concurrency. Everything else is the same: the same web (200 hosts, seed
// 1, Crawl-delay 1 ms), Delay 1 ms, robots.txt, WARC and the durable
// frontier, one op = one whole crawl into a fresh job directory.
//
// The simweb server runs in a child process (this test binary, as
// TestEngineSimweb), so that this process holds only the crawler: B/op,
// allocs/op, crawler-B/page and crawler-cpu-ms/page (getrusage of this
// process) are the crawler's (and the benchmark loop's, which is small);
// simweb-cpu-ms/page is the server's, reported by the child. Both
// processes share the machine's cores; busy-cores is their CPU time over
// the wall time. Run it with -benchtime=3x or so.
//
// With many requests in flight the server, on the same cores, answers
// more slowly, and the crawler's host load control (a manner it keeps)
// slows those hosts down: slowed-hosts/crawl counts them. So pages/s is
// what the crawl reaches against a server that shares its machine; the
// engine's own cost is crawler-cpu-ms/page and crawler-B/page.
func BenchmarkCrawlEngine(b *testing.B) {
	srv := startEngineSimweb(b)
	var seeds []string
	for _, h := range srv.hosts {
		seeds = append(seeds, "http://"+h+"/")
	}
	for _, workers := range []int{16, 64, 200} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			var pages, requests, served, slowed int
			var elapsed, cpu, srvCPU time.Duration
			var alloc, mallocs, srvAlloc uint64
			var ms0, ms1 runtime.MemStats
			b.ReportAllocs()
			for n := 0; n < b.N; n++ {
				b.StopTimer()
				job := b.TempDir()
				s0 := srv.stat(b)
				runtime.ReadMemStats(&ms0)
				cpu0 := selfCPUTime()
				b.StartTimer()

				start := time.Now()
				c, err := gentlecrawl.New(gentlecrawl.Config{
					JobDir:               job,
					Seeds:                seeds,
					Delay:                time.Millisecond,
					Workers:              workers,
					ConnectTo:            crawltest.ConnectTo(srv.connectTo...),
					AllowPrivateNetworks: true,
					RobotsRetry:          time.Hour, // the 500 host is deferred, not retried
				})
				if err != nil {
					b.Fatal(err)
				}
				sum, err := c.Run(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(start)

				b.StopTimer()
				cpu += selfCPUTime() - cpu0
				runtime.ReadMemStats(&ms1)
				alloc += ms1.TotalAlloc - ms0.TotalAlloc
				mallocs += ms1.Mallocs - ms0.Mallocs
				s1 := srv.stat(b)
				srvCPU += s1.CPU - s0.CPU
				srvAlloc += s1.Alloc - s0.Alloc
				served += s1.Requests
				if sum.Pages == 0 {
					b.Fatalf("crawl fetched nothing: %+v", sum)
				}
				pages += sum.Pages
				requests += sum.Requests
				slowed += len(sum.Slowed)
				b.StartTimer()
			}
			secs := elapsed.Seconds()
			perPage := func(x float64) float64 { return x / float64(pages) }
			b.ReportMetric(float64(pages)/secs, "pages/s")
			b.ReportMetric(float64(requests)/secs, "requests/s")
			b.ReportMetric(float64(pages)/float64(b.N), "pages/crawl")
			b.ReportMetric(perPage(float64(alloc)), "crawler-B/page")
			b.ReportMetric(perPage(float64(mallocs)), "crawler-allocs/page")
			b.ReportMetric(perPage(cpu.Seconds()*1e3), "crawler-cpu-ms/page")
			b.ReportMetric(perPage(srvCPU.Seconds()*1e3), "simweb-cpu-ms/page")
			b.ReportMetric(perPage(float64(srvAlloc)), "simweb-B/page")
			b.ReportMetric((cpu+srvCPU).Seconds()/secs, "busy-cores")
			b.ReportMetric(float64(slowed)/float64(b.N), "slowed-hosts/crawl")
			if served != requests {
				b.Logf("simweb logged %d requests, the crawler counted %d", served, requests)
			}
		})
	}
}

// engineSimweb is the simweb child process of BenchmarkCrawlEngine.
type engineSimweb struct {
	cmd       *exec.Cmd
	in        io.WriteCloser
	out       *bufio.Scanner
	hosts     []string // host names, in the web's order
	connectTo []string // "NAME:80:127.0.0.N:PORT", one per host
}

// engineStat is what the child reports: its CPU time and bytes allocated
// so far, and the requests it logged since the last report.
type engineStat struct {
	CPU      time.Duration
	Alloc    uint64
	Requests int
}

func startEngineSimweb(b *testing.B) *engineSimweb {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestEngineSimweb$", "-test.bench=^$", "-test.timeout=0")
	cmd.Env = append(os.Environ(), engineChild+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	s := &engineSimweb{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	s.out.Buffer(make([]byte, 1<<20), 1<<20)
	b.Cleanup(func() {
		s.in.Close() // the child closes its server and exits
		done := make(chan struct{})
		go func() { io.Copy(io.Discard, out); cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	if !s.out.Scan() {
		b.Fatalf("simweb child: no address map (%v)", s.out.Err())
	}
	if err := json.Unmarshal(s.out.Bytes(), &s.connectTo); err != nil {
		b.Fatalf("simweb child: %v: %q", err, s.out.Text())
	}
	web, err := engineWeb()
	if err != nil {
		b.Fatal(err)
	}
	for _, h := range web.Hosts() {
		s.hosts = append(s.hosts, h.Name)
	}
	if len(s.hosts) != len(s.connectTo) {
		b.Fatalf("simweb child: %d hosts, %d addresses", len(s.hosts), len(s.connectTo))
	}
	return s
}

// stat waits for the child's requests in flight to end and returns its
// report.
func (s *engineSimweb) stat(b *testing.B) engineStat {
	b.Helper()
	if _, err := io.WriteString(s.in, "stat\n"); err != nil {
		b.Fatal(err)
	}
	var st engineStat
	if !s.out.Scan() {
		b.Fatalf("simweb child: no report (%v)", s.out.Err())
	}
	if err := json.Unmarshal(s.out.Bytes(), &st); err != nil {
		b.Fatalf("simweb child: %v: %q", err, s.out.Text())
	}
	return st
}

// TestEngineSimweb is not a test: it is BenchmarkCrawlEngine's simweb
// server, in a child process. It serves the web on 200 loopback addresses,
// writes their ConnectTo map as one JSON line, then answers every line on
// stdin with an engineStat line, until stdin is closed.
func TestEngineSimweb(t *testing.T) {
	if os.Getenv(engineChild) == "" {
		t.Skip("BenchmarkCrawlEngine's simweb server; runs only as its child process")
	}
	web, err := engineWeb()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := web.ServeLoopback(engineHosts, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out) // one value per line
	if err := enc.Encode(srv.ConnectTo()); err != nil {
		t.Fatal(err)
	}
	out.Flush()
	var ms runtime.MemStats
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		web.Drain(ctx)
		cancel()
		st := engineStat{CPU: selfCPUTime(), Requests: len(web.Requests())}
		web.ResetLog()
		runtime.ReadMemStats(&ms)
		st.Alloc = ms.TotalAlloc
		if err := enc.Encode(st); err != nil {
			t.Fatal(err)
		}
		out.Flush()
	}
}
