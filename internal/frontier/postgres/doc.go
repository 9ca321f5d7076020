// Package postgres is the frontier of a crawl shared by many workers: a
// [frontier.Frontier] in a PostgreSQL database, which every process given
// the same DSN uses as one more worker. Workers are stateless; nothing is
// routed between them.
//
// The queues, the seen-set (the 128-bit hash of each canonical URL, a
// primary key), each host's politeness state and lease, the fetch history
// and the robots.txt cache are tables (docs/postgres-frontier.md has the
// schema). A worker claims a host with one statement: the row of the host
// due longest, locked with FOR UPDATE SKIP LOCKED so that claimants pass
// each other by, gets a new epoch, a random token of the claim and its
// expiry. The epoch and the token fence the lease: a release whose epoch
// and token are no longer the host's fails with [frontier.ErrLeaseLost]
// and changes nothing. A lease ends at the earlier of two times: its TTL
// on the claimant's clock (what [frontier.ClaimRequest.Now] and TTL say,
// as for every backend), and its deadline on the database's clock, which
// the holder pushes back while it lives (Options.LeaseTTL): the hosts of
// a worker that died come back within LeaseTTL, whatever the other
// workers' clocks say.
//
// URLs are admitted in batches: COPY into a temporary table (a few go as
// arrays in the statement itself), then INSERT … ON CONFLICT DO NOTHING
// into the seen-set, which returns the new ones. Every table that grows
// has a bucket column (a hash of the host, or of the URL, modulo
// [Buckets]) which every frequent statement filters on, so that the same
// schema distributes on Citus.
//
// Add and Release return once committed, the WAL flush under way
// (synchronous_commit=off for the store's sessions, unless
// Options.SyncCommit), as frontier.Frontier promises.
//
// A restart of the server costs the callers time only: every call that
// finds it out of reach is made again on a new connection until it gets
// through (Options.RetryFor), and [Store.Restarts] tells the callers that
// keep what the store acknowledged that a crash may have lost its last
// moment (retry.go).
//
// The schema is created on first use, in a transaction under an advisory
// lock; it carries a version, and a database written by a newer version is
// refused ([ErrIncompatible]), never rewritten.
package postgres
