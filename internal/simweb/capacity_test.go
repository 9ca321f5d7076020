package simweb

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func newModel(t *testing.T, c Capacity) *Model {
	t.Helper()
	m, err := NewModel(c)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// closedLoop runs clients that each send requests back to back until d
// has passed, and returns every Result.
func closedLoop(t *testing.T, m *Model, clients int, d time.Duration) []Result {
	t.Helper()
	var (
		mu  sync.Mutex
		all []Result
		wg  sync.WaitGroup
	)
	end := time.Now().Add(d)
	for range clients {
		wg.Go(func() {
			for time.Now().Before(end) {
				res, err := m.Serve(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				all = append(all, res)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return all
}

// TestModelThroughput: over a long window a server completes
// Workers/ServiceTime requests per second when it is kept busy without
// being saturated, and Workers/(ServiceTime × slowdown) when requests
// keep waiting.
func TestModelThroughput(t *testing.T) {
	for _, tc := range []struct {
		name        string
		clients     int
		slowdown    float64
		wantServed  int // in 60 s
		wantLatency time.Duration
	}{
		{"one client, half capacity", 1, 2, 600, 100 * time.Millisecond},
		{"as many clients as workers", 2, 2, 1200, 100 * time.Millisecond},
		{"one waiting: no slowdown yet", 3, 2, 1200, 150 * time.Millisecond},
		{"saturated without slowdown", 6, 1, 1200, 300 * time.Millisecond},
		{"saturated, latency doubles", 4, 2, 600, 400 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := Capacity{Workers: 2, ServiceTime: 100 * time.Millisecond, SlowdownAtSaturation: tc.slowdown, QueueLimit: -1}
				if c.Rate() != 20 {
					t.Fatalf("Rate %v, want 20", c.Rate())
				}
				m := newModel(t, c)
				res := closedLoop(t, m, tc.clients, time.Minute)
				// Requests that start before the end finish after it.
				if n := len(res); n < tc.wantServed || n > tc.wantServed+tc.clients {
					t.Errorf("served %d in 60 s, want %d (+%d started at the end)", n, tc.wantServed, tc.clients)
				}
				var sum time.Duration
				for _, r := range res {
					if r.Status != 200 {
						t.Fatalf("result %+v", r)
					}
					sum += r.Wait + r.Service
				}
				// Latency, averaged over whole cycles of the clients.
				if mean := sum / time.Duration(len(res)); mean < tc.wantLatency*98/100 || mean > tc.wantLatency*102/100 {
					t.Errorf("mean latency %v, want %v", mean, tc.wantLatency)
				}
				st := m.Stats()
				if st.Served != int64(len(res)) || st.Refused != 0 || st.InService != 0 || st.Queued != 0 {
					t.Errorf("stats %+v", st)
				}
				wantUtil := 1.0
				if tc.clients < 2 {
					wantUtil = 0.5
				}
				if u := st.Utilization(); u < wantUtil-0.01 || u > wantUtil+0.001 {
					t.Errorf("utilization %.3f, want %.2f", u, wantUtil)
				}
			})
		})
	}
}

// TestModelQueue: requests arriving together are served in turn, their
// latency growing with their place in the queue, and those beyond
// QueueLimit are refused at once with the overload status and Retry-After.
func TestModelQueue(t *testing.T) {
	for _, status := range []int{0, 429} {
		synctest.Test(t, func(t *testing.T) {
			m := newModel(t, Capacity{Workers: 1, ServiceTime: time.Second, QueueLimit: 2, OverloadStatus: status, RetryAfter: 30 * time.Second})
			wantStatus := status
			if wantStatus == 0 {
				wantStatus = http.StatusServiceUnavailable
			}
			start := time.Now()
			type outcome struct {
				res     Result
				latency time.Duration
			}
			var (
				mu  sync.Mutex
				got []outcome
				wg  sync.WaitGroup
			)
			for range 5 {
				wg.Go(func() {
					res, err := m.Serve(context.Background())
					if err != nil {
						t.Error(err)
					}
					mu.Lock()
					got = append(got, outcome{res, time.Since(start)})
					mu.Unlock()
				})
			}
			synctest.Wait() // everybody has arrived; none has been served
			if st := m.Stats(); st.InService != 1 || st.Queued != 2 || st.Refused != 2 {
				t.Errorf("at 0s: %+v", st)
			}
			wg.Wait()
			slices.SortFunc(got, func(a, b outcome) int { return int(a.latency - b.latency) })
			want := []outcome{
				{Result{Status: wantStatus, RetryAfter: 30 * time.Second}, 0},
				{Result{Status: wantStatus, RetryAfter: 30 * time.Second}, 0},
				{Result{Status: 200, Service: time.Second}, time.Second},
				{Result{Status: 200, Wait: time.Second, Service: time.Second}, 2 * time.Second},
				{Result{Status: 200, Wait: 2 * time.Second, Service: time.Second}, 3 * time.Second},
			}
			if !slices.Equal(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
			st := m.Stats()
			if st.Served != 3 || st.Refused != 2 || st.MaxQueued != 2 || st.Wait != 3*time.Second || st.Busy != 3*time.Second || st.Elapsed != 3*time.Second {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// TestModelNoQueue: with the default QueueLimit nothing waits.
func TestModelNoQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newModel(t, Capacity{Workers: 2, ServiceTime: time.Second})
		var wg sync.WaitGroup
		var refused, served sync.Map
		for i := range 5 {
			wg.Go(func() {
				res, _ := m.Serve(context.Background())
				if res.Status == 200 {
					served.Store(i, time.Now())
				} else {
					refused.Store(i, res)
				}
			})
		}
		wg.Wait()
		if st := m.Stats(); st.Served != 2 || st.Refused != 3 || st.MaxQueued != 0 {
			t.Errorf("stats %+v", st)
		}
		refused.Range(func(_, v any) bool {
			if r := v.(Result); r.Status != 503 || r.RetryAfter != 0 {
				t.Errorf("refusal %+v", r)
			}
			return true
		})
	})
}

// TestModelSlowdown: the second of three simultaneous requests starts
// while the third still waits, so it is served at the slowed rate.
func TestModelSlowdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newModel(t, Capacity{ServiceTime: 100 * time.Millisecond, SlowdownAtSaturation: 2, QueueLimit: -1})
		var (
			mu  sync.Mutex
			got []time.Duration
			wg  sync.WaitGroup
		)
		start := time.Now()
		for range 3 {
			wg.Go(func() {
				res, _ := m.Serve(context.Background())
				mu.Lock()
				got = append(got, time.Since(start), res.Service)
				mu.Unlock()
			})
		}
		wg.Wait()
		ms := time.Millisecond
		// (latency, service) pairs in order of completion.
		if want := []time.Duration{100 * ms, 100 * ms, 300 * ms, 200 * ms, 400 * ms, 100 * ms}; !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
}

// TestModelJitter: service times spread over ±Jitter with the capacity
// unchanged.
func TestModelJitter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newModel(t, Capacity{ServiceTime: 100 * time.Millisecond, Jitter: 0.5, Seed: 7})
		res := closedLoop(t, m, 1, 200*time.Second)
		lo, hi := time.Hour, time.Duration(0)
		for _, r := range res {
			lo, hi = min(lo, r.Service), max(hi, r.Service)
		}
		if lo < 50*time.Millisecond || hi > 150*time.Millisecond || lo > 55*time.Millisecond || hi < 145*time.Millisecond {
			t.Errorf("service times in [%v, %v], want about [50ms, 150ms]", lo, hi)
		}
		if n := len(res); n < 1900 || n > 2100 {
			t.Errorf("served %d in 200 s, want about 2000", n)
		}
	})
}

// TestModelCancel: a client that goes away leaves the queue, or frees its
// worker for the next request at once.
func TestModelCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newModel(t, Capacity{ServiceTime: time.Hour, QueueLimit: -1})
		ctx1, cancel1 := context.WithCancel(context.Background())
		ctx2, cancel2 := context.WithCancel(context.Background())
		errs := make(chan error, 3)
		var third Result
		var wg sync.WaitGroup
		wg.Go(func() { _, err := m.Serve(ctx1); errs <- err })
		synctest.Wait()
		wg.Go(func() { _, err := m.Serve(ctx2); errs <- err })
		synctest.Wait()
		wg.Go(func() {
			var err error
			third, err = m.Serve(context.Background())
			errs <- err
		})
		synctest.Wait()
		if st := m.Stats(); st.InService != 1 || st.Queued != 2 {
			t.Fatalf("stats %+v", st)
		}
		time.Sleep(time.Minute)
		cancel2() // queued
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Errorf("queued: %v", err)
		}
		time.Sleep(time.Minute)
		cancel1() // in service
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Errorf("in service: %v", err)
		}
		wg.Wait()
		if err := <-errs; err != nil || third.Wait != 2*time.Minute || third.Service != time.Hour {
			t.Errorf("third: %+v %v", third, err)
		}
		if st := m.Stats(); st.Served != 1 || st.Abandoned != 2 || st.Busy != time.Hour+2*time.Minute {
			t.Errorf("stats %+v", st)
		}
	})
}

func TestCapacityErrors(t *testing.T) {
	for _, c := range []Capacity{
		{Workers: -1},
		{ServiceTime: -time.Second},
		{Jitter: -0.1},
		{Jitter: 1.5},
		{SlowdownAtSaturation: 0.5},
		{OverloadStatus: 200},
		{OverloadStatus: 600},
		{RetryAfter: -time.Second},
	} {
		if _, err := NewModel(c); !errors.Is(err, errConfig) {
			t.Errorf("NewModel(%+v): %v", c, err)
		}
	}
	m := newModel(t, Capacity{})
	if c := m.Capacity(); c.Workers != 1 || c.OverloadStatus != 503 || c.SlowdownAtSaturation != 1 {
		t.Errorf("defaults %+v", c)
	}
}

func TestOutageActive(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	o := Outage{Start: start, Duration: 5 * time.Minute}
	for _, tc := range []struct {
		at   time.Time
		want bool
	}{
		{start.Add(-time.Nanosecond), false},
		{start, true},
		{start.Add(5*time.Minute - time.Nanosecond), true},
		{start.Add(5 * time.Minute), false},
	} {
		if got := o.Active(tc.at); got != tc.want {
			t.Errorf("Active(%v) = %v", tc.at, got)
		}
	}
	if o.End() != start.Add(5*time.Minute) {
		t.Errorf("End %v", o.End())
	}
}

// TestOutageThroughHandler drives a Web inside a bubble, without sockets:
// a host answers 503 with Retry-After: 120 for exactly five minutes, robots.txt
// included, while another host is served.
func TestOutageThroughHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		w := newWeb(t, Config{Hosts: 2, HostOptions: func(i int, name string) HostOptions {
			if name != "a.test" {
				return HostOptions{}
			}
			return HostOptions{Outages: []Outage{{Start: t0.Add(10 * time.Second), Duration: 5 * time.Minute, RetryAfter: 120 * time.Second}}}
		}})
		check := func(at time.Duration, url string, status int, retryAfter string) {
			t.Helper()
			time.Sleep(t0.Add(at).Sub(time.Now()))
			resp := do(w, "GET", url)
			if resp.StatusCode != status || resp.Header.Get("Retry-After") != retryAfter {
				t.Errorf("%v %s: %d Retry-After %q, want %d %q", at, url, resp.StatusCode, resp.Header.Get("Retry-After"), status, retryAfter)
			}
		}
		check(0, "http://a.test/", 200, "")
		check(10*time.Second-time.Nanosecond, "http://a.test/robots.txt", 200, "")
		check(10*time.Second, "http://a.test/robots.txt", 503, "120")
		check(10*time.Second, "http://a.test/", 503, "120")
		check(10*time.Second, "http://b.test/", 200, "")
		check(310*time.Second-time.Nanosecond, "http://a.test/", 503, "120")
		check(310*time.Second, "http://a.test/", 200, "")
		log := w.Requests()
		if len(log) != 7 || log[2].Status != 503 || !log[2].Start.Equal(t0.Add(10*time.Second)) || !log[2].End.Equal(log[2].Start) {
			t.Errorf("log %+v", log)
		}
	})
}

// TestOutageAfterFirst: a window with no Start opens After the host's
// first request, however late that came, and each host keeps its own.
func TestOutageAfterFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		w := newWeb(t, Config{Hosts: 2, HostOptions: func(int, string) HostOptions {
			return HostOptions{Outages: []Outage{
				{Duration: time.Second, Status: 429},
				{After: 5 * time.Second, Duration: time.Second},
			}}
		}})
		check := func(at time.Duration, url string, status int) {
			t.Helper()
			time.Sleep(t0.Add(at).Sub(time.Now()))
			if resp := do(w, "GET", url); resp.StatusCode != status {
				t.Errorf("%v %s: %d, want %d", at, url, resp.StatusCode, status)
			}
		}
		// a.test is first asked at 1 min, b.test at 2 min.
		check(time.Minute, "http://a.test/robots.txt", 429)
		check(time.Minute+time.Second-time.Nanosecond, "http://a.test/", 429)
		check(time.Minute+time.Second, "http://a.test/", 200)
		check(time.Minute+5*time.Second, "http://a.test/", 503)
		check(time.Minute+6*time.Second, "http://a.test/", 200)
		check(2*time.Minute, "http://b.test/", 429)
		check(2*time.Minute+5*time.Second, "http://b.test/", 503)
		check(2*time.Minute+6*time.Second, "http://b.test/", 200)
	})
}

func TestRetryAfterDate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		time.Sleep(1500 * time.Millisecond) // not on a whole second
		now := time.Now()
		w := newWeb(t, Config{Hosts: 1, HostOptions: func(int, string) HostOptions {
			return HostOptions{RetryAfterDate: true, Outages: []Outage{{Start: now, Duration: time.Hour, Status: 429, RetryAfter: 90 * time.Second}}}
		}})
		resp := do(w, "GET", "http://a.test/")
		want := now.Add(90500 * time.Millisecond).UTC().Format(http.TimeFormat) // 1.5s + 90s, rounded up
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != want {
			t.Errorf("%d Retry-After %q, want %q", resp.StatusCode, resp.Header.Get("Retry-After"), want)
		}
	})
}

// TestCapacityThroughHandler drives a host with capacity through the
// handler inside a bubble: robots.txt shares the workers, the log keeps
// exact times, statuses and waits, and HostOptions.Latency comes first.
func TestCapacityThroughHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWeb(t, Config{Hosts: 2, HostOptions: func(i int, _ string) HostOptions {
			if i != 0 {
				return HostOptions{}
			}
			return HostOptions{Latency: 10 * time.Millisecond, Capacity: &Capacity{ServiceTime: time.Second, QueueLimit: 1, OverloadStatus: 429, RetryAfter: 1500 * time.Millisecond}}
		}})
		t0 := time.Now()
		var wg sync.WaitGroup
		for _, path := range []string{"/robots.txt", "/", "/", "/robots.txt"} {
			wg.Go(func() { do(w, "GET", "http://a.test"+path) })
			time.Sleep(time.Millisecond) // arrive 1ms apart, in this order
		}
		do(w, "GET", "http://b.test/") // not slowed
		wg.Wait()
		log := w.Requests()
		if len(log) != 5 {
			t.Fatalf("%d entries", len(log))
		}
		ms := time.Millisecond
		type row struct {
			path       string
			status     int
			start, end time.Duration
			wait       time.Duration
		}
		var got []row
		for _, e := range log {
			got = append(got, row{e.Host + e.Path, e.Status, e.Start.Sub(t0), e.End.Sub(t0), e.Wait})
		}
		want := []row{
			{"b.test/", 200, 4 * ms, 4 * ms, 0},
			{"a.test/", 429, 2 * ms, 12 * ms, 0},
			{"a.test/robots.txt", 429, 3 * ms, 13 * ms, 0},
			{"a.test/robots.txt", 200, 0, 1010 * ms, 0},
			{"a.test/", 200, 1 * ms, 2010 * ms, 999 * ms},
		}
		if !slices.Equal(got, want) {
			t.Errorf("log\n got %v\nwant %v", got, want)
		}
		if st := w.Hosts()[0].Model().Stats(); st.Served != 2 || st.Refused != 2 {
			t.Errorf("stats %+v", st)
		}
		if w.Hosts()[1].Model() != nil || w.AddrModel("") != nil {
			t.Error("models without capacity")
		}
	})
}

func TestHostOptionsErrors(t *testing.T) {
	for _, o := range []HostOptions{
		{Latency: -1},
		{Capacity: &Capacity{Workers: -2}},
		{Outages: []Outage{{Duration: 0}}},
		{Outages: []Outage{{Duration: time.Second, Status: 302}}},
		{Outages: []Outage{{Duration: time.Second, RetryAfter: -1}}},
		{Outages: []Outage{{Duration: time.Second, After: -1}}},
	} {
		_, err := New(Config{Hosts: 3, HostOptions: func(int, string) HostOptions { return o }})
		if !errors.Is(err, errConfig) {
			t.Errorf("%+v: %v", o, err)
		}
	}
	if _, err := New(Config{AddrCapacity: &Capacity{Jitter: 2}}); !errors.Is(err, errConfig) {
		t.Errorf("AddrCapacity: %v", err)
	}
}
