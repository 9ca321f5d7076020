package frontier

import (
	"bytes"
	"fmt"
	"time"
)

// A claim reads a host's queue; the entries it reads beyond those it takes
// are kept in memory, so that the host's next claims need no read. The copy
// is always a prefix of the queue: entries added before its last one drop
// it, entries settled leave it, and it is only filled by a read no change
// raced with.

// headPrefetch is how many entries beyond those it takes a claim reads.
const headPrefetch = 32

// headCacheBytes bounds the memory the copies of all hosts take together;
// beyond it, the copies of the hosts claimed longest ago are dropped.
const headCacheBytes = 32 << 20

// headEntry is a queue entry as stored: its key and its encoded value,
// slices of a buffer the entries of one read share.
type headEntry struct{ key, val []byte }

// headEntrySize is what an entry costs beside its bytes: the slice headers
// and the lease Item it may become.
const headEntrySize = 48

// queueHead is the copy of the first entries of one host's queue.
type queueHead struct {
	entries []headEntry // in key order; while ok, the queue's first len(entries)
	ok      bool
	whole   bool // entries are the whole queue
	bytes   int  // the memory the copy holds: its buffers and entries
	// The host's neighbours in its headCache's list, most recently used
	// first.
	prev, next *hostState
}

// lastDue is the due time of the last entry of the copy.
func (h *queueHead) lastDue() time.Time {
	return queueKeyDue(h.entries[len(h.entries)-1].key)
}

// headCache holds the copies of hosts' queue heads, in one list by use.
type headCache struct {
	bytes, limit int
	first, last  *hostState
}

func (c *headCache) unlink(st *hostState) {
	h := &st.head
	if h.prev != nil {
		h.prev.head.next = h.next
	} else {
		c.first = h.next
	}
	if h.next != nil {
		h.next.head.prev = h.prev
	} else {
		c.last = h.prev
	}
	h.prev, h.next = nil, nil
}

func (c *headCache) pushFront(st *hostState) {
	h := &st.head
	h.prev, h.next = nil, c.first
	if c.first != nil {
		c.first.head.prev = st
	} else {
		c.last = st
	}
	c.first = st
}

// drop forgets st's copy.
func (c *headCache) drop(st *hostState) {
	h := &st.head
	if !h.ok {
		return
	}
	c.unlink(st)
	c.bytes -= h.bytes
	*h = queueHead{}
}

// fill makes entries st's copy (whole: the queue has no others; buffered:
// the bytes of the buffers they are slices of), dropping the copies used
// longest ago while the cache is over its limit. The memory is counted
// until the copy is dropped: settled entries leave the copy but not its
// buffers.
func (c *headCache) fill(st *hostState, entries []headEntry, whole bool, buffered int) {
	c.drop(st)
	if len(entries) == 0 {
		return
	}
	n := buffered + headEntrySize*cap(entries)
	if n > c.limit {
		return
	}
	h := &st.head
	h.entries, h.ok, h.whole, h.bytes = entries, true, whole, n
	c.bytes += n
	c.pushFront(st)
	for c.bytes > c.limit && c.last != nil && c.last != st {
		c.drop(c.last)
	}
}

// take answers a claim of st from its copy: up to n entries due at now, and
// the due time of the next entry (afterOK false: there is none). hit is
// false when the copy cannot tell: there is none, or it ends before the
// answer does.
func (c *headCache) take(st *hostState, now time.Time, n int) (items []*Item, after time.Time, afterOK, hit bool, err error) {
	h := &st.head
	if !h.ok {
		return nil, time.Time{}, false, false, nil
	}
	for i, e := range h.entries {
		due := queueKeyDue(e.key)
		if i == n || due.After(now) {
			after, afterOK, hit = due, true, true
			break
		}
		items = append(items, &Item{Host: st.name, Due: due, Ref: e.key})
	}
	if !hit && !h.whole {
		return nil, time.Time{}, false, false, nil
	}
	for i, it := range items {
		if err := decodeEntry(h.entries[i].val, st.name, &it.Entry); err != nil {
			c.drop(st)
			return nil, time.Time{}, false, false, fmt.Errorf("%w: queue of %s", err, st.name)
		}
	}
	c.unlink(st)
	c.pushFront(st)
	return items, after, afterOK, true, nil
}

// settled follows a change to st's queue: refs deleted (settled entries, or
// retried ones moved later), entries rewritten in place, and entries added,
// the earliest due at minDue.
func (c *headCache) settled(st *hostState, refs [][]byte, rewrote, added bool, minDue time.Time) {
	h := &st.head
	if !h.ok {
		return
	}
	if rewrote {
		c.drop(st)
		return
	}
	if len(refs) > 0 && len(refs) <= len(h.entries) && sameKeys(h.entries[:len(refs)], refs) {
		// The usual case: a lease's entries were the first ones, settled
		// in their order.
		clear(h.entries[:len(refs)])
		h.entries = h.entries[len(refs):]
	} else if len(refs) > 0 {
		kept := h.entries[:0]
		for _, e := range h.entries {
			gone := false
			for _, r := range refs {
				if bytes.Equal(e.key, r) {
					gone = true
					break
				}
			}
			if !gone {
				kept = append(kept, e)
			}
		}
		clear(h.entries[len(kept):])
		h.entries = kept
	}
	if added {
		// A new entry sorts after every entry with its due time or an
		// earlier one (its sequence number is the largest yet).
		if len(h.entries) > 0 && minDue.Before(h.lastDue()) {
			c.drop(st)
			return
		}
		h.whole = false
	}
	if len(h.entries) == 0 {
		c.drop(st)
	}
}

// sameKeys reports whether entries have the keys refs, in order.
func sameKeys(entries []headEntry, refs [][]byte) bool {
	for i, e := range entries {
		if !bytes.Equal(e.key, refs[i]) {
			return false
		}
	}
	return true
}
