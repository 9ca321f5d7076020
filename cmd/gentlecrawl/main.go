// Command gentlecrawl is a web crawler that site owners are glad to see in
// their logs. See README.md, or run "gentlecrawl help".
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/gentlecrawl/gentlecrawl/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfiles := startProfiles()
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopProfiles()
	stop()
	os.Exit(code)
}
