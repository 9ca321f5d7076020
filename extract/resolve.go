package extract

import (
	"bytes"
	"net/url"
	"strings"

	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

// resolver resolves hrefs against one base URL. For the common hrefs,
// made only of characters that need no escaping, it builds the absolute
// URL in a reused buffer and allocates one string and one url.URL; any
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
}

func (r *resolver) init(base *url.URL) {
	r.base = base
	r.scheme = strings.ToLower(base.Scheme)
	r.basePath = base.EscapedPath()
	r.fast = base.User == nil && base.Opaque == "" && !base.ForceQuery && base.Host != "" &&
		(r.scheme == "http" || r.scheme == "https")
}

// resolve returns the normalized absolute URL of href without its
// fragment, or nil when href is not a usable http(s) link. href is not
// modified and not retained.
func (r *resolver) resolve(href []byte) *url.URL {
	h := r.clean(href)
	schemeEnd := -1
	if i := bytes.IndexByte(h, ':'); i > 0 && bytes.IndexAny(h[:i], "/?#") < 0 {
		// Has a scheme: skip javascript:, mailto:, tel:, data: and the
		// like without parsing them.
		s := string(h[:i]) // does not allocate: compared only
		if !strings.EqualFold(s, "http") && !strings.EqualFold(s, "https") {
			return nil
		}
		schemeEnd = i
	}
	h = r.escape(h, schemeEnd)
	if r.fast {
		if u, ok := r.fastResolve(h, schemeEnd); ok {
			return u
		}
	}
	return slowResolve(r.base, string(h))
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
	if j := bytes.IndexByte(h, '#'); j >= 0 {
		if bytes.IndexByte(h[j:], '%') >= 0 {
			return nil, false // url.Parse checks the fragment's escapes
		}
		h = h[:j]
	}
	for _, c := range h {
		if !fastChars[c] {
			return nil, false
		}
	}
	path, query, hasQuery := h, []byte(nil), false
	if q := bytes.IndexByte(h, '?'); q >= 0 {
		path, query, hasQuery = h[:q], h[q+1:], true
		if len(query) == 0 {
			return nil, false // ForceQuery
		}
	}
	if schemeEnd < 0 {
		if bytes.HasPrefix(path, []byte("///")) {
			return nil, false // url.Parse keeps it all as the path
		}
		seg := path
		if i := bytes.IndexByte(seg, '/'); i >= 0 {
			seg = seg[:i]
		}
		if bytes.IndexByte(seg, ':') >= 0 {
			return nil, false // url.Parse refuses a colon in a first segment
		}
	}
	out := r.out[:0]
	var schemeLen, hostStart, hostEnd int
	if schemeEnd >= 0 || bytes.HasPrefix(path, []byte("//")) {
		// Absolute or network-path reference.
		var rest []byte
		if schemeEnd >= 0 {
			if !bytes.HasPrefix(path[schemeEnd+1:], []byte("//")) {
				return nil, false
			}
			for _, c := range path[:schemeEnd] {
				out = append(out, lower(c))
			}
			rest = path[schemeEnd+3:]
		} else {
			out = append(out, r.scheme...)
			rest = path[2:]
		}
		schemeLen = len(out)
		out = append(out, "://"...)
		a := bytes.IndexByte(rest, '/')
		if a < 0 {
			a = len(rest)
		}
		if !simpleHost(rest[:a]) {
			return nil, false // userinfo, odd ports, or net/url's special cases
		}
		hostStart = len(out)
		out = append(out, rest[:a]...)
		hostEnd = len(out)
		out = r.appendPath(out, string(rest[a:]), nil)
	} else {
		out = append(out, r.scheme...)
		schemeLen = len(out)
		out = append(out, "://"...)
		hostStart = len(out)
		out = append(out, r.base.Host...)
		hostEnd = len(out)
		out = r.appendPath(out, r.basePath, path)
		if len(path) == 0 && !hasQuery && r.base.RawQuery != "" {
			// An empty or fragment-only href keeps the base's query.
			pathEnd := len(out)
			out = append(out, '?')
			out = append(out, r.base.RawQuery...)
			return r.finish(out, schemeLen, hostStart, hostEnd, pathEnd, true)
		}
	}
	pathEnd := len(out)
	if hasQuery {
		out = append(out, '?')
		out = append(out, query...)
	}
	return r.finish(out, schemeLen, hostStart, hostEnd, pathEnd, hasQuery)
}

// finish makes the url.URL of the absolute URL in out and checks it.
func (r *resolver) finish(out []byte, schemeLen, hostStart, hostEnd, pathEnd int, hasQuery bool) (*url.URL, bool) {
	r.out = out

	s := string(out)
	tmp := url.URL{Scheme: s[:schemeLen], Host: s[hostStart:hostEnd], Path: s[hostEnd:pathEnd]}
	if hasQuery {
		tmp.RawQuery = s[pathEnd+1:]
	}
	if strings.ContainsAny(tmp.Path, "!'()*") {
		// url.URL.setPath: these are valid in a path but escaped by
		// default, so the path as written is kept in RawPath.
		tmp.RawPath = tmp.Path
	}
	c, err := urlnorm.Clean(&tmp)
	if err != nil {
		return nil, true
	}
	return c, true
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
