package hostload

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// benchHosts is the number of hosts parked in the scheduler during the
// benchmarks: the size of a broad crawl's working set.
const benchHosts = 100_000

// parkedScheduler returns a scheduler holding n hosts, each with work
// queued and parked until next.
func parkedScheduler(b *testing.B, n int, next func(i int) time.Time) (*Scheduler, []string) {
	b.Helper()
	s := NewScheduler(LoadConfig{})
	hosts := make([]string, n)
	for i := range hosts {
		hosts[i] = "https://host" + strconv.Itoa(i) + ".example"
		s.Add(hosts[i], 1<<30)
	}
	// Take every host once so that Release parks it at the wanted time.
	ctx := context.Background()
	held := make([]string, 0, n)
	for range n {
		h, err := s.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		held = append(held, h)
	}
	idx := make(map[string]int, n)
	for i, h := range hosts {
		idx[h] = i
	}
	for _, h := range held {
		s.Release(h, 0, next(idx[h]), ReasonDelay)
	}
	return s, hosts
}

// BenchmarkAcquireRelease measures one scheduling decision: an Acquire of a
// due host and the Release that parks it again, with 100,000 hosts in the
// heap.
//
//   - hot: every other host is parked an hour ahead; one host is cycled and
//     is due again at once (the heap's root each time).
//   - round-robin: every host is due; each Release parks the host at now,
//     behind all the others, so each Acquire takes the host parked longest
//     ago and each Release sifts through the whole depth of the heap.
//   - parallel: as round-robin, from GOMAXPROCS goroutines at once (lock
//     contention included).
func BenchmarkAcquireRelease(b *testing.B) {
	ctx := context.Background()

	b.Run("hot/hosts=100000", func(b *testing.B) {
		later := time.Now().Add(time.Hour)
		s, _ := parkedScheduler(b, benchHosts-1, func(int) time.Time { return later })
		s.Add("https://hot.example", 1<<30)
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			h, err := s.Acquire(ctx)
			if err != nil {
				b.Fatal(err)
			}
			s.Release(h, 1, time.Time{}, ReasonDelay)
		}
	})

	b.Run("round-robin/hosts=100000", func(b *testing.B) {
		s, _ := parkedScheduler(b, benchHosts, func(int) time.Time { return time.Time{} })
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			h, err := s.Acquire(ctx)
			if err != nil {
				b.Fatal(err)
			}
			s.Release(h, 1, time.Now(), ReasonDelay)
		}
	})

	b.Run("parallel/hosts=100000", func(b *testing.B) {
		s, _ := parkedScheduler(b, benchHosts, func(int) time.Time { return time.Time{} })
		var fails atomic.Int64
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				h, err := s.Acquire(ctx)
				if err != nil {
					fails.Add(1)
					return
				}
				s.Release(h, 1, time.Now(), ReasonDelay)
			}
		})
		if n := fails.Load(); n > 0 {
			b.Fatalf("%d Acquire failures", n)
		}
	})
}

// BenchmarkAcquireWait measures an Acquire that has to wait: the only
// host is parked 1µs ahead, so Acquire arms its timer and sleeps. It shows
// the cost of the waiting path, timer included, which the due path avoids.
func BenchmarkAcquireWait(b *testing.B) {
	ctx := context.Background()
	s := NewScheduler(LoadConfig{})
	s.Add("https://only.example", 1<<30)
	b.ReportAllocs()
	for b.Loop() {
		h, err := s.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		s.Release(h, 1, time.Now().Add(time.Microsecond), ReasonDelay)
	}
}
