package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// dialer opens TCP connections for the Transport. It applies --connect-to,
// then --resolve or DNS, and refuses non-public addresses at the moment of
// dialing, so the address checked is the address connected to (a name that
// resolves to a private address, even only on the second lookup, is refused).
// It is safe for concurrent use and holds no mutable state.
type dialer struct {
	connectTo    []ConnectTo
	resolve      []Resolve
	allowPrivate bool
	timeout      time.Duration // resolution plus connect
	net          net.Dialer
	resolver     *net.Resolver
}

// DialContext has the signature of http.Transport.DialContext. addr is the
// host:port of the URL being fetched.
func (d *dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := splitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()

	host, port = connectTarget(d.connectTo, host, port)
	addrs, err := d.lookup(ctx, host, port)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a, uint16(port))
		if !d.allowPrivate && !IsPublic(a) {
			errs = append(errs, fmt.Errorf("dial %s: %w", ap, ErrPrivateNetwork))
			continue
		}
		conn, err := d.net.DialContext(ctx, network, ap.String())
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

// lookup returns the addresses for host:port: those of a --resolve rule, the
// host itself when it is an IP address, or else those from DNS.
func (d *dialer) lookup(ctx context.Context, host string, port int) ([]netip.Addr, error) {
	if addrs := pinned(d.resolve, host, port); len(addrs) > 0 {
		return addrs, nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	addrs, err := d.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	return addrs, nil
}
