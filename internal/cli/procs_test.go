package cli

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestProcTuner(t *testing.T) {
	hosts := 0
	var sets []int
	tu := &procTuner{hosts: func() int { return hosts }, set: func(n int) { sets = append(sets, n) }, max: 4, procs: 4}
	run := func(h, samples int) {
		hosts = h
		for range samples {
			tu.step()
		}
	}
	run(1, procsQuiet-1)
	if tu.procs != 4 || len(sets) != 0 {
		t.Fatalf("one host for less than procsQuiet samples: procs %d, sets %v", tu.procs, sets)
	}
	run(1, 1)
	if tu.procs != 1 {
		t.Fatalf("one host for procsQuiet samples: procs %d, want 1", tu.procs)
	}
	run(2, 1)
	if tu.procs != 4 {
		t.Fatalf("two hosts: procs %d, want 4 at once", tu.procs)
	}
	// Back to one P only after procsQuiet samples of one host or none,
	// counted afresh after the last sample of two.
	run(0, procsQuiet-1)
	run(3, 1)
	run(0, procsQuiet-1)
	if tu.procs != 4 {
		t.Fatalf("a sample of three hosts restarts the count: procs %d", tu.procs)
	}
	run(0, 1)
	if tu.procs != 1 {
		t.Fatalf("no host for procsQuiet samples: procs %d, want 1", tu.procs)
	}
	if want := []int{1, 4, 1}; !equal(sets, want) {
		t.Errorf("GOMAXPROCS set to %v, want %v", sets, want)
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTuneProcsOffByDefault(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	stop := tuneProcs(context.Background(), func() int { return 0 })
	stop()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("GOMAXPROCS %d after a tuner that is off, want %d", got, before)
	}
}

func TestTuneProcs(t *testing.T) {
	all := runtime.GOMAXPROCS(0)
	if all < 2 {
		t.Skip("one processor: nothing to tune")
	}
	TuneProcs = true
	defer func() { TuneProcs = false }()
	var hosts atomic.Int32
	stop := tuneProcs(context.Background(), func() int { return int(hosts.Load()) })
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("GOMAXPROCS %d at the start, want 1", got)
	}
	hosts.Store(2)
	deadline := time.Now().Add(30 * time.Second)
	for runtime.GOMAXPROCS(0) != all {
		if time.Now().After(deadline) {
			t.Fatalf("two hosts in turn for 30 s: GOMAXPROCS still %d, want %d", runtime.GOMAXPROCS(0), all)
		}
		time.Sleep(10 * time.Millisecond)
	}
	hosts.Store(1)
	for runtime.GOMAXPROCS(0) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("one host in turn: GOMAXPROCS still %d, want 1", runtime.GOMAXPROCS(0))
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if got := runtime.GOMAXPROCS(0); got != all {
		t.Errorf("GOMAXPROCS %d after stop, want %d back", got, all)
	}
}
