package gentlecrawl

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
)

// Summary is what a crawl did, for the person who ran it and for the site
// owners whose servers it visited.
type Summary struct {
	Started  time.Time     `json:"started"`
	Finished time.Time     `json:"finished"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	// Stopped says why the crawl ended: "finished" (nothing left to do),
	// "max-pages" (Config.MaxPages), "time limit" (Config.For),
	// "interrupted" (its context was done), "deferred" (only hosts whose
	// robots.txt is unavailable are left; their URLs stay queued), or
	// "error: " and what went wrong.
	Stopped string `json:"stopped"`
	// Run numbers the runs of a job, from 1; its request log is
	// requests/NNNNNN.tsv in the job directory.
	Run int `json:"run"`

	Requests         int                         `json:"requests"`               // every HTTP request sent, robots.txt included
	Pages            int                         `json:"pages"`                  // URL fetches (robots.txt not counted)
	ByPurpose        map[string]int              `json:"by_purpose"`             // URL fetches by purpose: "discovery" (a URL never fetched before) or "refresh" (one with a history)
	ByStatus         map[int]int                 `json:"by_status"`              // responses by HTTP status, robots.txt excluded
	Errors           map[string]int              `json:"errors"`                 // fetches with no response, by kind
	Truncated        int                         `json:"truncated"`              // bodies cut by a limit or a broken connection
	Robots           map[string]int              `json:"robots"`                 // robots.txt outcomes, by kind, one per fetch
	Disallowed       int                         `json:"disallowed"`             // queued URLs not fetched because robots.txt disallows them
	NotModified      int                         `json:"not_modified"`           // 304 answers to conditional GETs
	SavedBytes       int64                       `json:"saved_bytes"`            // bytes the 304s spared the servers, against their last full answers
	WireBytes        int64                       `json:"wire_bytes"`             // response bytes received (headers and bodies as sent)
	BodyBytes        int64                       `json:"body_bytes"`             // bodies after decompression
	Discovered       int                         `json:"discovered"`             // new URLs admitted to the frontier
	OutOfScope       int                         `json:"out_of_scope"`           // links not followed: outside the scope
	TooDeep          int                         `json:"too_deep"`               // links not followed: past Config.MaxDepth
	SkippedExtension int                         `json:"skipped_extension"`      // links not followed: audio, video, executables, archives, disk images
	SkippedType      int                         `json:"skipped_type"`           // downloads ended after the headers: a Content-Type the crawl does not want
	BadRedirects     int                         `json:"bad_redirects"`          // redirects not followed: unusable Location, or more than 10 in a chain
	FetchLimits      map[string]int64            `json:"fetch_limits,omitempty"` // limits and safeguards of the fetcher that came into play, by name
	NoFollowPages    int                         `json:"nofollow_pages"`         // pages whose links were not followed: meta robots or X-Robots-Tag nofollow
	Sitemaps         int                         `json:"sitemaps"`               // sitemap files read
	SitemapURLs      int                         `json:"sitemap_urls"`           // page URLs they listed
	SitemapErrors    int                         `json:"sitemap_errors"`         // sitemap files that could not be read
	TrapsRefused     int                         `json:"traps_refused"`          // URLs not queued or not fetched: trap-shaped, or of a URL pattern whose budget is spent (see URLSpace)
	DuplicatePages   int                         `json:"duplicate_pages"`        // pages fetched that repeat one fetched before: their links were not followed (a view's were: those new to the crawl are still queued)
	URLSpace         map[string]*HostURLSpace    `json:"url_space,omitempty"`    // per host: traps refused, parameters found irrelevant, explosions
	Retries          int                         `json:"retries"`                // fetches kept for another try: the server was overloaded or the network failed
	Slowed           map[string]HostLoad         `json:"slowed,omitempty"`       // per host that pushed back (refusals, slow answers): where its rate settled, and why; the first 1,000 such hosts
	SlowedMore       bool                        `json:"slowed_more,omitempty"`  // more hosts pushed back than Slowed lists
	Validators       map[string]OriginValidators `json:"validators,omitempty"`   // per origin ("https://example.org") that ignored the validators as they were sent: what was found, what is sent instead
	Demand           map[string]HostDemand       `json:"demand,omitempty"`       // per host, in a continuous crawl: how often its pages change, its refresh budget and what is worth spending
	Queued           int                         `json:"queued"`                 // URLs still waiting when the crawl ended
	Deferred         []string                    `json:"deferred,omitempty"`     // hosts whose robots.txt stayed unavailable: their URLs are kept for a later run
	WARCFiles        []string                    `json:"warc_files,omitempty"`   // the WARC files this run wrote to
}

// HostLoad is where the rate of a host that pushed back settled, and why
// (Summary.Slowed). Each congestion event — a run of refusals, or of
// answers slower than the host's usual — cut the rate the host was sent
// requests at, which then grew again while it answered well.
type HostLoad struct {
	// Cause is what the host did at its last congestion event.
	Cause LoadCause `json:"cause"`
	// Status is the HTTP status of a refusal (429, 503, …).
	Status int `json:"status,omitempty"`
	// RetryAfter is the pause a refusal asked for (Retry-After), when
	// HasRetryAfter.
	RetryAfter    time.Duration `json:"retry_after_ns,omitempty"`
	HasRetryAfter bool          `json:"has_retry_after,omitempty"`
	// Slow, for slow answers, is their response time as a multiple of
	// Baseline, the host's usual response time.
	Slow     float64       `json:"slow,omitempty"`
	Baseline time.Duration `json:"baseline_ns,omitempty"`
	// EventRate is the rate the host was sent at when the last event
	// came, and Settled the rate it was sent at over the last half minute
	// or so, in requests per second.
	EventRate float64 `json:"event_rate"`
	Settled   float64 `json:"settled_rate"`
	// Events counts the host's congestion events.
	Events int `json:"events"`
}

// LoadCause is what a host did at a congestion event (HostLoad.Cause).
type LoadCause string

// Causes of congestion events.
const (
	LoadRefused    LoadCause = "refused"     // an HTTP status that asks for less: 429, 503, other 5xx
	LoadNoResponse LoadCause = "no-response" // no answer: the connection failed or timed out
	LoadSlow       LoadCause = "slow"        // answers slower than the host's usual
)

// OriginValidators is what the crawl found of an origin that did not honour
// the validators (If-None-Match, If-Modified-Since) as the server gave them,
// and how it sends them now (Summary.Validators). The evidence of a
// validator ignored is a full answer whose body is the one kept from the
// last visit: the server could have answered 304.
type OriginValidators struct {
	// Sent is how validators are sent to the origin now.
	Sent ValidatorsSent `json:"sent"`
	// Ignored counts the full answers with an unchanged body to the
	// validators as the server gave them, and to any other way tried
	// before Sent; ETag is one of the ETags so ignored.
	Ignored int    `json:"ignored"`
	ETag    string `json:"etag,omitempty"`
	// Honoured and Full count the answers to the validators sent as Sent
	// says, for ValidatorsStripped and ValidatorsDateOnly: 304s, and full
	// answers with an unchanged body.
	Honoured int `json:"honoured,omitempty"`
	Full     int `json:"full,omitempty"`
	// Lies, for ValidatorsNone, counts the pages found changed while the
	// server answered 304 to their validators; LiedURL is one of them.
	Lies    int    `json:"lies,omitempty"`
	LiedURL string `json:"lied_url,omitempty"`
}

// ValidatorsSent is how validators are sent to an origin
// (OriginValidators.Sent).
type ValidatorsSent string

// Ways of sending validators, tried in this order when a server ignores
// them.
const (
	// ValidatorsStripped: the ETag without the content-coding suffix a
	// compressing module added to it ("abc-gzip" → "abc"; Apache's
	// mod_deflate does, and then does not recognise it), with
	// If-Modified-Since.
	ValidatorsStripped ValidatorsSent = "etag-without-suffix"
	// ValidatorsDateOnly: If-Modified-Since alone.
	ValidatorsDateOnly ValidatorsSent = "if-modified-since"
	// ValidatorsAsGiven: both as the server gave them, since no way of
	// sending them was honoured (they cost nothing).
	ValidatorsAsGiven ValidatorsSent = "as-given"
	// ValidatorsNone: none, the validators lie (the server answered 304
	// to pages that had changed): pages are refreshed without them.
	ValidatorsNone ValidatorsSent = "none"
)

// HostDemand is how often a host's pages change and what refreshing them is
// worth, in a continuous crawl (Summary.Demand).
type HostDemand struct {
	// Pages counts the pages whose rate of change is estimated.
	Pages int `json:"pages"`
	// ChangeP10, ChangeP50 and ChangeP90 are the estimated time between
	// two changes of a page at the 10th, 50th and 90th percentile over the
	// host's pages (the pages that change most often first); 0: no
	// change expected.
	ChangeP10 time.Duration `json:"change_p10_ns"`
	ChangeP50 time.Duration `json:"change_p50_ns"`
	ChangeP90 time.Duration `json:"change_p90_ns"`
	// Budget is the host's refresh budget and Worth how much of it its
	// pages are worth spending, in requests per second: past Worth more
	// revisits buy little freshness (Config.RevisitMin and RevisitMax
	// bound the intervals).
	Budget float64 `json:"budget"`
	Worth  float64 `json:"worth"`
}

// Progress is a live view of a running crawl.
type Progress struct {
	Elapsed     time.Duration
	Requests    int
	Pages       int
	Errors      int
	NotModified int
	WireBytes   int64
	Queued      int                // URLs waiting
	Active      int                // hosts being fetched now
	Waiting     map[WaitReason]int // hosts waiting, by reason
}

// WaitReason says why a host is waiting (Progress.Waiting).
type WaitReason string

// Reasons a host waits.
const (
	WaitDelay   WaitReason = "delay"   // the gap after its last request (Delay, Crawl-delay)
	WaitRate    WaitReason = "rate"    // the rate learned from how the host answers
	WaitBackoff WaitReason = "backoff" // the host pushed back: refusals, errors, Retry-After
	WaitRobots  WaitReason = "robots"  // its robots.txt is unavailable; asked again later
	WaitAddress WaitReason = "address" // other hosts at the same IP address are being fetched
)

// stats collects counters from the workers. Safe for concurrent use.
type stats struct {
	mu sync.Mutex
	s  Summary
}

func newStats() *stats {
	return &stats{s: Summary{
		Started:   time.Now(),
		ByStatus:  make(map[int]int),
		ByPurpose: make(map[string]int),
		Errors:    make(map[string]int),
		Robots:    make(map[string]int),
	}}
}

func (st *stats) update(f func(s *Summary)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	f(&st.s)
}

func (st *stats) snapshot() Summary {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.s
	s.ByStatus = cloneMap(s.ByStatus)
	s.Errors = cloneMap(s.Errors)
	s.Robots = cloneMap(s.Robots)
	if s.Slowed != nil {
		s.Slowed = cloneMap(s.Slowed)
	}
	return s
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// errorKind names the cause of a failed fetch for the summary.
func errorKind(err error) string {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	switch {
	case errors.Is(err, fetch.ErrPrivateNetwork):
		return "private-network"
	case errors.As(err, &dnsErr):
		return "dns"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "reset"
	case errors.Is(err, os.ErrDeadlineExceeded), isTimeout(err):
		return "timeout"
	case errors.As(err, &opErr):
		return "network"
	case strings.Contains(err.Error(), "EOF"):
		return "reset"
	}
	return "other"
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// isPrivateName reports whether a URL host names a loopback or private
// address by itself (a literal address or "localhost").
func isPrivateName(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(strings.Trim(h, "[]"))
	return err == nil && !fetch.IsPublic(a)
}
