// Command gentlecrawl is a web crawler that site owners are glad to see in
// their logs. See README.md, or run "gentlecrawl help".
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/gentlecrawl/gentlecrawl/internal/cli"
	"github.com/gentlecrawl/gentlecrawl/internal/gctune"
	"github.com/gentlecrawl/gentlecrawl/internal/rawio"
)

func main() {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		// A crawl allocates tens of kilobytes a page and keeps a live heap
		// of tens of megabytes. A low GOGC alone would keep memory down but
		// collect often. Instead the heap may grow within a soft memory
		// limit of 72 MiB, so that a crawl collects far less often while
		// its heap is small, in about the same RSS; past the limit it
		// grows by 40 % of the live heap, as at GOGC=40. Within the limit
		// GOGC is 200 until the first collection, then follows the
		// allocations from 50 up to 200 (gctune.percentFor): fresh memory
		// costs a page fault the first time it is touched, so a short
		// crawl does best collecting often in a small heap it has touched
		// already, a long one collecting seldom (the figures are in
		// docs/benchmarks-history.md). GOGC or GOMEMLIMIT set in the
		// environment wins.
		gctune.Start(gctune.Config{Percent: 200, LowPercent: 50, Floor: 72 << 20, MinPercent: 40, Slack: 16 << 20})
	}
	// A crawl of one host at a time runs on one P (internal/cli, procTuner).
	cli.TuneProcs = os.Getenv("GOMAXPROCS") == ""
	// Socket reads and writes through package net instead of raw system
	// calls (internal/rawio), to compare the two; set before any
	// connection is made.
	if os.Getenv("GENTLECRAWL_NO_RAWIO") != "" {
		rawio.Disable()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfiles := startProfiles()
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopProfiles()
	stop()
	os.Exit(code)
}
