package fetch

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Resolve pins a host name and port to addresses, with the meaning of curl's
// --resolve HOST:PORT:ADDR[,ADDR]... Connections to Host:Port go to Addrs,
// tried in order, instead of the addresses DNS would give. Host "*" matches
// every host on Port. The URL and the Host header are unchanged.
type Resolve struct {
	Host  string // lower case, without a trailing dot; "*" matches any host
	Port  int    // 1-65535
	Addrs []netip.Addr
}

// ConnectTo redirects connections, with the meaning of curl's --connect-to
// HOST1:PORT1:HOST2:PORT2. A connection that would go to FromHost:FromPort
// goes to ToHost:ToPort instead; ToHost is then resolved through a matching
// Resolve rule or DNS. The URL, the Host header and the TLS server name are
// unchanged.
type ConnectTo struct {
	FromHost string // "" matches any host
	FromPort int    // 0 matches any port
	ToHost   string // "" keeps the original host
	ToPort   int    // 0 keeps the original port
}

// ParseResolve parses curl's --resolve syntax HOST:PORT:ADDR[,ADDR]...
// HOST may be "*"; an ADDR may be an IPv6 address, with or without brackets.
func ParseResolve(s string) (Resolve, error) {
	bad := func(why string) (Resolve, error) {
		return Resolve{}, fmt.Errorf("--resolve %q: %s", s, why)
	}
	const want = "want HOST:PORT:ADDR[,ADDR]..."
	host, rest, ok, err := cutHost(s)
	if err != nil {
		return bad(err.Error())
	}
	if !ok || host == "" {
		return bad(want)
	}
	if host, err = ruleHost(host); err != nil {
		return bad(err.Error())
	}
	portStr, addrList, ok := strings.Cut(rest, ":")
	if !ok || addrList == "" {
		return bad(want)
	}
	port, err := parsePort(portStr)
	if err != nil || port == 0 {
		return bad(fmt.Sprintf("bad port %q", portStr))
	}
	r := Resolve{Host: host, Port: port}
	for a := range strings.SplitSeq(addrList, ",") {
		addr, err := parseAddr(strings.TrimSpace(a))
		if err != nil {
			return bad(fmt.Sprintf("bad address %q", a))
		}
		r.Addrs = append(r.Addrs, addr)
	}
	return r, nil
}

// ParseConnectTo parses curl's --connect-to syntax HOST1:PORT1:HOST2:PORT2.
// Any field may be empty: an empty HOST1 or PORT1 matches anything, an empty
// HOST2 or PORT2 keeps the original. IPv6 addresses go in brackets.
func ParseConnectTo(s string) (ConnectTo, error) {
	bad := func(why string) (ConnectTo, error) {
		return ConnectTo{}, fmt.Errorf("--connect-to %q: %s", s, why)
	}
	const want = "want HOST1:PORT1:HOST2:PORT2"
	fromHost, rest, ok, err := cutHost(s)
	if err != nil {
		return bad(err.Error())
	}
	if !ok {
		return bad(want)
	}
	fromPort, rest, ok := strings.Cut(rest, ":")
	if !ok {
		return bad(want)
	}
	toHost, toPort, ok, err := cutHost(rest)
	if err != nil {
		return bad(err.Error())
	}
	if !ok {
		return bad(want)
	}
	if fromHost, err = ruleHost(fromHost); err != nil {
		return bad(err.Error())
	}
	if toHost, err = ruleHost(toHost); err != nil {
		return bad(err.Error())
	}
	ct := ConnectTo{FromHost: fromHost, ToHost: toHost}
	if ct.FromPort, err = parsePort(fromPort); err != nil {
		return bad(fmt.Sprintf("bad port %q", fromPort))
	}
	if ct.ToPort, err = parsePort(toPort); err != nil {
		return bad(fmt.Sprintf("bad port %q", toPort))
	}
	return ct, nil
}

// String returns r in --resolve syntax.
func (r Resolve) String() string {
	var b strings.Builder
	b.WriteString(hostField(r.Host))
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(r.Port))
	b.WriteByte(':')
	for i, a := range r.Addrs {
		if i > 0 {
			b.WriteByte(',')
		}
		if a.Is6() {
			b.WriteString("[" + a.String() + "]")
		} else {
			b.WriteString(a.String())
		}
	}
	return b.String()
}

// String returns ct in --connect-to syntax.
func (ct ConnectTo) String() string {
	port := func(p int) string {
		if p == 0 {
			return ""
		}
		return strconv.Itoa(p)
	}
	return hostField(ct.FromHost) + ":" + port(ct.FromPort) + ":" + hostField(ct.ToHost) + ":" + port(ct.ToPort)
}

func (r Resolve) validate() error {
	switch {
	case r.Host == "":
		return fmt.Errorf("fetch: resolve rule %s: empty host", r)
	case r.Port < 1 || r.Port > 65535:
		return fmt.Errorf("fetch: resolve rule %s: port out of range", r)
	case len(r.Addrs) == 0:
		return fmt.Errorf("fetch: resolve rule %s: no addresses", r)
	}
	for _, a := range r.Addrs {
		if !a.IsValid() {
			return fmt.Errorf("fetch: resolve rule %s: invalid address", r)
		}
	}
	return nil
}

func (ct ConnectTo) validate() error {
	if ct.FromPort < 0 || ct.FromPort > 65535 || ct.ToPort < 0 || ct.ToPort > 65535 {
		return fmt.Errorf("fetch: connect-to rule %s: port out of range", ct)
	}
	return nil
}

// cutHost splits s at the first colon after a host field, which may be an
// IPv6 address in brackets (returned without them). ok reports whether a
// colon followed the host.
func cutHost(s string) (host, rest string, ok bool, err error) {
	if !strings.HasPrefix(s, "[") {
		host, rest, ok = strings.Cut(s, ":")
		return host, rest, ok, nil
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return "", "", false, errors.New("missing ']'")
	}
	host, rest = s[1:end], s[end+1:]
	if a, err := netip.ParseAddr(host); err != nil || !a.Is6() {
		return "", "", false, fmt.Errorf("bad IPv6 address %q", host)
	}
	if rest == "" {
		return host, "", false, nil
	}
	if rest[0] != ':' {
		return "", "", false, fmt.Errorf("unexpected %q after ']'", rest)
	}
	return host, rest[1:], true, nil
}

// ruleHost checks a host field of a rule and gives it in the form hosts are
// compared in. An IPv6 address (cutHost has taken its brackets off) and ""
// pass as they are; a name may end in one dot but has no empty label and no
// character that cannot be in a host name, so that what String writes parses
// back to the same rule.
func ruleHost(h string) (string, error) {
	if h == "" || strings.Contains(h, ":") {
		return h, nil
	}
	name := strings.TrimSuffix(h, ".")
	if name == "" || strings.Contains(name, "..") || strings.HasPrefix(name, ".") {
		return "", fmt.Errorf("bad host %q", h)
	}
	for _, c := range name {
		if c <= ' ' || c == 0x7f || strings.ContainsRune("[]/\\?#@,", c) {
			return "", fmt.Errorf("bad host %q", h)
		}
	}
	return normHost(name), nil
}

// parsePort parses a decimal port; "" is 0.
func parsePort(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, errors.New("not a number")
		}
	}
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 {
		return 0, errors.New("out of range")
	}
	return p, nil
}

// parseAddr parses an IP address, accepting IPv6 in brackets.
func parseAddr(s string) (netip.Addr, error) {
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		a, err := netip.ParseAddr(s[1 : len(s)-1])
		if err == nil && !a.Is6() {
			return netip.Addr{}, fmt.Errorf("bad IPv6 address %q", s)
		}
		return a, err
	}
	return netip.ParseAddr(s)
}

// hostField formats a host for rule syntax, bracketing IPv6 addresses.
func hostField(h string) string {
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}

// normHost gives the form in which hosts are compared: lower case, no
// trailing dot.
func normHost(h string) string {
	return strings.ToLower(strings.TrimSuffix(h, "."))
}

func isLocalhostName(h string) bool {
	h = normHost(h)
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// connectRules are the ConnectTo rules indexed by the host they name, so
// that finding the rule for a host costs the same with ten thousand rules
// (one per host of a crawl) as with one: every connection of the crawl
// asks. The zero value has no rules.
type connectRules struct {
	all     []ConnectTo
	byHost  map[string][]int // indexes in all of the rules naming each host, in order
	anyHost []int            // indexes in all of the rules for any host, in order
}

func newConnectRules(rules []ConnectTo) connectRules {
	r := connectRules{all: rules}
	for i, c := range rules {
		if c.FromHost == "" {
			r.anyHost = append(r.anyHost, i)
			continue
		}
		if r.byHost == nil {
			r.byHost = make(map[string][]int)
		}
		r.byHost[c.FromHost] = append(r.byHost[c.FromHost], i)
	}
	return r
}

// target applies the rules to host:port; the first matching rule wins, as
// in curl: the first in order among those naming the host and those for
// any host.
func (r *connectRules) target(host string, port int) (string, int) {
	named, anyHost := r.byHost[normHost(host)], r.anyHost
	first := func(idx []int) int {
		for _, i := range idx {
			if p := r.all[i].FromPort; p == 0 || p == port {
				return i
			}
		}
		return len(r.all)
	}
	i := min(first(named), first(anyHost))
	if i == len(r.all) {
		return host, port
	}
	if c := r.all[i]; c.ToHost != "" {
		host = c.ToHost
	}
	if c := r.all[i]; c.ToPort != 0 {
		port = c.ToPort
	}
	return host, port
}

// resolveRules are the Resolve rules indexed by host and port, for the
// same reason as connectRules. The zero value has no rules.
type resolveRules struct {
	exact map[resolveKey][]netip.Addr // by host and port: the last rule's
	wild  map[int][]netip.Addr        // "*" rules by port: the last rule's
}

type resolveKey struct {
	host string
	port int
}

func newResolveRules(rules []Resolve) resolveRules {
	var r resolveRules
	for _, x := range rules {
		if x.Host == "*" {
			if r.wild == nil {
				r.wild = make(map[int][]netip.Addr)
			}
			r.wild[x.Port] = x.Addrs
			continue
		}
		if r.exact == nil {
			r.exact = make(map[resolveKey][]netip.Addr)
		}
		r.exact[resolveKey{x.Host, x.Port}] = x.Addrs
	}
	return r
}

// pinned returns the addresses a Resolve rule gives host:port. A rule naming
// the host beats a "*" rule; among equals the last wins, as in curl, where a
// later --resolve replaces an earlier entry in the DNS cache.
func (r *resolveRules) pinned(host string, port int) []netip.Addr {
	if a, ok := r.exact[resolveKey{normHost(host), port}]; ok {
		return a
	}
	return r.wild[port]
}

// Address ranges that IsPublic rejects besides those netip classifies.
var nonPublicPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network" (RFC 791)
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT (RFC 6598)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments (RFC 6890)
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking (RFC 2544)
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, including broadcast
	netip.MustParsePrefix("::/96"),           // unspecified, loopback, IPv4-compatible
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64 (RFC 8215)
	netip.MustParsePrefix("100::/64"),        // discard-only (RFC 6666)
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation (TEST-NET-1)
	netip.MustParsePrefix("198.51.100.0/24"), // documentation (TEST-NET-2)
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation (TEST-NET-3)
}

// nat64 is the well-known NAT64 prefix (RFC 6052); its addresses reach the
// IPv4 address in their last 32 bits.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// IsPublic reports whether addr is a globally routable unicast address that
// a crawler may connect to without --allow-private-networks. It is false for
// loopback, private (10/8, 172.16/12, 192.168/16, fc00::/7), link-local,
// carrier-grade NAT (100.64/10), multicast, unspecified, 0.0.0.0/8,
// reserved and broadcast, and documentation ranges. IPv4-mapped IPv6
// addresses are judged by their IPv4 address, and NAT64 addresses
// (64:ff9b::/96) by the IPv4 address they embed.
func IsPublic(addr netip.Addr) bool {
	if !addr.IsValid() {
		return false
	}
	addr = addr.Unmap().WithZone("")
	if nat64.Contains(addr) {
		b := addr.As16()
		return IsPublic(netip.AddrFrom4([4]byte(b[12:])))
	}
	if addr.IsLoopback() || addr.IsPrivate() || addr.IsUnspecified() ||
		addr.IsLinkLocalUnicast() || addr.IsMulticast() ||
		addr.IsLinkLocalMulticast() || addr.IsInterfaceLocalMulticast() {
		return false
	}
	for _, p := range nonPublicPrefixes {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}

// splitHostPort splits a dial address into host and numeric port.
func splitHostPort(addr string) (string, int, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("bad port in %q", addr)
	}
	return host, port, nil
}
