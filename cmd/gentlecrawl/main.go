// Command gentlecrawl is a web crawler that site owners are glad to see in
// their logs. See README.md, or run "gentlecrawl help".
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/gentlecrawl/gentlecrawl/internal/cli"
)

func main() {
	if os.Getenv("GOGC") == "" {
		// A crawl's heap is mostly long-lived (the seen filter, pooled
		// buffers, the duplicate index): collecting at 1.3× the live heap
		// instead of 2× keeps a one-host crawl of Debian's rust-doc (21,663
		// pages) at 131–136 MB of RSS instead of 184, for 0.5–1 s more of
		// collection in 16–22 s of CPU (BENCHMARKS.md, issue #18). GOGC
		// set in the environment wins.
		debug.SetGCPercent(30)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfiles := startProfiles()
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopProfiles()
	stop()
	os.Exit(code)
}
