package fetch

import (
	"errors"
	"net/url"
	"strings"
)

// MaxRedirects is the number of redirect hops a crawler follows from one
// URL: 10, as Googlebot (browsers allow 20, curl 50).
const MaxRedirects = 10

// maxLocationLen bounds the Location values ResolveLocation accepts.
const maxLocationLen = 8 << 10

var (
	// ErrBadLocation is matched (errors.Is) by every *LocationError.
	ErrBadLocation = errors.New("fetch: unusable Location")

	// ErrTooManyRedirects: following one more hop would pass the limit.
	ErrTooManyRedirects = errors.New("fetch: too many redirects")

	// ErrRedirectLoop: the redirect leads to a URL already in the chain.
	ErrRedirectLoop = errors.New("fetch: redirect loop")
)

// LocationError is returned by ResolveLocation for a Location value that
// does not give a fetchable URL. It matches ErrBadLocation.
type LocationError struct {
	Location string // the value as received
	Reason   string
	Err      error // the url.Parse error, if that is why
}

func (e *LocationError) Error() string {
	s := "fetch: bad Location " + quoteTrunc(e.Location) + ": " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *LocationError) Unwrap() error        { return e.Err }
func (e *LocationError) Is(target error) bool { return target == ErrBadLocation }

func quoteTrunc(s string) string {
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return `"` + strings.ToValidUTF8(s, "\uFFFD") + `"`
}

// ResolveLocation resolves the value of a Location header against the URL
// of the request that received it (RFC 9110 §10.2.2, RFC 3986 §5.2), and
// returns an http or https URL, or a *LocationError.
//
// It is as tolerant as browsers (the WHATWG URL Standard) of what servers
// actually send: surrounding spaces and control characters are trimmed,
// tabs and newlines removed, backslashes read as slashes, "http:/x" and
// "https:x" given the missing slashes ("http:x" with the base's own scheme
// is relative, as in browsers), extra leading slashes ignored, and spaces,
// non-ASCII and other bytes not allowed in a URL percent-encoded outside
// the host. A Location without a fragment inherits the request's fragment
// (RFC 9110 §10.2.2).
//
// Errors: an empty or overlong value, a scheme other than http and https
// (javascript:, mailto:, ftp:), no host, or what url.Parse refuses (a space
// in the host, a bad port).
func ResolveLocation(base *url.URL, loc string) (*url.URL, error) {
	bad := func(reason string, err error) (*url.URL, error) {
		return nil, &LocationError{Location: loc, Reason: reason, Err: err}
	}
	if base == nil {
		return bad("no base URL", nil)
	}
	if len(loc) > maxLocationLen {
		return bad("too long", nil)
	}
	s := strings.TrimFunc(loc, func(r rune) bool { return r <= ' ' })
	s = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
	if s == "" {
		return bad("empty", nil)
	}

	scheme, rest, hasScheme := cutScheme(s)
	switch {
	case !hasScheme:
		rest = backslashes(s)
		if strings.HasPrefix(rest, "//") {
			rest = "//" + strings.TrimLeft(rest, "/")
		}
		s = rest
	case scheme != "http" && scheme != "https":
		return bad("scheme "+scheme+" is not http or https", nil)
	default:
		rest = backslashes(rest)
		switch {
		case strings.HasPrefix(rest, "//") || scheme != strings.ToLower(base.Scheme):
			// "https:example.com", "http:///example.com": an authority
			// follows, whatever the slashes.
			s = scheme + "://" + strings.TrimLeft(rest, "/")
		default:
			// "http:page" or "http:/page" with an http base: relative.
			s = rest
		}
	}

	ref, err := url.Parse(escapeRef(s))
	if err != nil {
		return bad("does not parse", err)
	}
	u := base.ResolveReference(ref)
	if u.Scheme != "http" && u.Scheme != "https" {
		return bad("scheme "+u.Scheme+" is not http or https", nil)
	}
	if u.Host == "" || u.Hostname() == "" {
		return bad("no host", nil)
	}
	if u.Opaque != "" {
		return bad("opaque URL", nil)
	}
	if p := u.Port(); p != "" {
		if n, err := parsePort(p); err != nil || n == 0 {
			return bad("bad port "+p, nil)
		}
	}
	// url.Parse is laxer with a reference than with an absolute URL
	// ("//::" parses); what is returned must parse again as it stands.
	if _, err := url.Parse(u.String()); err != nil {
		return bad("does not parse", err)
	}
	u.User = nil // credentials in a redirect are not followed
	if !strings.Contains(s, "#") && base.Fragment != "" {
		u.Fragment, u.RawFragment = base.Fragment, base.RawFragment
	}
	return u, nil
}

// cutScheme splits "scheme:rest" when s starts with a URL scheme (RFC 3986
// §3.1: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )). The scheme is returned
// in lower case.
func cutScheme(s string) (scheme, rest string, ok bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return strings.ToLower(s[:i]), s[i+1:], true
		default:
			return "", s, false
		}
	}
	return "", s, false
}

// backslashes turns backslashes into slashes before the query, as browsers
// do for http and https URLs.
func backslashes(s string) string {
	end := strings.IndexAny(s, "?#")
	if end < 0 {
		end = len(s)
	}
	if !strings.Contains(s[:end], `\`) {
		return s
	}
	return strings.ReplaceAll(s[:end], `\`, "/") + s[end:]
}

// escapeRef percent-encodes, outside the authority, the bytes a URL may not
// carry: controls, space, non-ASCII, `"<>\^{|}` and backquote, and a "%" not
// followed by two hex digits.
func escapeRef(s string) string {
	start := 0
	if i := strings.Index(s, "//"); i >= 0 && (i == 0 || strings.HasSuffix(s[:i], ":")) {
		start = i + 2
		if j := strings.IndexAny(s[start:], "/?#"); j >= 0 {
			start += j
		} else {
			start = len(s)
		}
	}
	var b strings.Builder
	for i := start; i < len(s); i++ {
		c := s[i]
		if mustEscape(c) || c == '%' && !(i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2])) {
			if b.Len() == 0 {
				b.Grow(len(s) + 16)
				b.WriteString(s[:i])
			}
			const hex = "0123456789ABCDEF"
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(c)
		}
	}
	if b.Len() == 0 {
		return s
	}
	return b.String()
}

func mustEscape(c byte) bool {
	return c <= ' ' || c >= 0x7f || strings.IndexByte("\"<>\\^`{|}", c) >= 0
}

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// CheckRedirect reports whether the crawler may follow a redirect to next.
// chain holds the URLs fetched so far for this redirect chain, the original
// first, in the form the crawler compares URLs in (its canonical form); the
// redirect to next would be hop number len(chain). It returns
// ErrTooManyRedirects when that passes max (MaxRedirects when max <= 0), and
// ErrRedirectLoop when next is already in the chain.
func CheckRedirect(chain []string, next string, max int) error {
	if max <= 0 {
		max = MaxRedirects
	}
	for _, u := range chain {
		if u == next {
			return ErrRedirectLoop
		}
	}
	if len(chain) > max {
		return ErrTooManyRedirects
	}
	return nil
}
