// Command collycrawl crawls one URL prefix with Colly v2 (async, parallelism
// 8), saving nothing, and prints how many pages it fetched. It is the third
// column of bench/sidebyside.sh, which sets gentlecrawl's CPU and memory per
// page beside GNU Wget2's and Colly's.
package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"runtime/pprof"
	"strings"
	"sync/atomic"

	"github.com/gocolly/colly/v2"
)

func main() {
	prefix := flag.String("prefix", "", "follow only URLs starting with this (default: the seed's directory)")
	parallel := flag.Int("parallelism", 8, "requests at the same time")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to this file")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: collycrawl [-prefix URL] [-parallelism N] SEED")
		os.Exit(2)
	}
	seed := flag.Arg(0)
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if *prefix == "" {
		*prefix = seed[:strings.LastIndex(seed, "/")+1]
	}
	c := colly.NewCollector(
		colly.Async(true),
		colly.URLFilters(regexp.MustCompile("^"+regexp.QuoteMeta(*prefix))),
	)
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: *parallel}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var pages, failed atomic.Int64
	c.OnResponse(func(*colly.Response) { pages.Add(1) })
	c.OnError(func(*colly.Response, error) { failed.Add(1) })
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		u := e.Request.AbsoluteURL(e.Attr("href"))
		if i := strings.IndexByte(u, '#'); i >= 0 {
			u = u[:i]
		}
		if u != "" {
			e.Request.Visit(u)
		}
	})
	if err := c.Visit(seed); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1) // before the profile started to matter
	}
	c.Wait()
	fmt.Printf("pages %d failed %d\n", pages.Load(), failed.Load())
}
