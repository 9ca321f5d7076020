package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"slices"
	"time"
)

// dialer opens TCP connections for the Transport. It applies --connect-to,
// then --resolve or DNS (through the cache), and refuses non-public
// addresses at the moment of dialing, so the address checked is the address
// connected to (a name that resolves to a private address, even only on the
// second lookup, is refused). It is safe for concurrent use.
type dialer struct {
	connectTo    connectRules
	resolve      resolveRules
	allowPrivate bool
	timeout      time.Duration // resolution plus connect
	net          net.Dialer
	dns          *dnsCache // nil: net.DefaultResolver, uncached
	proxies      []string  // host:port of the proxies, allowed whatever their address

	// Test hooks: allow, when set, replaces the IsPublic check for one
	// address and port; dial replaces net.Dialer.
	allow func(netip.AddrPort) bool
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)
}

// DialContext has the signature of http.Transport.DialContext. addr is the
// host:port of the URL being fetched.
func (d *dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := splitHostPort(addr)
	if err != nil {
		return nil, err
	}
	parent := ctx
	ctx, cancel := context.WithTimeoutCause(ctx, d.timeout, ErrConnectTimeout)
	defer cancel()
	conn, err := d.dialTimed(ctx, network, host, port, slices.Contains(d.proxies, addr))
	if err != nil && parent.Err() == nil && context.Cause(ctx) == ErrConnectTimeout && !errors.Is(err, ErrConnectTimeout) {
		err = fmt.Errorf("%w: %w", ErrConnectTimeout, err)
	}
	return conn, err
}

// proxy says the address is a proxy's, which the user named: it is
// dialed whatever it resolves to.
func (d *dialer) dialTimed(ctx context.Context, network, host string, port int, proxy bool) (net.Conn, error) {
	host, port = d.connectTo.target(host, port)
	trace := httptrace.ContextClientTrace(ctx)
	// net.Dialer reports DNSStart/DNSDone only for the names it resolves;
	// this dialer resolves them itself, so it reports them.
	if trace != nil && trace.DNSStart != nil {
		trace.DNSStart(httptrace.DNSStartInfo{Host: host})
	}
	addrs, err := d.lookup(ctx, host, port)
	if trace != nil && trace.DNSDone != nil {
		ips := make([]net.IPAddr, len(addrs))
		for i, a := range addrs {
			ips[i] = net.IPAddr{IP: a.AsSlice(), Zone: a.Zone()}
		}
		trace.DNSDone(httptrace.DNSDoneInfo{Addrs: ips, Err: err})
	}
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a, uint16(port))
		if !proxy && !d.permitted(ap) {
			errs = append(errs, fmt.Errorf("dial %s: %w", ap, ErrPrivateNetwork))
			continue
		}
		dial := d.net.DialContext
		if d.dial != nil {
			dial = d.dial
		}
		conn, err := dial(ctx, network, ap.String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

func (d *dialer) permitted(ap netip.AddrPort) bool {
	if d.allowPrivate || IsPublic(ap.Addr()) {
		return true
	}
	return d.allow != nil && d.allow(ap)
}

// lookup returns the addresses for host:port: those of a --resolve rule, the
// host itself when it is an IP address, or else those from DNS.
func (d *dialer) lookup(ctx context.Context, host string, port int) ([]netip.Addr, error) {
	if addrs := d.resolve.pinned(host, port); len(addrs) > 0 {
		return addrs, nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	if d.dns != nil {
		return d.dns.lookup(ctx, host)
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	return addrs, nil
}

// checkTarget refuses a URL whose host resolves to a non-public address:
// the guard of a request that goes through a proxy, which dials the
// server itself. The name is resolved as it would be without the proxy
// (--resolve, then DNS); --connect-to does not apply, since the crawler
// does not connect to the server.
func (d *dialer) checkTarget(ctx context.Context, u *url.URL) error {
	host, port, err := splitHostPort(canonicalAddr(u))
	if err != nil {
		return err
	}
	if u.Scheme == "https" && u.Port() == "" {
		port = 443
	}
	ctx, cancel := context.WithTimeoutCause(ctx, d.timeout, ErrConnectTimeout)
	defer cancel()
	addrs, err := d.lookup(ctx, host, port)
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if ap := netip.AddrPortFrom(a, uint16(port)); !d.permitted(ap) {
			return fmt.Errorf("%s resolves to %s: %w", host, a, ErrPrivateNetwork)
		}
	}
	return nil
}
