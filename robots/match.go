package robots

import (
	"slices"
	"strings"
)

// Match is the decision for one path and the rule that made it.
type Match struct {
	Allowed bool
	Rule    string // the deciding rule as written, e.g. "Disallow: /private/"; "" when no rule matched
	Line    int    // the rule's 1-based line in the file; 0 when no rule matched or the rule is synthesized
}

// Allowed reports whether the group allows pathQuery: the URL's escaped
// path plus "?" and the query, if any. The empty string means "/". It does
// not allocate.
func (g *Group) Allowed(pathQuery string) bool {
	return g.Match(pathQuery).Allowed
}

// pathBufSize bounds the paths normalized on the stack; Match allocates
// only for longer paths that need normalizing.
const pathBufSize = 2048

// Match returns the decision for pathQuery (see Allowed) and the rule that
// decided it: the matching rule with the longest pattern, Allow winning a
// tie (RFC 9309 §2.2.2). Without a matching rule the path is allowed.
// "/robots.txt" is always allowed (RFC 9309 §2.2.2).
func (g *Group) Match(pathQuery string) Match {
	var buf [pathBufSize]byte
	if norm, changed := normalizePath(buf[:0], pathQuery); changed {
		return decide(g, norm)
	}
	return decide(g, pathQuery)
}

// text is a path to match: the caller's string when it needed no
// normalizing, else the normalized bytes (which must not escape to the
// heap, so they are never converted to a string).
type text interface{ ~string | ~[]byte }

func decide[T text](g *Group, p T) Match {
	if isRobotsTxt(p) {
		return Match{Allowed: true}
	}
	if g == nil {
		return Match{Allowed: true}
	}
	if g.byFirst == nil {
		if r := first(g.rules, p); r != nil {
			return Match{Allowed: r.allow, Rule: r.text, Line: r.line}
		}
		return Match{Allowed: true}
	}
	var a, b *rule
	if len(p) >= 2 { // a normalized path starts with "/"
		a = first(g.byFirst[p[1]], p)
	}
	b = first(g.other, p)
	if a == nil || b != nil && before(b, a) {
		a = b
	}
	if a != nil {
		return Match{Allowed: a.allow, Rule: a.text, Line: a.line}
	}
	return Match{Allowed: true}
}

// first returns the first rule of rules that matches p, or nil.
func first[T text](rules []rule, p T) *rule {
	for i := range rules {
		if matches(&rules[i], p) {
			return &rules[i]
		}
	}
	return nil
}

func isRobotsTxt[T text](p T) bool {
	const name = "/robots.txt"
	if len(p) < len(name) || !hasPrefixAt(p, 0, name) {
		return false
	}
	return len(p) == len(name) || p[len(name)] == '?'
}

// matches reports whether the rule's pattern matches p. The pattern's
// literal segments, separated by "*", are found leftmost-first, which is
// correct for "*" wildcards and needs at most len(pattern)*len(p) byte
// comparisons, usually about len(p). Without a final "$" the pattern only
// has to match a prefix of p.
func matches[T text](r *rule, p T) bool {
	segs := r.segs
	first := segs[0]
	if !hasPrefixAt(p, 0, first) {
		return false
	}
	pos := len(first)
	last := len(segs) - 1
	if last == 0 {
		return !r.anchored || pos == len(p)
	}
	for _, s := range segs[1:last] {
		j := index(p, pos, s)
		if j < 0 {
			return false
		}
		pos = j + len(s)
	}
	s := segs[last]
	if r.anchored {
		return len(p)-len(s) >= pos && hasPrefixAt(p, len(p)-len(s), s)
	}
	return index(p, pos, s) >= 0
}

// hasPrefixAt reports whether p[i:] starts with s.
func hasPrefixAt[T text](p T, i int, s string) bool {
	if len(p)-i < len(s) {
		return false
	}
	for k := 0; k < len(s); k++ {
		if p[i+k] != s[k] {
			return false
		}
	}
	return true
}

// index returns the smallest j >= from where p[j:] starts with s, or -1.
func index[T text](p T, from int, s string) int {
	if len(s) == 0 {
		return from
	}
	c := s[0]
	for j := from; j <= len(p)-len(s); j++ {
		if p[j] == c && hasPrefixAt(p, j+1, s[1:]) {
			return j
		}
	}
	return -1
}

// normalizePath appends the normalized form of a path to dst (see
// normalizeTo) and reports whether it differs from p. When it does not,
// dst is returned unchanged.
func normalizePath(dst []byte, p string) ([]byte, bool) {
	if p != "" && p[0] == '/' && !needsNormalizing(p) {
		return dst, false
	}
	if p == "" || p[0] != '/' {
		dst = append(dst, '/')
	}
	return normalizeTo(dst, p), true
}

// normalize returns the normalized form of a pattern.
func normalize(dst []byte, p string) string {
	if !needsNormalizing(p) {
		return p
	}
	return string(normalizeTo(dst, p))
}

func needsNormalizing(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c <= ' ' || c >= 0x7f {
			return true
		}
		if c == '%' && i+2 < len(p) && isHex(p[i+1]) && isHex(p[i+2]) {
			if d := unhex(p[i+1])<<4 | unhex(p[i+2]); isUnreserved(d) ||
				isLowerHex(p[i+1]) || isLowerHex(p[i+2]) {
				return true
			}
		}
	}
	return false
}

const upperhex = "0123456789ABCDEF"

// normalizeTo appends p to dst with percent-encoding normalized as RFC 9309
// §2.2.2 and RFC 3986 §6.2.2 ask: escaped unreserved characters are
// decoded, the hex digits of other escapes uppercased, and bytes that may
// not appear raw in a URL (non-ASCII, space, controls) escaped. A "%" not
// followed by two hex digits is kept as it is.
func normalizeTo(dst []byte, p string) []byte {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '%' && i+2 < len(p) && isHex(p[i+1]) && isHex(p[i+2]):
			d := unhex(p[i+1])<<4 | unhex(p[i+2])
			if isUnreserved(d) {
				dst = append(dst, d)
			} else {
				dst = append(dst, '%', upperhex[d>>4], upperhex[d&15])
			}
			i += 2
		case c <= ' ' || c >= 0x7f:
			dst = append(dst, '%', upperhex[c>>4], upperhex[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isLowerHex(c byte) bool { return 'a' <= c && c <= 'f' }

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

// sortRules sorts rules into decision order: longest pattern first, Allow
// before Disallow on equal length (RFC 9309 §2.2.2), then file order.
func sortRules(rules []rule) {
	slices.SortFunc(rules, func(a, b rule) int { return compareRules(&a, &b) })
}

func before(a, b *rule) bool { return compareRules(a, b) < 0 }

func compareRules(a, b *rule) int {
	if len(a.pattern) != len(b.pattern) {
		return len(b.pattern) - len(a.pattern)
	}
	if a.allow != b.allow {
		if a.allow {
			return -1
		}
		return 1
	}
	return a.line - b.line
}

// AllowedURL reports whether agent may fetch rawURL under the robots.txt
// body. It is a convenience for tests and tools; a crawler parses once and
// keeps the Group. The path is taken from rawURL the way Google's library
// does, which also accepts URLs without a scheme.
func AllowedURL(body []byte, agent, rawURL string) bool {
	return Parse(body).Group(agent).Allowed(pathQuery(rawURL))
}

// pathQuery returns the path, params and query of a URL, without the
// fragment; "/" when there is no path.
func pathQuery(u string) string {
	start := 0
	if strings.HasPrefix(u, "//") {
		start = 2
	}
	early := indexAny(u, start, "/?;")
	proto := strings.Index(u[start:], "://")
	if proto >= 0 {
		proto += start
	}
	if proto < 0 || early >= 0 && early < proto {
		proto = start // "://" inside the path is not a scheme separator
	} else {
		proto += 3
	}
	ps := indexAny(u, proto, "/?;")
	if ps < 0 {
		return "/"
	}
	end := len(u)
	if h := strings.IndexByte(u[start:], '#'); h >= 0 {
		h += start
		if h < ps {
			return "/"
		}
		end = h
	}
	if u[ps] != '/' {
		return "/" + u[ps:end]
	}
	return u[ps:end]
}

func indexAny(s string, from int, chars string) int {
	if i := strings.IndexAny(s[from:], chars); i >= 0 {
		return i + from
	}
	return -1
}
