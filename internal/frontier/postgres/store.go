package postgres

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
	// SyncCommit makes every change wait until its commit is on disk
	// (synchronous_commit as the server sets it). By default the store's
	// sessions run with synchronous_commit=off: Add and Release return
	// once the change is committed and its WAL flush under way — what
	// frontier.Frontier promises, and what the embedded store does — so
	// that a crash of the database server loses at most the last moment's
	// changes (the crawl fetches those URLs once more), never its
	// consistency. A synchronous_commit given in the DSN wins.
	SyncCommit bool
	// RetryFor is how long a call keeps trying while the database server
	// is out of reach (restarting, failing over): each call that fails
	// because its connection was lost or refused is made again on a new
	// one, until it gets through or the server has been out of reach this
	// long; then it returns the error. Default DefaultRetryFor (2 min).
	RetryFor time.Duration
	// MaxPerAddr, when positive, is how many hosts sharing an IP address
	// (as SetAddr recorded it) may be leased at once, by all the workers
	// together: the crawl's requests in flight to one address. Every
	// worker of a crawl should be given the same. 0: no budget.
	MaxPerAddr int
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
	retryFor time.Duration
	id       [8]byte // the first half of the tokens of this Store's claims
	logger   *slog.Logger
	// maxPerAddr is Options.MaxPerAddr, and sql the claims with or
	// without its condition.
	maxPerAddr int32
	sql        struct{ claimAny, claimHost string }

	stop chan struct{} // closed by Close: background work ends
	// bg is the renewer, and a vacuum while one runs.
	bg        sync.WaitGroup
	once      sync.Once
	claims    atomic.Int64 // leases taken, for vacuumEvery
	vacuuming atomic.Bool
	restarts  atomic.Uint64 // see Restarts
	mu        struct {
		sync.Mutex
		held map[string]heldLease // host → the lease this Store holds
		// claiming are the tokens of the claims under way, whose leases
		// are not held yet.
		claiming map[[16]byte]bool
		// renewOff, set by tests, stops renewals, as if the process had
		// stopped.
		renewOff bool
		// serverStart is when the database server the store's connections
		// go to was started, as the first of them found it.
		serverStart time.Time
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
	params := cfg.ConnConfig.RuntimeParams
	if _, set := params["synchronous_commit"]; !set && !opts.SyncCommit {
		params["synchronous_commit"] = "off"
	}
	if _, set := params["plan_cache_mode"]; !set {
		// Every statement is written so that one plan serves all its
		// arguments (index lookups, LIMITs that keep joins nested); left
		// to choose, PostgreSQL plans some of them again at every
		// execution, a cost paid on every lease for nothing.
		params["plan_cache_mode"] = "force_generic_plan"
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
	if s.retryFor = opts.RetryFor; s.retryFor <= 0 {
		s.retryFor = DefaultRetryFor
	}
	if opts.MaxPerAddr > 0 {
		s.maxPerAddr = int32(min(opts.MaxPerAddr, 1<<30))
	}
	s.sql.claimAny, s.sql.claimHost = claimAnySQL(s.maxPerAddr > 0), claimHostSQL(s.maxPerAddr > 0)
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.mu.held = make(map[string]heldLease)
	s.mu.claiming = make(map[[16]byte]bool)
	rand.Read(s.id[:]) // crypto/rand.Read never returns an error (Go 1.24+).
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		if _, err := c.Exec(ctx, stageTable); err != nil {
			return err
		}
		var started time.Time
		if err := c.QueryRow(ctx, "SELECT pg_postmaster_start_time()").Scan(&started); err != nil {
			return err
		}
		if s.noteServerStart(started) {
			s.giveBackLost(ctx, c)
		}
		return nil
	}
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
	s.bg.Add(1)
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
		s.bg.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = s.giveBack(ctx)
		s.pool.Close()
	})
	return err
}

// GiveBack ends every lease the store holds, as Close does, and leaves the
// store open: for a caller that keeps one Store for several crawls, when
// one of them stops.
func (s *Store) GiveBack() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.giveBack(ctx)
}

// giveBack ends every lease the store holds, without settling anything.
func (s *Store) giveBack(ctx context.Context) error {
	s.mu.Lock()
	held := s.mu.held
	s.mu.held = make(map[string]heldLease)
	s.mu.Unlock()
	_, err := s.eachLease(ctx, held, `
UPDATE gc_hosts SET lease_owner = NULL, lease_expires = NULL, lease_deadline = NULL, lease_epoch = lease_epoch + 1
WHERE bucket = $1 AND host = $2 AND lease_epoch = $3 AND lease_owner = $4`)
	if err != nil {
		return fmt.Errorf("frontier/postgres: give back leases: %w", err)
	}
	return nil
}

// eachLease runs sql, which updates one host's row ($1 bucket, $2 host,
// $3 epoch, $4 token, $5 the LeaseTTL in µs if it uses it), for every
// lease of held, in key order — the order every statement that locks
// several hosts takes them in, so that none waits for another in a cycle
// — in one round trip and one transaction. It returns the hosts whose row
// it did not find: their lease is gone.
func (s *Store) eachLease(ctx context.Context, held map[string]heldLease, sql string, extra ...any) (lost []string, err error) {
	if len(held) == 0 {
		return nil, nil
	}
	hosts := make([]string, 0, len(held))
	for h := range held {
		hosts = append(hosts, h)
	}
	slices.SortFunc(hosts, func(a, b string) int {
		return cmp.Or(cmp.Compare(bucketOf(a), bucketOf(b)), strings.Compare(a, b))
	})
	err = s.retry(ctx, "leases", func() error {
		lost = lost[:0]
		b := &pgx.Batch{}
		for _, h := range hosts {
			b.Queue(sql, append([]any{bucketOf(h), h, int64(held[h].epoch), held[h].token}, extra...)...).Exec(func(ct pgconn.CommandTag) error {
				if ct.RowsAffected() == 0 {
					lost = append(lost, h)
				}
				return nil
			})
		}
		return s.pool.SendBatch(ctx, b).Close()
	})
	return lost, err
}

// renew pushes back the database-clock deadline of the leases the store
// holds, every LeaseTTL/3, until Close.
func (s *Store) renew() {
	defer s.bg.Done()
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
		held := maps.Clone(s.mu.held)
		s.mu.Unlock()
		if off || len(held) == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.leaseTTL/3)
		lost, err := s.eachLease(ctx, held, `
UPDATE gc_hosts SET lease_deadline = now() + $5::float8 * interval '1 microsecond'
WHERE bucket = $1 AND host = $2 AND lease_epoch = $3 AND lease_owner = $4`, float64(s.leaseTTL.Microseconds()))
		cancel()
		if err != nil {
			s.logger.Warn("frontier/postgres: lease renewal failed", "err", err, "leases", len(held))
			continue
		}
		for _, h := range lost {
			s.drop(h, held[h])
		}
	}
}

// vacuumEvery is how many claims a store makes between its vacuums of
// gc_hosts.
//
// Every claim and release moves a host in the ready_at index, leaving
// behind an entry for the version it replaced. Claims take the hosts due
// longest, so those entries pile up at the very front of the index, where
// every claim's scan starts: between two vacuums, each claim steps over
// all the entries the claims since the last one left, and autovacuum,
// which naps a minute between runs, lets a busy crawl leave a great many.
// So a store vacuums the table itself, every vacuumEvery claims, skipping
// it when another process is at it: the workers together vacuum about every
// vacuumEvery claims of the crawl, whatever their number. The table has a
// row per host, not per URL, so a vacuum is quick.
const vacuumEvery = 5000

// noteClaim counts a claim and starts a vacuum when one is due.
func (s *Store) noteClaim() {
	if s.claims.Add(1)%vacuumEvery != 0 || !s.vacuuming.CompareAndSwap(false, true) {
		return
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		defer s.vacuuming.Store(false)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-s.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		// INDEX_CLEANUP ON: the entries at the front of the index are
		// the point, even when too few rows are dead for vacuum to bother
		// with the indexes by itself.
		if _, err := s.pool.Exec(ctx, "VACUUM (INDEX_CLEANUP ON, SKIP_LOCKED) gc_hosts"); err != nil && ctx.Err() == nil {
			s.logger.Warn("frontier/postgres: vacuum gc_hosts failed", "err", err)
		}
	}()
}

// Restarts returns how many times the store has found the database server
// started again since Open: a new connection (the pool makes them as
// needed, and after a restart every one is new) finds the server's start
// time changed. Every change the store acknowledged before a restart is
// there after it when the server shut down cleanly, but after a crash of
// the server the changes of its last moment may be gone
// (synchronous_commit=off, see Options.SyncCommit) — as if the crash had
// come a moment earlier: the URLs whose releases are lost are queued
// again. A caller that keeps what the store acknowledged — the links it
// knows queued, the seeds it added — must forget it, or offer it again,
// when Restarts changes; it changes before the first call on the restarted
// server returns.
func (s *Store) Restarts() uint64 { return s.restarts.Load() }

// noteServerStart notes the start time of the server a new connection
// reached, and counts a restart when it changed, which it reports.
func (s *Store) noteServerStart(t time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.mu.serverStart.IsZero():
		s.mu.serverStart = t
	case !t.Equal(s.mu.serverStart):
		s.mu.serverStart = t
		s.restarts.Add(1)
		s.logger.Warn("frontier/postgres: the database server was restarted", "started", t)
		return true
	}
	return false
}

// giveBackLost gives back, on connection c to a server just restarted,
// the leases this store took before the restart and no longer holds: those
// whose release the crash of the server lost. Left alone, they would keep
// their hosts from every worker until their deadline. A lease taken on the
// restarted server (its deadline is past the restart's) is left alone,
// whoever holds it, and so is every lease this store holds or is taking.
// Failures are logged only: the leases then end at their deadline.
func (s *Store) giveBackLost(ctx context.Context, c *pgx.Conn) {
	var lo, hi [16]byte
	copy(lo[:], s.id[:])
	copy(hi[:], s.id[:])
	for i := len(s.id); i < len(hi); i++ {
		hi[i] = 0xff
	}
	rows, err := c.Query(ctx, `
SELECT bucket, host, lease_epoch, lease_owner FROM gc_hosts
WHERE lease_owner BETWEEN $1 AND $2
	AND lease_deadline < pg_postmaster_start_time() + $3::float8 * interval '1 microsecond'`,
		lo, hi, float64(s.leaseTTL.Microseconds()))
	if err != nil {
		s.logger.Warn("frontier/postgres: cannot look for leases a restart lost", "err", err)
		return
	}
	type lostLease struct {
		bucket int32
		host   string
		l      heldLease
	}
	var lost []lostLease
	var (
		bucket int32
		host   string
		epoch  int64
		token  [16]byte
	)
	_, err = pgx.ForEachRow(rows, []any{&bucket, &host, &epoch, &token}, func() error {
		lost = append(lost, lostLease{bucket, host, heldLease{uint64(epoch), token}})
		return nil
	})
	if err != nil {
		s.logger.Warn("frontier/postgres: cannot look for leases a restart lost", "err", err)
		return
	}
	s.mu.Lock()
	lost = slices.DeleteFunc(lost, func(x lostLease) bool {
		if s.mu.claiming[x.l.token] {
			return true
		}
		for _, h := range s.mu.held {
			if h.token == x.l.token {
				return true
			}
		}
		return false
	})
	s.mu.Unlock()
	if len(lost) == 0 {
		return
	}
	// In key order, each fenced by its epoch and token, as eachLease.
	slices.SortFunc(lost, func(a, b lostLease) int {
		return cmp.Or(cmp.Compare(a.bucket, b.bucket), strings.Compare(a.host, b.host))
	})
	b := &pgx.Batch{}
	for _, x := range lost {
		b.Queue(`UPDATE gc_hosts SET lease_owner = NULL, lease_expires = NULL, lease_deadline = NULL, lease_epoch = lease_epoch + 1
WHERE bucket = $1 AND host = $2 AND lease_epoch = $3 AND lease_owner = $4`, x.bucket, x.host, int64(x.l.epoch), x.l.token)
	}
	if err := c.SendBatch(ctx, b).Close(); err != nil {
		s.logger.Warn("frontier/postgres: cannot give back the leases a restart lost", "err", err, "leases", len(lost))
		return
	}
	s.logger.Info("frontier/postgres: leases whose release the restart lost given back", "leases", len(lost))
}

// heldLease is a lease the store holds: its epoch, and the token of the
// claim that took it (lease_owner), which the fence checks with the epoch.
//
// The epoch alone does not name a lease once the database server has
// crashed and come back without the commits of its last moment
// (synchronous_commit=off): a claim lost so is made again with the same
// epoch, and the holder of the lost one must not release (or renew, or
// give back) the new one. Each claim's random token tells them apart.
type heldLease struct {
	epoch uint64
	token [16]byte
}

// leaseOf returns what names l in the database, or false for a lease this
// backend did not hand out.
func leaseOf(l *frontier.Lease) (heldLease, bool) {
	h := heldLease{epoch: l.ID}
	if len(l.Ref) != len(h.token) {
		return h, false
	}
	copy(h.token[:], l.Ref)
	return h, true
}

// newToken returns a claim's token: the store's id, then random bytes.
func (s *Store) newToken() [16]byte {
	var t [16]byte
	copy(t[:], s.id[:])
	rand.Read(t[len(s.id):]) // crypto/rand.Read never returns an error (Go 1.24+).
	return t
}

// hold and drop keep the set of leases the store renews.
func (s *Store) hold(host string, l heldLease) {
	s.mu.Lock()
	s.mu.held[host] = l
	s.mu.Unlock()
}

func (s *Store) drop(host string, l heldLease) {
	s.mu.Lock()
	if s.mu.held[host] == l {
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
