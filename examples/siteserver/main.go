// Command siteserver is a small dynamic web site that answers crawlers the
// way they hope to be answered, built with package site: every page has
// an ETag and a Last-Modified date and answers 304 to a crawler that
// already has it; text is gzipped for clients that ask; robots.txt names
// the sitemap, and the sitemap gives each page's last change; unknown
// paths are real 404s; and when the server is overloaded, crawlers get
// 503 with a Retry-After while people are served.
//
// Usage:
//
//	go run ./examples/siteserver [-addr 127.0.0.1:8080]
//
// Then crawl it, and crawl it again with conditional GET: the second time
// every page answers 304.
//
//	gentlecrawl crawl --job jobs/local --allow-private-networks http://127.0.0.1:8080/
//	gentlecrawl crawl --job jobs/local --allow-private-networks --recrawl
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, nil); err != nil {
		fmt.Fprintln(os.Stderr, "siteserver:", err)
		os.Exit(1)
	}
}

// run serves the site until ctx is done, then shuts down gracefully. It
// calls ready, if not nil, with the address it listens on.
func run(ctx context.Context, args []string, stdout io.Writer, ready func(net.Addr)) error {
	fs := flag.NewFlagSet("siteserver", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           newHandler(newStore(), nil),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	fmt.Fprintf(stdout, "siteserver: serving http://%s/\n", ln.Addr())
	if ready != nil {
		ready(ln.Addr())
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
