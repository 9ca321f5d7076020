package urlspace

import (
	"net/url"
	"slices"
	"strings"
)

// A rewrite is how a host writes the URL of another form of a page from
// the page's own: a path prefix ("/amp" + "/a/1/title"), a path suffix
// ("/a/1/title" + "/amp", "/wiki/X" + "/print"), or query parameters
// added with fixed values ("?output=amp", "?print=1", a sort order
// "?o=az" whose lists hold the same items as the list unsorted) or with
// the number the path holds ("/shoe-p77.html" + "?product_id=77"). A
// site's print and AMP views follow one rewrite whatever the page, and
// their URLs often hold the page's title, so no URL template groups them:
// the rewrite does.
type rewrite struct {
	kind byte   // 'p' prefix, 's' suffix, 'q' query parameters
	s    string // "/amp"; "/amp" or "amp/" (after a path ending in "/"); "output=amp&x=1", sorted
}

// String names the rewrite for the report: "/amp/…", "…/amp",
// "…?output=amp".
func (r rewrite) String() string {
	switch r.kind {
	case 'p':
		return r.s + "/…"
	case 's':
		if strings.HasPrefix(r.s, "/") {
			return "…" + r.s
		}
		return "…/" + r.s
	}
	return "…?" + strings.ReplaceAll(r.s, "="+ownNumber, "=N")
}

type rewriteStat struct {
	views   int // pages of the rewrite that repeated the page it rewrites
	kinds   map[string]int
	bad     int // pages of the rewrite with content of their own
	refused int
	example string
	// bases holds the parameter names (queryNames) of the pages the
	// rewrite was seen to repeat, up to maxBases: a URL is only
	// undone into a form of URL the host was seen to serve (a wiki's
	// "?mode=diff&version=3" repeats "?version=3", but
	// "?mode=diff&version=3&to=5" is no rewrite of "?version=3&to=5",
	// which the wiki does not serve).
	bases []string
}

// maxBases bounds rewriteStat.bases.
const maxBases = 4

// queryNames returns the names of a URL's query parameters, sorted and
// joined by "&".
func queryNames(u *url.URL) string {
	var names []string
	for part := range strings.SplitSeq(u.RawQuery, "&") {
		if name, _, _ := strings.Cut(part, "="); name != "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return strings.Join(names, "&")
}

// maxRewrites bounds the rewrites followed per host; maxRewritePart the
// length of what one adds.
const (
	maxRewrites    = 64
	maxRewritePart = 40
)

// rewriteOf returns the rewrite that gives u from of, two URLs of one
// host: u's path is of's with a prefix or a suffix of one or two
// segments without digits (u's parameters all of's), or u is of with
// parameters added. A parameter added with a number is taken only when
// the number is the one u's path holds, or when byLinks says that u was
// seen to list all of of's links and more (a page size, ?show=48) or
// only some of them (a time window, ?st=7), which a page number never
// does.
func rewriteOf(of, u *url.URL, byLinks bool) (rewrite, bool) {
	if of.Host != u.Host {
		return rewrite{}, false
	}
	op, up := of.EscapedPath(), u.EscapedPath()
	if op == up {
		extra := addedParams(of, u)
		if len(extra) == 0 || len(extra) > 2 {
			return rewrite{}, false
		}
		for i, part := range extra {
			// A page number is another page of a list, whatever one
			// pair showed (a list of one page showing it for page 2);
			// the item's own number written again ("/shoe-p77.html" +
			// "?product_id=77") is the item's.
			if name, v, _ := strings.Cut(part, "="); numeric(v) && !FirstValue(v) && !byLinks {
				if !numberIn(up, v) {
					return rewrite{}, false
				}
				extra[i] = name + "=" + ownNumber
			}
		}
		slices.Sort(extra)
		s := strings.Join(extra, "&")
		return rewrite{'q', s}, len(s) <= maxRewritePart
	}
	if !subQuery(u, of) || op == "" || op == "/" {
		return rewrite{}, false
	}
	var r rewrite
	switch {
	case strings.HasSuffix(up, op) && strings.HasPrefix(op, "/"):
		r = rewrite{'p', up[:len(up)-len(op)]}
	case strings.HasPrefix(up, op) && (strings.HasSuffix(op, "/") || up[len(op)] == '/'):
		r = rewrite{'s', up[len(op):]}
	default:
		return rewrite{}, false
	}
	segs := strings.Trim(r.s, "/")
	if segs == "" || len(r.s) > maxRewritePart || strings.Count(segs, "/") > 1 || hasDigit(segs) ||
		r.kind == 'p' && (!strings.HasPrefix(r.s, "/") || strings.HasSuffix(r.s, "/")) {
		return rewrite{}, false
	}
	return r, true
}

// addedParams returns the parameters (name=value, sorted) of u that of
// lacks. Those of of's that u lacks are left aside: the page fetched
// first may have come with a tracking parameter ("?utm_campaign=home"),
// and its view without it.
func addedParams(of, u *url.URL) []string {
	oq := strings.Split(of.RawQuery, "&")
	var extra []string
	for part := range strings.SplitSeq(u.RawQuery, "&") {
		if part == "" {
			continue
		}
		if i := slices.Index(oq, part); i >= 0 {
			oq[i] = ""
			continue
		}
		extra = append(extra, part)
	}
	slices.Sort(extra)
	return extra
}

// subQuery reports whether every parameter of u is one of of's.
func subQuery(u, of *url.URL) bool {
	if u.RawQuery == "" {
		return true
	}
	oq := strings.Split(of.RawQuery, "&")
	for part := range strings.SplitSeq(u.RawQuery, "&") {
		if part != "" && !slices.Contains(oq, part) {
			return false
		}
	}
	return true
}

// ownNumber stands, in a query rewrite, for the number the URL's path
// holds.
const ownNumber = "%2A"

// numberIn reports whether path holds the number n as a run of digits
// of its own.
func numberIn(path, n string) bool {
	for i := 0; ; {
		j := strings.Index(path[i:], n)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(n)
		if (j == 0 || !isDigit(path[j-1])) && (end == len(path) || !isDigit(path[end])) {
			return true
		}
		i = j + 1
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// undo returns the URL whose rewrite u is, or nil when u is not one.
func (r rewrite) undo(u *url.URL) *url.URL {
	path := u.EscapedPath()
	v := *u
	v.Fragment, v.RawFragment = "", ""
	switch r.kind {
	case 'p':
		rest, ok := strings.CutPrefix(path, r.s)
		if !ok || !strings.HasPrefix(rest, "/") || rest == "/" {
			return nil
		}
		path = rest
	case 's':
		rest, ok := strings.CutSuffix(path, r.s)
		if !ok || rest == "" || rest == "/" || !strings.HasPrefix(r.s, "/") && !strings.HasSuffix(rest, "/") {
			return nil
		}
		path = rest
	case 'q':
		parts := strings.Split(u.RawQuery, "&")
		for p := range strings.SplitSeq(r.s, "&") {
			i := slices.Index(parts, p)
			if name, ok := strings.CutSuffix(p, "="+ownNumber); ok {
				i = slices.IndexFunc(parts, func(part string) bool {
					n, v, _ := strings.Cut(part, "=")
					return n == name && numeric(v) && numberIn(path, v)
				})
			}
			if i < 0 {
				return nil
			}
			parts = slices.Delete(parts, i, i+1)
		}
		v.RawQuery = strings.Join(parts, "&")
		return &v
	}
	p, err := url.PathUnescape(path)
	if err != nil {
		return nil
	}
	v.Path, v.RawPath = p, path
	if v.EscapedPath() != path {
		return nil
	}
	return &v
}

// noteRewrite records a fetched page u of host h: a repeat of the page
// at of, of the Dup kind given (a view, a copy, a redirect), or new
// content (of nil). For a view or a copy, the page fetched first may be
// the rewrite of the other (an AMP page before its article); a redirect
// counts from the rewrite only (a redirect from "/x" to "/en/x" does not
// make "/en/x" a view of "/x"). New content counts against the rewrites
// that would have refused it (refuses, by paging).
func (h *patternHost) noteRewrite(u *url.URL, of *url.URL, kind string, paging func(string) bool) {
	if of == nil {
		for r, s := range h.rewrites {
			if to := r.undo(u); to != nil && s.refuses(to, paging) {
				s.bad++
			}
		}
		return
	}
	base := of
	r, ok := rewriteOf(of, u, kind == DupWider || kind == DupNarrower)
	if !ok && (kind == DupCopy || kind == DupReordered) {
		// A page size a list shown wider taught (?show=48) gives a copy
		// of a list too short to fill more than one page.
		if w, wok := rewriteOf(of, u, true); wok && h.rewrites[w] != nil && h.rewrites[w].kinds[DupWider] > 0 {
			r, ok = w, true
		}
	}
	if !ok && kind != DupRedirect && kind != DupWider && kind != DupNarrower {
		r, ok = rewriteOf(u, of, false)
		base = u
	}
	if !ok || r.kind != 'q' && (kind == DupCopy || kind == DupReordered || kind == DupResorted) {
		// A path rewrite is learned from views and redirects only: two
		// pages of the same text in the same chrome under paths that
		// differ by a prefix are as often a site's soft "not found"
		// pages as a language's copies.
		return
	}
	s := h.rewrites[r]
	if s == nil {
		if len(h.rewrites) >= maxRewrites {
			return
		}
		if h.rewrites == nil {
			h.rewrites = make(map[rewrite]*rewriteStat)
		}
		s = &rewriteStat{example: u.String() + " = " + of.String(), kinds: make(map[string]int)}
		h.rewrites[r] = s
	}
	s.views++
	s.kinds[kind]++
	if names := queryNames(base); len(s.bases) < maxBases && !slices.Contains(s.bases, names) {
		s.bases = append(s.bases, names)
	}
}

// spent reports whether a rewrite has shown itself a host's way of
// writing views: MinDuplicates pages repeated the page they rewrite, and
// at least four times as many as had content of their own.
func (s *rewriteStat) spent(minDups int) bool {
	return s.views >= minDups && s.views >= 4*s.bad
}

// undone returns the URL that u, of a spent rewrite of host h, rewrites,
// when it has the parameters of a page the rewrite was seen to repeat
// (rewriteStat.bases), but for page numbers (paging); nil otherwise.
func (h *patternHost) undone(u *url.URL, minDups int, paging func(string) bool) *url.URL {
	_, _, to := h.rewritten(u, minDups, func(s *rewriteStat, to *url.URL) bool { return s.served(to, paging) })
	return to
}

// served reports whether to has the parameters of one of a rewrite's
// bases, and perhaps page numbers (paging) besides.
func (s *rewriteStat) served(to *url.URL, paging func(string) bool) bool {
	names := queryNames(to)
	if slices.Contains(s.bases, names) {
		return true
	}
	var rest []string
	for name := range strings.SplitSeq(names, "&") {
		if name != "" && !paging(name) {
			rest = append(rest, name)
		}
	}
	return slices.Contains(s.bases, strings.Join(rest, "&"))
}

// refuses reports whether a spent rewrite refuses to, the URL of a page
// it rewrites. A parameter that only ever narrowed lists (a filter, a
// time window) refuses a list's later pages only when the lists it was
// seen to narrow were of that form (a window's later pages, "?st=7&page=2"
// after "?st=7" narrowed the list): a filter seen to narrow sized lists
// ("?col=green&sz=10" within "?sz=10") says nothing of the filtered list's
// own later pages ("?col=green&from=36"), which list items its first page
// does not.
func (s *rewriteStat) refuses(to *url.URL, paging func(string) bool) bool {
	if len(s.kinds) != 1 || s.kinds[DupNarrower] == 0 {
		return true
	}
	for name := range strings.SplitSeq(queryNames(to), "&") {
		if name != "" && paging(name) {
			return s.served(to, paging)
		}
	}
	return true
}

// rewritten returns a spent rewrite u is of host h, and the URL it
// rewrites, for which accept, when not nil, holds.
func (h *patternHost) rewritten(u *url.URL, minDups int, accept func(*rewriteStat, *url.URL) bool) (rewrite, *rewriteStat, *url.URL) {
	for r, s := range h.rewrites {
		if !s.spent(minDups) {
			continue
		}
		if to := r.undo(u); to != nil && (accept == nil || accept(s, to)) {
			return r, s, to
		}
	}
	return rewrite{}, nil, nil
}
