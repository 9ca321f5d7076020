package fetch

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpproxy"
)

// ErrProxy is the cause of a failure the proxy reported rather than the
// server: a CONNECT it refused, or a 407 (the proxy wants credentials).
var ErrProxy = errors.New("fetch: the proxy refused the request")

// Proxy says which HTTP proxy carries which requests. An http:// URL goes
// to its proxy as a request in absolute form ("GET http://host/path"); an
// https:// URL through a CONNECT tunnel, inside which TLS and HTTP/2 run
// end to end with the server. Only http:// proxies are supported.
//
// With a proxy the crawler still resolves every target itself: the private
// network guard refuses a target whose name resolves, here, to a
// non-public address, as it would without a proxy, and per-IP politeness
// groups hosts by those addresses. The proxy's own address is allowed
// whatever it is: the user named it. --resolve and --connect-to apply to
// the connection made, which is to the proxy.
type Proxy struct {
	HTTP  *url.URL // the proxy for http:// URLs; nil: direct
	HTTPS *url.URL // the proxy for https:// URLs; nil: direct

	// NoProxy lists the hosts reached directly, as NO_PROXY does: names
	// (matching themselves and their subdomains; with a leading "." only
	// the subdomains), IP addresses, CIDR prefixes, any of them with a
	// ":port", and "*" for every host. Commas or spaces separate them.
	NoProxy string

	// Loopback sends requests for loopback addresses and "localhost"
	// through the proxy too. ProxyFromEnvironment leaves it false, as
	// Go's own reading of the environment does; a proxy named on the
	// command line sets it.
	Loopback bool

	noProxy []noProxyRule
}

type noProxyRule struct {
	all    bool
	prefix netip.Prefix // an address or CIDR rule
	name   string       // a name rule, lower case, without a leading dot
	subs   bool         // only the subdomains of name
	port   int          // 0: any port
}

// ParseProxyURL parses a proxy's address as curl and Go accept it:
// "http://host:port", or "host:port" meaning http. A missing port is 80,
// user and password become Proxy-Authorization. Any other scheme is an
// error, https:// and socks5:// included.
func ParseProxyURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, errors.New("fetch: empty proxy address")
	}
	raw := s
	if !strings.Contains(s, "://") {
		raw = "http://" + s
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("fetch: proxy %q: %w", redactProxy(s), err)
	}
	if !strings.EqualFold(u.Scheme, "http") {
		return nil, fmt.Errorf("fetch: proxy %q: only http:// proxies are supported, not %s://", redactProxy(s), u.Scheme)
	}
	u.Scheme = "http"
	if u.Hostname() == "" {
		return nil, fmt.Errorf("fetch: proxy %q: no host", redactProxy(s))
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("fetch: proxy %q: bad port %q", redactProxy(s), p)
		}
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("fetch: proxy %q: a proxy address has no path or query", redactProxy(s))
	}
	u.Path = ""
	return u, nil
}

// redactProxy hides a password in a proxy address for messages.
func redactProxy(s string) string {
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return s
	}
	start := strings.Index(s, "://")
	if start < 0 {
		start = 0
	} else {
		start += 3
	}
	if c := strings.IndexByte(s[start:at], ':'); c >= 0 {
		return s[:start+c+1] + "xxxxx" + s[at:]
	}
	return s
}

// ProxyFromEnvironment reads HTTP_PROXY, HTTPS_PROXY and NO_PROXY (or
// their lower-case forms) as Go's net/http reads them: the lower-case
// name first (as curl), HTTP_PROXY ignored when REQUEST_METHOD is set (a CGI
// program's request could set it), loopback and "localhost" always
// direct. It returns nil when neither proxy is set, and an error when one
// is set but not an http:// proxy.
func ProxyFromEnvironment() (*Proxy, error) {
	env := httpproxy.FromEnvironment()
	p := &Proxy{NoProxy: env.NoProxy}
	var err error
	if env.HTTPProxy != "" && !env.CGI {
		if p.HTTP, err = ParseProxyURL(env.HTTPProxy); err != nil {
			return nil, fmt.Errorf("HTTP_PROXY: %w", err)
		}
	}
	if env.HTTPSProxy != "" {
		if p.HTTPS, err = ParseProxyURL(env.HTTPSProxy); err != nil {
			return nil, fmt.Errorf("HTTPS_PROXY: %w", err)
		}
	}
	if p.HTTP == nil && p.HTTPS == nil {
		return nil, nil
	}
	return p, nil
}

// compile parses NoProxy. Entries that are none of the forms are
// ignored, as Go and curl ignore them.
func (p *Proxy) compile() {
	p.noProxy = nil
	for _, f := range strings.FieldsFunc(strings.ToLower(p.NoProxy), func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if f == "*" {
			p.noProxy = append(p.noProxy, noProxyRule{all: true})
			continue
		}
		if pf, err := netip.ParsePrefix(f); err == nil {
			p.noProxy = append(p.noProxy, noProxyRule{prefix: pf.Masked()})
			continue
		}
		r := noProxyRule{}
		host := f
		if h, port, err := net.SplitHostPort(f); err == nil {
			n, err := strconv.Atoi(port)
			if err != nil || n < 1 || n > 65535 {
				continue
			}
			host, r.port = h, n
		}
		host = strings.Trim(host, "[]")
		if a, err := netip.ParseAddr(host); err == nil {
			a = a.Unmap()
			r.prefix = netip.PrefixFrom(a, a.BitLen())
			p.noProxy = append(p.noProxy, r)
			continue
		}
		host = strings.TrimPrefix(host, "*")
		if strings.HasPrefix(host, ".") {
			r.subs = true
			host = host[1:]
		}
		host = strings.TrimSuffix(host, ".")
		if host == "" {
			continue
		}
		r.name = host
		p.noProxy = append(p.noProxy, r)
	}
}

// For returns the proxy for u, or nil when u is reached directly.
func (p *Proxy) For(u *url.URL) *url.URL {
	if p == nil {
		return nil
	}
	var proxy *url.URL
	switch u.Scheme {
	case "http":
		proxy = p.HTTP
	case "https":
		proxy = p.HTTPS
	}
	if proxy == nil || p.direct(u) {
		return nil
	}
	return proxy
}

// direct reports whether u's host is reached without the proxy.
func (p *Proxy) direct(u *url.URL) bool {
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	port, _ := strconv.Atoi(u.Port())
	if port == 0 {
		port = 80
		if u.Scheme == "https" {
			port = 443
		}
	}
	addr, addrErr := netip.ParseAddr(host)
	if addrErr == nil {
		addr = addr.Unmap()
	}
	if !p.Loopback && (host == "localhost" || addrErr == nil && addr.IsLoopback()) {
		return true
	}
	for _, r := range p.noProxy {
		switch {
		case r.all:
			return true
		case r.port != 0 && r.port != port:
		case r.prefix.IsValid():
			if addrErr == nil && r.prefix.Contains(addr) {
				return true
			}
		case host == r.name:
			if !r.subs {
				return true
			}
		case strings.HasSuffix(host, "."+r.name):
			return true
		}
	}
	return false
}

// proxyAddr is the host:port to dial for a proxy URL.
func proxyAddr(proxy *url.URL) string {
	port := proxy.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(proxy.Hostname(), port)
}

// proxyAuth is the Proxy-Authorization value for a proxy URL with a user,
// or "".
func proxyAuth(proxy *url.URL) string {
	if proxy.User == nil {
		return ""
	}
	pass, _ := proxy.User.Password()
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(proxy.User.Username()+":"+pass))
}

// proxyRequest turns the request head raw (origin form: "GET /path
// HTTP/1.1") into what goes to an HTTP proxy: the request line in absolute
// form, and Proxy-Authorization when the proxy has credentials. raw stays
// the record of the request; the credentials never reach it.
func proxyRequest(raw []byte, host string, auth string) []byte {
	sp := bytes.IndexByte(raw, ' ')
	eol := bytes.Index(raw, []byte("\r\n")) + 2
	out := make([]byte, 0, len(raw)+len("http://")+len(host)+len("Proxy-Authorization: \r\n")+len(auth))
	out = append(out, raw[:sp+1]...)
	out = append(out, "http://"...)
	out = append(out, host...)
	out = append(out, raw[sp+1:eol]...)
	if auth != "" {
		out = append(out, "Proxy-Authorization: "...)
		out = append(out, auth...)
		out = append(out, "\r\n"...)
	}
	return append(out, raw[eol:]...)
}

// NewProxy returns the proxies of a crawl's settings: proxy, when set, for
// every request but noProxy's hosts, loopback included (curl's --proxy and
// --noproxy); else, with fromEnvironment, those of ProxyFromEnvironment,
// noProxy replacing NO_PROXY when set. It returns nil for direct
// connections.
func NewProxy(proxy, noProxy string, fromEnvironment bool) (*Proxy, error) {
	if proxy != "" {
		u, err := ParseProxyURL(proxy)
		if err != nil {
			return nil, err
		}
		return &Proxy{HTTP: u, HTTPS: u, NoProxy: noProxy, Loopback: true}, nil
	}
	if !fromEnvironment {
		return nil, nil
	}
	p, err := ProxyFromEnvironment()
	if err != nil || p == nil {
		return nil, err
	}
	if noProxy != "" {
		p.NoProxy = noProxy
	}
	return p, nil
}

// String describes the proxies without their passwords:
// "http://proxy:3128" when one carries both schemes, else each with the
// scheme it carries.
func (p *Proxy) String() string {
	if p == nil {
		return "direct"
	}
	name := func(u *url.URL) string {
		if u == nil {
			return "direct"
		}
		return u.Redacted()
	}
	if p.HTTP != nil && p.HTTPS != nil && p.HTTP.String() == p.HTTPS.String() {
		return name(p.HTTP)
	}
	return "http:// " + name(p.HTTP) + ", https:// " + name(p.HTTPS)
}
