package frontier

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// tx is one change to the store, in three phases. Under Store.mu it decides
// everything — seen-checks against the batch, the URLs still in flight in
// other batches, the in-memory filter and the store — and builds a Pebble
// batch. Without the lock, the batch goes through Pebble's commit pipeline
// (writing the log, inserting into the memtable), so that concurrent
// changes do that work in parallel. Under the lock again, the in-memory
// queue counts, due times, leases and heap follow the applied batch, and
// the batch goes to the store's waiter goroutine, which awaits its fsync
// (shared with the batches committed meanwhile): the caller does not wait
// for the disk.
//
// Host records are written with absolute values, so when a budget makes an
// admission write them too, the whole change stays under the lock and
// records are applied in the order they were decided.
type tx struct {
	s      *Store
	b      *pebble.Batch
	locked bool // holds s.mu
	hosts  map[string]*hostDelta
	fresh  map[[16]byte]struct{} // URLs met in this batch
	pre    []prepared            // candidates checked and hashed, before the lock
	queued int                   // URLs queued, for the crawl budget
	added  Added
	deltas []hostDelta // allocated in chunks
	ops    []op        // the batch's writes, applied in key order at commit
	arena  []byte      // keys and values of ops
	key    []byte      // scratch
	val    []byte      // scratch
}

// op is one write of a tx: a Set of arena[k0:k1] to arena[k1:v1], or a
// Delete of arena[k0:k1].
type op struct {
	del        bool
	k0, k1, v1 int
}

func (t *tx) set(k, v []byte) {
	k0 := len(t.arena)
	t.arena = append(t.arena, k...)
	k1 := len(t.arena)
	t.arena = append(t.arena, v...)
	t.ops = append(t.ops, op{k0: k0, k1: k1, v1: len(t.arena)})
}

func (t *tx) delete(k []byte) {
	k0 := len(t.arena)
	t.arena = append(t.arena, k...)
	t.ops = append(t.ops, op{del: true, k0: k0, k1: len(t.arena), v1: len(t.arena)})
}

// hostDelta is a host touched by a tx.
type hostDelta struct {
	st        *hostState
	pending   int       // change to the number of entries in its queue
	queued    int       // URLs queued (already counted in st.queued)
	over      int       // URLs refused by a budget (already counted in st.overBudget)
	minDue    time.Time // earliest due time of the entries the batch adds
	minSeq    uint64    // the least sequence number among those due at minDue
	adds      bool      // the batch adds entries
	endLease  bool
	leaseID   uint64    // with endLease: the lease it ends
	head      dueSet    // with endLease: the host's head after the release
	next      time.Time // with endLease: the host's next allowed time
	pause     bool      // with endLease: next must survive a restart
	newRecord bool      // write the host record
	enqueued  int       // entries added
	deleted   [][]byte  // queue keys deleted
	rewrote   bool      // an entry was rewritten in place
}

// txPool keeps finished txs, whose maps and buffers the next ones reuse.
var txPool = sync.Pool{New: func() any {
	return &tx{hosts: make(map[string]*hostDelta), fresh: make(map[[16]byte]struct{})}
}}

// newTx starts a change. What needs no lock (checking and hashing the
// candidates) comes first; then lock takes s.mu, which the tx releases.
func (s *Store) newTx() *tx {
	t := txPool.Get().(*tx)
	t.s, t.b = s, s.db.NewBatch()
	return t
}

func (t *tx) lock() {
	t.s.mu.Lock()
	t.locked = true
}

// recycle clears t for the next change and puts it in the pool.
func (t *tx) recycle() {
	clear(t.hosts)
	clear(t.fresh)
	t.s, t.b = nil, nil
	t.ops, t.arena = t.ops[:0], t.arena[:0]
	clear(t.pre)
	t.pre = t.pre[:0]
	t.queued, t.added = 0, Added{}
	t.deltas = t.deltas[:0]
	txPool.Put(t)
}

// close frees the batch and, on every early return or panic, the lock. A tx
// that did not reach its commit gives back what it took in memory: its URLs
// are no longer in flight, and its counts are undone.
func (t *tx) close() {
	if !t.locked && t.b != nil {
		t.s.mu.Lock()
		t.locked = true
	}
	if t.b != nil {
		delete(t.s.mu.inflight, t)
		for _, d := range t.hosts {
			d.st.queued -= d.queued
			d.st.overBudget -= d.over
			t.s.letGo(d.st)
		}
		t.s.mu.queued -= t.queued
		t.s.evictIdle()
	}
	if t.locked {
		t.locked = false
		t.s.mu.Unlock()
	}
	if t.b != nil {
		t.b.Close()
	}
	t.recycle()
}

// host returns the tx's change to a host, starting it when the tx first
// touches the host: the host's state in memory, read from its record when
// it was evicted (or is new). The state is held, and cannot be evicted,
// until the tx is done (follow or close).
func (t *tx) host(name string) (*hostDelta, error) {
	if d := t.hosts[name]; d != nil {
		return d, nil
	}
	st := t.s.mu.hosts[name]
	if st == nil {
		var err error
		if st, err = t.s.loadHost(name); err != nil {
			return nil, err
		}
		t.s.mu.hosts[name] = st
	}
	if len(t.deltas) == cap(t.deltas) {
		// A release touches one host or a few; an admission, many.
		t.deltas = make([]hostDelta, 0, min(64, 2*max(1, cap(t.deltas))))
	}
	t.deltas = append(t.deltas, hostDelta{})
	d := &t.deltas[len(t.deltas)-1]
	st.txs++
	t.s.mu.idle.remove(st)
	d.st = st
	t.hosts[name] = d
	return d, nil
}

// meet checks a candidate and returns its seen-set hash, and whether this
// is its first appearance in the batch.
func (t *tx) meet(c *Candidate) (h [16]byte, first bool, err error) {
	if c.Host == "" || c.Canonical == "" || c.URL == "" {
		return h, false, fmt.Errorf("frontier: candidate %q lacks a host, a canonical form or a URL", c.URL)
	}
	h = Hash(c.Canonical)
	if _, dup := t.fresh[h]; dup {
		return h, false, nil
	}
	t.fresh[h] = struct{}{}
	return h, true, nil
}

// prepared is a candidate met for the first time in its tx, with its hash.
type prepared struct {
	c     *Candidate
	h     [16]byte
	admit func(Candidate) bool
}

// prepare checks a candidate, hashes it and drops a repeat within the tx,
// without the lock.
func (t *tx) prepare(c *Candidate, admit func(Candidate) bool) error {
	h, first, err := t.meet(c)
	if first && err == nil {
		t.pre = append(t.pre, prepared{c, h, admit})
	}
	return err
}

// admitPrepared admits the prepared candidates, under the lock.
func (t *tx) admitPrepared() error {
	for i := range t.pre {
		p := &t.pre[i]
		if err := t.admit(p.c, p.h, p.admit); err != nil {
			return err
		}
	}
	return nil
}

// admit offers one URL, met for the first time in the tx: checked against
// the in-memory filter and the seen-set, marked seen, then queued unless
// Admit or a budget refuses.
func (t *tx) admit(c *Candidate, h [16]byte, admit func(Candidate) bool) error {
	t.key = append(append(t.key[:0], prefixSeen), h[:]...)
	if t.s.mu.seen.mayContain(h[:]) {
		// The filter knows it, or errs: ask the URLs the store confirmed
		// lately, the txs in flight (which put their URLs in the filter
		// before the store has them), then the store.
		if t.s.mu.recent.has(h) {
			return nil
		}
		for o := range t.s.mu.inflight {
			if _, met := o.fresh[h]; met && o != t {
				return nil
			}
		}
		seen, err := t.s.has(t.key)
		if err != nil {
			return err
		}
		if seen {
			t.s.mu.recent.add(h)
			return nil
		}
	}
	t.set(t.key, nil)
	t.s.mu.inflight[t] = struct{}{}
	t.s.mu.seen.add(h[:])
	if admit != nil && !admit(*c) {
		return nil
	}
	d, err := t.host(c.Host)
	if err != nil {
		return err
	}
	lim := t.s.limits
	if (lim.HostBudget > 0 && d.st.queued >= lim.HostBudget) || (lim.CrawlBudget > 0 && t.s.mu.queued >= lim.CrawlBudget) {
		d.st.overBudget++
		d.over++
		d.newRecord = true
		if t.added.OverBudget == nil {
			t.added.OverBudget = make(map[string]int)
		}
		t.added.OverBudget[c.Host]++
		return nil
	}
	d.st.queued++
	d.queued++
	t.s.mu.queued++
	t.queued++
	d.newRecord = d.newRecord || lim.HostBudget > 0 || lim.CrawlBudget > 0
	return t.enqueue(d, c.Host, c.Due, &c.Entry)
}

// enqueue adds an entry to host's queue, counted in Added.
func (t *tx) enqueue(d *hostDelta, host string, due time.Time, e *Entry) error {
	d.enqueued++
	return t.put(d, host, due, e)
}

// put adds an entry to host's queue.
func (t *tx) put(d *hostDelta, host string, due time.Time, e *Entry) error {
	t.s.mu.seq++
	t.key = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(append(append(append(t.key[:0], prefixQueue), host...), 0), timeNanos(due)), t.s.mu.seq)
	t.val = appendEntry(t.val[:0], host, e)
	t.set(t.key, t.val)
	if !d.adds || due.Before(d.minDue) || due.Equal(d.minDue) && t.s.mu.seq < d.minSeq {
		d.minDue, d.minSeq = due, t.s.mu.seq
	}
	d.adds = true
	d.pending++
	return nil
}

// requeue puts a visited URL back in its queue (--recrawl).
func (t *tx) requeue(c *Candidate) error {
	h, first, err := t.meet(c)
	if !first || err != nil {
		return err
	}
	hk := historyKey(h)
	var hist History
	ok, err := t.s.getHistory(hk, &hist)
	if err != nil || !ok || hist.Pending {
		return err
	}
	hist.Pending = true
	t.val = appendHistory(t.val[:0], &hist)
	t.set(hk, t.val)
	d, err := t.host(c.Host)
	if err != nil {
		return err
	}
	return t.enqueue(d, c.Host, c.Due, &c.Entry)
}

// settle applies one leased URL's result, checked by Release beforehand.
func (t *tx) settle(d *hostDelta, r *Result) error {
	item := r.Item
	if r.Outcome == Retry {
		e := item.Entry
		e.Attempts++
		if r.RetryAt.After(item.Due) {
			t.delete(item.Ref)
			d.pending--
			d.deleted = append(d.deleted, item.Ref)
			return t.enqueue(d, item.Host, r.RetryAt, &e)
		}
		t.val = appendEntry(t.val[:0], item.Host, &e)
		t.set(item.Ref, t.val)
		d.rewrote = true
		return nil
	}
	t.delete(item.Ref)
	d.pending--
	d.deleted = append(d.deleted, item.Ref)
	if r.History == nil {
		return nil
	}
	revisit := !r.Revisit.IsZero()
	r.History.Outcome, r.History.Pending = string(r.Outcome), revisit
	t.val = appendHistory(t.val[:0], r.History)
	h := Hash(r.Canonical)
	t.key = append(append(t.key[:0], prefixHistory), h[:]...)
	t.set(t.key, t.val)
	if !revisit {
		return nil
	}
	e := Entry{URL: item.URL, Depth: item.Depth, Recrawl: true, Hops: item.Hops, Kind: item.Kind, AsIs: item.AsIs}
	return t.put(d, item.Host, r.Revisit, &e)
}

// commitAndUnlock writes the batch (see tx) and returns what it queued, once
// the batch is applied and its sync has been asked for.
func (t *tx) commitAndUnlock() (Added, error) {
	s := t.s
	serial := false
	for name, d := range t.hosts {
		// A release writes the host's record when its next allowed time
		// must survive a restart (a pause), or when the record holds a
		// later one than the host has now.
		release := d.endLease && (d.pause || d.st.durableNext.After(d.next))
		if !d.newRecord && !release {
			continue // nothing to keep that the queue does not say
		}
		rec := d.st.hostRecord
		rec.next = d.st.durableNext
		if d.endLease {
			rec.next = d.next
		}
		d.st.durableNext = rec.next
		t.val = appendHostRecord(t.val[:0], &rec)
		t.set(hostKey(name), t.val)
		serial = serial || d.newRecord
	}
	if len(t.ops) == 0 {
		// Nothing to write (a release that settled nothing and keeps no
		// pause): the in-memory state alone changes.
		err := t.follow()
		t.b.Close()
		t.b = nil
		return t.result(), err
	}
	if !serial {
		// Everything is decided: the rest needs no lock.
		t.locked = false
		s.mu.Unlock()
	}
	// In key order: the memtable's skiplist then finds each key's place
	// starting from the last one's, instead of from the top, which for
	// keys in hash order was much of admission's time.
	slices.SortStableFunc(t.ops, func(a, b op) int {
		return bytes.Compare(t.arena[a.k0:a.k1], t.arena[b.k0:b.k1])
	})
	for _, o := range t.ops {
		var err error
		if o.del {
			err = t.b.Delete(t.arena[o.k0:o.k1], nil)
		} else {
			err = t.b.Set(t.arena[o.k0:o.k1], t.arena[o.k1:o.v1], nil)
		}
		if err != nil {
			return Added{}, err
		}
	}
	// With an fsync asked for: a URL settled must stay settled when the
	// process is killed (Pebble keeps unsynced log writes in memory until
	// a block fills), though nobody waits for the fsync here.
	if err := s.db.ApplyNoSyncWait(t.b, pebble.Sync); err != nil {
		return Added{}, s.fail(err)
	}
	if !serial {
		s.mu.Lock()
		t.locked = true
	}
	// The batch is applied and visible: the in-memory state follows. The
	// fsync is under way: the store's waiter awaits it, and a failure
	// fails the store (what is in memory would be ahead of what is on
	// disk, so nothing more may be written until the job is opened again).
	perr := t.follow()
	s.awaitSync(t.b)
	t.b = nil
	t.locked = false
	s.mu.Unlock()
	if perr != nil {
		return Added{}, perr
	}
	return t.result(), nil
}

// follow brings the in-memory state — seen URLs in flight, queue counts,
// due times, leases, the heap and the copies of queue heads — in line with
// the applied change, under s.mu. It returns a read that failed on the way,
// which the caller reports once the batch is handed to the waiter.
func (t *tx) follow() (perr error) {
	s := t.s
	delete(s.mu.inflight, t)
	for name, d := range t.hosts {
		st := d.st
		before := st.pending
		st.pending += d.pending
		s.mu.heads.settled(st, d.deleted, d.rewrote, d.adds, d.minDue)
		if d.adds && st.floor != nil && bytes.Compare(queueKey(name, d.minDue, d.minSeq), st.floor) < 0 {
			// Added before the floor. (Sequence numbers are handed out
			// before a tx is applied, so one applied late may sort before
			// an entry with its due time that a read found first.)
			st.floor = nil
		}
		if d.endLease && st.lease != nil && st.lease.ID == d.leaseID {
			st.lease = nil
		}
		if d.endLease {
			st.next = d.next
		}
		switch {
		case d.endLease:
			head := d.head
			if d.adds {
				head.add(d.minDue)
			}
			st.due = head.t
			if !head.ok && st.pending > 0 {
				// Entries the lease did not see: read the head.
				due, rerr := s.headDue(name)
				if rerr != nil && perr == nil {
					perr = rerr
				}
				st.due = due
			}
		case d.adds && st.lease != nil:
			st.addedInLease.add(d.minDue)
		case d.adds && (before <= 0 || d.minDue.Before(st.due)):
			st.due = d.minDue
		}
		s.mu.ready.place(st)
		s.letGo(st)
	}
	s.evictIdle()
	return perr
}

// result is what the tx queued, per host.
func (t *tx) result() Added {
	for name, d := range t.hosts {
		if d.enqueued > 0 {
			if t.added.Queued == nil {
				t.added.Queued = make(map[string]int)
			}
			t.added.Queued[name] = d.enqueued
		}
	}
	return t.added
}
