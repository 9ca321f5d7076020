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
// and having the frontier hash it and probe its seen-set was a visible
// share of a crawl's CPU (BENCHMARKS.md); follow skips a link found here
// instead.
//
// Only plain links are kept: no query, no path parameters, no fragment.
// Their key does not depend on which parameters the crawl has learned to
// drop, so the key kept (for printPage) stays right, and a link kept is
// seen for good. The URL string is the candidate's, as the frontier got
// it; a link whose string the extractor writes otherwise is not found,
// and goes the long way, which is always right.
//
// Two generations of at most maxOffered links each: memory stays bounded
// (under a megabyte), and the links a site repeats stay in the young one:
// on a documentation site nearly every lookup is found, and a larger
// generation finds only a few more.
//
// In a shared crawl the database server can crash and come back without
// the commits of its last moment (postgres.Store.Restarts): a link kept
// may then be queued no more. So every link is kept with the count of
// restarts the store had seen when its release was made, and the links
// are forgotten when that count changes. A link skipped between the crash
// and the moment the store sees the server back is not lost: the release
// that queued it is gone too, and its page is queued again, to offer it
// again.
type offeredLinks struct {
	mu       sync.Mutex
	cur, old map[string]string // URL → key, "" when the key is the URL
	// restarts, when set, is the frontier's count of restarts of the
	// database server (shared crawls); epoch is its value for the links
	// kept.
	restarts func() uint64
	epoch    uint64
}

// now returns the frontier's count of restarts.
func (o *offeredLinks) now() uint64 {
	if o.restarts == nil {
		return 0
	}
	return o.restarts()
}

// syncLocked forgets every link when the frontier's count of restarts has
// changed since they were kept, under o.mu.
func (o *offeredLinks) syncLocked(now uint64) {
	if now != o.epoch {
		o.cur, o.old, o.epoch = nil, nil, now
	}
}

const maxOffered = 4_096

// plainLink reports whether s has no query, path parameters or fragment.
func plainLink(s string) bool {
	return strings.IndexAny(s, "?;#") < 0
}

// get returns the key of link s if it was offered.
func (o *offeredLinks) get(s string) (key string, ok bool) {
	now := o.now()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.syncLocked(now)
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
// if it is plain. epoch is the frontier's count of restarts (now) when
// the release was made: a link of a release made before a restart is not
// kept.
func (o *offeredLinks) put(epoch uint64, url, key string) {
	if !plainLink(url) {
		return
	}
	if key == url {
		key = ""
	}
	now := o.now()
	if epoch != now {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.syncLocked(now)
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

// verifyOffered checks, in the module's tests (verifyShortcuts), that a
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
