package simweb

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Profile names the robots.txt behaviour of a host.
type Profile string

// The robots.txt profiles. Web.Allowed is the ground truth of each.
const (
	// ProfileAllow answers 200 with rules that allow everything.
	ProfileAllow Profile = "allow"
	// ProfileDisallow answers 200 with rules for all agents that disallow
	// /private/ and /search but allow /private/open/ (the longest match
	// wins, so /private/open/x is allowed).
	ProfileDisallow Profile = "disallow"
	// ProfileCrawlDelay answers 200 with a Crawl-delay of Config.CrawlDelay
	// seconds (fractions allowed) and a disallowed /private/.
	ProfileCrawlDelay Profile = "crawl-delay"
	// ProfileNotFound answers robots.txt with 404: everything may be fetched
	// (RFC 9309 §2.3.1.3).
	ProfileNotFound Profile = "404"
	// ProfileError answers robots.txt with 500: nothing else of the host may
	// be fetched (RFC 9309 §2.3.1.4).
	ProfileError Profile = "500"
	// ProfileHTML answers robots.txt with an ordinary HTML page (200,
	// text/html) that holds no valid robots.txt lines: everything is
	// allowed.
	ProfileHTML Profile = "html"
	// ProfileRedirect answers /robots.txt with 301 to /robots-moved.txt on
	// the same host, which serves the ProfileDisallow rules
	// (RFC 9309 §2.3.1.2).
	ProfileRedirect Profile = "redirect"
	// ProfileAgent has a group for "gentlecrawl" that disallows /nogc/, and
	// a group for every other agent that disallows everything.
	ProfileAgent Profile = "agent"
)

var knownProfiles = map[Profile]bool{
	ProfileAllow: true, ProfileDisallow: true, ProfileCrawlDelay: true,
	ProfileNotFound: true, ProfileError: true, ProfileHTML: true,
	ProfileRedirect: true, ProfileAgent: true,
}

// DefaultProfiles returns the default mix of profiles; host i gets
// profiles[i%len(profiles)]. With 12 or more hosts every profile appears,
// and most hosts are crawlable.
func DefaultProfiles() []Profile {
	return []Profile{
		ProfileAllow, ProfileDisallow, ProfileAllow, ProfileCrawlDelay,
		ProfileNotFound, ProfileAllow, ProfileDisallow, ProfileHTML,
		ProfileError, ProfileRedirect, ProfileAllow, ProfileAgent,
	}
}

// Limits of Config.
const (
	MaxHosts        = 10000
	MaxPagesPerHost = 100000
)

// Config describes a synthetic web. Its zero value is usable: 20 hosts of
// about 30 pages each, seed 1.
type Config struct {
	// Seed selects the site graph. The default (0) means 1.
	Seed int64
	// Hosts is the number of hosts, 1..MaxHosts. The default is 20. Hosts
	// are named like spreadsheet columns: a, b, … z, aa, ab, … followed by
	// "." and Domain.
	Hosts int
	// Domain is the suffix of every host name. The default is "test".
	Domain string
	// PagesPerHost is the mean number of HTML pages per host. Each host gets
	// a deterministic count in [P/2, 3P/2], at least 1. The default is 30.
	PagesPerHost int
	// Profiles are the robots.txt profiles; host i gets
	// Profiles[i%len(Profiles)]. The default is DefaultProfiles().
	Profiles []Profile
	// CrawlDelay is the Crawl-delay written for ProfileCrawlDelay hosts.
	// The default is 2s.
	CrawlDelay time.Duration
	// Latency is added to every response before it is answered. The
	// default is 0.
	Latency time.Duration
	// Log, if non-nil, receives one JSON line (a LogEntry) per request when
	// the request ends. Writes are serialized. The in-memory log
	// (Web.Requests) is kept either way.
	Log io.Writer
	// Now is the clock of the request log, of Outage windows and of
	// RateLimit limiters. The
	// default is time.Now (inside a testing/synctest bubble, the bubble's
	// clock).
	Now func() time.Time
	// HostOptions, if non-nil, gives each host its options (capacity,
	// outages, extra latency). New calls it once per host, with the
	// host's index and name ("a.test"), and keeps a copy of the result.
	// The default gives every host the zero HostOptions.
	HostOptions func(index int, name string) HostOptions
	// AddrCapacity, if non-nil, is the capacity of each server address:
	// every local address that requests arrive on (a listener of Start,
	// or one of the addresses of ServeLoopback, shared by hosts i, i+n,
	// i+2n …) gets its own Model with this capacity, shared by all the
	// hosts served there, so that per-IP limits can be measured. Requests
	// without a local address (ServeHTTP called directly) share the Model
	// of address "". A request takes a worker of its host's Capacity
	// first, then one of its address's, and is served for the longer of
	// the two service times. Web.AddrModel returns these models.
	AddrCapacity *Capacity
}

// errConfig prefixes every configuration error.
var errConfig = errors.New("simweb: invalid config")

// withDefaults returns cfg with defaults filled in, or an error wrapping
// errConfig.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	switch {
	case cfg.Hosts == 0:
		cfg.Hosts = 20
	case cfg.Hosts < 0 || cfg.Hosts > MaxHosts:
		return cfg, fmt.Errorf("%w: Hosts %d not in 1..%d", errConfig, cfg.Hosts, MaxHosts)
	}
	if cfg.Domain == "" {
		cfg.Domain = "test"
	}
	cfg.Domain = strings.ToLower(strings.Trim(cfg.Domain, "."))
	if !validDomain(cfg.Domain) {
		return cfg, fmt.Errorf("%w: Domain %q is not a lower-case DNS name", errConfig, cfg.Domain)
	}
	switch {
	case cfg.PagesPerHost == 0:
		cfg.PagesPerHost = 30
	case cfg.PagesPerHost < 0 || cfg.PagesPerHost > MaxPagesPerHost:
		return cfg, fmt.Errorf("%w: PagesPerHost %d not in 1..%d", errConfig, cfg.PagesPerHost, MaxPagesPerHost)
	}
	if len(cfg.Profiles) == 0 {
		cfg.Profiles = DefaultProfiles()
	} else {
		cfg.Profiles = append([]Profile(nil), cfg.Profiles...)
	}
	for _, p := range cfg.Profiles {
		if !knownProfiles[p] {
			return cfg, fmt.Errorf("%w: unknown profile %q", errConfig, p)
		}
	}
	switch {
	case cfg.CrawlDelay == 0:
		cfg.CrawlDelay = 2 * time.Second
	case cfg.CrawlDelay < 0:
		return cfg, fmt.Errorf("%w: negative CrawlDelay %v", errConfig, cfg.CrawlDelay)
	}
	if cfg.Latency < 0 {
		return cfg, fmt.Errorf("%w: negative Latency %v", errConfig, cfg.Latency)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.AddrCapacity != nil {
		c, err := cfg.AddrCapacity.withDefaults()
		if err != nil {
			return cfg, fmt.Errorf("%w (AddrCapacity)", err)
		}
		cfg.AddrCapacity = &c
	}
	return cfg, nil
}

// validDomain reports whether d is made of dot-separated labels of
// lower-case letters, digits and inner hyphens.
func validDomain(d string) bool {
	if d == "" || len(d) > 200 {
		return false
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// hostLabel returns the spreadsheet-column name of host i: a … z, aa, ab …
func hostLabel(i int) string {
	var b []byte
	for n := i + 1; n > 0; n = (n - 1) / 26 {
		b = append(b, byte('a'+(n-1)%26))
	}
	for l, r := 0, len(b)-1; l < r; l, r = l+1, r-1 {
		b[l], b[r] = b[r], b[l]
	}
	return string(b)
}
