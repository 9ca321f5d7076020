package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

// maxListedHosts is the number of hosts up to which the per-host
// --connect-to lines are printed on start.
const maxListedHosts = 50

// run parses args, serves the web and returns when ctx is done (or at
// once with --print-connect-to).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("simweb", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		listen     = fs.String("listen", "127.0.0.1:8080", "`address` of the main listener (port 0 picks a free one)")
		hosts      = fs.Int("hosts", 20, "number of virtual hosts (1..10000)")
		pages      = fs.Int("pages", 30, "mean number of HTML pages per host")
		seed       = fs.Int64("seed", 1, "seed of the site graph")
		crawlDelay = fs.Duration("crawl-delay", 2*time.Second, "Crawl-delay of the crawl-delay profile hosts")
		latency    = fs.Duration("latency", 0, "service time added to every response")
		logPath    = fs.String("log", "", "write one JSON line per request to `FILE` (- for stdout)")
		loopbackN  = fs.Int("loopback", 0, "also serve on `N` loopback addresses 127.0.0.2…, host i on address i%N")
		printOnly  = fs.Bool("print-connect-to", false, "print one --connect-to line per host and exit")
		load       loadFlags
		traps      trapsFlags
		shop       shopFlags
		changes    changesFlags
	)
	load.register(fs)
	traps.register(fs)
	shop.register(fs)
	changes.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: simweb [flags]\n\nServes gentlecrawl's synthetic web until interrupted.\n\n"+loadUsage+"\n"+trapsUsage+"\n"+shopUsage+"\n"+changesUsage+"\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	cfg := simweb.Config{
		Seed: *seed, Hosts: *hosts, PagesPerHost: *pages,
		CrawlDelay: *crawlDelay, Latency: *latency,
	}
	if err := load.apply(&cfg, time.Now()); err != nil {
		return err
	}
	if err := traps.apply(&cfg); err != nil {
		return err
	}
	if err := shop.apply(&cfg); err != nil {
		return err
	}
	if err := changes.apply(&cfg); err != nil { // after the shops, which have none
		return err
	}
	switch *logPath {
	case "":
	case "-":
		cfg.Log = stdout
	default:
		f, err := os.OpenFile(*logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		cfg.Log = f
	}
	if *hosts <= 0 {
		return fmt.Errorf("--hosts %d: must be at least 1", *hosts)
	}
	if *pages <= 0 {
		return fmt.Errorf("--pages %d: must be at least 1", *pages)
	}
	web, err := simweb.New(cfg)
	if err != nil {
		return err
	}
	if err := load.checkHosts(web); err != nil {
		return err
	}
	if err := traps.checkHosts(web); err != nil {
		return err
	}
	if err := shop.checkHosts(web); err != nil {
		return err
	}
	srv, err := web.Start(*listen)
	if err != nil {
		return err
	}
	defer srv.Close()
	perHost := srv
	if *loopbackN > 0 {
		lb, err := web.ServeLoopback(*loopbackN, 0)
		if err != nil {
			return err
		}
		defer lb.Close()
		perHost = lb
	}

	if *printOnly {
		for _, l := range perHost.ConnectTo() {
			fmt.Fprintln(stdout, "--connect-to", l)
		}
		return nil
	}
	printBanner(stdout, web, srv, perHost, *loopbackN, &load, &traps, &shop, &changes)
	<-ctx.Done()
	fmt.Fprintln(stderr, "simweb: stopping")
	return nil
}

// printBanner tells a crawler how to reach the web.
func printBanner(out io.Writer, web *simweb.Web, srv, perHost *simweb.Server, loopbackN int, load *loadFlags, traps *trapsFlags, shop *shopFlags, changes *changesFlags) {
	hosts := web.Hosts()
	fmt.Fprintf(out, "simweb: serving %d hosts on http://%s\n", len(hosts), srv.Addr)
	if loopbackN > 0 {
		fmt.Fprintf(out, "simweb: and on %d loopback addresses: %s\n", loopbackN, strings.Join(perHost.Addrs, " "))
	}
	fmt.Fprintf(out, "catch-all: --connect-to %s\n", srv.CatchAll())
	connect := perHost.ConnectTo()
	if len(hosts) <= maxListedHosts {
		fmt.Fprintln(out, "hosts:")
		tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
		for i, h := range hosts {
			fmt.Fprintf(tw, "  %s\t%s\t--connect-to %s\n", h.Name, h.Profile, connect[i])
		}
		tw.Flush()
	} else {
		fmt.Fprintf(out, "hosts: %s … %s (%d); per-host lines: simweb --print-connect-to with the same flags\n",
			hosts[0].Name, hosts[len(hosts)-1].Name, len(hosts))
	}
	example := "--connect-to " + srv.CatchAll()
	if loopbackN > 0 {
		example = "--connect-to " + connect[0]
	}
	fmt.Fprintf(out, "example: gentlecrawl crawl --allow-private-networks %s http://%s/\n", example, hosts[0].Name)
	load.describe(out)
	traps.describe(out, web)
	shop.describe(out, web)
	changes.describe(out)
	fmt.Fprintln(out, "simweb: press Ctrl-C to stop")
}
