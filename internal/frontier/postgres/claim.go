package postgres

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
)

// A claim is one statement, one round trip: it picks the host and locks
// its row (FOR UPDATE SKIP LOCKED when any host will do, so that workers
// claiming at once pass each other by instead of queueing on one row),
// takes the lease — a new epoch, the claim's token (lease_owner, see
// heldLease), the expiry on the claimant's
// clock and the deadline on the database's — and reads the host's due
// entries. When no host is due it returns instead the time the first one
// will be.
//
// The entries are read in the statement's snapshot, taken before the row
// was locked. They are the host's entries as its lock holder left them
// unless a claim or release of the host committed in between: each moves
// the epoch, so "fresh" (the epoch is the snapshot's plus one) says the
// read stands; otherwise the claim reads them again, holding the lease
// now. Entries added meanwhile do not need it: a newer entry missed stays
// queued for the next lease.

// claimColumns are the columns both claims return: the lease, then one
// entry per row (NULL columns when none), or, when nothing was claimed, a
// single row with only next set.
const claimColumns = `
SELECT h.host, h.lease_epoch, h.lease_expires, h.fresh, h.host_state,
	q.due, q.seq, q.url, q.depth, q.attempts, q.hops, q.kind, q.recrawl, q.as_is, q.parent,
	NULL::timestamptz AS next
FROM h LEFT JOIN LATERAL (
	SELECT due, seq, url, depth, attempts, hops, kind, recrawl, as_is, parent FROM gc_queue q
	WHERE q.bucket = h.bucket AND q.host = h.host AND q.due <= $1
	ORDER BY q.due, q.seq LIMIT $5
) q ON true
UNION ALL
SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, `

// leaseSet is the SET of a claim's UPDATE. $2 token, $3 expiry on the
// claimant's clock, $4 TTL on the database's, in µs. The entries added
// since the last claim or release are folded into due: added_due then
// collects those added during the lease, which are not the lease's, so
// that its release can count them in the host's head.
const leaseSet = `
	SET lease_owner = $2, lease_epoch = g.lease_epoch + 1, lease_expires = $3,
		lease_deadline = now() + $4::float8 * interval '1 microsecond',
		due = least(g.due, g.added_due), added_due = NULL`

const leaseReturning = `
	RETURNING g.bucket, g.host, g.lease_epoch, g.lease_expires, g.host_state,
		g.lease_epoch = 1 + (SELECT s.lease_epoch FROM gc_hosts s WHERE s.bucket = g.bucket AND s.host = g.host) AS fresh`

// claimAnySQL claims the host due longest: first one whose holder stopped
// renewing (its deadline passed on the database's clock, whatever its
// expiry on the claimants'), then by ready_at; with budget, only a host
// whose address is within the budget ($6).
func claimAnySQL(budget bool) string {
	var dead, ready string
	if budget {
		dead, ready = addrFree("gc_hosts", "$6"), addrFree("gc_hosts", "$6")
	}
	return `
WITH dead AS MATERIALIZED (
	SELECT bucket, host FROM gc_hosts
	WHERE lease_owner IS NOT NULL AND lease_deadline <= now()
		AND pending > 0 AND greatest(least(due, added_due), next_allowed) <= $1` + dead + `
	ORDER BY lease_deadline LIMIT 1
	FOR UPDATE SKIP LOCKED
), ready AS MATERIALIZED (
	SELECT bucket, host FROM gc_hosts
	WHERE ready_at <= $1` + ready + `
	ORDER BY ready_at LIMIT 1
	FOR UPDATE SKIP LOCKED
), c AS MATERIALIZED (
	SELECT * FROM dead UNION ALL SELECT * FROM ready LIMIT 1
), h AS (
	UPDATE gc_hosts g` + leaseSet + `
	FROM c WHERE g.bucket = c.bucket AND g.host = c.host` + leaseReturning + `
)` + claimColumns + `
	(SELECT ready_at FROM gc_hosts WHERE ready_at IS NOT NULL ORDER BY ready_at LIMIT 1)
WHERE NOT EXISTS (SELECT FROM h)`
}

// claimHostSQL claims the host $6/$7 if it is due at $1 (and its
// address is within budget, $8, when budget).
func claimHostSQL(budget bool) string {
	var free string
	if budget {
		free = addrFree("g", "$8")
	}
	return `
WITH h AS (
	UPDATE gc_hosts g` + leaseSet + `
	WHERE g.bucket = $6 AND g.host = $7 AND g.pending > 0 AND greatest(least(g.due, g.added_due), g.next_allowed) <= $1
		AND (g.lease_owner IS NULL OR g.lease_expires <= $1 OR g.lease_deadline <= now())` + free + leaseReturning + `
)` + claimColumns + `
	(SELECT ready_at FROM gc_hosts WHERE bucket = $6 AND host = $7)
WHERE NOT EXISTS (SELECT FROM h)`
}

// addrFree is the per-address budget (Options.MaxPerAddr, the parameter
// param) as a condition on the gc_hosts row named row: its address, when
// known, has fewer hosts leased by live holders than the budget. Leases
// are turns, so that is the requests in flight to the address across all
// workers. Two claims at the same instant each count in their own
// snapshot, and may both pass: the budget can be exceeded by the claims
// that race, briefly.
func addrFree(row, param string) string {
	return `
		AND (` + row + `.addr IS NULL OR (SELECT count(*) FROM gc_hosts o
			WHERE o.addr = ` + row + `.addr AND o.lease_owner IS NOT NULL AND o.lease_deadline > now()) < ` + param + `)`
}

// itemsSQL reads a leased host's due entries again.
const itemsSQL = `
SELECT due, seq, url, depth, attempts, hops, kind, recrawl, as_is, parent FROM gc_queue
WHERE bucket = $1 AND host = $2 AND due <= $3
ORDER BY due, seq LIMIT $4`

// Claim leases a due host: req.Host, or the one due longest.
func (s *Store) Claim(ctx context.Context, req frontier.ClaimRequest) (*frontier.Lease, time.Time, error) {
	if req.Now.IsZero() {
		req.Now = time.Now()
	}
	req.Max = max(req.Max, 1)
	if req.TTL <= 0 {
		req.TTL = frontier.DefaultTTL
	}
	args := []any{req.Now, nil, req.Now.Add(req.TTL), float64(s.leaseTTL.Microseconds()), req.Max}
	sql := s.sql.claimAny
	if req.Host != "" {
		sql = s.sql.claimHost
		args = append(args, bucketOf(req.Host), req.Host)
		if s.maxPerAddr > 0 {
			args = append(args, s.maxPerAddr)
		}
	} else if s.maxPerAddr > 0 {
		args = append(args, s.maxPerAddr)
	}
	var (
		l      *frontier.Lease
		fresh  bool
		next   *time.Time
		token  [16]byte
		tokens [][16]byte // of every attempt
	)
	defer func() {
		// Until now, a lease an attempt took is not one a restart lost
		// (giveBackLost): it is held, given back, or abandoned.
		s.mu.Lock()
		for _, t := range tokens {
			delete(s.mu.claiming, t)
		}
		s.mu.Unlock()
	}()
	err := s.retry(ctx, "claim", func() error {
		if l != nil {
			// The last attempt read its lease, then lost the connection
			// before it knew whether the claim was committed: give the
			// lease back, if it was, rather than leave it to its deadline.
			s.abandon(ctx, l)
		}
		l, fresh, next = nil, false, nil
		token = s.newToken()
		tokens = append(tokens, token)
		s.mu.Lock()
		s.mu.claiming[token] = true
		s.mu.Unlock()
		args[1] = token
		rows, err := s.pool.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				host    *string
				epoch   *int64
				expires *time.Time
				ok      *bool
				state   []byte
				e       entryRow
			)
			err := rows.Scan(&host, &epoch, &expires, &ok, &state,
				&e.due, &e.seq, &e.url, &e.depth, &e.attempts, &e.hops, &e.kind, &e.recrawl, &e.asIs, &e.parent, &next)
			if err != nil {
				return err
			}
			if host == nil {
				continue // nothing claimed: next says when
			}
			if l == nil {
				l = &frontier.Lease{Host: *host, Expires: *expires, ID: uint64(*epoch), HostState: state, Ref: append([]byte(nil), token[:]...)}
				fresh = *ok
			}
			if e.seq != nil {
				l.Items = append(l.Items, e.item(l.Host))
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("frontier/postgres: claim: %w", err)
	}
	if l == nil {
		if next == nil {
			return nil, time.Time{}, nil
		}
		return nil, *next, nil
	}
	s.hold(l.Host, heldLease{l.ID, token})
	s.noteClaim()
	if !fresh || len(l.Items) == 0 {
		// The host changed between the statement's snapshot and its
		// lock: read its entries again, under the lease.
		if l.Items, err = s.readItems(ctx, l.Host, req.Now, req.Max); err == nil && len(l.Items) == 0 {
			err = fmt.Errorf("frontier/postgres: host %q was due but has no due entry", l.Host)
		}
		if err != nil {
			s.abandon(ctx, l)
			return nil, time.Time{}, err
		}
	}
	return l, time.Time{}, nil
}

// abandon gives back a lease without settling anything, after a claim
// that failed half-way.
func (s *Store) abandon(ctx context.Context, l *frontier.Lease) {
	h, _ := leaseOf(l)
	s.drop(l.Host, h)
	s.retry(ctx, "abandon", func() error {
		_, err := s.pool.Exec(ctx, `UPDATE gc_hosts SET lease_owner = NULL, lease_expires = NULL, lease_deadline = NULL, lease_epoch = lease_epoch + 1
WHERE bucket = $1 AND host = $2 AND lease_epoch = $3 AND lease_owner = $4`, bucketOf(l.Host), l.Host, int64(h.epoch), h.token)
		return err
	})
}

func (s *Store) readItems(ctx context.Context, host string, now time.Time, n int) ([]*frontier.Item, error) {
	var items []*frontier.Item
	err := s.retry(ctx, "claim", func() error {
		items = nil
		rows, err := s.pool.Query(ctx, itemsSQL, bucketOf(host), host, now, n)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e entryRow
			if err := rows.Scan(&e.due, &e.seq, &e.url, &e.depth, &e.attempts, &e.hops, &e.kind, &e.recrawl, &e.asIs, &e.parent); err != nil {
				return err
			}
			items = append(items, e.item(host))
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("frontier/postgres: claim: %w", err)
	}
	return items, nil
}

// entryRow is a queue row as scanned; its columns are NULL in the row of
// a lease with no entry.
type entryRow struct {
	due                   *time.Time
	seq                   *int64
	url, kind             *string
	depth, attempts, hops *int32
	recrawl, asIs         *bool
	parent                *int64
}

func (e *entryRow) item(host string) *frontier.Item {
	return &frontier.Item{
		Host: host,
		Due:  *e.due,
		Entry: frontier.Entry{
			URL: *e.url, Depth: int(*e.depth), Attempts: int(*e.attempts), Hops: int(*e.hops),
			Kind: *e.kind, Recrawl: *e.recrawl, AsIs: *e.asIs, Parent: uint64(*e.parent),
		},
		Ref: makeRef(*e.due, *e.seq),
	}
}

// makeRef is an Item's Ref: the rest of its queue row's key, the due time
// in microseconds (as stored) and the sequence number.
func makeRef(due time.Time, seq int64) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(due.UnixMicro()))
	return binary.BigEndian.AppendUint64(b, uint64(seq))
}

func parseRef(ref []byte) (due time.Time, seq int64, ok bool) {
	if len(ref) != 16 {
		return time.Time{}, 0, false
	}
	return time.UnixMicro(int64(binary.BigEndian.Uint64(ref))), int64(binary.BigEndian.Uint64(ref[8:])), true
}
