package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
)

// Seen reports whether a canonical URL is in the seen-set.
func (s *Store) Seen(ctx context.Context, canonical string) (bool, error) {
	k := frontier.Hash(canonical)
	var seen bool
	err := s.retry(ctx, "seen", func() error {
		return s.pool.QueryRow(ctx, "SELECT EXISTS (SELECT FROM gc_seen WHERE bucket = $1 AND key = $2)", keyBucket(k), k).Scan(&seen)
	})
	if err != nil {
		return false, fmt.Errorf("frontier/postgres: seen: %w", err)
	}
	return seen, nil
}

// MarkSeen adds a canonical URL to the seen-set without queueing it.
func (s *Store) MarkSeen(ctx context.Context, canonical string) error {
	k := frontier.Hash(canonical)
	err := s.retry(ctx, "mark seen", func() error {
		_, err := s.pool.Exec(ctx, "INSERT INTO gc_seen (bucket, key) VALUES ($1, $2) ON CONFLICT DO NOTHING", keyBucket(k), k)
		return err
	})
	if err != nil {
		return fmt.Errorf("frontier/postgres: mark seen: %w", err)
	}
	return nil
}

// Hosts describes every host with something queued, the first due first.
// It reads every such host's row: it is for reports, not for the crawl
// loop.
func (s *Store) Hosts(ctx context.Context) ([]frontier.HostInfo, error) {
	var out []frontier.HostInfo
	err := s.retry(ctx, "hosts", func() error {
		out = nil
		rows, err := s.pool.Query(ctx, `
SELECT host, pending, queued, over_budget, next_allowed, least(due, added_due), lease_owner IS NOT NULL
FROM gc_hosts WHERE pending > 0 ORDER BY ready_at, bucket, host`)
		if err != nil {
			return err
		}
		var (
			h            frontier.HostInfo
			pending      int32
			queued, over int64
			next, due    *time.Time
		)
		_, err = pgx.ForEachRow(rows, []any{&h.Host, &pending, &queued, &over, &next, &due, &h.Leased}, func() error {
			info := h
			info.Pending, info.Queued, info.OverBudget = int(pending), int(queued), int(over)
			if next != nil {
				info.Next = *next
			}
			if due != nil {
				info.Due = *due
			}
			out = append(out, info)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("frontier/postgres: hosts: %w", err)
	}
	return out, nil
}

// History returns what is known of a URL from its last visit, or nil.
func (s *Store) History(ctx context.Context, canonical string) (*frontier.History, error) {
	k := frontier.Hash(canonical)
	var b []byte
	err := s.retry(ctx, "history", func() error {
		return s.pool.QueryRow(ctx, "SELECT record FROM gc_history WHERE bucket = $1 AND key = $2", keyBucket(k), k).Scan(&b)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("frontier/postgres: history: %w", err)
	}
	return decodeHistory(b)
}

func decodeHistory(b []byte) (*frontier.History, error) {
	h := new(frontier.History)
	if err := json.Unmarshal(b, h); err != nil {
		return nil, fmt.Errorf("frontier/postgres: corrupt history: %w", err)
	}
	// As the embedded store reads them back.
	if !h.Fetched.IsZero() {
		h.Fetched = h.Fetched.UTC()
	}
	if !h.Captured.IsZero() {
		h.Captured = h.Captured.UTC()
	}
	return h, nil
}

// historyPage is how many histories EachHistory reads with one statement
// (a variable for tests).
var historyPage = 1000

// historyPageSQL reads the histories of bucket $1 after key $2, in key
// order: the primary key's order, one index range. historyFirstSQL reads
// a bucket's first page, from the nil UUID, the least key, on.
const (
	historyPageSQL  = `SELECT key, record FROM gc_history WHERE bucket = $1 AND key > $2 ORDER BY key LIMIT $3`
	historyFirstSQL = `SELECT key, record FROM gc_history WHERE bucket = $1 AND key >= $2 ORDER BY key LIMIT $3`
)

// EachHistory calls fn for every URL with a history, in no particular
// order. It reads them a page at a time, bucket by bucket, each page by a
// statement of its own that has ended before fn is called: a walk over
// millions of histories holds no snapshot open for its whole length, which
// would keep every vacuum from removing what the crawl's leases leave
// behind, and every claim stepping over it. A history written meanwhile
// may be seen or not; none is seen twice. A connection lost reads the page
// again.
func (s *Store) EachHistory(ctx context.Context, fn func(*frontier.History) error) error {
	var (
		page [][]byte
		last [16]byte
	)
	for bucket := int32(0); bucket < Buckets; bucket++ {
		sql, after := historyFirstSQL, [16]byte{}
		for {
			err := s.retry(ctx, "histories", func() error {
				page = page[:0]
				rows, err := s.pool.Query(ctx, sql, bucket, after, historyPage)
				if err != nil {
					return err
				}
				var b []byte
				_, err = pgx.ForEachRow(rows, []any{&last, &b}, func() error {
					page = append(page, bytes.Clone(b))
					return nil
				})
				return err
			})
			if err != nil {
				return fmt.Errorf("frontier/postgres: histories: %w", err)
			}
			for _, b := range page {
				h, err := decodeHistory(b)
				if err != nil {
					return err
				}
				if err := fn(h); err != nil {
					return err
				}
			}
			if len(page) < historyPage {
				break
			}
			sql, after = historyPageSQL, last
		}
	}
	return nil
}

// Robots returns the cached robots.txt record of an origin, or nil.
func (s *Store) Robots(ctx context.Context, origin string) (*frontier.RobotsRecord, error) {
	var b []byte
	err := s.retry(ctx, "robots", func() error {
		return s.pool.QueryRow(ctx, "SELECT record FROM gc_robots WHERE bucket = $1 AND origin = $2", bucketOf(origin), origin).Scan(&b)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("frontier/postgres: robots: %w", err)
	}
	r := new(frontier.RobotsRecord)
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("frontier/postgres: corrupt robots.txt record of %s: %w", origin, err)
	}
	return r, nil
}

// PutRobots stores the robots.txt record of an origin.
func (s *Store) PutRobots(ctx context.Context, origin string, r *frontier.RobotsRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	err = s.retry(ctx, "put robots", func() error {
		_, err := s.pool.Exec(ctx, `
INSERT INTO gc_robots (bucket, origin, record) VALUES ($1, $2, $3::text::jsonb)
ON CONFLICT (bucket, origin) DO UPDATE SET record = excluded.record`, bucketOf(origin), origin, string(b))
		return err
	})
	if err != nil {
		return fmt.Errorf("frontier/postgres: put robots: %w", err)
	}
	return nil
}

// Meta returns a named value stored with the job, or "".
func (s *Store) Meta(ctx context.Context, name string) (string, error) {
	var v string
	err := s.retry(ctx, "meta", func() error {
		return s.pool.QueryRow(ctx, "SELECT value FROM gc_meta WHERE name = $1", name).Scan(&v)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("frontier/postgres: meta: %w", err)
	}
	return v, nil
}

// SetMeta stores a named value with the job.
func (s *Store) SetMeta(ctx context.Context, name, value string) error {
	err := s.retry(ctx, "set meta", func() error {
		_, err := s.pool.Exec(ctx, `
INSERT INTO gc_meta (name, value) VALUES ($1, $2)
ON CONFLICT (name) DO UPDATE SET value = excluded.value`, name, value)
		return err
	})
	if err != nil {
		return fmt.Errorf("frontier/postgres: set meta: %w", err)
	}
	return nil
}

// MergeList adds to the JSON list of strings stored under name (Meta)
// the values it does not hold yet, after those it holds, and returns the
// list as stored. It is one statement, which locks the row: workers that
// join a crawl at once, each with its seeds, all end up in the list —
// where a read followed by SetMeta would let the last writer drop the
// others'. A value under name that is not a JSON list is an error.
func (s *Store) MergeList(ctx context.Context, name string, values []string) ([]string, error) {
	if values == nil {
		values = []string{}
	}
	add, err := json.Marshal(values)
	if err != nil {
		return nil, err
	}
	var out string
	err = s.retry(ctx, "merge "+name, func() error {
		return s.pool.QueryRow(ctx, `
INSERT INTO gc_meta AS m (name, value) VALUES ($1, $2::jsonb::text)
ON CONFLICT (name) DO UPDATE SET value = (
	SELECT coalesce(jsonb_agg(e ORDER BY src, ord), '[]'::jsonb)::text FROM (
		SELECT e, 0 AS src, ord FROM jsonb_array_elements(m.value::jsonb) WITH ORDINALITY AS a(e, ord)
		UNION ALL
		SELECT e, 1, ord FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS b(e, ord)
		WHERE NOT m.value::jsonb @> jsonb_build_array(e)
	) u)
RETURNING value`, name, string(add)).Scan(&out)
	})
	if err != nil {
		return nil, fmt.Errorf("frontier/postgres: merge %s: %w", name, err)
	}
	var list []string
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return nil, fmt.Errorf("frontier/postgres: merge %s: the stored value is not a list of strings: %w", name, err)
	}
	return list, nil
}

// SetAddr records the address host was last fetched from, which the
// workers of a shared crawl read (Addr) to keep to a budget per address.
func (s *Store) SetAddr(ctx context.Context, host, addr string) error {
	err := s.retry(ctx, "set address", func() error {
		_, err := s.pool.Exec(ctx, `
INSERT INTO gc_hosts AS h (bucket, host, addr) VALUES ($1, $2, $3)
ON CONFLICT (bucket, host) DO UPDATE SET addr = excluded.addr WHERE h.addr IS DISTINCT FROM excluded.addr`,
			bucketOf(host), host, addr)
		return err
	})
	if err != nil {
		return fmt.Errorf("frontier/postgres: set address: %w", err)
	}
	return nil
}

// Addr returns the address SetAddr last recorded for host, or "".
func (s *Store) Addr(ctx context.Context, host string) (string, error) {
	var addr *string
	err := s.retry(ctx, "address", func() error {
		return s.pool.QueryRow(ctx, "SELECT addr FROM gc_hosts WHERE bucket = $1 AND host = $2", bucketOf(host), host).Scan(&addr)
	})
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && addr == nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("frontier/postgres: address: %w", err)
	}
	return *addr, nil
}

// AddrBusy reports whether host's address (as SetAddr recorded it) has
// more hosts leased by live holders than Options.MaxPerAddr, host's own
// lease included. A claim counts the leases in its own snapshot, so two
// claims at the same instant can both pass the budget; a worker that asks
// this after its claim, before its request, and gives the host back when
// it says yes, keeps the budget whatever the timing: of two such claims
// each sees the other. False without a budget or a known address.
func (s *Store) AddrBusy(ctx context.Context, host string) (bool, error) {
	if s.maxPerAddr <= 0 {
		return false, nil
	}
	var busy bool
	err := s.retry(ctx, "address budget", func() error {
		return s.pool.QueryRow(ctx, `
SELECT count(*) > $3 FROM gc_hosts o
WHERE o.addr = (SELECT addr FROM gc_hosts WHERE bucket = $1 AND host = $2)
	AND o.lease_owner IS NOT NULL AND o.lease_deadline > now()`, bucketOf(host), host, s.maxPerAddr).Scan(&busy)
	})
	if err != nil {
		return false, fmt.Errorf("frontier/postgres: address budget: %w", err)
	}
	return busy, nil
}

// Outstanding reports whether the crawl has work left that a worker
// should wait for: a host with URLs queued that is leased by a live
// worker (its holder may queue more) or is not deferred (frontier.ReleaseRequest.Deferred). When
// it says no, a worker with nothing in hand can stop: what is left waits
// on robots.txt files that are unavailable. Two index probes: it is cheap
// enough to ask whenever a worker finds nothing to claim.
func (s *Store) Outstanding(ctx context.Context) (bool, error) {
	var out bool
	err := s.retry(ctx, "outstanding", func() error {
		return s.pool.QueryRow(ctx, `
SELECT EXISTS (SELECT FROM gc_hosts WHERE lease_owner IS NOT NULL AND lease_deadline > now() AND pending > 0)
	OR EXISTS (SELECT FROM gc_hosts WHERE ready_at IS NOT NULL AND NOT deferred)`).Scan(&out)
	})
	if err != nil {
		return false, fmt.Errorf("frontier/postgres: outstanding: %w", err)
	}
	return out, nil
}
