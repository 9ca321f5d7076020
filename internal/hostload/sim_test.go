package hostload_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/hostload"
	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

// These tests run the scheduler and the per-host load control the way the
// crawler does (acquire a host, make one request, observe it, release the
// host at the decided time) against simweb's server model, in simulated
// time: minutes of crawling in milliseconds, with exact timelines.

type simHost struct {
	name  string
	floor time.Duration
	why   string
	// serve answers one request; it may block for the service time.
	serve func(ctx context.Context) (status int, retryAfter time.Duration, latency time.Duration)
}

type simHit struct {
	host       string
	start, end time.Time
	status     int
	retryAfter time.Duration
}

// simulate crawls hosts with workers workers for d of simulated time and
// returns the server-side log.
func simulate(t *testing.T, hosts []simHost, workers int, d time.Duration) []simHit {
	t.Helper()
	sched := hostload.NewScheduler(hostload.LoadConfig{})
	byName := map[string]simHost{}
	for _, h := range hosts {
		byName[h.name] = h
		sched.Add(h.name, 1<<30) // never runs out of URLs
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var mu sync.Mutex
	var log []simHit
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				name, err := sched.Acquire(ctx)
				if err != nil {
					return
				}
				h := byName[name]
				start := time.Now()
				status, ra, lat := h.serve(ctx)
				if ctx.Err() != nil {
					sched.Release(name, 0, time.Now(), hostload.ReasonDelay)
					return
				}
				end := time.Now()
				mu.Lock()
				log = append(log, simHit{name, start, end, status, ra})
				mu.Unlock()
				o := hostload.Outcome{Start: start, End: end, Latency: lat, Status: status}
				if ra > 0 {
					o.RetryAfter = strconv.Itoa(int(ra / time.Second))
				}
				dec := sched.Load(name, h.floor, h.why).Observe(o)
				sched.Release(name, 1, dec.Next, dec.Reason)
			}
		})
	}
	wg.Wait()
	return log
}

func modelServe(m *simweb.Model) func(ctx context.Context) (int, time.Duration, time.Duration) {
	return func(ctx context.Context) (int, time.Duration, time.Duration) {
		res, err := m.Serve(ctx)
		if err != nil {
			return 0, 0, 0
		}
		return res.Status, res.RetryAfter, res.Wait + res.Service
	}
}

// A host with 20 requests/s of capacity whose latency doubles at saturation,
// and no floor: host load alone decides the pace.
func capacityHost() simweb.Capacity {
	return simweb.Capacity{Workers: 1, ServiceTime: 50 * time.Millisecond, SlowdownAtSaturation: 2,
		QueueLimit: 4, RetryAfter: 5 * time.Second}
}

func TestSimCapacityLimitedHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, err := simweb.NewModel(capacityHost())
		if err != nil {
			t.Fatal(err)
		}
		log := simulate(t, []simHost{{name: "a", why: "no floor", serve: modelServe(m)}}, 4, 60*time.Second)
		var ok, refused int
		var lastMinute int
		for _, h := range log {
			if h.status == 200 {
				ok++
				if h.start.Sub(log[0].start) >= 30*time.Second {
					lastMinute++
				}
			} else {
				refused++
			}
		}
		rate := float64(lastMinute) / 30 // requests/s over the last 30 s
		t.Logf("host load: %d served, %d refused in 60 s; %.1f req/s over the last 30 s (capacity 20)", ok, refused, rate)
		if rate < 0.8*20 {
			t.Errorf("achieved %.1f req/s, want ≥ 80%% of the 20 req/s capacity", rate)
		}
		if refused*100 > len(log) {
			t.Errorf("%d of %d requests refused, want ≤ 1%%", refused, len(log))
		}
	})
}

// TestSimFixedConcurrencyForComparison measures, for comparison, a crawler
// without host load: four requests at a time, back to back. It must do
// worse than host load on the same model, or TestSimCapacityLimitedHost
// would prove nothing.
func TestSimFixedConcurrencyForComparison(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, _ := simweb.NewModel(capacityHost())
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for ctx.Err() == nil {
					m.Serve(ctx)
				}
			})
		}
		wg.Wait()
		st := m.Stats()
		t.Logf("fixed concurrency 4: %d served (%.1f req/s), %d refused", st.Served, float64(st.Served)/60, st.Refused)
		if float64(st.Served)/60 >= 0.8*20 {
			t.Errorf("fixed concurrency reached %.1f req/s: the model does not punish overload, so the host-load test proves nothing", float64(st.Served)/60)
		}
	})
}

// TestSimRetryAfterOutage: a host answers 503 with Retry-After: 120 for five
// minutes. No request reaches it inside an announced window, and the other
// hosts are crawled at their own pace meanwhile.
func TestSimRetryAfterOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		outage := simweb.Outage{Start: t0.Add(10 * time.Second), Duration: 5 * time.Minute, Status: 503, RetryAfter: 120 * time.Second}
		fast := func(ctx context.Context) (int, time.Duration, time.Duration) {
			time.Sleep(20 * time.Millisecond)
			return 200, 0, 20 * time.Millisecond
		}
		hosts := []simHost{
			{name: "down", floor: time.Second, why: "delay 1s", serve: func(ctx context.Context) (int, time.Duration, time.Duration) {
				if outage.Active(time.Now()) {
					return outage.Status, outage.RetryAfter, 0
				}
				return fast(ctx)
			}},
			{name: "b", floor: time.Second, why: "delay 1s", serve: fast},
			{name: "c", floor: time.Second, why: "delay 1s", serve: fast},
		}
		log := simulate(t, hosts, 2, 10*time.Minute)
		var windowEnd time.Time
		counts := map[string]int{}
		for _, h := range log {
			if h.host != "down" {
				if h.start.After(outage.Start) && h.start.Before(outage.End()) {
					counts[h.host]++
				}
				continue
			}
			if h.start.Before(windowEnd) {
				t.Errorf("request to the host at %v, inside the Retry-After window ending %v", h.start.Sub(t0), windowEnd.Sub(t0))
			}
			if h.status == 503 {
				windowEnd = h.end.Add(h.retryAfter)
			}
		}
		recovered := false
		for _, h := range log {
			if h.host == "down" && h.status == 200 && h.start.After(outage.End()) {
				recovered = true
			}
		}
		if !recovered {
			t.Error("the host was not crawled again after the outage")
		}
		// 300 s of outage at one request per ~1.02 s: the others keep pace.
		for _, h := range []string{"b", "c"} {
			if counts[h] < 280 {
				t.Errorf("host %s got %d requests during the outage, want its usual pace (about 290)", h, counts[h])
			}
		}
	})
}

// TestSimCrawlDelayTen: Crawl-delay 10 on a fast host over an hour: never a
// request sooner than 10 s after the previous one, and no idle waste (at
// least 95% of one request per 10 s).
func TestSimCrawlDelayTen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		serve := func(ctx context.Context) (int, time.Duration, time.Duration) {
			time.Sleep(50 * time.Millisecond)
			return 200, 0, 50 * time.Millisecond
		}
		log := simulate(t, []simHost{{name: "a", floor: 10 * time.Second, why: "Crawl-delay 10s", serve: serve}}, 4, time.Hour)
		for i := 1; i < len(log); i++ {
			if gap := log[i].start.Sub(log[i-1].start); gap < 10*time.Second {
				t.Fatalf("request %d started %v after the previous one, want ≥ 10s", i, gap)
			}
		}
		if want := 0.95 * 360; float64(len(log)) < want {
			t.Errorf("%d requests in an hour, want ≥ %.0f (95%% of one per 10 s)", len(log), want)
		}
	})
}
