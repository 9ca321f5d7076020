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
	// "max-pages", "time limit" (Config.For), "interrupted", or "deferred"
	// (only hosts whose robots.txt is unavailable are left; their URLs
	// stay queued).
	Stopped string `json:"stopped"`
	// Run numbers the runs of a job, from 1; its request log is
	// requests/NNNNNN.tsv in the job directory.
	Run int `json:"run"`

	Requests         int                      `json:"requests"`               // every HTTP request sent, robots.txt included
	Pages            int                      `json:"pages"`                  // URL fetches (robots.txt not counted)
	ByPurpose        map[string]int           `json:"by_purpose"`             // URL fetches by purpose: "discovery" (a URL never fetched before) or "refresh" (one with a history)
	ByStatus         map[int]int              `json:"by_status"`              // responses by HTTP status, robots.txt excluded
	Errors           map[string]int           `json:"errors"`                 // fetches with no response, by kind
	Truncated        int                      `json:"truncated"`              // bodies cut by a limit or a broken connection
	Robots           map[string]int           `json:"robots"`                 // robots.txt outcomes, by kind, one per fetch
	Disallowed       int                      `json:"disallowed"`             // queued URLs not fetched because robots.txt disallows them
	NotModified      int                      `json:"not_modified"`           // 304 answers to conditional GETs
	SavedBytes       int64                    `json:"saved_bytes"`            // bytes the 304s spared the servers, against their last full answers
	WireBytes        int64                    `json:"wire_bytes"`             // response bytes received (headers and bodies as sent)
	BodyBytes        int64                    `json:"body_bytes"`             // bodies after decompression
	Discovered       int                      `json:"discovered"`             // new URLs admitted to the frontier
	OutOfScope       int                      `json:"out_of_scope"`           // links not followed: outside the scope
	TooDeep          int                      `json:"too_deep"`               // links not followed: past --max-depth
	SkippedExtension int                      `json:"skipped_extension"`      // links not followed: audio, video, executables, archives, disk images
	SkippedType      int                      `json:"skipped_type"`           // downloads ended after the headers: a Content-Type the crawl does not want
	BadRedirects     int                      `json:"bad_redirects"`          // redirects not followed: unusable Location, or more than 10 in a chain
	FetchLimits      map[string]int64         `json:"fetch_limits,omitempty"` // limits and safeguards of the fetcher that came into play, by name
	NoFollowPages    int                      `json:"nofollow_pages"`         // pages whose links were not followed: meta robots or X-Robots-Tag nofollow
	Sitemaps         int                      `json:"sitemaps"`               // sitemap files read
	SitemapURLs      int                      `json:"sitemap_urls"`           // page URLs they listed
	SitemapErrors    int                      `json:"sitemap_errors"`         // sitemap files that could not be read
	TrapsRefused     int                      `json:"traps_refused"`          // URLs not queued or not fetched: trap-shaped, or of a URL pattern whose budget is spent (see URLSpace)
	DuplicatePages   int                      `json:"duplicate_pages"`        // pages fetched that repeat one fetched before: their links were not followed (a view's were: those new to the crawl are still queued)
	URLSpace         map[string]*HostURLSpace `json:"url_space,omitempty"`    // per host: traps refused, parameters found irrelevant, explosions
	Retries          int                      `json:"retries"`                // fetches kept for another try: the server was overloaded or the network failed
	Slowed           map[string]string        `json:"slowed,omitempty"`       // hosts that pushed back (refusals, slow answers): where their rate settled, and why
	Validators       map[string]string        `json:"validators,omitempty"`   // origins that ignored the validators as they sent them: what was found, what is sent instead
	Demand           map[string]string        `json:"demand,omitempty"`       // per host, in a continuous crawl: how often its pages change, the refresh budget and what is worth spending
	Queued           int                      `json:"queued"`                 // URLs still waiting when the crawl ended
	Deferred         []string                 `json:"deferred,omitempty"`
	WARCFiles        []string                 `json:"warc_files,omitempty"`
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
