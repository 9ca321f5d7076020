package gentlecrawl

import (
	"context"
	"sync"
	"time"
)

// rateGate spaces the starts of every request of the crawl, robots.txt
// included, at least 1/rate apart (Config.MaxRate): a crawl-wide budget
// that holds over any window, since no two starts come closer. It is safe
// for concurrent use; a nil gate lets everything through.
type rateGate struct {
	interval time.Duration
	mu       sync.Mutex
	next     time.Time // the earliest start of the next request
}

// newRateGate returns a gate for rate requests per second, or nil for a
// rate of 0 (no budget). The interval is rounded up by 1 %, so that the
// starts a server logs, jittered by the network, stay within the budget.
func newRateGate(rate float64) *rateGate {
	if rate <= 0 {
		return nil
	}
	return &rateGate{interval: time.Duration(float64(time.Second) / rate * 1.01)}
}

// wait blocks until the caller may start a request, or ctx ends.
func (g *rateGate) wait(ctx context.Context) error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	now := time.Now()
	slot := g.next
	if slot.Before(now) {
		slot = now
	}
	g.next = slot.Add(g.interval)
	g.mu.Unlock()
	d := time.Until(slot)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
