package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
)

// DefaultLeaseTTL is Options.LeaseTTL when it is zero.
const DefaultLeaseTTL = 30 * time.Second

// Options configure a Store. The zero value works.
type Options struct {
	// Logger receives what the store cannot return: a renewal that
	// failed. Nil means silent.
	Logger *slog.Logger
	// LeaseTTL is how long a lease lasts on the database's clock unless
	// renewed. The store renews the leases it holds every LeaseTTL/3, so
	// a lease outlives its holder's process by at most LeaseTTL; a live
	// holder's lease ends at the ClaimRequest's TTL on the claimant's
	// clock, or when released. Default DefaultLeaseTTL (30 s).
	LeaseTTL time.Duration
	// Limits are the budgets. Every worker of a crawl must be given the
	// same: with a budget, admissions take an advisory lock that
	// serializes them (and a crawl budget sums every host's count).
	frontier.Limits
}

// Store is a Frontier in a PostgreSQL database, shared by every process
// that opens the same one: each is one more worker of the crawl. It is
// safe for concurrent use. It must be created with Open and closed with
// Close, which gives back the leases it holds.
type Store struct {
	pool     *pgxpool.Pool
	limits   frontier.Limits
	leaseTTL time.Duration
	owner    [16]byte // the lease_owner of this Store's leases
	logger   *slog.Logger

	stop    chan struct{} // closed by Close: the renewer ends
	renewer sync.WaitGroup
	once    sync.Once
	// renewOff, set by tests, stops renewals, as if the process had
	// stopped.
	mu struct {
		sync.Mutex
		held     map[string]uint64 // host → epoch of the leases this Store holds
		renewOff bool
	}
}

var _ frontier.Frontier = (*Store)(nil)

// Open connects to the PostgreSQL database of dsn (a URL,
// postgres://user@host:port/db?…, or key=value pairs, as libpq takes;
// pgxpool's pool_max_conns and friends size the pool), creates the
// frontier's tables on first use or migrates them, and returns the Store.
// A database written by a newer version is refused with ErrIncompatible.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("frontier/postgres: bad DSN: %w", err)
	}
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, stageTable)
		return err
	}
	s := &Store{
		limits:   opts.Limits,
		leaseTTL: opts.LeaseTTL,
		logger:   opts.Logger,
		stop:     make(chan struct{}),
	}
	if s.leaseTTL <= 0 {
		s.leaseTTL = DefaultLeaseTTL
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if _, err := rand.Read(s.owner[:]); err != nil {
		return nil, err
	}
	s.mu.held = make(map[string]uint64)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("frontier/postgres: %w", err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("frontier/postgres: connect: %w", err)
	}
	err = migrate(ctx, conn.Conn())
	conn.Release()
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.pool = pool
	s.renewer.Add(1)
	go s.renew()
	return s, nil
}

// Close stops renewing leases, gives back the ones the store holds — their
// URLs that were not released are claimable at once, as they were — and
// closes the connections. Closing it again does nothing.
func (s *Store) Close() error {
	var err error
	s.once.Do(func() {
		close(s.stop)
		s.renewer.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = s.giveBack(ctx)
		s.pool.Close()
	})
	return err
}

// giveBack ends every lease the store holds, without settling anything.
func (s *Store) giveBack(ctx context.Context) error {
	s.mu.Lock()
	held := s.mu.held
	s.mu.held = make(map[string]uint64)
	s.mu.Unlock()
	if len(held) == 0 {
		return nil
	}
	buckets, hosts, epochs := leaseArrays(held)
	// Locked in key order, like every statement that locks several
	// hosts, so that none waits for another in a cycle.
	_, err := s.pool.Exec(ctx, `
WITH l AS (
	SELECT g.bucket, g.host FROM gc_hosts g
	JOIN unnest($1::integer[], $2::text[], $3::bigint[]) AS l(bucket, host, epoch)
		ON g.bucket = l.bucket AND g.host = l.host AND g.lease_epoch = l.epoch
	WHERE g.lease_owner = $4
	ORDER BY g.bucket, g.host
	FOR UPDATE OF g
)
UPDATE gc_hosts g SET lease_owner = NULL, lease_expires = NULL, lease_deadline = NULL, lease_epoch = g.lease_epoch + 1
FROM l WHERE g.bucket = l.bucket AND g.host = l.host`, buckets, hosts, epochs, s.owner)
	if err != nil {
		return fmt.Errorf("frontier/postgres: give back leases: %w", err)
	}
	return nil
}

// leaseArrays returns held as parallel arrays, in key order.
func leaseArrays(held map[string]uint64) (buckets []int32, hosts []string, epochs []int64) {
	for h := range held {
		hosts = append(hosts, h)
	}
	slices.SortFunc(hosts, func(a, b string) int {
		if ba, bb := bucketOf(a), bucketOf(b); ba != bb {
			return int(ba - bb)
		}
		return strings.Compare(a, b)
	})
	for _, h := range hosts {
		buckets = append(buckets, bucketOf(h))
		epochs = append(epochs, int64(held[h]))
	}
	return buckets, hosts, epochs
}

// renew pushes back the database-clock deadline of the leases the store
// holds, every LeaseTTL/3, until Close.
func (s *Store) renew() {
	defer s.renewer.Done()
	tick := time.NewTicker(s.leaseTTL / 3)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
		s.mu.Lock()
		off := s.mu.renewOff
		held := make(map[string]uint64, len(s.mu.held))
		for h, e := range s.mu.held {
			held[h] = e
		}
		s.mu.Unlock()
		if off || len(held) == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.leaseTTL/3)
		lost, err := s.renewHeld(ctx, held)
		cancel()
		if err != nil {
			s.logger.Warn("frontier/postgres: lease renewal failed", "err", err, "leases", len(held))
			continue
		}
		s.mu.Lock()
		for _, h := range lost {
			if s.mu.held[h] == held[h] {
				delete(s.mu.held, h)
			}
		}
		s.mu.Unlock()
	}
}

// renewHeld renews the leases of held and returns the hosts whose lease is
// gone (released meanwhile, or expired and claimed again).
func (s *Store) renewHeld(ctx context.Context, held map[string]uint64) (lost []string, err error) {
	buckets, hosts, epochs := leaseArrays(held)
	rows, err := s.pool.Query(ctx, `
WITH l AS (
	SELECT g.bucket, g.host FROM gc_hosts g
	JOIN unnest($1::integer[], $2::text[], $3::bigint[]) AS l(bucket, host, epoch)
		ON g.bucket = l.bucket AND g.host = l.host AND g.lease_epoch = l.epoch
	WHERE g.lease_owner = $4
	ORDER BY g.bucket, g.host
	FOR UPDATE OF g
)
UPDATE gc_hosts g SET lease_deadline = now() + $5::float8 * interval '1 microsecond'
FROM l WHERE g.bucket = l.bucket AND g.host = l.host
RETURNING g.host`, buckets, hosts, epochs, s.owner, float64(s.leaseTTL.Microseconds()))
	if err != nil {
		return nil, err
	}
	renewed, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	for _, h := range hosts {
		if !slices.Contains(renewed, h) {
			lost = append(lost, h)
		}
	}
	return lost, nil
}

// hold and drop keep the set of leases the store renews.
func (s *Store) hold(host string, epoch uint64) {
	s.mu.Lock()
	s.mu.held[host] = epoch
	s.mu.Unlock()
}

func (s *Store) drop(host string, epoch uint64) {
	s.mu.Lock()
	if s.mu.held[host] == epoch {
		delete(s.mu.held, host)
	}
	s.mu.Unlock()
}

// Buckets is the number of buckets hosts and URLs are spread over: the
// bucket column of every table (see Bucket). It is part of the schema:
// changing it is a migration.
const Buckets = 256

// Bucket returns the bucket of a host (or of any key given as a string,
// such as a robots.txt origin): FNV-1a, 32 bits, modulo Buckets.
func Bucket(host string) int {
	return int(bucketOf(host))
}

func bucketOf(s string) int32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return int32(h % Buckets)
}

// keyBucket is the bucket of a URL's seen-set key: its first byte, the
// best mixed of FNV's.
func keyBucket(k [16]byte) int32 { return int32(k[0]) % Buckets }

// dbTime is a time as stored: times before 1970, which the embedded store
// also reads as "at once", become the zero time.
func dbTime(t time.Time) time.Time {
	if t.Unix() < 0 {
		return time.Time{}
	}
	return t
}

// nullTime is a time as stored in a column where NULL means none.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() || t.Unix() < 0 {
		return nil
	}
	return &t
}

// isFence reports whether err is gc_fence's: the lease is lost.
func isFence(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == fenceCode
}
