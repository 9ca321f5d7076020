package frontier

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// FormatVersion is the layout of the keys and values in the store. A job
// directory written with another version is refused, never rewritten.
const FormatVersion = "5"

// upgradable are the format versions Open takes and stamps with
// FormatVersion: version 5 only added the state file (state.go), which a
// build of version 4 would leave stale after changing the store.
var upgradable = map[string]bool{"4": true}

// ErrIncompatible is returned by Open for a store written by another format version.
var ErrIncompatible = errors.New("frontier: job directory was written by an incompatible version of gentlecrawl")

// blockCacheBytes is the size of Pebble's block cache.
const blockCacheBytes = 64 << 20

// pebbleFormat is the Pebble format the store asks for: none, so that a new
// store gets the oldest Pebble writes and an existing one keeps its own.
// Raising it past pebble.FormatPrePebblev1MarkedCompacted would make Open
// rewrite an older store's marked tables through compactions and wait for
// them, while openGate holds every compaction until Open returns: Open would
// never return. TestPebbleFormatLeftAlone stands guard.
const pebbleFormat = pebble.FormatDefault

// DefaultExpectedURLs sizes the in-memory seen filter's first layer when
// Options say nothing: 320 KiB of memory. It grows as URLs are seen.
const DefaultExpectedURLs = 256 << 10

// walSyncInterval is the least time between two fsyncs of the store's log:
// the commits of one interval share an fsync, so a longer interval makes
// fewer of them. Nothing on a crawl's path waits for a release's fsync (only
// SetMeta waits for its own), so the interval bounds only what a power loss
// can take: the last moments' changes. The crawler syncs the WARC records
// of a turn before it releases the turn (warc.Writer.SyncWritten, outside
// tmpfs), so a change the store keeps never names a page whose record was
// lost. What shorter intervals cost is in docs/benchmarks-history.md.
const walSyncInterval = 10 * time.Millisecond

// Options configure the embedded store.
type Options struct {
	Logger *slog.Logger
	FS     vfs.FS // nil: the operating system's; tests inject failures here
	// ExpectedURLs sizes the first layer of the in-memory filter in front
	// of the seen-set (10 bits per URL); 0: DefaultExpectedURLs. The filter
	// grows past it, by layers of twice as many URLs.
	ExpectedURLs int
	// IdleHosts is how many hosts with nothing queued or leased the store
	// keeps in memory; beyond it, those idle longest are evicted, to be
	// read from the store again when a change touches them. 0:
	// DefaultIdleHosts.
	IdleHosts int
	Limits
}

// Store is the embedded Frontier: queues, seen-set, host records, fetch
// history and robots cache in a Pebble database in the job directory.
//
// Every change goes through one path (tx): decided under one lock, then
// handed to Pebble's commit pipeline without it, so that concurrent changes
// share their fsyncs, which one waiter goroutine awaits (see Frontier). The
// per-host queue counts, due times and the host heap live in memory,
// rebuilt at Open from the queues and the host records (which keep budgets'
// counts and pauses); so do copies of the first entries of claimed queues
// (head.go). Leases live in memory only: those of a process that died are
// gone when the job is opened again, and their URLs are claimed again.
type Store struct {
	db     *pebble.DB
	limits Limits
	failed atomic.Pointer[FatalError] // set once Pebble has failed for good
	closed atomic.Bool
	// afterSnapshot, when set (by tests), runs after a claim's read of a
	// queue has taken its snapshot.
	afterSnapshot func()
	// afterCloseStep, when set (by tests), runs between the steps of
	// Close's saving of the state file.
	afterCloseStep func(step string)
	fs             vfs.FS // Pebble's, where the state file is kept too
	dir            string
	logger         *slog.Logger
	restored       bool           // Open restored the in-memory state from the state file
	idleMax        int            // Options.IdleHosts
	syncs          sync.WaitGroup // the waiter of unsynced batches, while it runs
	mu             struct {
		sync.Mutex
		seq     uint64 // last queue sequence number used
		leaseID uint64
		queued  int // URLs ever queued, for Limits.CrawlBudget
		hosts   map[string]*hostState
		ready   hostHeap // hosts with entries, by readyAt
		seen    *seenFilter
		recent  recentSeen // seen-set hashes confirmed lately
		// Txs that met URLs and are not yet applied: a URL one of them met
		// is seen, or about to be.
		inflight map[*tx]struct{}
		heads    headCache
		idle     idleList        // hosts that may be evicted
		clock    time.Time       // the latest claim's Now
		unsynced []*pebble.Batch // applied, their fsync not yet awaited
		waiting  bool            // a waiter goroutine is running
	}
}

var _ Frontier = (*Store)(nil)

// Open opens or creates the store in dir.
func Open(dir string, opts Options) (*Store, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// Pebble's block cache. The operating system's page cache holds the
	// store's files besides; the block cache saves decompressing them.
	// What the store holds in memory in all: this, the memtables (two of
	// 32 MiB at most while one is flushed), the copies of queue heads
	// (headCacheBytes), the hosts in memory (about 350 bytes each) and the
	// seen filter (10-20 bits a URL: 125 MB at 10^8 URLs sized for them up
	// front). A larger cache buys little at 10^8 URLs, whose table filters
	// alone (10 bits a key) would not fit in it.
	cache := pebble.NewCache(blockCacheBytes)
	defer cache.Unref()
	fs := storeFS(dir, opts.FS)
	po := &pebble.Options{
		Logger: pebbleLogger{logger},
		Cache:  cache,
		FS:     fs,
		// Admission writes fast; bigger memtables mean fewer, larger
		// flushes and less work for compactions.
		MemTableSize: 32 << 20,
		// Commits ask for an fsync so that their log records are
		// written out at once (see Release); the writes go out at once
		// still, but fsyncs are at least this far apart, shared by the
		// commits of the interval, so that a fast crawl does not pay an
		// fdatasync per release. Power loss may lose the interval's
		// changes; kill -9 does not.
		WALMinSyncInterval: func() time.Duration { return walSyncInterval },
		FormatMajorVersion: pebbleFormat,
	}
	gate := newOpenGate()
	po.Experimental.CompactionScheduler = gate
	// A seen-check that the in-memory filter cannot answer is a Get of a
	// key that is usually absent; a filter in each table answers most of
	// those without reading the table.
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	start := time.Now()
	db, err := pebble.Open(dir, po)
	if err != nil {
		gate.Unregister()
		return nil, fmt.Errorf("frontier: open store: %w", err)
	}
	gate.open()
	logger.Debug("frontier: Pebble opened", "took", time.Since(start))
	s := &Store{db: db, limits: opts.Limits, fs: fs, dir: dir, logger: logger, idleMax: opts.IdleHosts}
	if s.idleMax <= 0 {
		s.idleMax = DefaultIdleHosts
	}
	if err := s.load(opts.ExpectedURLs); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// load checks the format and restores the in-memory state — the host table
// and heap, the sequence number, and the seen filter — from the state file
// Close wrote, or rebuilds it by a scan of the store.
func (s *Store) load(expected int) error {
	v, ok, err := s.get(metaKey("version"))
	if err != nil {
		return err
	}
	if !ok || upgradable[string(v)] {
		if err := s.db.Set(metaKey("version"), []byte(FormatVersion), pebble.Sync); err != nil {
			return fmt.Errorf("frontier: write: %w", err)
		}
	} else if string(v) != FormatVersion {
		return fmt.Errorf("%w (format %q, this build reads %q)", ErrIncompatible, v, FormatVersion)
	}
	s.mu.heads.limit = headCacheBytes
	s.mu.inflight = make(map[*tx]struct{})
	start := time.Now()
	restored, refused, err := s.loadState(s.fs, s.dir)
	if err != nil {
		return err
	}
	if refused != nil {
		s.logger.Warn("frontier: the saved state is unusable; rebuilding it from the store", "err", refused)
	}
	s.restored = restored
	if !restored {
		if err := s.rebuild(expected); err != nil {
			return err
		}
	}
	for _, st := range s.mu.hosts {
		s.mu.ready.place(st)
		if st.idleNow() {
			s.mu.idle.pushFront(st)
		}
	}
	s.evictIdle()
	s.logger.Debug("frontier: opened", "hosts", len(s.mu.hosts), "saved_state", restored, "took", time.Since(start))
	return nil
}

// rebuild makes the in-memory state by reading the host records, every
// queue entry and every seen-set key.
func (s *Store) rebuild(expected int) error {
	s.mu.hosts = make(map[string]*hostState)
	s.mu.seq, s.mu.queued = 0, 0
	err := s.scan([]byte{prefixHost}, func(k, v []byte) error {
		st := &hostState{name: string(k[1:]), index: -1}
		if err := decodeHostRecord(v, &st.hostRecord); err != nil {
			return fmt.Errorf("%w: host %q", err, st.name)
		}
		st.durableNext = st.next
		s.mu.hosts[st.name] = st
		s.mu.queued += st.queued
		return nil
	})
	if err != nil {
		return err
	}
	// Count each queue and note when its first entry is due, in one pass
	// over the queues in key order.
	var st *hostState
	err = s.scan([]byte{prefixQueue}, func(k, _ []byte) error {
		host, ok := queueKeyHost(k)
		if !ok {
			return fmt.Errorf("%w: queue key %q", errCorrupt, k)
		}
		if st == nil || st.name != string(host) {
			if st = s.mu.hosts[string(host)]; st == nil {
				st = &hostState{name: string(host), index: -1}
				s.mu.hosts[st.name] = st
			}
			st.due = queueKeyDue(k)
		}
		st.pending++
		st.queued = max(st.queued, st.pending)
		// Sequence numbers only need to be unique among queued entries:
		// new ones start after the largest.
		s.mu.seq = max(s.mu.seq, binary.BigEndian.Uint64(k[len(k)-8:]))
		return nil
	})
	if err != nil {
		return err
	}
	if expected <= 0 {
		expected = DefaultExpectedURLs
	}
	s.mu.seen = newSeenFilter(expected)
	return s.scan([]byte{prefixSeen}, func(k, _ []byte) error {
		if len(k) == 17 {
			s.mu.seen.add(k[1:])
		}
		return nil
	})
}

// Close closes the database. Closing it again does nothing.
func (s *Store) Close() (err error) {
	if s.closed.Swap(true) {
		return nil
	}
	s.syncs.Wait()
	if f := s.failed.Load(); f != nil {
		if !f.pebble {
			// A write or sync that failed (a full disk): Pebble is sound,
			// and closing it lets the job be opened again in this process.
			// Its own error is the same failure.
			func() {
				defer s.recoverFatal(new(error))
				s.db.Close()
			}()
		}
		// A Pebble that failed on its own cannot be closed cleanly; the
		// process ending releases it, and the next Open recovers from
		// its log.
		return f
	}
	defer s.recoverFatal(&err)
	// Every change is applied and synced: the in-memory state is saved,
	// so that opening the job again need not rebuild it. Without it the
	// next open rebuilds it, so a failure here loses nothing.
	if err := s.saveState(s.fs, s.dir); err != nil {
		s.logger.Warn("frontier: could not save the in-memory state; the next open rebuilds it", "err", err)
	}
	// Flushed first: the log's copy of the memtable is then deleted, and
	// the job directory holds its data once, compressed.
	if err := s.db.Flush(); err != nil {
		s.db.Close()
		return fmt.Errorf("frontier: close: %w", err)
	}
	return s.db.Close()
}

// Hash returns the 128-bit seen-set key of a canonical URL: FNV-1a, 128 bits,
// big-endian.
func Hash(canonical string) [16]byte {
	// FNV-1a 128: offset basis 0x6c62272e07bb014262b821756295c58d, prime
	// 2^88 + 0x13b.
	hi, lo := uint64(0x6c62272e07bb0142), uint64(0x62b821756295c58d)
	for i := 0; i < len(canonical); i++ {
		lo ^= uint64(canonical[i])
		carry, nlo := bits.Mul64(lo, 0x13b)
		hi = hi*0x13b + lo<<24 + carry
		lo = nlo
	}
	var h [16]byte
	binary.BigEndian.PutUint64(h[:8], hi)
	binary.BigEndian.PutUint64(h[8:], lo)
	return h
}

func seenKey(h [16]byte) []byte { return append([]byte{prefixSeen}, h[:]...) }

func historyKey(h [16]byte) []byte {
	return append([]byte{prefixHistory}, h[:]...)
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

// has reports whether key exists, without copying its value.
func (s *Store) has(key []byte) (bool, error) {
	_, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("frontier: read: %w", err)
	}
	closer.Close()
	return true, nil
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

func (s *Store) getHistory(key []byte, h *History) (bool, error) {
	v, ok, err := s.get(key)
	if !ok || err != nil {
		return ok, err
	}
	if err := decodeHistory(v, h); err != nil {
		return false, fmt.Errorf("%w: the history of %x", err, key[1:])
	}
	return true, nil
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

// headDue returns the due time of the first entry of host's queue.
func (s *Store) headDue(host string) (time.Time, error) {
	p := queuePrefix(host)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
	if err != nil {
		return time.Time{}, fmt.Errorf("frontier: read queue: %w", err)
	}
	var due time.Time
	if it.First() {
		due = queueKeyDue(it.Key())
	}
	return due, it.Close()
}

// Add admits a batch of URLs.
func (s *Store) Add(ctx context.Context, b Batch) (_ Added, err error) {
	if f := s.broken(); f != nil {
		return Added{}, f
	}
	defer s.recoverFatal(&err)
	t := s.newTx()
	defer t.close()
	for i := range b.Add {
		if err := t.prepare(&b.Add[i], b.Admit); err != nil {
			return Added{}, err
		}
	}
	t.lock()
	if err := t.admitPrepared(); err != nil {
		return Added{}, err
	}
	for i := range b.Requeue {
		if err := t.requeue(&b.Requeue[i]); err != nil {
			return Added{}, err
		}
	}
	return t.commitAndUnlock()
}

// Claim leases a due host.
func (s *Store) Claim(ctx context.Context, req ClaimRequest) (_ *Lease, next time.Time, err error) {
	if f := s.broken(); f != nil {
		return nil, time.Time{}, f
	}
	defer s.recoverFatal(&err)
	if req.Now.IsZero() {
		req.Now = time.Now()
	}
	req.Max = max(req.Max, 1)
	if req.TTL <= 0 {
		req.TTL = DefaultTTL
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.Now.After(s.mu.clock) {
		// Hosts kept for their pacing may be evicted once it has passed.
		s.mu.clock = req.Now
		s.evictIdle()
	}
	for {
		var st *hostState
		if req.Host != "" {
			st = s.mu.hosts[req.Host]
			if st == nil || st.pending <= 0 {
				return nil, time.Time{}, nil
			}
		} else {
			if len(s.mu.ready) == 0 {
				return nil, time.Time{}, nil
			}
			st = s.mu.ready[0]
		}
		if at := st.readyAt(); at.After(req.Now) {
			return nil, at, nil
		}
		if st.lease != nil {
			// Its holder never came back: the lease has expired.
			st.lease = nil
			s.mu.ready.place(st)
			continue
		}
		s.mu.leaseID++
		l := &Lease{Host: st.name, Expires: req.Now.Add(req.TTL), ID: s.mu.leaseID}
		st.lease, st.afterLease, st.addedInLease = l, dueSet{}, dueSet{}
		items, after, afterOK, hit, err := s.mu.heads.take(st, req.Now, req.Max)
		if err != nil {
			st.lease = nil
			return nil, time.Time{}, err
		}
		if !hit {
			// Read the queue without the lock: nobody else settles its
			// entries meanwhile, and entries added meanwhile are noted in
			// addedInLease.
			s.mu.ready.place(st)
			floor := st.floor
			s.mu.Unlock()
			var read []headEntry
			var whole bool
			var buffered int
			items, after, afterOK, read, whole, buffered, err = s.dueItems(st.name, floor, req.Now, req.Max)
			s.mu.Lock()
			if st.lease != l {
				return nil, time.Time{}, errors.New("frontier: a lease was taken while it was being read (TTL too short?)")
			}
			if err == nil && !st.addedInLease.ok {
				// No change raced with the read: keep what it saw.
				s.mu.heads.fill(st, read, whole, buffered)
				if len(read) > 0 {
					st.floor = bytes.Clone(read[0].key)
				}
			}
		}
		if err != nil || len(items) == 0 {
			st.lease = nil
			if err == nil {
				// The first entry is not due after all: correct the heap.
				if afterOK {
					st.due = after
				} else {
					st.due, err = s.headDue(st.name)
				}
				if err == nil && !st.due.After(req.Now) {
					err = fmt.Errorf("%w: host %q counts %d queued URLs but has none", errCorrupt, st.name, st.pending)
				}
			}
			s.mu.ready.place(st)
			if err != nil {
				return nil, time.Time{}, err
			}
			continue
		}
		l.Items = items
		st.afterLease = dueSet{after, afterOK}
		s.mu.ready.place(st)
		return l, time.Time{}, nil
	}
}

// dueItems reads up to n entries of host's queue that are due at now, from
// floor on (nil: from its start), and
// the due time of the entry after them (ok false when there is none): what
// the host's head will be once they are settled. It returns as well the
// entries it read, headPrefetch more than n if there are, and whether they
// are the whole queue.
func (s *Store) dueItems(host string, floor []byte, now time.Time, n int) (items []*Item, after time.Time, ok bool, read []headEntry, whole bool, buffered int, err error) {
	p := queuePrefix(host)
	lower := p
	if floor != nil {
		lower = floor
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: prefixEnd(p)})
	if err != nil {
		return nil, time.Time{}, false, nil, false, 0, fmt.Errorf("frontier: read queue: %w", err)
	}
	if s.afterSnapshot != nil {
		s.afterSnapshot()
	}
	var buf []byte // the entries' bytes, a few allocations for all of them
	valid := it.First()
	for ; valid && len(read) < n+headPrefetch; valid = it.Next() {
		k, v := it.Key(), it.Value()
		if len(buf)+len(k)+len(v) > cap(buf) {
			// Room for the rest at this entry's size.
			buf = make([]byte, 0, (len(k)+len(v))*(n+headPrefetch-len(read)))
			buffered += cap(buf)
		}
		k0 := len(buf)
		buf = append(append(buf, k...), v...)
		e := headEntry{key: buf[k0 : k0+len(k) : k0+len(k)], val: buf[k0+len(k) : len(buf) : len(buf)]}
		read = append(read, e)
		due := queueKeyDue(k)
		if ok || len(items) == n || due.After(now) {
			if !ok {
				after, ok = due, true
			}
			continue
		}
		item := &Item{Host: host, Due: due, Ref: e.key}
		if err := decodeEntry(e.val, host, &item.Entry); err != nil {
			it.Close()
			return nil, time.Time{}, false, nil, false, 0, fmt.Errorf("%w: queue of %s", err, host)
		}
		items = append(items, item)
	}
	return items, after, ok, read, !valid, buffered, it.Close()
}

// awaitSync hands b, applied and its sync asked for, to the goroutine that
// waits for the syncs and closes the batches (started when none runs); the
// caller holds s.mu. Syncs complete in log order, so one waiter taking them
// in order rarely waits more than once per fsync.
func (s *Store) awaitSync(b *pebble.Batch) {
	s.mu.unsynced = append(s.mu.unsynced, b)
	if s.mu.waiting {
		return
	}
	s.mu.waiting = true
	s.syncs.Add(1)
	go func() {
		defer s.syncs.Done()
		var bs []*pebble.Batch
		for {
			s.mu.Lock()
			bs, s.mu.unsynced = s.mu.unsynced, bs[:0]
			if len(bs) == 0 {
				s.mu.waiting = false
				s.mu.Unlock()
				return
			}
			s.mu.Unlock()
			for i, b := range bs {
				if err := b.SyncWait(); err != nil {
					s.fail(err)
				}
				b.Close()
				bs[i] = nil
			}
		}
	}()
}

// Release ends a lease.
func (s *Store) Release(ctx context.Context, req ReleaseRequest) (_ Added, err error) {
	if f := s.broken(); f != nil {
		return Added{}, f
	}
	defer s.recoverFatal(&err)
	l := req.Lease
	if l == nil {
		return Added{}, errors.New("frontier: Release without a lease")
	}
	// Check every result before anything changes.
	settled := make(map[*Item]bool, len(req.Results))
	for _, r := range req.Results {
		if !leaseHas(l, r.Item) || settled[r.Item] {
			return Added{}, fmt.Errorf("frontier: Release of %s: a result for a URL the lease does not hold, or two for one", l.Host)
		}
		settled[r.Item] = true
		if !r.Outcome.known() {
			return Added{}, fmt.Errorf("frontier: unknown outcome %q for %s", r.Outcome, r.Item.URL)
		}
		if r.History != nil && r.Canonical == "" && r.Outcome != Retry {
			return Added{}, fmt.Errorf("frontier: the result for %s has a history but no canonical URL", r.Item.URL)
		}
	}
	t := s.newTx()
	defer t.close()
	for _, r := range req.Results {
		for i := range r.Add {
			if err := t.prepare(&r.Add[i], req.Admit); err != nil {
				return Added{}, err
			}
		}
	}
	t.lock()
	st := s.mu.hosts[l.Host]
	if st == nil || st.lease == nil || st.lease.ID != l.ID {
		return Added{}, ErrLeaseLost
	}
	d, err := t.host(l.Host)
	if err != nil {
		return Added{}, err
	}
	d.endLease, d.leaseID, d.next, d.pause = true, l.ID, req.Next, req.Pause
	// The host's head after the release: the first entry beyond the lease
	// as read when it was claimed, entries added since, and the lease's
	// own entries that stay queued (returned, or retried).
	d.head = st.afterLease
	d.head.include(st.addedInLease)
	for _, it := range l.Items {
		if !settled[it] {
			d.head.add(it.Due)
		}
	}
	for _, r := range req.Results {
		switch {
		case r.Outcome == Retry:
			d.head.add(later(r.RetryAt, r.Item.Due))
		case !r.Revisit.IsZero() && r.History != nil:
			d.head.add(r.Revisit)
		}
	}
	for _, r := range req.Results {
		if err := t.settle(d, &r); err != nil {
			return Added{}, err
		}
	}
	if err := t.admitPrepared(); err != nil {
		return Added{}, err
	}
	return t.commitAndUnlock()
}

// later returns the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func leaseHas(l *Lease, item *Item) bool {
	for _, it := range l.Items {
		if it == item {
			return item != nil
		}
	}
	return false
}

// Seen reports whether canonical is in the seen-set.
func (s *Store) Seen(ctx context.Context, canonical string) (bool, error) {
	return s.has(seenKey(Hash(canonical)))
}

// MarkSeen adds canonical to the seen-set. It is not synced: lost in a
// crash, it costs at most one more fetch.
func (s *Store) MarkSeen(ctx context.Context, canonical string) (err error) {
	if f := s.broken(); f != nil {
		return f
	}
	defer s.recoverFatal(&err)
	h := Hash(canonical)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.db.Set(seenKey(h), nil, pebble.NoSync); err != nil {
		return s.fail(err)
	}
	s.mu.seen.add(h[:])
	return nil
}

// Hosts describes the hosts with something queued.
func (s *Store) Hosts(ctx context.Context) ([]HostInfo, error) {
	if f := s.broken(); f != nil {
		return nil, f
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]HostInfo, 0, len(s.mu.ready))
	for _, st := range s.mu.ready {
		out = append(out, HostInfo{
			Host: st.name, Pending: st.pending, Queued: st.queued, OverBudget: st.overBudget,
			Next: st.next, Due: st.due, Leased: st.lease != nil,
		})
	}
	return out, nil
}

// History returns what is known of a URL, or nil.
func (s *Store) History(ctx context.Context, canonical string) (*History, error) {
	var h History
	ok, err := s.getHistory(historyKey(Hash(canonical)), &h)
	if !ok || err != nil {
		return nil, err
	}
	return &h, nil
}

// EachHistory calls fn for every URL with a history, in no particular order.
func (s *Store) EachHistory(ctx context.Context, fn func(*History) error) error {
	return s.scan([]byte{prefixHistory}, func(_, v []byte) error {
		var h History
		if err := decodeHistory(v, &h); err != nil {
			return fmt.Errorf("%w: a history", err)
		}
		return fn(&h)
	})
}

// Robots returns the cached robots.txt record of origin, or nil.
func (s *Store) Robots(ctx context.Context, origin string) (*RobotsRecord, error) {
	var r RobotsRecord
	ok, err := s.getJSON(robotsKey(origin), &r)
	if !ok || err != nil {
		return nil, err
	}
	return &r, nil
}

// PutRobots stores the robots.txt record of origin.
func (s *Store) PutRobots(ctx context.Context, origin string, r *RobotsRecord) (err error) {
	if f := s.broken(); f != nil {
		return f
	}
	defer s.recoverFatal(&err)
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	// Synced, as a release is: written out at once, so that kill -9 does
	// not lose it (a lost record would mean asking for robots.txt again at
	// once, and forgetting the host's Crawl-delay), and not waited for: a
	// host's first turn waiting up to walSyncInterval for it would hold
	// every other host at its address back (BenchmarkCrawlSimweb, many
	// hosts at one address, shows it).
	batch := s.db.NewBatch()
	if err := batch.Set(robotsKey(origin), b, nil); err != nil {
		batch.Close()
		return err
	}
	if err := s.db.ApplyNoSyncWait(batch, pebble.Sync); err != nil {
		batch.Close()
		return s.fail(err)
	}
	s.mu.Lock()
	s.awaitSync(batch)
	s.mu.Unlock()
	return nil
}

// Meta returns a named value stored with the job, or "".
func (s *Store) Meta(ctx context.Context, name string) (string, error) {
	v, _, err := s.get(metaKey(name))
	return string(v), err
}

// SetMeta stores a named value with the job.
func (s *Store) SetMeta(ctx context.Context, name, value string) (err error) {
	if f := s.broken(); f != nil {
		return f
	}
	defer s.recoverFatal(&err)
	if name == "version" {
		return fmt.Errorf("frontier: meta name %q is the store's own", name)
	}
	if err := s.db.Set(metaKey(name), []byte(value), pebble.Sync); err != nil {
		return s.fail(err)
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
	panic(&FatalError{Msg: msg, pebble: true})
}

// ErrStoreFailed is matched (errors.Is) by every error of a store that has
// failed for good: nothing more can be written until the job is reopened.
var ErrStoreFailed = errors.New("frontier: the job's store failed")

// FatalError is the failure that stopped a store. What was committed before
// it is safe: the job resumes from there once the cause is fixed.
type FatalError struct {
	Msg    string
	pebble bool // raised by Pebble itself (Fatalf), not a write that failed
}

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

// fail marks the store failed by a write error and returns the failure.
func (s *Store) fail(err error) error {
	s.failed.CompareAndSwap(nil, &FatalError{Msg: "write: " + err.Error()})
	return s.failed.Load()
}

// broken returns the failure that stopped the store, or nil.
func (s *Store) broken() error {
	if f := s.failed.Load(); f != nil {
		return f
	}
	return nil
}
