package hostload

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestSchedulerTimeline runs three hosts with different gaps through two
// workers and checks the server-side view: one request in flight per host,
// never a gap below the host's delay, and no worker idle while a host is due.
func TestSchedulerTimeline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewScheduler(LoadConfig{})
		gaps := map[string]time.Duration{"a": time.Second, "b": 2 * time.Second, "c": 500 * time.Millisecond}
		for _, h := range []string{"a", "b", "c"} {
			s.Add(h, 3)
		}
		start := time.Now()
		var mu sync.Mutex
		var log []string
		last := map[string]time.Time{}
		var wg sync.WaitGroup
		for w := 0; w < 2; w++ {
			wg.Go(func() {
				for {
					h, err := s.Acquire(t.Context())
					if errors.Is(err, ErrDone) {
						return
					}
					if err != nil {
						t.Error(err)
						return
					}
					now := time.Now()
					mu.Lock()
					if prev, ok := last[h]; ok && now.Sub(prev) < gaps[h] {
						t.Errorf("host %s fetched %v after its previous request, want ≥ %v", h, now.Sub(prev), gaps[h])
					}
					log = append(log, fmt.Sprintf("%4.1fs %s", now.Sub(start).Seconds(), h))
					mu.Unlock()
					time.Sleep(100 * time.Millisecond) // the fetch
					mu.Lock()
					last[h] = time.Now()
					mu.Unlock()
					s.Release(h, 1, time.Now().Add(gaps[h]), ReasonDelay)
				}
			})
		}
		wg.Wait()
		// Two workers given hosts at the same instant log them in either
		// order: the timeline is sorted, by time and then host.
		slices.Sort(log)
		got := strings.Join(log, "\n")
		want := strings.Join([]string{
			" 0.0s a", " 0.0s b", " 0.1s c", " 0.7s c", " 1.1s a", " 1.3s c", " 2.1s b", " 2.2s a", " 4.2s b",
		}, "\n")
		if got != want {
			t.Errorf("timeline:\n%s\nwant:\n%s", got, want)
		}
	})
}

func TestSchedulerDeferredHostsDoNotKeepCrawlAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewScheduler(LoadConfig{})
		s.Add("broken", 5)
		s.Add("fine", 1)
		seen := map[string]int{}
		for {
			h, err := s.Acquire(t.Context())
			if errors.Is(err, ErrDone) {
				break
			}
			seen[h]++
			if h == "broken" {
				s.Defer(h, 0, time.Now().Add(time.Minute), ReasonRobots)
				continue
			}
			time.Sleep(10 * time.Second)
			s.Release(h, 1, time.Now(), ReasonDelay)
		}
		if seen["fine"] != 1 {
			t.Errorf("fine host acquired %d times, want 1", seen["fine"])
		}
		if seen["broken"] != 1 {
			t.Errorf("deferred host acquired %d times, want 1 (retry only while other work keeps the crawl alive)", seen["broken"])
		}
	})
}

func TestSchedulerDeferredRetriedWhileCrawlGoesOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewScheduler(LoadConfig{})
		s.Add("broken", 1)
		s.Add("slow", 3)
		var order []string
		for {
			h, err := s.Acquire(t.Context())
			if errors.Is(err, ErrDone) {
				break
			}
			order = append(order, h)
			switch {
			case h == "broken" && len(order) == 1:
				s.Defer(h, 0, time.Now().Add(time.Minute), ReasonRobots)
			case h == "broken":
				s.Release(h, 1, time.Now(), ReasonDelay)
			default:
				s.Release(h, 1, time.Now().Add(50*time.Second), ReasonDelay)
			}
		}
		want := "broken slow slow broken slow"
		if got := strings.Join(order, " "); got != want {
			t.Errorf("order %q, want %q", got, want)
		}
	})
}

func TestSchedulerAcquireHonoursContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewScheduler(LoadConfig{})
		s.Add("a", 2)
		h, _ := s.Acquire(t.Context())
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		// a is held: Acquire waits, then gives up with the context.
		if _, err := s.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire = %v, want deadline exceeded", err)
		}
		s.Release(h, 1, time.Now().Add(time.Hour), ReasonDelay)
		snap := s.Snapshot()
		if snap.Waiting[ReasonDelay] != 1 || snap.Pending != 1 || snap.Held != 0 {
			t.Errorf("snapshot %+v", snap)
		}
	})
}

// TestSchedulerRemembersGapOfIdleHost: a host whose queue ran empty keeps its
// next allowed time; a URL found for it a moment later waits for the gap.
func TestSchedulerRemembersGapOfIdleHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewScheduler(LoadConfig{})
		s.Add("a", 1)
		s.Add("b", 1)
		h, _ := s.Acquire(t.Context())
		s.Release(h, 1, time.Now().Add(5*time.Second), ReasonDelay) // a: done, next in 5s
		h, _ = s.Acquire(t.Context())
		time.Sleep(time.Second)
		s.Add("a", 1) // b's page linked to a
		s.Release(h, 1, time.Now().Add(5*time.Second), ReasonDelay)
		start := time.Now()
		h, err := s.Acquire(t.Context())
		if err != nil || h != "a" {
			t.Fatalf("Acquire = %q, %v", h, err)
		}
		if waited := time.Since(start); waited != 4*time.Second {
			t.Errorf("a handed out after %v, want 4s (the rest of its gap)", waited)
		}
	})
}

func TestSchedulerTryAcquire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewScheduler(LoadConfig{})
		s.Add("a", 1)
		if ok, _ := s.TryAcquire("elsewhere"); !ok {
			t.Fatal("an unknown host should be free")
		}
		if ok, _ := s.TryAcquire("elsewhere"); ok {
			t.Fatal("a held host was handed out twice")
		}
		s.Release("elsewhere", 0, time.Now().Add(3*time.Second), ReasonDelay)
		if ok, retry := s.TryAcquire("elsewhere"); ok || !retry.Equal(time.Now().Add(3*time.Second)) {
			t.Fatalf("TryAcquire inside the gap = %v, %v; want false and the end of the gap", ok, retry)
		}
		// A borrowed host with work is parked again on release.
		if ok, _ := s.TryAcquire("a"); !ok {
			t.Fatal("due host a not borrowed")
		}
		s.Release("a", 0, time.Now().Add(time.Second), ReasonDelay)
		start := time.Now()
		if h, err := s.Acquire(t.Context()); h != "a" || err != nil || time.Since(start) != time.Second {
			t.Fatalf("Acquire = %q, %v after %v", h, err, time.Since(start))
		}
	})
}

func TestMargin(t *testing.T) {
	for _, tt := range []struct{ gap, want time.Duration }{
		{0, 0},
		{10 * time.Millisecond, 5 * time.Millisecond},
		{100 * time.Millisecond, 30 * time.Millisecond},
		{time.Second, 30 * time.Millisecond},
		{5 * time.Second, 100 * time.Millisecond},
		{10 * time.Second, 200 * time.Millisecond},
		{time.Minute, 200 * time.Millisecond},
	} {
		if got := margin(tt.gap); got != tt.want {
			t.Errorf("margin(%v) = %v, want %v", tt.gap, got, tt.want)
		}
	}
}

// TestSchedulerSharesAnAddress: hosts at one IP address never have more than
// MaxPerAddr requests in flight together; hosts elsewhere are not held up.
func TestSchedulerSharesAnAddress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewScheduler(LoadConfig{})
		shared := []string{"a", "b", "c", "d"}
		for _, h := range append(shared, "elsewhere") {
			s.Add(h, 3)
		}
		// First turns: addresses are learnt from the first requests.
		for range 5 {
			h, _ := s.Acquire(t.Context())
			addr := "10.0.0.1"
			if h == "elsewhere" {
				addr = "10.0.0.2"
			}
			s.SetAddr(h, addr)
			s.Release(h, 1, time.Now(), ReasonDelay)
		}
		var mu sync.Mutex
		inFlight, maxShared, other := 0, 0, 0
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				for {
					h, err := s.Acquire(t.Context())
					if err != nil {
						return
					}
					mu.Lock()
					if h == "elsewhere" {
						other++
					} else {
						inFlight++
						maxShared = max(maxShared, inFlight)
					}
					mu.Unlock()
					time.Sleep(100 * time.Millisecond)
					mu.Lock()
					if h != "elsewhere" {
						inFlight--
					}
					mu.Unlock()
					s.Release(h, 1, time.Now(), ReasonDelay)
				}
			})
		}
		wg.Wait()
		if maxShared != 2 {
			t.Errorf("at most %d requests in flight to the shared address, want exactly 2 (the default)", maxShared)
		}
		if other != 2 {
			t.Errorf("the host at another address got %d turns, want 2", other)
		}
	})
}
