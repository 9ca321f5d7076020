package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
)

// A change (an Add or a Release) is one transaction of at most two round
// trips, each a pipeline of statements:
//
//  1. When it offers URLs: BEGIN; INSERT into the seen-set … ON CONFLICT
//     DO NOTHING RETURNING what was new (the candidates as arrays, or for
//     many, COPYed into the connection's temporary table first); for a
//     release, whether its lease still holds; with a budget, the counts.
//  2. One statement for the queue entries (the admitted candidates; a
//     release's settled, retried and revisited entries) and histories,
//     one for every host touched — the released host with its fencing
//     check, which fails the transaction when the lease is lost — and
//     COMMIT. A release without links has no first round trip: its
//     pipeline is one implicit transaction.
//
// Between the two, Go asks Admit about each new URL and applies the
// budgets, as the embedded store does.
//
// Rows are locked in one order by every change — seen keys, then a
// release's own queue entries and histories, then hosts, each set sorted
// by key within its statement — so that concurrent changes never wait for
// each other in a cycle.

// copyMin is the number of candidates from which they go into the
// temporary table with COPY (three round trips, then fast); fewer go to
// the statements as arrays.
const copyMin = 256

// budgetLock is the key of the advisory lock budgeted admissions take.
const budgetLock = 0x67632d6275646774 // "gc-budgt"

type change struct {
	s      *Store
	admit  func(frontier.Candidate) bool
	fresh  map[[16]byte]struct{}
	staged []staged
	hosts  map[string]*hostDelta
	added  frontier.Added

	lease    *frontier.Lease // a release's
	held     heldLease       // what names the lease in the database
	next     time.Time
	pause    bool
	deferred bool
	state    []byte // the host's state to keep; nil keeps what is kept
	own      ownOps
	hist     map[[16]byte]string // histories to write, as JSON
}

// staged is a candidate of the change: offered (Add, links), or a URL to
// requeue.
type staged struct {
	c       *frontier.Candidate
	key     [16]byte
	requeue bool
}

// hostDelta is what a change does to a host's row.
type hostDelta struct {
	bucket                int32
	pending, queued, over int
	due                   *time.Time // the earliest entry it adds
	enqueued              int        // counted in Added.Queued
}

func (d *hostDelta) addDue(t time.Time) {
	if d.due == nil || t.Before(*d.due) {
		d.due = &t
	}
}

// ownOps are a release's changes to its own host's queue: entries
// deleted, entries whose attempts are counted in place (retries due at
// once), and entries put in (retries due later, revisits).
type ownOps struct {
	delDue, updDue []time.Time
	delSeq, updSeq []int64
	put            []putEntry
}

type putEntry struct {
	due time.Time
	e   frontier.Entry
}

func (s *Store) newChange(admit func(frontier.Candidate) bool) *change {
	return &change{s: s, admit: admit, fresh: make(map[[16]byte]struct{}), hosts: make(map[string]*hostDelta)}
}

func (ch *change) host(name string) *hostDelta {
	d := ch.hosts[name]
	if d == nil {
		d = &hostDelta{bucket: bucketOf(name)}
		ch.hosts[name] = d
	}
	return d
}

// offer checks a candidate and stages it, unless it already is.
func (ch *change) offer(c *frontier.Candidate, requeue bool) error {
	if c.Host == "" || c.Canonical == "" || c.URL == "" {
		return fmt.Errorf("frontier/postgres: candidate %q lacks a host, a canonical form or a URL", c.URL)
	}
	key := frontier.Hash(c.Canonical)
	if _, dup := ch.fresh[key]; dup {
		return nil
	}
	ch.fresh[key] = struct{}{}
	ch.staged = append(ch.staged, staged{c: c, key: key, requeue: requeue})
	return nil
}

// Add admits a batch of URLs.
func (s *Store) Add(ctx context.Context, b frontier.Batch) (frontier.Added, error) {
	prepare := func() (*change, error) {
		ch := s.newChange(b.Admit)
		for i := range b.Add {
			if err := ch.offer(&b.Add[i], false); err != nil {
				return nil, err
			}
		}
		for i := range b.Requeue {
			if err := ch.offer(&b.Requeue[i], true); err != nil {
				return nil, err
			}
		}
		return ch, nil
	}
	ch, err := prepare()
	if err != nil || len(ch.staged) == 0 {
		return frontier.Added{}, err
	}
	return s.runChange(ctx, "add", ch, prepare)
}

// runChange runs ch, and when the database was out of reach, runs a change
// prepare makes again (retry.go says why that is safe), as often as retry
// says.
func (s *Store) runChange(ctx context.Context, what string, ch *change, prepare func() (*change, error)) (frontier.Added, error) {
	var added frontier.Added
	err := s.retry(ctx, what, func() error {
		if ch == nil {
			var err error
			if ch, err = prepare(); err != nil {
				return err
			}
		}
		var err error
		added, err = ch.run(ctx)
		ch = nil // the next attempt starts afresh
		return err
	})
	return added, err
}

// Release ends a lease.
func (s *Store) Release(ctx context.Context, req frontier.ReleaseRequest) (frontier.Added, error) {
	l := req.Lease
	if l == nil {
		return frontier.Added{}, errors.New("frontier/postgres: Release without a lease")
	}
	// Check every result before anything changes.
	settled := make(map[*frontier.Item]bool, len(req.Results))
	for _, r := range req.Results {
		if !leaseHas(l, r.Item) || settled[r.Item] {
			return frontier.Added{}, fmt.Errorf("frontier/postgres: Release of %s: a result for a URL the lease does not hold, or two for one", l.Host)
		}
		settled[r.Item] = true
		if !known(r.Outcome) {
			return frontier.Added{}, fmt.Errorf("frontier/postgres: unknown outcome %q for %s", r.Outcome, r.Item.URL)
		}
		if r.History != nil && r.Canonical == "" && r.Outcome != frontier.Retry {
			return frontier.Added{}, fmt.Errorf("frontier/postgres: the result for %s has a history but no canonical URL", r.Item.URL)
		}
		if _, _, ok := parseRef(r.Item.Ref); !ok {
			return frontier.Added{}, fmt.Errorf("frontier/postgres: the item %s was not handed out by this backend", r.Item.URL)
		}
	}
	held, ok := leaseOf(l)
	if !ok {
		return frontier.Added{}, fmt.Errorf("frontier/postgres: the lease of %s was not handed out by this backend", l.Host)
	}
	prepare := func() (*change, error) {
		ch := s.newChange(req.Admit)
		ch.lease, ch.held, ch.next, ch.pause, ch.deferred, ch.state = l, held, req.Next, req.Pause, req.Deferred, req.HostState
		for _, r := range req.Results {
			for i := range r.Add {
				if err := ch.offer(&r.Add[i], false); err != nil {
					return nil, err
				}
			}
		}
		own := ch.host(l.Host)
		for _, r := range req.Results {
			if err := ch.settle(own, &r); err != nil {
				return nil, err
			}
		}
		return ch, nil
	}
	ch, err := prepare()
	if err != nil {
		return frontier.Added{}, err
	}
	added, err := s.runChange(ctx, "release", ch, prepare)
	if err == nil || errors.Is(err, frontier.ErrLeaseLost) {
		s.drop(l.Host, held)
	}
	return added, err
}

// settle plans one leased URL's result.
func (ch *change) settle(own *hostDelta, r *frontier.Result) error {
	item := r.Item
	due, seq, _ := parseRef(item.Ref)
	o := &ch.own
	if r.Outcome == frontier.Retry {
		e := item.Entry
		e.Attempts++
		if r.RetryAt.After(item.Due) {
			o.delDue, o.delSeq = append(o.delDue, due), append(o.delSeq, seq)
			o.put = append(o.put, putEntry{dbTime(r.RetryAt), e})
			own.enqueued++
			return nil
		}
		// Counted in place: nobody else changes a leased entry, so the
		// row's attempts are item.Attempts.
		o.updDue, o.updSeq = append(o.updDue, due), append(o.updSeq, seq)
		return nil
	}
	o.delDue, o.delSeq = append(o.delDue, due), append(o.delSeq, seq)
	own.pending--
	if r.History == nil {
		return nil
	}
	revisit := !r.Revisit.IsZero()
	r.History.Outcome, r.History.Pending = string(r.Outcome), revisit
	b, err := json.Marshal(r.History)
	if err != nil {
		return fmt.Errorf("frontier/postgres: history of %s: %w", r.Canonical, err)
	}
	if ch.hist == nil {
		ch.hist = make(map[[16]byte]string)
	}
	ch.hist[frontier.Hash(r.Canonical)] = string(b) // the last result for a URL wins
	if revisit {
		e := frontier.Entry{URL: item.URL, Depth: item.Depth, Recrawl: true, Hops: item.Hops, Kind: item.Kind, AsIs: item.AsIs}
		o.put = append(o.put, putEntry{dbTime(r.Revisit), e})
		own.pending++
	}
	return nil
}

func leaseHas(l *frontier.Lease, item *frontier.Item) bool {
	for _, it := range l.Items {
		if it == item {
			return item != nil
		}
	}
	return false
}

func known(o frontier.Outcome) bool {
	switch o {
	case frontier.Fetched, frontier.Unchanged, frontier.Gone, frontier.Failed, frontier.Disallowed,
		frontier.Skipped, frontier.Invalid, frontier.Duplicate, frontier.Retry:
		return true
	}
	return false
}
