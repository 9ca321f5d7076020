package frontier

import (
	"context"
	"errors"
	"time"
)

// Frontier is the crawl's durable memory of what to fetch and what was
// fetched. Every backend implements it — the embedded one ([Store], Pebble
// in the job directory) and, for crawls shared by many workers, a database —
// and every backend passes the same conformance suite (package frontiertest).
//
// The life of a URL: [Frontier.Add] checks it against the seen-set and queues
// it on its host; [Frontier.Claim] leases a host whose next allowed time has
// come, with its due URLs; [Frontier.Release] gives the lease back with the
// outcome of each URL and the host's next allowed time. Every URL ever added
// is exactly one of pending, leased or done. A lease that is not released
// (its holder died) expires, and its URLs are claimed again.
//
// Implementations are safe for concurrent use.
//
// Add and Release are atomic, and durable shortly after they return: they
// return once the change is applied and its sync under way, without
// waiting for the disk. A crash before the sync loses the change, as if the
// crash had come a moment earlier (a lost release's URLs are leased again;
// a crawl offers its seeds again when it resumes). Close waits for every
// sync; a sync that fails fails the frontier, and its next call says so.
type Frontier interface {
	// Add offers URLs. Each new one (not in the seen-set, not a repeat in
	// the batch) is marked seen and, unless Admit refuses it or a budget is
	// spent, queued on its host.
	Add(ctx context.Context, b Batch) (Added, error)
	// Claim leases a host that is due at req.Now: req.Host, or when that
	// is empty the host that has been due longest. With no such host it
	// returns a nil lease and the time the first one will be due (zero
	// when nothing is queued, or req.Host has nothing queued).
	Claim(ctx context.Context, req ClaimRequest) (*Lease, time.Time, error)
	// Release ends a lease: each result settles or reschedules one of its
	// URLs, the links found are admitted, and the host may be claimed
	// again from req.Next. URLs of the lease without a result stay queued
	// as they were. It fails with ErrLeaseLost when the lease expired and
	// another claim took the host.
	Release(ctx context.Context, req ReleaseRequest) (Added, error)

	// Seen reports whether a canonical URL is in the seen-set.
	Seen(ctx context.Context, canonical string) (bool, error)
	// MarkSeen adds a canonical URL to the seen-set without queueing it.
	MarkSeen(ctx context.Context, canonical string) error
	// Hosts describes every host with something queued.
	Hosts(ctx context.Context) ([]HostInfo, error)

	// History returns what is known of a URL from its last visit, or nil.
	History(ctx context.Context, canonical string) (*History, error)
	// EachHistory calls fn for every URL with a history.
	EachHistory(ctx context.Context, fn func(*History) error) error
	// Robots returns the cached robots.txt record of an origin, or nil.
	Robots(ctx context.Context, origin string) (*RobotsRecord, error)
	// PutRobots stores the robots.txt record of an origin.
	PutRobots(ctx context.Context, origin string, r *RobotsRecord) error
	// Meta returns a named value stored with the job, or "".
	Meta(ctx context.Context, name string) (string, error)
	// SetMeta stores a named value with the job.
	SetMeta(ctx context.Context, name, value string) error

	Close() error
}

// ErrLeaseLost is returned by Release for a lease that expired and was
// claimed again: its URLs belong to the new holder.
var ErrLeaseLost = errors.New("frontier: the lease expired and the host was claimed again")

// Entry is a URL waiting in a host's queue.
type Entry struct {
	URL      string // the URL as found, used for fetching
	Depth    int    // links followed from a seed
	Recrawl  bool   // queued again by --recrawl
	Attempts int    // earlier tries that the server or network failed
	Hops     int    // redirects followed to reach this URL
	Kind     string // "" for a page, "sitemap" for a sitemap
	AsIs     bool   // fetch the URL as it is, session id and all
	// Parent is a fingerprint of the page that linked the URL (0 when
	// none), which the crawler compares with the URL's own page to find
	// chains of near-identical pages: calendars, counters.
	Parent uint64
}

// Candidate is a URL offered to the frontier.
type Candidate struct {
	Host      string    // politeness key: the queue it joins
	Canonical string    // seen-set key
	Due       time.Time // not to be fetched before; zero: at once
	Entry
}

// Item is a queued URL handed out by a lease.
type Item struct {
	Host string
	Due  time.Time
	Entry
	// Ref identifies the queue entry for the backend that handed it out;
	// callers leave it alone.
	Ref []byte
}

// Batch is a set of URLs offered together, committed as one.
type Batch struct {
	Add []Candidate
	// Admit, when set, is asked about each URL of Add that is new: a URL it
	// refuses is marked seen but not queued, so it is refused once.
	Admit func(Candidate) bool
	// Requeue puts URLs with a history back in their queues (--recrawl),
	// skipping those already pending and those never visited.
	Requeue []Candidate
}

// Added says what a Batch or a Release queued.
type Added struct {
	Queued     map[string]int // URLs queued, per host
	OverBudget map[string]int // new URLs refused because a budget was spent, per host
}

// Total is the number of URLs queued.
func (a Added) Total() int {
	n := 0
	for _, k := range a.Queued {
		n += k
	}
	return n
}

// Limits are the frontier's budgets; zero means unlimited.
type Limits struct {
	HostBudget  int // URLs a host may have queued over the whole crawl
	CrawlBudget int // URLs the whole crawl may queue
}

// ClaimRequest asks for a host lease.
type ClaimRequest struct {
	Host string        // the host wanted; "" for whichever is due first
	Now  time.Time     // the claimant's clock: what is due, and the lease's start
	Max  int           // most URLs in the lease (at least one is handed out)
	TTL  time.Duration // how long the lease lasts unless released; 0: ten minutes
}

// DefaultTTL is the lease duration when ClaimRequest.TTL is zero.
const DefaultTTL = 10 * time.Minute

// Lease is the exclusive right to fetch one host's URLs until Expires.
type Lease struct {
	Host    string
	Items   []*Item // due URLs, in due order, first queued first
	Expires time.Time
	ID      uint64 // the backend's name for the lease
	// Ref is what else the backend that handed the lease out needs to
	// know it again (nil for the embedded store); callers leave it alone.
	Ref []byte
	// HostState is what the last release of the host left in
	// ReleaseRequest.HostState, from a backend shared by many workers;
	// nil otherwise.
	HostState []byte
}

// Outcome is what became of a leased URL.
type Outcome string

// Outcomes. Retry keeps the URL queued; every other one settles it.
const (
	Fetched    Outcome = "fetched"    // a response was received
	Unchanged  Outcome = "unchanged"  // 304, or the same payload as last time
	Gone       Outcome = "gone"       // 404 or 410
	Failed     Outcome = "failed"     // no response, and no tries left
	Disallowed Outcome = "disallowed" // robots.txt forbids it; not requested
	Skipped    Outcome = "skipped"    // its type is one the crawl does not want
	Invalid    Outcome = "invalid"    // the queued URL could not be parsed
	Duplicate  Outcome = "duplicate"  // the same page as a URL already known
	Retry      Outcome = "retry"      // failed for now: stays queued, one more attempt counted
)

func (o Outcome) known() bool {
	switch o {
	case Fetched, Unchanged, Gone, Failed, Disallowed, Skipped, Invalid, Duplicate, Retry:
		return true
	}
	return false
}

// Result is the outcome of one leased URL.
type Result struct {
	Item      *Item
	Outcome   Outcome
	Canonical string   // the history's key (the URL fetched, canonicalized)
	History   *History // written under Canonical when non-nil; its Outcome is set
	RetryAt   time.Time
	// Revisit, when set on a result that settles its URL, queues the URL
	// again (as a Recrawl entry, its history pending) due at this time:
	// the next visit of a continuous crawl. It is not counted in Added.
	Revisit time.Time
	Add     []Candidate // links found, admitted with the release
}

// ReleaseRequest ends a lease.
type ReleaseRequest struct {
	Lease   *Lease
	Results []Result
	Next    time.Time            // the host's next allowed time
	Admit   func(Candidate) bool // as Batch.Admit, for the results' links
	// Pause says Next is a pause the host asked for (Retry-After, a
	// backoff), which must hold after a restart. Without it, Next is the
	// crawler's own pacing, which a resumed crawl works out again (it
	// waits each host's gap first): a backend may keep it in memory only,
	// and save a write per release.
	Pause bool
	// Deferred says the host waits until Next on something other than
	// itself (its robots.txt is unavailable): a crawl with nothing else
	// to do does not wait for it. A backend shared by many workers keeps
	// it with the host, so that every worker can tell when the crawl is
	// over; the embedded store has one worker, whose scheduler knows.
	Deferred bool
	// HostState, when not nil, is kept with the host by a backend shared
	// by many workers and handed to the next lease of the host (what the
	// crawler learned of the host's rate); nil keeps what is kept. The
	// embedded store, with one worker, keeps nothing.
	HostState []byte
}

// HostInfo describes one host's queue.
type HostInfo struct {
	Host       string
	Pending    int       // URLs queued, leased ones included
	Queued     int       // URLs ever queued (what HostBudget counts; kept across restarts when a budget is set)
	OverBudget int       // new URLs refused by a budget
	Next       time.Time // next allowed time, as last released
	Due        time.Time // when its first URL is due
	Leased     bool
}

// History is what the crawl knows of a URL from its last visit.
type History struct {
	URL          string    `json:"url"`
	Status       int       `json:"status,omitempty"`
	Outcome      string    `json:"outcome"` // an Outcome
	Error        string    `json:"error,omitempty"`
	ETag         string    `json:"etag,omitempty"`
	LastModified string    `json:"last_modified,omitempty"`
	ContentType  string    `json:"content_type,omitempty"`
	Digest       string    `json:"digest,omitempty"`  // payload digest of the last full capture
	Size         int64     `json:"size,omitempty"`    // bytes on the wire of the last full capture
	Fetched      time.Time `json:"fetched,omitempty"` // time of the last request
	Captured     time.Time `json:"captured,omitempty"`
	Visits       int       `json:"visits,omitempty"`
	Changes      int       `json:"changes,omitempty"` // visits that found the content changed
	Hops         int       `json:"hops,omitempty"`    // redirects followed to reach the URL: a chain cut at the limit stays cut when the URL is queued again
	Pending      bool      `json:"pending,omitempty"` // queued again, not yet visited
	// Observed are the latest visits, oldest first, at most MaxObserved:
	// what a continuous crawl estimates the page's rate of change from.
	Observed []Observation `json:"observed,omitempty"`
	// DatesUnreliable says the page's Last-Modified contradicted its
	// content (it moved while the content stayed, or stayed while the
	// content changed): its dates are not used to estimate its changes.
	DatesUnreliable bool `json:"dates_unreliable,omitempty"`
}

// MaxObserved bounds History.Observed: the estimate follows the page's
// recent behaviour, and a history stays small.
const MaxObserved = 32

// Observation is one visit of a page, as the revisit schedule sees it.
type Observation struct {
	// Interval is the time since the previous visit; for a Before
	// observation, the time from the page's Last-Modified to the first
	// visit.
	Interval time.Duration `json:"interval"`
	// Changed says the visit found the content changed.
	Changed bool `json:"changed,omitempty"`
	// Dated says Age is known: how long before the visit the page last
	// changed, from its Last-Modified.
	Dated bool          `json:"dated,omitempty"`
	Age   time.Duration `json:"age,omitempty"`
	// NotModified says the server answered 304 to a conditional request.
	NotModified bool `json:"not_modified,omitempty"`
	// Before marks the time before the first visit during which, by its
	// Last-Modified, the page did not change: not a visit.
	Before bool `json:"before,omitempty"`
}

// Observe appends o to h.Observed, dropping the oldest beyond MaxObserved.
func (h *History) Observe(o Observation) {
	if len(h.Observed) >= MaxObserved {
		h.Observed = append(h.Observed[:0:0], h.Observed[len(h.Observed)-MaxObserved+1:]...)
	}
	h.Observed = append(h.Observed, o)
}

// RobotsRecord is what the crawl keeps of an origin's robots.txt: the last
// fetch, the rules in force until Expires, the last good copy and the
// current run of failures (see robots.Policy).
type RobotsRecord struct {
	Checked      time.Time `json:"checked"`           // the last fetch
	Expires      time.Time `json:"expires"`           // fetch again after this
	Status       int       `json:"status,omitempty"`  // of the last fetch
	Error        string    `json:"error,omitempty"`   // of the last fetch
	Source       string    `json:"source"`            // where the rules in force come from (robots.Source)
	Reason       string    `json:"reason,omitempty"`  // one line, for people
	Outcome      string    `json:"outcome,omitempty"` // of the last good copy: parsed, unrestricted, or ""
	Body         []byte    `json:"body,omitempty"`    // the last good copy, when parsed
	Fetched      time.Time `json:"fetched,omitempty"` // when the last good copy was fetched
	FailingSince time.Time `json:"failing_since,omitempty"`
	Failures     int       `json:"failures,omitempty"` // consecutive unavailable answers
	// Hop is the next URL of a redirect chain being followed, Hops the
	// redirects followed so far: each hop is a turn of its own, which in
	// a shared crawl another worker may take. Empty when no chain is in
	// progress.
	Hop  string `json:"hop,omitempty"`
	Hops int    `json:"hops,omitempty"`
}
