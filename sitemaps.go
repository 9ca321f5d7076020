package gentlecrawl

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/gentlecrawl/gentlecrawl/extract"
	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

// kindSitemap marks a queued URL as a sitemap: fetched whatever its type
// (sitemaps are often .xml.gz), read for URLs instead of links.
const kindSitemap = "sitemap"

func (c *Crawler) sitemapCandidate(u *url.URL) frontier.Candidate {
	cand := c.candidate(u, 0)
	cand.Kind = kindSitemap
	return cand
}

// robotsSitemaps queues the sitemaps an origin's robots.txt lists, those in
// scope (RFC 9309 §2.2.4: "Sitemap" records; the sitemaps.org protocol).
func (c *Crawler) robotsSitemaps(ctx context.Context, origin string, listed []string) error {
	if c.cfg.NoSitemaps || len(listed) == 0 {
		return nil
	}
	var add []frontier.Candidate
	for _, s := range listed {
		u, err := urlnorm.Parse(s)
		if err != nil || !c.inScope.has(u) {
			continue
		}
		add = append(add, c.sitemapCandidate(u))
	}
	added, err := c.store.Add(ctx, frontier.Batch{Add: add})
	if err != nil {
		return err
	}
	c.noteAdded(added)
	return nil
}

// sitemapEntries returns the in-scope URLs a fetched sitemap lists: pages,
// or, for a sitemap index, further sitemaps.
func (c *Crawler) sitemapEntries(item *frontier.Item, res *fetch.Result) []frontier.Candidate {
	if res.Status != http.StatusOK || !res.Complete() {
		return nil
	}
	sm, err := extract.ParseSitemap(res.Body, res.URL)
	if sm == nil {
		c.cfg.Logger.Info("unreadable sitemap", "url", item.URL, "err", err)
		c.stats.update(func(s *Summary) { s.SitemapErrors++ })
		return nil
	}
	if err != nil && !errors.Is(err, extract.ErrSitemapTooManyURLs) && !errors.Is(err, extract.ErrSitemapTooLarge) {
		c.cfg.Logger.Info("sitemap read in part", "url", item.URL, "err", err)
	}
	var out []frontier.Candidate
	var outOfScope int
	entries := sm.URLs
	if sm.Index {
		entries = sm.Sitemaps
	}
	for _, e := range entries {
		switch {
		case !c.inScope.has(e.URL):
			outOfScope++
		case sm.Index:
			out = append(out, c.sitemapCandidate(e.URL))
		case c.extPolicy != nil && c.extSkip(e.URL):
			c.stats.update(func(s *Summary) { s.SkippedExtension++ })
		default:
			cand := c.candidate(e.URL, 0)
			if c.cfg.Continuous {
				c.demand.hint(cand.Canonical, e.LastMod, e.ChangeFreq)
			}
			out = append(out, cand)
		}
	}
	c.stats.update(func(s *Summary) {
		s.Sitemaps++
		s.SitemapURLs += len(sm.URLs)
		s.OutOfScope += outOfScope + sm.OutOfScope
	})
	return out
}
