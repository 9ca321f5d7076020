package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// When the database server restarts (an upgrade, a failover, a crash),
// every connection the pool holds is closed under it, and for a while new
// ones are refused. The store rides that out: each call that fails because
// the server is out of reach is made again, on a new connection, until it
// gets through or the server has been out of reach for Options.RetryFor.
// Nothing it wrote is lost, and nothing is written twice:
//
//   - A change (Add, Release) is one transaction, made again whole. If the
//     server went before its commit, the commit did not happen. If it went
//     after (the answer lost), the change made again finds its URLs seen
//     and queues nothing twice; a release finds its lease ended by itself
//     and fails with frontier.ErrLeaseLost, which a shared crawl takes in
//     its stride: what it settled is settled.
//   - A claim made again claims a host as any claim does. A first attempt
//     that read its lease before the connection went is given back (if its
//     commit went through); one whose commit went through unseen leaves a
//     lease nobody renews, which ends at its deadline (LeaseTTL).
//   - Records (robots.txt, meta values, addresses, the seen-set) are
//     written by upserts, the same whether written once or twice; reads
//     are read again.
//
// Renewals fail meanwhile, and are made again at their next turn: a lease
// ends only when its holder has been out of reach for LeaseTTL.
//
// A crash of the server may lose the commits of its last moment
// (synchronous_commit=off): Restarts counts the restarts, for callers that
// keep what the store acknowledged; leases are fenced by their claim's
// token as well as their epoch, which a claim lost and made again repeats
// (heldLease); and the leases whose releases were lost are given back
// (giveBackLost).

// DefaultRetryFor is Options.RetryFor when it is zero.
const DefaultRetryFor = 2 * time.Minute

// Waits between attempts: doubled from the first, up to the last.
const (
	retryFirstWait = 20 * time.Millisecond
	retryMaxWait   = time.Second
)

// retry runs op, and runs it again for as long as it fails because the
// database is out of reach (unavailable), at most RetryFor after the first
// such failure, and while ctx is live. what names the call in the log.
func (s *Store) retry(ctx context.Context, what string, op func() error) error {
	var since time.Time
	wait := retryFirstWait
	for {
		err := op()
		if err == nil || !unavailable(err) || ctx.Err() != nil {
			if err == nil && !since.IsZero() {
				s.logger.Info("frontier/postgres: the database is back", "call", what, "after", time.Since(since).Round(time.Millisecond))
			}
			return err
		}
		if since.IsZero() {
			since = time.Now()
			s.logger.Warn("frontier/postgres: the database is out of reach; trying again", "call", what, "err", err)
		} else if time.Since(since) >= s.retryFor {
			return fmt.Errorf("%w (out of reach for %v)", err, time.Since(since).Round(time.Second))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, retryMaxWait)
	}
}

// unavailable reports whether err says the database server is out of
// reach — the connection refused, lost or closed by the server, the
// server shutting down or starting up — rather than that the call itself
// failed.
func unavailable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "57P01", // admin_shutdown: a fast or smart shutdown
			"57P02", // crash_shutdown: another backend crashed, or an immediate shutdown
			"57P03": // cannot_connect_now: starting up, shutting down, in recovery
			return true
		}
		// Class 08, connection exception.
		return strings.HasPrefix(pe.Code, "08")
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || pgconn.SafeToRetry(err) {
		return true
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	// pgx's words for a connection it closed after a failure.
	return strings.Contains(err.Error(), "conn closed")
}
