package cli

import (
	"context"
	"runtime"
	"time"
)

// TuneProcs lets a crawl move GOMAXPROCS with the hosts it fetches from
// (procTuner). The command sets it unless GOMAXPROCS is set in its
// environment; tests leave it off, the setting being the process's.
var TuneProcs bool

// procTuner runs a crawl on one P while it fetches from one host at a time,
// and on all of them when from more.
//
// A crawl of one host is bound by the host: politeness caps its requests
// in flight, and its goroutines mostly wait for answers. With a second P,
// each goroutine that blocks sends the runtime looking for work there:
// threads spin, sleep and are woken, and a page's bytes cross between
// processors' caches. On one host one P takes less CPU than two in the
// same wall time; two hosts at once are another matter, where one P takes
// longer and more CPU (BENCHMARKS.md). So the tuner starts on one P (a crawl begins with
// its seeds' robots.txt, and many of one host), goes to every P as soon as
// two hosts are in turn, and back to one only after a second of one host
// or none.
type procTuner struct {
	hosts func() int // hosts in turn now
	set   func(int)  // sets GOMAXPROCS
	max   int
	procs int // as last set
	quiet int // samples in a row with at most one host in turn
}

const (
	procsEvery = 100 * time.Millisecond
	// procsQuiet samples of at most one host in turn before one P.
	procsQuiet = 10
)

// step takes one sample.
func (t *procTuner) step() {
	if t.hosts() > 1 {
		t.quiet = 0
		if t.procs != t.max {
			t.procs = t.max
			t.set(t.max)
		}
		return
	}
	t.quiet++
	if t.quiet >= procsQuiet && t.procs != 1 {
		t.procs = 1
		t.set(1)
	}
}

// tuneProcs runs a procTuner over hosts until the returned function is
// called, which puts GOMAXPROCS back. It does nothing unless TuneProcs is
// set and there is more than one P.
func tuneProcs(ctx context.Context, hosts func() int) (stop func()) {
	all := runtime.GOMAXPROCS(0)
	if !TuneProcs || all <= 1 {
		return func() {}
	}
	t := &procTuner{hosts: hosts, set: func(n int) { runtime.GOMAXPROCS(n) }, max: all, procs: 1}
	t.set(1)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(procsEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				t.step()
			}
		}
	}()
	return func() {
		cancel()
		<-done
		runtime.GOMAXPROCS(all)
	}
}
