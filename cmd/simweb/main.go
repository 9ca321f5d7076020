// Command simweb serves gentlecrawl's synthetic web: many virtual hosts on
// one listener, chosen by the Host header, until SIGINT or SIGTERM.
//
//	simweb [--listen 127.0.0.1:8080] [--hosts 20] [--pages 30] [--seed 1]
//	       [--crawl-delay 2s] [--latency 0] [--log FILE|-] [--loopback N]
//	       [--print-connect-to]
//
// On start it prints what a crawler needs to reach the hosts: the
// --connect-to lines and an example gentlecrawl command.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "simweb:", err)
		os.Exit(1)
	}
}
