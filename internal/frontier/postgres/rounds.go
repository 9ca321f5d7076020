package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
)

// run applies the change in one transaction.
func (ch *change) run(ctx context.Context) (_ frontier.Added, err error) {
	conn, err := ch.s.pool.Acquire(ctx)
	if err != nil {
		return frontier.Added{}, fmt.Errorf("frontier/postgres: %w", err)
	}
	defer func() {
		if c := conn.Conn(); !c.IsClosed() && c.PgConn().TxStatus() != 'I' {
			// A transaction left open by an error: roll it back, or the
			// pool closes the connection.
			conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		}
		conn.Release()
	}()
	explicit := len(ch.staged) > 0
	staged := len(ch.staged) >= copyMin
	var admitted []int32
	if explicit {
		if admitted, err = ch.offerRound(ctx, conn, staged); err != nil {
			return frontier.Added{}, err
		}
	}
	if err := ch.writeRound(ctx, conn, admitted, staged, explicit); err != nil {
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

// The first round trip's statements. The seen-set and requeue statements
// come in two forms: reading the candidates from arrays, or from the
// temporary table COPY filled.
const (
	seenSQL = `
INSERT INTO gc_seen (bucket, key)
SELECT * FROM unnest($1::integer[], $2::uuid[]) ORDER BY 1, 2
ON CONFLICT DO NOTHING
RETURNING key`

	seenStagedSQL = `
INSERT INTO gc_seen (bucket, key)
SELECT kb, key FROM gc_stage WHERE NOT requeue ORDER BY kb, key
ON CONFLICT DO NOTHING
RETURNING key`

	// requeueSQL finds each history by its key (the LIMIT keeps the
	// planner from scanning them all), and updates it by row address: a
	// history rewritten meanwhile by a release is left alone, its URL
	// not requeued this time.
	requeueSQL = `
UPDATE gc_history SET record = record || '{"pending": true}'::jsonb
WHERE ctid = ANY (ARRAY(
	SELECT x.ctid FROM unnest($1::integer[], $2::uuid[]) AS s(kb, key)
	CROSS JOIN LATERAL (SELECT h.ctid FROM gc_history h WHERE h.bucket = s.kb AND h.key = s.key LIMIT 1) x))
	AND NOT coalesce((record->>'pending')::boolean, false)
RETURNING key`

	requeueStagedSQL = `
UPDATE gc_history SET record = record || '{"pending": true}'::jsonb
WHERE ctid = ANY (ARRAY(
	SELECT x.ctid FROM gc_stage s
	CROSS JOIN LATERAL (SELECT h.ctid FROM gc_history h WHERE h.bucket = s.kb AND h.key = s.key LIMIT 1) x
	WHERE s.requeue))
	AND NOT coalesce((record->>'pending')::boolean, false)
RETURNING key`

	heldSQL = `
SELECT EXISTS (SELECT FROM gc_hosts WHERE bucket = $1 AND host = $2 AND lease_epoch = $3 AND lease_owner = $4)`

	hostCountsSQL = `
SELECT x.host, x.queued FROM unnest($1::integer[], $2::text[]) AS s(bucket, host)
CROSS JOIN LATERAL (
	SELECT g.host, g.queued FROM gc_hosts g WHERE g.bucket = s.bucket AND g.host = s.host LIMIT 1) x`

	crawlCountSQL = `SELECT coalesce(sum(queued), 0)::bigint FROM gc_hosts`
)

var stageColumns = []string{"i", "requeue", "kb", "key", "hb", "host", "due", "url", "depth", "attempts", "hops", "kind", "recrawl", "as_is", "parent"}

// offerRound opens the transaction, marks the new candidates seen and
// requeues what can be, and decides what is queued: it returns the indices
// in ch.staged of the entries to queue. With staged set, the candidates go
// into the temporary table with COPY first.
func (ch *change) offerRound(ctx context.Context, conn *pgxpool.Conn, staged bool) ([]int32, error) {
	s := ch.s
	b := &pgx.Batch{}
	// The candidates in key order, the order their seen-set rows are
	// locked in.
	order := make([]int32, len(ch.staged))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		ka, kb := ch.staged[a].key, ch.staged[b].key
		return cmp.Or(cmp.Compare(keyBucket(ka), keyBucket(kb)), compareKeys(ka, kb))
	})
	var requeues bool
	for _, st := range ch.staged {
		requeues = requeues || st.requeue
	}
	if staged {
		if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
			return nil, fmt.Errorf("frontier/postgres: %w", err)
		}
		_, err := conn.CopyFrom(ctx, pgx.Identifier{"gc_stage"}, stageColumns,
			pgx.CopyFromSlice(len(ch.staged), func(i int) ([]any, error) {
				st := ch.staged[i]
				c := st.c
				return []any{int32(i), st.requeue, keyBucket(st.key), st.key, bucketOf(c.Host), c.Host, dbTime(c.Due), c.URL,
					int32(c.Depth), int32(c.Attempts), int32(c.Hops), c.Kind, c.Recrawl, c.AsIs, int64(c.Parent)}, nil
			}))
		if err != nil {
			return nil, fmt.Errorf("frontier/postgres: copy: %w", err)
		}
	} else {
		b.Queue("BEGIN")
	}
	budgets := s.limits.HostBudget > 0 || s.limits.CrawlBudget > 0
	if budgets {
		b.Queue("SELECT pg_advisory_xact_lock($1)", int64(budgetLock))
	}
	isNew := make(map[[16]byte]bool)
	scanNew := func(rows pgx.Rows) error {
		var k [16]byte
		_, err := pgx.ForEachRow(rows, []any{&k}, func() error { isNew[k] = true; return nil })
		return err
	}
	requeuedKeys := make(map[[16]byte]bool)
	scanRequeued := func(rows pgx.Rows) error {
		var k [16]byte
		_, err := pgx.ForEachRow(rows, []any{&k}, func() error { requeuedKeys[k] = true; return nil })
		return err
	}
	if staged {
		b.Queue(seenStagedSQL).Query(scanNew)
		if requeues {
			b.Queue(requeueStagedSQL).Query(scanRequeued)
		}
	} else {
		var kbs, rkbs []int32
		var keys, rkeys [][16]byte
		for _, i := range order {
			st := ch.staged[i]
			if st.requeue {
				rkbs, rkeys = append(rkbs, keyBucket(st.key)), append(rkeys, st.key)
			} else {
				kbs, keys = append(kbs, keyBucket(st.key)), append(keys, st.key)
			}
		}
		if len(keys) > 0 {
			b.Queue(seenSQL, kbs, keys).Query(scanNew)
		}
		if requeues {
			b.Queue(requeueSQL, rkbs, rkeys).Query(scanRequeued)
		}
	}
	held := true
	if l := ch.lease; l != nil {
		b.Queue(heldSQL, bucketOf(l.Host), l.Host, int64(ch.held.epoch), ch.held.token).QueryRow(func(row pgx.Row) error {
			return row.Scan(&held)
		})
	}
	hostQueued := make(map[string]int64)
	var crawlQueued int64
	if budgets {
		var hbs []int32
		var names []string
		seen := make(map[string]bool)
		for _, st := range ch.staged {
			if h := st.c.Host; !st.requeue && !seen[h] {
				seen[h] = true
				hbs, names = append(hbs, bucketOf(h)), append(names, h)
			}
		}
		b.Queue(hostCountsSQL, hbs, names).Query(func(rows pgx.Rows) error {
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
	for i, st := range ch.staged {
		if !st.requeue || !requeuedKeys[st.key] {
			continue
		}
		d := ch.host(st.c.Host)
		d.pending++
		d.enqueued++
		d.addDue(dbTime(st.c.Due))
		admitted = append(admitted, int32(i))
	}
	return admitted, nil
}

// The second round trip's statements.
const (
	// headSQL is the released host's head, read by the statement that
	// ends the lease, after this transaction's own changes to the queue.
	// Its snapshot may miss an entry added while the statement waited for
	// the host's row; added_due, read from the row itself, has it.
	headSQL = `(SELECT q.due FROM gc_queue q WHERE q.bucket = $1 AND q.host = $2 ORDER BY q.due, q.seq LIMIT 1)`

	// releaseSQL ends the lease of host $1/$2 when it touches no other
	// host: pending by $3, next allowed time $4, pause $5, fenced by epoch
	// $6 and token $7; $8 says whether it is deferred, $9 is its state
	// (NULL keeps the state kept).
	releaseSQL = `
WITH up AS (
	UPDATE gc_hosts h SET pending = h.pending + $3,
		due = least(` + headSQL + `, h.added_due), added_due = NULL,
		next_allowed = $4, pause_until = $5, deferred = $8, host_state = coalesce($9, h.host_state),
		lease_owner = NULL, lease_expires = NULL, lease_deadline = NULL, lease_epoch = h.lease_epoch + 1
	WHERE h.bucket = $1 AND h.host = $2 AND h.lease_epoch = $6 AND h.lease_owner = $7
	RETURNING 1
)
SELECT gc_fence(EXISTS (SELECT FROM up))`

	// hostsSQL applies the deltas ($3–$8) of every host a change touches,
	// in key order. For a release, host $1/$2 is the released one: its
	// lease ends as in releaseSQL ($9 next, $10 pause, $11 epoch, $12
	// token, $13 deferred, $14 state), and the transaction fails when the fence does not hold.
	hostsSQL = `
WITH up AS (
	INSERT INTO gc_hosts AS h (bucket, host, pending, queued, over_budget, added_due)
	SELECT * FROM unnest($3::integer[], $4::text[], $5::integer[], $6::bigint[], $7::bigint[], $8::timestamptz[])
	ORDER BY 1, 2
	ON CONFLICT (bucket, host) DO UPDATE SET
		pending = h.pending + excluded.pending,
		queued = h.queued + excluded.queued,
		over_budget = h.over_budget + excluded.over_budget,
		due = CASE WHEN h.bucket = $1 AND h.host = $2 THEN least(` + headSQL + `, h.added_due) ELSE h.due END,
		added_due = CASE WHEN h.bucket = $1 AND h.host = $2 THEN NULL ELSE least(h.added_due, excluded.added_due) END,
		next_allowed = CASE WHEN h.bucket = $1 AND h.host = $2 THEN $9 ELSE h.next_allowed END,
		pause_until = CASE WHEN h.bucket = $1 AND h.host = $2 THEN $10 ELSE h.pause_until END,
		deferred = CASE WHEN h.bucket = $1 AND h.host = $2 THEN $13 ELSE h.deferred END,
		host_state = CASE WHEN h.bucket = $1 AND h.host = $2 THEN coalesce($14, h.host_state) ELSE h.host_state END,
		lease_owner = CASE WHEN h.bucket = $1 AND h.host = $2 THEN NULL ELSE h.lease_owner END,
		lease_expires = CASE WHEN h.bucket = $1 AND h.host = $2 THEN NULL ELSE h.lease_expires END,
		lease_deadline = CASE WHEN h.bucket = $1 AND h.host = $2 THEN NULL ELSE h.lease_deadline END,
		lease_epoch = CASE WHEN h.bucket = $1 AND h.host = $2 THEN h.lease_epoch + 1 ELSE h.lease_epoch END
	WHERE h.bucket IS DISTINCT FROM $1 OR h.host IS DISTINCT FROM $2
		OR (h.lease_epoch = $11 AND h.lease_owner = $12)
	RETURNING h.bucket = $1 AND h.host = $2 AS own
)
SELECT gc_fence($2::text IS NULL OR coalesce(bool_or(own), false)) FROM up`
)

// writeRound writes the queue rows, histories and hosts, and commits.
func (ch *change) writeRound(ctx context.Context, conn *pgxpool.Conn, admitted []int32, staged, explicit bool) error {
	b := &pgx.Batch{}
	if sql, args := ch.entriesSQL(admitted, staged); sql != "" {
		b.Queue(sql, args...)
	}
	l := ch.lease
	var ownBucket *int32
	var ownHost *string
	if l != nil {
		ob := bucketOf(l.Host)
		ownBucket, ownHost = &ob, &l.Host
	}
	var pause *time.Time
	if ch.pause {
		pause = nullTime(ch.next)
	}
	var own *hostDelta
	if l != nil {
		own = ch.hosts[l.Host]
	}
	if own != nil && len(ch.hosts) == 1 && own.over == 0 && own.queued == 0 {
		b.Queue(releaseSQL, *ownBucket, l.Host, int32(own.pending), nullTime(ch.next), pause, int64(ch.held.epoch), ch.held.token, ch.deferred, ch.state)
	} else if len(ch.hosts) > 0 {
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
		var epoch *int64
		var token *[16]byte
		if l != nil {
			e := int64(ch.held.epoch)
			epoch, token = &e, &ch.held.token
		}
		b.Queue(hostsSQL, ownBucket, ownHost, buckets, names, pending, queued, over, due,
			nullTime(ch.next), pause, epoch, token, ch.deferred, ch.state)
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

// entriesSQL is the one statement that writes a change's queue entries
// and histories, each part a data-modifying WITH query, present when it
// has something to do: the admitted candidates (from arrays, or from the
// temporary table when staged), and for a release its results — entries
// deleted, counted in place or put back, histories written. The hosts'
// rows are the next statement's, which sees these entries.
func (ch *change) entriesSQL(admitted []int32, staged bool) (string, []any) {
	l, o := ch.lease, &ch.own
	var ownBucket *int32
	var ownHost *string
	if l != nil {
		ob := bucketOf(l.Host)
		ownBucket, ownHost = &ob, &l.Host
	}
	args := []any{ownBucket, ownHost}
	param := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	var parts []string
	if len(admitted) > 0 && staged {
		parts = append(parts, fmt.Sprintf(`ins AS (
	INSERT INTO gc_queue (bucket, host, due, url, depth, attempts, hops, kind, recrawl, as_is, parent)
	SELECT hb, host, due, url, depth, attempts, hops, kind, recrawl, as_is, parent FROM gc_stage
	WHERE i = ANY(%s::integer[]) ORDER BY i
	RETURNING 1)`, param(admitted)))
	}
	// New entries from arrays: the admitted candidates, then a release's
	// retries due later and revisits.
	var q entryArrays
	if !staged {
		for _, i := range admitted {
			c := ch.staged[i].c
			q.add(bucketOf(c.Host), c.Host, dbTime(c.Due), &c.Entry)
		}
	}
	if l != nil {
		for _, p := range o.put {
			q.add(bucketOf(l.Host), l.Host, p.due, &p.e)
		}
	}
	if len(q.url) > 0 {
		ps := make([]any, 0, 11)
		for _, a := range q.args() {
			ps = append(ps, param(a))
		}
		parts = append(parts, fmt.Sprintf(`put AS (
	INSERT INTO gc_queue (bucket, host, due, url, depth, attempts, hops, kind, recrawl, as_is, parent)
	SELECT bucket, host, due, url, depth, attempts, hops, kind, recrawl, as_is, parent
	FROM unnest(%s::integer[], %s::text[], %s::timestamptz[], %s::text[], %s::integer[], %s::integer[],
		%s::integer[], %s::text[], %s::boolean[], %s::boolean[], %s::bigint[])
		WITH ORDINALITY AS p(bucket, host, due, url, depth, attempts, hops, kind, recrawl, as_is, parent, n)
	ORDER BY n
	RETURNING 1)`, ps...))
	}
	if n := len(o.delSeq) + len(o.updSeq); n > 0 {
		// Each entry found by its whole key, one index lookup apiece (the
		// LIMIT keeps the planner from joining the host's whole queue
		// instead), then deleted, or its attempts counted, by row address.
		due, seq, del := make([]time.Time, 0, n), make([]int64, 0, n), make([]bool, 0, n)
		due, seq = append(append(due, o.delDue...), o.updDue...), append(append(seq, o.delSeq...), o.updSeq...)
		for i := range n {
			del = append(del, i < len(o.delSeq))
		}
		parts = append(parts, fmt.Sprintf(`loc AS MATERIALIZED (
	SELECT x.ctid, d.del FROM unnest(%s::timestamptz[], %s::bigint[], %s::boolean[]) AS d(due, seq, del)
	CROSS JOIN LATERAL (
		SELECT q.ctid FROM gc_queue q
		WHERE q.bucket = $1 AND q.host = $2 AND q.due = d.due AND q.seq = d.seq LIMIT 1) x)`,
			param(due), param(seq), param(del)))
		if len(o.delSeq) > 0 {
			parts = append(parts, `del AS (
	DELETE FROM gc_queue WHERE ctid = ANY (ARRAY(SELECT ctid FROM loc WHERE del)) RETURNING 1)`)
		}
		if len(o.updSeq) > 0 {
			parts = append(parts, `upd AS (
	UPDATE gc_queue SET attempts = attempts + 1 WHERE ctid = ANY (ARRAY(SELECT ctid FROM loc WHERE NOT del)) RETURNING 1)`)
		}
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
		parts = append(parts, fmt.Sprintf(`hist AS (
	INSERT INTO gc_history (bucket, key, record)
	SELECT bucket, key, record::jsonb FROM unnest(%s::integer[], %s::uuid[], %s::text[]) AS h(bucket, key, record)
	ORDER BY 1, 2
	ON CONFLICT (bucket, key) DO UPDATE SET record = excluded.record
	RETURNING 1)`, param(buckets), param(keys), param(records)))
	}
	if len(parts) == 0 {
		return "", nil
	}
	// $1 and $2 are the released host, used by some parts: typed here
	// for the others.
	return "WITH " + strings.Join(parts, ", ") + "\nSELECT $1::integer, $2::text", args
}

// entryArrays are queue rows as the parallel arrays unnest takes.
type entryArrays struct {
	bucket, depth, attempts, hops []int32
	host, url, kind               []string
	due                           []time.Time
	recrawl, asIs                 []bool
	parent                        []int64
}

func (q *entryArrays) add(bucket int32, host string, due time.Time, e *frontier.Entry) {
	q.bucket, q.host, q.due = append(q.bucket, bucket), append(q.host, host), append(q.due, due)
	q.url, q.depth, q.attempts = append(q.url, e.URL), append(q.depth, int32(e.Depth)), append(q.attempts, int32(e.Attempts))
	q.hops, q.kind = append(q.hops, int32(e.Hops)), append(q.kind, e.Kind)
	q.recrawl, q.asIs, q.parent = append(q.recrawl, e.Recrawl), append(q.asIs, e.AsIs), append(q.parent, int64(e.Parent))
}

// args are the arrays in the column order of queueSQL.
func (q *entryArrays) args() []any {
	return []any{q.bucket, q.host, q.due, q.url, q.depth, q.attempts, q.hops, q.kind, q.recrawl, q.asIs, q.parent}
}

func compareKeys(a, b [16]byte) int {
	for i := range a {
		if c := cmp.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}
