package robots

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Outcome classifies the result of fetching a robots.txt file.
type Outcome int

const (
	// OutcomeParsed: a 2xx response; its body was parsed (the first
	// MaxSize bytes).
	OutcomeParsed Outcome = iota + 1
	// OutcomeUnrestricted: a 4xx response other than 429, such as 404 or
	// 410: the crawler may access any resource (RFC 9309 §2.3.1.3).
	OutcomeUnrestricted
	// OutcomeUnavailable: 429, 5xx, a network error, a timeout, too many
	// redirects or a truncated body: the crawler must assume complete
	// disallow (RFC 9309 §2.3.1.4) and fetch robots.txt again later.
	OutcomeUnavailable
)

func (o Outcome) String() string {
	switch o {
	case OutcomeParsed:
		return "parsed"
	case OutcomeUnrestricted:
		return "unrestricted"
	case OutcomeUnavailable:
		return "unavailable"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// FromResponse returns the rules that follow from fetching robots.txt
// (RFC 9309 §2.3.1, read as Google does):
//
//   - err != nil (network error, timeout, too many redirects, a body cut
//     short): complete disallow, OutcomeUnavailable;
//   - 2xx: Parse(body), OutcomeParsed;
//   - 3xx: the caller follows up to five redirects (§2.3.1.2); a 3xx that
//     still arrives here means they were exhausted: complete disallow,
//     OutcomeUnavailable;
//   - 429 Too Many Requests: complete disallow, OutcomeUnavailable
//     (Google treats it like a server error);
//   - other 4xx: no restrictions, OutcomeUnrestricted (§2.3.1.3);
//   - 5xx and anything else: complete disallow, OutcomeUnavailable
//     (§2.3.1.4).
//
// The caller keeps an unavailable result only until the next attempt; how
// long to cache the others is its decision (§2.4 suggests at most 24
// hours). Policy.Decide makes those decisions too.
func FromResponse(status int, body []byte, err error) (*Robots, Outcome) {
	switch outcomeOf(status, err) {
	case OutcomeParsed:
		return Parse(body), OutcomeParsed
	case OutcomeUnrestricted:
		return AllowAll(), OutcomeUnrestricted
	}
	return DisallowAll(), OutcomeUnavailable
}

func outcomeOf(status int, err error) Outcome {
	switch {
	case err != nil:
		return OutcomeUnavailable
	case 200 <= status && status <= 299:
		return OutcomeParsed
	case status == 429:
		return OutcomeUnavailable
	case 400 <= status && status <= 499:
		return OutcomeUnrestricted
	}
	return OutcomeUnavailable
}

// Response is the result of fetching an origin's /robots.txt, after the
// redirects the caller followed.
type Response struct {
	// Status is the HTTP status of the last response; 0 when there was
	// none (see Err).
	Status int

	// CacheControl is the Cache-Control header of the response, its fields
	// joined with ",". A max-age shorter than Policy.TTL shortens the time
	// the answer is kept.
	CacheControl string

	// Body is the response body, decoded. Only its first MaxSize bytes are
	// read, so a longer body cut at a size limit is fine.
	Body []byte

	// Truncated is set when the body was cut short by a timeout or a
	// dropped connection (not by a size limit): rules read from part of a
	// file could allow what the rest disallows, so this counts as a
	// failure unless at least MaxSize bytes arrived.
	Truncated bool

	// Err is set when there was no response: the name did not resolve,
	// the connection failed or was reset, time ran out.
	Err error

	// Hops is the number of redirects followed to get this response. A 3xx
	// response here means the caller stopped following: after
	// Policy.MaxRedirects hops, or because the redirect was unusable.
	Hops int

	// RetryAfter is the wait a failing answer (429, 503) asked for in its
	// Retry-After header; 0 when it named none. It replaces Policy.Retry
	// as the first wait of the run of failures, which still doubles with
	// each failure in a row: the server's own word on when to come back,
	// sooner or later than the default.
	RetryAfter time.Duration
}

// Record is what a crawler keeps about an origin's robots.txt between two
// fetches: the last good copy and the current run of failures. The zero
// Record means nothing is known. Decide returns the Record to keep.
type Record struct {
	// Outcome is that of the last fetch that gave rules, OutcomeParsed or
	// OutcomeUnrestricted; 0 when no fetch has.
	Outcome Outcome
	// Body is, with OutcomeParsed, the body that was parsed (at most
	// MaxSize bytes). It must not be modified.
	Body []byte
	// Fetched is when the last good copy was fetched.
	Fetched time.Time
	// FailingSince is when the current run of failures began; zero when
	// the last fetch gave rules.
	FailingSince time.Time
	// Failures is the number of failures in the current run.
	Failures int
}

// Rules returns the rules of the last good copy, or nil when there is none.
func (r Record) Rules() *Robots {
	switch r.Outcome {
	case OutcomeParsed:
		return Parse(r.Body)
	case OutcomeUnrestricted:
		return AllowAll()
	}
	return nil
}

// Source says where the rules of a Decision come from.
type Source int

const (
	// SourceResponse: this response (its body, or no restrictions for a
	// 4xx).
	SourceResponse Source = iota + 1
	// SourceLastGood: robots.txt is unavailable and the last good copy
	// stands in for it.
	SourceLastGood
	// SourceDisallowAll: robots.txt is unavailable: complete disallow
	// (RFC 9309 §2.3.1.4).
	SourceDisallowAll
	// SourceAssumedAllow: robots.txt has been unavailable for longer than
	// Policy.GiveUp and there is no copy: no restrictions, as Google does.
	SourceAssumedAllow
)

func (s Source) String() string {
	switch s {
	case SourceResponse:
		return "response"
	case SourceLastGood:
		return "last-good-copy"
	case SourceDisallowAll:
		return "disallow-all"
	case SourceAssumedAllow:
		return "assumed-allow"
	}
	return "Source(" + strconv.Itoa(int(s)) + ")"
}

// Decision is what a robots.txt fetch means for the crawler.
type Decision struct {
	Robots  *Robots   // the rules to apply until Expires
	Outcome Outcome   // what this fetch gave
	Source  Source    // where Robots comes from
	Expires time.Time // when to fetch robots.txt again
	Record  Record    // to keep, and give to the next Decide for this origin
	Reason  string    // one line, for logs and tools
}

// Policy decides what a robots.txt response means: RFC 9309 §2.3 and §2.4,
// completed where the RFC leaves a choice by what Google documents
// (https://developers.google.com/search/docs/crawling-indexing/robots/robots_txt).
// The zero Policy is ready to use; each field states its default. A Policy
// is a value: safe for concurrent use.
type Policy struct {
	// TTL is how long rules are kept before robots.txt is fetched again.
	// Default 24h, the most RFC 9309 §2.4 allows. A shorter Cache-Control
	// max-age shortens it.
	TTL time.Duration

	// MinTTL is the shortest time rules are kept, whatever max-age says
	// (no-cache and no-store count as max-age=0): robots.txt is not fetched
	// again before every page. Default 1m.
	MinTTL time.Duration

	// Retry is the wait before robots.txt is asked again after a failure;
	// it doubles with each failure in a row, up to TTL. Default 1m. A
	// Retry-After on the failing answer (Response.RetryAfter) stands in
	// for it, no shorter than MinRetry.
	Retry time.Duration

	// MinRetry is the shortest wait a Retry-After can ask for. Default 1s.
	MinRetry time.Duration

	// MaxRedirects is the number of redirects followed (RFC 9309 §2.3.1.2:
	// at least five). A 3xx after that many hops means unavailable.
	// Default 5.
	MaxRedirects int

	// LastGood is how old the last good copy may be to stand in for a
	// robots.txt that is unavailable. Default 30 days.
	LastGood time.Duration

	// GiveUp is how long robots.txt must have been unavailable before the
	// crawler does what Google does: use the last copy, however old, or
	// without one assume no restrictions (RFC 9309 §2.3.1.4 allows either
	// after "a reasonably long period of time (for example, 30 days)").
	// Default 30 days.
	GiveUp time.Duration

	// StrictUnavailable keeps complete disallow after GiveUp when there is
	// no copy, instead of Google's no restrictions.
	StrictUnavailable bool
}

func (p Policy) withDefaults() Policy {
	if p.TTL <= 0 {
		p.TTL = 24 * time.Hour
	}
	if p.MinTTL <= 0 {
		p.MinTTL = time.Minute
	}
	p.MinTTL = min(p.MinTTL, p.TTL)
	if p.Retry <= 0 {
		p.Retry = time.Minute
	}
	if p.MinRetry <= 0 {
		p.MinRetry = time.Second
	}
	if p.MaxRedirects <= 0 {
		p.MaxRedirects = 5
	}
	if p.LastGood <= 0 {
		p.LastGood = 30 * 24 * time.Hour
	}
	if p.GiveUp <= 0 {
		p.GiveUp = 30 * 24 * time.Hour
	}
	return p
}

// Decide returns what resp means under the default Policy.
func Decide(resp Response, last Record, now time.Time) Decision {
	return Policy{}.Decide(resp, last, now)
}

// FollowRedirect reports whether a redirect reached after hops earlier
// redirects should be followed.
func (p Policy) FollowRedirect(hops int) bool {
	return hops < p.withDefaults().MaxRedirects
}

// Decide returns what resp, a robots.txt fetch made at now, means, given
// what was kept of the origin's earlier fetches (last; the zero Record when
// none):
//
//   - 2xx: the first MaxSize bytes are parsed; the rest is ignored
//     (RFC 9309 §2.3.1.1, §2.5);
//   - 4xx other than 429: no restrictions (§2.3.1.3);
//   - 3xx (more redirects than MaxRedirects, or one that could not be
//     followed), 429, 5xx, no response, a body cut short: unavailable.
//     The last good copy stands in if it is at most LastGood old;
//     otherwise complete disallow (§2.3.1.4) — until robots.txt has been
//     unavailable for GiveUp, after which the crawler does what Google
//     documents: "If the robots.txt is unreachable for more than 30 days,
//     Google will use the last cached copy of the robots.txt. If
//     unavailable, Google assumes that there are no crawl restrictions."
//     An unavailable robots.txt is asked again after Retry, doubling with
//     each failure in a row, at most TTL.
//
// Rules from a response are kept for TTL, or a shorter Cache-Control
// max-age (at least MinTTL). Decide is a pure function.
func (p Policy) Decide(resp Response, last Record, now time.Time) Decision {
	p = p.withDefaults()
	what := describe(resp)
	outcome := outcomeOf(resp.Status, resp.Err)
	if outcome == OutcomeParsed && resp.Truncated && len(resp.Body) < MaxSize {
		outcome, what = OutcomeUnavailable, what+", body cut short"
	}
	switch outcome {
	case OutcomeParsed, OutcomeUnrestricted:
		ttl := p.ttl(resp.CacheControl)
		rec := Record{Outcome: outcome, Fetched: now}
		d := Decision{Outcome: outcome, Source: SourceResponse, Expires: now.Add(ttl), Record: rec}
		if outcome == OutcomeParsed {
			body := resp.Body
			if len(body) > MaxSize {
				body = body[:MaxSize]
			}
			d.Record.Body = body
			d.Robots = Parse(body)
			d.Reason = fmt.Sprintf("%s: %d bytes parsed; kept for %v", what, len(body), ttl)
		} else {
			d.Robots = AllowAll()
			d.Reason = fmt.Sprintf("%s: no robots.txt, no restrictions (RFC 9309 §2.3.1.3); kept for %v", what, ttl)
		}
		return d
	}

	rec := last
	rec.Failures++
	if rec.FailingSince.IsZero() {
		rec.FailingSince = now
	}
	base := p.Retry
	if resp.RetryAfter > 0 && resp.Err == nil && resp.Status >= 400 {
		base = max(resp.RetryAfter, p.MinRetry)
	}
	retry := p.TTL
	if n := rec.Failures - 1; n < 30 && base < p.TTL>>n {
		retry = base << n
	}
	d := Decision{Outcome: OutcomeUnavailable, Expires: now.Add(retry), Record: rec}
	failing := now.Sub(rec.FailingSince)
	copyAge := now.Sub(last.Fetched)
	hasCopy := last.Outcome == OutcomeParsed || last.Outcome == OutcomeUnrestricted
	switch {
	case hasCopy && (copyAge <= p.LastGood || failing > p.GiveUp):
		d.Robots, d.Source = last.Rules(), SourceLastGood
		d.Reason = fmt.Sprintf("%s: unavailable; the copy fetched %v ago stands in; asking again in %v", what, copyAge.Round(time.Second), retry)
	case failing > p.GiveUp && !p.StrictUnavailable:
		d.Robots, d.Source = AllowAll(), SourceAssumedAllow
		d.Reason = fmt.Sprintf("%s: unavailable for %v and no copy: no restrictions, as Google does; asking again in %v", what, failing.Round(time.Second), retry)
	default:
		d.Robots, d.Source = DisallowAll(), SourceDisallowAll
		d.Reason = fmt.Sprintf("%s: unavailable: complete disallow (RFC 9309 §2.3.1.4); asking again in %v", what, retry)
	}
	return d
}

// ttl returns how long a response's rules are kept.
func (p Policy) ttl(cacheControl string) time.Duration {
	ttl := p.TTL
	if age, ok := maxAge(cacheControl); ok && age < ttl {
		ttl = max(age, p.MinTTL)
	}
	return ttl
}

// maxAge returns the max-age of a Cache-Control header, with no-cache and
// no-store read as max-age=0 (RFC 9111 §5.2.2).
func maxAge(cc string) (time.Duration, bool) {
	var age time.Duration
	found := false
	for field := range strings.SplitSeq(cc, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(field), "=")
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "no-cache", "no-store":
			return 0, true
		case "max-age":
			value = strings.Trim(strings.TrimSpace(value), `"`)
			n, err := strconv.ParseUint(value, 10, 32)
			if err != nil {
				continue
			}
			if d := time.Duration(n) * time.Second; !found || d < age {
				age, found = d, true
			}
		}
	}
	return age, found
}

// describe names a response in a few words: "HTTP 503", "3 redirects then
// HTTP 301", "no response (dial tcp: ...)".
func describe(r Response) string {
	var s string
	switch {
	case r.Err != nil:
		s = "no response (" + r.Err.Error() + ")"
	default:
		s = "HTTP " + strconv.Itoa(r.Status)
	}
	if r.Hops > 0 {
		s = fmt.Sprintf("after %d redirects, %s", r.Hops, s)
	}
	return s
}
