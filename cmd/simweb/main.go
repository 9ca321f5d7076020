// Command simweb serves gentlecrawl's synthetic web: many virtual hosts on
// one listener, chosen by the Host header, until SIGINT or SIGTERM.
//
//	simweb [--listen 127.0.0.1:8080] [--hosts 20] [--pages 30] [--seed 1]
//	       [--crawl-delay 2s] [--latency 0] [--log FILE|-] [--loopback N]
//	       [--print-connect-to]
//	       [--capacity RPS] [--addr-capacity RPS] [--workers 1] [--queue 10]
//	       [--slowdown 1] [--jitter 0] [--overload 503|429] [--retry-after DUR]
//	       [--rate-limit RPS] [--burst N]
//	       [--outage [HOST=]START+DUR]...
//	       [--traps [HOST=]sessions,calendar,facets,deep,soft404,sitemaps|all]...
//	       [--session-param sid] [--exact-pages N]
//	       [--shop HOST|all]... [--shop-catalog 10] [--shop-per-page 50]
//
// With --capacity every host is a server of limited capacity that queues,
// slows down and refuses requests (503 or 429 with Retry-After) when it is
// overloaded; --rate-limit refuses requests above a rate (nginx's limit_req
// with nodelay: --burst requests beyond it at once); --outage scripts windows in which hosts answer only errors;
// --traps gives hosts URL-space traps (session ids, an endless calendar, a
// faceted catalog, an endless path, soft 404s, sitemaps); --shop makes
// hosts online shops whose traps have names and URL shapes drawn from
// --seed. See simweb --help.
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
