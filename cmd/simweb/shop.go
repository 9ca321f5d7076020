package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

// shopUsage explains the shop flags in the usage text.
const shopUsage = `Shops: --shop HOST makes HOST (--shop all: every host) an online shop of
--shop-catalog catalogue pages of --shop-per-page items each, whose URL-space
traps — session ids, a tracking parameter, sort orders, an endless calendar,
an endless path and an endless news chain — have names and URL shapes drawn
from --seed, so that each seed shows the same kinds of trap in another form.
The banner prints each shop's drawn surface. It may be repeated; a shop host
has no --traps.
`

// shopFlags are the flags of the shops.
type shopFlags struct {
	hosts            []string // "all" for every host
	catalog, perPage int
}

func (f *shopFlags) register(fs *flag.FlagSet) {
	fs.Func("shop", "make `HOST` (all: every host) a shop with traps drawn from --seed; repeatable", func(v string) error {
		v = strings.ToLower(strings.TrimSpace(v))
		if v == "" {
			return fmt.Errorf("empty host")
		}
		f.hosts = append(f.hosts, v)
		return nil
	})
	fs.IntVar(&f.catalog, "shop-catalog", 10, "catalogue pages of each shop")
	fs.IntVar(&f.perPage, "shop-per-page", 50, "items on each catalogue page of a shop")
}

// isShop reports whether --shop names host name.
func (f *shopFlags) isShop(name string) bool {
	for _, h := range f.hosts {
		if h == "all" || h == name {
			return true
		}
	}
	return false
}

// apply makes the --shop hosts shops in cfg.HostOptions, keeping the
// other options it already gives them and dropping their traps.
func (f *shopFlags) apply(cfg *simweb.Config) error {
	if f.catalog < 1 || f.perPage < 1 {
		return fmt.Errorf("--shop-catalog %d, --shop-per-page %d: must be at least 1", f.catalog, f.perPage)
	}
	if len(f.hosts) == 0 {
		return nil
	}
	prev := cfg.HostOptions
	cfg.HostOptions = func(i int, name string) simweb.HostOptions {
		var o simweb.HostOptions
		if prev != nil {
			o = prev(i, name)
		}
		if f.isShop(name) {
			o.Traps, o.Pages, o.NoFiles = simweb.Traps{}, 0, false
			o.Shop = &simweb.Shop{Catalog: f.catalog, PerPage: f.perPage}
		}
		return o
	}
	return nil
}

// checkHosts reports --shop for a host the web does not have.
func (f *shopFlags) checkHosts(web *simweb.Web) error {
	for _, h := range f.hosts {
		if h != "all" && web.Host(h) == nil {
			return fmt.Errorf("--shop: no host %q", h)
		}
	}
	return nil
}

// describe prints the drawn surface of each shop in the banner, up to
// maxListedHosts of them.
func (f *shopFlags) describe(out io.Writer, web *simweb.Web) {
	n := 0
	for _, h := range web.Hosts() {
		s := h.ShopSummary()
		if s == "" {
			continue
		}
		if n++; n > maxListedHosts {
			fmt.Fprintln(out, "shop: … (more shops not listed)")
			return
		}
		fmt.Fprintf(out, "shop: %s: %s\n", h.Name, s)
	}
}
