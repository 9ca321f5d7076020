package robots

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxSize is the number of bytes of a robots.txt body that are parsed;
// the rest is ignored (RFC 9309 §2.5 asks crawlers to parse at least
// 500 kibibytes).
const MaxSize = 500 << 10

// maxLineLen is the longest line kept, in bytes; longer lines are cut.
// Google uses 2083*8 bytes including a terminating NUL: eight times the
// longest URL Internet Explorer accepted.
const maxLineLen = 2083*8 - 1

// Robots is a parsed robots.txt file. The zero value and a nil *Robots allow
// everything. A Robots is immutable and safe for concurrent use.
type Robots struct {
	groups   map[string]*Group // by lowercase product token, merged
	global   *Group            // merged "*" groups, or nil
	sitemaps []string
}

// Group is the set of rules that applies to one crawler: every group of the
// file that names its product token, merged, or the "*" groups. A nil or
// empty Group allows everything. A Group is immutable and safe for
// concurrent use.
type Group struct {
	rules []rule // sorted: longest pattern first, Allow before Disallow, then file order

	// With many rules, Match looks only at the rules that can match the
	// path's second byte: byFirst holds the rules whose pattern starts with
	// "/" and a literal byte, by that byte; other holds the rest. Both keep
	// the order of rules. Nil for small groups.
	byFirst  map[byte][]rule
	other    []rule
	delay    time.Duration
	hasDelay bool
}

type rule struct {
	allow    bool
	anchored bool     // the pattern ends in "$"
	line     int      // 1-based line number in the file, 0 if synthesized
	pattern  string   // normalized; its length is the rule's priority
	segs     []string // pattern (without a final "$") split at "*"
	text     string   // the rule as written, for Match.Rule
}

var emptyGroup = &Group{}

// AllowAll returns rules that allow every path: the rules of a site whose
// robots.txt does not exist (RFC 9309 §2.3.1.3).
func AllowAll() *Robots { return &Robots{} }

// DisallowAll returns rules that disallow every path but /robots.txt: the
// rules of a site whose robots.txt is unreachable (RFC 9309 §2.3.1.4).
func DisallowAll() *Robots {
	g := &Group{}
	g.add(false, "/", "Disallow: /", 0)
	g.finish()
	return &Robots{global: g}
}

// Sitemaps returns the values of the Sitemap records, in file order and
// without duplicates. The caller must not modify the returned slice.
func (r *Robots) Sitemaps() []string {
	if r == nil {
		return nil
	}
	return r.sitemaps
}

// Group returns the rules for the crawler whose product token is agent
// (see ValidAgent): the merged groups naming agent, compared without regard
// to case, else the merged "*" groups, else an empty group. It never
// returns nil. An invalid token, such as "Foo Bar" or "Foo/1.0", matches no
// specific group.
func (r *Robots) Group(agent string) *Group {
	if r == nil {
		return emptyGroup
	}
	if ValidAgent(agent) {
		if g, ok := r.groups[strings.ToLower(agent)]; ok {
			return g
		}
	}
	if r.global != nil {
		return r.global
	}
	return emptyGroup
}

// CrawlDelay returns the group's Crawl-delay: the minimum time between the
// starts of two requests to the host. The first valid value in the group
// counts; fractions are allowed, negative and unparsable values ignored.
// The caller decides whether and up to what limit to honor it.
func (g *Group) CrawlDelay() (time.Duration, bool) {
	if g == nil {
		return 0, false
	}
	return g.delay, g.hasDelay
}

// ValidAgent reports whether token is a valid product token for a crawler
// to obey: one or more of A-Z, a-z, "_" and "-" (RFC 9309 §2.2.1).
func ValidAgent(token string) bool {
	if token == "" {
		return false
	}
	for i := 0; i < len(token); i++ {
		if !isAgentByte(token[i]) {
			return false
		}
	}
	return true
}

func isAgentByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '-'
}

// directive is the kind of a robots.txt record.
type directive int

const (
	dirUnknown directive = iota
	dirUserAgent
	dirAllow
	dirDisallow
	dirSitemap
	dirCrawlDelay
)

// parser builds a Robots. Groups are collected as written and merged by
// agent at the end.
type parser struct {
	groups   []*rawGroup
	cur      *rawGroup // group being read, nil before the first user-agent line
	inRules  bool      // a rule was seen since the last user-agent line
	sitemaps []string

	// report, when set, sees every non-empty line (for tests and tools).
	report func(line int, d directive, typo bool)
}

type rawGroup struct {
	agents []string // lowercase tokens; "*" for the global group
	g      Group
}

// Parse parses a robots.txt body. It never fails: lines that cannot be
// understood are ignored. Only the first MaxSize bytes are read.
func Parse(body []byte) *Robots {
	var p parser
	p.parse(body)
	return p.build()
}

func (p *parser) parse(body []byte) {
	if len(body) > MaxSize {
		body = body[:MaxSize]
		// Drop the line cut by the limit: a shortened Allow pattern could
		// allow more than the webmaster wrote.
		if i := lastIndexEOL(body); i >= 0 {
			body = body[:i+1]
		} else {
			body = nil
		}
	}
	// Skip a UTF-8 byte order mark, or as much of one as is there (Google
	// does the same).
	for _, b := range [...]byte{0xEF, 0xBB, 0xBF} {
		if len(body) == 0 || body[0] != b {
			break
		}
		body = body[1:]
	}
	line := 0
	for len(body) > 0 {
		line++
		end := 0
		for end < len(body) && body[end] != '\n' && body[end] != '\r' {
			end++
		}
		p.line(body[:end], line)
		if end < len(body) && body[end] == '\r' && end+1 < len(body) && body[end+1] == '\n' {
			end++
		}
		if end < len(body) {
			end++
		}
		body = body[end:]
	}
}

func lastIndexEOL(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' || b[i] == '\r' {
			return i
		}
	}
	return -1
}

// line handles one line of the file, without its line ending.
func (p *parser) line(b []byte, num int) {
	if len(b) > maxLineLen {
		b = cutLine(b, maxLineLen)
	}
	if i := indexByte(b, '#'); i >= 0 {
		b = b[:i]
	}
	b = trimSpace(b)
	if len(b) == 0 {
		return
	}
	var key, value []byte
	if i := indexByte(b, ':'); i >= 0 {
		key, value = trimSpace(b[:i]), trimSpace(b[i+1:])
	} else {
		// Google accepts whitespace instead of the colon, provided the line
		// has exactly two words: "Disallow /x".
		i := indexSpace(b)
		if i < 0 {
			p.reportLine(num, dirUnknown, false)
			return
		}
		key, value = b[:i], trimSpace(b[i:])
		if indexSpace(value) >= 0 {
			p.reportLine(num, dirUnknown, false)
			return
		}
	}
	d, typo := classify(key)
	p.reportLine(num, d, typo)
	switch d {
	case dirUserAgent:
		p.userAgent(value)
	case dirAllow, dirDisallow:
		if p.cur == nil {
			return // RFC 9309 §2.1: rules outside a group are ignored.
		}
		p.inRules = true
		if len(value) == 0 {
			// An empty pattern matches nothing (RFC 9309 §2.2.2).
			return
		}
		p.cur.g.addRule(d == dirAllow, string(value), num)
	case dirCrawlDelay:
		if p.cur == nil {
			return
		}
		p.inRules = true
		if d, ok := parseDelay(value); ok && !p.cur.g.hasDelay {
			p.cur.g.delay, p.cur.g.hasDelay = d, true
		}
	case dirSitemap:
		// Sitemap records are not group members and do not end a group
		// (RFC 9309 §2.2.4).
		if len(value) > 0 {
			p.sitemaps = append(p.sitemaps, string(value))
		}
	}
}

func (p *parser) reportLine(num int, d directive, typo bool) {
	if p.report != nil {
		p.report(num, d, typo)
	}
}

func (p *parser) userAgent(value []byte) {
	// Consecutive user-agent lines form one group; a user-agent line after
	// a rule starts the next one (RFC 9309 §2.1).
	if p.cur == nil || p.inRules {
		p.cur = &rawGroup{}
		p.groups = append(p.groups, p.cur)
		p.inRules = false
	}
	if len(value) == 0 {
		return // an empty user-agent names no crawler
	}
	var agent string
	if value[0] == '*' && (len(value) == 1 || isSpace(value[1])) {
		agent = "*"
	} else {
		// Like Google, the product token is the value up to the first
		// character that cannot be part of one: "Foo Bar" and "Foo/1.0"
		// both name "foo".
		n := 0
		for n < len(value) && isAgentByte(value[n]) {
			n++
		}
		if n == 0 {
			return
		}
		agent = strings.ToLower(string(value[:n]))
	}
	for _, a := range p.cur.agents {
		if a == agent {
			return
		}
	}
	p.cur.agents = append(p.cur.agents, agent)
}

// build merges the groups naming the same agent (RFC 9309 §2.2.1).
func (p *parser) build() *Robots {
	r := &Robots{}
	for _, rg := range p.groups {
		for _, a := range rg.agents {
			var g *Group
			if a == "*" {
				if r.global == nil {
					r.global = &Group{}
				}
				g = r.global
			} else {
				if r.groups == nil {
					r.groups = make(map[string]*Group)
				}
				g = r.groups[a]
				if g == nil {
					g = &Group{}
					r.groups[a] = g
				}
			}
			g.rules = append(g.rules, rg.g.rules...)
			if rg.g.hasDelay && !g.hasDelay {
				g.delay, g.hasDelay = rg.g.delay, true
			}
		}
	}
	for _, g := range r.groups {
		g.finish()
	}
	if r.global != nil {
		r.global.finish()
	}
	seen := make(map[string]bool, len(p.sitemaps))
	for _, s := range p.sitemaps {
		if !seen[s] {
			seen[s] = true
			r.sitemaps = append(r.sitemaps, s)
		}
	}
	return r
}

// addRule adds an Allow or Disallow rule with the value as written.
func (g *Group) addRule(allow bool, value string, line int) {
	name := "Disallow: "
	if allow {
		name = "Allow: "
	}
	text := name + value
	g.add(allow, value, text, line)
	if allow {
		// Google treats "index.htm" and "index.html" as the directory
		// itself: "Allow: /d/index.html" also allows "/d/" (exactly).
		if i := strings.LastIndexByte(value, '/'); i >= 0 && strings.HasPrefix(value[i:], "/index.htm") {
			g.add(true, value[:i+1]+"$", text, line)
		}
	}
}

func (g *Group) add(allow bool, value, text string, line int) {
	pat := normalize(nil, value)
	r := rule{allow: allow, line: line, pattern: pat, text: text}
	body := pat
	if strings.HasSuffix(body, "$") {
		r.anchored = true
		body = body[:len(body)-1]
	}
	r.segs = strings.Split(body, "*")
	g.rules = append(g.rules, r)
}

// finish sorts the rules so that the first match is the decision: longest
// pattern first, Allow before Disallow on equal length (RFC 9309 §2.2.2),
// then file order.
func (g *Group) finish() {
	sortRules(g.rules)
	if len(g.rules) < indexMin {
		return
	}
	g.byFirst = make(map[byte][]rule)
	for _, r := range g.rules {
		if c, ok := firstByte(&r); ok {
			g.byFirst[c] = append(g.byFirst[c], r)
		} else {
			g.other = append(g.other, r)
		}
	}
}

// indexMin is the number of rules from which a group is indexed.
const indexMin = 32

// firstByte returns the byte a path must have after its leading "/" for
// the rule to match.
func firstByte(r *rule) (byte, bool) {
	if s := r.segs[0]; len(s) >= 2 && s[0] == '/' {
		return s[1], true
	}
	return 0, false
}

// parseDelay parses a Crawl-delay value in seconds: digits with an optional
// fraction. Signs, exponents, "NaN" and "Inf" are refused.
func parseDelay(v []byte) (time.Duration, bool) {
	if len(v) == 0 {
		return 0, false
	}
	dots, digits := 0, 0
	for _, c := range v {
		switch {
		case c == '.':
			dots++
		case '0' <= c && c <= '9':
			digits++
		default:
			return 0, false
		}
	}
	if dots > 1 || digits == 0 {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || f < 0 || math.IsNaN(f) {
		return 0, false
	}
	if f >= float64(math.MaxInt64)/float64(time.Second) {
		return time.Duration(math.MaxInt64), true
	}
	return time.Duration(math.Round(f * float64(time.Second))), true
}

// classify recognizes a record's key, case-insensitively, with the
// misspellings Google accepts.
func classify(key []byte) (d directive, typo bool) {
	var buf [16]byte
	if len(key) > len(buf) {
		return dirUnknown, false
	}
	k := buf[:len(key)]
	for i, c := range key {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		k[i] = c
	}
	switch string(k) {
	case "user-agent":
		return dirUserAgent, false
	case "useragent", "user agent", "user_agent":
		return dirUserAgent, true
	case "allow":
		return dirAllow, false
	case "disallow":
		return dirDisallow, false
	case "dissallow", "dissalow", "disalow", "diasllow", "disallaw":
		return dirDisallow, true
	case "sitemap":
		return dirSitemap, false
	case "site-map":
		return dirSitemap, true
	case "crawl-delay":
		return dirCrawlDelay, false
	case "crawldelay", "crawl delay", "crawl_delay":
		return dirCrawlDelay, true
	}
	return dirUnknown, false
}

// cutLine shortens an over-long line to at most n bytes without splitting
// a UTF-8 sequence or a percent-escape, so the kept part is still a
// well-formed, shorter pattern.
func cutLine(b []byte, n int) []byte {
	if n < len(b) && isContinuation(b[n]) {
		i := n
		for i > 0 && n-i < utf8.UTFMax-1 && isContinuation(b[i-1]) {
			i--
		}
		if i > 0 && b[i-1] >= 0xC0 {
			i-- // the lead byte of the cut sequence
		}
		n = i
	}
	b = b[:n]
	if l := len(b); l >= 1 && b[l-1] == '%' {
		b = b[:l-1]
	} else if l >= 2 && b[l-2] == '%' {
		b = b[:l-2]
	}
	return b
}

func isContinuation(c byte) bool { return c&0xC0 == 0x80 }

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

func indexSpace(b []byte) int {
	for i, x := range b {
		if isSpace(x) {
			return i
		}
	}
	return -1
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' || c == '\n'
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}
