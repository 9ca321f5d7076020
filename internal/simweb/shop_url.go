package simweb

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// routeKind is what a shop URL serves.
type routeKind uint8

const (
	routeHome routeKind = iota
	routeCatalogue
	routeItem
	routeDay
	routeCounter
	routeEndless
)

// shopRoute is what a request URI of a shop serves.
type shopRoute struct {
	kind  routeKind
	n     int       // catalogue page (from 1), item index, or for routeEndless the item below which (-1: the help section)
	sort  int       // catalogue: 1 + index in sortStyle.orders; 0 unsorted
	day   time.Time // routeDay
	count int64     // routeCounter: 0 on the first page
	depth int       // routeEndless: name segments below the base

	session, tracking bool // the URI carried them
}

// real reports whether rt is a real page.
func (rt shopRoute) real() bool { return rt.kind <= routeItem }

// route returns what uri (an escaped request URI) serves, and whether it
// serves anything.
func (s *shopSite) route(uri string) (shopRoute, bool) {
	path, params, session, tracking := s.split(uri)
	rt, ok := s.match(path, params)
	rt.session, rt.tracking = session, tracking
	return rt, ok
}

// split takes uri apart: its path without the session path parameter,
// and its query parameters without the session and tracking parameters,
// in the order written. It reports whether it removed them.
func (s *shopSite) split(uri string) (path string, params []shopParam, session, tracking bool) {
	path, query, _ := strings.Cut(uri, "?")
	if !s.opt.NoSessions && s.sess.path {
		path, session = stripPathParam(path, s.sess.name)
	}
	for _, kv := range strings.Split(query, "&") {
		if kv == "" {
			continue
		}
		name, value, _ := strings.Cut(kv, "=")
		switch {
		case !s.opt.NoSessions && !s.sess.path && name == s.sess.name:
			session = true
		case !s.opt.NoTracking && name == s.track.name:
			tracking = true
		default:
			params = append(params, shopParam{name, value})
		}
	}
	return path, params, session, tracking
}

// stripPathParam removes every ";name=value" path parameter (name
// compared case-insensitively) from path and reports whether it found
// one.
func stripPathParam(path, name string) (string, bool) {
	marker := ";" + name + "="
	found := false
	for i := 0; i+len(marker) <= len(path); {
		if !strings.EqualFold(path[i:i+len(marker)], marker) {
			i++
			continue
		}
		end := strings.IndexByte(path[i:], '/')
		if end < 0 {
			end = len(path) - i
		}
		path, found = path[:i]+path[i+end:], true
	}
	return path, found
}

// match returns what a path and its query parameters (session and
// tracking removed) serve.
func (s *shopSite) match(path string, params []shopParam) (shopRoute, bool) {
	if path == "/" && len(params) == 0 {
		return shopRoute{kind: routeHome}, true
	}
	if rt, ok := s.matchCatalogue(path, params); ok {
		return rt, true
	}
	if v, ok := s.itemShape.match(path, params); ok {
		if i, ok := s.itemByValue[v]; ok {
			return shopRoute{kind: routeItem, n: i}, true
		}
	}
	if !s.opt.NoCalendar {
		if v, ok := s.day.shape.match(path, params); ok {
			if t, ok := s.day.fmt.parse(v); ok {
				return shopRoute{kind: routeDay, day: t}, true
			}
		}
	}
	if !s.opt.NoCounter {
		if rt, ok := s.matchCounter(path, params); ok {
			return rt, true
		}
	}
	if !s.opt.NoEndlessPath {
		return s.matchEndless(path, params)
	}
	return shopRoute{}, false
}

// matchCatalogue matches a catalogue page, sorted or not.
func (s *shopSite) matchCatalogue(path string, params []shopParam) (shopRoute, bool) {
	rt := shopRoute{kind: routeCatalogue}
	if !s.opt.NoSorts {
		var rest []shopParam
		for _, p := range params {
			if p.name != s.sorts.param {
				rest = append(rest, p)
				continue
			}
			k, ok := s.sorts.byValue[p.value]
			if !ok || rt.sort != 0 {
				return rt, false // an unknown order, or two
			}
			rt.sort = 1 + k
		}
		params = rest
	}
	if path == s.catShape.bare && len(params) == 0 {
		rt.n = 1
		return rt, true
	}
	v, ok := s.catShape.match(path, params)
	if !ok {
		return rt, false
	}
	n, ok := parseCount(v)
	if !ok || n < 1 || n > int64(s.opt.Catalog) {
		return rt, false
	}
	rt.n = int(n)
	return rt, true
}

// matchCounter matches a page of the news chain.
func (s *shopSite) matchCounter(path string, params []shopParam) (shopRoute, bool) {
	c := &s.counts
	rt := shopRoute{kind: routeCounter}
	if path == c.shape.bare && len(params) == 0 {
		return rt, true
	}
	v, ok := c.shape.match(path, params)
	if !ok {
		return rt, false
	}
	n, ok := parseCount(v)
	if !ok || n < c.start || n > counterMax || (n-c.start)%c.step != 0 {
		return rt, false
	}
	rt.count = n
	return rt, true
}

// matchEndless matches a page of the endless path: the help section, or
// a base (an item, or the help section) followed by one or more of the
// names, in turn, each ending in "/".
func (s *shopSite) matchEndless(path string, params []shopParam) (shopRoute, bool) {
	e := &s.path
	rt := shopRoute{kind: routeEndless, n: -1}
	if len(params) != 0 || !strings.HasSuffix(path, "/") {
		return rt, false
	}
	if e.help != "" && path == e.help {
		return rt, true
	}
	var segs []string // from the last
	rest := path
	for strings.HasSuffix(rest, "/") {
		i := strings.LastIndexByte(rest[:len(rest)-1], '/')
		if i < 0 || !slices.Contains(e.names, rest[i+1:len(rest)-1]) {
			break
		}
		segs = append(segs, rest[i+1:len(rest)-1])
		rest = rest[:i+1]
	}
	if len(segs) == 0 {
		return rt, false
	}
	slices.Reverse(segs)
	for j, seg := range segs {
		if seg != e.names[j%len(e.names)] {
			return rt, false
		}
	}
	rt.depth = len(segs)
	if e.help != "" {
		return rt, rest == e.help
	}
	for _, base := range []string{rest, strings.TrimSuffix(rest, "/")} {
		if v, ok := s.itemShape.match(base, nil); ok {
			if i, ok := s.itemByValue[v]; ok && s.itemURL(i) == base {
				rt.n = i
				return rt, true
			}
		}
	}
	return rt, false
}

// parseCount reads a positive decimal number without leading zeros.
func parseCount(v string) (int64, bool) {
	if v == "" || len(v) > 18 || v[0] == '0' {
		return 0, false
	}
	for _, c := range []byte(v) {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// format writes the date of t as f does.
func (f dayFormat) format(t time.Time) string {
	y, m, d := t.Date()
	sign := ""
	if y < 0 {
		sign, y = "-", -y
	}
	switch f {
	case daySlash:
		return fmt.Sprintf("%s%04d/%02d/%02d", sign, y, int(m), d)
	case dayDash:
		return fmt.Sprintf("%s%04d-%02d-%02d", sign, y, int(m), d)
	}
	return fmt.Sprintf("%s%04d%02d%02d", sign, y, int(m), d)
}

// parse reads a date written by format (and no other spelling of it),
// of a year within ±calendarMaxYear.
func (f dayFormat) parse(v string) (time.Time, bool) {
	body := strings.TrimPrefix(v, "-")
	var ys, ms, ds string
	switch f {
	case daySlash, dayDash:
		sep := "/"
		if f == dayDash {
			sep = "-"
		}
		parts := strings.Split(body, sep)
		if len(parts) != 3 {
			return time.Time{}, false
		}
		ys, ms, ds = parts[0], parts[1], parts[2]
	default:
		if len(body) < 8 {
			return time.Time{}, false
		}
		ys, ms, ds = body[:len(body)-4], body[len(body)-4:len(body)-2], body[len(body)-2:]
	}
	if len(ys) > 10 {
		return time.Time{}, false
	}
	y, err1 := strconv.Atoi(ys)
	m, err2 := strconv.Atoi(ms)
	d, err3 := strconv.Atoi(ds)
	if err1 != nil || err2 != nil || err3 != nil || m < 1 || m > 12 || d < 1 || d > 31 {
		return time.Time{}, false
	}
	if body != v {
		y = -y
	}
	if y < -calendarMaxYear || y > calendarMaxYear {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if f.format(t) != v {
		return time.Time{}, false // 31 April, leading zeros, signs …
	}
	return t, true
}

// The URLs of a shop's pages, canonical: escaped paths with the query if
// any, without session ids or tracking parameters.

// catalogueURL returns the URL of catalogue page n in sort order sort
// (1 + index in sortStyle.orders; 0 unsorted).
func (s *shopSite) catalogueURL(n, sort int) string {
	u := s.catShape.format(strconv.Itoa(n))
	if n == 1 && s.catShape.bare != "" {
		u = s.catShape.bare
	}
	if sort == 0 {
		return u
	}
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + s.sorts.param + "=" + s.sorts.orders[sort-1].value
}

// itemURL returns the URL of item i.
func (s *shopSite) itemURL(i int) string { return s.itemShape.format(s.items[i].value) }

// dayURL returns the URL of the calendar's day t.
func (s *shopSite) dayURL(t time.Time) string { return s.day.shape.format(s.day.fmt.format(t)) }

// counterURL returns the URL of the news chain's page n (0: the first).
func (s *shopSite) counterURL(n int64) string {
	if n == 0 {
		return s.counts.shape.bare
	}
	return s.counts.shape.format(strconv.FormatInt(n, 10))
}

// endlessBase returns the directory below which the endless path below
// item i (-1: the help section) runs.
func (s *shopSite) endlessBase(i int) string {
	if i < 0 {
		return s.path.help
	}
	u := s.itemURL(i)
	if !strings.HasSuffix(u, "/") {
		u += "/"
	}
	return u
}

// canonical returns the URL of the real page rt serves.
func (s *shopSite) canonical(rt shopRoute) string {
	switch rt.kind {
	case routeCatalogue:
		return s.catalogueURL(rt.n, 0)
	case routeItem:
		return s.itemURL(rt.n)
	}
	return "/"
}

// decorate adds to ref (an escaped path with optional query, or a
// relative reference) the session id and tracking parameter of link n of
// response resp, at drawn places among its parameters; a sort parameter
// moves to a drawn place too.
func (s *shopSite) decorate(ref string, resp uint64, n int) string {
	path, query, _ := strings.Cut(ref, "?")
	var params []string
	if query != "" {
		params = strings.Split(query, "&")
	}
	insert := func(kv string, salt uint64) {
		at := int(mix(s.key, salt, resp, uint64(n)) % uint64(len(params)+1))
		params = slices.Insert(params, at, kv)
	}
	if !s.opt.NoSorts {
		for i, kv := range params {
			if strings.HasPrefix(kv, s.sorts.param+"=") {
				params = slices.Delete(params, i, i+1)
				insert(kv, 1)
				break
			}
		}
	}
	if !s.opt.NoSessions {
		v := s.sessionValue(resp, n)
		if s.sess.path {
			path += ";" + s.sess.name + "=" + v
		} else {
			insert(s.sess.name+"="+v, 2)
		}
	}
	if !s.opt.NoTracking && mix(s.key, 3, resp, uint64(n))%100 < uint64(s.track.percent) {
		insert(s.track.name+"="+s.trackingValue(resp, n), 4)
	}
	if len(params) == 0 {
		return path
	}
	return path + "?" + strings.Join(params, "&")
}

// sessionValue returns the session id of link n of response resp.
func (s *shopSite) sessionValue(resp uint64, n int) string {
	if !s.sess.perLink {
		n = -1
	}
	return token(mix(s.key, 5, resp, uint64(n)), s.sess.length, s.sess.alphabet)
}

// trackingValue returns the tracking value of link n of response resp.
func (s *shopSite) trackingValue(resp uint64, n int) string {
	x := mix(s.key, 6, resp, uint64(n))
	switch s.track.shape {
	case trackHex:
		return token(x, s.track.length, hexLower)
	case trackBase36:
		return token(x, s.track.length, base36Lower)
	}
	return strconv.FormatUint(1_400_000_000_000+x%400_000_000_000, 10) // 13 digits, like a time in ms
}

// splitmix is the finalizer of SplitMix64: a bijection that scatters its
// input's bits.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// mix hashes its arguments into one well-scattered number.
func mix(xs ...uint64) uint64 {
	h := uint64(0x5eed)
	for _, x := range xs {
		h = splitmix(h ^ x)
	}
	return h
}

// token returns n characters of alphabet drawn from x.
func token(x uint64, n int, alphabet string) string {
	b := make([]byte, n)
	for i := range b {
		x = splitmix(x)
		b[i] = alphabet[x%uint64(len(alphabet))]
	}
	return string(b)
}

// distinctPages returns the canonical paths of the shop's real pages.
func (s *shopSite) distinctPages() []string {
	out := make([]string, 0, 1+s.opt.Catalog+len(s.items))
	out = append(out, "/")
	for n := 1; n <= s.opt.Catalog; n++ {
		out = append(out, s.catalogueURL(n, 0))
	}
	for i := range s.items {
		out = append(out, s.itemURL(i))
	}
	return out
}

// trapOf names the trap family of uri (see Host.TrapOf).
func (s *shopSite) trapOf(uri string) (string, bool) {
	rt, ok := s.route(uri)
	switch {
	case !ok:
		return "", false
	case rt.kind == routeDay:
		return FamilyCalendar, true
	case rt.kind == routeCounter:
		return FamilyCounter, true
	case rt.kind == routeEndless:
		return FamilyEndlessPath, true
	case rt.sort > 0:
		return FamilySort, true
	case rt.tracking:
		return FamilyTracking, true
	case rt.session:
		return FamilySession, true
	}
	return "", false
}

// serve answers r for uri, the escaped request URI.
func (s *shopSite) serve(rw http.ResponseWriter, r *http.Request, uri string) {
	resp := s.responses.Add(1)
	rt, ok := s.route(uri)
	if !ok {
		writeSmall(rw, r, http.StatusNotFound, "text/html; charset=utf-8", notFoundPage("no such page"))
		return
	}
	body := s.render(rt, resp)
	meta := resMeta{lastModified: lastModifiedEpoch}
	if rt.kind == routeItem {
		meta.lastModified = lastModifiedEpoch.AddDate(0, 0, -s.items[rt.n].added)
	}
	if !s.opt.NoSessions || !s.opt.NoTracking {
		// The bytes differ on every response; the page does not.
		f := fnv.New64a()
		fmt.Fprintf(f, "%d/%s", s.key, s.contentKey(rt))
		meta.etag = fmt.Sprintf(`W/"s%016x"`, f.Sum64())
	}
	serveBody(rw, r, "text/html; charset=utf-8", body, meta)
}

// contentKey names the content of the page rt serves: URLs that serve
// the same content, but for session ids and tracking parameters, have
// the same key.
func (s *shopSite) contentKey(rt shopRoute) string {
	switch rt.kind {
	case routeDay:
		return "day/" + s.day.fmt.format(rt.day)
	case routeEndless:
		// Pages below the base differ only in the name they link next.
		return fmt.Sprintf("endless/%d/%d", rt.n, rt.depth%len(s.path.names))
	}
	return fmt.Sprintf("%d/%d/%d/%d", rt.kind, rt.n, rt.sort, rt.count)
}

// summary describes the drawn surface of the shop.
func (s *shopSite) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d items at %s, catalogue %s", len(s.items), s.itemShape.pattern("item"), s.catShape.pattern("n"))
	if s.catShape.bare != "" {
		fmt.Fprintf(&b, " (page 1 %s)", s.catShape.bare)
	}
	if s.numbered {
		b.WriteString(" with numbered pages")
	} else {
		b.WriteString(" with previous/next")
	}
	if !s.opt.NoSessions {
		where := "?" + s.sess.name + "="
		if s.sess.path {
			where = ";" + s.sess.name + "="
		}
		per := "one per response"
		if s.sess.perLink {
			per = "one per link"
		}
		fmt.Fprintf(&b, "; session %s (%d chars, %s)", where, s.sess.length, per)
	}
	if !s.opt.NoTracking {
		fmt.Fprintf(&b, "; tracking %s= on %d%% of links (%s)", s.track.name, s.track.percent, [...]string{"hex", "base36", "ms number"}[s.track.shape])
	}
	if !s.opt.NoSorts {
		var vs []string
		for _, o := range s.sorts.orders {
			vs = append(vs, o.value)
		}
		fmt.Fprintf(&b, "; sort %s=%s", s.sorts.param, strings.Join(vs, "|"))
		if s.sorts.label {
			b.WriteString(" (labelled)")
		}
	}
	if !s.opt.NoCalendar {
		fmt.Fprintf(&b, "; calendar %s from %s", s.day.shape.pattern("date"), s.dayURL(s.today))
		if s.day.fromItems {
			b.WriteString(" and from every item")
		}
	}
	if !s.opt.NoEndlessPath {
		fmt.Fprintf(&b, "; endless path %s", strings.Join(s.path.names, "/"))
		if s.path.help != "" {
			fmt.Fprintf(&b, " below %s", s.path.help)
		} else {
			b.WriteString(" below items")
		}
	}
	if !s.opt.NoCounter {
		fmt.Fprintf(&b, "; counter %s then %s step %d", s.counts.shape.bare, s.counts.shape.pattern("n"), s.counts.step)
	}
	return b.String()
}

// pattern writes the shape with {name} for its variable part.
func (u urlShape) pattern(name string) string { return u.format("{" + name + "}") }

// requestURI returns the escaped request URI of u, an absolute http or
// https URL of the host or already a request URI, and whether u is one of
// the host's.
func (h *Host) requestURI(u string) (string, bool) {
	if strings.HasPrefix(u, "/") {
		return u, true
	}
	pu, err := url.Parse(u)
	if err != nil || !strings.EqualFold(pu.Scheme, "http") && !strings.EqualFold(pu.Scheme, "https") {
		return "", false
	}
	host := strings.ToLower(pu.Host)
	if host != h.Name && host != h.Name+":80" {
		return "", false
	}
	return pu.RequestURI(), true
}

// TrapOf names the trap family that URL u belongs to, for the
// diagnostics of tests: u is an absolute URL of the host or an escaped
// request URI, as for PageOf. For a Shop host it is one of the Family…
// names: FamilyCalendar, FamilyEndlessPath or FamilyCounter for those
// pages, and for a URL that serves a real page in another way than its
// canonical URL, the first of FamilySort, FamilyTracking and
// FamilySession that it carries (the rarer parameter first). For a host with Traps it is
// FamilyCalendar, FamilyEndlessPath (/deep/), FamilySoft404, FamilySort
// (a sorted catalog page) or FamilySession. It reports false for
// canonical URLs of real pages, for URLs that serve nothing and for
// URLs of other hosts.
func (h *Host) TrapOf(u string) (string, bool) {
	uri, ok := h.requestURI(u)
	if !ok {
		return "", false
	}
	if s := h.shop(); s != nil {
		return s.trapOf(uri)
	}
	t := &h.opts.Traps
	stripped := t.stripSession(uri)
	path, query, _ := strings.Cut(stripped, "?")
	switch {
	case t.Calendar && path == calendarPath:
		if _, _, ok := parseMonthQuery(stripped); ok {
			return FamilyCalendar, true
		}
		return "", false
	case t.DeepPath && strings.HasPrefix(stripped, deepPath):
		if strings.ReplaceAll(stripped[len(deepPath):], "x/", "") == "" {
			return FamilyEndlessPath, true
		}
		return "", false
	case t.Soft404 && strings.HasPrefix(path, soft404Prefix):
		return FamilySoft404, true
	case t.Facets && path == catalogPath:
		if q, ok := parseCatalog(query); ok && q.sort != "" {
			return FamilySort, true
		}
	}
	if _, real := h.PageOf(uri); real && stripped != uri {
		return FamilySession, true
	}
	return "", false
}

// ShopSummary describes the drawn surface of a Shop host — its URL
// shapes and parameter names, family by family — or returns "" when the
// host is not a shop.
func (h *Host) ShopSummary() string {
	if s := h.shop(); s != nil {
		return s.summary()
	}
	return ""
}

// sortedURLs returns the absolute URLs of paths on h, sorted.
func (h *Host) sortedURLs(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = h.URL(p)
	}
	sort.Strings(out)
	return out
}
