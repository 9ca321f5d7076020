package check

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
	"github.com/gentlecrawl/gentlecrawl/internal/urlspace"
	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

// maxExamples bounds the URLs a finding lists as evidence.
const maxExamples = 5

// report judges what the check saw and returns the report.
func (c *checker) report() *Report {
	if r := c.origins[c.site]; r != nil && r.usable() {
		c.judgeCrawlDelay(r)
		c.judgeSitemaps()
		c.judgePages()
	}
	c.judgeTimes()
	c.judgeSample()
	sev := map[Severity]int{Fail: 0, Warn: 1, Info: 2}
	sort.SliceStable(c.findings, func(i, j int) bool { return sev[c.findings[i].Severity] < sev[c.findings[j].Severity] })
	rep := &Report{
		URL: c.start.String(), Agent: c.cfg.Agent, UserAgent: c.cfg.UserAgent,
		Findings: c.findings, Requests: len(c.exchanges), Pages: c.htmlPages(),
		Gap: c.gap.Seconds(), Cut: c.cut, Log: c.exchanges,
	}
	if rep.Log == nil {
		rep.Log = []Exchange{}
	}
	if !c.began.IsZero() {
		rep.Seconds = time.Since(c.began).Round(time.Millisecond).Seconds()
	}
	return rep
}

func (c *checker) htmlPages() int {
	n := 0
	for _, p := range c.sample.pages {
		if p.html && p.purpose == purposePage {
			n++
		}
	}
	return n
}

// judgeCrawlDelay adds crawl-delay when one pass over the site's known
// URLs at the Crawl-delay takes more than a day, or crawl-rate when it
// does not.
func (c *checker) judgeCrawlDelay(r *originRobots) {
	cd, ok := r.group.CrawlDelayInfo()
	if !ok || cd.Delay <= 0 {
		return
	}
	known, source := c.maps.urls, "the sitemaps list "+countURLs(&c.maps)
	if c.sample.known > known {
		known, source = c.sample.known, fmt.Sprintf("the sample found %s of the site", plural(c.sample.known, "URL"))
	}
	if cd.Absurd {
		c.add(IDCrawlDelay, Warn,
			fmt.Sprintf("Crawl-delay: %s (line %d) asks for more than a day between two requests: crawlers that honour it fetch less than a page a day, and others take it for a mistake and ignore it", cd.Raw, cd.Line),
			fmt.Sprintf("%s/robots.txt line %d: Crawl-delay: %s", r.origin, cd.Line, cd.Raw))
		return
	}
	secs := cd.Delay.Seconds()
	perDay := 86400 / secs
	pass := time.Duration(float64(known) * float64(cd.Delay))
	if float64(known)*secs > 1e15 {
		pass = time.Duration(1 << 62)
	}
	msg := fmt.Sprintf("Crawl-delay: %s (line %d) allows at most %s requests a day; %s: one pass over them takes %s × %s = %s",
		cd.Raw, cd.Line, thousands(int(perDay)), source, thousands(known), seconds(secs), span(pass))
	ev := []string{
		fmt.Sprintf("%s/robots.txt line %d: Crawl-delay: %s", r.origin, cd.Line, cd.Raw),
		fmt.Sprintf("86,400 s a day / %s = %s requests a day", seconds(secs), thousands(int(perDay))),
		fmt.Sprintf("%s URLs × %s = %s", thousands(known), seconds(secs), span(pass)),
	}
	if pass > 24*time.Hour {
		c.add(IDCrawlDelay, Warn, msg+": crawlers that honour it cannot keep the site fresh (Google ignores Crawl-delay; Bing and many others honour it)", ev...)
		return
	}
	c.add(IDCrawlRate, Info, msg, ev...)
}

// judgePages adds the findings about the pages of the sample.
func (c *checker) judgePages() {
	var html []*page
	for _, p := range c.sample.pages {
		if p.html && p.purpose == purposePage {
			html = append(html, p)
		}
	}
	var notJudged []string
	if len(html) == 0 {
		notJudged = append(notJudged, "validators, compression and session ids: no HTML page of the site answered 200")
	} else {
		c.judgeValidators(html)
		c.judgeCompression()
		c.judgeSessions()
	}
	c.judgeConditional(&notJudged)
	c.judgeVary()
	c.judgeRetryAfter()
	c.judgeProbe(&notJudged)
	if len(notJudged) > 0 {
		c.add(IDNotJudged, Info, "some checks could not conclude for want of a sample", notJudged...)
	}
}

func (c *checker) judgeValidators(html []*page) {
	var without []string
	for _, p := range html {
		if !p.res.HasValidators() {
			line := p.url.String()
			if lm := p.res.Header.Get("Last-Modified"); lm != "" {
				line += fmt.Sprintf(" (Last-Modified: %q is not an HTTP-date, RFC 9110 §5.6.7)", lm)
			}
			without = append(without, line)
		}
	}
	if len(without) == 0 {
		return
	}
	c.add(IDNoValidators, Warn,
		fmt.Sprintf("%d of %s carry neither ETag nor Last-Modified: a crawler must download them in full on every visit to learn whether they changed", len(without), plural(len(html), "HTML page")),
		examples(without, "without ETag and Last-Modified: ")...)
}

// judgeConditional adds conditional-ignored, etag-gzip-suffix,
// etag-ignored or validators from the conditional re-requests.
func (c *checker) judgeConditional(notJudged *[]string) {
	tests := c.sample.cond
	if len(tests) == 0 {
		for _, p := range c.sample.pages {
			if p.html && p.purpose == purposePage && p.res.HasValidators() {
				*notJudged = append(*notJudged, "conditional GET: no request was left to re-request a page with its validators")
				return
			}
		}
		return
	}
	var honoured, ignored, changed, other []condTest
	for _, t := range tests {
		switch t.outcome {
		case condHonoured:
			honoured = append(honoured, t)
		case condIgnored:
			ignored = append(ignored, t)
		case condChanged:
			changed = append(changed, t)
		default:
			other = append(other, t)
		}
	}
	var ev []string
	for _, t := range tests {
		ev = append(ev, t.tries...)
	}
	first := tests[0]
	switch {
	case len(ignored) > 0:
		c.add(IDConditionalIgnored, Warn,
			fmt.Sprintf("%d of %s re-requested with their validators answered 200 with the same bytes instead of 304 Not Modified: every revisit downloads the page in full", len(ignored), plural(len(tests), "page")),
			ev...)
		return
	case len(honoured) == 0:
		*notJudged = append(*notJudged, "conditional GET: the pages re-requested changed or did not answer 200 or 304")
		*notJudged = append(*notJudged, ev...)
		return
	}
	etag := first.page.res.Header.Get("ETag")
	switch mode := c.sample.condMode; {
	case mode != condBoth && strings.Contains(etag, `-`) && isSuffixed(etag):
		stripped, _ := fetch.StripETagCoding(etag)
		c.add(IDETagGzipSuffix, Info,
			fmt.Sprintf("compressed pages carry an ETag with a coding suffix (%s) that the server does not recognise in If-None-Match: clients that send it back, as RFC 9110 asks, get the full page every time; %s gets 304 (Apache's mod_deflate, bug 45023; gentlecrawl learns this, and DeflateAlterETag NoChange or Remove, Apache 2.4.58 and later, fixes it for every client)",
				etag, map[condMode]string{condStripped: "the ETag without it (" + stripped + ")", condDate: "If-Modified-Since alone"}[mode]),
			ev...)
	case mode != condBoth:
		c.add(IDETagIgnored, Info,
			"the ETag as sent is not recognised in If-None-Match, but If-Modified-Since alone gets 304: clients that send both validators, as RFC 9110 asks, get the full page every time (ETags that differ between the servers of a cluster do this)",
			ev...)
	default:
		c.add(IDValidators, Info,
			fmt.Sprintf("conditional GET works: %d of %s re-requested with their validators answered 304 Not Modified", len(honoured), plural(len(tests), "page")),
			ev...)
	}
	if len(changed)+len(other) > 0 {
		*notJudged = append(*notJudged, fmt.Sprintf("conditional GET: %s changed between two requests or did not answer", plural(len(changed)+len(other), "page")))
	}
}

func isSuffixed(etag string) bool {
	_, ok := fetch.StripETagCoding(etag)
	return ok
}

// textTypes are the media types worth compressing.
var textTypes = []string{"text/html", "application/xhtml+xml", "text/plain", "text/css", "text/javascript",
	"application/javascript", "application/json", "application/xml", "text/xml"}

func (c *checker) judgeCompression() {
	var plain, packed []string
	for _, p := range c.sample.pages {
		res := p.res
		if p.purpose != purposePage || res.Status != http.StatusOK || !slices.Contains(textTypes, res.MediaType) {
			continue
		}
		enc := strings.ToLower(strings.TrimSpace(res.Header.Get("Content-Encoding")))
		switch {
		case enc != "" && enc != "identity":
			packed = append(packed, fmt.Sprintf("%s: Content-Encoding: %s, %s bytes sent for %s", p.url, enc, thousands(p.raw), thousands(int(p.decoded()))))
		case p.decoded() >= int64(c.cfg.MinCompressible):
			plain = append(plain, fmt.Sprintf("%s: %s bytes, %s, no Content-Encoding", p.url, thousands(int(p.decoded())), res.MediaType))
		}
	}
	if len(plain) > 0 {
		ev := []string{"Accept-Encoding sent: gzip, deflate, br, zstd"}
		ev = append(ev, examples(plain, "")...)
		c.add(IDNoCompression, Warn,
			fmt.Sprintf("%d of %s over %d bytes came uncompressed although the request offered gzip: compression usually saves crawlers and the site 70-80%% of those bytes", len(plain), plural(len(plain)+len(packed), "text page"), c.cfg.MinCompressible),
			ev...)
		return
	}
	if len(packed) > 0 {
		c.add(IDCompression, Info, fmt.Sprintf("%d of %s came compressed", len(packed), plural(len(packed), "text page")), examples(packed, "")...)
	}
}

func (c *checker) judgeVary() {
	var bad []string
	for _, p := range c.sample.pages {
		enc := strings.ToLower(strings.TrimSpace(p.res.Header.Get("Content-Encoding")))
		if enc == "" || enc == "identity" {
			continue
		}
		if !varies(p.res.Header) {
			bad = append(bad, fmt.Sprintf("%s: Content-Encoding: %s, Vary: %q", p.url, enc, strings.Join(p.res.Header.Values("Vary"), ", ")))
		}
	}
	if len(bad) > 0 {
		// Info, not a warning: nginx's stock gzip (gzip_vary off) and many
		// CDNs answer so, crawlers are not harmed by it, and a check that
		// fails a default server teaches site owners to ignore it.
		c.add(IDVaryMissing, Info,
			fmt.Sprintf("%d compressed answers lack Vary: Accept-Encoding: a cache between the site and its visitors may hand the compressed bytes to a client that did not ask for them (RFC 9110 §12.5.5)", len(bad)),
			examples(bad, "")...)
	}
}

// varies reports whether a Vary header names Accept-Encoding, or is "*".
func varies(h http.Header) bool {
	for _, v := range h.Values("Vary") {
		for f := range strings.SplitSeq(v, ",") {
			f = strings.TrimSpace(f)
			if f == "*" || strings.EqualFold(f, "Accept-Encoding") {
				return true
			}
		}
	}
	return false
}

func (c *checker) judgeRetryAfter() {
	var without, with []string
	for _, p := range c.sample.pages {
		if s := p.res.Status; s != http.StatusServiceUnavailable && s != http.StatusTooManyRequests {
			continue
		}
		if ra := p.res.Header.Get("Retry-After"); ra != "" {
			with = append(with, fmt.Sprintf("GET %s → %d, Retry-After: %s", p.url, p.res.Status, ra))
		} else {
			without = append(without, fmt.Sprintf("GET %s → %d, no Retry-After", p.url, p.res.Status))
		}
	}
	if len(without) > 0 {
		c.add(IDRetryAfterMissing, Warn,
			fmt.Sprintf("%s of 503 or 429 came without Retry-After: crawlers must guess when to come back; Retry-After tells them (RFC 9110 §10.2.3)", plural(len(without), "answer")),
			examples(without, "")...)
	}
	if len(with) > 0 {
		c.add(IDRetryAfter, Info, fmt.Sprintf("%s of 503 or 429 said when to come back (Retry-After)", plural(len(with), "answer")), examples(with, "")...)
	}
}

func (c *checker) judgeProbe(notJudged *[]string) {
	pr := c.sample.probe
	switch {
	case pr == nil:
		*notJudged = append(*notJudged, "soft 404: no request was left for the probe")
		return
	case pr.none != "":
		*notJudged = append(*notJudged, "soft 404: "+pr.none)
		return
	case pr.err != nil:
		*notJudged = append(*notJudged, fmt.Sprintf("soft 404: GET %s → no answer: %s", pr.url, oneLine(pr.err)))
		return
	}
	res := pr.page.res
	line := fmt.Sprintf("GET %s → %d", pr.url, res.Status)
	switch {
	case res.Status == http.StatusOK:
		ev := []string{fmt.Sprintf("%s, %s, %s bytes", line, res.Header.Get("Content-Type"), thousands(int(pr.page.decoded())))}
		if pr.page.title != "" {
			ev = append(ev, fmt.Sprintf("its title: %q", pr.page.title))
		}
		for _, p := range c.sample.pages {
			if p != pr.page && p.res.Status == http.StatusOK && p.digest == pr.page.digest {
				ev = append(ev, "the same bytes as "+p.url.String())
				break
			}
		}
		c.add(IDSoft404, Warn,
			"a URL that cannot exist answers 200: crawlers cannot tell missing pages from real ones, keep and revisit every mistyped or removed URL, and may index the error page; answer 404 or 410",
			ev...)
	case res.Status == http.StatusNotFound || res.Status == http.StatusGone:
		c.add(IDNotFound, Info, fmt.Sprintf("a URL that cannot exist answers %d", res.Status), line)
	case res.Status >= 300 && res.Status < 400:
		c.add(IDNotFound, Info,
			fmt.Sprintf("a URL that cannot exist answers %d with a redirect to %s: crawlers read a redirect of missing pages to the home page as a soft 404", res.Status, res.Header.Get("Location")), line)
	case res.Status == http.StatusServiceUnavailable || res.Status == http.StatusTooManyRequests:
		*notJudged = append(*notJudged, "soft 404: "+line)
	default:
		c.add(IDNotFound, Info, fmt.Sprintf("a URL that cannot exist answers %d", res.Status), line)
	}
}

// decoded is the size of the decoded body, whether or not it is kept.
func (p *page) decoded() int64 {
	if p.res.Body != nil {
		return int64(len(p.res.Body))
	}
	return p.size
}

// judgeSessions adds session-ids when links of the site carry them.
func (c *checker) judgeSessions() {
	type hit struct {
		name  string
		known bool
		links []string
		pages map[string]bool
	}
	hits := map[string]*hit{}
	var order []string
	for _, l := range c.sample.links {
		_, removed := urlnorm.StripFunc(l.url, func(name string) bool { return c.sample.fresh[name] })
		for _, name := range removed {
			h := hits[name]
			if h == nil {
				_, known := urlnorm.StripSessionIDs(&url.URL{Path: "/", RawQuery: name + "=0123456789abcdef0123456789abcdef"})
				h = &hit{name: name, known: len(known) > 0 || strings.HasPrefix(name, ";"), pages: map[string]bool{}}
				hits[name] = h
				order = append(order, name)
			}
			if len(h.links) < 3 {
				h.links = append(h.links, fmt.Sprintf("%s (on %s)", l.url, l.from))
			}
			h.pages[l.from] = true
		}
	}
	if len(order) == 0 {
		return
	}
	var ev []string
	var names []string
	for _, name := range order {
		h := hits[name]
		kind := "a session id by its name"
		if !h.known {
			kind = "a token that changes from page to page for the same link"
		}
		names = append(names, strings.TrimPrefix(name, ";"))
		ev = append(ev, fmt.Sprintf("%s: %s, in links on %d of %s", strings.TrimPrefix(name, ";"), kind, len(h.pages), plural(c.htmlPages(), "page")))
		ev = append(ev, h.links...)
	}
	c.add(IDSessionIDs, Warn,
		fmt.Sprintf("links carry session ids (%s): every visit without cookies makes new URLs for the same pages, so crawlers fetch each page many times or drop the parameter on guesswork; keep sessions in cookies", strings.Join(names, ", ")),
		ev...)
}

// learnSessions looks among the links found so far for parameters that
// carry a different token for the same link from page to page (a session
// id the crawler does not know by name), and adds them to
// sample.fresh. A parameter counts once it does so on two paths.
func (c *checker) learnSessions() {
	byPath := map[string][]foundLink{}
	for _, l := range c.sample.links {
		if len(byPath[l.url.Path]) < 16 {
			byPath[l.url.Path] = append(byPath[l.url.Path], l)
		}
	}
	paths := map[string]map[string]bool{} // parameter → paths where it varies
	for p, ls := range byPath {
		for i := range ls {
			for j := i + 1; j < len(ls); j++ {
				a, b := ls[i].url, ls[j].url
				if a.RawQuery == b.RawQuery || !urlspace.TokenVariants(a, b) {
					continue
				}
				qa, qb := a.Query(), b.Query()
				for name := range qa {
					if qa.Get(name) != qb.Get(name) {
						if paths[name] == nil {
							paths[name] = map[string]bool{}
						}
						paths[name][p] = true
					}
				}
			}
		}
	}
	for name, ps := range paths {
		if len(ps) >= 2 {
			c.sample.fresh[name] = true
		}
	}
}

// judgeTimes adds slow-response, or response-time, from the time to first
// byte of every answer.
func (c *checker) judgeTimes() {
	type answer struct {
		url  string
		ttfb float64
	}
	var as []answer
	for _, x := range c.exchanges {
		if x.Status > 0 {
			u := x.URL
			if x.Purpose != purposePage {
				u += " (" + x.Purpose + ")"
			}
			as = append(as, answer{u, x.TTFB})
		}
	}
	if len(as) < 3 {
		if len(as) > 0 {
			c.add(IDNotJudged, Info, "response time: fewer than 3 answers", plural(len(as), "answer"))
		}
		return
	}
	sorted := slices.Clone(as)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ttfb > sorted[j].ttfb })
	ttfbs := make([]float64, len(as))
	for i, a := range as {
		ttfbs[i] = a.ttfb
	}
	slices.Sort(ttfbs)
	med := ttfbs[len(ttfbs)/2]
	if len(ttfbs)%2 == 0 {
		med = (ttfbs[len(ttfbs)/2-1] + ttfbs[len(ttfbs)/2]) / 2
	}
	ev := []string{fmt.Sprintf("median %s over %s", ms(med), plural(len(as), "answer"))}
	for i := 0; i < len(sorted) && i < 3; i++ {
		ev = append(ev, fmt.Sprintf("%s: %s to first byte", sorted[i].url, ms(sorted[i].ttfb)))
	}
	limit := millis(c.cfg.SlowTTFB)
	if med > limit {
		c.add(IDSlowResponse, Warn,
			fmt.Sprintf("the median time to first byte is %s, over %s: crawlers that adapt to the server (gentlecrawl does, and Google) slow down, and fewer pages are crawled", ms(med), ms(limit)),
			ev...)
		return
	}
	c.add(IDResponseTime, Info, fmt.Sprintf("the median time to first byte is %s", ms(med)), ev...)
}

// judgeSample says what was fetched, and why the sample stopped early.
func (c *checker) judgeSample() {
	statuses := map[int]int{}
	errs := 0
	purposes := map[string]int{}
	for _, x := range c.exchanges {
		purposes[x.Purpose]++
		if x.Status > 0 {
			statuses[x.Status]++
		} else {
			errs++
		}
	}
	var ev []string
	var parts []string
	for _, p := range []string{purposeRobots, purposeSitemap, purposePage, purposeConditional, purposeProbe} {
		if n := purposes[p]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, map[string]string{
				purposeRobots: "robots.txt", purposeSitemap: "sitemap", purposePage: "page",
				purposeConditional: "conditional", purposeProbe: "soft-404 probe"}[p]))
		}
	}
	ev = append(ev, "requests: "+strings.Join(parts, ", "))
	var codes []int
	for s := range statuses {
		codes = append(codes, s)
	}
	slices.Sort(codes)
	var st []string
	for _, s := range codes {
		st = append(st, fmt.Sprintf("%d × %d", statuses[s], s))
	}
	if errs > 0 {
		st = append(st, fmt.Sprintf("%d without an answer", errs))
	}
	if len(st) > 0 {
		ev = append(ev, "answers: "+strings.Join(st, ", "))
	}
	ev = append(ev, fmt.Sprintf("one request at a time, at least %v apart (%s)", c.gap, c.gapWhy))
	if n := len(c.sample.disallowed); n > 0 {
		ev = append(ev, fmt.Sprintf("%s not fetched: robots.txt disallows them, e.g. %s", plural(n, "URL"), c.sample.disallowed[0]))
	}
	msg := fmt.Sprintf("%s, %s of %s", plural(len(c.exchanges), "request"), plural(c.htmlPages(), "HTML page"), c.site)
	if c.cut != "" && c.cut != fmt.Sprintf("the request budget (%d) is spent", c.cfg.MaxRequests) {
		msg += "; the sample stopped early: " + c.cut
		if strings.HasPrefix(c.cut, "the time budget") {
			msg += " — the findings rest on fewer pages"
		}
	}
	c.add(IDSample, Info, msg, ev...)
}

// examples returns up to maxExamples items, each with prefix, and a line
// saying how many more there are.
func examples(items []string, prefix string) []string {
	var out []string
	for i, it := range items {
		if i == maxExamples {
			out = append(out, fmt.Sprintf("… and %d more", len(items)-maxExamples))
			break
		}
		out = append(out, prefix+it)
	}
	return out
}

// plural writes "1 URL", "2 URLs", "86,400 URLs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return thousands(n) + " " + noun + "s"
}

// thousands writes n with commas: 86,400.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// seconds writes a number of seconds: "10 s", "0.5 s".
func seconds(s float64) string {
	return fmt.Sprintf("%s s", strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", s), "0"), "."))
}

// span writes a long duration in seconds and the unit that reads best:
// "500,000 s (5.8 days)".
func span(d time.Duration) string {
	secs := thousands(int(d.Seconds()))
	switch {
	case d >= 24*time.Hour:
		return fmt.Sprintf("%s s (%.1f days)", secs, d.Hours()/24)
	case d >= 2*time.Hour:
		return fmt.Sprintf("%s s (%.1f hours)", secs, d.Hours())
	case d >= 2*time.Minute:
		return fmt.Sprintf("%s s (%.0f minutes)", secs, d.Minutes())
	}
	return secs + " s"
}

func ms(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2f s", v/1000)
	}
	if v >= 10 {
		return fmt.Sprintf("%.0f ms", v)
	}
	return fmt.Sprintf("%.1f ms", v)
}
