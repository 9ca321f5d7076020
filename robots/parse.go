package robots

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"sync"
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
	groups   map[string]*Group // by lower-case product token, merged
	global   *Group            // the merged "*" groups, or nil
	sitemaps []string
	clean    []CleanParam
	issues   []issue
	text     string // the file, for the lines of issues
	lines    int    // lines read
}

// Group is the set of rules that applies to one crawler: every group of the
// file that names its product token, merged, or the "*" groups. A nil or
// empty Group allows everything. A Group is immutable and safe for
// concurrent use. It shares the file's text and rules with the other groups
// of the file (one copy of at most MaxSize bytes, 16 bytes per rule).
type Group struct {
	src   string // the file
	rules []rule // the rules of the file, in file order (shared)
	spans []span // the ranges of rules that are this group's

	agent string  // "*" or the lower-case token
	lines []int32 // the first user-agent line of each group merged here

	delay    CrawlDelay
	hasDelay bool

	// The index for matching is built on first use: a crawler uses one or
	// two groups of a file, so parsing does not pay for the others.
	once sync.Once
	idx  *index
}

// span is a range of rules: one group as written.
type span struct{ start, end uint32 }

// rule is an Allow or Disallow record as parsed: offsets into the file,
// so a file's rules cost no allocation each. Its pattern is normalized when
// the group is compiled (see compiled).
type rule struct {
	text    uint32 // offset of the rule as written, without comment
	line    uint32
	textLen uint16 // at most maxLineLen
	value   uint16 // offset of the pattern in the text
	allow   bool
}

var emptyGroup = &Group{}

// AllowAll returns rules that allow every path: the rules of a site whose
// robots.txt does not exist (RFC 9309 §2.3.1.3).
func AllowAll() *Robots { return &Robots{} }

// DisallowAll returns rules that disallow every path but /robots.txt: the
// rules of a site whose robots.txt is unreachable (RFC 9309 §2.3.1.4). The
// deciding rule is reported as "Disallow: /" on line 0.
func DisallowAll() *Robots {
	const text = "Disallow: /"
	g := &Group{src: text, agent: "*", spans: []span{{0, 1}}, rules: []rule{{
		textLen: uint16(len(text)), value: uint16(len(text) - 1),
	}}}
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

// CleanParams returns the Clean-param records (Yandex): query parameters
// that do not change a page's content. The caller must not modify the
// returned slice.
func (r *Robots) CleanParams() []CleanParam {
	if r == nil {
		return nil
	}
	return r.clean
}

// Lines returns the number of lines read.
func (r *Robots) Lines() int {
	if r == nil {
		return 0
	}
	return r.lines
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
	if len(r.groups) > 0 && ValidAgent(agent) {
		var buf [64]byte
		var g *Group
		if len(agent) <= len(buf) {
			g = r.groups[string(lowerTo(buf[:0], agent))]
		} else {
			g = r.groups[strings.ToLower(agent)]
		}
		if g != nil {
			return g
		}
	}
	if r.global != nil {
		return r.global
	}
	return emptyGroup
}

// Agent returns the product token the group was chosen by, in lower case:
// "*" for the global group, "" for the empty group.
func (g *Group) Agent() string {
	if g == nil {
		return ""
	}
	return g.agent
}

// Lines returns, for each group of the file merged into g, the line of its
// first user-agent record, in file order. It is nil for a group that no
// line of the file named.
func (g *Group) Lines() []int {
	if g == nil || len(g.lines) == 0 {
		return nil
	}
	out := make([]int, len(g.lines))
	for i, l := range g.lines {
		out[i] = int(l)
	}
	return out
}

// CrawlDelay is a Crawl-delay record. The value is read as Bing, Yandex
// and most other crawlers that honour it read it: the minimum time between
// the starts of two requests to the host, in seconds, fractions allowed.
// (RFC 9309 does not define the record; Google ignores it.)
type CrawlDelay struct {
	Delay  time.Duration // the value; math.MaxInt64 when it does not fit
	Raw    string        // the value as written
	Line   int           // the record's line
	Absurd bool          // Delay > MaxCrawlDelay: probably a mistake; see MaxCrawlDelay
}

// MaxCrawlDelay is the largest Crawl-delay that is not reported as absurd:
// a longer one allows fewer than one request a day, which is more likely a
// mistake (milliseconds, or a number meant for something else) than a
// wish. Whether to honour, cap or ignore an absurd value is the caller's
// decision.
const MaxCrawlDelay = 24 * time.Hour

// CrawlDelay returns the group's Crawl-delay: the minimum time between the
// starts of two requests to the host. The first valid value in the group
// counts (the first of the merged groups that has one); fractions are
// allowed, negative and unparsable values ignored. The caller decides
// whether and up to what limit to honor it; see CrawlDelayInfo.
func (g *Group) CrawlDelay() (time.Duration, bool) {
	if g == nil {
		return 0, false
	}
	return g.delay.Delay, g.hasDelay
}

// CrawlDelayInfo returns the group's Crawl-delay record (see CrawlDelay)
// with the value as written, its line, and whether it is absurd.
func (g *Group) CrawlDelayInfo() (CrawlDelay, bool) {
	if g == nil {
		return CrawlDelay{}, false
	}
	return g.delay, g.hasDelay
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
	dirCleanParam
)

// rawGroup is a group as written: user-agent lines and the records after
// them. Its rules are contiguous in parser.rules.
type rawGroup struct {
	line      int32 // its first user-agent line
	rules     span
	delay     CrawlDelay
	delayText [2]uint32 // offset and length of delay.Raw in the file
	hasDelay  bool
}

// membership records that a user-agent line of raw group raw named the
// agent with index agent.
type membership struct{ agent, raw int32 }

// parser builds a Robots in one pass over the lines. Rules, issues and
// Crawl-delay values refer to the file by offset; groups naming the same
// agent are merged at the end.
type parser struct {
	src      string // the file (a copy of the body, so the caller may reuse it)
	base     int    // cap of the body slice the lines are cut from; see off
	rules    []rule
	raws     []rawGroup
	inRules  bool // a record other than user-agent was seen since the last user-agent line
	agentIdx map[string]int32
	agents   []string // index → lower-case token; "*" included
	members  []membership
	sitemaps []string
	clean    []CleanParam
	issues   []issue
	scratch  []byte
	lines    int

	// report, when set, sees every non-empty line (for tests and tools).
	report func(line int, d directive, typo bool)
}

// Parse parses a robots.txt body. It never fails: lines that cannot be
// understood are ignored (see Issues). Only the first MaxSize bytes are
// read. A body in UTF-16 (recognized by its byte order mark, or without one
// by ASCII text alternating with NUL bytes) is converted to UTF-8 first;
// robots.txt must be UTF-8 (RFC 9309 §2.2), but the rules of such a file
// are still plainly what its author meant.
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
		p.fileIssue(issueTooLarge)
	}
	if u, kind := fromUTF16(body); kind != 0 {
		body = u
		p.fileIssue(kind)
	}
	// Skip a UTF-8 byte order mark, or as much of one as is there (Google
	// does the same).
	for _, b := range [...]byte{0xEF, 0xBB, 0xBF} {
		if len(body) == 0 || body[0] != b {
			break
		}
		body = body[1:]
	}
	body = body[:len(body):len(body)]
	p.src, p.base = string(body), cap(body)
	p.rules = make([]rule, 0, estimateRules(body))

	// Lines end at LF, CR or CRLF. The next LF and CR are each searched for
	// once, so a file of lone CRs costs no more than one of LFs.
	nextLF, nextCR := -1, -1
	pos, line := 0, 0
	for pos < len(body) {
		line++
		if nextLF < pos {
			nextLF = indexFrom(body, pos, '\n')
		}
		if nextCR < pos {
			nextCR = indexFrom(body, pos, '\r')
		}
		end := min(nextLF, nextCR)
		p.line(body[pos:end], line)
		pos = end + 1
		if end == nextCR && end+1 == nextLF {
			pos++ // CRLF
		}
	}
	p.lines = line
}

// off returns the offset in the file of b, a slice of the body being
// parsed: slicing keeps the end of the backing array, so the start of b is
// as far from it as cap(b) says.
func (p *parser) off(b []byte) uint32 { return uint32(p.base - cap(b)) }

// indexFrom returns the index of c in b at or after from, or len(b).
func indexFrom(b []byte, from int, c byte) int {
	if i := bytes.IndexByte(b[from:], c); i >= 0 {
		return from + i
	}
	return len(b)
}

// estimateRules guesses the number of rules in body from its size, so that
// the rules slice rarely grows.
func estimateRules(body []byte) int {
	return min(len(body)/24+4, 1<<16)
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
	orig := b
	if len(b) > maxLineLen {
		b = cutLine(b, maxLineLen)
		p.issue(num, orig, issueLongLine)
	}
	if i := bytes.IndexByte(b, '#'); i >= 0 {
		b = b[:i]
	}
	b = trimSpace(b)
	if len(b) == 0 {
		return
	}
	var key, value []byte
	noColon := false
	if i := bytes.IndexByte(b, ':'); i >= 0 {
		key, value = trimSpace(b[:i]), trimSpace(b[i+1:])
	} else {
		// Google accepts whitespace instead of the colon, provided the line
		// has exactly two words: "Disallow /x".
		i := indexSpace(b)
		if i < 0 {
			p.reportLine(num, dirUnknown, false)
			p.issue(num, orig, issueNotRecord)
			return
		}
		key, value = b[:i], trimSpace(b[i:])
		if indexSpace(value) >= 0 {
			p.reportLine(num, dirUnknown, false)
			p.issue(num, orig, issueNotRecord)
			return
		}
		noColon = true
	}
	d, typo := classify(key)
	p.reportLine(num, d, typo)
	if d == dirUnknown {
		p.issue(num, orig, unknownKind(key))
		return
	}
	if typo {
		p.issue(num, orig, issueTypo)
	} else if noColon {
		p.issue(num, orig, issueNoColon)
	}
	switch d {
	case dirUserAgent:
		p.userAgent(value, num, orig)
	case dirAllow, dirDisallow:
		if len(p.raws) == 0 {
			p.issue(num, orig, issueOutsideGroup) // RFC 9309 §2.1: rules outside a group are ignored
			return
		}
		p.inRules = true
		if len(value) == 0 {
			// An empty pattern matches nothing (RFC 9309 §2.2.2).
			return
		}
		p.addRule(d == dirAllow, b, value, num)
	case dirCrawlDelay:
		if len(p.raws) == 0 {
			p.issue(num, orig, issueOutsideGroup)
			return
		}
		p.inRules = true
		g := &p.raws[len(p.raws)-1]
		delay, ok := parseDelay(value)
		switch {
		case !ok:
			p.issue(num, orig, issueBadDelay)
		case g.hasDelay:
			p.issue(num, orig, issueSecondDelay)
		default:
			g.delay = CrawlDelay{Delay: delay, Line: num, Absurd: delay > MaxCrawlDelay}
			g.delayText = [2]uint32{p.off(value), uint32(len(value))}
			g.hasDelay = true
		}
	case dirSitemap:
		// Sitemap records are not group members and do not end a group
		// (RFC 9309 §2.2.4).
		if len(value) == 0 {
			p.issue(num, orig, issueEmpty)
			return
		}
		if !hasPrefixFold(value, "http://") && !hasPrefixFold(value, "https://") {
			p.issue(num, orig, issueSitemapRelative)
		}
		p.sitemaps = append(p.sitemaps, string(value))
	case dirCleanParam:
		// Clean-param is not a group member either (Yandex: "intersectional",
		// it may appear anywhere).
		c, kind := parseCleanParam(value, num)
		if kind != 0 {
			p.issue(num, orig, kind)
			return
		}
		p.clean = append(p.clean, c)
	}
}

func (p *parser) reportLine(num int, d directive, typo bool) {
	if p.report != nil {
		p.report(num, d, typo)
	}
}

func (p *parser) userAgent(value []byte, num int, orig []byte) {
	// Consecutive user-agent lines form one group; a user-agent line after
	// another record of a group starts the next one (RFC 9309 §2.1).
	if len(p.raws) == 0 || p.inRules {
		n := uint32(len(p.rules))
		p.raws = append(p.raws, rawGroup{line: int32(num), rules: span{n, n}})
		p.inRules = false
	}
	if len(value) == 0 {
		p.issue(num, orig, issueEmptyAgent) // names no crawler, but joins the group
		return
	}
	var agent []byte
	if value[0] == '*' && (len(value) == 1 || isSpace(value[1])) {
		agent = value[:1]
	} else {
		// Like Google, the product token is the value up to the first
		// character that cannot be part of one: "Foo Bar" and "Foo/1.0"
		// both name "foo".
		n := 0
		for n < len(value) && isAgentByte(value[n]) {
			n++
		}
		if n == 0 {
			p.issue(num, orig, issueBadAgent)
			return
		}
		if n < len(value) {
			p.issue(num, orig, issueAgentCut)
		}
		agent = value[:n]
	}
	p.scratch = lowerBytes(p.scratch[:0], agent)
	idx, ok := p.agentIdx[string(p.scratch)]
	if !ok {
		if p.agentIdx == nil {
			p.agentIdx = make(map[string]int32)
		}
		idx = int32(len(p.agents))
		s := string(p.scratch)
		p.agents = append(p.agents, s)
		p.agentIdx[s] = idx
	}
	raw := int32(len(p.raws) - 1)
	if m := len(p.members); m > 0 {
		// The same agent twice in one group; earlier memberships of the
		// group are few, so look back through them.
		for i := m - 1; i >= 0 && p.members[i].raw == raw; i-- {
			if p.members[i].agent == idx {
				return
			}
		}
	}
	p.members = append(p.members, membership{agent: idx, raw: raw})
}

// addRule adds an Allow or Disallow rule. line is the record as written
// (without comment), value its pattern, a suffix of line.
func (p *parser) addRule(allow bool, line, value []byte, num int) {
	p.rules = append(p.rules, rule{
		text:    p.off(line),
		line:    uint32(num),
		textLen: uint16(len(line)),
		value:   uint16(len(line) - len(value)),
		allow:   allow,
	})
	p.raws[len(p.raws)-1].rules.end = uint32(len(p.rules))
}

// build merges the groups naming the same agent (RFC 9309 §2.2.1).
func (p *parser) build() *Robots {
	r := &Robots{sitemaps: dedupe(p.sitemaps), clean: p.clean, issues: p.issues, text: p.src, lines: p.lines}
	if len(p.agents) == 0 {
		return r
	}

	// Order the memberships by agent (a counting sort keeps file order).
	count := make([]int32, len(p.agents)+1)
	for _, m := range p.members {
		count[m.agent+1]++
	}
	for i := 1; i < len(count); i++ {
		count[i] += count[i-1]
	}
	spans := make([]span, len(p.members))
	lines := make([]int32, len(p.members))
	next := append([]int32(nil), count[:len(p.agents)]...)
	for _, m := range p.members {
		rg := &p.raws[m.raw]
		spans[next[m.agent]] = rg.rules
		lines[next[m.agent]] = rg.line
		next[m.agent]++
	}

	groups := make([]Group, len(p.agents))
	r.groups = make(map[string]*Group, len(p.agents))
	for a, name := range p.agents {
		g := &groups[a]
		lo, hi := count[a], count[a+1]
		g.src, g.agent, g.rules = p.src, name, p.rules
		g.spans = spans[lo:hi:hi]
		g.lines = lines[lo:hi:hi]
		if name == "*" {
			r.global = g
		} else {
			r.groups[name] = g
		}
	}
	// The Crawl-delay of a merged group is the first one in file order.
	for _, m := range p.members {
		g := &groups[m.agent]
		if rg := &p.raws[m.raw]; rg.hasDelay && !g.hasDelay {
			g.delay, g.hasDelay = rg.delay, true
			g.delay.Raw = p.src[rg.delayText[0] : rg.delayText[0]+rg.delayText[1]]
		}
	}
	return r
}

func dedupe(s []string) []string {
	if len(s) < 2 {
		return s
	}
	seen := make(map[string]bool, len(s))
	out := s[:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
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
	k := lowerBytes(buf[:0], key)
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
	case "clean-param":
		return dirCleanParam, false
	case "cleanparam", "clean param", "clean_param":
		return dirCleanParam, true
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

func lowerBytes(dst, b []byte) []byte {
	for _, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

func lowerTo(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

func hasPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && strings.EqualFold(string(b[:len(prefix)]), prefix)
}
