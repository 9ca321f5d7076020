package robots

import "strconv"

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
// long to cache the others is its decision (§2.4 suggests at most 24 hours).
func FromResponse(status int, body []byte, err error) (*Robots, Outcome) {
	switch {
	case err != nil:
		return DisallowAll(), OutcomeUnavailable
	case 200 <= status && status <= 299:
		return Parse(body), OutcomeParsed
	case status == 429:
		return DisallowAll(), OutcomeUnavailable
	case 400 <= status && status <= 499:
		return AllowAll(), OutcomeUnrestricted
	}
	return DisallowAll(), OutcomeUnavailable
}
