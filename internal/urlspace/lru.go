package urlspace

import "container/list"

// lru is a map from host to state that keeps at most max entries, dropping
// the least recently used. It is not safe for concurrent use.
type lru[V any] struct {
	max int
	m   map[string]*list.Element
	l   list.List // of *lruEntry[V], most recent first
}

type lruEntry[V any] struct {
	key string
	val *V
}

func newLRU[V any](max int) *lru[V] {
	return &lru[V]{max: max, m: make(map[string]*list.Element)}
}

// get returns the state of key, creating it when absent, and marks it used.
func (c *lru[V]) get(key string) *V {
	if e, ok := c.m[key]; ok {
		c.l.MoveToFront(e)
		return e.Value.(*lruEntry[V]).val
	}
	if c.l.Len() >= c.max {
		old := c.l.Back()
		c.l.Remove(old)
		delete(c.m, old.Value.(*lruEntry[V]).key)
	}
	v := new(V)
	c.m[key] = c.l.PushFront(&lruEntry[V]{key, v})
	return v
}

// peek returns the state of key, or nil, without marking it used.
func (c *lru[V]) peek(key string) *V {
	if e, ok := c.m[key]; ok {
		return e.Value.(*lruEntry[V]).val
	}
	return nil
}

func (c *lru[V]) each(f func(key string, v *V)) {
	for e := c.l.Front(); e != nil; e = e.Next() {
		en := e.Value.(*lruEntry[V])
		f(en.key, en.val)
	}
}

// hash is 64-bit FNV-1a: state is keyed by hashes, not by strings, to stay
// small.
func hash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func hashMore(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
