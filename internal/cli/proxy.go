package cli

import (
	"fmt"
	"net/url"

	"github.com/spf13/pflag"

	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
)

// proxyFlags are --proxy and --noproxy, as curl names them.
type proxyFlags struct {
	addr    string
	noProxy string
	set     bool // --proxy was given (even empty): the environment is not read
}

func (p *proxyFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&p.addr, "proxy", "", "send requests through this http:// proxy, `URL` = http://[USER:PASSWORD@]HOST:PORT (https:// through CONNECT), loopback included; without it HTTP_PROXY, HTTPS_PROXY and NO_PROXY are read as Go reads them; --proxy '' connects directly")
	fs.StringVar(&p.noProxy, "noproxy", "", "`LIST` of hosts reached without the proxy, as NO_PROXY: comma-separated names (with their subdomains), .domain (subdomains only), addresses, CIDR prefixes, * for all")
}

// parsed records, once the flags (and a --config file) are read, whether
// --proxy was given.
func (p *proxyFlags) parsed(fs *pflag.FlagSet) { p.set = fs.Changed("proxy") }

// proxy returns the fetch client's proxies, nil for direct connections.
func (p *proxyFlags) proxy() (*fetch.Proxy, error) {
	px, err := fetch.NewProxy(p.addr, p.noProxy, !p.set)
	if err != nil && p.addr != "" {
		return nil, fmt.Errorf("--proxy: %w", err)
	}
	return px, err
}

// url returns the proxy --proxy names, nil without one; like proxy, it
// checks the environment's proxies when no --proxy is given.
func (p *proxyFlags) url() (*url.URL, error) {
	if _, err := p.proxy(); err != nil {
		return nil, err
	}
	if p.addr == "" {
		return nil, nil
	}
	u, err := fetch.ParseProxyURL(p.addr)
	if err != nil {
		return nil, fmt.Errorf("--proxy: %w", err)
	}
	return u, nil
}
