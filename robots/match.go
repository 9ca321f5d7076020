package robots

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"strings"
)

// Match is the decision for one path and the rule that made it.
type Match struct {
	Allowed bool
	Rule    string // the deciding rule as written, without its comment, e.g. "Disallow: /private/"; "" when no rule matched
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
// "/robots.txt" is always allowed (RFC 9309 §2.2.2). It does not allocate.
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
	if isRobotsTxt(p) || g == nil || len(g.spans) == 0 {
		return Match{Allowed: true}
	}
	g.once.Do(g.compile)
	if r := lookup(g.idx, p); r != nil {
		orig := &g.rules[r.rule]
		return Match{Allowed: r.allow(), Rule: g.src[orig.text : orig.text+uint32(orig.textLen)], Line: int(orig.line)}
	}
	return Match{Allowed: true}
}

// compiled is a rule ready for matching.
type compiled struct {
	key    uint64 // priority, higher wins: pattern length, then Allow, then file order
	pat    uint32 // offset of the normalized pattern in index.pats, without a final "$"
	rule   uint32 // index in Group.rules
	patLen uint16 // at most 3*maxLineLen, for a pattern of escaped bytes
	lit    uint16 // length of the pattern's literal prefix, before the first "*"
	flags  uint8

	// need is the set of bytes of the pattern after its literal prefix
	// (patterns are ASCII once normalized): a path that lacks one of them
	// cannot match, which rules out most wildcard rules with one AND.
	need byteSet
}

// byteSet is a set of ASCII bytes.
type byteSet [2]uint64

func (s *byteSet) add(c byte) { s[c>>6&1] |= 1 << (c & 63) }

// within reports whether every byte of s is in t.
func (s *byteSet) within(t *byteSet) bool { return s[0]&^t[0] == 0 && s[1]&^t[1] == 0 }

const (
	ruleAllow    = 1 << iota // an Allow rule
	ruleAnchored             // the pattern ends in "$"
)

// ruleKey is the priority of a rule: the longest pattern wins, Allow wins a
// tie (RFC 9309 §2.2.2), then the earlier rule (for reporting).
func ruleKey(length int, allow bool, seq int) uint64 {
	k := uint64(length)<<32 | uint64(math.MaxInt32-seq)
	if allow {
		k |= 1 << 31
	}
	return k
}

func (r *compiled) allow() bool { return r.flags&ruleAllow != 0 }

// pattern returns the rule's normalized pattern, without a final "$".
func (r *compiled) pattern(x *index) string { return x.pats[r.pat : r.pat+uint32(r.patLen)] }

// index finds the rules that can match a path without trying them all.
//
// Every rule has a literal prefix: its pattern up to the first "*". A rule
// can match a path only if its literal prefix is a prefix of the path. The
// index keeps the distinct literal prefixes sorted (nodes), each with a
// link to the longest other node that is a prefix of it (parent). For a
// path p, let i be the last node <= p: every node that is a prefix of p
// lies between that node and p in sorted order, so it is a prefix of node
// i and therefore on i's parent chain. Matching is a binary search and a
// walk up a chain as long as the nesting of the prefixes, trying at each
// node only its own rules, best first, and stopping as soon as no rule on
// the rest of the chain can beat the best match found.
type index struct {
	pats  string     // the normalized patterns
	rules []compiled // by literal prefix, best first within one
	nodes []node
}

type node struct {
	lit        string // the literal prefix
	parent     int32  // the longest node that is a proper prefix of lit, or -1
	first, end uint32 // the node's rules in index.rules
	maxKey     uint64 // the best key of the rules of this node and its ancestors
}

// compile builds g.idx. It runs once, on the first match: a crawler uses
// one or two groups of a file, so parsing does not pay for the others.
func (g *Group) compile() {
	n := 0
	for _, s := range g.spans {
		n += int(s.end - s.start)
	}
	rules := make([]compiled, 0, n+n/8)
	pats := make([]byte, 0, 32*n)
	for _, s := range g.spans {
		for i := s.start; i < s.end; i++ {
			r := &g.rules[i]
			value := g.src[r.text+uint32(r.value) : r.text+uint32(r.textLen)]
			c := compiled{pat: uint32(len(pats)), rule: i}
			if needsNormalizing(value) {
				pats = normalizeTo(pats, value)
			} else {
				pats = append(pats, value...)
			}
			pattern := pats[c.pat:]
			c.key = ruleKey(len(pattern), r.allow, 2*int(i))
			if r.allow {
				c.flags |= ruleAllow
			}
			if pattern[len(pattern)-1] == '$' {
				c.flags |= ruleAnchored
				pattern = pattern[:len(pattern)-1]
			}
			c.patLen = uint16(len(pattern))
			c.lit = c.patLen
			if j := bytes.IndexByte(pattern, '*'); j >= 0 {
				c.lit = uint16(j)
				for _, b := range pattern[j+1:] {
					if b != '*' {
						c.need.add(b)
					}
				}
			}
			rules = append(rules, c)
			if r.allow {
				// Google treats "index.htm" and "index.html" as the
				// directory itself: "Allow: /d/index.html" also allows
				// "/d/" (exactly).
				if j := bytes.LastIndexByte(pattern, '/'); j >= 0 && bytes.HasPrefix(pattern[j:], []byte("/index.htm")) {
					d := c
					d.flags |= ruleAnchored
					d.patLen = uint16(j + 1)
					d.lit = min(d.lit, d.patLen)
					// What the shorter pattern needs of a path, not the
					// whole one's ("*/index.htm" → "*/" needs only '/').
					d.need = byteSet{}
					if k := bytes.IndexByte(pattern[:j+1], '*'); k >= 0 {
						for _, b := range pattern[k+1 : j+1] {
							if b != '*' {
								d.need.add(b)
							}
						}
					}
					d.key = ruleKey(j+2, true, 2*int(i)+1)
					rules = append(rules, d)
				}
			}
		}
	}
	x := &index{}
	g.idx = x
	x.pats = string(pats)
	lit := func(r *compiled) string { return x.pats[r.pat : r.pat+uint32(r.lit)] }
	rules = sortRules(rules, lit)
	nodes := make([]node, 0, len(rules))
	var stack []int32 // the chain of nodes that are prefixes of the current one
	for i := 0; i < len(rules); {
		s := lit(&rules[i])
		j := i + 1
		for j < len(rules) && lit(&rules[j]) == s {
			j++
		}
		for len(stack) > 0 && !strings.HasPrefix(s, nodes[stack[len(stack)-1]].lit) {
			stack = stack[:len(stack)-1]
		}
		n := node{lit: s, parent: -1, first: uint32(i), end: uint32(j), maxKey: rules[i].key}
		if len(stack) > 0 {
			n.parent = stack[len(stack)-1]
			n.maxKey = max(n.maxKey, nodes[n.parent].maxKey)
		}
		stack = append(stack, int32(len(nodes)))
		nodes = append(nodes, n)
		i = j
	}
	x.rules, x.nodes = rules, nodes
}

// sortKey orders rules by literal prefix, then best first. The first 16
// bytes of the prefix are compared as two integers; normalized patterns
// have no NUL bytes, so the zero padding of a shorter prefix sorts it
// first, as string comparison does.
type sortKey struct {
	hi, lo uint64
	key    uint64
	i      uint32
}

func prefixWord(s string) uint64 {
	var w uint64
	for i := range 8 {
		w <<= 8
		if i < len(s) {
			w |= uint64(s[i])
		}
	}
	return w
}

// sortRules returns rules sorted by literal prefix, best first within one.
func sortRules(rules []compiled, lit func(*compiled) string) []compiled {
	keys := make([]sortKey, len(rules))
	for i := range rules {
		s := lit(&rules[i])
		k := sortKey{hi: prefixWord(s), key: rules[i].key, i: uint32(i)}
		if len(s) > 8 {
			k.lo = prefixWord(s[8:])
		}
		keys[i] = k
	}
	slices.SortFunc(keys, func(a, b sortKey) int {
		if a.hi != b.hi {
			return cmp.Compare(a.hi, b.hi)
		}
		if a.lo != b.lo {
			return cmp.Compare(a.lo, b.lo)
		}
		if sa, sb := lit(&rules[a.i]), lit(&rules[b.i]); len(sa) > 16 || len(sb) > 16 {
			if c := strings.Compare(sa[min(16, len(sa)):], sb[min(16, len(sb)):]); c != 0 {
				return c
			}
		}
		return cmp.Compare(b.key, a.key) // best first
	})
	sorted := make([]compiled, len(rules))
	for i, k := range keys {
		sorted[i] = rules[k.i]
	}
	return sorted
}

// lookup returns the deciding rule for p, or nil.
func lookup[T text](x *index, p T) *compiled {
	// The last node whose literal prefix is <= p.
	lo, hi := 0, len(x.nodes)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if compare(x.nodes[m].lit, p) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	var best *compiled
	var bestKey uint64
	var have byteSet // the bytes of p, once a wildcard rule needs them
	haveSet := false
	for i := int32(lo - 1); i >= 0; {
		n := &x.nodes[i]
		if n.maxKey <= bestKey {
			break
		}
		if hasPrefixAt(p, 0, n.lit) {
			for k := n.first; k < n.end; k++ {
				r := &x.rules[k]
				if r.key <= bestKey {
					break
				}
				if r.lit != r.patLen {
					if !haveSet {
						for j := 0; j < len(p); j++ {
							have.add(p[j])
						}
						haveSet = true
					}
					if !r.need.within(&have) {
						continue
					}
				}
				if matchRest(x, r, p) {
					best, bestKey = r, r.key
					break
				}
			}
		}
		i = n.parent
	}
	return best
}

// compare compares s and p like strings.Compare.
func compare[T text](s string, p T) int {
	n := min(len(s), len(p))
	for i := 0; i < n; i++ {
		if s[i] != p[i] {
			if s[i] < p[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(s) < len(p):
		return -1
	case len(s) > len(p):
		return 1
	}
	return 0
}

func isRobotsTxt[T text](p T) bool {
	const name = "/robots.txt"
	if len(p) < len(name) || !hasPrefixAt(p, 0, name) {
		return false
	}
	return len(p) == len(name) || p[len(name)] == '?'
}

// matchRest reports whether rule r matches p, whose start is known to
// equal the rule's literal prefix.
func matchRest[T text](x *index, r *compiled, p T) bool {
	pat := r.pattern(x)
	anchored := r.flags&ruleAnchored != 0
	if int(r.lit) == len(pat) {
		return !anchored || len(p) == len(pat)
	}
	return matchSegments(pat[r.lit+1:], int(r.lit), anchored, p)
}

// matchGlob reports whether pattern (without a final "$"; anchored says
// whether it had one) matches p.
func matchGlob[T text](pattern string, anchored bool, p T) bool {
	lit := strings.IndexByte(pattern, '*')
	if lit < 0 {
		if !hasPrefixAt(p, 0, pattern) {
			return false
		}
		return !anchored || len(p) == len(pattern)
	}
	if !hasPrefixAt(p, 0, pattern[:lit]) {
		return false
	}
	return matchSegments(pattern[lit+1:], lit, anchored, p)
}

// matchSegments matches the rest of a pattern, after a "*", against p from
// pos. The literal segments between the "*"s are found leftmost-first,
// which is correct for "*" wildcards and needs at most len(pattern)*len(p)
// byte comparisons, usually about len(p). Without a final "$" the pattern
// only has to match a prefix of p.
func matchSegments[T text](rest string, pos int, anchored bool, p T) bool {
	for {
		i := strings.IndexByte(rest, '*')
		if i < 0 {
			break
		}
		j := indexAt(p, pos, rest[:i])
		if j < 0 {
			return false
		}
		pos = j + i
		rest = rest[i+1:]
	}
	if anchored {
		return len(p)-len(rest) >= pos && hasPrefixAt(p, len(p)-len(rest), rest)
	}
	return indexAt(p, pos, rest) >= 0
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

// indexAt returns the smallest j >= from where p[j:] starts with s, or -1.
func indexAt[T text](p T, from int, s string) int {
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

func needsNormalizing[T text](p T) bool {
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
func normalizeTo[T text](dst []byte, p T) []byte {
	start := 0 // of the run of bytes kept as they are
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '%' && i+2 < len(p) && isHex(p[i+1]) && isHex(p[i+2]):
			dst = append(dst, p[start:i]...)
			d := unhex(p[i+1])<<4 | unhex(p[i+2])
			if isUnreserved(d) {
				dst = append(dst, d)
			} else {
				dst = append(dst, '%', upperhex[d>>4], upperhex[d&15])
			}
			i += 2
			start = i + 1
		case c <= ' ' || c >= 0x7f:
			dst = append(dst, p[start:i]...)
			dst = append(dst, '%', upperhex[c>>4], upperhex[c&15])
			start = i + 1
		}
	}
	return append(dst, p[start:]...)
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

// AllowedURL reports whether agent may fetch rawURL under the robots.txt
// body. It is a convenience for tests and tools; a crawler parses once and
// keeps the Group. The path is taken from rawURL the way Google's library
// does, which also accepts URLs without a scheme.
func AllowedURL(body []byte, agent, rawURL string) bool {
	return Parse(body).Group(agent).Allowed(PathQuery(rawURL))
}

// PathQuery returns the part of a URL that robots.txt rules match: the
// path, params and query, without the fragment; "/" when there is no path.
// It takes the path the way Google's library does, which also accepts
// URLs without a scheme ("example.com/a?b").
func PathQuery(u string) string {
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
