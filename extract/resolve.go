package extract

import (
	"bytes"
	"hash/maphash"
	"net/url"
	"strings"

	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

// resolver resolves hrefs against one base URL. For the common hrefs,
// made only of characters that need no escaping, it builds the absolute
// URL in a reused buffer, from which pass.add copies it (appendURL) or
// fastResolve makes a url.URL of one string (fill); any
// other href goes through url.Parse and url.URL.ResolveReference. Both
// paths give the same result (TestResolveFastMatchesSlow).
type resolver struct {
	base     *url.URL
	fast     bool   // base suits the fast path
	scheme   string // base scheme, lowercased
	basePath string // base.EscapedPath()
	buf      []byte // cleaned href
	esc      []byte // escaped href
	full     []byte // merged path, before dot segments are removed
	out      []byte // the absolute URL
	key      []byte // canonical form, see fastKey

	// The base host as urlnorm.Clean leaves it, and a few other hosts:
	// links name the same hosts again and again.
	baseHost   string
	baseHostOK bool
	hosts      [8]hostEntry
	nextHost   int
}

// hostEntry is a host as urlnorm.Clean normalizes it for one scheme.
type hostEntry struct {
	scheme, raw, host string
	ok                bool
}

func (r *resolver) init(base *url.URL) {
	r.base = base
	r.scheme = strings.ToLower(base.Scheme)
	r.basePath = base.EscapedPath()
	// The fast path builds Path from the escaped base path: a base path with
	// escapes in it (/a%20b/) would come out escaped twice, so such pages
	// take the net/url path.
	r.fast = base.User == nil && base.Opaque == "" && !base.ForceQuery && base.Host != "" &&
		(r.scheme == "http" || r.scheme == "https") && !strings.Contains(r.basePath, "%")
	if r.fast {
		r.scheme = schemeName(r.scheme)
		r.baseHost, r.baseHostOK = r.normHost(r.scheme, []byte(base.Host))
	}
}

// schemeName returns "http" or "https" without allocating.
func schemeName(s string) string {
	if s == "http" {
		return "http"
	}
	return "https"
}

// normHost returns the host and port as urlnorm.Clean leaves them in a
// URL of scheme, and false when Clean refuses them.
func (r *resolver) normHost(scheme string, raw []byte) (string, bool) {
	for i := range r.hosts {
		e := &r.hosts[i]
		if e.scheme == scheme && e.raw == string(raw) {
			return e.host, e.ok
		}
	}
	e := hostEntry{scheme: scheme, raw: string(raw)}
	if c, err := urlnorm.Clean(&url.URL{Scheme: scheme, Host: e.raw}); err == nil {
		e.host, e.ok = c.Host, true
	}
	r.hosts[r.nextHost] = e
	r.nextHost = (r.nextHost + 1) % len(r.hosts)
	return e.host, e.ok
}

// resolve returns the normalized absolute URL of href without its
// fragment, or nil when href is not a usable http(s) link. href is not
// modified and not retained.
func (r *resolver) resolve(href []byte) *url.URL {
	h, schemeEnd, ok := r.prepare(href)
	if !ok {
		return nil
	}
	if r.fast {
		if u, ok := r.fastResolve(h, schemeEnd); ok {
			return u
		}
	}
	return slowResolve(r.base, string(h))
}

// prepare cleans and escapes href and finds its scheme. ok is false when
// the href has a scheme other than http and https.
func (r *resolver) prepare(href []byte) (h []byte, schemeEnd int, ok bool) {
	h = r.clean(href)
	schemeEnd = -1
	if i := bytes.IndexByte(h, ':'); i > 0 && bytes.IndexAny(h[:i], "/?#") < 0 {
		// Has a scheme: skip javascript:, mailto:, tel:, data: and the
		// like without parsing them.
		s := string(h[:i]) // does not allocate: compared only
		if !strings.EqualFold(s, "http") && !strings.EqualFold(s, "https") {
			return nil, 0, false
		}
		schemeEnd = i
	}
	return r.escape(h, schemeEnd), schemeEnd, true
}

// clean strips leading and trailing ASCII whitespace and C0 controls and
// removes tabs and newlines inside, as the URL standard does before
// parsing.
func (r *resolver) clean(h []byte) []byte {
	for len(h) > 0 && h[0] <= ' ' {
		h = h[1:]
	}
	for len(h) > 0 && h[len(h)-1] <= ' ' {
		h = h[:len(h)-1]
	}
	if bytes.IndexAny(h, "\t\n\r") < 0 {
		return h
	}
	b := r.buf[:0]
	for _, c := range h {
		if c != '\t' && c != '\n' && c != '\r' {
			b = append(b, c)
		}
	}
	r.buf = b
	return b
}

// escape percent-encodes, outside the authority, the bytes a browser
// encodes in a path or query: non-ASCII bytes (the href is UTF-8 by now),
// space, '"', '<' and '>'. The host is left to urlnorm (IDNA).
func (r *resolver) escape(h []byte, schemeEnd int) []byte {
	i := 0
	for i < len(h) && !needsEscape(h[i]) {
		i++
	}
	if i == len(h) {
		return h
	}
	authStart, authEnd := -1, -1
	switch {
	case schemeEnd >= 0 && bytes.HasPrefix(h[schemeEnd+1:], []byte("//")):
		authStart = schemeEnd + 3
	case schemeEnd < 0 && bytes.HasPrefix(h, []byte("//")):
		authStart = 2
	}
	if authStart >= 0 {
		authEnd = authStart
		for authEnd < len(h) && h[authEnd] != '/' && h[authEnd] != '?' && h[authEnd] != '#' {
			authEnd++
		}
	}
	const hex = "0123456789ABCDEF"
	b := append(r.esc[:0], h[:i]...)
	for ; i < len(h); i++ {
		c := h[i]
		if needsEscape(c) && (i < authStart || i >= authEnd) {
			b = append(b, '%', hex[c>>4], hex[c&15])
			continue
		}
		b = append(b, c)
	}
	r.esc = b
	return b
}

func needsEscape(c byte) bool {
	return c >= 0x80 || c == ' ' || c == '"' || c == '<' || c == '>'
}

// fastChars are the bytes the fast path accepts: unreserved, sub-delims,
// ':', '@', '/' and '?'. Everything else ('%', '[', '\\', controls, ...)
// takes the slow path.
var fastChars = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range []byte("-._~!$&'()*+,;=:@/?") {
		t[c] = true
	}
	return t
}()

// fastResolve does what url.Parse, url.URL.ResolveReference and
// urlnorm.Clean do, for hrefs of fastChars. ok is false when href needs
// the slow path.
func (r *resolver) fastResolve(h []byte, schemeEnd int) (u *url.URL, ok bool) {
	b, st := r.fastBuild(h, schemeEnd)
	switch st {
	case fastSlow:
		return nil, false
	case fastNil:
		return nil, true
	}
	u = new(url.URL)
	r.fill(u, b)
	return u, true
}

// Outcomes of fastBuild.
const (
	fastOK   = iota // the URL is in r.out, described by built
	fastNil         // the href is not a usable link
	fastSlow        // the href needs the slow path
)

// built describes the absolute URL that fastBuild leaves in r.out:
// scheme "://" raw host, then the path up to pathEnd, then "?" and the
// query when hasQuery.
type built struct {
	scheme           string // "http" or "https"
	host             string // as urlnorm.Clean leaves it
	hostEnd, pathEnd int
	hasQuery         bool
}

// fill sets u to the URL of b, as urlnorm.Clean returns it. It allocates
// one string, for the path and query.
func (r *resolver) fill(u *url.URL, b built) {
	s := string(r.out[b.hostEnd:])
	*u = url.URL{Scheme: b.scheme, Host: b.host, Path: s[:b.pathEnd-b.hostEnd]}
	if b.hasQuery {
		u.RawQuery = s[b.pathEnd-b.hostEnd+1:]
	}
	if strings.ContainsAny(u.Path, "!'()*") {
		// url.URL.setPath: these are valid in a path but escaped by
		// default, so the path as written is kept in RawPath.
		u.RawPath = u.Path
	}
}

// appendURL appends to dst what url.URL.String returns for the URL fill
// would make of b, without making it: the path and query as they are in
// r.out (for the bytes the fast path lets through, String writes the path
// fill sets as it is, RawPath or not).
func (r *resolver) appendURL(dst []byte, b built) []byte {
	if !plainHost(b.host) {
		// String escapes some bytes of a host, such as the '%' of an
		// IPv6 zone.
		var u url.URL
		r.fill(&u, b)
		return append(dst, u.String()...)
	}
	dst = append(dst, b.scheme...)
	dst = append(dst, "://"...)
	dst = append(dst, b.host...)
	return append(dst, r.out[b.hostEnd:]...)
}

// plainFragment reports whether url.Parse takes the fragment f: no control
// byte, and every '%' starting an escape of two hex digits. (Documentation
// generators write fragments such as "#impl-From%3C%26str%3E-for-String"
// on every page; they used to take the slow path.)
func plainFragment(f []byte) bool {
	for i := 0; i < len(f); i++ {
		switch c := f[i]; {
		case c < ' ' || c == 0x7f:
			return false
		case c == '%':
			if i+2 >= len(f) || !isHex(f[i+1]) || !isHex(f[i+2]) {
				return false
			}
			i += 2
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// plainHost reports whether url.URL.String writes host as it is: it holds
// only bytes that net/url does not escape in a host.
func plainHost(host string) bool {
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~!$&'()*+,;=:[]", c) >= 0) {
			return false
		}
	}
	return true
}

// fastBuild resolves h, for fastResolve and pass.add.
func (r *resolver) fastBuild(h []byte, schemeEnd int) (b built, status int) {
	if j := bytes.IndexByte(h, '#'); j >= 0 {
		if !plainFragment(h[j+1:]) {
			return b, fastSlow // url.Parse refuses it, or may
		}
		h = h[:j]
	}
	for _, c := range h {
		if !fastChars[c] {
			return b, fastSlow
		}
	}
	path, query, hasQuery := h, []byte(nil), false
	if q := bytes.IndexByte(h, '?'); q >= 0 {
		path, query, hasQuery = h[:q], h[q+1:], true
		if len(query) == 0 {
			return b, fastSlow // ForceQuery
		}
	}
	if schemeEnd < 0 {
		if bytes.HasPrefix(path, []byte("///")) {
			return b, fastSlow // url.Parse keeps it all as the path
		}
		seg := path
		if i := bytes.IndexByte(seg, '/'); i >= 0 {
			seg = seg[:i]
		}
		if bytes.IndexByte(seg, ':') >= 0 {
			return b, fastSlow // url.Parse refuses a colon in a first segment
		}
	}
	out := r.out[:0]
	var hostEnd int
	if schemeEnd >= 0 || bytes.HasPrefix(path, []byte("//")) {
		// Absolute or network-path reference.
		var rest []byte
		if schemeEnd >= 0 {
			if !bytes.HasPrefix(path[schemeEnd+1:], []byte("//")) {
				return b, fastSlow
			}
			for _, c := range path[:schemeEnd] {
				out = append(out, lower(c))
			}
			rest = path[schemeEnd+3:]
		} else {
			out = append(out, r.scheme...)
			rest = path[2:]
		}
		b.scheme = "https"
		if len(out) == len("http") {
			b.scheme = "http"
		}
		out = append(out, "://"...)
		a := bytes.IndexByte(rest, '/')
		if a < 0 {
			a = len(rest)
		}
		if !simpleHost(rest[:a]) {
			return b, fastSlow // userinfo, odd ports, or net/url's special cases
		}
		var hostOK bool
		b.host, hostOK = r.normHost(b.scheme, rest[:a])
		out = append(out, rest[:a]...)
		hostEnd = len(out)
		out = r.appendPath(out, string(rest[a:]), nil)
		if !hostOK {
			r.out = out
			return b, fastNil
		}
	} else {
		b.scheme, b.host = r.scheme, r.baseHost
		out = append(out, r.scheme...)
		out = append(out, "://"...)
		out = append(out, r.base.Host...)
		hostEnd = len(out)
		out = r.appendPath(out, r.basePath, path)
		if !r.baseHostOK {
			r.out = out
			return b, fastNil
		}
		if len(path) == 0 && !hasQuery && r.base.RawQuery != "" {
			// An empty or fragment-only href keeps the base's query.
			b.pathEnd = len(out)
			out = append(out, '?')
			out = append(out, r.base.RawQuery...)
			r.out = out
			b.hostEnd, b.hasQuery = hostEnd, true
			return b, fastOK
		}
	}
	b.hostEnd, b.pathEnd, b.hasQuery = hostEnd, len(out), hasQuery
	if hasQuery {
		out = append(out, '?')
		out = append(out, query...)
	}
	r.out = out
	return b, fastOK
}

// pathChars are the bytes of fastChars that may be in the path of a URL
// fill makes: for a path of them, url.URL.EscapedPath is the path itself.
var pathChars = func() [256]bool {
	t := fastChars
	t['?'] = false
	return t
}()

// fastKey returns the maphash of urlnorm.Canonical of the URL of b,
// computed without making the URL, and false when it leaves that to
// urlnorm (escapes, dot segments, many parameters).
func (r *resolver) fastKey(b built) (uint64, bool) {
	path := r.out[b.hostEnd:b.pathEnd]
	var query []byte
	if b.hasQuery {
		query = r.out[b.pathEnd+1:]
	}
	for _, c := range path {
		if !pathChars[c] {
			return 0, false
		}
	}
	for _, c := range query {
		if !fastChars[c] {
			return 0, false
		}
	}
	// The host is normalized already: Canonical leaves it as it is.
	k := append(r.key[:0], b.scheme...)
	k = append(k, "://"...)
	k = append(k, b.host...)
	start := len(k)
	if len(path) == 0 || path[0] != '/' {
		k = append(k, '/')
	}
	k = append(k, path...)
	if hasDotSegment(k[start:]) {
		r.key = k
		return 0, false
	}
	if len(query) > 0 {
		// urlnorm's writeQuery: empty parameters dropped, the others
		// stably sorted by name; none need escapes normalized here.
		var stack [16][]byte
		params := stack[:0]
		for len(query) > 0 {
			var p []byte
			p, query, _ = bytes.Cut(query, []byte("&"))
			if len(p) == 0 {
				continue
			}
			if len(params) == len(stack) {
				r.key = k
				return 0, false
			}
			params = append(params, p)
		}
		for i := 1; i < len(params); i++ {
			for j := i; j > 0 && bytes.Compare(paramName(params[j-1]), paramName(params[j])) > 0; j-- {
				params[j-1], params[j] = params[j], params[j-1]
			}
		}
		for i, p := range params {
			if i == 0 {
				k = append(k, '?')
			} else {
				k = append(k, '&')
			}
			k = append(k, p...)
		}
	}
	r.key = k
	return maphash.Bytes(seed, k), true
}

func paramName(p []byte) []byte {
	if i := bytes.IndexByte(p, '='); i >= 0 {
		return p[:i]
	}
	return p
}

// hasDotSegment is urlnorm's test for a path that has "." or ".."
// segments.
func hasDotSegment(p []byte) bool {
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

// simpleHost reports whether an authority is a plain host name with an
// optional port: letters, digits, '-', '.', '_', '~', then ":digits".
func simpleHost(a []byte) bool {
	host, port, hasPort := bytes.Cut(a, []byte(":"))
	if len(host) == 0 || hasPort && len(port) == 0 {
		return false
	}
	for _, c := range host {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	for _, c := range port {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// appendPath appends what net/url's resolvePath(base, ref) returns: ref
// merged with base and its dot segments removed (RFC 3986 §5.2.3, §5.2.4),
// in the same way, so that both paths agree.
func (r *resolver) appendPath(out []byte, base string, ref []byte) []byte {
	full := r.full[:0]
	switch {
	case len(ref) == 0:
		full = append(full, base...)
	case ref[0] != '/':
		i := strings.LastIndexByte(base, '/')
		full = append(full, base[:i+1]...)
		full = append(full, ref...)
	default:
		full = append(full, ref...)
	}
	r.full = full
	if len(full) == 0 {
		return out
	}
	start := len(out)
	out = append(out, '/')
	var elem []byte
	remaining, found, first := full, true, true
	for found {
		elem, remaining, found = bytes.Cut(remaining, []byte("/"))
		switch string(elem) {
		case ".":
			first = false
			continue
		case "..":
			if i := bytes.LastIndexByte(out[start+1:], '/'); i >= 0 {
				out = out[:start+1+i]
			} else {
				out = out[:start+1]
			}
			first = len(out) == start+1
		default:
			if !first {
				out = append(out, '/')
			}
			out = append(out, elem...)
			first = false
		}
	}
	if string(elem) == "." || string(elem) == ".." {
		out = append(out, '/')
	}
	if len(out)-start > 1 && out[start+1] == '/' {
		copy(out[start:], out[start+1:])
		out = out[:len(out)-1]
	}
	return out
}

// slowResolve resolves href with net/url and checks it with urlnorm.
func slowResolve(base *url.URL, href string) *url.URL {
	ref, err := url.Parse(href)
	if err != nil {
		return nil
	}
	u, err := urlnorm.Clean(base.ResolveReference(ref))
	if err != nil {
		return nil
	}
	u.Fragment, u.RawFragment = "", ""
	return u
}

// srcsetURLs yields the URLs of an <img srcset> value (HTML, "parse a
// srcset attribute"): candidates separated by commas, each a URL and
// optional descriptors; a URL may itself contain commas but not end with
// one.
func srcsetURLs(s []byte) func(yield func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for {
			for len(s) > 0 && (isSpace(s[0]) || s[0] == ',') {
				s = s[1:]
			}
			if len(s) == 0 {
				return
			}
			i := 0
			for i < len(s) && !isSpace(s[i]) {
				i++
			}
			u := s[:i]
			s = s[i:]
			if n := len(u); n > 0 && u[n-1] == ',' {
				for len(u) > 0 && u[len(u)-1] == ',' {
					u = u[:len(u)-1]
				}
			} else {
				// Skip the descriptors, up to a comma outside parentheses.
				depth := 0
				for len(s) > 0 && (s[0] != ',' || depth > 0) {
					switch s[0] {
					case '(':
						depth++
					case ')':
						if depth > 0 {
							depth--
						}
					}
					s = s[1:]
				}
			}
			if len(u) > 0 && !yield(u) {
				return
			}
		}
	}
}
