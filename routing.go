package gentlecrawl

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
)

// Resolve pins a host name and port to addresses (Config.Resolve), as
// curl's --resolve does: connections to Host on Port go to Addrs, tried in
// order, instead of the addresses DNS would give. The URL and the Host
// header are unchanged.
type Resolve struct {
	Host  string // a host name, matched without regard to case; "*" matches every host
	Port  int    // 1-65535
	Addrs []netip.Addr
}

// ConnectTo sends the connections for one host and port to another
// (Config.ConnectTo), as curl's --connect-to does: a connection that would
// go to FromHost on FromPort goes to ToHost on ToPort instead, ToHost being
// resolved through a matching Resolve or DNS. The URL, the Host header and
// the TLS server name are unchanged: a crawl of https://example.org/ can be
// sent to a test server or a staging copy and still be a crawl of
// example.org.
type ConnectTo struct {
	FromHost string // a host name, matched without regard to case; "" matches any host
	FromPort int    // 0 matches any port
	ToHost   string // a host name or an IP address (IPv6 without brackets); "" keeps the original host
	ToPort   int    // 0 keeps the original port
}

// rule checks r and returns it as the fetcher takes it.
func (r Resolve) rule() (fetch.Resolve, error) {
	bad := func(why string) (fetch.Resolve, error) {
		return fetch.Resolve{}, fmt.Errorf("Config.Resolve {Host: %q, Port: %d, Addrs: %v}: %s", r.Host, r.Port, r.Addrs, why)
	}
	host, err := ruleHost(r.Host)
	switch {
	case err != nil:
		return bad(err.Error())
	case host == "":
		return bad("no host")
	case r.Port < 1 || r.Port > 65535:
		return bad("port out of range")
	case len(r.Addrs) == 0:
		return bad("no addresses")
	}
	for _, a := range r.Addrs {
		if !a.IsValid() {
			return bad("an invalid address")
		}
	}
	return fetch.Resolve{Host: host, Port: r.Port, Addrs: append([]netip.Addr(nil), r.Addrs...)}, nil
}

// rule checks ct and returns it as the fetcher takes it.
func (ct ConnectTo) rule() (fetch.ConnectTo, error) {
	bad := func(why string) (fetch.ConnectTo, error) {
		return fetch.ConnectTo{}, fmt.Errorf("Config.ConnectTo %+v: %s", ct, why)
	}
	from, err := ruleHost(ct.FromHost)
	if err != nil {
		return bad(err.Error())
	}
	to, err := ruleHost(ct.ToHost)
	if err != nil {
		return bad(err.Error())
	}
	if ct.FromPort < 0 || ct.FromPort > 65535 || ct.ToPort < 0 || ct.ToPort > 65535 {
		return bad("port out of range")
	}
	return fetch.ConnectTo{FromHost: from, FromPort: ct.FromPort, ToHost: to, ToPort: ct.ToPort}, nil
}

// ruleHost gives a host of a routing rule in the form the fetcher compares
// hosts in: lower case, without a trailing dot. An IPv6 address (without
// brackets) passes as it is; a name has no empty label and nothing that cannot be in a host
// name.
func ruleHost(h string) (string, error) {
	if h == "" || h == "*" {
		return h, nil
	}
	if strings.Contains(h, ":") {
		if a, err := netip.ParseAddr(h); err != nil || !a.Is6() {
			return "", fmt.Errorf("bad host %q", h)
		}
		return h, nil
	}
	name := strings.TrimSuffix(h, ".")
	if name == "" || strings.Contains(name, "..") || strings.HasPrefix(name, ".") {
		return "", fmt.Errorf("bad host %q", h)
	}
	for _, c := range name {
		if c <= ' ' || c == 0x7f || strings.ContainsRune("[]/\\?#@,:", c) {
			return "", fmt.Errorf("bad host %q", h)
		}
	}
	return strings.ToLower(name), nil
}
