package gentlecrawl

import (
	"context"
	"time"
)

// rateGate spaces the starts of every request of the crawl, robots.txt
// included, at least 1/rate apart (Config.MaxRate): a crawl-wide budget
// that holds over any window, since no two starts come closer. It is safe
// for concurrent use; a nil gate lets everything through.
//
// Callers wait their turn one at a time, and the one whose turn it is
// waits until the interval has passed since the last start it let through,
// as measured when it let it through. (Handing out slots in advance, each
// caller then sleeping until its own, let a caller that woke late start
// close to the next one, and a second of a loaded machine held one start
// more than the budget.)
type rateGate struct {
	interval time.Duration
	turn     chan struct{} // holds the one token: the right to start next
	last     time.Time     // the last start let through; guarded by the token
}

// newRateGate returns a gate for rate requests per second, or nil for a
// rate of 0 (no budget). The interval is rounded up by 1 %, so that the
// starts a server logs, jittered by the network, stay within the budget.
func newRateGate(rate float64) *rateGate {
	if rate <= 0 {
		return nil
	}
	g := &rateGate{interval: time.Duration(float64(time.Second) / rate * 1.01), turn: make(chan struct{}, 1)}
	g.turn <- struct{}{}
	return g
}

// wait blocks until the caller may start a request, or ctx ends.
func (g *rateGate) wait(ctx context.Context) error {
	if g == nil {
		return nil
	}
	select {
	case <-g.turn:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { g.turn <- struct{}{} }()
	for {
		now := time.Now()
		next := g.last.Add(g.interval)
		if !now.Before(next) {
			g.last = now
			return nil
		}
		t := time.NewTimer(next.Sub(now))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}
