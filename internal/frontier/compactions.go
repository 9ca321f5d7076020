package frontier

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// openGate is the store's Pebble compaction scheduler. It grants what the
// database allows without permission (one compaction, more while the tree
// is in debt), as Pebble's default scheduler does, but nothing until the
// store has opened.
//
// Why: Pebble's Open, in the version used here, registers the database with
// its scheduler before it lists the directory for obsolete files, and that
// step waits for every running compaction to finish. A store closed with
// compaction debt (a fast admission, or a kill) had a compaction granted in
// between by the default scheduler's 100 ms timer, and Open waited for the
// whole of it: seconds at a few million URLs, where the same store without
// debt opens in a fraction of one. Pebble moved the scan before any scheduling upstream
// (its issue 5420); until a release with that change is taken, compactions
// wait for the gate. What it changes: compactions start a few hundred
// milliseconds later, after Open; nothing is written differently, and
// flushes, which Pebble does not schedule through here, are not held. What
// it requires: that Open itself never waits for a compaction, which a
// format upgrade rewriting tables would (see pebbleFormat).
type openGate struct {
	opened atomic.Bool
	poke   chan struct{} // wakes the granter: a slot freed, the gate opened, more allowed
	stop   chan struct{} // closed by Unregister
	exited chan struct{} // closed when the granter has returned
	once   sync.Once     // closes stop

	mu struct {
		sync.Mutex
		db      pebble.DBForCompaction
		running int // compactions granted and not done
	}
}

var (
	_ pebble.CompactionScheduler   = (*openGate)(nil)
	_ pebble.CompactionGrantHandle = (*openGate)(nil)
)

func newOpenGate() *openGate {
	return &openGate{poke: make(chan struct{}, 1), stop: make(chan struct{}), exited: make(chan struct{})}
}

// grantEvery is how often the granter looks for a compaction that waits,
// as Pebble's own scheduler does.
const grantEvery = 100 * time.Millisecond

// Register is called by Pebble's Open, once.
func (g *openGate) Register(_ int, db pebble.DBForCompaction) {
	g.mu.Lock()
	g.mu.db = db
	g.mu.Unlock()
	go g.granter()
}

// open lets compactions run: called once the store's Open has returned.
func (g *openGate) open() {
	g.opened.Store(true)
	g.wake()
}

func (g *openGate) wake() {
	select {
	case g.poke <- struct{}{}:
	default:
	}
}

// granter offers the database the compactions it may run, every grantEvery
// and when woken, until Unregister. It is the only caller of the database's
// Schedule, and it calls it without holding g.mu (Pebble's lock order puts
// the database's locks first).
func (g *openGate) granter() {
	defer close(g.exited)
	t := time.NewTicker(grantEvery)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
		case <-g.poke:
		}
		for g.opened.Load() && g.take() {
			select {
			case <-g.stop:
				g.Done()
				return
			default:
			}
			g.mu.Lock()
			db := g.mu.db
			g.mu.Unlock()
			if waiting, _ := db.GetWaitingCompaction(); !waiting || !db.Schedule(g) {
				g.release()
				break
			}
		}
	}
}

// take claims a slot for one more compaction, if the database allows it.
func (g *openGate) take() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mu.db == nil || g.mu.running >= g.mu.db.GetAllowedWithoutPermission() {
		return false
	}
	g.mu.running++
	return true
}

func (g *openGate) release() {
	g.mu.Lock()
	g.mu.running--
	g.mu.Unlock()
}

// TrySchedule is the database asking to run a compaction it picked.
func (g *openGate) TrySchedule() (bool, pebble.CompactionGrantHandle) {
	select {
	case <-g.stop:
		return false, nil
	default:
	}
	if !g.opened.Load() || !g.take() {
		return false, nil
	}
	return true, g
}

// UpdateGetAllowedWithoutPermission says the database may allow more now.
func (g *openGate) UpdateGetAllowedWithoutPermission() { g.wake() }

// Unregister is called by Pebble's Close, after which the gate calls the
// database no more; and by the store when Pebble's Open failed after it
// registered. It may be called more than once.
func (g *openGate) Unregister() {
	g.once.Do(func() { close(g.stop) })
	g.mu.Lock()
	registered := g.mu.db != nil
	g.mu.Unlock()
	if registered {
		<-g.exited
	}
}

// The grant handle: only Done matters here.
func (g *openGate) Started()                                          {}
func (g *openGate) MeasureCPU(pebble.CompactionGoroutineKind)         {}
func (g *openGate) CumulativeStats(pebble.CompactionGrantHandleStats) {}

// Done is called when a granted compaction ends: its slot is free.
func (g *openGate) Done() {
	g.release()
	g.wake()
}
