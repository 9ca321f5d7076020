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
)

func main() {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		// A crawl allocates tens of kilobytes a page and keeps a live heap
		// of tens of megabytes. GOGC=40 kept a one-host crawl of Debian's
		// rust-doc within 123-130 MB of RSS, collecting 149 times; under
		// a memory limit of 72 MiB the heap may triple while it is small
		// and collects 28 times, in 110-118 MB of RSS, for 5-10 % less
		// CPU (BENCHMARKS.md, issue #18). Past the limit the heap grows by
		// 40 % of the live heap, as at GOGC=40. GOGC or GOMEMLIMIT set in
		// the environment wins.
		gctune.Start(gctune.Config{Percent: 200, Floor: 72 << 20, MinPercent: 40, Slack: 16 << 20})
	}
	// A crawl of one host at a time runs on one P (internal/cli, procTuner).
	cli.TuneProcs = os.Getenv("GOMAXPROCS") == ""
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfiles := startProfiles()
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopProfiles()
	stop()
	os.Exit(code)
}
