package check

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
	"github.com/gentlecrawl/gentlecrawl/internal/hostload"
	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

// Severity says how much a finding matters.
type Severity string

const (
	// Fail: crawlers stop crawling the site, or cannot start.
	Fail Severity = "fail"
	// Warn: crawlers waste the site's resources or their own, or miss pages.
	Warn Severity = "warn"
	// Info: what went well, what was sampled, and what could not be judged.
	Info Severity = "info"
)

// The ids of the findings that are problems (fail or warn). They are part
// of the command's contract: scripts match them.
const (
	IDRobotsUnavailable  = "robots-unavailable"  // fail: robots.txt answers 5xx or 429, or no answer
	IDRobotsRedirects    = "robots-redirects"    // fail: more than five redirects, a loop, or no usable Location
	IDRobotsHTML         = "robots-html"         // warn: robots.txt answers 200 with an HTML page
	IDRobotsTooLarge     = "robots-too-large"    // warn: over 500 KiB, the rest is ignored
	IDRobotsDisallowAll  = "robots-disallow-all" // warn: the agent may fetch nothing
	IDCrawlDelay         = "crawl-delay"         // warn: one pass over the known URLs takes more than a day
	IDNoValidators       = "no-validators"       // warn: HTML pages without ETag and Last-Modified
	IDConditionalIgnored = "conditional-ignored" // warn: a conditional request for an unchanged page gets a full 200
	IDNoCompression      = "no-compression"      // warn: text pages sent uncompressed although gzip is offered
	IDVaryMissing        = "vary-missing"        // info: compressed answers without Vary: Accept-Encoding
	IDSessionIDs         = "session-ids"         // warn: links carry session ids
	IDSoft404            = "soft-404"            // warn: a URL that cannot exist answers 200
	IDSlowResponse       = "slow-response"       // warn: median time to first byte over the threshold
	IDRetryAfterMissing  = "retry-after-missing" // warn: a 503 or 429 without Retry-After
	IDSitemapErrors      = "sitemap-errors"      // warn: a listed sitemap cannot be read
)

// The ids of info findings.
const (
	// IDETagGzipSuffix: the server does not recognise the ETag it sent
	// with a compressed answer ("…-gzip", Apache's mod_deflate), but it
	// answers 304 to the ETag without the suffix or to the date alone.
	// It is info, not warn: a crawler that learns this (gentlecrawl does)
	// gets its 304s, and Debian's Apache does it out of the box; the
	// message says who pays and how to fix it.
	IDETagGzipSuffix = "etag-gzip-suffix"
	// IDETagIgnored: the ETag as sent is not recognised but
	// If-Modified-Since alone gets 304 (ETags that differ between the
	// servers of a cluster, for instance). Info for the same reason.
	IDETagIgnored = "etag-ignored"

	IDRobots       = "robots"        // what robots.txt says for the agent
	IDCrawlRate    = "crawl-rate"    // a Crawl-delay whose pass over the known URLs fits in a day
	IDSitemaps     = "sitemaps"      // the sitemaps read
	IDValidators   = "validators"    // conditional requests answered 304
	IDCompression  = "compression"   // text pages compressed
	IDNotFound     = "not-found"     // the probe for a URL that cannot exist
	IDResponseTime = "response-time" // time to first byte
	IDRetryAfter   = "retry-after"   // 503 or 429 with Retry-After
	IDSample       = "sample"        // what was fetched, and why the sample stopped
	IDNotJudged    = "not-judged"    // checks without enough sample to conclude
)

// Finding is one result of the check.
type Finding struct {
	ID       string   `json:"id"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	// Evidence is what the finding rests on, one fact a line: requests
	// and their answers, headers, numbers.
	Evidence []string `json:"evidence"`
}

// Report is the result of Run; its JSON form is `gentlecrawl check --json`.
type Report struct {
	URL       string    `json:"url"`
	Agent     string    `json:"agent"`
	UserAgent string    `json:"user_agent"`
	Findings  []Finding `json:"findings"` // fail first, then warn, then info
	Requests  int       `json:"requests"` // every request sent, robots.txt included
	Pages     int       `json:"pages"`    // HTML pages that answered 200
	Seconds   float64   `json:"seconds"`  // from the first request to the end
	// Gap is the least time kept between the end of a request and the
	// start of the next: the delay, or a longer Crawl-delay.
	Gap float64 `json:"gap_seconds"`
	// Cut says why the sample stopped before its planned size: the time
	// budget, the request budget, the site refusing. "" when it did not.
	Cut string     `json:"cut,omitempty"`
	Log []Exchange `json:"log"` // every request, in order
}

// Exchange is one request of the check, as the site's access log will
// show it.
type Exchange struct {
	Purpose  string    `json:"purpose"` // robots, sitemap, page, conditional, probe
	URL      string    `json:"url"`
	Start    time.Time `json:"start"`
	Status   int       `json:"status,omitempty"` // 0 when there was no answer
	Error    string    `json:"error,omitempty"`
	TTFB     float64   `json:"ttfb_ms"`
	Duration float64   `json:"ms"`
	Bytes    int       `json:"bytes"` // body bytes as received
	Encoding string    `json:"content_encoding,omitempty"`
}

// Problems returns how many findings are fail or warn.
func (r *Report) Problems() int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity != Info {
			n++
		}
	}
	return n
}

// Has reports whether the report has a finding with the id.
func (r *Report) Has(id string) bool {
	for _, f := range r.Findings {
		if f.ID == id {
			return true
		}
	}
	return false
}

// MaxRequests is the most requests one check sends to a site, whatever
// Config.MaxRequests says: robots.txt, its redirects, sitemaps, pages,
// the soft-404 probe and the conditional re-requests together.
const MaxRequests = 60

// Defaults of Config.
const (
	DefaultAgent       = "gentlecrawl"
	DefaultDelay       = time.Second
	DefaultTime        = time.Minute
	DefaultRequests    = 50
	DefaultSlowTTFB    = 2 * time.Second
	DefaultMinCompress = 1024
)

// Config configures Run. Apart from UserAgent, the zero value of each
// field selects its documented default.
type Config struct {
	// UserAgent is the User-Agent header of every request. The CLI sends
	// the crawler's with "check" added. Default "gentlecrawl (check)".
	UserAgent string
	// Agent is the product token whose robots.txt group applies.
	// Default "gentlecrawl".
	Agent string
	// Delay is the least time between the end of one request and the
	// start of the next; a longer Crawl-delay wins. Default 1s.
	Delay time.Duration
	// Time bounds the whole check: no request starts after it, and one in
	// flight then gets a sixth of it more to finish. Default 1m.
	Time time.Duration
	// MaxRequests is the number of requests the check plans to send, at
	// most MaxRequests (60). Default 50.
	MaxRequests int
	// SlowTTFB is the median time to first byte above which the site is
	// reported slow (slow-response). Default 2s.
	SlowTTFB time.Duration
	// MinCompressible is the size of a text page below which an
	// uncompressed answer is not held against the site. Default 1024.
	MinCompressible int
	// Timeout bounds one request (and its wait for the first byte).
	// Default: the crawler's (internal/fetch: 30s, 20s to the first byte).
	Timeout time.Duration

	// AllowPrivateNetworks, Resolve and ConnectTo are the fetch.Config
	// fields of the same names (--allow-private-networks, --resolve,
	// --connect-to).
	AllowPrivateNetworks bool
	Resolve              []fetch.Resolve
	ConnectTo            []fetch.ConnectTo
	// Proxy, when set, carries the check's requests (fetch.Config.Proxy).
	Proxy *fetch.Proxy

	// Logger receives a debug record per request. Nil means silent.
	Logger *slog.Logger
}

func (cfg Config) withDefaults() Config {
	if cfg.UserAgent == "" {
		cfg.UserAgent = "gentlecrawl (check)"
	}
	if cfg.Agent == "" {
		cfg.Agent = DefaultAgent
	}
	if cfg.Delay <= 0 {
		cfg.Delay = DefaultDelay
	}
	if cfg.Time <= 0 {
		cfg.Time = DefaultTime
	}
	if cfg.MaxRequests <= 0 {
		cfg.MaxRequests = DefaultRequests
	}
	cfg.MaxRequests = min(cfg.MaxRequests, MaxRequests)
	if cfg.SlowTTFB <= 0 {
		cfg.SlowTTFB = DefaultSlowTTFB
	}
	if cfg.MinCompressible <= 0 {
		cfg.MinCompressible = DefaultMinCompress
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// ErrBadURL is returned, wrapped, by Run for a URL it cannot check.
var ErrBadURL = errors.New("check: not an absolute http(s) URL")

// UnreachableError is returned by Run when the site's first request got
// no connection: the name does not resolve, the connection is refused,
// the address is private (without AllowPrivateNetworks). A robots.txt
// that answers 5xx or times out is not an error but a finding.
type UnreachableError struct {
	URL string
	Err error
}

func (e *UnreachableError) Error() string {
	return "check: cannot reach " + e.URL + ": " + e.Err.Error()
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Run checks the site of rawURL, starting the sample at that page, and
// returns the report. It returns an error, and no report, only when the
// check could not run: a URL it cannot check (ErrBadURL), a site it
// cannot reach (*UnreachableError), an invalid Config, or ctx ending.
func Run(ctx context.Context, cfg Config, rawURL string) (*Report, error) {
	cfg = cfg.withDefaults()
	start, err := urlnorm.Parse(rawURL)
	if err != nil || start.Host == "" {
		return nil, fmt.Errorf("%w: %q", ErrBadURL, rawURL)
	}
	if start.Path == "" {
		start.Path = "/"
	}
	start.Fragment, start.RawFragment = "", ""
	fcfg := fetch.Config{
		UserAgent:            cfg.UserAgent,
		AllowPrivateNetworks: cfg.AllowPrivateNetworks,
		Resolve:              cfg.Resolve,
		ConnectTo:            cfg.ConnectTo,
		Proxy:                cfg.Proxy,
		Types:                fetch.DefaultTypePolicy(),
		// robots.txt is read to four times the size a crawler parses, to
		// tell how much of a file that is too large is lost; a sitemap
		// may be larger still, and is then counted in part.
		MaxBodySize: 16 << 20,
		Timeout:     cfg.Timeout,
		Logger:      cfg.Logger,
	}
	if cfg.Timeout > 0 {
		fcfg.FirstByteTimeout = cfg.Timeout
	}
	if err := fcfg.CheckTargets(); err != nil {
		return nil, &UnreachableError{URL: start.String(), Err: err}
	}
	client, err := fetch.New(fcfg)
	if err != nil {
		return nil, err
	}
	defer client.Close()
	c := newChecker(cfg, client, start)
	if err := c.run(ctx); err != nil {
		return nil, err
	}
	return c.report(), nil
}

// The purposes of requests, as Exchange.Purpose names them.
const (
	purposeRobots      = "robots"
	purposeSitemap     = "sitemap"
	purposePage        = "page"
	purposeConditional = "conditional"
	purposeProbe       = "probe"
)

// errStop says the check may send no more requests: its time or its
// request budget is spent, or the site asked it to stop.
var errStop = errors.New("check: no more requests")

// checker is one run of the check. It is not safe for concurrent use: the
// check sends one request at a time.
type checker struct {
	cfg    Config
	client *fetch.Client
	start  *url.URL

	began, deadline time.Time
	next            time.Time     // the earliest start of the next request
	nextWhy         string        // why next is later than the gap asks, "" when it is not
	gap             time.Duration // Delay, or a longer Crawl-delay read
	gapWhy          string
	exchanges       []Exchange
	cut             string // why no more requests may be sent
	refusals        int    // 429 and 503 answers

	origins map[string]*originRobots // by origin, "scheme://host[:port]"
	site    string                   // the origin sampled
	sample  sample
	maps    sitemapSummary

	findings []Finding
}

func newChecker(cfg Config, client *fetch.Client, start *url.URL) *checker {
	return &checker{
		cfg: cfg, client: client, start: start,
		gap: cfg.Delay, gapWhy: "the delay",
		origins: map[string]*originRobots{},
		site:    urlnorm.HostKey(start),
	}
}

// run performs the check, in the order that makes the most of a small
// budget: robots.txt first (nothing else may be fetched before it), the
// sitemaps (what a Crawl-delay means depends on how many URLs they list),
// the start page, a conditional re-request of it, the soft-404 probe, then
// more pages and more conditional re-requests.
func (c *checker) run(ctx context.Context) error {
	c.began = time.Now()
	c.deadline = c.began.Add(c.cfg.Time)
	r, err := c.robotsFor(ctx, c.site, true)
	if err != nil {
		return err
	}
	if r.usable() {
		c.readSitemaps(ctx, r)
		if err := c.sampleSite(ctx); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// do sends one request, keeping the check's politeness: it waits until
// the gap since the last request has passed, and refuses (errStop) when
// the request budget or the time is spent. It records the exchange.
func (c *checker) do(ctx context.Context, purpose string, req fetch.Request) (*fetch.Result, error) {
	if c.cut != "" {
		return nil, errStop
	}
	if len(c.exchanges) >= c.cfg.MaxRequests {
		c.cut = fmt.Sprintf("the request budget (%d) is spent", c.cfg.MaxRequests)
		return nil, errStop
	}
	at := time.Now()
	if c.next.After(at) {
		at = c.next
	}
	if at.After(c.deadline) {
		c.cut = fmt.Sprintf("the time budget (%v) ran out, with %v between requests (%s) and answers taking %s (median)", c.cfg.Time, c.gap, c.gapWhy, ms(c.medianDuration()))
		if c.nextWhy != "" {
			c.cut = fmt.Sprintf("the time budget (%v) ran out: %s", c.cfg.Time, c.nextWhy)
		}
		return nil, errStop
	}
	if d := time.Until(at); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	rctx, cancel := context.WithDeadline(ctx, c.deadline.Add(c.cfg.Time/6))
	defer cancel()
	began := time.Now()
	res, err := c.client.Do(rctx, req)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	end := time.Now()
	x := Exchange{Purpose: purpose, URL: req.URL.String(), Start: began}
	if res != nil {
		end = res.End
		x.Status, x.Bytes, x.Encoding = res.Status, len(res.RawBody), res.Header.Get("Content-Encoding")
		x.TTFB, x.Duration = millis(res.TTFB), millis(res.Duration)
	} else {
		x.Error = oneLine(err)
		x.Duration = millis(end.Sub(began))
	}
	c.exchanges = append(c.exchanges, x)
	c.next, c.nextWhy = hostload.After(end, c.gap), ""
	if res != nil && (res.Status == http.StatusTooManyRequests || res.Status == http.StatusServiceUnavailable) {
		// The site says it is overloaded: wait as long as it asks (or
		// twice the gap), and stop after the third such answer.
		c.refusals++
		wait := 2 * c.gap
		c.nextWhy = fmt.Sprintf("the site answered %d, and the check waits twice the gap after that", res.Status)
		if ra, ok := retryAfter(res.Header.Get("Retry-After"), end); ok && ra > wait {
			wait = ra
			c.nextWhy = fmt.Sprintf("the site answered %d with Retry-After: %s", res.Status, res.Header.Get("Retry-After"))
		}
		c.next = hostload.After(end, wait)
		if c.refusals >= 3 {
			c.cut = fmt.Sprintf("the site answered %d requests with 429 or 503", c.refusals)
		}
	}
	return res, err
}

// medianDuration is the median time of the exchanges so far, in
// milliseconds.
func (c *checker) medianDuration() float64 {
	if len(c.exchanges) == 0 {
		return 0
	}
	ds := make([]float64, len(c.exchanges))
	for i, x := range c.exchanges {
		ds[i] = x.Duration
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// setGap raises the gap between requests to a Crawl-delay.
func (c *checker) setGap(d time.Duration, why string) {
	if d > c.gap {
		c.gap, c.gapWhy = d, why
		if len(c.exchanges) > 0 {
			last := c.exchanges[len(c.exchanges)-1]
			end := last.Start.Add(time.Duration(last.Duration * float64(time.Millisecond)))
			if t := hostload.After(end, c.gap); t.After(c.next) {
				c.next = t
			}
		}
	}
}

// left is the number of requests the budget still allows.
func (c *checker) left() int {
	if c.cut != "" {
		return 0
	}
	return c.cfg.MaxRequests - len(c.exchanges)
}

// retryAfter reads a Retry-After value, seconds or an HTTP-date (RFC 9110
// §10.2.3), as a wait from now.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n < 0 {
			return 0, false
		}
		return time.Duration(min(n, 86400)) * time.Second, true
	}
	if t, ok := fetch.ParseHTTPDate(v); ok {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

func millis(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

func oneLine(err error) string {
	if err == nil {
		return ""
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

func (c *checker) add(id string, sev Severity, msg string, evidence ...string) {
	if evidence == nil {
		evidence = []string{}
	}
	c.findings = append(c.findings, Finding{ID: id, Severity: sev, Message: msg, Evidence: evidence})
}
