package gentlecrawl

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
	"github.com/gentlecrawl/gentlecrawl/robots"
	"github.com/gentlecrawl/gentlecrawl/urlnorm"
	"golang.org/x/net/publicsuffix"
)

// Config describes a crawl. The zero value of every field but JobDir and
// Seeds is a sensible default, given in the field's comment.
type Config struct {
	// JobDir holds all the state of the crawl; the same directory again
	// resumes it. Required.
	JobDir string
	// Seeds are the URLs the crawl starts from. At least one is required,
	// unless the job directory already holds a crawl.
	Seeds []string

	// Agent is the product token matched against robots.txt groups and sent
	// in the User-Agent. Letters, '-' and '_' only. Default "gentlecrawl".
	Agent string
	// UserAgent is the whole User-Agent header. Default
	// "AGENT/VERSION (+https://github.com/gentlecrawl/gentlecrawl)".
	UserAgent string
	// From is sent as the From header when non-empty: a way for a site
	// owner to reach whoever runs the crawl.
	From string
	// SignKey, when set, signs every request of the crawl, robots.txt and
	// sitemaps included, with HTTP Message Signatures (RFC 9421) in the
	// Web Bot Auth profile, so that a site can verify the crawler by its
	// key rather than by its address: an ed25519.PrivateKey, or any
	// crypto.Signer whose public key is an ed25519.PublicKey.
	// SignatureAgent is then required: the https:// origin
	// ("https://crawler.example.org") that publishes the public key at
	// /.well-known/http-message-signatures-directory (gentlecrawl keygen
	// writes that file). Each request, each redirect hop, gets its own
	// signature for its own host, valid for a minute; User-Agent and From
	// stay as they are. Default nil: nothing is signed.
	SignKey        crypto.Signer
	SignatureAgent string

	// Delay is the minimum gap between the end of one request to a host and
	// the start of the next. Default 1s.
	Delay time.Duration
	// NoDelay sets no minimum gap: host load alone sets each host's pace
	// (Crawl-delay and host rules still apply), and a host that stays fast
	// may get up to MaxPerHost requests at once.
	NoDelay bool
	// MaxPerHost bounds the requests in flight to one host when NoDelay
	// lets it grow past one. Default 2.
	MaxPerHost int
	// CrawlDelay says what to do with a robots.txt Crawl-delay. Default: honour it.
	CrawlDelay CrawlDelayPolicy

	// MaxPages stops the crawl after this many fetches (robots.txt not
	// counted). Default 0: no limit.
	MaxPages int
	// MaxRate is the most requests per second the whole crawl sends, to
	// every host together, robots.txt included: no two requests start
	// closer than 1/MaxRate. Default 0: no budget.
	MaxRate float64
	// MaxDepth is the number of links followed from a seed. Default 0: no limit.
	MaxDepth int
	// Scope says which discovered URLs are followed. Default ScopeHost.
	Scope Scope

	// Sitemaps are fetched first, and their URLs added to the crawl (in
	// scope, like links). The sitemaps a site lists in robots.txt are
	// always used unless NoSitemaps is set.
	Sitemaps   []string
	NoSitemaps bool

	// AllTypes downloads every kind of file. By default links to audio,
	// video, executables, archives and disk images are not followed (by
	// their extension), and a download whose Content-Type is one of those
	// ends after the headers.
	AllTypes bool

	// Include and Exclude narrow the scope with regular expressions
	// matched against the whole URL: when Include is given a URL must
	// match one of them, and it must match none of Exclude. The job keeps
	// them: a run that gives neither goes on with those of the last run
	// that gave some.
	Include, Exclude []*regexp.Regexp

	// Recrawl makes every URL the job has visited due again, fetched with
	// conditional GET from its history.
	Recrawl bool

	// Continuous keeps the crawl going when nothing new is left: each
	// page fetched is queued again for the time its estimated rate of
	// change makes a visit worth it (the freshness-optimal allocation of
	// the host's refresh budget), and new URLs keep being discovered. It
	// ends when its context is done or after For.
	Continuous bool
	// For ends a crawl after this long (Summary.Stopped "time limit");
	// 0: no limit.
	For time.Duration

	// RevisitMin and RevisitMax bound the interval between two visits of
	// a page in a continuous crawl. Defaults 1h and 30 days.
	RevisitMin, RevisitMax time.Duration
	// RefreshShare is the fraction of each host's request budget planned
	// for revisits while new URLs wait to be fetched (0 < share ≤ 1); when
	// nothing new is left revisits may use all of it. Default 0.5.
	RefreshShare float64
	// RecheckEvery is how many conditional revisits of a page are made
	// before one without validators, to catch servers whose validators
	// lie (a 304 for a changed page). Default 8; negative: never.
	RecheckEvery int

	// Frontier, when set, holds the crawl's frontier (its URLs, their
	// histories, robots.txt records) instead of the job directory: every
	// crawler, in this process or another, run on the same database is
	// one more worker of one crawl (each with its own JobDir, for its
	// WARC files and request log), and one request at a time per host,
	// the gaps, Crawl-delay, Retry-After and robots.txt hold across them
	// all. Open it with OpenSharedFrontier; the crawler does not close it.
	// Default nil: the embedded store in JobDir.
	Frontier *SharedFrontier

	// Workers is the number of hosts fetched at the same time. Default 32.
	Workers int
	// Timeout bounds one HTTP exchange, body included. Default 30s.
	Timeout time.Duration
	// MaxBodySize caps a decoded body. Default 15 MiB.
	MaxBodySize int64

	// Resolve pins host names to addresses, and ConnectTo sends the
	// connections for a host to another; the URLs, the Host headers and
	// the TLS server names stay those of the crawl.
	Resolve   []Resolve
	ConnectTo []ConnectTo
	// AllowPrivateNetworks permits loopback and private addresses, refused
	// by default so that a public page cannot steer the crawler inside a
	// network.
	AllowPrivateNetworks bool

	// Proxy, when set, is an http:// proxy (&url.URL{Scheme: "http",
	// Host: "proxy:3128"}, with User for its credentials) that carries
	// every request but those for NoProxy's hosts, loopback included:
	// http:// URLs as requests in absolute form, https:// URLs through
	// CONNECT. Robots, politeness and host load still apply to the target
	// hosts, and targets are still checked against private networks where
	// they resolve here; the proxy's own address is allowed. Other
	// schemes (https://, socks5://) are refused.
	Proxy *url.URL
	// ProxyFromEnvironment, when Proxy is nil, takes the proxies from
	// HTTP_PROXY, HTTPS_PROXY and NO_PROXY as net/http reads them
	// (loopback and localhost never proxied).
	ProxyFromEnvironment bool
	// NoProxy lists hosts reached without the proxy, in the syntax of the
	// NO_PROXY variable (as golang.org/x/net/http/httpproxy.Config takes
	// it): comma-separated names with their subdomains, ".name" for
	// subdomains only, addresses, CIDR prefixes, any with a ":port", "*"
	// for all. With ProxyFromEnvironment it replaces NO_PROXY.
	NoProxy string

	// RobotsTTL is how long a robots.txt answer is trusted. Default 24h.
	RobotsTTL time.Duration
	// RobotsRetry is the wait before asking again for a robots.txt that was
	// unavailable (5xx, 429, network error); it doubles with each failure,
	// up to RobotsTTL. Default 1 minute.
	RobotsRetry time.Duration

	// HostRules slow particular hosts down: a maximum rate until a date, or
	// a slower pace during the site's busy hours.
	HostRules []HostRule

	// MaxPerAddr is how many requests may be in flight at once to one IP
	// address over all its hosts (shared hosting). Default 2. In a shared
	// crawl the budget is the whole crawl's, set when the frontier is
	// opened (SharedFrontierOptions.MaxPerAddr): leave this 0, or give
	// the same.
	MaxPerAddr int

	// MaxAttempts is how many times a URL is tried when the server answers
	// 429 or 5xx or the network fails; the host slows down between tries.
	// Default 3.
	MaxAttempts int

	// WARCMaxSize rotates WARC files past this size. Default 1 GiB.
	WARCMaxSize int64

	// Logger receives the crawl's log; nil means silent.
	Logger *slog.Logger

	// OnPage, when set, is called for each page fetched (every answer to a
	// URL of the crawl, robots.txt aside) once its WARC records are
	// written, with what was received. It is called from the crawl's
	// workers: for pages of different hosts at the same time, so it must
	// be safe for concurrent use, and the crawl of that host waits while
	// it runs. The Page and its slices are its to keep. An error stops the
	// crawl: Run returns it, and the URL stays queued for the next run.
	OnPage func(ctx context.Context, p *Page) error

	// MetricsHosts is how many hosts get their own "host" label in the
	// metrics (Crawler.MetricsHandler), the first seen; the others are
	// counted as "other". At most 1000. Default 0: no per-host series.
	MetricsHosts int
}

// Page is a fetched page, as Config.OnPage receives it.
type Page struct {
	URL    string      // the URL fetched
	Status int         // the HTTP status
	Header http.Header // the response's header
	Body   []byte      // the body, decoded (Content-Encoding undone); nil when it could not be
	// Links are the in-scope URLs it leads to (the links of an HTML
	// page, a redirect's target), absolute, that the crawl had not
	// queued already from another page; a page found to repeat another,
	// or marked nofollow, has none.
	Links   []string
	Purpose string    // "discovery" (never fetched before) or "refresh"
	Start   time.Time // when the request was sent
	End     time.Time // when the answer was read
	TTFB    time.Duration
}

// CrawlDelayMode is how a robots.txt Crawl-delay is treated.
type CrawlDelayMode int

// Crawl-delay modes.
const (
	CrawlDelayHonor  CrawlDelayMode = iota // use max(Delay, Crawl-delay)
	CrawlDelayIgnore                       // use Delay alone, as Google does
	CrawlDelayCap                          // honour it, but never wait more than Cap
)

// CrawlDelayPolicy is the treatment of a robots.txt Crawl-delay.
type CrawlDelayPolicy struct {
	Mode CrawlDelayMode
	Cap  time.Duration // for CrawlDelayCap
}

// apply returns the gap to keep for a host given its Crawl-delay (ok false
// when robots.txt sets none) and the configured minimum.
func (p CrawlDelayPolicy) apply(min, crawlDelay time.Duration, ok bool) time.Duration {
	if !ok || p.Mode == CrawlDelayIgnore {
		return min
	}
	if p.Mode == CrawlDelayCap && crawlDelay > p.Cap {
		crawlDelay = p.Cap
	}
	return max(min, crawlDelay)
}

// Scope says which discovered URLs a crawl follows.
type Scope string

// Scopes.
const (
	ScopeHost   Scope = "host"   // the seeds' host names (any scheme or port)
	ScopeDomain Scope = "domain" // the seeds' registrable domains (example.co.uk), subdomains included
	ScopePrefix Scope = "prefix" // URLs that start with a seed URL
)

// narrow adds Include and Exclude to an in-scope test.
func narrow(in func(*url.URL) bool, inc, exc []*regexp.Regexp) func(*url.URL) bool {
	if len(inc) == 0 && len(exc) == 0 {
		return in
	}
	return func(u *url.URL) bool {
		if !in(u) {
			return false
		}
		s := u.String()
		for _, re := range exc {
			if re.MatchString(s) {
				return false
			}
		}
		if len(inc) == 0 {
			return true
		}
		for _, re := range inc {
			if re.MatchString(s) {
				return true
			}
		}
		return false
	}
}

// matcher builds the in-scope test for the seeds.
func (s Scope) matcher(seeds []*url.URL) func(*url.URL) bool {
	switch s {
	case ScopeDomain:
		domains := make(map[string]bool)
		for _, u := range seeds {
			domains[registrable(u.Hostname())] = true
		}
		return func(u *url.URL) bool { return domains[registrable(u.Hostname())] }
	case ScopePrefix:
		prefixes := make([]string, len(seeds))
		for i, u := range seeds {
			prefixes[i] = urlnorm.Canonical(u)
		}
		return func(u *url.URL) bool {
			c := urlnorm.Canonical(u)
			for _, p := range prefixes {
				if strings.HasPrefix(c, p) {
					return true
				}
			}
			return false
		}
	}
	hosts := make(map[string]bool)
	for _, u := range seeds {
		hosts[u.Hostname()] = true
	}
	return func(u *url.URL) bool { return hosts[u.Hostname()] }
}

func registrable(host string) string {
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return host
	}
	return d
}

// withDefaults returns a copy of c with the defaults filled in, or the first
// problem found. It touches nothing on disk.
func (c Config) withDefaults() (Config, []*url.URL, error) {
	if c.JobDir == "" {
		return c, nil, errors.New("a job directory is required (--job DIR)")
	}
	if c.Agent == "" {
		c.Agent = "gentlecrawl"
	}
	if !robots.ValidAgent(c.Agent) {
		return c, nil, fmt.Errorf("--user-agent %q: a product token is letters, '-' and '_' only", c.Agent)
	}
	if c.UserAgent == "" {
		c.UserAgent = fmt.Sprintf("%s/%s (+%s)", c.Agent, Version, InfoURL)
	}
	switch {
	case c.NoDelay:
		c.Delay = 0
	case c.Delay == 0:
		c.Delay = time.Second
	}
	if c.MaxPerHost <= 0 {
		c.MaxPerHost = 2
	}
	if c.Delay < 0 {
		return c, nil, fmt.Errorf("--delay %v: must not be negative", c.Delay)
	}
	if c.MaxPages < 0 || c.MaxDepth < 0 {
		return c, nil, errors.New("--max-pages and --max-depth must not be negative")
	}
	if c.MaxRate < 0 || math.IsNaN(c.MaxRate) || math.IsInf(c.MaxRate, 0) || c.MaxRate > 0 && c.MaxRate < 1e-3 {
		return c, nil, fmt.Errorf("--max-rate %v: must be 0 (no budget) or from 0.001 requests per second up", c.MaxRate)
	}
	if c.For < 0 {
		return c, nil, fmt.Errorf("--for %v: must not be negative", c.For)
	}
	if c.Frontier != nil {
		if c.Continuous {
			return c, nil, errors.New("--continuous with --frontier (Config.Frontier): a shared crawl does not revisit yet; run a continuous crawl on the embedded frontier")
		}
		if c.MaxPerAddr != 0 && c.MaxPerAddr != c.Frontier.maxPerAddr {
			return c, nil, fmt.Errorf("Config.MaxPerAddr %d with a shared frontier whose budget is %d: in a shared crawl the per-address budget is the whole crawl's, SharedFrontierOptions.MaxPerAddr", c.MaxPerAddr, c.Frontier.maxPerAddr)
		}
		c.MaxPerAddr = c.Frontier.maxPerAddr
	}
	if c.MetricsHosts < 0 || c.MetricsHosts > maxMetricsHosts {
		return c, nil, fmt.Errorf("--metrics-hosts %d: want 0 to %d (each host is a set of series)", c.MetricsHosts, maxMetricsHosts)
	}
	if c.RevisitMin == 0 {
		c.RevisitMin = time.Hour
	}
	if c.RevisitMax == 0 {
		c.RevisitMax = 30 * 24 * time.Hour
	}
	if c.RevisitMin < time.Second || c.RevisitMax < c.RevisitMin {
		return c, nil, fmt.Errorf("--revisit-min %v, --revisit-max %v: the minimum must be at least 1s and not above the maximum", c.RevisitMin, c.RevisitMax)
	}
	if c.RefreshShare == 0 {
		c.RefreshShare = 0.5
	}
	if !(c.RefreshShare > 0 && c.RefreshShare <= 1) {
		return c, nil, fmt.Errorf("--refresh-share %v: must be above 0 and at most 1", c.RefreshShare)
	}
	if c.RecheckEvery == 0 {
		c.RecheckEvery = 8
	}
	switch c.Scope {
	case "":
		c.Scope = ScopeHost
	case ScopeHost, ScopeDomain, ScopePrefix:
	default:
		return c, nil, fmt.Errorf("--scope %q: want host, domain or prefix", c.Scope)
	}
	switch c.CrawlDelay.Mode {
	case CrawlDelayHonor, CrawlDelayIgnore:
	case CrawlDelayCap:
		if c.CrawlDelay.Cap < 0 {
			return c, nil, fmt.Errorf("--crawl-delay cap=%v: the cap must not be negative", c.CrawlDelay.Cap)
		}
	default:
		return c, nil, fmt.Errorf("Config.CrawlDelay: unknown mode %d", c.CrawlDelay.Mode)
	}
	if c.Workers <= 0 {
		c.Workers = 32
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	if c.MaxBodySize <= 0 {
		c.MaxBodySize = 15 << 20
	}
	if c.RobotsTTL <= 0 {
		c.RobotsTTL = 24 * time.Hour
	}
	if c.RobotsRetry <= 0 {
		c.RobotsRetry = time.Minute
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 3
	}
	if c.WARCMaxSize <= 0 {
		c.WARCMaxSize = 1 << 30
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	for _, list := range []struct {
		field string
		res   []*regexp.Regexp
	}{{"Include", c.Include}, {"Exclude", c.Exclude}} {
		for i, re := range list.res {
			if re == nil {
				return c, nil, fmt.Errorf("Config.%s[%d] is nil", list.field, i)
			}
		}
	}
	if err := checkHostRules(c.HostRules); err != nil {
		return c, nil, err
	}
	for _, s := range c.Sitemaps {
		if _, err := urlnorm.Parse(s); err != nil {
			return c, nil, fmt.Errorf("--sitemap %q: %w", s, err)
		}
	}
	seeds := make([]*url.URL, 0, len(c.Seeds))
	for _, s := range c.Seeds {
		u, err := urlnorm.Parse(s)
		if err != nil {
			return c, nil, fmt.Errorf("seed %q: %w", s, err)
		}
		seeds = append(seeds, u)
	}
	fc, err := c.fetchConfig()
	if err != nil {
		return c, nil, err
	}
	if err := fc.CheckTargets(); err != nil {
		return c, nil, err
	}
	if err := fc.CheckSigning(); err != nil {
		return c, nil, err
	}
	if !c.AllowPrivateNetworks {
		for _, u := range seeds {
			if isPrivateName(u.Hostname()) {
				return c, nil, fmt.Errorf("seed %s is a loopback or private address; add --allow-private-networks to crawl it", u)
			}
		}
	}
	return c, seeds, nil
}

func (c Config) fetchConfig() (fetch.Config, error) {
	fc := fetch.Config{
		UserAgent:            c.UserAgent,
		From:                 c.From,
		SignKey:              c.SignKey,
		SignatureAgent:       c.SignatureAgent,
		MaxBodySize:          c.MaxBodySize,
		Timeout:              c.Timeout,
		AllowPrivateNetworks: c.AllowPrivateNetworks,
	}
	if !c.AllTypes {
		fc.Types = fetch.DefaultTypePolicy()
	}
	for _, r := range c.Resolve {
		rr, err := r.rule()
		if err != nil {
			return fc, err
		}
		fc.Resolve = append(fc.Resolve, rr)
	}
	for _, ct := range c.ConnectTo {
		cr, err := ct.rule()
		if err != nil {
			return fc, err
		}
		fc.ConnectTo = append(fc.ConnectTo, cr)
	}
	switch {
	case c.Proxy != nil:
		u, err := fetch.ParseProxyURL(c.Proxy.String())
		if err != nil {
			return fc, fmt.Errorf("Config.Proxy: %w", err)
		}
		fc.Proxy = &fetch.Proxy{HTTP: u, HTTPS: u, NoProxy: c.NoProxy, Loopback: true}
	case c.ProxyFromEnvironment:
		p, err := fetch.ProxyFromEnvironment()
		if err != nil {
			return fc, err
		}
		if p != nil && c.NoProxy != "" {
			p.NoProxy = c.NoProxy
		}
		fc.Proxy = p
	}
	return fc, nil
}
