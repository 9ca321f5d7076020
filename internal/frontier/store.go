package frontier

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// FormatVersion is the layout of the keys and values in the store. A job
// directory written with another version is refused, never rewritten.
const FormatVersion = "2"

// Key prefixes. Every key starts with one byte naming its space.
const (
	prefixMeta    = 'm' // m NAME → value
	prefixSeen    = 's' // s HASH16 → "" (the seen-set)
	prefixQueue   = 'q' // q HOST 0x00 SEQ8 → Entry (per-host FIFO queues)
	prefixHistory = 'h' // h HASH16 → History
	prefixRobots  = 'r' // r HOST → RobotsRecord
)

// ErrIncompatible is returned by Open for a store written by another format version.
var ErrIncompatible = errors.New("frontier: job directory was written by an incompatible version of gentlecrawl")

// Entry is a URL waiting in a host's queue.
type Entry struct {
	URL      string `json:"u"`           // the URL as found, used for fetching
	Depth    int    `json:"d,omitempty"` // links followed from a seed
	Recrawl  bool   `json:"r,omitempty"` // queued again by --recrawl
	Attempts int    `json:"a,omitempty"` // earlier tries that the server or network failed
	Hops     int    `json:"h,omitempty"` // redirects followed to reach this URL
	Kind     string `json:"k,omitempty"` // "" for a page, "sitemap" for a sitemap
	AsIs     bool   `json:"x,omitempty"` // fetch the URL as it is, session id and all
}

// Item is a queued Entry with its place in the store.
type Item struct {
	Host string // host key (scheme://host[:port])
	Entry
	key []byte
}

// Candidate is a URL offered to the frontier.
type Candidate struct {
	Host      string // host key
	Canonical string // seen-set key
	Entry
}

// History is what the crawl knows of a URL from its last visit.
type History struct {
	URL          string    `json:"url"`
	Status       int       `json:"status,omitempty"`
	Outcome      string    `json:"outcome"` // fetched, unchanged, failed, disallowed, ...
	Error        string    `json:"error,omitempty"`
	ETag         string    `json:"etag,omitempty"`
	LastModified string    `json:"last_modified,omitempty"`
	ContentType  string    `json:"content_type,omitempty"`
	Digest       string    `json:"digest,omitempty"`  // payload digest of the last full capture
	Size         int64     `json:"size,omitempty"`    // bytes on the wire of the last full capture
	Fetched      time.Time `json:"fetched,omitempty"` // time of the last request
	Captured     time.Time `json:"captured,omitempty"`
	Visits       int       `json:"visits,omitempty"`
	Pending      bool      `json:"pending,omitempty"` // queued again, not yet visited
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
}

// Store is the durable state of one crawl: queues, seen-set, fetch history and
// robots cache, in a Pebble database. It is safe for concurrent use; writes go
// through a single path (Apply) so that the seen-check and the enqueue are one
// atomic step. It must be created with Open and closed with Close.
type Store struct {
	db     *pebble.DB
	failed atomic.Pointer[FatalError] // set once Pebble has failed for good
	mu     struct {
		sync.Mutex
		seq uint64
	}
}

// Open opens or creates the store in dir.
func Open(dir string, logger *slog.Logger) (*Store, error) {
	return OpenFS(dir, logger, nil)
}

// OpenFS is Open on a given file system (nil: the operating system's); tests
// use it to inject write failures.
func OpenFS(dir string, logger *slog.Logger, fs vfs.FS) (*Store, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cache := pebble.NewCache(64 << 20)
	defer cache.Unref()
	opts := &pebble.Options{Logger: pebbleLogger{logger}, Cache: cache, FS: fs}
	// The seen-check is a Get of a key that is usually absent: without a
	// filter each one searches every table (three quarters of admission
	// time, measured). A bloom filter of 10 bits per key answers most of
	// them from memory.
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("frontier: open store: %w", err)
	}
	s := &Store{db: db}
	if err := s.checkVersion(); err != nil {
		db.Close()
		return nil, err
	}
	seq, err := s.maxSeq()
	if err != nil {
		db.Close()
		return nil, err
	}
	s.mu.seq = seq
	return s, nil
}

func (s *Store) checkVersion() error {
	v, ok, err := s.get(metaKey("version"))
	if err != nil {
		return err
	}
	if !ok {
		return s.db.Set(metaKey("version"), []byte(FormatVersion), pebble.Sync)
	}
	if string(v) != FormatVersion {
		return fmt.Errorf("%w (format %q, this build reads %q)", ErrIncompatible, v, FormatVersion)
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() (err error) {
	if f := s.broken(); f != nil {
		// A failed Pebble cannot be closed cleanly; the process ending
		// releases it, and the next Open recovers from its log.
		return f
	}
	defer s.recoverFatal(&err)
	return s.db.Close()
}

// Hash returns the 128-bit seen-set key of a canonical URL.
func Hash(canonical string) []byte {
	h := fnv.New128a()
	h.Write([]byte(canonical))
	return h.Sum(nil)
}

func metaKey(name string) []byte { return append([]byte{prefixMeta}, name...) }

func seenKey(canonical string) []byte { return append([]byte{prefixSeen}, Hash(canonical)...) }

func historyKey(canonical string) []byte {
	return append([]byte{prefixHistory}, Hash(canonical)...)
}

func robotsKey(host string) []byte { return append([]byte{prefixRobots}, host...) }

func queuePrefix(host string) []byte {
	k := make([]byte, 0, len(host)+2)
	k = append(k, prefixQueue)
	k = append(k, host...)
	return append(k, 0)
}

func queueKey(host string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(queuePrefix(host), seq)
}

// prefixEnd returns the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

func (s *Store) get(key []byte) ([]byte, bool, error) {
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("frontier: read: %w", err)
	}
	defer closer.Close()
	return bytes.Clone(v), true, nil
}

func (s *Store) getJSON(key []byte, v any) (bool, error) {
	b, ok, err := s.get(key)
	if !ok || err != nil {
		return ok, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("frontier: corrupt record %q: %w", key[:1], err)
	}
	return true, nil
}

func (s *Store) maxSeq() (uint64, error) {
	var max uint64
	err := s.scan([]byte{prefixQueue}, func(k, _ []byte) error {
		if len(k) >= 8 {
			if seq := binary.BigEndian.Uint64(k[len(k)-8:]); seq > max {
				max = seq
			}
		}
		return nil
	})
	return max, err
}

func (s *Store) scan(prefix []byte, fn func(k, v []byte) error) error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return fmt.Errorf("frontier: scan: %w", err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return fmt.Errorf("frontier: scan: %w", err)
		}
		if err := fn(it.Key(), v); err != nil {
			it.Close()
			return err
		}
	}
	return it.Close()
}

// Pending returns the number of queued URLs per host.
func (s *Store) Pending() (map[string]int, error) {
	counts := make(map[string]int)
	err := s.scan([]byte{prefixQueue}, func(k, _ []byte) error {
		if len(k) < 10 {
			return nil
		}
		counts[string(k[1:len(k)-9])]++
		return nil
	})
	return counts, err
}

// Peek returns the first queued URL of host, or nil when its queue is empty.
func (s *Store) Peek(host string) (*Item, error) {
	p := queuePrefix(host)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
	if err != nil {
		return nil, fmt.Errorf("frontier: peek: %w", err)
	}
	defer it.Close()
	if !it.First() {
		return nil, it.Error()
	}
	item := &Item{Host: host, key: bytes.Clone(it.Key())}
	if err := json.Unmarshal(it.Value(), &item.Entry); err != nil {
		return nil, fmt.Errorf("frontier: corrupt queue entry for %s: %w", host, err)
	}
	return item, nil
}

// PeekN returns up to n queued URLs of host, first in first.
func (s *Store) PeekN(host string, n int) ([]*Item, error) {
	p := queuePrefix(host)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
	if err != nil {
		return nil, fmt.Errorf("frontier: peek: %w", err)
	}
	defer it.Close()
	var items []*Item
	for ok := it.First(); ok && len(items) < n; ok = it.Next() {
		item := &Item{Host: host, key: bytes.Clone(it.Key())}
		if err := json.Unmarshal(it.Value(), &item.Entry); err != nil {
			return nil, fmt.Errorf("frontier: corrupt queue entry for %s: %w", host, err)
		}
		items = append(items, item)
	}
	return items, it.Error()
}

// Seen reports whether canonical is in the seen-set.
func (s *Store) Seen(canonical string) (bool, error) {
	_, ok, err := s.get(seenKey(canonical))
	return ok, err
}

// MarkSeen adds canonical to the seen-set.
func (s *Store) MarkSeen(canonical string) (err error) {
	if f := s.broken(); f != nil {
		return f
	}
	defer s.recoverFatal(&err)
	if err := s.db.Set(seenKey(canonical), nil, pebble.NoSync); err != nil {
		return fmt.Errorf("frontier: write: %w", err)
	}
	return nil
}

// History returns what is known of a URL, or nil.
func (s *Store) History(canonical string) (*History, error) {
	var h History
	ok, err := s.getJSON(historyKey(canonical), &h)
	if !ok || err != nil {
		return nil, err
	}
	return &h, nil
}

// EachHistory calls fn for every URL with a history, in no particular order.
func (s *Store) EachHistory(fn func(*History) error) error {
	return s.scan([]byte{prefixHistory}, func(_, v []byte) error {
		var h History
		if err := json.Unmarshal(v, &h); err != nil {
			return fmt.Errorf("frontier: corrupt history: %w", err)
		}
		return fn(&h)
	})
}

// Robots returns the cached robots.txt record of host, or nil.
func (s *Store) Robots(host string) (*RobotsRecord, error) {
	var r RobotsRecord
	ok, err := s.getJSON(robotsKey(host), &r)
	if !ok || err != nil {
		return nil, err
	}
	return &r, nil
}

// PutRobots stores the robots.txt record of host.
func (s *Store) PutRobots(host string, r *RobotsRecord) (err error) {
	if f := s.broken(); f != nil {
		return f
	}
	defer s.recoverFatal(&err)
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	// Synced: after a crash, a lost record would mean asking for
	// robots.txt again at once, and forgetting the host's Crawl-delay.
	if err := s.db.Set(robotsKey(host), b, pebble.Sync); err != nil {
		return fmt.Errorf("frontier: write robots: %w", err)
	}
	return nil
}

// Meta returns a named value stored with the job, or "".
func (s *Store) Meta(name string) (string, error) {
	v, _, err := s.get(metaKey(name))
	return string(v), err
}

// SetMeta stores a named value with the job.
func (s *Store) SetMeta(name, value string) (err error) {
	if f := s.broken(); f != nil {
		return f
	}
	defer s.recoverFatal(&err)
	if err := s.db.Set(metaKey(name), []byte(value), pebble.Sync); err != nil {
		return fmt.Errorf("frontier: write meta: %w", err)
	}
	return nil
}

// Update is one atomic change to the store: a visited URL leaves its queue
// with its history written, and the URLs it led to are admitted.
type Update struct {
	Done      *Item    // the queue entry visited; nil when only adding
	Canonical string   // Done's seen-set key
	History   *History // written for Canonical when non-nil
	Add       []Candidate
	// Admit, when set, is asked about each URL of Add that is new (not in
	// the seen-set): a URL it refuses is marked seen but not queued, so it
	// is refused once.
	Admit func(Candidate) bool
	// Requeue puts URLs that were seen before back in their queues
	// (--recrawl), skipping those already pending.
	Requeue []Candidate
}

// Apply commits u in one batch and returns, per host, how many URLs were
// added to its queue. URLs already in the seen-set are dropped.
func (s *Store) Apply(u Update) (_ map[string]int, err error) {
	if f := s.broken(); f != nil {
		return nil, f
	}
	defer s.recoverFatal(&err)
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.db.NewBatch()
	defer b.Close()
	if u.Done != nil {
		if err := b.Delete(u.Done.key, nil); err != nil {
			return nil, err
		}
	}
	if u.History != nil {
		v, err := json.Marshal(u.History)
		if err != nil {
			return nil, err
		}
		if err := b.Set(historyKey(u.Canonical), v, nil); err != nil {
			return nil, err
		}
	}
	added := make(map[string]int)
	inBatch := make(map[string]bool, len(u.Add))
	for _, c := range u.Add {
		if inBatch[c.Canonical] {
			continue
		}
		inBatch[c.Canonical] = true
		seen, err := s.Seen(c.Canonical)
		if err != nil {
			return nil, err
		}
		if seen {
			continue
		}
		if err := b.Set(seenKey(c.Canonical), nil, nil); err != nil {
			return nil, err
		}
		if u.Admit != nil && !u.Admit(c) {
			continue
		}
		if err := s.enqueueLocked(b, c); err != nil {
			return nil, err
		}
		added[c.Host]++
	}
	for _, c := range u.Requeue {
		if inBatch[c.Canonical] {
			continue
		}
		inBatch[c.Canonical] = true
		h, err := s.History(c.Canonical)
		if err != nil {
			return nil, err
		}
		if h == nil || h.Pending {
			continue
		}
		h.Pending = true
		v, err := json.Marshal(h)
		if err != nil {
			return nil, err
		}
		if err := b.Set(historyKey(c.Canonical), v, nil); err != nil {
			return nil, err
		}
		if err := s.enqueueLocked(b, c); err != nil {
			return nil, err
		}
		added[c.Host]++
	}
	if b.Empty() {
		return added, nil
	}
	// Synced: a URL marked done must stay done when the process is killed
	// (Pebble keeps unsynced log writes in memory until a block fills), or
	// every crash would fetch the last pages again.
	if err := b.Commit(pebble.Sync); err != nil {
		return nil, fmt.Errorf("frontier: commit: %w", err)
	}
	return added, nil
}

func (s *Store) enqueueLocked(b *pebble.Batch, c Candidate) error {
	v, err := json.Marshal(c.Entry)
	if err != nil {
		return err
	}
	s.mu.seq++
	return b.Set(queueKey(c.Host, s.mu.seq), v, nil)
}

// Retry keeps a visited URL at the head of its queue for another try, with
// one more attempt counted.
func (s *Store) Retry(item *Item) (err error) {
	if f := s.broken(); f != nil {
		return f
	}
	defer s.recoverFatal(&err)
	item.Attempts++
	v, err := json.Marshal(item.Entry)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.db.Set(item.key, v, pebble.Sync); err != nil {
		return fmt.Errorf("frontier: write: %w", err)
	}
	return nil
}

// pebbleLogger routes Pebble's messages to slog at debug level, so that the
// store is quiet unless asked.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

// Fatalf is called by Pebble when it cannot go on — a commit it could not
// write (a full disk), an invariant broken. It must not return; it panics
// with a *FatalError, which the Store's methods turn back into an error in
// the goroutine that called them.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg, "component", "pebble")
	panic(&FatalError{Msg: msg})
}

// ErrStoreFailed is matched (errors.Is) by every error of a store that has
// failed for good: nothing more can be written until the job is reopened.
var ErrStoreFailed = errors.New("frontier: the job's store failed")

// FatalError is the failure that stopped a store. What was committed before
// it is safe: the job resumes from there once the cause is fixed.
type FatalError struct{ Msg string }

func (e *FatalError) Error() string {
	return "frontier: the job's store failed (" + e.Msg + "); what was recorded before is safe, and the job can be resumed once the cause (a full disk?) is fixed"
}

// Is makes a FatalError match ErrStoreFailed.
func (e *FatalError) Is(target error) bool { return target == ErrStoreFailed }

// recoverFatal turns a Pebble fatal error raised in this goroutine into the
// returned error, and remembers that the store has failed.
func (s *Store) recoverFatal(err *error) {
	r := recover()
	if r == nil {
		return
	}
	f, ok := r.(*FatalError)
	if !ok {
		panic(r)
	}
	s.failed.CompareAndSwap(nil, f)
	*err = f
}

// broken returns the failure that stopped the store, or nil.
func (s *Store) broken() error {
	if f := s.failed.Load(); f != nil {
		return f
	}
	return nil
}
