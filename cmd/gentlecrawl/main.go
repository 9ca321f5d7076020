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
		// A crawl's heap is mostly long-lived (pooled buffers, the
		// duplicate index, the frontier's state): collecting at 1.4× the
		// live heap instead of 2× keeps a one-host crawl of Debian's
		// rust-doc (21,663 pages) at 123-130 MB of RSS (BENCHMARKS.md,
		// issue #18). At 1.3× the collector ran a third more often once
		// the seen filter stopped being 16 MiB of ballast, for no less
		// memory worth having. GOGC set in the environment wins.
		debug.SetGCPercent(40)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfiles := startProfiles()
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopProfiles()
	stop()
	os.Exit(code)
}
