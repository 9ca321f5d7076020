package frontier

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// tx is one change to the store, built under Store.mu: a Pebble batch and
// the changes to the in-memory state that follow it once it is applied.
type tx struct {
	s      *Store
	b      *pebble.Batch
	locked bool // holds s.mu
	hosts  map[string]*hostDelta
	fresh  map[[16]byte]struct{} // URLs met in this batch
	marked [][16]byte            // added to the seen-set, for the filter
	queued int                   // URLs queued, for the crawl budget
	seq    uint64
	added  Added
	deltas []hostDelta // allocated in chunks
	key    []byte      // scratch
	val    []byte      // scratch
}

// hostDelta is a host touched by a tx.
type hostDelta struct {
	st       *hostState // nil for a host new to the store
	rec      hostRecord // the record after the batch
	before   int        // entries queued before the batch
	minDue   time.Time  // earliest due time of the entries the batch adds
	adds     bool       // the batch adds entries
	removed  bool       // the batch removes or moves entries: read the head again
	endLease bool
}

// newTx starts a change; the caller holds s.mu, which the tx releases.
func (s *Store) newTx(n int) *tx {
	return &tx{
		s:      s,
		b:      s.db.NewBatch(),
		locked: true,
		hosts:  make(map[string]*hostDelta),
		fresh:  make(map[[16]byte]struct{}, n),
		seq:    s.mu.seq,
		added:  Added{Queued: make(map[string]int)},
	}
}

// close frees the batch and, on every early return or panic, the lock.
func (t *tx) close() {
	if t.locked {
		t.locked = false
		t.s.mu.Unlock()
	}
	if t.b != nil {
		t.b.Close()
	}
}

func (t *tx) host(name string) *hostDelta {
	if d := t.hosts[name]; d != nil {
		return d
	}
	if len(t.deltas) == cap(t.deltas) {
		t.deltas = make([]hostDelta, 0, 64)
	}
	t.deltas = append(t.deltas, hostDelta{})
	d := &t.deltas[len(t.deltas)-1]
	if st := t.s.mu.hosts[name]; st != nil {
		d.st, d.rec, d.before = st, st.hostRecord, st.pending
	}
	t.hosts[name] = d
	return d
}

// admit offers one URL: checked against the batch, the in-memory filter and
// the seen-set, marked seen, then queued unless Admit or a budget refuses.
func (t *tx) admit(c *Candidate, admit func(Candidate) bool) error {
	if c.Host == "" || c.Canonical == "" || c.URL == "" {
		return fmt.Errorf("frontier: candidate %q lacks a host, a canonical form or a URL", c.URL)
	}
	h := Hash(c.Canonical)
	if _, dup := t.fresh[h]; dup {
		return nil
	}
	t.fresh[h] = struct{}{}
	t.key = append(append(t.key[:0], prefixSeen), h[:]...)
	if t.s.mu.seen.mayContain(h[:]) {
		seen, err := t.s.has(t.key)
		if err != nil || seen {
			return err
		}
	}
	if err := t.b.Set(t.key, nil, nil); err != nil {
		return err
	}
	t.marked = append(t.marked, h)
	if admit != nil && !admit(*c) {
		return nil
	}
	d := t.host(c.Host)
	if (t.s.limits.HostBudget > 0 && d.rec.queued >= t.s.limits.HostBudget) ||
		(t.s.limits.CrawlBudget > 0 && t.s.mu.queued+t.queued >= t.s.limits.CrawlBudget) {
		d.rec.overBudget++
		if t.added.OverBudget == nil {
			t.added.OverBudget = make(map[string]int)
		}
		t.added.OverBudget[c.Host]++
		return nil
	}
	d.rec.queued++
	t.queued++
	return t.enqueue(d, c.Host, c.Due, &c.Entry)
}

// enqueue adds an entry to host's queue.
func (t *tx) enqueue(d *hostDelta, host string, due time.Time, e *Entry) error {
	t.seq++
	t.key = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(append(append(append(t.key[:0], prefixQueue), host...), 0), timeNanos(due)), t.seq)
	t.val = appendEntry(t.val[:0], host, e)
	if err := t.b.Set(t.key, t.val, nil); err != nil {
		return err
	}
	if !d.adds || due.Before(d.minDue) {
		d.minDue = due
	}
	d.adds = true
	d.rec.pending++
	t.added.Queued[host]++
	return nil
}

// requeue puts a visited URL back in its queue (--recrawl).
func (t *tx) requeue(c *Candidate) error {
	if c.Host == "" || c.Canonical == "" || c.URL == "" {
		return fmt.Errorf("frontier: candidate %q lacks a host, a canonical form or a URL", c.URL)
	}
	h := Hash(c.Canonical)
	if _, dup := t.fresh[h]; dup {
		return nil
	}
	t.fresh[h] = struct{}{}
	hk := append([]byte{prefixHistory}, h[:]...)
	var hist History
	ok, err := t.s.getJSON(hk, &hist)
	if err != nil || !ok || hist.Pending {
		return err
	}
	hist.Pending = true
	v, err := json.Marshal(&hist)
	if err != nil {
		return err
	}
	if err := t.b.Set(hk, v, nil); err != nil {
		return err
	}
	return t.enqueue(t.host(c.Host), c.Host, c.Due, &c.Entry)
}

// settle applies one leased URL's result.
func (t *tx) settle(d *hostDelta, r *Result) error {
	item := r.Item
	switch r.Outcome {
	case Retry:
		e := item.Entry
		e.Attempts++
		if r.RetryAt.After(item.Due) {
			if err := t.b.Delete(item.Ref, nil); err != nil {
				return err
			}
			d.rec.pending--
			return t.enqueue(d, item.Host, r.RetryAt, &e)
		}
		t.val = appendEntry(t.val[:0], item.Host, &e)
		return t.b.Set(item.Ref, t.val, nil)
	case Fetched, Unchanged, Gone, Failed, Disallowed, Skipped, Invalid, Duplicate:
	default:
		return fmt.Errorf("frontier: unknown outcome %q for %s", r.Outcome, item.URL)
	}
	if err := t.b.Delete(item.Ref, nil); err != nil {
		return err
	}
	d.rec.pending--
	if r.History == nil {
		return nil
	}
	if r.Canonical == "" {
		return errors.New("frontier: a result with a history needs its canonical URL")
	}
	r.History.Outcome, r.History.Pending = string(r.Outcome), false
	v, err := json.Marshal(r.History)
	if err != nil {
		return err
	}
	return t.b.Set(historyKey(r.Canonical), v, nil)
}

// commitAndUnlock hands the batch to Pebble's commit pipeline, applies its
// changes to the in-memory state, lets go of the lock and waits for the
// batch's fsync — shared with the batches committed meanwhile.
func (t *tx) commitAndUnlock() (Added, error) {
	s := t.s
	budgets := s.limits.HostBudget > 0 || s.limits.CrawlBudget > 0
	for name, d := range t.hosts {
		if !d.endLease && !budgets && d.rec.overBudget == 0 {
			continue // nothing to keep that the queue does not say
		}
		t.val = appendHostRecord(t.val[:0], &d.rec)
		if err := t.b.Set(hostKey(name), t.val, nil); err != nil {
			return Added{}, err
		}
	}
	if t.seq != s.mu.seq {
		if err := t.b.Set(metaKey("seq"), binary.BigEndian.AppendUint64(nil, t.seq), nil); err != nil {
			return Added{}, err
		}
	}
	if t.b.Empty() {
		return t.added, nil
	}
	// Synced: a URL settled must stay settled when the process is killed
	// (Pebble keeps unsynced log writes in memory until a block fills).
	if err := s.db.ApplyNoSyncWait(t.b, pebble.Sync); err != nil {
		return Added{}, s.fail(err)
	}
	// The batch is applied and visible: the in-memory state follows.
	for _, h := range t.marked {
		s.mu.seen.add(h[:])
	}
	s.mu.seq = t.seq
	s.mu.queued += t.queued
	var err error
	for name, d := range t.hosts {
		st := d.st
		if st == nil {
			st = &hostState{name: name, index: -1}
			s.mu.hosts[name] = st
		}
		st.hostRecord = d.rec
		if d.endLease {
			st.lease = nil
		}
		switch {
		case d.removed:
			due, rerr := s.headDue(name)
			if rerr != nil && err == nil {
				err = rerr
			}
			st.due = due
		case d.adds && (d.before == 0 || d.minDue.Before(st.due)):
			st.due = d.minDue
		}
		s.mu.ready.place(st)
	}
	t.locked = false
	s.mu.Unlock()
	if serr := t.b.SyncWait(); serr != nil {
		// What is in memory is ahead of what is on disk: nothing more may
		// be written until the job is opened again.
		err = s.fail(serr)
	}
	t.b.Close()
	t.b = nil
	if err != nil {
		return Added{}, err
	}
	return t.added, nil
}
