package check

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/gentlecrawl/gentlecrawl/extract"
	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

// maxSitemapFetches is the most sitemap files the check reads: enough to
// count the URLs of most sites, few enough to leave the budget to pages.
const maxSitemapFetches = 3

// sitemapSummary is what the sitemaps the check read say.
type sitemapSummary struct {
	listed  int      // Sitemap lines of robots.txt
	read    int      // files read whole or in part
	urls    int      // page URLs they list (within their scope)
	unread  int      // files listed (in robots.txt or an index) and not read
	partial bool     // a file was read in part: urls is a lower bound
	errors  []string // one line per file that could not be read
	skipped []string // listed but not fetched, and why
	read1   []string // "URL: N URLs" per file read
}

// readSitemaps reads the sitemaps the site's robots.txt lists, those of
// the site's own origin that robots.txt allows, and the sitemaps their
// indexes list, at most maxSitemapFetches files in all.
func (c *checker) readSitemaps(ctx context.Context, r *originRobots) {
	s := &c.maps
	var queue []*url.URL
	seen := map[string]bool{}
	for _, raw := range r.decision.Robots.Sitemaps() {
		s.listed++
		u, err := urlnorm.Parse(raw)
		switch {
		case err != nil:
			s.errors = append(s.errors, fmt.Sprintf("Sitemap: %s: not an absolute http(s) URL", raw))
		case urlnorm.HostKey(u) != c.site:
			s.skipped = append(s.skipped, raw+": on another origin, not read")
		case !r.allowed(u):
			s.skipped = append(s.skipped, raw+": disallowed by robots.txt, not read")
		case !seen[u.String()]:
			seen[u.String()] = true
			queue = append(queue, u)
		}
	}
	// With a long Crawl-delay few requests fit in the time budget: the
	// sitemaps leave four of them to the pages and the probes.
	limit := min(maxSitemapFetches, max(1, int(c.cfg.Time/c.gap)-4))
	for len(queue) > 0 {
		if s.read >= limit || c.left() <= 3 {
			s.unread += len(queue)
			return
		}
		u := queue[0]
		queue = queue[1:]
		res, err := c.do(ctx, purposeSitemap, fetch.Request{URL: u, AllTypes: true})
		if errors.Is(err, errStop) {
			s.unread += len(queue) + 1
			return
		}
		if err != nil {
			s.errors = append(s.errors, fmt.Sprintf("GET %s → no answer: %s", u, oneLine(err)))
			continue
		}
		s.read++
		if res.Status != http.StatusOK {
			s.errors = append(s.errors, fmt.Sprintf("GET %s → %d %s", u, res.Status, http.StatusText(res.Status)))
			continue
		}
		if looksHTML(res.MediaType, res.Body) {
			s.errors = append(s.errors, fmt.Sprintf("GET %s → 200, an HTML page (Content-Type: %s), not a sitemap", u, res.Header.Get("Content-Type")))
			continue
		}
		sm, perr := extract.ParseSitemap(res.Body, u)
		limit := errors.Is(perr, extract.ErrSitemapTooManyURLs) || errors.Is(perr, extract.ErrSitemapTooLarge)
		cut := !res.Complete()
		switch {
		case sm == nil || perr != nil && !limit && !cut:
			s.errors = append(s.errors, fmt.Sprintf("GET %s → 200, %d bytes that do not read as a sitemap: %s", u, len(res.Body), oneLine(perr)))
			continue
		case limit:
			s.errors = append(s.errors, fmt.Sprintf("GET %s → 200: over the sitemaps.org limits (50,000 URLs, 50 MB): %s", u, oneLine(perr)))
		}
		if cut || perr != nil {
			s.partial = true
		}
		if sm.Index {
			var kids int
			for _, e := range sm.Sitemaps {
				if urlnorm.HostKey(e.URL) != c.site || !r.allowed(e.URL) || seen[e.URL.String()] {
					continue
				}
				seen[e.URL.String()] = true
				queue = append(queue, e.URL)
				kids++
			}
			s.read1 = append(s.read1, fmt.Sprintf("%s: a sitemap index of %d sitemaps", u, kids))
			continue
		}
		s.urls += len(sm.URLs)
		note := ""
		if sm.OutOfScope > 0 {
			note = fmt.Sprintf(" (and %d outside its scope, ignored)", sm.OutOfScope)
		}
		if cut {
			note += " (read in part)"
		}
		s.read1 = append(s.read1, fmt.Sprintf("%s: %s URLs%s", u, thousands(len(sm.URLs)), note))
	}
}

// judgeSitemaps adds sitemap-errors, or an info finding on the sitemaps
// read.
func (c *checker) judgeSitemaps() {
	s := &c.maps
	if len(s.errors) > 0 {
		c.add(IDSitemapErrors, Warn,
			fmt.Sprintf("%d of the sitemaps robots.txt points to cannot be read: crawlers do not learn the URLs they list", len(s.errors)),
			s.errors...)
	}
	if s.read == 0 && len(s.skipped) == 0 {
		return
	}
	ev := append(append([]string(nil), s.read1...), s.skipped...)
	if s.unread > 0 {
		ev = append(ev, fmt.Sprintf("%s more not read (the check reads at most %d, fewer when Crawl-delay leaves it few requests)", plural(s.unread, "sitemap"), maxSitemapFetches))
	}
	if len(s.errors) == 0 || s.urls > 0 {
		c.add(IDSitemaps, Info, fmt.Sprintf("the sitemaps read list %s", countURLs(s)), ev...)
	}
}

// countURLs says how many URLs the sitemaps list: "1,234 URLs", or "at
// least 1,234 URLs" when some were not read.
func countURLs(s *sitemapSummary) string {
	if s.partial || s.unread > 0 {
		return "at least " + thousands(s.urls) + " URLs"
	}
	return thousands(s.urls) + " URLs"
}
