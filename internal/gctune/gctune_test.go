package gctune

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

const mib = 1 << 20

// waitLimit collects until the tuner's limit satisfies ok, or fails.
func waitLimit(t *testing.T, tu *Tuner, what string, ok func(int64) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok(tu.Limit()) {
		if time.Now().After(deadline) {
			t.Fatalf("limit %d MiB: never %s", tu.Limit()/mib, what)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

var keep [][]byte

func TestLimitFollowsLiveHeap(t *testing.T) {
	cfg := Config{Percent: 300, Floor: 48 * mib, MinPercent: 40, Slack: 8 * mib}
	tu := Start(cfg)
	defer tu.Stop()
	if got := debug.SetMemoryLimit(-1); got != cfg.Floor {
		t.Fatalf("memory limit after Start = %d, want the floor %d", got, cfg.Floor)
	}
	if got := debug.SetGCPercent(cfg.Percent); got != cfg.Percent {
		t.Fatalf("GOGC after Start = %d, want %d", got, cfg.Percent)
	}

	// A live heap well past the floor: the limit must leave it room to
	// grow by MinPercent, or the collector would run back to back.
	for range 96 {
		keep = append(keep, make([]byte, mib))
	}
	waitLimit(t, tu, "rose with a live heap of 96 MiB", func(l int64) bool { return l >= 96*mib*140/100 })
	if got := debug.SetMemoryLimit(-1); got != tu.Limit() {
		t.Fatalf("runtime's limit %d, tuner's %d", got, tu.Limit())
	}

	// Given back, the limit falls to the floor again.
	keep = nil
	waitLimit(t, tu, "fell back to the floor", func(l int64) bool { return l == cfg.Floor })
}

func TestStopRestores(t *testing.T) {
	gc := debug.SetGCPercent(77)
	limit := debug.SetMemoryLimit(1 << 40)
	defer func() {
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(limit)
	}()
	tu := Start(Config{Percent: 300, Floor: 64 * mib, MinPercent: 40})
	tu.Stop()
	tu.Stop() // a second Stop does nothing
	if got := debug.SetGCPercent(77); got != 77 {
		t.Errorf("GOGC after Stop = %d, want 77", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Errorf("memory limit after Stop = %d, want %d", got, int64(1<<40))
	}
	// Collections after Stop change nothing.
	runtime.GC()
	runtime.GC()
	time.Sleep(20 * time.Millisecond)
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Errorf("memory limit after Stop and a collection = %d", got)
	}
}

func TestLimitFor(t *testing.T) {
	tu := &Tuner{cfg: Config{Floor: 100, MinPercent: 40, Slack: 10}}
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, 100},
		{60, 100},  // 94 < floor
		{100, 150}, // 140 + 10
		{1000, 1410},
		{math.MaxUint64, math.MaxInt64},
	} {
		if got := tu.limitFor(c.live); got != c.want {
			t.Errorf("limitFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

func TestPercentFor(t *testing.T) {
	tu := &Tuner{cfg: Config{Percent: 200, LowPercent: 50}}
	for _, c := range []struct {
		live, allocs uint64
		want         int
	}{
		{0, 0, 200},              // at the start: Percent
		{4 * mib, 8 * mib, 63},   // √(0.2·2) = 0.63
		{5 * mib, 25 * mib, 100}, // a crawl of a thousand small pages
		{30 * mib, 1 << 30, 200}, // a long one: √(6.8) = 2.6, capped
		{4 * mib, 1 * mib, 50},   // never under StartPercent
		{1, math.MaxUint64, 200}, // nor over Percent
	} {
		if got := tu.percentFor(c.live, c.allocs); got != c.want {
			t.Errorf("percentFor(%d, %d) = %d, want %d", c.live, c.allocs, got, c.want)
		}
	}
	// Without LowPercent, or with one not under Percent: Percent.
	for _, low := range []int{0, 200, 300} {
		tu := &Tuner{cfg: Config{Percent: 200, LowPercent: low}}
		if got := tu.percentFor(5*mib, 25*mib); got != 200 {
			t.Errorf("LowPercent %d: percentFor = %d, want 200", low, got)
		}
	}
}

func TestPercentRises(t *testing.T) {
	gc := debug.SetGCPercent(100)
	defer debug.SetGCPercent(gc)
	tu := Start(Config{Percent: 400, LowPercent: 20, Floor: 1 << 40, MinPercent: 40})
	defer tu.Stop()
	if got := debug.SetGCPercent(400); got != 400 {
		t.Fatalf("GOGC after Start = %d, want Percent 400", got)
	}
	// A live heap of 64 MiB and little garbage: after a collection the
	// percent falls toward LowPercent, as √(0.2·allocs/live) is small.
	keep = make([][]byte, 64)
	for i := range keep {
		keep[i] = make([]byte, mib)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		runtime.GC()
		time.Sleep(time.Millisecond)
		tu.mu.Lock()
		p := tu.percent
		tu.mu.Unlock()
		if p < 400 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GOGC stayed at %d with a large live heap, want it lower", p)
		}
	}
	// A small live heap and much garbage: the percent must rise to the
	// cap, as √(0.2·allocs/live) passes 4.
	keep = [][]byte{make([]byte, mib)}
	deadline = time.Now().Add(30 * time.Second)
	for {
		for range 64 {
			keep = append(keep[:1], make([]byte, 64<<10))
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
		tu.mu.Lock()
		p := tu.percent
		tu.mu.Unlock()
		if p == 400 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GOGC stayed at %d after 30 s of garbage, want 400", p)
		}
	}
	if got := debug.SetGCPercent(400); got != 400 {
		t.Fatalf("runtime's GOGC %d, tuner's 400", got)
	}
	keep = nil
}
