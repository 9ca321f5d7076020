package urlspace

import (
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

// Reasons a Checker gives for refusing a URL, the keys of Counts.
const (
	ReasonURLLength       = "url-length"
	ReasonPathDepth       = "path-depth"
	ReasonQueryParams     = "query-params"
	ReasonRepeatedSegment = "repeated-segment"
	ReasonCalendar        = "calendar"
	ReasonHostBudget      = "host-budget"
)

// Limits configures a Checker. Its zero value gives the defaults; a
// negative value turns a check off.
type Limits struct {
	// MaxURLLength is the longest URL accepted, in bytes of its escaped
	// form. The default is 2,000 (what sitemaps and old browsers allow).
	MaxURLLength int
	// MaxPathSegments is the deepest path accepted. The default is 16.
	MaxPathSegments int
	// MaxQueryParams is the most query parameters accepted. The default
	// is 10.
	MaxQueryParams int
	// MaxSegmentRepeats is how many times one path segment may occur in
	// a path: "/a/b/a/b/a/b" and "/x/y/x/z/x" repeat a segment three
	// times, the mark of relative links resolved against themselves. The
	// default is 2.
	MaxSegmentRepeats int
	// CalendarMonths is how far, in months, a date in a calendar-like URL
	// may be from the first date seen in URLs of the same shape on the
	// host. A calendar-like URL ends with a date (".../2024/05",
	// ".../2024-05-17") or has date parameters (year=, month=, date=, or
	// a value like 2024-05). A date followed by more path, as in
	// "/2015/03/14/post-title", is a post, not a calendar: it is not
	// checked. The default is 12.
	//
	// When Today is set, the distance is taken from today instead, and
	// only forward: a calendar page more than CalendarMonths months after
	// today, or more than a century before it, is suspect; archives of
	// the past are not (the crawler finds an empty calendar's pages from
	// their content).
	CalendarMonths int
	// Today is the date the calendar check measures from; the zero value
	// measures from the first date seen instead.
	Today time.Time
	// HostBudget is how many URLs a host may have accepted in total.
	// The default is 100,000.
	HostBudget int
	// MaxHosts is how many hosts' budgets and counts are kept; the least
	// recently checked is forgotten first. The default is 100,000.
	MaxHosts int
}

func (l Limits) withDefaults() Limits {
	l.MaxURLLength = orDefault(l.MaxURLLength, 2000)
	l.MaxPathSegments = orDefault(l.MaxPathSegments, 16)
	l.MaxQueryParams = orDefault(l.MaxQueryParams, 10)
	l.MaxSegmentRepeats = orDefault(l.MaxSegmentRepeats, 2)
	l.CalendarMonths = orDefault(l.CalendarMonths, 12)
	l.HostBudget = orDefault(l.HostBudget, 100_000)
	l.MaxHosts = max(orDefault(l.MaxHosts, 100_000), 1)
	return l
}

// maxCalendars bounds the calendar shapes remembered per host.
const maxCalendars = 64

// Checker refuses trap-like URLs and enforces a per-host URL budget,
// counting every refusal by reason per host. Check a URL once, when it is
// first found (after the seen-set): every accepted URL is charged to its
// host's budget.
//
// A Checker is created with NewChecker and is safe for concurrent use.
type Checker struct {
	lim Limits
	mu  struct {
		sync.Mutex
		hosts *lru[checkHost]
	}
}

type checkHost struct {
	accepted  int
	rejected  map[string]int
	calendars map[uint64]int // shape → first month seen (year*12 + month-1)
}

// NewChecker returns a Checker with the given limits.
func NewChecker(lim Limits) *Checker {
	c := &Checker{lim: lim.withDefaults()}
	c.mu.hosts = newLRU[checkHost](c.lim.MaxHosts)
	return c
}

// Check reports whether u may be added to the frontier, and when not, the
// reason (one of the Reason constants). Pass the URL as found, or its
// key parsed; the checks look at its escaped form.
func (c *Checker) Check(u *url.URL) (ok bool, reason string) {
	reason = c.trap(u)
	host := urlnorm.HostKey(u)
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.mu.hosts.get(host)
	if reason == "" {
		if shape, month, ok := calendar(u); ok && !c.lim.Today.IsZero() {
			today := c.lim.Today.Year()*12 + int(c.lim.Today.Month()) - 1
			if c.lim.CalendarMonths >= 0 && (month-today > c.lim.CalendarMonths || today-month > 1200) {
				reason = ReasonCalendar
			}
		} else if ok {
			if h.calendars == nil {
				h.calendars = make(map[uint64]int)
			}
			first, seen := h.calendars[shape]
			switch {
			case !seen && len(h.calendars) < maxCalendars:
				h.calendars[shape] = month
			case seen && c.lim.CalendarMonths >= 0 && abs(month-first) > c.lim.CalendarMonths:
				reason = ReasonCalendar
			}
		}
	}
	if reason == "" && c.lim.HostBudget >= 0 && h.accepted >= c.lim.HostBudget {
		reason = ReasonHostBudget
	}
	if reason != "" {
		if h.rejected == nil {
			h.rejected = make(map[string]int)
		}
		h.rejected[reason]++
		return false, reason
	}
	h.accepted++
	return true, ""
}

// trap runs the checks that need no state.
func (c *Checker) trap(u *url.URL) string {
	lim := &c.lim
	path := u.EscapedPath()
	if lim.MaxURLLength >= 0 {
		n := len(u.Scheme) + 3 + len(u.Host) + len(path)
		if u.RawQuery != "" {
			n += 1 + len(u.RawQuery)
		}
		if n > lim.MaxURLLength {
			return ReasonURLLength
		}
	}
	if lim.MaxQueryParams >= 0 && u.RawQuery != "" {
		n := 0
		for p := range strings.SplitSeq(u.RawQuery, "&") {
			if p != "" {
				n++
			}
		}
		if n > lim.MaxQueryParams {
			return ReasonQueryParams
		}
	}
	depth := strings.Count(path, "/")
	if strings.HasSuffix(path, "/") {
		depth-- // "/a/b/" is as deep as "/a/b"
	}
	if lim.MaxPathSegments >= 0 && depth > lim.MaxPathSegments {
		return ReasonPathDepth
	}
	if lim.MaxSegmentRepeats >= 0 && depth > lim.MaxSegmentRepeats && repeated(path, lim.MaxSegmentRepeats) {
		return ReasonRepeatedSegment
	}
	return ""
}

// repeated reports whether a non-empty segment of path occurs more than
// max times. It is quadratic in the number of segments, which MaxPathSegments
// bounds; without that bound, long paths are checked with a map.
func repeated(path string, max int) bool {
	var stack [32]string
	segs := stack[:0]
	for s := range strings.SplitSeq(path, "/") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	if len(segs) > 64 {
		counts := make(map[string]int, len(segs))
		for _, s := range segs {
			if counts[s]++; counts[s] > max {
				return true
			}
		}
		return false
	}
	for i, s := range segs {
		n := 1
		for _, t := range segs[i+1:] {
			if t == s {
				if n++; n > max {
					return true
				}
			}
		}
	}
	return false
}

// Counts returns the refusals on host (a urlnorm.HostKey) by reason.
func (c *Checker) Counts(host string) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.mu.hosts.peek(host)
	if h == nil {
		return map[string]int{}
	}
	return maps.Clone(h.rejected)
}

// Accepted returns how many URLs of host the Checker has accepted: the
// part of its budget used.
func (c *Checker) Accepted(host string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h := c.mu.hosts.peek(host); h != nil {
		return h.accepted
	}
	return 0
}

// Hosts returns the hosts with at least one refusal, sorted.
func (c *Checker) Hosts() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	c.mu.hosts.each(func(host string, h *checkHost) {
		if len(h.rejected) > 0 {
			out = append(out, host)
		}
	})
	slices.Sort(out)
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
