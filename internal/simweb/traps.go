package simweb

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"html"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Traps are the URL-space traps of one host (HostOptions.Traps): ways in
// which a site of a few hundred pages offers a crawler thousands or an
// infinity of URLs. Each is off in the zero value. The host's real pages
// (Host.DistinctPages) and the distinct page any of its URLs serves
// (Host.PageOf) are the ground truth a crawler is measured against.
//
// Ordinary pages of a host with traps link, in their navigation bar, to
// the trap entrances: /catalog, /calendar, /deep/ and a dead link under
// /pages/.
type Traps struct {
	// SessionIDs, if not empty, is the name of a session id that every
	// same-host link of the host carries: a query parameter
	// ("/products/3?sid=9f…", e.g. "sid", "PHPSESSID", "s") or, when it is
	// "jsessionid", a path parameter ("/products/3;jsessionid=9F…"). The
	// value differs from link to link (it is derived from the linking page
	// and the link's position), so a page is reachable under as many URLs
	// as it has links to it. The server ignores the id: a page's bytes
	// and ETag are the same whatever id, or none, the request carries.
	// Letters, digits, '-' and '_' only.
	SessionIDs string
	// Calendar serves /calendar and /calendar?month=YYYY-MM: one page per
	// month with previous and next links without end (years of any number
	// of digits, and negative ones), every month the same template with
	// only the month's name, its weekday grid and the links changing.
	// /calendar is the month of 2025-06 (no wall clock is read). Calendar
	// pages are not real pages.
	Calendar bool
	// Facets serves a catalog of 48 products at /catalog with the query
	// parameters color (red, green, blue, black), size (s, m, l, xl),
	// sort (price, name, newest; absent means relevance) and page (from
	// 1; 10 products a page), each optional and in any order. Every page
	// links to every other value of each facet, to the other sort orders
	// and to its pages, with the parameters in varying order and page=1
	// sometimes explicit. A page's products depend only on color, size
	// and page: sort reorders them within the page. Pages beyond the last
	// serve the last page's bytes, and every page, the last included,
	// links to the next. The CatalogPages distinct pages are real pages,
	// at canonical URLs like /catalog?color=red&page=2&size=m (parameters
	// in name order, no sort, no page=1). Unknown parameters or values
	// answer 404.
	Facets bool
	// DeepPath serves /deep/, /deep/x/, /deep/x/x/ … without end: each the
	// same bytes, linking the relative "x/". Not real pages.
	DeepPath bool
	// Soft404 answers every path under /pages/ with 200 and the same "not
	// found" page; each ordinary page links to one such dead URL of its
	// own. Not real pages.
	Soft404 bool
	// Sitemaps serves /sitemap.xml, a sitemap index of /sitemap-1.xml and
	// /sitemap-2.xml.gz (gzipped, Content-Type application/gzip), which
	// list the host's real pages with <lastmod>; robots.txt answers of 200
	// gain a "Sitemap:" line for it.
	Sitemaps bool
}

// Paths of the traps.
const (
	catalogPath   = "/catalog"
	calendarPath  = "/calendar"
	deepPath      = "/deep/"
	soft404Prefix = "/pages/"
	sitemapIndex  = "/sitemap.xml"
	sitemapPart1  = "/sitemap-1.xml"
	sitemapPart2  = "/sitemap-2.xml.gz"
	jsessionid    = "jsessionid"
)

var sessionNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,40}$`)

func (t Traps) any() bool {
	return t.SessionIDs != "" || t.Calendar || t.Facets || t.DeepPath || t.Soft404 || t.Sitemaps
}

func (t Traps) validate() error {
	if t.SessionIDs != "" && !sessionNameRE.MatchString(t.SessionIDs) {
		return fmt.Errorf("%w: Traps.SessionIDs %q is not a parameter name", errConfig, t.SessionIDs)
	}
	return nil
}

// withSession adds session id value v to p, an escaped path with optional
// query or a relative reference.
func (t *Traps) withSession(p, v string) string {
	if t.SessionIDs == "" {
		return p
	}
	if t.SessionIDs == jsessionid {
		path, query, _ := strings.Cut(p, "?")
		if query != "" || strings.Contains(p, "?") {
			query = "?" + query
		}
		return path + ";jsessionid=" + strings.ToUpper(v) + query
	}
	if strings.Contains(p, "?") {
		return p + "&" + t.SessionIDs + "=" + v
	}
	return p + "?" + t.SessionIDs + "=" + v
}

// stripSession removes every session id from uri, an escaped request URI.
func (t *Traps) stripSession(uri string) string {
	if t.SessionIDs == "" {
		return uri
	}
	path, query, hasQuery := strings.Cut(uri, "?")
	if t.SessionIDs == jsessionid {
		for {
			i := strings.Index(strings.ToLower(path), ";jsessionid=")
			if i < 0 {
				break
			}
			end := strings.IndexByte(path[i:], '/')
			if end < 0 {
				end = len(path) - i
			}
			path = path[:i] + path[i+end:]
		}
		if hasQuery {
			return path + "?" + query
		}
		return path
	}
	if !hasQuery {
		return path
	}
	var kept []string
	for _, kv := range strings.Split(query, "&") {
		if name, _, _ := strings.Cut(kv, "="); name != t.SessionIDs {
			kept = append(kept, kv)
		}
	}
	if len(kept) == 0 {
		return path
	}
	return path + "?" + strings.Join(kept, "&")
}

// sessionValue returns the session id of link n of the page named where:
// 32 hex digits that look random and never change.
func (h *Host) sessionValue(where string, n int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d/%d/%s/%d", h.web.cfg.Seed, h.index, where, n))
	return hex.EncodeToString(sum[:16])
}

// DistinctPages returns the canonical URLs (absolute, without session
// ids) of the host's real pages, sorted: its ordinary HTML pages (those
// under robots-disallowed paths included; see Web.Allowed) and, with
// Traps.Facets, the CatalogPages distinct catalog pages. Calendar, deep
// path, soft-404 and sitemap URLs are not real pages. With
// HostOptions.Pages the slice has exactly that length. For a Shop host
// they are its home page, catalogue pages and item pages.
func (h *Host) DistinctPages() []string {
	if s := h.shop(); s != nil {
		return h.sortedURLs(s.distinctPages())
	}
	sk := h.skeleton()
	out := make([]string, 0, sk.pages+CatalogPages)
	for i := range sk.pages {
		out = append(out, h.URL(sk.res[i].path))
	}
	if h.opts.Traps.Facets {
		for _, q := range catalogDistinct() {
			out = append(out, h.URL(q.canonical()))
		}
	}
	sort.Strings(out)
	return out
}

// PageOf returns the canonical URL (as in DistinctPages) of the real page
// that u serves, and whether u serves one. u is an absolute URL of the
// host or an escaped request URI ("/list?page=3&sid=…", as in
// LogEntry.Path). Session ids are ignored; catalog URLs in any parameter
// order, with any sort and with page=1 or a page beyond the last map to
// the catalog page they serve. For a Shop host, session ids, tracking
// parameters, sort orders and the order of parameters are ignored, and
// calendar, endless-path and counter URLs serve no real page.
func (h *Host) PageOf(u string) (string, bool) {
	uri, ok := h.requestURI(u)
	if !ok {
		return "", false
	}
	if s := h.shop(); s != nil {
		if rt, ok := s.route(uri); ok && rt.real() {
			return h.URL(s.canonical(rt)), true
		}
		return "", false
	}
	uri = h.opts.Traps.stripSession(uri)
	if h.opts.Traps.Facets {
		if q, ok := isCatalog(uri); ok {
			cq, ok := parseCatalog(q)
			if !ok {
				return "", false
			}
			return h.URL(cq.clamped().canonical()), true
		}
	}
	sk := h.skeleton()
	if i, ok := sk.byPath[uri]; ok && i < sk.pages {
		return h.URL(uri), true
	}
	return "", false
}

// isCatalog reports whether uri is the catalog's, and returns its query.
func isCatalog(uri string) (string, bool) {
	path, q, _ := strings.Cut(uri, "?")
	return q, path == catalogPath
}

// serveTrap answers r if uri (session id removed) is one of the host's
// trap URLs, and reports whether it did.
func (h *Host) serveTrap(rw http.ResponseWriter, r *http.Request, uri string) bool {
	t := &h.opts.Traps
	path, query, _ := strings.Cut(uri, "?")
	switch {
	case t.Sitemaps && (uri == sitemapIndex || uri == sitemapPart1 || uri == sitemapPart2):
		h.serveSitemap(rw, r, uri)
	case t.Facets && path == catalogPath:
		q, ok := parseCatalog(query)
		if !ok {
			writeSmall(rw, r, http.StatusNotFound, "text/html; charset=utf-8", notFoundPage("no such catalog page"))
			return true
		}
		serveGenerated(rw, r, "text/html; charset=utf-8", h.catalogPage(q.clamped()))
	case t.Calendar && path == calendarPath:
		y, m, ok := parseMonthQuery(uri)
		if !ok {
			writeSmall(rw, r, http.StatusNotFound, "text/html; charset=utf-8", notFoundPage("no such month"))
			return true
		}
		serveGenerated(rw, r, "text/html; charset=utf-8", h.calendarPage(y, m))
	case t.DeepPath && strings.HasPrefix(uri, deepPath):
		if strings.ReplaceAll(uri[len(deepPath):], "x/", "") != "" { // not /deep/(x/)*
			writeSmall(rw, r, http.StatusNotFound, "text/html; charset=utf-8", notFoundPage("no such page"))
			return true
		}
		serveGenerated(rw, r, "text/html; charset=utf-8", h.deepPage())
	case t.Soft404 && strings.HasPrefix(path, soft404Prefix):
		// A soft 404: the page says "not found", the status says 200.
		serveGenerated(rw, r, "text/html; charset=utf-8", h.soft404Page())
	default:
		return false
	}
	return true
}

// serveGenerated answers with a generated body: a strong ETag of its
// bytes, Last-Modified at the epoch, conditional GET, gzip for HTML.
func serveGenerated(rw http.ResponseWriter, r *http.Request, ctype string, body []byte) {
	serveBody(rw, r, ctype, body, resMeta{lastModified: lastModifiedEpoch})
}

// serveBody answers with a generated body and the validators of meta —
// a strong ETag of the body's bytes when meta has none — with
// conditional GET and gzip for HTML.
func serveBody(rw http.ResponseWriter, r *http.Request, ctype string, body []byte, meta resMeta) {
	if meta.etag == "" {
		f := fnv.New64a()
		f.Write(body)
		meta.etag = fmt.Sprintf(`"t%016x"`, f.Sum64())
	}
	hdr := rw.Header()
	hdr.Set("Last-Modified", meta.lastModified.UTC().Format(http.TimeFormat))
	hdr.Set("ETag", meta.etag)
	text := strings.HasPrefix(ctype, "text/")
	if text {
		hdr.Set("Vary", "Accept-Encoding")
	}
	if notModified(r, &meta) {
		rw.WriteHeader(http.StatusNotModified)
		return
	}
	if text && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		body = gzipBytes(body)
		hdr.Set("Content-Encoding", "gzip")
	}
	hdr.Set("Content-Type", ctype)
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	rw.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		rw.Write(body)
	}
}

// trapPage writes a generated page whose same-host links carry session
// ids that depend only on the page's name and the link's position, so
// the same page is always the same bytes.
type trapPage struct {
	h     *Host
	where string // names the page for its session ids
	n     int    // links written
	buf   bytes.Buffer
}

func (h *Host) newTrapPage(where, title string) *trapPage {
	p := &trapPage{h: h, where: where}
	fmt.Fprintf(&p.buf, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n</head>\n<body>\n<header><nav>", html.EscapeString(title))
	p.link("/", "Home")
	fmt.Fprintf(&p.buf, "</nav></header>\n<main>\n<h1>%s</h1>\n", html.EscapeString(title))
	return p
}

// link writes an <a> to ref (escaped; absolute path or relative) with
// the host's session id added.
func (p *trapPage) link(ref, text string) {
	ref = p.h.opts.Traps.withSession(ref, p.h.sessionValue(p.where, p.n))
	p.n++
	fmt.Fprintf(&p.buf, "<a href=\"%s\">%s</a>", html.EscapeString(ref), html.EscapeString(text))
}

func (p *trapPage) done() []byte {
	p.buf.WriteString("</main>\n</body>\n</html>\n")
	return p.buf.Bytes()
}

// deepPage is the page of every /deep/(x/)* path.
func (h *Host) deepPage() []byte {
	p := h.newTrapPage("deep", "Browse deeper")
	p.buf.WriteString("<p>There is always more below. ")
	p.link("x/", "Go one level deeper")
	p.buf.WriteString("</p>\n")
	return p.done()
}

// soft404Page is the page of every path under /pages/.
func (h *Host) soft404Page() []byte {
	p := h.newTrapPage("soft404", "Page not found")
	p.buf.WriteString("<p>Sorry, the page you are looking for could not be found. It may have been moved or deleted.</p>\n")
	return p.done()
}

// Calendar months run from year −calendarMaxYear to +calendarMaxYear:
// beyond any bound a crawler sets, and still inside what time.Date
// computes exactly.
const calendarMaxYear = 1_000_000_000

// calendarHome is the month /calendar shows.
var calendarHome = lastModifiedEpoch

// parseMonthQuery reads the month of a /calendar URI: none means
// calendarHome; otherwise exactly one month=YYYY-MM in canonical form.
func parseMonthQuery(uri string) (year int, month time.Month, ok bool) {
	_, query, _ := strings.Cut(uri, "?")
	if query == "" {
		return calendarHome.Year(), calendarHome.Month(), true
	}
	v, ok := strings.CutPrefix(query, "month=")
	if !ok {
		return 0, 0, false
	}
	ys, ms, ok := strings.Cut(v[min(1, len(v)):], "-") // a leading '-' is the sign
	if !ok {
		return 0, 0, false
	}
	ys = v[:min(1, len(v))] + ys
	y, err1 := strconv.Atoi(ys)
	m, err2 := strconv.Atoi(ms)
	if err1 != nil || err2 != nil || m < 1 || m > 12 || y < -calendarMaxYear || y > calendarMaxYear {
		return 0, 0, false
	}
	if monthParam(y, time.Month(m)) != v {
		return 0, 0, false // one URL per month
	}
	return y, time.Month(m), true
}

// monthParam formats a month as the month= value: "2026-11", "-0044-03".
func monthParam(y int, m time.Month) string {
	if y < 0 {
		return fmt.Sprintf("-%04d-%02d", -y, int(m))
	}
	return fmt.Sprintf("%04d-%02d", y, int(m))
}

// calendarPage renders the page of one month.
func (h *Host) calendarPage(y int, m time.Month) []byte {
	label := fmt.Sprintf("%s %d", m, y)
	p := h.newTrapPage("calendar", "Events calendar: "+label)
	p.buf.WriteString("<p>")
	prev, next := time.Date(y, m-1, 1, 0, 0, 0, 0, time.UTC), time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC)
	if prev.Year() >= -calendarMaxYear {
		p.link(calendarPath+"?month="+monthParam(prev.Year(), prev.Month()), "« Previous month")
	}
	p.buf.WriteString(" | ")
	if next.Year() <= calendarMaxYear {
		p.link(calendarPath+"?month="+monthParam(next.Year(), next.Month()), "Next month »")
	}
	p.buf.WriteString("</p>\n<table>\n<tr><th>Mon</th><th>Tue</th><th>Wed</th><th>Thu</th><th>Fri</th><th>Sat</th><th>Sun</th></tr>\n<tr>")
	first := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	days := time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
	col := (int(first.Weekday()) + 6) % 7 // Monday first
	p.buf.WriteString(strings.Repeat("<td></td>", col))
	for d := 1; d <= days; d++ {
		if col == 7 {
			p.buf.WriteString("</tr>\n<tr>")
			col = 0
		}
		fmt.Fprintf(&p.buf, "<td>%d</td>", d)
		col++
	}
	p.buf.WriteString("</tr>\n</table>\n<p>No events are scheduled this month. Our team publishes new events as soon as they are confirmed, so please check again later.</p>\n")
	return p.done()
}

// trapNav writes, into the navigation of an ordinary page i, links to
// the entrances of the host's traps.
func (r *renderer) trapNav(i int) {
	t := &r.host.opts.Traps
	if t.Facets {
		r.buf.WriteString(" | ")
		r.plainLink(catalogPath, "Catalog")
	}
	if t.Calendar {
		r.buf.WriteString(" | ")
		r.plainLink(calendarPath, "Events")
	}
	if t.DeepPath {
		r.buf.WriteString(" | ")
		r.plainLink(deepPath, "Browse")
	}
	if t.Soft404 {
		r.buf.WriteString(" | ")
		r.plainLink(fmt.Sprintf("%s%d-%s.html", soft404Prefix, i, words[i%len(words)]), "Old version")
	}
}

// plainLink writes an <a> to path on the page's host, with a session id
// if the host gives them, and records it. It uses no randomness.
func (r *renderer) plainLink(path, text string) {
	p := r.withSession(path)
	r.record(r.host.URL(p))
	fmt.Fprintf(&r.buf, "<a href=\"%s\">%s</a>", html.EscapeString(p), text)
}

// withSession adds the next session id of the page to p.
func (r *renderer) withSession(p string) string {
	t := &r.host.opts.Traps
	if t.SessionIDs == "" {
		return p
	}
	r.sessions++
	return t.withSession(p, r.host.sessionValue(r.where, r.sessions))
}
