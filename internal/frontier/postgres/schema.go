package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// SchemaVersion is the version of the schema this build writes and reads.
// A database at another version is migrated forward when it is older
// (migrations, each in the transaction that checks the version), and
// refused when it is newer: it was written by a later gentlecrawl, whose
// data this build might misread or damage.
const SchemaVersion = 3

// ErrIncompatible is returned by Open for a database whose frontier schema
// this build cannot use: written by a newer version of gentlecrawl, or not
// gentlecrawl's.
var ErrIncompatible = errors.New("frontier/postgres: the database holds a frontier schema this version of gentlecrawl cannot use")

// migrations[v] takes the schema from version v to v+1; migrations[0]
// creates it. Each runs in the transaction that checked the version, under
// the advisory lock, so that processes opening the frontier at once apply
// it once. Released versions are never edited: a change is a new entry.
var migrations = []string{
	0: schemaV1,
	1: schemaV2,
	2: schemaV3,
}

// schemaV3 has ANALYZE sample the tables that grow by the URL with 3,000
// rows instead of 30,000. ANALYZE holds a snapshot while it samples, and
// while any snapshot is held no vacuum can remove the index entries the
// claims leave at the front of gc_hosts_ready, which every claim then
// steps over; sampling 30,000 pages of a queue of millions of URLs takes
// seconds, a sag of the whole crawl's leases at every autoanalyze. The
// statements on these tables are index lookups by key, planned once
// (plan_cache_mode), which the columns' histograms do not change; a
// smaller sample still gives the row counts. A column added to these
// tables later must be given the same target.
const schemaV3 = `
ALTER TABLE gc_queue ALTER COLUMN bucket SET STATISTICS 10, ALTER COLUMN host SET STATISTICS 10,
	ALTER COLUMN due SET STATISTICS 10, ALTER COLUMN seq SET STATISTICS 10, ALTER COLUMN url SET STATISTICS 10,
	ALTER COLUMN depth SET STATISTICS 10, ALTER COLUMN attempts SET STATISTICS 10, ALTER COLUMN hops SET STATISTICS 10,
	ALTER COLUMN kind SET STATISTICS 10, ALTER COLUMN recrawl SET STATISTICS 10, ALTER COLUMN as_is SET STATISTICS 10,
	ALTER COLUMN parent SET STATISTICS 10;
ALTER TABLE gc_seen ALTER COLUMN bucket SET STATISTICS 10, ALTER COLUMN key SET STATISTICS 10;
ALTER TABLE gc_history ALTER COLUMN bucket SET STATISTICS 10, ALTER COLUMN key SET STATISTICS 10,
	ALTER COLUMN record SET STATISTICS 10;
`

// schemaV2 keeps whether a host waits on something other than itself
// (frontier.ReleaseRequest.Deferred), so that every worker can tell when
// nothing is left but such hosts (Store.Outstanding), and what the last
// worker learned of the host (ReleaseRequest.HostState), for the next.
const schemaV2 = `
ALTER TABLE gc_hosts ADD COLUMN deferred boolean NOT NULL DEFAULT false;
ALTER TABLE gc_hosts ADD COLUMN host_state bytea;
-- The per-address budget counts the leased hosts of an address.
CREATE INDEX gc_hosts_addr_leased ON gc_hosts (addr) WHERE lease_owner IS NOT NULL;
`

// Every table that grows with the crawl has a bucket column, a hash of the
// host (or of the URL, for the tables keyed by URL) modulo Buckets, first
// in its primary key: the column Citus distributes the tables by, and
// which every frequent statement filters on (docs/postgres-frontier.md).
//
// Times in the claimant's clock (due, next_allowed, lease_expires) are
// what the callers pass (frontier.ClaimRequest.Now); lease_deadline is on
// the database's clock.
const schemaV1 = `
CREATE TABLE gc_schema (
	only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
	version integer NOT NULL
);

-- Named values stored with the job (Frontier.Meta). Small: a reference
-- table under Citus.
CREATE TABLE gc_meta (
	name text PRIMARY KEY,
	value text NOT NULL
);

-- One row per host ever queued: its queue's count and head, its
-- politeness state and its lease.
CREATE TABLE gc_hosts (
	bucket integer NOT NULL,
	host text NOT NULL,
	pending integer NOT NULL DEFAULT 0,      -- entries in its queue, leased ones included
	queued bigint NOT NULL DEFAULT 0,        -- URLs ever queued (HostBudget)
	over_budget bigint NOT NULL DEFAULT 0,   -- new URLs refused by a budget
	-- The due time of its queue's first entry is least(due, added_due):
	-- due is the head as the last claim or release left it, added_due the
	-- earliest entry added since. Adding never writes due, so that a
	-- release, which sets due from the queue, cannot miss an entry whose
	-- adder committed while it waited for the row: added_due holds it.
	due timestamptz,
	added_due timestamptz,
	next_allowed timestamptz,                -- not to be fetched before
	pause_until timestamptz,                 -- next_allowed, when the host asked for the wait
	lease_owner uuid,                        -- the Store holding the lease; NULL: not leased
	lease_epoch bigint NOT NULL DEFAULT 0,   -- fencing token: +1 at every claim and release
	lease_expires timestamptz,               -- the lease's end on the claimant's clock
	lease_deadline timestamptz,              -- its end on the database's clock, pushed back while held
	addr text,                               -- the address it was last fetched from
	-- When the host can next be claimed (NULL: nothing queued).
	-- greatest() ignores NULLs.
	ready_at timestamptz GENERATED ALWAYS AS (
		CASE WHEN pending > 0 THEN greatest(least(due, added_due), next_allowed, lease_expires) END) STORED,
	PRIMARY KEY (bucket, host)
) WITH (fillfactor = 70);  -- room for HOT updates: an admission that leaves ready_at as it was
CREATE INDEX gc_hosts_ready ON gc_hosts (ready_at) WHERE ready_at IS NOT NULL;
CREATE INDEX gc_hosts_deadline ON gc_hosts (lease_deadline) WHERE lease_owner IS NOT NULL;

-- The per-host queues, in due order, first queued first.
CREATE SEQUENCE gc_queue_seq;
CREATE TABLE gc_queue (
	bucket integer NOT NULL,
	host text NOT NULL,
	due timestamptz NOT NULL,
	seq bigint NOT NULL DEFAULT nextval('gc_queue_seq'),
	url text NOT NULL,
	depth integer NOT NULL DEFAULT 0,
	attempts integer NOT NULL DEFAULT 0,
	hops integer NOT NULL DEFAULT 0,
	kind text NOT NULL DEFAULT '',
	recrawl boolean NOT NULL DEFAULT false,
	as_is boolean NOT NULL DEFAULT false,
	parent bigint NOT NULL DEFAULT 0,
	PRIMARY KEY (bucket, host, due, seq)
);

-- The seen-set: the 128-bit FNV-1a hash of each canonical URL
-- (frontier.Hash), bucketed by the hash.
CREATE TABLE gc_seen (
	bucket integer NOT NULL,
	key uuid NOT NULL,
	PRIMARY KEY (bucket, key)
);

-- Fetch history (frontier.History as JSON), keyed like the seen-set.
CREATE TABLE gc_history (
	bucket integer NOT NULL,
	key uuid NOT NULL,
	record jsonb NOT NULL,
	PRIMARY KEY (bucket, key)
);

-- The robots.txt cache (frontier.RobotsRecord as JSON), per origin.
CREATE TABLE gc_robots (
	bucket integer NOT NULL,
	origin text NOT NULL,
	record jsonb NOT NULL,
	PRIMARY KEY (bucket, origin)
);

-- gc_fence fails the statement, and with it the transaction, when a
-- release finds its lease gone: the release then changes nothing.
CREATE FUNCTION gc_fence(held boolean) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	IF NOT held THEN
		RAISE EXCEPTION 'gentlecrawl: the lease expired and the host was claimed again'
			USING ERRCODE = 'GC001';
	END IF;
	RETURN true;
END $$;

INSERT INTO gc_schema (version) VALUES (1);
`

// fenceCode is the SQLSTATE gc_fence raises.
const fenceCode = "GC001"

// stageTable is each connection's temporary table for the candidates of
// a large change: filled with COPY, then admitted into the seen-set and
// the queues with INSERT … SELECT. Its rows go at commit.
const stageTable = `
CREATE TEMPORARY TABLE IF NOT EXISTS gc_stage (
	i integer NOT NULL,
	requeue boolean NOT NULL,
	kb integer NOT NULL,
	key uuid NOT NULL,
	hb integer NOT NULL,
	host text NOT NULL,
	due timestamptz NOT NULL,
	url text NOT NULL,
	depth integer NOT NULL,
	attempts integer NOT NULL,
	hops integer NOT NULL,
	kind text NOT NULL,
	recrawl boolean NOT NULL,
	as_is boolean NOT NULL,
	parent bigint NOT NULL
) ON COMMIT DELETE ROWS`

// schemaLock is the key of the transaction-scoped advisory lock that
// serializes schema checks and migrations.
const schemaLock = 0x67632d736368656d // "gc-schem"

// migrate checks the schema's version, creating or migrating it as needed,
// in one transaction under the advisory lock.
func migrate(ctx context.Context, conn *pgx.Conn) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("frontier/postgres: schema: %w", err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(schemaLock)); err != nil {
		return fmt.Errorf("frontier/postgres: schema lock: %w", err)
	}
	version := 0
	var exists bool
	if err := tx.QueryRow(ctx, "SELECT to_regclass('gc_schema') IS NOT NULL").Scan(&exists); err != nil {
		return fmt.Errorf("frontier/postgres: schema: %w", err)
	}
	if exists {
		if err := tx.QueryRow(ctx, "SELECT version FROM gc_schema").Scan(&version); err != nil {
			return fmt.Errorf("%w (its version cannot be read: %v)", ErrIncompatible, err)
		}
		if version < 1 || version > SchemaVersion {
			return fmt.Errorf("%w (schema version %d; this build reads up to %d)", ErrIncompatible, version, SchemaVersion)
		}
	} else {
		// Tables of a frontier without its version row are not ours, or
		// a migration that went wrong: refused, never written over.
		var other bool
		if err := tx.QueryRow(ctx, "SELECT to_regclass('gc_hosts') IS NOT NULL OR to_regclass('gc_queue') IS NOT NULL").Scan(&other); err != nil {
			return fmt.Errorf("frontier/postgres: schema: %w", err)
		}
		if other {
			return fmt.Errorf("%w (frontier tables without a gc_schema version)", ErrIncompatible)
		}
	}
	if version == SchemaVersion {
		return nil // nothing to write: the transaction only read
	}
	for v := version; v < SchemaVersion; v++ {
		if _, err := tx.Exec(ctx, migrations[v]); err != nil {
			return fmt.Errorf("frontier/postgres: schema migration %d→%d: %w", v, v+1, err)
		}
	}
	if _, err := tx.Exec(ctx, "UPDATE gc_schema SET version = $1", SchemaVersion); err != nil {
		return fmt.Errorf("frontier/postgres: schema: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("frontier/postgres: schema: %w", err)
	}
	return nil
}
