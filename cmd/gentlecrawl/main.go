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
		// of tens of megabytes. At GOGC=40 a one-host crawl of Debian's
		// rust-doc collected 149 times (0.64 s of marking); under a soft
		// memory limit of 72 MiB the heap may triple while it is small,
		// and it collects 36 times (0.19 s), in about the same RSS
		// (BENCHMARKS.md 14d, issue #18). Past the limit the heap grows
		// by 40 % of the live heap, as at GOGC=40. After the first
		// collection GOGC follows the allocations, from 50 up to 200:
		// fresh memory costs a page fault once (11 µs a page on our VMs),
		// and a crawl of a thousand small pages touched 6,300 pages at 200
		// throughout, 3,300 this way (gctune.percentFor). GOGC or
		// GOMEMLIMIT set in the environment wins.
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
