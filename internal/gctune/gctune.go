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
	// LowPercent, when between 0 and Percent, is the least GOGC the
	// tuner sets after a collection: GOGC is Percent until the first one,
	// then follows the allocations from LowPercent up to Percent (see
	// percentFor). Zero: Percent throughout.
	LowPercent int
}

// markPerFault is what marking a byte of live heap costs against what the
// first touch of a fresh byte costs (its share of a page fault). Page
// faults are dear in a virtual machine, so the ratio is small; the value
// was measured on the machines of docs/benchmarks-history.md.
const markPerFault = 0.2

// Tuner keeps the memory limit in step with the live heap. Stop ends it
// and puts back the settings found.
type Tuner struct {
	cfg       Config
	mu        sync.Mutex
	stopped   bool
	limit     int64 // as last set
	percent   int   // GOGC as last set
	prevGC    int
	prevLimit int64
	sample    [2]metrics.Sample // liveMetric, allocsMetric
}

const (
	liveMetric   = "/gc/heap/live:bytes"
	allocsMetric = "/gc/heap/allocs:bytes"
)

// Start sets the collector as cfg says and keeps it so until Stop.
func Start(cfg Config) *Tuner {
	t := &Tuner{cfg: cfg}
	t.sample[0].Name, t.sample[1].Name = liveMetric, allocsMetric
	t.percent = t.percentFor(0, 0)
	t.prevGC = debug.SetGCPercent(t.percent)
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
		live := t.sample[0].Value.Uint64()
		if l := t.limitFor(live); l != t.limit {
			debug.SetMemoryLimit(l)
			t.limit = l
		}
		if t.sample[1].Value.Kind() == metrics.KindUint64 {
			if p := t.percentFor(live, t.sample[1].Value.Uint64()); p != t.percent {
				debug.SetGCPercent(p)
				t.percent = p
			}
		}
	}
	t.arm()
}

// percentFor returns GOGC for a live heap of live bytes after allocs bytes
// allocated in all; with no live heap measured yet (the start), Percent.
//
// A heap that grows into fresh memory pays for each new page once (a page
// fault, costly in a VM); a collection pays for marking the live heap each
// time. With GOGC p (as a fraction) the heap peaks near live·(1+p), and
// allocs bytes take allocs/(p·live) collections, so the two costs sum to
// about fault·live·p + mark·allocs/p, least at p = √(markPerFault ·
// allocs/live). A short crawl thus collects often in a small heap that
// stays in memory already touched, and a long one seldom: the percent
// rises from LowPercent to Percent as the allocations pile up. Until the
// first collection it is Percent: the runtime's least heap goal is 4 MiB
// times GOGC/100, and at a low GOGC a crawl would collect again and again
// while starting up, in a heap that goes past 4 MiB anyway.
func (t *Tuner) percentFor(live, allocs uint64) int {
	lo, hi := t.cfg.LowPercent, t.cfg.Percent
	if lo <= 0 || lo >= hi || live == 0 {
		return hi
	}
	p := 100 * math.Sqrt(markPerFault*float64(allocs)/float64(live))
	return int(min(max(p, float64(lo)), float64(hi)))
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
