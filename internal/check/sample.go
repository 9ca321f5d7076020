package check

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/gentlecrawl/gentlecrawl/extract"
	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

// page is one answer of the sample.
type page struct {
	url      *url.URL
	purpose  string
	res      *fetch.Result // Body is dropped after the page is read, unless it may be re-requested
	html     bool          // a whole HTML page that answered 200
	digest   [32]byte      // of the decoded body
	redirect *url.URL      // where a 3xx points
	title    string        // of the probe's answer
	size     int64         // of the decoded body
	raw      int           // bytes of the body as received
}

// sample is what the pages of the sample showed.
type sample struct {
	pages      []*page
	seen       map[string]bool // keys of URLs fetched or queued
	known      int             // distinct URLs of the site found (fetched or linked)
	disallowed []string        // URLs not fetched because robots.txt disallows them
	links      []foundLink     // the site's links, as found, for session ids
	cond       []condTest
	condMode   condMode // how validators are sent, once a way is learned
	probe      *probeResult
	fresh      map[string]bool // parameters found to carry session ids
}

// foundLink is a link of the site, on a page of the sample.
type foundLink struct {
	url  *url.URL
	from string
}

// skipExt are the extensions whose links the sample leaves for later:
// the crawler fetches images, style sheets and scripts, but the check is
// about pages.
var skipExt = fetch.DefaultExtensionPolicy().With("jpg", "jpeg", "png", "gif", "webp", "avif", "svg", "ico", "bmp", "tif", "tiff",
	"pdf", "css", "js", "mjs", "woff", "woff2", "ttf", "otf", "eot", "map", "json", "xml", "rss", "atom")

// sampleSite fetches the start page and the pages it leads to, one at a
// time, until the budget is spent; the conditional re-requests and the
// soft-404 probe are made along the way.
func (c *checker) sampleSite(ctx context.Context) error {
	s := &c.sample
	s.seen = map[string]bool{}
	s.fresh = map[string]bool{}
	queue := []*url.URL{c.start}
	s.seen[c.key(c.start)] = true
	s.known = 1
	switched := false
	for len(queue) > 0 && c.left() > c.reserve() {
		u := queue[0]
		queue = queue[1:]
		if len(s.fresh) > 0 {
			// Session ids learned since u was queued: fetch it without
			// them, and not at all when it is a page fetched already.
			u, _ = urlnorm.StripFunc(u, func(name string) bool { return s.fresh[name] })
			if c.fetched(u) {
				continue
			}
		}
		r, err := c.robotsFor(ctx, urlnorm.HostKey(u), false)
		if err != nil {
			return err
		}
		if !r.allowed(u) {
			if !r.notRead {
				s.disallowed = append(s.disallowed, u.String())
			}
			if len(s.pages) == 0 && u.Path != "/" {
				// The start page is disallowed: start from the root.
				root := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/"}
				if k := c.key(root); !s.seen[k] {
					s.seen[k] = true
					queue = append(queue, root)
				}
			}
			continue
		}
		p, err := c.visit(ctx, u, purposePage)
		if errors.Is(err, errStop) {
			break
		}
		if err != nil {
			continue // recorded in the log; nothing to read
		}
		if p.redirect != nil {
			origin := urlnorm.HostKey(p.redirect)
			if origin != c.site && !switched && !c.sampledHTML() {
				// The start URL leads to another origin (http to https,
				// a www name): sample that one, under its own robots.txt.
				switched = true
				c.site = origin
				if r, err := c.robotsFor(ctx, origin, false); err != nil {
					return err
				} else if !r.usable() {
					break
				}
				c.readSitemaps(ctx, c.origins[origin])
			}
			if origin == c.site {
				// A redirect may add a session id (";jsessionid=" on a
				// first visit): it counts as a link, and is followed
				// without it.
				s.links = append(s.links, foundLink{url: p.redirect, from: p.url.String() + " (Location)"})
				target, _ := urlnorm.StripFunc(p.redirect, func(name string) bool { return s.fresh[name] })
				if k := c.key(target); !s.seen[k] {
					s.seen[k] = true
					s.known++
					queue = append([]*url.URL{target}, queue...)
				}
			}
		}
		if p.html {
			for _, l := range c.links(p) {
				if k := c.key(l); !s.seen[k] {
					s.seen[k] = true
					s.known++
					queue = append(queue, l)
				}
			}
		}
		if p.html && len(s.cond) == 0 {
			c.conditional(ctx)
		}
		if s.probe == nil && c.sampledHTML() {
			c.probeNotFound(ctx)
		}
	}
	for len(s.cond) < 3 && c.left() > 0 {
		if !c.conditional(ctx) {
			break
		}
	}
	if s.probe == nil && c.left() > 0 {
		c.probeNotFound(ctx)
	}
	return nil
}

// reserve is how many requests the page loop leaves for the probe and the
// conditional re-requests still to come.
func (c *checker) reserve() int {
	n := max(0, 3-len(c.sample.cond))
	if c.sample.probe == nil {
		n++
	}
	return n
}

// fetched reports whether the sample has fetched u as a page, by the
// keys of now (session ids learned since are left out).
func (c *checker) fetched(u *url.URL) bool {
	k := c.key(u)
	for _, p := range c.sample.pages {
		if p.purpose == purposePage && c.key(p.url) == k {
			return true
		}
	}
	return false
}

func (c *checker) sampledHTML() bool {
	for _, p := range c.sample.pages {
		if p.html && p.purpose == purposePage {
			return true
		}
	}
	return false
}

// key is the URL's identity for the sample: its canonical form without
// session ids, known or found.
func (c *checker) key(u *url.URL) string {
	return urlnorm.Key(u, func(name string) bool { return c.sample.fresh[name] })
}

// visit fetches u and reads the answer. The body is kept only for a
// whole HTML page with validators, which may be re-requested.
func (c *checker) visit(ctx context.Context, u *url.URL, purpose string) (*page, error) {
	res, err := c.do(ctx, purpose, fetch.Request{URL: u})
	if err != nil {
		return nil, err
	}
	p := &page{url: u, purpose: purpose, res: res}
	p.digest = sha256.Sum256(res.Body)
	p.size, p.raw = int64(len(res.Body)), len(res.RawBody)
	p.html = res.Status == http.StatusOK && res.Complete() &&
		(res.MediaType == "text/html" || res.MediaType == "application/xhtml+xml")
	if purpose == purposeProbe {
		p.title = htmlTitle(res.Body)
	}
	if !p.html || purpose != purposePage {
		res.Body, res.RawBody = nil, nil
	}
	if res.Status >= 300 && res.Status < 400 {
		if loc, err := fetch.ResolveLocation(u, res.Header.Get("Location")); err == nil {
			if loc, err := urlnorm.Clean(loc); err == nil {
				p.redirect = loc
			}
		}
	}
	c.sample.pages = append(c.sample.pages, p)
	return p, nil
}

// links returns the links of an HTML page that the sample may follow: to
// the site's origin, not nofollow, not to images and the like, with
// session ids removed. It records every link of the site for the
// session-id check.
func (c *checker) links(p *page) []*url.URL {
	res := p.res
	opts := extract.Options{Agent: c.cfg.Agent, ContentType: res.Header.Get("Content-Type")}
	doc, _ := opts.HTML(p.url, res.Body)
	if !res.HasValidators() || c.kept() > 3-len(c.sample.cond) {
		// Only a few pages with validators keep their bodies, for the
		// conditional re-requests to compare with.
		defer func() { p.res.Body, p.res.RawBody = nil, nil }()
	}
	if doc == nil {
		return nil
	}
	_, nofollowHeader := extract.XRobotsTag(strings.Join(res.Header.Values("X-Robots-Tag"), "\n"), c.cfg.Agent)
	var out []*url.URL
	for _, l := range doc.Links {
		u, err := url.Parse(l.URL)
		if err != nil || urlnorm.HostKey(u) != c.site {
			continue
		}
		if len(c.sample.links) < 5000 {
			c.sample.links = append(c.sample.links, foundLink{url: u, from: p.url.String()})
		}
		if l.Kind != extract.KindPage || l.NoFollow || doc.NoFollow || nofollowHeader {
			continue
		}
		if skip, _ := skipExt.Skip(u); skip {
			continue
		}
		clean, _ := urlnorm.StripFunc(u, func(name string) bool { return c.sample.fresh[name] })
		out = append(out, clean)
	}
	c.learnSessions()
	return out
}

// condMode is how the validators of a page are sent back.
type condMode int

const (
	condBoth     condMode = iota // as the server gave them: RFC 9110
	condStripped                 // the ETag without its "-gzip" suffix, and the date
	condDate                     // If-Modified-Since alone
)

func (m condMode) String() string {
	return [...]string{"as sent", "with the ETag's coding suffix removed", "If-Modified-Since alone"}[m]
}

// condTest is a conditional re-request of a page of the sample.
type condTest struct {
	page    *page
	tries   []string // "If-None-Match: …, If-Modified-Since: … → 200, identical body"
	outcome condOutcome
	mode    condMode // the way that got the 304
}

type condOutcome int

const (
	condHonoured condOutcome = iota + 1 // a 304
	condIgnored                         // a 200 with the same bytes, however the validators were sent
	condChanged                         // a 200 with other bytes: the page changed, nothing to conclude
	condOther                           // another status, or no answer
)

// conditional re-requests the next page of the sample that has
// validators and has not been re-requested, with its validators. It
// reports false when there is no such page or no request left.
func (c *checker) conditional(ctx context.Context) bool {
	s := &c.sample
	var p *page
	for _, q := range s.pages {
		if q.html && q.purpose == purposePage && q.res.Body != nil && q.res.HasValidators() && !c.tested(q) {
			p = q
			break
		}
	}
	if p == nil || c.left() == 0 {
		return false
	}
	etag, lm := p.res.Header.Get("ETag"), p.res.Header.Get("Last-Modified")
	t := condTest{page: p}
	modes := []condMode{s.condMode}
	if len(s.cond) == 0 {
		// The first page tries the ways the crawler learns, in its order
		// (validators.go): as sent, the ETag stripped, the date alone.
		if _, ok := fetch.StripETagCoding(etag); ok {
			modes = append(modes, condStripped)
		}
		if etag != "" && lm != "" {
			modes = append(modes, condDate)
		}
	}
	for _, m := range modes {
		req := fetch.Request{URL: p.url, ETag: etag, LastModified: lm}
		switch m {
		case condStripped:
			req.ETag, _ = fetch.StripETagCoding(etag)
		case condDate:
			req.ETag = ""
		}
		if m == condStripped && req.ETag == etag || m == condDate && lm == "" {
			if len(modes) > 1 {
				continue
			}
			// A way learned on another page that does not apply here.
			req.ETag, m = etag, condBoth
		}
		res, err := c.do(ctx, purposeConditional, req)
		if errors.Is(err, errStop) {
			break
		}
		sent := describeValidators(req)
		switch {
		case err != nil:
			t.tries = append(t.tries, fmt.Sprintf("GET %s with %s → no answer: %s", p.url, sent, oneLine(err)))
			t.outcome = condOther
		case res.NotModified:
			t.tries = append(t.tries, fmt.Sprintf("GET %s with %s → 304", p.url, sent))
			t.outcome, t.mode = condHonoured, m
		case res.Status == http.StatusOK && res.Complete() && bytes.Equal(res.Body, p.res.Body):
			t.tries = append(t.tries, fmt.Sprintf("GET %s with %s → 200, the same %s bytes again", p.url, sent, thousands(len(res.Body))))
			t.outcome = condIgnored
		case res.Status == http.StatusOK:
			t.tries = append(t.tries, fmt.Sprintf("GET %s with %s → 200, %d bytes that differ from the first answer's %d", p.url, sent, len(res.Body), len(p.res.Body)))
			t.outcome = condChanged
		default:
			t.tries = append(t.tries, fmt.Sprintf("GET %s with %s → %d", p.url, sent, res.Status))
			t.outcome = condOther
		}
		if t.outcome != condIgnored {
			break
		}
	}
	if t.outcome == 0 {
		return false // no request could be made
	}
	if t.outcome == condHonoured {
		s.condMode = t.mode
	}
	s.cond = append(s.cond, t)
	p.res.Body, p.res.RawBody = nil, nil
	return true
}

// kept counts the pages that keep their bodies for a re-request.
func (c *checker) kept() int {
	n := 0
	for _, p := range c.sample.pages {
		if p.res.Body != nil && p.html && !c.tested(p) {
			n++
		}
	}
	return n
}

func (c *checker) tested(p *page) bool {
	for _, t := range c.sample.cond {
		if t.page == p {
			return true
		}
	}
	return false
}

// describeValidators names the validators a request carries.
func describeValidators(req fetch.Request) string {
	var parts []string
	if req.ETag != "" {
		parts = append(parts, "If-None-Match: "+req.ETag)
	}
	if req.LastModified != "" {
		parts = append(parts, "If-Modified-Since: "+req.LastModified)
	}
	return strings.Join(parts, ", ")
}

// probeResult is the answer to a URL that cannot exist.
type probeResult struct {
	url  *url.URL
	page *page
	err  error
	none string // why no probe was made
}

// probeNotFound asks for a URL that cannot exist on the site, at the root
// or beside the start page, whichever robots.txt allows.
func (c *checker) probeNotFound(ctx context.Context) {
	r := c.origins[c.site]
	var b [6]byte
	rand.Read(b[:])
	name := "gentlecrawl-check-" + hex.EncodeToString(b[:]) + "-missing"
	site, _ := url.Parse(c.site)
	dirs := []string{"/"}
	if len(c.sample.pages) > 0 {
		dirs = append(dirs, path.Dir(c.sample.pages[0].url.Path)+"/")
	}
	for _, d := range dirs {
		u := &url.URL{Scheme: site.Scheme, Host: site.Host, Path: path.Join(d, name)}
		if r == nil || !r.allowed(u) {
			continue
		}
		p, err := c.visit(ctx, u, purposeProbe)
		if errors.Is(err, errStop) {
			return
		}
		c.sample.probe = &probeResult{url: u, page: p, err: err}
		return
	}
	c.sample.probe = &probeResult{none: "robots.txt disallows the URLs the probe would use"}
}
