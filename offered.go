package gentlecrawl

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

// offeredLinks remembers links this crawl offered to the frontier, with a
// release that committed: a page's links are mostly links the crawl has
// offered before (a documentation site repeats its whole sidebar on every
// page), and the frontier finds them seen. Building a candidate for each
// and having the frontier hash it and probe its seen-set was about 7 % of
// a crawl's CPU (issue #18); follow skips a link found here instead.
//
// Only plain links are kept: no query, no path parameters, no fragment.
// Their key does not depend on which parameters the crawl has learned to
// drop, so the key kept (for printPage) stays right, and a link kept is
// seen for good. The URL string is the candidate's, as the frontier got
// it; a link whose string the extractor writes otherwise is not found,
// and goes the long way, which is always right.
//
// Two generations of at most maxOffered links each: memory stays bounded
// (under a megabyte), and the links a site repeats stay in the young one.
// On the whole of rust-doc, 708,214 links were looked up: 92 % were found
// with 2,048 links a generation, 93 % with 8,192, 97 % with 32,768.
type offeredLinks struct {
	mu       sync.Mutex
	cur, old map[string]string // URL → key, "" when the key is the URL
}

const maxOffered = 4_096

// plainLink reports whether s has no query, path parameters or fragment.
func plainLink(s string) bool {
	return strings.IndexAny(s, "?;#") < 0
}

// get returns the key of link s if it was offered.
func (o *offeredLinks) get(s string) (key string, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	key, ok = o.cur[s]
	if !ok {
		if key, ok = o.old[s]; ok {
			o.putLocked(s, key)
		}
	}
	if ok && key == "" {
		key = s
	}
	return key, ok
}

// put remembers link url, queued under key by a release that committed,
// if it is plain.
func (o *offeredLinks) put(url, key string) {
	if !plainLink(url) {
		return
	}
	if key == url {
		key = ""
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.putLocked(url, key)
}

func (o *offeredLinks) putLocked(url, key string) {
	if o.cur == nil {
		o.cur = make(map[string]string)
	}
	if len(o.cur) >= maxOffered {
		o.old, o.cur = o.cur, make(map[string]string, maxOffered/2)
	}
	o.cur[url] = key
}

// verifyOffered checks, in the package's tests (verifyShortcuts), that a
// link follow skipped is seen, under the key it would have been queued
// under; a failure panics: it is a bug, and the test binary (or the crawl
// process it started) dies saying so.
func (c *Crawler) verifyOffered(link, key string) {
	u, err := urlnorm.Parse(link)
	if err == nil {
		cand := c.candidate(u, 0)
		seen, serr := c.store.Seen(context.Background(), cand.Canonical)
		if serr == nil && (cand.Canonical != key || !seen) {
			err = fmt.Errorf("key %q, want %q; seen %v", key, cand.Canonical, seen)
		}
	}
	if err != nil {
		panic(fmt.Sprintf("gentlecrawl: link %s skipped as offered: %v", link, err))
	}
}
