// Package gctune sets the Go garbage collector for a crawl: collect seldom
// while the heap is small, and as a fixed multiple of the live heap once it
// is not.
//
// GOGC alone ties the heap's size to the live heap's: a low value keeps
// memory down and collects often (a crawl allocates tens of kilobytes a
// page), a high one collects seldom and lets a large live heap double. A
// crawl has a memory budget instead. Start sets a high GOGC under a soft
// memory limit (runtime/debug.SetMemoryLimit) of at least the budget, and
// after every collection raises the limit with the live heap, so that the
// heap may always grow by a fixed fraction of it before the next one: the
// collector never runs back to back because the live heap came near the
// limit.
package gctune

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Config says how the collector is set.
type Config struct {
	// Percent is GOGC while the heap is within Floor: the heap may grow by
	// this many percent of the live heap before a collection.
	Percent int
	// Floor is the memory limit, in bytes of Go memory in all (the heap,
	// stacks and the runtime's own, as SetMemoryLimit counts), below which
	// the collector waits for Percent.
	Floor int64
	// MinPercent is the growth, in percent of the live heap, that the
	// limit always allows: past Floor the heap is collected at (100 +
	// MinPercent)% of the live heap, as GOGC=MinPercent would.
	MinPercent int
	// Slack is added to the limit for the Go memory that is not heap
	// (goroutine stacks, the collector's metadata) once the limit follows
	// the live heap.
	Slack int64
}

// Tuner keeps the memory limit in step with the live heap. Stop ends it
// and puts back the settings found.
type Tuner struct {
	cfg       Config
	mu        sync.Mutex
	stopped   bool
	limit     int64 // as last set
	prevGC    int
	prevLimit int64
	sample    [1]metrics.Sample
}

const liveMetric = "/gc/heap/live:bytes"

// Start sets the collector as cfg says and keeps it so until Stop.
func Start(cfg Config) *Tuner {
	t := &Tuner{cfg: cfg}
	t.sample[0].Name = liveMetric
	t.prevGC = debug.SetGCPercent(cfg.Percent)
	t.prevLimit = debug.SetMemoryLimit(cfg.Floor)
	t.limit = cfg.Floor
	t.arm()
	return t
}

// arm sets a cleanup on a new object that nothing references, to run after
// the next collection: the runtime's only hook on the end of a cycle.
func (t *Tuner) arm() {
	// An object with a pointer is never in a tiny-allocation block, whose
	// cleanups would wait for every object in the block.
	sentinel := &struct{ _ *int }{}
	runtime.AddCleanup(sentinel, (*Tuner).afterGC, t)
}

// afterGC sets the limit from the live heap the last collection found,
// and arms the next call.
func (t *Tuner) afterGC() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	metrics.Read(t.sample[:])
	if t.sample[0].Value.Kind() == metrics.KindUint64 {
		if l := t.limitFor(t.sample[0].Value.Uint64()); l != t.limit {
			debug.SetMemoryLimit(l)
			t.limit = l
		}
	}
	t.arm()
}

// limitFor returns the memory limit for a live heap of live bytes.
func (t *Tuner) limitFor(live uint64) int64 {
	grown := float64(live)*float64(100+t.cfg.MinPercent)/100 + float64(t.cfg.Slack)
	if grown >= math.MaxInt64 {
		return math.MaxInt64
	}
	return max(t.cfg.Floor, int64(grown))
}

// Limit returns the memory limit now set.
func (t *Tuner) Limit() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.limit
}

// Stop puts back GOGC and the memory limit as Start found them.
func (t *Tuner) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	t.stopped = true
	debug.SetGCPercent(t.prevGC)
	debug.SetMemoryLimit(t.prevLimit)
}
