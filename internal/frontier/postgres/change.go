package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
)

// A change (an Add or a Release) is one transaction of at most two round
// trips, each a pipeline of statements:
//
//  1. When it offers URLs: BEGIN; the candidates into the connection's
//     temporary table (COPY for many, one INSERT for a few); INSERT into
//     the seen-set … ON CONFLICT DO NOTHING RETURNING what was new; for a
//     release, whether its lease still holds; with a budget, the counts.
//  2. The queue rows (the admitted candidates, from the temporary table;
//     a release's settled, retried and revisited entries), the histories,
//     one upsert of every host touched — the released host with its
//     fencing check, which fails the transaction when the lease is lost —
//     and COMMIT. A release without links has no first round trip: its
//     pipeline is one implicit transaction.
//
// Between the two, Go asks Admit about each new URL and applies the
// budgets, as the embedded store does.
//
// Rows are locked in one order by every change — seen keys, then a
// release's own queue entries, then histories, then hosts, each set sorted
// by key within its statement — so that concurrent changes never wait for
// each other in a cycle.

// copyMin is the number of candidates from which they go into the
// temporary table with COPY (three round trips, then fast); fewer go in
// one INSERT of arrays in the first pipeline.
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

	lease *frontier.Lease // a release's
	next  time.Time
	pause bool
	own   ownOps
	hist  map[[16]byte]string // histories to write, as JSON
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

// ownOps are a release's changes to its own host's queue.
type ownOps struct {
	delDue               []time.Time
	delSeq               []int64
	updDue               []time.Time
	updSeq               []int64
	updAttempts          []int32
	put                  []putEntry
	delete, update, puts bool
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
	ch := s.newChange(b.Admit)
	for i := range b.Add {
		if err := ch.offer(&b.Add[i], false); err != nil {
			return frontier.Added{}, err
		}
	}
	for i := range b.Requeue {
		if err := ch.offer(&b.Requeue[i], true); err != nil {
			return frontier.Added{}, err
		}
	}
	if len(ch.staged) == 0 {
		return frontier.Added{}, nil
	}
	return ch.run(ctx)
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
	ch := s.newChange(req.Admit)
	ch.lease, ch.next, ch.pause = l, req.Next, req.Pause
	for _, r := range req.Results {
		for i := range r.Add {
			if err := ch.offer(&r.Add[i], false); err != nil {
				return frontier.Added{}, err
			}
		}
	}
	own := ch.host(l.Host)
	for _, r := range req.Results {
		if err := ch.settle(own, &r); err != nil {
			return frontier.Added{}, err
		}
	}
	added, err := ch.run(ctx)
	if err == nil || errors.Is(err, frontier.ErrLeaseLost) {
		s.drop(l.Host, l.ID)
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
		o.updDue, o.updSeq, o.updAttempts = append(o.updDue, due), append(o.updSeq, seq), append(o.updAttempts, int32(e.Attempts))
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

// run applies the change in one transaction.
func (ch *change) run(ctx context.Context) (_ frontier.Added, err error) {
	conn, err := ch.s.pool.Acquire(ctx)
	if err != nil {
		return frontier.Added{}, fmt.Errorf("frontier/postgres: %w", err)
	}
	defer func() {
		if conn.Conn().PgConn().TxStatus() != 'I' {
			// A transaction left open by an error: roll it back, or the
			// pool closes the connection.
			conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		}
		conn.Release()
	}()
	explicit := len(ch.staged) > 0
	var admitted []int32
	if explicit {
		if admitted, err = ch.offerRound(ctx, conn); err != nil {
			return frontier.Added{}, err
		}
	}
	if err := ch.writeRound(ctx, conn, admitted, explicit); err != nil {
		return frontier.Added{}, err
	}
	for name, d := range ch.hosts {
		if d.enqueued > 0 {
			if ch.added.Queued == nil {
				ch.added.Queued = make(map[string]int)
			}
			ch.added.Queued[name] = d.enqueued
		}
	}
	return ch.added, nil
}

// The first round trip's statements.
const (
	stageInsertSQL = `
INSERT INTO gc_stage (i, requeue, kb, key, hb, host, due, url, depth, attempts, hops, kind, recrawl, as_is, parent)
SELECT * FROM unnest($1::integer[], $2::boolean[], $3::integer[], $4::uuid[], $5::integer[], $6::text[],
	$7::timestamptz[], $8::text[], $9::integer[], $10::integer[], $11::integer[], $12::text[],
	$13::boolean[], $14::boolean[], $15::bigint[])`

	seenSQL = `
INSERT INTO gc_seen (bucket, key)
SELECT kb, key FROM gc_stage WHERE NOT requeue ORDER BY kb, key
ON CONFLICT DO NOTHING
RETURNING key`

	requeueSQL = `
UPDATE gc_history h SET record = h.record || '{"pending": true}'::jsonb
FROM gc_stage s
WHERE s.requeue AND h.bucket = s.kb AND h.key = s.key
	AND NOT coalesce((h.record->>'pending')::boolean, false)
RETURNING s.i`

	heldSQL = `
SELECT EXISTS (SELECT FROM gc_hosts WHERE bucket = $1 AND host = $2 AND lease_epoch = $3 AND lease_owner = $4)`

	hostCountsSQL = `
SELECT g.host, g.queued FROM gc_hosts g
JOIN (SELECT DISTINCT hb, host FROM gc_stage WHERE NOT requeue) s ON g.bucket = s.hb AND g.host = s.host`

	crawlCountSQL = `SELECT coalesce(sum(queued), 0)::bigint FROM gc_hosts`
)

var stageColumns = []string{"i", "requeue", "kb", "key", "hb", "host", "due", "url", "depth", "attempts", "hops", "kind", "recrawl", "as_is", "parent"}

// stageRow is the temporary table's row for staged candidate i.
func (ch *change) stageRow(i int) []any {
	st := ch.staged[i]
	c := st.c
	return []any{int32(i), st.requeue, keyBucket(st.key), st.key, bucketOf(c.Host), c.Host, dbTime(c.Due), c.URL,
		int32(c.Depth), int32(c.Attempts), int32(c.Hops), c.Kind, c.Recrawl, c.AsIs, int64(c.Parent)}
}

// offerRound opens the transaction, stages the candidates, marks the new
// ones seen and requeues what can be, and decides what is queued: it
// returns the indices in ch.staged of the entries to queue.
func (ch *change) offerRound(ctx context.Context, conn *pgxpool.Conn) ([]int32, error) {
	s := ch.s
	b := &pgx.Batch{}
	if len(ch.staged) >= copyMin {
		if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
			return nil, fmt.Errorf("frontier/postgres: %w", err)
		}
		_, err := conn.CopyFrom(ctx, pgx.Identifier{"gc_stage"}, stageColumns,
			pgx.CopyFromSlice(len(ch.staged), func(i int) ([]any, error) { return ch.stageRow(i), nil }))
		if err != nil {
			return nil, fmt.Errorf("frontier/postgres: copy: %w", err)
		}
	} else {
		b.Queue("BEGIN")
		cols := make([][]any, len(stageColumns))
		for i := range ch.staged {
			for j, v := range ch.stageRow(i) {
				cols[j] = append(cols[j], v)
			}
		}
		b.Queue(stageInsertSQL, stageArrays(cols)...)
	}
	budgets := s.limits.HostBudget > 0 || s.limits.CrawlBudget > 0
	if budgets {
		b.Queue("SELECT pg_advisory_xact_lock($1)", int64(budgetLock))
	}
	var requeues bool
	for _, st := range ch.staged {
		requeues = requeues || st.requeue
	}
	isNew := make(map[[16]byte]bool)
	b.Queue(seenSQL).Query(func(rows pgx.Rows) error {
		var k [16]byte
		_, err := pgx.ForEachRow(rows, []any{&k}, func() error { isNew[k] = true; return nil })
		return err
	})
	var requeued []int32
	if requeues {
		b.Queue(requeueSQL).Query(func(rows pgx.Rows) error {
			var err error
			requeued, err = pgx.CollectRows(rows, pgx.RowTo[int32])
			return err
		})
	}
	held := true
	if l := ch.lease; l != nil {
		b.Queue(heldSQL, bucketOf(l.Host), l.Host, int64(l.ID), s.owner).QueryRow(func(row pgx.Row) error {
			return row.Scan(&held)
		})
	}
	hostQueued := make(map[string]int64)
	var crawlQueued int64
	if budgets {
		b.Queue(hostCountsSQL).Query(func(rows pgx.Rows) error {
			var h string
			var n int64
			_, err := pgx.ForEachRow(rows, []any{&h, &n}, func() error { hostQueued[h] = n; return nil })
			return err
		})
		if s.limits.CrawlBudget > 0 {
			b.Queue(crawlCountSQL).QueryRow(func(row pgx.Row) error { return row.Scan(&crawlQueued) })
		}
	}
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		return nil, fmt.Errorf("frontier/postgres: admit: %w", err)
	}
	if !held {
		return nil, frontier.ErrLeaseLost
	}

	// What Admit and the budgets let through, in the order offered.
	var admitted []int32
	lim := s.limits
	for i, st := range ch.staged {
		if st.requeue || !isNew[st.key] {
			continue
		}
		c := st.c
		if ch.admit != nil && !ch.admit(*c) {
			continue
		}
		d := ch.host(c.Host)
		if (lim.HostBudget > 0 && hostQueued[c.Host]+int64(d.queued) >= int64(lim.HostBudget)) ||
			(lim.CrawlBudget > 0 && crawlQueued >= int64(lim.CrawlBudget)) {
			d.over++
			if ch.added.OverBudget == nil {
				ch.added.OverBudget = make(map[string]int)
			}
			ch.added.OverBudget[c.Host]++
			continue
		}
		crawlQueued++
		d.queued++
		d.pending++
		d.enqueued++
		d.addDue(dbTime(c.Due))
		admitted = append(admitted, int32(i))
	}
	for _, i := range requeued {
		c := ch.staged[i].c
		d := ch.host(c.Host)
		d.pending++
		d.enqueued++
		d.addDue(dbTime(c.Due))
		admitted = append(admitted, i)
	}
	return admitted, nil
}

// stageArrays types the columns of the staged rows for unnest.
func stageArrays(cols [][]any) []any {
	out := make([]any, len(cols))
	for j, col := range cols {
		switch col[0].(type) {
		case int32:
			a := make([]int32, len(col))
			for i, v := range col {
				a[i] = v.(int32)
			}
			out[j] = a
		case int64:
			a := make([]int64, len(col))
			for i, v := range col {
				a[i] = v.(int64)
			}
			out[j] = a
		case bool:
			a := make([]bool, len(col))
			for i, v := range col {
				a[i] = v.(bool)
			}
			out[j] = a
		case string:
			a := make([]string, len(col))
			for i, v := range col {
				a[i] = v.(string)
			}
			out[j] = a
		case time.Time:
			a := make([]time.Time, len(col))
			for i, v := range col {
				a[i] = v.(time.Time)
			}
			out[j] = a
		case [16]byte:
			a := make([][16]byte, len(col))
			for i, v := range col {
				a[i] = v.([16]byte)
			}
			out[j] = a
		default:
			panic(fmt.Sprintf("frontier/postgres: no array for %T", col[0]))
		}
	}
	return out
}

// The second round trip's statements.
const (
	queueStagedSQL = `
INSERT INTO gc_queue (bucket, host, due, url, depth, attempts, hops, kind, recrawl, as_is, parent)
SELECT hb, host, due, url, depth, attempts, hops, kind, recrawl, as_is, parent FROM gc_stage
WHERE i = ANY($1::integer[]) ORDER BY i`

	// ownSQL settles a release's entries: deletes ($3, $4), updates in
	// place ($5–$7) and new entries ($8–$16) of host $1/$2.
	ownSQL = `
WITH del AS (
	DELETE FROM gc_queue q USING unnest($3::timestamptz[], $4::bigint[]) AS d(due, seq)
	WHERE q.bucket = $1 AND q.host = $2 AND q.due = d.due AND q.seq = d.seq
	RETURNING 1
), upd AS (
	UPDATE gc_queue q SET attempts = u.attempts
	FROM unnest($5::timestamptz[], $6::bigint[], $7::integer[]) AS u(due, seq, attempts)
	WHERE q.bucket = $1 AND q.host = $2 AND q.due = u.due AND q.seq = u.seq
	RETURNING 1
)
INSERT INTO gc_queue (bucket, host, due, url, depth, attempts, hops, kind, recrawl, as_is, parent)
SELECT $1, $2, p.due, p.url, p.depth, p.attempts, p.hops, p.kind, p.recrawl, p.as_is, p.parent
FROM unnest($8::timestamptz[], $9::text[], $10::integer[], $11::integer[], $12::integer[], $13::text[],
	$14::boolean[], $15::boolean[], $16::bigint[])
	WITH ORDINALITY AS p(due, url, depth, attempts, hops, kind, recrawl, as_is, parent, n)
ORDER BY p.n`

	historySQL = `
INSERT INTO gc_history (bucket, key, record)
SELECT bucket, key, record::jsonb FROM unnest($1::integer[], $2::uuid[], $3::text[]) AS h(bucket, key, record)
ORDER BY 1, 2
ON CONFLICT (bucket, key) DO UPDATE SET record = excluded.record`

	// hostsSQL applies the deltas of every host a change touches, in key
	// order. For a release, host $7/$8 is the released one: its lease
	// ends, with the fencing check ($11 epoch, $12 owner) that fails the
	// transaction when it does not hold.
	hostsSQL = `
WITH up AS (
	INSERT INTO gc_hosts AS h (bucket, host, pending, queued, over_budget, due)
	SELECT * FROM unnest($1::integer[], $2::text[], $3::integer[], $4::bigint[], $5::bigint[], $6::timestamptz[])
	ORDER BY 1, 2
	ON CONFLICT (bucket, host) DO UPDATE SET
		pending = h.pending + excluded.pending,
		queued = h.queued + excluded.queued,
		over_budget = h.over_budget + excluded.over_budget,
		due = least(h.due, excluded.due),
		next_allowed = CASE WHEN h.bucket = $7 AND h.host = $8 THEN $9 ELSE h.next_allowed END,
		pause_until = CASE WHEN h.bucket = $7 AND h.host = $8 THEN $10 ELSE h.pause_until END,
		lease_owner = CASE WHEN h.bucket = $7 AND h.host = $8 THEN NULL ELSE h.lease_owner END,
		lease_expires = CASE WHEN h.bucket = $7 AND h.host = $8 THEN NULL ELSE h.lease_expires END,
		lease_deadline = CASE WHEN h.bucket = $7 AND h.host = $8 THEN NULL ELSE h.lease_deadline END,
		lease_epoch = CASE WHEN h.bucket = $7 AND h.host = $8 THEN h.lease_epoch + 1 ELSE h.lease_epoch END
	WHERE h.bucket IS DISTINCT FROM $7 OR h.host IS DISTINCT FROM $8
		OR (h.lease_epoch = $11 AND h.lease_owner = $12)
	RETURNING h.bucket = $7 AND h.host = $8 AS own
)
SELECT gc_fence($8::text IS NULL OR coalesce(bool_or(own), false)) FROM up`

	// ownDueSQL sets the released host's head. It runs after hostsSQL has
	// locked the row: its snapshot then holds every entry whose adder has
	// updated the row, and adders still to come take least() of it.
	ownDueSQL = `
UPDATE gc_hosts SET due = (
	SELECT q.due FROM gc_queue q WHERE q.bucket = $1 AND q.host = $2 ORDER BY q.due, q.seq LIMIT 1)
WHERE bucket = $1 AND host = $2`
)

// writeRound writes the queue rows, histories and hosts, and commits.
func (ch *change) writeRound(ctx context.Context, conn *pgxpool.Conn, admitted []int32, explicit bool) error {
	b := &pgx.Batch{}
	if len(admitted) > 0 {
		b.Queue(queueStagedSQL, admitted)
	}
	l := ch.lease
	if o := &ch.own; l != nil && len(o.delSeq)+len(o.updSeq)+len(o.put) > 0 {
		n := len(o.put)
		due, url, kind := make([]time.Time, n), make([]string, n), make([]string, n)
		depth, attempts, hops := make([]int32, n), make([]int32, n), make([]int32, n)
		recrawl, asIs, parent := make([]bool, n), make([]bool, n), make([]int64, n)
		for i, p := range o.put {
			due[i], url[i], kind[i] = p.due, p.e.URL, p.e.Kind
			depth[i], attempts[i], hops[i] = int32(p.e.Depth), int32(p.e.Attempts), int32(p.e.Hops)
			recrawl[i], asIs[i], parent[i] = p.e.Recrawl, p.e.AsIs, int64(p.e.Parent)
		}
		b.Queue(ownSQL, bucketOf(l.Host), l.Host, o.delDue, o.delSeq, o.updDue, o.updSeq, o.updAttempts,
			due, url, depth, attempts, hops, kind, recrawl, asIs, parent)
	}
	if len(ch.hist) > 0 {
		keys := make([][16]byte, 0, len(ch.hist))
		for k := range ch.hist {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b [16]byte) int {
			return cmp.Or(cmp.Compare(keyBucket(a), keyBucket(b)), compareKeys(a, b))
		})
		buckets, records := make([]int32, len(keys)), make([]string, len(keys))
		for i, k := range keys {
			buckets[i], records[i] = keyBucket(k), ch.hist[k]
		}
		b.Queue(historySQL, buckets, keys, records)
	}
	if len(ch.hosts) > 0 {
		names := make([]string, 0, len(ch.hosts))
		for h := range ch.hosts {
			names = append(names, h)
		}
		slices.SortFunc(names, func(a, b string) int {
			return cmp.Or(cmp.Compare(ch.hosts[a].bucket, ch.hosts[b].bucket), cmp.Compare(a, b))
		})
		n := len(names)
		buckets, pending, queued, over, due := make([]int32, n), make([]int32, n), make([]int64, n), make([]int64, n), make([]*time.Time, n)
		for i, h := range names {
			d := ch.hosts[h]
			buckets[i], pending[i], queued[i], over[i], due[i] = d.bucket, int32(d.pending), int64(d.queued), int64(d.over), d.due
		}
		var ownBucket *int32
		var ownHost *string
		var epoch *int64
		var pause *time.Time
		if l != nil {
			ob, e := bucketOf(l.Host), int64(l.ID)
			ownBucket, ownHost, epoch = &ob, &l.Host, &e
			if ch.pause {
				pause = nullTime(ch.next)
			}
		}
		b.Queue(hostsSQL, buckets, names, pending, queued, over, due,
			ownBucket, ownHost, nullTime(ch.next), pause, epoch, ch.s.owner)
	}
	if l != nil {
		b.Queue(ownDueSQL, bucketOf(l.Host), l.Host)
	}
	if explicit {
		b.Queue("COMMIT")
	}
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		if isFence(err) {
			return frontier.ErrLeaseLost
		}
		return fmt.Errorf("frontier/postgres: write: %w", err)
	}
	return nil
}

func compareKeys(a, b [16]byte) int {
	for i := range a {
		if c := cmp.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}
