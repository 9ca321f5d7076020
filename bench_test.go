package gentlecrawl_test

import (
	"context"
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
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
			ConnectTo:            []string{srv.CatchAll()},
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
