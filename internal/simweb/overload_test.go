package simweb

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// waitFor polls cond until it holds; the test's deadline bounds it.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if d, ok := t.Deadline(); ok && time.Until(d) < time.Second {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestOverloadHTTP hammers a host of one worker and a queue of one with
// eight concurrent clients over real connections. The service time is an
// hour, so exactly two requests are held (one served, one queued) whatever
// the machine's speed, and the six others are refused at once with 429
// and Retry-After; another host is served meanwhile. The held clients then
// give up, and the log shows every request with its status.
func TestOverloadHTTP(t *testing.T) {
	w := newWeb(t, Config{Hosts: 2, HostOptions: func(_ int, name string) HostOptions {
		if name != "a.test" {
			return HostOptions{}
		}
		return HostOptions{Capacity: &Capacity{ServiceTime: time.Hour, QueueLimit: 1, OverloadStatus: 429, RetryAfter: 7 * time.Second}}
	}})
	srv, err := w.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c := clientFor(srv.Addr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	const clients = 8
	type answer struct {
		status     int
		retryAfter string
		err        error
	}
	answers := make(chan answer, clients)
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, "GET", "http://a.test/", nil)
			resp, err := c.Do(req)
			if err != nil {
				answers <- answer{err: err}
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			answers <- answer{resp.StatusCode, resp.Header.Get("Retry-After"), nil}
		})
	}
	for range clients - 2 {
		a := <-answers
		if a.err != nil || a.status != 429 || a.retryAfter != "7" {
			t.Errorf("answer %+v, want 429 with Retry-After 7", a)
		}
	}
	m := w.Hosts()[0].Model()
	waitFor(t, "one request in service and one queued", func() bool {
		st := m.Stats()
		return st.InService == 1 && st.Queued == 1
	})
	if resp, _ := get(t, c, "http://b.test/"); resp.StatusCode != 200 {
		t.Errorf("b.test: %d", resp.StatusCode)
	}
	cancel()
	wg.Wait()
	for range 2 {
		if a := <-answers; !errors.Is(a.err, context.Canceled) {
			t.Errorf("held request: %+v", a)
		}
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	count := map[int]int{}
	for _, e := range w.Requests() {
		if e.Host == "a.test" {
			count[e.Status]++
			if e.End.Before(e.Start) {
				t.Errorf("entry %+v", e)
			}
		}
	}
	if count[429] != 6 || count[0] != 2 || len(count) != 2 {
		t.Errorf("a.test statuses in the log: %v, want 6×429 and 2×0 (client gone)", count)
	}
	if st := m.Stats(); st.Refused != 6 || st.Abandoned != 2 || st.Served != 0 || st.MaxQueued != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestAddrCapacity: hosts served on one loopback address share its
// capacity; a host on another address does not.
func TestAddrCapacity(t *testing.T) {
	if ln, err := net.Listen("tcp", "127.0.0.2:0"); err != nil {
		t.Skipf("127.0.0.2 is not bindable here: %v", err)
	} else {
		ln.Close()
	}
	w := newWeb(t, Config{
		Hosts: 4,
		// a.test holds its address's only worker for an hour.
		HostOptions: func(_ int, name string) HostOptions {
			if name != "a.test" {
				return HostOptions{}
			}
			return HostOptions{Capacity: &Capacity{ServiceTime: time.Hour}}
		},
		AddrCapacity: &Capacity{RetryAfter: 3 * time.Second},
	})
	srv, err := w.ServeLoopback(2, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	a0, a1 := srv.Addrs[0], srv.Addrs[1] // a, c on a0; b, d on a1
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://a.test/", nil)
		resp, err := clientFor(a0).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	waitFor(t, "a.test in service", func() bool { return w.AddrModel(a0).Stats().InService == 1 })

	resp, _ := get(t, clientFor(a0), "http://c.test/")
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "3" {
		t.Errorf("c.test on the busy address: %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	for _, h := range []string{"b.test", "d.test"} {
		if resp, _ := get(t, clientFor(a1), "http://"+h+"/"); resp.StatusCode != 200 {
			t.Errorf("%s on the other address: %d", h, resp.StatusCode)
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("a.test: %v", err)
	}
	srv.Close()
	if st := w.AddrModel(a0).Stats(); st.Refused != 1 || st.Abandoned != 1 {
		t.Errorf("%s stats %+v", a0, st)
	}
	if st := w.AddrModel(a1).Stats(); st.Served != 2 || st.Refused != 0 {
		t.Errorf("%s stats %+v", a1, st)
	}
	for _, e := range w.Requests() {
		if e.Host == "c.test" && (e.Status != 503 || e.Local != a0) {
			t.Errorf("c.test entry %+v", e)
		}
	}
}
