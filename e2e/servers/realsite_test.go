package servers_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/html"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
	"github.com/gentlecrawl/gentlecrawl/internal/nginxtest"
)

// rustDoc is where Debian's rust-doc package installs the Rust
// documentation: the standard library's API, the books, and a robots.txt.
const rustDoc = "/usr/share/doc/rust-doc/html"

// TestRealSiteLosesNothing crawls a real site without traps, and checks
// from nginx's access log — the server's view — that the crawl lost
// nothing. The site is Debian's rust-doc HTML (1.63 on Debian 12) served
// whole by nginx; the crawl starts at /std/index.html and is kept to
// /std/ by Include: the standard library's API, whose pages link to
// each other and, out of scope, to core, alloc, the books and the
// sources. The walk reaches 1,530 of the 1,779 .html files under /std/
// (the others are rustdoc's redirect stubs, which nothing links to).
//
// The pages it must fetch are found without the crawler: a walk of the
// files from the seed, reading the href of every <a> with
// golang.org/x/net/html, resolved against the page's URL (or its
// <base>), fragment dropped, and kept when it names the site, lies under
// /std/, is allowed by the site's robots.txt (which nginx serves: it
// disallows old book editions, outside /std/), and maps to an .html file
// or to a directory with an index.html. A page whose meta robots says
// nofollow or none, and rel="nofollow" links, are not followed (rust-doc
// has neither). The crawl's defaults set no depth or page limit, and the
// crawl has no delay (NoDelay: host load alone paces it).
//
// Every such page must be in the access log with status 200, and no URL
// may be asked twice. (A file linked under two URLs, as "x.html" and
// "x.html?highlight=y", is two pages for the walk as for the crawler;
// no file under /std/ is.) Every request must be robots.txt, such a
// page, or another link target of theirs in scope (a non-HTML file, or
// a file that does not exist: /std/ has 7 dangling links), so that the
// number of requests is 1 + the pages + the other targets fetched.
//
// GENTLECRAWL_REALSITE_ALL=1 crawls the whole site instead: 21,635 pages
// reachable from /index.html, all fetched, in about 25 s without -race.
//
// Under -race the walk and the crawl are kept to /std/collections/ (92
// pages reachable from its index, the part TestSharedRealServer crawls):
// the race detector makes both ten times slower, and watches the
// crawler's concurrency as well on a part of the site; scripts/test runs
// the test again without -race, on the whole of /std/. Measured with -race on 2 cores on the whole of
// /std/ (with other work running, load 1.5 to 3): 34 to 43 s in six runs,
// of which the walk 9 to 13 s and the crawl 24 to 31 s; 1,538 requests.
// Without -race: about 5 s.
func TestRealSiteLosesNothing(t *testing.T) {
	requireRustDoc(t)
	const host = "rust-doc.test"
	sub := "/std/"
	if raceEnabled {
		sub = "/std/collections/"
	}
	if os.Getenv("GENTLECRAWL_REALSITE_ALL") != "" {
		sub = "/" // the whole site: 21,635 pages, about 20 s without -race
	}
	seed := "http://" + host + sub + "index.html"
	start := time.Now()
	reach, err := walkSite(rustDoc, host, sub+"index.html", sub)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("walk: %d pages reachable from %s, and %d other link targets, in %v", len(reach.pages), seed, len(reach.others), time.Since(start).Round(time.Millisecond))
	if n := len(reach.unparsed); n > 0 {
		t.Logf("walk: %d hrefs that url.Parse refuses, not followed, such as %q", n, reach.unparsed[:min(n, 5)])
	}

	srv := nginxtest.Start(t, nginxtest.Site{Name: host, Addr: "127.0.0.2:0", Root: rustDoc, Gzip: true})
	// Room for a loaded machine: a CI run beside other heavy work crawled
	// half the pages in 3 minutes (the crawler slows down when the
	// server's answers do, as it should).
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	start = time.Now()
	sum := crawltest.MustCrawl(t, ctx, gentlecrawl.Config{
		JobDir:               t.TempDir(),
		Seeds:                []string{seed},
		Include:              []*regexp.Regexp{regexp.MustCompile("^" + regexp.QuoteMeta("http://"+host+sub))},
		NoDelay:              true,
		ConnectTo:            crawltest.ConnectTo(host + ":80:" + srv.Addr(host)),
		AllowPrivateNetworks: true,
	})
	t.Logf("crawl: %v, stopped %q: %d requests, %d pages, %d out of scope, %d traps refused, %d too deep, %d skipped by extension, %d nofollow pages",
		time.Since(start).Round(time.Millisecond), sum.Stopped, sum.Requests, sum.Pages, sum.OutOfScope, sum.TrapsRefused, sum.TooDeep, sum.SkippedExtension, sum.NoFollowPages)
	if sum.Stopped != "finished" {
		t.Errorf("the crawl stopped %q, want finished", sum.Stopped)
	}
	entries, err := srv.WaitEntries(t.Context(), sum.Requests)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != sum.Requests {
		t.Errorf("access log: %d requests, the crawl's summary %d", len(entries), sum.Requests)
	}

	got := map[string][]int{}      // statuses by siteKey
	files := map[string][]string{} // keys answered 200 by page file
	for _, e := range entries {
		u, err := url.Parse(e.URI)
		if err != nil {
			t.Errorf("access log: %q: %v", e.URI, err)
			continue
		}
		k := siteKey(u)
		got[k] = append(got[k], e.Status)
		if e.Status == 200 && sitePage(rustDoc, u.Path) {
			f := siteFile(rustDoc, u.Path)
			files[f] = append(files[f], k)
		}
	}
	var missed []string
	for k, p := range reach.pages {
		if st := got[k]; !slices.Contains(st, 200) {
			missed = append(missed, fmt.Sprintf("%s: statuses %v; at depth %d, linked from %s as %s", k, st, p.depth, p.from, p.href))
		}
	}
	sort.Strings(missed)
	for _, m := range missed {
		t.Errorf("not fetched: %s", m)
	}
	var twice, unexplained []string
	others := 0
	for k, st := range got {
		if len(st) > 1 {
			twice = append(twice, fmt.Sprintf("%s: statuses %v", k, st))
		}
		_, page := reach.pages[k]
		_, other := reach.others[k]
		switch {
		case other:
			others++
		case !page && k != "/robots.txt":
			unexplained = append(unexplained, fmt.Sprintf("%s: statuses %v", k, st))
		}
	}
	sort.Strings(twice)
	sort.Strings(unexplained)
	for _, s := range twice {
		t.Errorf("fetched more than once: %s", s)
	}
	for _, s := range unexplained {
		t.Errorf("fetched, but no reachable page links to it: %s", s)
	}
	if want := 1 + len(reach.pages) + others; len(missed) == 0 && len(entries) != want {
		t.Errorf("%d requests, want %d: robots.txt, %d pages, %d other link targets", len(entries), want, len(reach.pages), others)
	}
	t.Logf("%d of %d reachable pages fetched; %d requests: robots.txt, the pages, %d of the %d other link targets", len(reach.pages)-len(missed), len(reach.pages), len(entries), others, len(reach.others))
	// The same file under two URLs that pages link to is two pages, for
	// the walk as for the crawler, which cannot tell before it fetches
	// them ("x.html" and "x.html?highlight=y" in rust-doc's reference).
	for f, ks := range files {
		if len(ks) > 1 {
			t.Logf("%s fetched under %d URLs: %v", f, len(ks), ks)
		}
	}
	if len(reach.others) <= 20 {
		for _, k := range slices.Sorted(maps.Keys(reach.others)) {
			t.Logf("other link target %s: statuses %v; linked from %s", k, got[k], reach.others[k].from)
		}
	}
}

// requireRustDoc skips the test when rust-doc is not installed, or fails
// it when the environment variable CI is set: scripts/test installs it,
// as it does nginx (nginxtest.Require).
func requireRustDoc(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(rustDoc, "std", "index.html")); err != nil {
		msg := fmt.Sprintf("rust-doc is not installed (apt-get install -y rust-doc; scripts/test installs it when run as root): %v", err)
		if os.Getenv("CI") != "" {
			t.Fatalf("%s; CI is set, so this test must run", msg)
		}
		t.Skip(msg)
	}
}

// siteReach is what walkSite found.
type siteReach struct {
	pages  map[string]siteLink // the HTML pages, by siteKey
	others map[string]siteLink // other link targets in scope, by siteKey
	// unparsed are the hrefs url.Parse refused ("page: href"), followed
	// by neither the walk nor, if it agrees, the crawler.
	unparsed []string
}

// siteLink is how the walk first found a page or link target: on the
// page from (a siteKey), as href resolved, depth links from the seed.
type siteLink struct {
	from, href string
	depth      int
}

// siteKey is the request URI as nginx reads it: the path unescaped, and
// the query as sent.
func siteKey(u *url.URL) string {
	if u.RawQuery != "" {
		return u.Path + "?" + u.RawQuery
	}
	return u.Path
}

// walkSite walks the HTML pages of the site served from root as
// http://host/, from the path seed, breadth first, following the <a href>
// links to paths under sub that robots.txt allows.
func walkSite(root, host, seed, sub string) (*siteReach, error) {
	disallow, err := siteDisallow(filepath.Join(root, "robots.txt"))
	if err != nil {
		return nil, err
	}
	r := &siteReach{pages: map[string]siteLink{}, others: map[string]siteLink{}}
	first := &url.URL{Scheme: "http", Host: host, Path: seed}
	if !sitePage(root, seed) {
		return nil, fmt.Errorf("seed %s: no page", seed)
	}
	r.pages[siteKey(first)] = siteLink{}
	level := []*url.URL{first}
	for depth := 1; len(level) > 0; depth++ {
		// The pages of a level are read in parallel (the tokenizer is
		// most of the walk's time, several times more under -race), and
		// their links taken in order, so that the walk is the same each
		// time.
		links := make([][]*url.URL, len(level))
		bad := make([][]string, len(level))
		errs := make([]error, len(level))
		var wg sync.WaitGroup
		next := make(chan int)
		for range runtime.GOMAXPROCS(0) {
			wg.Go(func() {
				for i := range next {
					links[i], bad[i], errs[i] = siteLinks(root, level[i])
				}
			})
		}
		for i := range level {
			next <- i
		}
		close(next)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		var found []*url.URL
		for i, u := range level {
			for _, h := range bad[i] {
				r.unparsed = append(r.unparsed, siteKey(u)+": "+h)
			}
			for _, l := range links[i] {
				if l.Scheme != "http" || !strings.EqualFold(l.Hostname(), host) || (l.Port() != "" && l.Port() != "80") {
					continue
				}
				if !strings.HasPrefix(l.Path, sub) || slices.ContainsFunc(disallow, func(p string) bool { return strings.HasPrefix(l.EscapedPath(), p) }) {
					continue
				}
				k := siteKey(l)
				if _, ok := r.pages[k]; ok {
					continue
				}
				if _, ok := r.others[k]; ok {
					continue
				}
				lf := siteLink{from: siteKey(u), href: l.String(), depth: depth}
				if sitePage(root, l.Path) {
					r.pages[k] = lf
					found = append(found, l)
				} else {
					r.others[k] = lf
				}
			}
		}
		level = found
	}
	return r, nil
}

// sitePage says whether nginx answers p with an HTML page: an .html file,
// or a directory's index.html for a path that ends with a slash.
func sitePage(root, p string) bool {
	if !strings.HasSuffix(p, "/") && path.Ext(p) != ".html" {
		return false
	}
	fi, err := os.Stat(siteFile(root, p))
	return err == nil && fi.Mode().IsRegular()
}

// siteFile is the file nginx serves for the path p of an HTML page.
func siteFile(root, p string) string {
	file := filepath.Join(root, filepath.FromSlash(p))
	if strings.HasSuffix(p, "/") {
		file = filepath.Join(file, "index.html")
	}
	return file
}

// siteLinks returns the links of the page at u that a crawler may
// follow: <a href> without rel="nofollow", resolved, without fragment;
// none when a <meta name="robots"> says nofollow or none. bad are the
// hrefs that url.Parse refuses.
func siteLinks(root string, u *url.URL) (links []*url.URL, bad []string, err error) {
	file := siteFile(root, u.Path)
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	z := html.NewTokenizer(bufio.NewReader(f))
	base := u
	haveBase := false
	var hrefs []string
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if z.Err() != io.EOF {
				return nil, nil, fmt.Errorf("%s: %w", file, z.Err())
			}
			break
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		name, hasAttr := z.TagName()
		if !hasAttr || !(string(name) == "a" || string(name) == "base" || string(name) == "meta") {
			continue
		}
		attrs := map[string]string{}
		for hasAttr {
			var k, v []byte
			k, v, hasAttr = z.TagAttr()
			if _, dup := attrs[string(k)]; !dup {
				attrs[string(k)] = string(v)
			}
		}
		switch string(name) {
		case "a":
			href, ok := attrs["href"]
			if ok && !slices.Contains(strings.Fields(strings.ToLower(attrs["rel"])), "nofollow") {
				hrefs = append(hrefs, href)
			}
		case "base":
			if href, ok := attrs["href"]; ok && !haveBase {
				haveBase = true
				if b, err := u.Parse(strings.TrimSpace(href)); err == nil {
					base = b
				}
			}
		case "meta":
			if n := strings.ToLower(attrs["name"]); n == "robots" || n == "gentlecrawl" {
				for _, d := range strings.Split(strings.ToLower(attrs["content"]), ",") {
					if d = strings.TrimSpace(d); d == "nofollow" || d == "none" {
						return nil, nil, nil
					}
				}
			}
		}
	}
	for _, h := range hrefs {
		l, err := base.Parse(strings.TrimSpace(h))
		if err != nil {
			bad = append(bad, h)
			continue
		}
		l.Fragment, l.RawFragment = "", ""
		links = append(links, l)
	}
	return links, bad, nil
}

// siteDisallow reads the Disallow prefixes of a robots.txt that has one
// group, for every agent, and plain path prefixes; anything else is an
// error, so that this simple reading stays a faithful one.
func siteDisallow(file string) ([]string, error) {
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for i, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		field, value, _ := strings.Cut(line, ":")
		field, value = strings.ToLower(strings.TrimSpace(field)), strings.TrimSpace(value)
		switch {
		case field == "" && value == "":
		case field == "user-agent" && value == "*" && i == 0:
		case field == "disallow" && value != "" && !strings.ContainsAny(value, "*$"):
			out = append(out, value)
		default:
			return nil, fmt.Errorf("%s line %d: %q: not the simple robots.txt this test reads", file, i+1, line)
		}
	}
	return out, nil
}

// raceEnabled is set when the tests are built with -race (race_test.go).
var raceEnabled bool
