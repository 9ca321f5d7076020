package simweb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// closeGrace bounds how long Server.Close waits for requests in progress.
const closeGrace = 5 * time.Second

// loopback is the address assignment of ServeLoopback.
type loopback struct {
	addrs  []string        // host i is served on addrs[i%len(addrs)]
	serves map[string]bool // the set of addrs
}

// Server serves a Web on one or more listeners. It owns the serving
// goroutines; Close stops them and waits for them.
type Server struct {
	// Addr is the host:port of the main listener (the first one).
	Addr string
	// Addrs are the host:port of every listener, Addrs[0] == Addr.
	Addrs []string

	web    *Web
	srv    *http.Server
	lns    []net.Listener
	loop   *loopback // nil for Start
	wg     sync.WaitGroup
	closer sync.Once
	err    error
}

// Start listens on addr ("127.0.0.1:0" picks a free port) and serves w in
// goroutines owned by the returned Server.
func (w *Web) Start(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("simweb: %w", err)
	}
	return w.serveOn([]net.Listener{ln}, nil), nil
}

// ServeLoopback serves w on the n loopback addresses 127.0.0.2 …
// 127.0.0.(n+1), all on the same port; port 0 picks one that is free on
// every address. Host i is assigned address i%n, recorded in Host.Addr
// before ServeLoopback returns; a request for a host that arrives on
// another of these addresses is answered 421 Misdirected Request.
// Requests on listeners of Start are not affected. A Web can serve one
// loopback set at a time.
func (w *Web) ServeLoopback(n int, port int) (*Server, error) {
	if n < 1 || n > 250 {
		return nil, fmt.Errorf("simweb: ServeLoopback: %d addresses not in 1..250", n)
	}
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("simweb: ServeLoopback: bad port %d", port)
	}
	var lns []net.Listener
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		lns, err = listenLoopback(n, port)
		if err == nil || port != 0 {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("simweb: ServeLoopback: %w", err)
	}
	lb := &loopback{serves: make(map[string]bool)}
	for _, ln := range lns {
		a := ln.Addr().String()
		lb.addrs = append(lb.addrs, a)
		lb.serves[a] = true
	}
	if !w.loop.CompareAndSwap(nil, lb) {
		for _, ln := range lns {
			ln.Close()
		}
		return nil, errors.New("simweb: ServeLoopback: already serving on loopback addresses")
	}
	for i, h := range w.hosts {
		h.Addr = lb.addrs[i%n]
	}
	return w.serveOn(lns, lb), nil
}

// listenLoopback listens on 127.0.0.2 … 127.0.0.(n+1) at port; with port
// 0 the first listener picks the port and the others must get the same.
func listenLoopback(n, port int) ([]net.Listener, error) {
	var lns []net.Listener
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", net.JoinHostPort(fmt.Sprintf("127.0.0.%d", i+2), strconv.Itoa(port)))
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, err
		}
		if port == 0 {
			port = ln.Addr().(*net.TCPAddr).Port
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

func (w *Web) serveOn(lns []net.Listener, lb *loopback) *Server {
	s := &Server{
		web:  w,
		loop: lb,
		srv:  &http.Server{Handler: w, ReadHeaderTimeout: 30 * time.Second},
		lns:  lns,
	}
	for _, ln := range lns {
		s.Addrs = append(s.Addrs, ln.Addr().String())
	}
	s.Addr = s.Addrs[0]
	for _, ln := range lns {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.srv.Serve(ln) // returns http.ErrServerClosed after Close
		}()
	}
	return s
}

// Close stops the listeners, lets requests in progress finish (for up to
// closeGrace), closes every connection and waits for the serving
// goroutines; after it returns, every request it served is in the log. A
// loopback Server releases its addresses so that ServeLoopback may be
// called again.
func (s *Server) Close() error {
	s.closer.Do(func() {
		// Not http.Server.Shutdown: it waits up to 5s for connections a
		// client opened but never used, which keep-alive pools have.
		for _, ln := range s.lns {
			ln.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
		defer cancel()
		s.web.Drain(ctx)
		if err := s.srv.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			s.err = err
		}
		s.wg.Wait()
		if s.loop != nil {
			s.web.loop.CompareAndSwap(s.loop, nil)
		}
	})
	return s.err
}

// ConnectTo returns, for every host of the web, a curl-style --connect-to
// value "NAME:80:ADDR:PORT" that sends the host's http:// URLs to this
// server.
func (s *Server) ConnectTo() []string {
	out := make([]string, len(s.web.hosts))
	for i, h := range s.web.hosts {
		addr := s.Addr
		if s.loop != nil {
			addr = s.loop.addrs[i%len(s.loop.addrs)]
		}
		out[i] = h.Name + ":80:" + dialable(addr)
	}
	return out
}

// CatchAll returns the --connect-to value that sends every host:port to
// the main listener: "::ADDR:PORT" (empty HOST1 and PORT1 match any).
func (s *Server) CatchAll() string { return "::" + dialable(s.Addr) }

// dialable turns a listener address into one a client can dial, mapping
// an unspecified address to loopback.
func dialable(hostport string) string {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return hostport
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}
