package cmstest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// testAgent is the User-Agent of the tests' requests, by which they are
// found in the access log.
const testAgent = "gentlecrawl-cmstest/1 (loopback test)"

// TestWordPress sets the blog up, checks its ground truth against what it
// serves and logs the trap-like URL families its pages link to.
func TestWordPress(t *testing.T) {
	s := WordPress(t, 1)
	t.Logf("setup took %v", s.Setup.Round(time.Millisecond))
	logKinds(t, s)
	home := get(t, s.URL)
	if home.status != 200 || !bytes.Contains(home.body, []byte(`<meta name="generator" content="WordPress 6.`)) {
		t.Fatalf("%s: %d, not WordPress 6's HTML:\n%.500s", s.URL, home.status, home.body)
	}
	pages := fetchReal(t, s)
	checkLog(t, s, pages)
	checkReachable(t, s, pages, s.URL, nil)

	families := []family{
		{"?replytocom= (reply links)", regexp.MustCompile(`[?&]replytocom=\d+`)},
		{"feeds (/feed/)", regexp.MustCompile(`/feed/$`)},
		{"day archives (the calendar)", regexp.MustCompile(`/\d{4}/\d\d/\d\d/$`)},
		{"month archives", regexp.MustCompile(`/\d{4}/\d\d/$`)},
		{"year archives (unlinked)", regexp.MustCompile(`/\d{4}/$`)},
		{"list pages (/page/N/)", regexp.MustCompile(`/page/\d+/$`)},
		{"REST API (/wp-json/)", regexp.MustCompile(`/wp-json/`)},
		{"oEmbed", regexp.MustCompile(`/wp-json/oembed/`)},
		{"shortlinks (?p=N)", regexp.MustCompile(`/\?p=\d+$`)},
		{"xmlrpc.php", regexp.MustCompile(`/xmlrpc\.php`)},
		{"wp-login.php", regexp.MustCompile(`/wp-login\.php`)},
	}
	counts := countFamilies(t, s, pages, families)
	for _, f := range []string{"?replytocom= (reply links)", "feeds (/feed/)", "day archives (the calendar)", "month archives"} {
		if counts[f] == 0 {
			t.Errorf("no link of the family %s", f)
		}
	}

	// What WordPress says to robots on its trap-like pages.
	var post, reply string
	for _, p := range pages {
		if s.Kind[p.url] != "post" {
			continue
		}
		for _, l := range p.links {
			if strings.Contains(l.url, "replytocom=") {
				post, reply = p.url, l.url
				break
			}
		}
		if reply != "" {
			break
		}
	}
	for _, u := range []string{s.URL, post, reply, post + "feed/", s.URL + "?s=bread", s.URL + "2022/page/2/", s.URL + "robots.txt"} {
		logRobots(t, u)
	}
}

// TestDokuWiki sets the wiki up, checks its ground truth against what it
// serves and logs the trap-like URL families its pages link to.
func TestDokuWiki(t *testing.T) {
	s := DokuWiki(t, 1)
	t.Logf("setup took %v", s.Setup.Round(time.Millisecond))
	logKinds(t, s)
	home := get(t, s.URL) // redirects to the start page
	if home.status != 200 || !bytes.Contains(home.body, []byte(`<meta name="generator" content="DokuWiki"/>`)) {
		t.Fatalf("%s: %d, not DokuWiki's HTML:\n%.500s", s.URL, home.status, home.body)
	}
	start := s.URL + "doku.php?id=start"
	if home.url != start {
		t.Errorf("%s led to %s, want the start page %s", s.URL, home.url, start)
	}
	pages := fetchReal(t, s)
	checkLog(t, s, pages)
	// The start page links the index without rel="nofollow" (every other
	// page with it); the index itself is noindex,nofollow.
	checkReachable(t, s, pages, start, nil)

	families := []family{
		{"?do=revisions", regexp.MustCompile(`[?&]do=revisions`)},
		{"?rev=", regexp.MustCompile(`[?&]rev=\d+`)},
		{"?do=diff", regexp.MustCompile(`[?&]do=diff`)},
		{"?do=index (per page)", regexp.MustCompile(`[?&]do=index`)},
		{"&idx= (index namespaces)", regexp.MustCompile(`[?&]idx=`)},
		{"?do=backlink", regexp.MustCompile(`[?&]do=backlink`)},
		{"?do=recent", regexp.MustCompile(`[?&]do=recent`)},
		{"?do=edit (source)", regexp.MustCompile(`[?&]do=edit`)},
		{"?do=login", regexp.MustCompile(`[?&]do=login`)},
		{"?do=media", regexp.MustCompile(`[?&]do=media`)},
		{"exports (?do=export_)", regexp.MustCompile(`[?&]do=export_`)},
		{"feed.php", regexp.MustCompile(`/feed\.php`)},
		{"lib/exe/", regexp.MustCompile(`/lib/exe/`)},
	}
	counts := countFamilies(t, s, pages, families)
	for _, f := range []string{"?do=revisions", "?do=index (per page)"} {
		if counts[f] == 0 {
			t.Errorf("no link of the family %s", f)
		}
	}
	// Missing pages: links to pages nobody wrote (class wikilink2).
	missingPages := map[string]bool{}
	for _, p := range pages {
		for _, l := range p.links {
			if l.class == "wikilink2" {
				missingPages[l.url] = true
			}
		}
	}
	t.Logf("links to pages that do not exist (wikilink2): %d distinct", len(missingPages))

	// The revisions lists of a few pages (every 40th of the ground
	// truth), where ?rev= and ?do=diff are linked.
	var revs, revLink, diffLink string
	var nlists, nrev, ndiff int
	for i, p := range pages { // in the order of s.Real
		if s.Kind[p.url] != "page" || i%40 != 0 {
			continue
		}
		revs = p.url + "&do=revisions"
		nlists++
		for _, l := range get(t, revs).links {
			switch {
			case strings.Contains(l.url, "do=diff"):
				ndiff++
				diffLink = l.url
			case strings.Contains(l.url, "rev="):
				nrev++
				revLink = l.url
			}
		}
	}
	t.Logf("on %d revisions lists: %d ?rev= links, %d ?do=diff links", nlists, nrev, ndiff)
	if nrev == 0 || ndiff == 0 {
		t.Errorf("the revisions lists link no old revision (%d) or diff (%d)", nrev, ndiff)
	}
	missingPage := ""
	for u := range missingPages {
		missingPage = u
		break
	}
	for _, u := range []string{start, revs, revLink, diffLink, s.URL + "doku.php?id=start&do=index",
		s.URL + "doku.php?id=start&idx=" + url.QueryEscape(firstNamespace(s)), missingPage,
		s.URL + "doku.php?id=start&do=backlink", s.URL + "feed.php"} {
		if u != "" {
			logRobots(t, u)
		}
	}
}

// firstNamespace returns the namespace of the first page of s in a
// namespace.
func firstNamespace(s *Site) string {
	for _, u := range s.Real {
		if id, ok := strings.CutPrefix(u, s.URL+"doku.php?id="); ok && strings.Contains(id, ":") {
			return id[:strings.LastIndexByte(id, ':')]
		}
	}
	return ""
}

// link is a link of a page.
type link struct {
	url      string // absolute, without fragment
	tag      string // a, link, area
	nofollow bool   // rel has nofollow
	class    string
}

// page is a fetched page.
type page struct {
	url      string // as requested
	status   int
	ctype    string
	body     []byte
	links    []link
	nofollow bool   // meta robots has nofollow or none
	robots   string // meta robots content
	err      error
}

var client = &http.Client{
	Timeout: 60 * time.Second,
	Transport: &http.Transport{
		MaxIdleConnsPerHost: 8,
	},
}

// fetch gets u, following redirects when follow is set.
func fetch(u string, follow bool) page {
	p := page{url: u}
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		p.err = err
		return p
	}
	req.Header.Set("User-Agent", testAgent)
	c := *client
	if !follow {
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	resp, err := c.Do(req)
	if err != nil {
		p.err = err
		return p
	}
	defer resp.Body.Close()
	p.status = resp.StatusCode
	p.ctype = resp.Header.Get("Content-Type")
	p.url = resp.Request.URL.String()
	if p.body, p.err = io.ReadAll(resp.Body); p.err != nil {
		return p
	}
	if strings.HasPrefix(p.ctype, "text/html") {
		p.links, p.robots = parseHTML(resp.Request.URL, p.body)
		p.nofollow = strings.Contains(p.robots, "nofollow") || strings.Contains(p.robots, "none")
	}
	return p
}

// get fetches u following redirects, and fails the test on an error.
func get(t *testing.T, u string) page {
	t.Helper()
	p := fetch(u, true)
	if p.err != nil {
		t.Fatalf("GET %s: %v", u, p.err)
	}
	return p
}

// parseHTML returns the links of an HTML page and its meta robots.
func parseHTML(base *url.URL, body []byte) (links []link, robots string) {
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return links, robots
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			attr := map[string]string{}
			for _, a := range tok.Attr {
				attr[a.Key] = a.Val
			}
			switch tok.Data {
			case "meta":
				if strings.EqualFold(attr["name"], "robots") {
					robots = strings.ToLower(attr["content"])
				}
			case "a", "link", "area":
				href, ok := attr["href"]
				if !ok {
					continue
				}
				u, err := base.Parse(strings.TrimSpace(href))
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
					continue
				}
				u.Fragment, u.RawFragment = "", ""
				rel := strings.Fields(strings.ToLower(attr["rel"]))
				links = append(links, link{url: u.String(), tag: tok.Data, nofollow: slices.Contains(rel, "nofollow"), class: attr["class"]})
			}
		}
	}
}

// fetchReal fetches every URL of the ground truth, four at a time, without
// following redirects, and checks that each answers 200 with HTML.
func fetchReal(t *testing.T, s *Site) []page {
	t.Helper()
	began := time.Now()
	pages := make([]page, len(s.Real))
	var wg sync.WaitGroup
	next := make(chan int)
	for range 4 {
		wg.Go(func() {
			for i := range next {
				pages[i] = fetch(s.Real[i], false)
			}
		})
	}
	for i := range s.Real {
		next <- i
	}
	close(next)
	wg.Wait()
	bad := 0
	for _, p := range pages {
		if p.err != nil || p.status != 200 || !strings.HasPrefix(p.ctype, "text/html") {
			if bad++; bad <= 10 {
				t.Errorf("ground truth %s (%s): %d %q %v", p.url, s.Kind[p.url], p.status, p.ctype, p.err)
			}
		}
	}
	t.Logf("%d ground-truth URLs fetched in %v: %d answered 200 with HTML", len(pages), time.Since(began).Round(time.Millisecond), len(pages)-bad)
	return pages
}

// checkLog checks that the access log holds a 200 for each page, with the
// tests' User-Agent. Apache writes a line after its response has been
// sent: it waits up to 10 seconds for the last ones.
func checkLog(t *testing.T, s *Site, pages []page) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		rs, err := s.Requests()
		if err != nil {
			t.Fatal(err)
		}
		logged := map[string]int{}
		var others []Request
		for _, r := range rs {
			if r.UserAgent != testAgent {
				others = append(others, r)
			}
			if r.UserAgent == testAgent && r.Method == "GET" && r.Status == 200 {
				logged[r.URI]++
			}
		}
		var missed []string
		for _, p := range pages {
			u, _ := url.Parse(p.url)
			if logged[u.RequestURI()] == 0 {
				missed = append(missed, u.RequestURI())
			}
		}
		if len(missed) == 0 || time.Now().After(deadline) {
			if len(missed) > 0 {
				t.Errorf("the access log has no 200 for %d of the %d ground-truth URLs: %v", len(missed), len(pages), missed[:min(10, len(missed))])
			}
			// The site makes no request of its own: not while it is set
			// up, and not when it serves (WordPress's cron, which would
			// request wp-cron.php from the site, is off; DokuWiki's task
			// runner is an image, which only browsers load).
			if len(others) > 0 {
				t.Errorf("%d requests in the access log are not the tests': %v", len(others), others[:min(10, len(others))])
			}
			t.Logf("access log: %d requests, %d distinct URIs answered 200 to the tests", len(rs), len(logged))
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkReachable checks that every URL of the ground truth can be reached
// from start through the links (<a> and <area>, as package extract takes
// them; not <link>) of ground-truth pages; and, but for the kinds of
// except, through those a crawler that honours nofollow (rel and meta
// robots) follows.
func checkReachable(t *testing.T, s *Site, pages []page, start string, except []string) {
	t.Helper()
	byURL := map[string]page{}
	for _, p := range pages {
		byURL[p.url] = p
	}
	reach := func(honourNofollow bool) map[string]bool {
		seen := map[string]bool{start: true}
		queue := []string{start}
		for len(queue) > 0 {
			p := byURL[queue[0]]
			queue = queue[1:]
			if honourNofollow && p.nofollow {
				continue
			}
			for _, l := range p.links {
				if l.tag == "link" || (honourNofollow && l.nofollow) || seen[l.url] || s.Kind[l.url] == "" {
					continue
				}
				seen[l.url] = true
				queue = append(queue, l.url)
			}
		}
		return seen
	}
	all, polite := reach(false), reach(true)
	var unreached, impolite []string
	for _, u := range s.Real {
		switch {
		case !all[u]:
			unreached = append(unreached, u+" ("+s.Kind[u]+")")
		case !polite[u]:
			impolite = append(impolite, u+" ("+s.Kind[u]+")")
			if !slices.Contains(except, s.Kind[u]) {
				t.Errorf("%s (%s) is reached only through nofollow links", u, s.Kind[u])
			}
		}
	}
	if len(unreached) > 0 {
		t.Errorf("%d ground-truth URLs are not reached from %s through links of ground-truth pages: %s", len(unreached), start, strings.Join(unreached[:min(10, len(unreached))], ", "))
	}
	t.Logf("reachable from %s: %d of %d ground-truth URLs; through followed links only: %d (the others: %v)", start, len(all), len(s.Real), len(polite), impolite)
}

// family is a kind of URL a crawler meets.
type family struct {
	name string
	re   *regexp.Regexp
}

// countFamilies logs, for each family, the links of the ground-truth
// pages to URLs of the family: how many (and how many of those are
// <link> elements in the head rather than <a>), to how many distinct
// URLs, how many of those distinct URLs are in the ground truth, and how
// many links carry rel="nofollow". It also logs the links to URLs outside
// the ground truth on the site, and to other hosts. It returns the number
// of links of each family.
func countFamilies(t *testing.T, s *Site, pages []page, families []family) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, f := range families {
		n, head, nofollow := 0, 0, 0
		distinct, real := map[string]bool{}, 0
		for _, p := range pages {
			for _, l := range p.links {
				if !f.re.MatchString(l.url) {
					continue
				}
				n++
				if l.tag == "link" {
					head++
				}
				if l.nofollow {
					nofollow++
				}
				if !distinct[l.url] {
					distinct[l.url] = true
					if s.Kind[l.url] != "" {
						real++
					}
				}
			}
		}
		counts[f.name] = n
		t.Logf("%-28s %6d links (%5d <link>) to %5d distinct URLs (%3d in the ground truth); %5d rel=nofollow", f.name, n, head, len(distinct), real, nofollow)
	}
	other, offsite := map[string]bool{}, map[string]bool{}
	for _, p := range pages {
		for _, l := range p.links {
			switch {
			case !strings.HasPrefix(l.url, s.URL):
				u, _ := url.Parse(l.url)
				offsite[u.Host] = true
			case s.Kind[l.url] == "":
				other[l.url] = true
			}
		}
	}
	hosts := make([]string, 0, len(offsite))
	for h := range offsite {
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	t.Logf("links on the site outside the ground truth: %d distinct URLs; hosts linked elsewhere: %v", len(other), hosts)
	return counts
}

// logKinds logs how many URLs of each kind the ground truth has.
func logKinds(t *testing.T, s *Site) {
	t.Helper()
	n := map[string]int{}
	for _, k := range s.Kind {
		n[k]++
	}
	kinds := make([]string, 0, len(n))
	for k := range n {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	var b strings.Builder
	for _, k := range kinds {
		fmt.Fprintf(&b, " %s %d,", k, n[k])
	}
	t.Logf("ground truth: %d URLs:%s", len(s.Real), strings.TrimSuffix(b.String(), ","))
}

// logRobots fetches u and logs its status and what it tells robots.
func logRobots(t *testing.T, u string) {
	t.Helper()
	p := fetch(u, false)
	if p.err != nil {
		t.Errorf("GET %s: %v", u, p.err)
		return
	}
	robots := p.robots
	if robots == "" {
		robots = "(none)"
	}
	t.Logf("%s: %d %s, meta robots %s", u, p.status, p.ctype, robots)
}

// TestParseLine checks the reading of the access log's lines, escapes
// included.
func TestParseLine(t *testing.T) {
	r, err := parseLine("1733390000123456\t200\tGET /doku.php?id=a:b&do=diff HTTP/1.1\t1234\tbot \\\"x\\\"\\ty\\\\z")
	if err != nil {
		t.Fatal(err)
	}
	want := Request{Time: time.UnixMicro(1733390000123456), Method: "GET", URI: "/doku.php?id=a:b&do=diff", Status: 200, Bytes: 1234, UserAgent: "bot \"x\"\ty\\z"}
	if r != want {
		t.Errorf("got %+v, want %+v", r, want)
	}
	if r.Path() != "/doku.php" {
		t.Errorf("Path() = %q", r.Path())
	}
	r, err = parseLine("1733390000123456\t400\t\\x16\\x03\\x01\t226\t-")
	if err != nil || r.Method != "\x16\x03\x01" || r.URI != "" || r.UserAgent != "" {
		t.Errorf("a refused request line: %+v, %v", r, err)
	}
	if _, err := parseLine("1\t200\tGET / HTTP/1.1"); err == nil {
		t.Error("a short line was accepted")
	}
}
