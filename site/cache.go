package site

import (
	"container/list"
	"time"
)

// lru holds verification answers until they expire, at most size of them,
// evicting the least recently used. It is not safe for concurrent use:
// Verifier.mu guards it.
type lru struct {
	size  int
	order *list.List // of *lruEntry, most recent first
	items map[cacheKey]*list.Element
}

type lruEntry struct {
	key     cacheKey
	ans     answer
	expires time.Time
}

func newLRU(size int) *lru {
	return &lru{size: size, order: list.New(), items: make(map[cacheKey]*list.Element)}
}

// get returns k's answer if it has one that has not expired at now.
func (c *lru) get(k cacheKey, now time.Time) (answer, bool) {
	el, ok := c.items[k]
	if !ok {
		return answer{}, false
	}
	e := el.Value.(*lruEntry)
	if !now.Before(e.expires) {
		c.order.Remove(el)
		delete(c.items, k)
		return answer{}, false
	}
	c.order.MoveToFront(el)
	return e.ans, true
}

// put stores k's answer until expires, evicting the least recently used
// answer if the cache is full.
func (c *lru) put(k cacheKey, ans answer, expires time.Time) {
	if el, ok := c.items[k]; ok {
		e := el.Value.(*lruEntry)
		e.ans, e.expires = ans, expires
		c.order.MoveToFront(el)
		return
	}
	for c.order.Len() >= c.size {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.items, old.Value.(*lruEntry).key)
	}
	c.items[k] = c.order.PushFront(&lruEntry{key: k, ans: ans, expires: expires})
}
