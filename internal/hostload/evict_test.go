package hostload

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// pushBack takes host, held, through a few answers and a refusal, so that
// its Load has a congestion event; it returns when the host may be asked
// again. The refusal asks for retryAfter ("" for none).
func pushBack(t *testing.T, s *Scheduler, host, retryAfter string) Decision {
	t.Helper()
	l := s.Load(host, 0, "")
	var d Decision
	for i := range 4 {
		start := time.Now()
		time.Sleep(10 * time.Millisecond)
		o := Outcome{Start: start, End: time.Now(), Latency: 10 * time.Millisecond, Status: 200}
		if i == 3 {
			o.Status, o.RetryAfter = 503, retryAfter
		}
		d = l.Observe(o)
		if i < 3 {
			time.Sleep(time.Until(d.Next))
		}
	}
	if l.Memo() == nil {
		t.Fatalf("%s: no congestion event after a refusal", host)
	}
	return d
}

// take acquires host, which must be the one due.
func take(t *testing.T, s *Scheduler, host string) {
	t.Helper()
	got, err := s.Acquire(t.Context())
	if err != nil || got != host {
		t.Fatalf("Acquire = %q, %v; want %s", got, err, host)
	}
}

// TestIdleHostsForgotten: the scheduler forgets hosts with no work once
// their next allowed time has passed, so that what it keeps is bounded by
// the hosts with work or a wait, however many hosts the crawl has met. A
// pause still in force (a Retry-After) is never forgotten, and what a
// forgotten host's Load learned of its rate comes back with its next work.
func TestIdleHostsForgotten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewScheduler(LoadConfig{})
		s.SetIdleSweep(8, time.Second)

		// A host that asked for an hour's pause, then ran out of work.
		s.Add("paused.test", 1)
		take(t, s, "paused.test")
		d := pushBack(t, s, "paused.test", "3600")
		if until := time.Until(d.Next); until < 59*time.Minute {
			t.Fatalf("Retry-After 3600 paused the host for %v", until)
		}
		s.Release("paused.test", 1, d.Next, d.Reason)
		// A host that pushed back and ran out of work, due again soon.
		s.Add("slowed.test", 1)
		take(t, s, "slowed.test")
		pushBack(t, s, "slowed.test", "")
		memo := s.Load("slowed.test", 0, "").Memo()
		s.Release("slowed.test", 1, time.Now(), ReasonDelay)

		// Many hosts come and go.
		const many = 5000
		for i := range many {
			h := fmt.Sprintf("h%d.test", i)
			s.Add(h, 1)
			take(t, s, h)
			s.Load(h, 0, "")
			s.Release(h, 1, time.Now(), ReasonDelay)
			if i%1000 == 999 {
				time.Sleep(time.Second) // the sweeps' pace
			}
		}
		time.Sleep(2 * time.Second)
		s.Add("last.test", 1) // a new host sweeps
		s.mu.Lock()
		kept, memos := len(s.mu.hosts), len(s.mu.memos)
		_, paused := s.mu.hosts["paused.test"]
		_, slowed := s.mu.hosts["slowed.test"]
		s.mu.Unlock()
		if kept > 3 {
			t.Errorf("%d hosts kept after %d came and went, want the paused one and the new one", kept, many)
		}
		if !paused {
			t.Fatal("a host forgotten during a Retry-After pause")
		}
		if slowed || memos != 1 {
			t.Errorf("slowed host kept %v, %d rate memos kept; want it forgotten and its memo kept", slowed, memos)
		}

		// The paused host gets work: not before its pause ends.
		take(t, s, "last.test")
		s.Release("last.test", 1, time.Now(), ReasonDelay)
		s.Add("paused.test", 1)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Minute)
		got, err := s.Acquire(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire during the pause = %q, %v", got, err)
		}
		take(t, s, "paused.test")
		if early := d.Next.Sub(time.Now()); early > 0 {
			t.Errorf("paused host handed out %v before its Retry-After ran out", early)
		}
		s.Release("paused.test", 1, time.Now(), ReasonDelay)

		// The slowed host gets work: its new Load goes on from the rate
		// learned before it was forgotten.
		s.Add("slowed.test", 1)
		take(t, s, "slowed.test")
		got2 := s.Load("slowed.test", 0, "").Memo()
		if got2 == nil || got2.Ceil != memo.Ceil || !got2.GrowFrom.Equal(memo.GrowFrom) {
			t.Errorf("recalled memo %+v, want %+v", got2, memo)
		}
		s.Release("slowed.test", 1, time.Now(), ReasonDelay)
	})
}

// TestRateMemosBounded: the rate memos of forgotten hosts are bounded in
// number, and dropped once old enough to say nothing.
func TestRateMemosBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewScheduler(LoadConfig{})
		s.SetIdleSweep(1<<30, 0) // no sweep until every host is idle
		for i := range maxMemos + 100 {
			h := fmt.Sprintf("h%d.test", i)
			s.Add(h, 1)
			take(t, s, h)
			l := s.Load(h, 0, "")
			now := time.Now()
			l.Observe(Outcome{Start: now, End: now, Status: 200})
			l.Observe(Outcome{Start: now, End: now, Status: 200})
			l.Observe(Outcome{Start: now, End: now, Status: 503})
			if l.Memo() == nil {
				t.Fatal("no congestion event after a refusal")
			}
			s.Release(h, 1, now, ReasonDelay)
		}
		s.SetIdleSweep(1, 0)
		s.Add("next.test", 1)
		s.mu.Lock()
		n := len(s.mu.memos)
		s.mu.Unlock()
		if n != maxMemos {
			t.Errorf("%d rate memos kept, want the bound %d", n, maxMemos)
		}
		time.Sleep(memoFresh + 3*maxCycle)
		s.Add("later.test", 1)
		s.mu.Lock()
		n = len(s.mu.memos)
		s.mu.Unlock()
		if n != 0 {
			t.Errorf("%d rate memos kept past memoFresh", n)
		}
	})
}

// TestIdleHostsForgottenAllKnown: hosts all known from the start (a crawl
// of its seeds' hosts) are forgotten once idle too, though no new host
// comes to sweep.
func TestIdleHostsForgottenAllKnown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewScheduler(LoadConfig{})
		s.SetIdleSweep(8, time.Second)
		const hosts = 100
		for i := range hosts + 1 {
			s.Add(fmt.Sprintf("h%03d.test", i), 1)
		}
		for i := range hosts {
			take(t, s, fmt.Sprintf("h%03d.test", i))
			s.Release(fmt.Sprintf("h%03d.test", i), 1, time.Now(), ReasonDelay)
		}
		time.Sleep(2 * time.Second)
		take(t, s, fmt.Sprintf("h%03d.test", hosts))
		s.Release(fmt.Sprintf("h%03d.test", hosts), 1, time.Now().Add(time.Second), ReasonDelay)
		s.mu.Lock()
		kept := len(s.mu.hosts)
		s.mu.Unlock()
		if kept != 1 {
			t.Errorf("%d of %d idle hosts kept, want the one still in its gap", kept, hosts+1)
		}
	})
}
