package urlnorm

import (
	"errors"
	"fmt"
	"hash/maphash"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/net/idna"
)

// Errors wrapped by *Error. Use errors.Is to classify a failure.
var (
	ErrScheme  = errors.New("unsupported scheme")
	ErrHost    = errors.New("invalid host")
	ErrNoHost  = errors.New("missing host")
	ErrPort    = errors.New("invalid port")
	ErrControl = errors.New("control character")
	ErrSyntax  = errors.New("invalid syntax")
)

// Error reports why a URL was refused. Err wraps one of the package's
// sentinel errors.
type Error struct {
	URL string // the input, as given
	Err error
}

func (e *Error) Error() string { return fmt.Sprintf("urlnorm: parse %q: %v", e.URL, e.Err) }

func (e *Error) Unwrap() error { return e.Err }

// Parse parses an absolute http or https URL given as a seed or found in a
// link. Surrounding whitespace is trimmed. Other schemes, a missing host, a
// bad port and control characters are refused with an *Error. The scheme
// and host are lowercased, an internationalized host is converted to its
// ASCII form (IDNA, lookup profile) and a default port (80 for http, 443 for
// https) is dropped; everything else is kept as found.
func Parse(raw string) (*url.URL, error) {
	s := strings.TrimSpace(raw)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return nil, &Error{raw, fmt.Errorf("%w %#02x at offset %d", ErrControl, c, i)}
		}
	}
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, &Error{raw, fmt.Errorf("%w: %v", ErrSyntax, err)}
	}
	c, err := clean(u)
	if err != nil {
		return nil, &Error{raw, err}
	}
	return c, nil
}

// Clean checks a URL built elsewhere, for example by resolving a link
// against its base with url.URL.ResolveReference, by the rules of Parse, and
// returns a normalized copy: scheme and host lowercased, host in ASCII,
// default port dropped. u itself is not modified.
func Clean(u *url.URL) (*url.URL, error) {
	c, err := clean(u)
	if err != nil {
		return nil, &Error{u.String(), err}
	}
	return c, nil
}

func clean(u *url.URL) (*url.URL, error) {
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return nil, fmt.Errorf("%w %q", ErrScheme, u.Scheme)
	}
	if u.Opaque != "" {
		return nil, ErrNoHost
	}
	host, port, err := splitHostPort(u.Host)
	if err != nil {
		return nil, err
	}
	if host == "" {
		return nil, ErrNoHost
	}
	host, err = asciiHost(host)
	if err != nil {
		return nil, err
	}
	c := *u
	c.Scheme = scheme
	c.Host = joinHostPort(scheme, host, port)
	return &c, nil
}

// splitHostPort splits u.Host into the host (brackets kept for IPv6
// literals) and a port normalized to its decimal form without leading
// zeros, or "" when absent or empty.
func splitHostPort(hostport string) (host, port string, err error) {
	host = hostport
	i := strings.LastIndexByte(hostport, ':')
	if i >= 0 && !strings.Contains(hostport[i:], "]") {
		host, port = hostport[:i], hostport[i+1:]
	}
	if strings.HasPrefix(host, "[") != strings.HasSuffix(host, "]") {
		return "", "", fmt.Errorf("%w %q", ErrHost, host)
	}
	if port == "" {
		return host, "", nil
	}
	n := 0
	for i := 0; i < len(port); i++ {
		c := port[i]
		if c < '0' || c > '9' {
			return "", "", fmt.Errorf("%w %q", ErrPort, port)
		}
		n = n*10 + int(c-'0')
		if n > 65535 {
			return "", "", fmt.Errorf("%w %q", ErrPort, port)
		}
	}
	if n == 0 {
		return "", "", fmt.Errorf("%w %q", ErrPort, port)
	}
	return host, strconv.Itoa(n), nil
}

func joinHostPort(scheme, host, port string) string {
	if port == "" || (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		return host
	}
	return host + ":" + port
}

// asciiHost lowercases host and converts an internationalized name to its
// ASCII (punycode) form. Plain ASCII names are only lowercased: the IDNA
// lookup profile applies STD3 rules that refuse, for example, underscores,
// which real hosts use and browsers accept.
func asciiHost(host string) (string, error) {
	if strings.HasPrefix(host, "[") {
		// IPv6 literal: url.Parse has checked the characters.
		return strings.ToLower(host), nil
	}
	ascii := true
	for i := 0; i < len(host); i++ {
		c := host[i]
		if c >= 0x80 {
			ascii = false
			break
		}
		// url.Parse lets through characters no host may contain.
		if c <= ' ' || strings.IndexByte(`"#%/:<>?@[\]^{|}`+"`", c) >= 0 {
			return "", fmt.Errorf("%w %q", ErrHost, host)
		}
	}
	if ascii {
		return strings.ToLower(host), nil
	}
	a, err := idna.Lookup.ToASCII(host)
	if err != nil {
		return "", fmt.Errorf("%w %q: %v", ErrHost, host, err)
	}
	if a == "" {
		// Characters IDNA maps to nothing ("\u034f", a combining
		// grapheme joiner), and nothing else: no host at all.
		return "", fmt.Errorf("%w %q: empty once mapped", ErrHost, host)
	}
	return strings.ToLower(a), nil
}

// HostKey returns "scheme://host[:port]" with the scheme and host lowercased
// and the default port dropped: the unit of politeness and scope.
func HostKey(u *url.URL) string {
	// A crawl asks for the key of the same few hosts over and over (for
	// every link of every page), so the keys made last are remembered, a
	// few hosts at once: building one allocates.
	slot := &hostKeys[maphash.String(hostKeySeed, u.Host)%uint64(len(hostKeys))]
	if m := slot.Load(); m != nil && m.host == u.Host && m.scheme == u.Scheme {
		return m.key
	}
	key := hostKey(u)
	slot.Store(&hostKeyMemo{scheme: u.Scheme, host: u.Host, key: key})
	return key
}

// hostKeys remembers recent HostKey results, one per slot, the slot
// chosen by the host.
var (
	hostKeys    [64]atomic.Pointer[hostKeyMemo]
	hostKeySeed = maphash.MakeSeed()
)

// hostKeyMemo is a HostKey result and the URL fields it was made from.
type hostKeyMemo struct{ scheme, host, key string }

// hostKey is HostKey without the memo.
func hostKey(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host, port, err := splitHostPort(u.Host)
	if err != nil {
		return scheme + "://" + strings.ToLower(u.Host)
	}
	return scheme + "://" + strings.ToLower(joinHostPort(scheme, host, port))
}

// Canonical returns the canonical form of u used as the seen-set key:
//
//   - scheme and host lowercase, default port dropped (RFC 3986 §6.2.2.1, §6.2.3);
//   - percent-encoding normalized: escaped unreserved characters decoded,
//     hex digits uppercase, every other escape kept as it is, so that %2F
//     and %3F keep their meaning (§6.2.2.1, §6.2.2.2);
//   - dot segments removed (§5.2.4, §6.2.2.3) and an empty path made "/";
//   - fragment dropped, an empty query ("?" alone) dropped;
//   - query parameters stably sorted by name.
//
// Canonical does not fail: a URL that Parse would refuse gets a best-effort
// key.
func Canonical(u *url.URL) string {
	return canonical(u, nil, false)
}

// canonical writes the canonical form of u. With sessions, session ids are
// left out (see StripSessionIDs); query parameters whose name drop reports
// are left out too.
func canonical(u *url.URL, drop func(name string) bool, sessions bool) string {
	var b strings.Builder
	b.Grow(len(u.Host) + len(u.Path) + len(u.RawQuery) + 16)
	scheme := strings.ToLower(u.Scheme)
	b.WriteString(scheme)
	b.WriteString("://")
	if u.User != nil {
		b.WriteString(u.User.String())
		b.WriteByte('@')
	}
	host, port, err := splitHostPort(u.Host)
	if err != nil {
		b.WriteString(strings.ToLower(u.Host))
	} else {
		if !isASCII(host) {
			// Not through Parse: IDNA here too, so that both spellings
			// of a host share a key.
			if a, err := asciiHost(host); err == nil {
				host = a
			}
		}
		b.WriteString(strings.ToLower(joinHostPort(scheme, host, port)))
	}

	p := u.Opaque
	if p == "" {
		p = u.EscapedPath()
	}
	if (sessions || drop != nil) && strings.IndexByte(p, ';') >= 0 {
		p, _ = stripPathParams(p, nil, sessions, drop)
	}
	start := b.Len()
	if p == "" || p[0] != '/' {
		b.WriteByte('/')
	}
	writeNormalizedEscapes(&b, p, false)
	if out := b.String(); hasDotSegment(out[start:]) {
		path := removeDotSegments(out[start:])
		rest := out[:start]
		b.Reset()
		b.Grow(len(rest) + len(path) + len(u.RawQuery) + 1)
		b.WriteString(rest)
		b.WriteString(path)
	}

	if u.RawQuery != "" {
		writeQuery(&b, u.RawQuery, drop, sessions)
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// writeQuery writes "?" and the query's parameters sorted by name; empty
// parameters ("a=1&&b=2") are dropped and nothing is written when none is
// left.
func writeQuery(b *strings.Builder, q string, drop func(string) bool, sessions bool) {
	n := strings.Count(q, "&") + 1
	var stack [16]string
	params := stack[:0]
	if n > len(stack) {
		params = make([]string, 0, n)
	}
	for len(q) > 0 {
		var p string
		p, q, _ = strings.Cut(q, "&")
		if p != "" {
			params = append(params, p)
		}
	}
	if len(params) == 0 {
		return
	}
	needNorm := false
	for _, p := range params {
		if needsQueryNorm(p) {
			needNorm = true
			break
		}
	}
	if needNorm {
		for i, p := range params {
			var nb strings.Builder
			writeNormalizedEscapes(&nb, p, true)
			params[i] = nb.String()
		}
	}
	if drop != nil || sessions {
		params = slices.DeleteFunc(params, func(p string) bool {
			name, value, _ := strings.Cut(p, "=")
			return sessions && isSessionParam(name, value) ||
				drop != nil && drop(DecodeParamName(name))
		})
		if len(params) == 0 {
			return
		}
	}
	slices.SortStableFunc(params, func(a, b string) int {
		return strings.Compare(paramName(a), paramName(b))
	})
	b.WriteByte('?')
	for i, p := range params {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p)
	}
}

func paramName(p string) string {
	if i := strings.IndexByte(p, '='); i >= 0 {
		return p[:i]
	}
	return p
}

func needsQueryNorm(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '%' || mustEscape(c) {
			return true
		}
	}
	return false
}

// mustEscape reports bytes that never appear raw in a well-formed URL
// (RFC 3986 §2): url.Parse lets some of them through in a query.
func mustEscape(c byte) bool {
	return c <= ' ' || c >= 0x7f || strings.IndexByte(`"<>\^{|}`+"`", c) >= 0
}

const upperhex = "0123456789ABCDEF"

// writeNormalizedEscapes copies s to b, decoding escaped unreserved
// characters, uppercasing the hex digits of the other escapes and
// escaping a '%' that starts none. With escapeRaw, bytes that are not
// allowed raw in a URL are escaped.
func writeNormalizedEscapes(b *strings.Builder, s string, escapeRaw bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			d := unhex(s[i+1])<<4 | unhex(s[i+2])
			if isUnreserved(d) {
				b.WriteByte(d)
			} else {
				b.WriteByte('%')
				b.WriteByte(upperhex[d>>4])
				b.WriteByte(upperhex[d&15])
			}
			i += 2
		case c == '%':
			// A '%' that starts no escape is one itself: left raw, a
			// decoded character after it could complete an escape
			// ("%7%41" would become "%7A", and "z" the next time).
			b.WriteString("%25")
		case escapeRaw && mustEscape(c):
			b.WriteByte('%')
			b.WriteByte(upperhex[c>>4])
			b.WriteByte(upperhex[c&15])
		default:
			b.WriteByte(c)
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// isUnreserved reports the unreserved characters of RFC 3986 §2.3.
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func hasDotSegment(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] != '.' {
			continue
		}
		if (i == 0 || p[i-1] == '/') && (i+1 == len(p) || p[i+1] == '/' ||
			p[i+1] == '.' && (i+2 == len(p) || p[i+2] == '/')) {
			return true
		}
	}
	return false
}

// removeDotSegments implements RFC 3986 §5.2.4 for an absolute path.
func removeDotSegments(in string) string {
	out := make([]byte, 0, len(in))
	for len(in) > 0 {
		switch {
		case strings.HasPrefix(in, "../"):
			in = in[3:]
		case strings.HasPrefix(in, "./"):
			in = in[2:]
		case strings.HasPrefix(in, "/./"):
			in = in[2:]
		case in == "/.":
			in = "/"
		case strings.HasPrefix(in, "/../"):
			in = in[3:]
			out = out[:lastSlash(out)]
		case in == "/..":
			in = "/"
			out = out[:lastSlash(out)]
		case in == "." || in == "..":
			in = ""
		default:
			j := strings.IndexByte(in[1:], '/')
			if j < 0 {
				j = len(in)
			} else {
				j++
			}
			out = append(out, in[:j]...)
			in = in[j:]
		}
	}
	if len(out) == 0 {
		return "/"
	}
	return string(out)
}

func lastSlash(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '/' {
			return i
		}
	}
	return 0
}
