package gentlecrawl

import (
	"bytes"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
	"github.com/gentlecrawl/gentlecrawl/internal/simhash"
	"github.com/gentlecrawl/gentlecrawl/internal/urlspace"
	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

// A URL's link class (urlspace.LinkClass) orders its host's queue: a
// frontier hands out a host's URLs in due order, and every due time in
// the past is due now, so a URL found within its own section is queued
// "due" a few seconds after 1970 — at once, but after the URLs found from
// another section (due at the zero time). A list's next pages come before
// its refinements, and links the site hinted against come last. By the
// time a family's refinements are fetched, what the rest of the host
// leads to is known, and whether they yield anything new says whether
// they are worth their requests (urlspace.Families).
//
// A continuous crawl queues every URL due when found, and revisits by
// their schedule; its URLs keep class 0, and no family budget refuses
// them.
var classEpoch = time.Unix(0, 0)

// classDue is the due time that queues a URL of the given class.
func classDue(class int) time.Time {
	if class <= urlspace.ClassOther {
		return time.Time{}
	}
	return classEpoch.Add(time.Duration(class) * time.Second)
}

// markedDue queues a link of class ClassOther that carries a mark the host
// puts on links to many pages ("?ref=related": urlspace.Families.Tagged)
// after the later pages of lists and before refinements, so that the
// plain forms of the pages it marks, linked from lists, come first. It is
// no class: classOf reads it as ClassOther.
var markedDue = classDue(urlspace.ClassNext).Add(time.Second / 2)

// classOf is the class of a queued item, from its due time.
func classOf(item *frontier.Item) int {
	if item.Due.IsZero() || item.Due.Equal(markedDue) {
		return urlspace.ClassOther
	}
	if s := item.Due.Unix(); s >= 1 && s <= urlspace.ClassHinted {
		return int(s)
	}
	return urlspace.ClassOther
}

// candClass is the class of a candidate, from its due time.
func candClass(c *frontier.Candidate) int {
	if c.Due.IsZero() || c.Due.Equal(markedDue) {
		return urlspace.ClassOther
	}
	if s := c.Due.Unix(); s >= 1 && s <= urlspace.ClassHinted {
		return int(s)
	}
	return urlspace.ClassOther
}

// yieldWatch follows the pages fetched lately until their links are
// admitted: a page that leads to a URL new to the crawl in another
// section of its host has yielded. Pages are found by the chain print
// their links carry (frontier.Entry.Parent).
type yieldWatch struct {
	mu    sync.Mutex
	pages map[uint64]*watchedPage
	ring  [maxWatched]uint64
	next  int
}

// maxWatched bounds the pages followed: a page's links are admitted by
// the release of its own turn, long before this many pages later.
const maxWatched = 1024

type watchedPage struct {
	page    *urlspace.Page
	section string // the page's section (urlspace.Section)
	yielded bool
}

// watch follows a page until its links are admitted; yielded says it has
// yielded already (new text).
func (w *yieldWatch) watch(chain uint64, p *watchedPage) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pages == nil {
		w.pages = make(map[uint64]*watchedPage, maxWatched)
	}
	if old := w.ring[w.next]; old != 0 {
		delete(w.pages, old)
	}
	w.ring[w.next] = chain
	w.next = (w.next + 1) % maxWatched
	w.pages[chain] = p
}

// admitted takes a URL new to the crawl, of the given class, linked from
// the page with chain print parent: it returns the page, the first time
// the URL is one that makes it yield: a URL in another section of the
// host. A next page does not (a list going on shows nothing new by
// that), nor does a refinement (a narrowed list links narrower lists
// without end).
//
// A link to another path of the page's own section is not enough: a
// filter written in the path links its siblings and its wider lists,
// all new URLs that lead nowhere else.
func (w *yieldWatch) admitted(parent uint64, class int, key string) *watchedPage {
	if parent == 0 || class != urlspace.ClassOther {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.pages[parent]
	if p == nil || p.yielded || urlspace.Section(key) == p.section {
		return nil
	}
	p.yielded = true
	return p
}

// shingles remembers the three-word shingles of the pages fetched, a
// eighth of them sampled by hash, at most maxShingleSamples a page, in a
// Bloom filter of fixed size, per host: a page whose text is mostly
// shingles seen before shows nothing new (a list of items already listed
// elsewhere, an old revision, a print view), one with many new shingles
// does. Memory is fixed (8 MiB); once millions of shingles fill it, more
// look seen than were, and pages yield by their links alone.
//
// The filter is blocked: a shingle's two bits are in one 64-bit word, so
// that recording it costs one cache miss rather than two (the filter is
// far larger than the caches), for a false positive rate a little
// higher than an unblocked filter's at the same load.
type shingles struct {
	bits []atomic.Uint64
}

const (
	shingleBits = 1 << 26
	// maxShingleSamples bounds the shingles sampled on one page (about
	// 1,000 words of its paragraphs): enough to tell new text from old,
	// and a long page costs no more than that.
	maxShingleSamples = 128
)

func newShingles() *shingles { return &shingles{bits: make([]atomic.Uint64, shingleBits/64)} }

// novel counts the sampled shingles of text (of the host hashed as host)
// and how many of them were not seen before, and records them. Only the
// text's long blocks count (lines of minBlockWords words or more:
// paragraphs, posts, descriptions): menus, buttons and other short lines
// of chrome would only hide a page's new text behind the host's old.
func (s *shingles) novel(host uint64, text []byte) (novel, total int) {
	for len(text) > 0 && total < maxShingleSamples {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		if len(line) < 2*minBlockWords-1 || bytes.Count(line, spaceByte)+1 < minBlockWords {
			continue
		}
		var h1, h2 uint64
		words := 0
		for i := 0; i < len(line) && total < maxShingleSamples; {
			for i < len(line) && textClass[line[i]] == classSpace {
				i++
			}
			if i == len(line) {
				break
			}
			h := uint64(fnvOffset)
			for i < len(line) && textClass[line[i]] != classSpace {
				c := line[i]
				if k := textClass[c]; k >= '0' && k < 0x80 {
					c = k // ASCII letters lowercased
				}
				h = (h ^ uint64(c)) * fnvPrime
				i++
			}
			words++
			if words >= 3 {
				sh := simhash.Mix(h1*0x9e3779b97f4a7c15 ^ h2*0xc2b2ae3d27d4eb4f ^ h ^ host)
				if sh&7 == 0 {
					total++
					if s.add(sh) {
						novel++
					}
				}
			}
			h1, h2 = h2, h
		}
	}
	return novel, total
}

// add sets a shingle's two bits, both in one word, and reports whether
// either was clear.
func (s *shingles) add(sh uint64) bool {
	w := &s.bits[sh>>3%(shingleBits/64)]
	m := uint64(1)<<(sh>>40&63) | uint64(1)<<(sh>>46&63)
	if w.Load()&m == m {
		return false
	}
	w.Or(m)
	return true
}

// Content yield: a page shows new text when at least minNovel of its
// sampled shingles (some 64 three-word sequences) are new, and at least a
// third of them: a page whose chrome is most of it shows its new text in
// the first test, an old revision, which changes a tenth of its words,
// fails the second.
const minNovel = 8

func newText(novel, total int) bool {
	return novel >= minNovel && novel*3 >= total
}

// ownText reports whether a page shows text of its own, little as it may
// be: a quarter of its sampled shingles new, two at least. A list
// narrowed to some of its items shows none (its rows are the list's); a
// topic's last page, with a post or two, does.
func ownText(novel, total int) bool {
	return novel >= 2 && novel*4 >= total
}

// pageFamily charges a fetched HTML page to its family, reached by a link
// of class class: it returns the family, and whether the page yielded by
// its text (novel of total sampled shingles new, shingles.novel). The
// page's links, admitted later, may make it yield too (yieldWatch).
//
// A page that names another URL of its host as its canonical (variant) is
// a view of that page: its text is recorded, but does not make it yield.
// An uncounted page (another form of a page fetched before) is charged to
// nothing (Families.Uncounted).
func (c *Crawler) pageFamily(u *url.URL, key string, class int, novel, total int, variant, uncounted bool) (page *urlspace.Page, yielded bool) {
	origin := urlnorm.HostKey(u)
	if uncounted {
		return c.space.families.Uncounted(origin, key, class), false
	}
	page = c.space.families.Fetched(origin, key, class)
	if newText(novel, total) && !variant {
		c.space.families.YieldedText(page)
		yielded = true
	}
	return page, yielded
}
