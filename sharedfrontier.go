package gentlecrawl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier/postgres"
	"github.com/gentlecrawl/gentlecrawl/internal/hostload"
)

// SharedFrontier is a crawl's frontier in a PostgreSQL database, shared by
// every crawler that runs on the same database (Config.Frontier): in one
// process or in many, on one machine or on several, each is one more worker
// of one crawl. The database holds which hosts each worker is fetching
// (leases it renews while it lives), their next allowed times and pauses,
// the robots.txt records, and the URLs with their histories; a worker that
// dies gives its hosts to the others when its leases run out
// (SharedFrontierOptions.LeaseTTL). A lost connection is made again, and a
// restart of the database server is survived.
//
// Open it with OpenSharedFrontier and close it with Close once no crawl
// runs on it: whoever opened it closes it, never the crawler. It serves one
// Run at a time; crawlers that run at once in one process each open their
// own.
type SharedFrontier struct {
	pg         *postgres.Store
	maxPerAddr int
	inUse      atomic.Bool // a Run holds it
}

// SharedFrontierOptions tunes a SharedFrontier. The zero value of each field
// is its default. Every worker of a crawl should be given the same.
type SharedFrontierOptions struct {
	// LeaseTTL is how long the hosts a worker was fetching stay its own
	// after it dies (its process killed, its machine gone): then another
	// takes them over. At least 1s. Default 30s.
	LeaseTTL time.Duration
	// MaxPerAddr is how many requests the whole crawl, every worker
	// together, may have in flight at once to one IP address over all its
	// hosts (shared hosting); Config.MaxPerAddr of a crawl on this
	// frontier must be 0 or the same. Default 2.
	MaxPerAddr int
	// Logger receives what the frontier cannot return to a call: a lease
	// renewal that failed, a restart of the database server. Nil means
	// silent.
	Logger *slog.Logger
}

// OpenSharedFrontier connects to the PostgreSQL database of dsn, a URL
// (postgres://user:password@host:5432/db?sslmode=disable) or key=value
// pairs as libpq takes them, creates the frontier's tables on first use (or
// brings those of an earlier version up to date), and returns the frontier.
// A database written by a newer version of gentlecrawl is refused.
//
// The caller closes the frontier when it is done with it.
func OpenSharedFrontier(ctx context.Context, dsn string, opts SharedFrontierOptions) (*SharedFrontier, error) {
	if opts.LeaseTTL == 0 {
		opts.LeaseTTL = postgres.DefaultLeaseTTL
	}
	if opts.LeaseTTL < time.Second {
		return nil, fmt.Errorf("gentlecrawl: shared frontier: LeaseTTL %v: at least 1s", opts.LeaseTTL)
	}
	if opts.MaxPerAddr < 0 {
		return nil, fmt.Errorf("gentlecrawl: shared frontier: MaxPerAddr %d: must not be negative", opts.MaxPerAddr)
	}
	if opts.MaxPerAddr == 0 {
		opts.MaxPerAddr = hostload.DefaultMaxPerAddr
	}
	pg, err := postgres.Open(ctx, dsn, postgres.Options{Logger: opts.Logger, LeaseTTL: opts.LeaseTTL, MaxPerAddr: opts.MaxPerAddr})
	if err != nil {
		return nil, fmt.Errorf("shared frontier %s: %w", redactDSN(dsn), err)
	}
	return &SharedFrontier{pg: pg, maxPerAddr: opts.MaxPerAddr}, nil
}

// Close gives back the hosts the frontier still holds, if any (their URLs
// are at once another worker's to take), and closes its connections.
// Closing it again does nothing. A crawl must not be running on it.
func (f *SharedFrontier) Close() error {
	return f.pg.Close()
}

// errFrontierInUse is Run's error when another Run holds the frontier.
var errFrontierInUse = errors.New("gentlecrawl: the shared frontier is in use by another crawler's Run: open one SharedFrontier for each crawler that runs at the same time")

// acquire takes the frontier for one Run.
func (f *SharedFrontier) acquire() error {
	if !f.inUse.CompareAndSwap(false, true) {
		return errFrontierInUse
	}
	return nil
}

// release ends a Run's use of the frontier: the leases its workers did not
// give back are given back, as closing the store would, and the frontier
// stays open for the next Run.
func (f *SharedFrontier) release() error {
	defer f.inUse.Store(false)
	return f.pg.GiveBack()
}

// redactDSN hides the password of a DSN for messages.
func redactDSN(dsn string) string {
	if !strings.Contains(dsn, "://") {
		return keyPassword.ReplaceAllString(dsn, "${1}xxxxx")
	}
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return dsn
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// keyPassword is the password of a key=value DSN, quoted or not.
var keyPassword = regexp.MustCompile(`(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)
