package simweb

import (
	"container/list"
	"sync"
)

// cacheKey names one rendered body.
type cacheKey struct {
	host, res int
	gzip      bool
	version   int // of a page with HostOptions.Changes; else 0
}

// bodyCache is an LRU of rendered bodies bounded by their total size. It
// is safe for concurrent use. Bodies are shared: callers must not modify
// them.
type bodyCache struct {
	limit int
	mu    struct {
		sync.Mutex
		size  int
		order *list.List // of *cacheItem, most recent first
		items map[cacheKey]*list.Element
	}
}

type cacheItem struct {
	key  cacheKey
	body []byte
}

func newBodyCache(limit int) *bodyCache {
	c := &bodyCache{limit: limit}
	c.mu.order = list.New()
	c.mu.items = make(map[cacheKey]*list.Element)
	return c
}

func (c *bodyCache) get(k cacheKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.mu.items[k]
	if !ok {
		return nil, false
	}
	c.mu.order.MoveToFront(el)
	return el.Value.(*cacheItem).body, true
}

func (c *bodyCache) put(k cacheKey, body []byte) {
	if len(body) > c.limit {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.mu.items[k]; ok {
		return
	}
	c.mu.items[k] = c.mu.order.PushFront(&cacheItem{k, body})
	c.mu.size += len(body)
	for c.mu.size > c.limit {
		c.evictLocked()
	}
}

func (c *bodyCache) evictLocked() {
	el := c.mu.order.Back()
	it := el.Value.(*cacheItem)
	c.mu.order.Remove(el)
	delete(c.mu.items, it.key)
	c.mu.size -= len(it.body)
}
