package frontier

import (
	"container/heap"
	"fmt"
	"math"
	"time"
)

// hostState is a host as the embedded store keeps it in memory: its durable
// record, when its first URL is due, its lease, and its place in the heap.
type hostState struct {
	name string
	hostRecord
	due   time.Time // due time of the first entry of its queue
	lease *Lease
	index int   // in hostHeap; -1 when its queue is empty
	order int64 // readyAt in nanoseconds, as the heap last placed it
	// durableNext is the next allowed time its record on disk holds; next
	// may be later (pacing is not written, see ReleaseRequest.Pause).
	durableNext time.Time

	// While leased: the due time of the first entry beyond the lease's
	// when it was claimed, and the earliest of the entries added since, so
	// that a release knows the new head without reading the queue.
	afterLease, addedInLease dueSet

	head queueHead // a copy of the first entries of its queue, if any

	// floor is a key no live entry of its queue sorts before (nil: none
	// known): the first entry the last read of the queue found. A queue
	// is read from its head, and settled entries leave deletion markers
	// there that every read from the queue's start would step over again,
	// a cost that grows with the pages a host has had fetched. An entry
	// added before the floor clears it.
	floor []byte

	txs                int // changes under way that touch the host
	idle               bool
	idlePrev, idleNext *hostState // in the store's idleList, while idle
}

// dueSet is the earliest of a set of due times, if any.
type dueSet struct {
	t  time.Time
	ok bool
}

func (d *dueSet) add(t time.Time) {
	if !d.ok || t.Before(d.t) {
		d.t, d.ok = t, true
	}
}

func (d *dueSet) include(o dueSet) {
	if o.ok {
		d.add(o.t)
	}
}

// readyAt is when the host can next be claimed: when its lease expires, or
// the later of its next allowed time and its first URL's due time.
func (h *hostState) readyAt() time.Time {
	if h.lease != nil {
		return h.lease.Expires
	}
	if h.due.After(h.next) {
		return h.due
	}
	return h.next
}

// hostHeap orders the hosts with something queued by readyAt, so that a claim
// looks at one host, never at all of them.
type hostHeap []*hostState

func (q hostHeap) Len() int { return len(q) }

func (q hostHeap) Less(i, j int) bool { return q[i].order < q[j].order }

func (q hostHeap) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index = i
	q[j].index = j
}

func (q *hostHeap) Push(x any) {
	h := x.(*hostState)
	h.index = len(*q)
	*q = append(*q, h)
}

func (q *hostHeap) Pop() any {
	old := *q
	h := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	h.index = -1
	return h
}

// place puts h where it belongs after a change: in the heap while its queue
// has entries, out of it when empty.
func (q *hostHeap) place(h *hostState) {
	order := int64(math.MinInt64)
	if at := h.readyAt(); !at.IsZero() {
		order = at.UnixNano()
	}
	moved := order != h.order
	h.order = order
	switch {
	case h.pending > 0 && h.index < 0:
		heap.Push(q, h)
	case h.pending > 0:
		if moved {
			heap.Fix(q, h.index)
		}
	case h.index >= 0:
		heap.Remove(q, h.index)
	}
}

// DefaultIdleHosts is how many idle hosts the embedded store keeps in
// memory when Options say nothing: beyond it, the hosts idle longest are
// evicted, about 200 bytes and their name each.
const DefaultIdleHosts = 1 << 16

// idleList holds the hosts with nothing queued, nothing leased and no
// change under way, most recently idle first: the ones the store may evict
// from memory. What an evicted host needs later is in its record (budgets'
// counts, a pause), read again when a change touches it; what is not (the
// count of URLs it ever queued when no budget needs it) is what reopening
// the job would forget too.
type idleList struct {
	first, last *hostState
	n           int
}

func (l *idleList) remove(st *hostState) {
	if !st.idle {
		return
	}
	if st.idlePrev != nil {
		st.idlePrev.idleNext = st.idleNext
	} else {
		l.first = st.idleNext
	}
	if st.idleNext != nil {
		st.idleNext.idlePrev = st.idlePrev
	} else {
		l.last = st.idlePrev
	}
	st.idlePrev, st.idleNext, st.idle = nil, nil, false
	l.n--
}

func (l *idleList) pushFront(st *hostState) {
	l.remove(st)
	st.idlePrev, st.idleNext, st.idle = nil, l.first, true
	if l.first != nil {
		l.first.idlePrev = st
	} else {
		l.last = st
	}
	l.first = st
	l.n++
}

// idleNow reports whether st may be evicted as far as its queue, lease and
// the changes under way go.
func (st *hostState) idleNow() bool { return st.pending == 0 && st.lease == nil && st.txs == 0 }

// letGo ends a change's hold on st (under s.mu); a host left with nothing
// to do joins the idle list.
func (s *Store) letGo(st *hostState) {
	st.txs--
	if st.idleNow() {
		s.mu.idle.pushFront(st)
	}
}

// evictIdle forgets hosts idle longest while more than the store's allowance
// are idle (under s.mu). A host whose pacing is in memory only (a next
// allowed time later than its record's, not yet passed on the claims'
// clock) is kept until it has passed, so that a host that gets new URLs
// is not asked sooner than its pace allows.
func (s *Store) evictIdle() {
	for tries := 2 * (s.mu.idle.n - s.idleMax); s.mu.idle.n > s.idleMax && tries > 0; tries-- {
		st := s.mu.idle.last
		s.mu.idle.remove(st)
		if !st.idleNow() {
			continue
		}
		if st.next.After(st.durableNext) && st.next.After(s.mu.clock) {
			s.mu.idle.pushFront(st)
			continue
		}
		s.mu.heads.drop(st)
		delete(s.mu.hosts, st.name)
	}
}

// loadHost makes the in-memory state of a host that is not in memory: from
// its record if it has one (it was evicted, or the job was reopened), else
// a new host's.
func (s *Store) loadHost(name string) (*hostState, error) {
	st := &hostState{name: name, index: -1}
	v, ok, err := s.get(hostKey(name))
	if err != nil || !ok {
		return st, err
	}
	if err := decodeHostRecord(v, &st.hostRecord); err != nil {
		return nil, fmt.Errorf("%w: host %q", err, name)
	}
	st.durableNext = st.next
	return st, nil
}
