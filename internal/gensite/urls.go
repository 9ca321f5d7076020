package gensite

import (
	"net/url"
	"strconv"
	"strings"
)

// kv is one query parameter; qs is a query in the order it is written.
type kv struct{ k, v string }
type qs []kv

// escape percent-encodes what a query value or path segment must not hold
// raw, leaving the characters the generated URLs use (letters, digits,
// "-_.~,:") as they are, the way templates print them.
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '_', c == '.', c == '~', c == ',', c == ':':
			b.WriteByte(c)
		default:
			b.WriteString("%" + strings.ToUpper(strconv.FormatUint(uint64(c)>>4, 16)+strconv.FormatUint(uint64(c)&15, 16)))
		}
	}
	return b.String()
}

func (q qs) String() string {
	var b strings.Builder
	for i, p := range q {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(escape(p.k))
		b.WriteByte('=')
		b.WriteString(escape(p.v))
	}
	return b.String()
}

// uri joins a path and a query.
func uri(path string, q qs) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.String()
}

// addParam appends k=v to u.
func addParam(u, k, v string) string {
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + escape(k) + "=" + escape(v)
}

// params is a request's query being consumed by a decoder: every name it
// takes is marked, and a request whose query holds a name no decoder took
// is unknown (404).
type params struct {
	m    url.Values
	used map[string]bool
}

func newParams(m url.Values) *params { return &params{m: m, used: map[string]bool{}} }

func (p *params) get(name string) (string, bool) {
	if name == "" {
		return "", false
	}
	vs, ok := p.m[name]
	if !ok {
		return "", false
	}
	p.used[name] = true
	return vs[0], true
}

func (p *params) has(name string) bool { _, ok := p.m[name]; return ok && name != "" }

// done reports whether every parameter of the request was taken.
func (p *params) done() bool {
	for k := range p.m {
		if !p.used[k] {
			return false
		}
	}
	return true
}

// empty reports whether no parameter is left to take.
func (p *params) empty() bool { return p.done() }

// atoi parses a canonical decimal number: no sign, no leading zeros.
func atoi(s string) (int, bool) {
	if s == "" || len(s) > 12 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// pageStyle is how one kind of list writes its page number.
type pageStyle struct {
	mode   int    // pgNum: name=N; pgOffset: name=(N-1)*per; pgPath: a path suffix
	name   string // query parameter of pgNum and pgOffset
	suffix string // pgPath: format with one %d, appended to a base ending in "/"
}

const (
	pgNum = iota
	pgOffset
	pgPath
)

var pathSuffixes = []string{"page/%d/", "page-%d/", "p/%d/", "page-%d"}

func (ps pageStyle) pathFor(n int) string {
	return strings.Replace(ps.suffix, "%d", strconv.Itoa(n), 1)
}

// apply writes page n of a list at path?q. explicit writes page 1 too (the
// first page then carries its default value, as many pagers print it).
func (ps pageStyle) apply(path string, q qs, n, per int, explicit bool) string {
	if n == 1 && !explicit {
		return uri(path, q)
	}
	switch ps.mode {
	case pgNum:
		q = append(append(qs(nil), q...), kv{ps.name, strconv.Itoa(n)})
	case pgOffset:
		q = append(append(qs(nil), q...), kv{ps.name, strconv.Itoa((n - 1) * per)})
	case pgPath:
		path += ps.pathFor(n)
	}
	return uri(path, q)
}

// value is the parameter value of page n of a query style.
func (ps pageStyle) value(n, per int) string {
	if ps.mode == pgOffset {
		return strconv.Itoa((n - 1) * per)
	}
	return strconv.Itoa(n)
}

// stripPath removes a path page suffix: it returns the base, the page
// number (1 when there is none) and whether the suffix was written.
func (ps pageStyle) stripPath(path string) (string, int, bool) {
	if ps.mode != pgPath {
		return path, 1, false
	}
	i := strings.Index(ps.suffix, "%d")
	pre, post := ps.suffix[:i], ps.suffix[i+2:]
	if !strings.HasSuffix(path, post) {
		return path, 1, false
	}
	rest := path[:len(path)-len(post)]
	// The suffix may span a slash ("page/%d/"), so look for pre at the
	// right place rather than at the last slash.
	head := rest
	digits := ""
	for len(head) > 0 && head[len(head)-1] >= '0' && head[len(head)-1] <= '9' {
		digits = head[len(head)-1:] + digits
		head = head[:len(head)-1]
	}
	if digits == "" || !strings.HasSuffix(head, pre) {
		return path, 1, false
	}
	n, ok := atoi(digits)
	if !ok {
		return path, 0, true // a malformed number: unknown
	}
	base := head[:len(head)-len(pre)]
	if !strings.HasSuffix(base, "/") {
		return path, 1, false
	}
	return base, n, true
}

// fromQuery reads the page number of a query style. It returns n=0 for a
// malformed or misaligned value.
func (ps pageStyle) fromQuery(p *params, per int) (n int, explicit bool) {
	if ps.mode == pgPath {
		return 1, false
	}
	s, ok := p.get(ps.name)
	if !ok {
		return 1, false
	}
	v, ok := atoi(s)
	if !ok {
		return 0, true
	}
	if ps.mode == pgNum {
		if v < 1 {
			return 0, true
		}
		return v, true
	}
	if v%per != 0 {
		return 0, true
	}
	return v/per + 1, true
}

// describe names the style for Describe.
func (ps pageStyle) describe(per int) string {
	switch ps.mode {
	case pgNum:
		return "?" + ps.name + "=N"
	case pgOffset:
		return "?" + ps.name + "=" + strconv.Itoa(per) + "·k"
	}
	return strings.Replace(ps.suffix, "%d", "N", 1)
}

// drawPageStyle draws a pagination style; a path suffix only when
// pathOK (the lists' paths end in "/").
func (c *common) drawPageStyle(r *rng, pathOK bool) pageStyle {
	modes := []int{pgNum, pgNum, pgOffset}
	if pathOK {
		modes = append(modes, pgPath, pgPath)
	}
	switch pick(r, modes) {
	case pgNum:
		return pageStyle{mode: pgNum, name: c.param(r, "page", "p", "pg", "paged", "pagenum")}
	case pgOffset:
		return pageStyle{mode: pgOffset, name: c.param(r, "start", "offset", "from", "skip")}
	}
	return pageStyle{mode: pgPath, suffix: pick(r, pathSuffixes)}
}

// pager returns the page numbers a template links from page cur of total:
// all when few, else the first, the last, a window around cur and every
// tenth page — the usual "1 … 4 5 [6] 7 8 … 10 … 20 … 23".
func pager(cur, total int) []int {
	if total <= 1 {
		return nil
	}
	var out []int
	for n := 1; n <= total; n++ {
		if total <= 9 || n == 1 || n == total || (n >= cur-3 && n <= cur+3) || n%10 == 0 {
			out = append(out, n)
		}
	}
	return out
}

func pages(items, per int) int {
	if items <= 0 {
		return 1
	}
	return (items + per - 1) / per
}

// window returns the items of page n.
func window[T any](xs []T, n, per int) []T {
	lo := (n - 1) * per
	if lo >= len(xs) {
		return nil
	}
	hi := lo + per
	if hi > len(xs) {
		hi = len(xs)
	}
	return xs[lo:hi]
}
