package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

// trapsUsage explains the trap flags in the usage text.
const trapsUsage = `Traps: --traps [HOST=]LIST gives every host (or HOST) the URL-space traps of
LIST, a comma-separated list of sessions (a session id in every link, the
page the same whatever the id; its name is --session-param, "jsessionid" for a
;jsessionid= path parameter), calendar (/calendar?month=YYYY-MM, endless),
facets (a catalog at /catalog?color=&size=&sort=&page=), deep (/deep/x/x/…,
endless), soft404 (/pages/* answers 200 "not found") and sitemaps
(/sitemap.xml, an index of a plain and a gzipped part, and a Sitemap: line in
robots.txt), or all. It may be repeated; a host gets the union. With
--exact-pages N every host with traps has exactly N real pages (the catalog's
included) and no images or other files.
`

// trapNames are the words of a --traps LIST.
var trapNames = []string{"sessions", "calendar", "facets", "deep", "soft404", "sitemaps"}

// trapsFlags are the flags of the URL-space traps.
type trapsFlags struct {
	specs        []trapSpec
	sessionParam string
	exactPages   int
}

// trapSpec is one --traps value.
type trapSpec struct {
	host  string // "" for every host
	traps simweb.Traps
}

func (f *trapsFlags) register(fs *flag.FlagSet) {
	fs.Func("traps", "URL-space traps `[HOST=]LIST`, LIST of "+strings.Join(trapNames, ",")+" or all; repeatable", func(v string) error {
		s, err := parseTraps(v, "")
		if err == nil {
			f.specs = append(f.specs, s)
		}
		return err
	})
	fs.StringVar(&f.sessionParam, "session-param", "sid", "`name` of the session id of --traps sessions (jsessionid: a path parameter)")
	fs.IntVar(&f.exactPages, "exact-pages", 0, "hosts with traps have exactly `N` real pages and no files (0: about --pages, with files)")
}

// parseTraps reads "[HOST=]LIST"; sessions gets the parameter name param
// ("" until apply knows it).
func parseTraps(v, param string) (trapSpec, error) {
	var s trapSpec
	list := v
	if host, rest, ok := strings.Cut(v, "="); ok {
		s.host, list = strings.ToLower(host), rest
	}
	for _, name := range strings.Split(list, ",") {
		switch strings.TrimSpace(name) {
		case "sessions":
			s.traps.SessionIDs = "?"
		case "calendar":
			s.traps.Calendar = true
		case "facets":
			s.traps.Facets = true
		case "deep":
			s.traps.DeepPath = true
		case "soft404":
			s.traps.Soft404 = true
		case "sitemaps":
			s.traps.Sitemaps = true
		case "all":
			s.traps = simweb.Traps{SessionIDs: "?", Calendar: true, Facets: true, DeepPath: true, Soft404: true, Sitemaps: true}
		default:
			return s, fmt.Errorf("%q: unknown trap %q; want %s or all", v, name, strings.Join(trapNames, ","))
		}
	}
	return s, nil
}

// trapsOf returns the union of the traps given to host name.
func (f *trapsFlags) trapsOf(name string) simweb.Traps {
	var t simweb.Traps
	for _, s := range f.specs {
		if s.host != "" && s.host != name {
			continue
		}
		if s.traps.SessionIDs != "" {
			t.SessionIDs = f.sessionParam
		}
		t.Calendar = t.Calendar || s.traps.Calendar
		t.Facets = t.Facets || s.traps.Facets
		t.DeepPath = t.DeepPath || s.traps.DeepPath
		t.Soft404 = t.Soft404 || s.traps.Soft404
		t.Sitemaps = t.Sitemaps || s.traps.Sitemaps
	}
	return t
}

// apply adds the traps to cfg.HostOptions, keeping the options it
// already gives.
func (f *trapsFlags) apply(cfg *simweb.Config) error {
	if f.exactPages < 0 {
		return fmt.Errorf("--exact-pages %d: must not be negative", f.exactPages)
	}
	if len(f.specs) == 0 {
		if f.exactPages > 0 {
			return fmt.Errorf("--exact-pages needs --traps")
		}
		return nil
	}
	prev := cfg.HostOptions
	cfg.HostOptions = func(i int, name string) simweb.HostOptions {
		var o simweb.HostOptions
		if prev != nil {
			o = prev(i, name)
		}
		o.Traps = f.trapsOf(name)
		if o.Traps != (simweb.Traps{}) && f.exactPages > 0 {
			o.Pages, o.NoFiles = f.exactPages, true
		}
		return o
	}
	return nil
}

// checkHosts reports --traps for a host the web does not have.
func (f *trapsFlags) checkHosts(web *simweb.Web) error {
	for _, s := range f.specs {
		if s.host != "" && web.Host(s.host) == nil {
			return fmt.Errorf("--traps: no host %q", s.host)
		}
	}
	return nil
}

// describe prints the traps of each host in the banner.
func (f *trapsFlags) describe(out io.Writer, web *simweb.Web) {
	if len(f.specs) == 0 {
		return
	}
	groups := map[string][]string{} // description → hosts
	var order []string
	for _, h := range web.Hosts() {
		t := h.Options().Traps
		if t == (simweb.Traps{}) {
			continue
		}
		var ws []string
		if t.SessionIDs != "" {
			ws = append(ws, "sessions ("+t.SessionIDs+")")
		}
		for _, x := range []struct {
			on   bool
			name string
		}{{t.Calendar, "calendar"}, {t.Facets, "facets"}, {t.DeepPath, "deep"}, {t.Soft404, "soft404"}, {t.Sitemaps, "sitemaps"}} {
			if x.on {
				ws = append(ws, x.name)
			}
		}
		d := strings.Join(ws, ", ")
		if groups[d] == nil {
			order = append(order, d)
		}
		groups[d] = append(groups[d], h.Name)
	}
	for _, d := range order {
		hosts := groups[d]
		who := strings.Join(hosts, " ")
		if len(hosts) == len(web.Hosts()) {
			who = "every host"
		} else if len(hosts) > 5 {
			who = fmt.Sprintf("%s … %s (%d hosts)", hosts[0], hosts[len(hosts)-1], len(hosts))
		}
		fmt.Fprintf(out, "traps: %s: %s\n", who, d)
	}
	if f.exactPages > 0 {
		fmt.Fprintf(out, "traps: hosts with traps have exactly %d real pages\n", f.exactPages)
	}
}
