package frontier

import (
	"container/heap"
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
