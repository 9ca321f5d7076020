package simweb

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// clientFor returns a client that sends every connection to addr,
// whatever the URL's host, as --connect-to does.
func clientFor(addr string) *http.Client {
	d := &net.Dialer{}
	return &http.Client{
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, addr)
			},
			DisableCompression: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func get(t *testing.T, c *http.Client, url string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func TestLogEntries(t *testing.T) {
	var jsonLog syncBuffer
	tick := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	var mu sync.Mutex
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		tick = tick.Add(time.Millisecond)
		return tick
	}
	w := newWeb(t, Config{Hosts: 2, Log: &jsonLog, Now: now})
	srv, err := w.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c := clientFor(srv.Addr)
	resp, b := get(t, c, "http://b.test/robots.txt?x=1",
		"User-Agent", "gentlecrawl/1.0", "From", "ops@example.org", "Accept", "text/plain",
		"Accept-Encoding", "gzip", "If-None-Match", `"e"`, "If-Modified-Since", "Mon, 02 Jan 2006 15:04:05 GMT",
		"Cookie", "session=1")
	if resp.StatusCode != 404 { // the query makes it another resource
		t.Fatalf("status %d", resp.StatusCode)
	}
	get(t, c, "http://a.test/", "Accept-Encoding", "gzip")
	if err := w.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	log := w.Requests()
	if len(log) != 2 {
		t.Fatalf("%d entries", len(log))
	}
	// The log is in the order the exchanges ended, and the first one's
	// handler may finish after the second exchange: find each by host.
	if log[0].Host != "b.test" {
		log[0], log[1] = log[1], log[0]
	}
	e := log[0]
	want := LogEntry{
		Start: e.Start, End: e.End, Remote: e.Remote,
		Method: "GET", Host: "b.test", Path: "/robots.txt?x=1", Status: 404, Bytes: int64(len(b)),
		Local: srv.Addr, UserAgent: "gentlecrawl/1.0", From: "ops@example.org", Accept: "text/plain",
		AcceptEncoding: "gzip", IfNoneMatch: `"e"`, IfModifiedSince: "Mon, 02 Jan 2006 15:04:05 GMT", Cookie: "session=1",
	}
	if e != want {
		t.Errorf("entry\n got %+v\nwant %+v", e, want)
	}
	if !e.End.After(e.Start) || !strings.HasPrefix(e.Remote, "127.0.0.1:") {
		t.Errorf("times %v..%v remote %q", e.Start, e.End, e.Remote)
	}
	if log[1].ContentEncoding != "gzip" || log[1].Status != 200 || log[1].Bytes == 0 {
		t.Errorf("second entry %+v", log[1])
	}

	lines := strings.Split(strings.TrimSpace(jsonLog.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d JSON lines", len(lines))
	}
	if !strings.Contains(lines[0], `"b.test"`) {
		lines[0], lines[1] = lines[1], lines[0]
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"start", "end", "method", "host", "path", "status", "bytes", "remote", "local", "user_agent", "from", "accept", "accept_encoding", "content_encoding", "if_none_match", "if_modified_since", "cookie"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON line lacks %q: %s", k, lines[0])
		}
	}
	if m["start"] != "2026-01-02T03:04:05.0010006Z" {
		t.Errorf("start %v, want RFC 3339 with nanoseconds", m["start"])
	}
	var back LogEntry
	if err := json.Unmarshal([]byte(lines[0]), &back); err != nil || back != e {
		t.Errorf("round trip: %v\n got %+v\nwant %+v", err, back, e)
	}

	w.ResetLog()
	if n := len(w.Requests()); n != 0 {
		t.Errorf("%d entries after ResetLog", n)
	}
}

// TestConcurrentLog drives many clients at once; run it with -race. Every
// request appears once in the log, with Start ≤ End, and the JSON lines
// are whole.
func TestConcurrentLog(t *testing.T) {
	var jsonLog syncBuffer
	w := newWeb(t, Config{Hosts: 6, PagesPerHost: 10, Log: &jsonLog})
	srv, err := w.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c := clientFor(srv.Addr)
	var wg sync.WaitGroup
	const workers, each = 8, 20
	for g := range workers {
		wg.Go(func() {
			for k := range each {
				h := w.Hosts()[(g+k)%6]
				res := h.Resources()
				url := h.URL(res[k%len(res)].Path)
				req, _ := http.NewRequest("GET", url, nil)
				if k%2 == 0 {
					req.Header.Set("Accept-Encoding", "gzip")
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	if err := w.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	log := w.Requests()
	if len(log) != workers*each {
		t.Fatalf("%d entries, want %d", len(log), workers*each)
	}
	for _, e := range log {
		if e.End.Before(e.Start) || e.Status != 200 {
			t.Errorf("bad entry %+v", e)
		}
	}
	sc := bufio.NewScanner(strings.NewReader(jsonLog.String()))
	n := 0
	for sc.Scan() {
		var e LogEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		n++
	}
	if n != workers*each {
		t.Errorf("%d JSON lines", n)
	}
}

func TestStartAndConnectTo(t *testing.T) {
	w := newWeb(t, Config{Hosts: 3})
	srv, err := w.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a.test:80:" + srv.Addr, "b.test:80:" + srv.Addr, "c.test:80:" + srv.Addr}
	if got := srv.ConnectTo(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ConnectTo %v, want %v", got, want)
	}
	if got := srv.CatchAll(); got != "::"+srv.Addr {
		t.Errorf("CatchAll %q", got)
	}
	if resp, _ := get(t, clientFor(srv.Addr), "http://c.test/"); resp.StatusCode != 200 {
		t.Errorf("status %d", resp.StatusCode)
	}
	if err := srv.Close(); err != nil {
		t.Error(err)
	}
	if _, err := net.DialTimeout("tcp", srv.Addr, time.Second); err == nil {
		t.Error("listener still open after Close")
	}
	srv.Close() // idempotent
}

func TestServeLoopback(t *testing.T) {
	if ln, err := net.Listen("tcp", "127.0.0.2:0"); err != nil {
		t.Skipf("127.0.0.2 is not bindable here: %v", err)
	} else {
		ln.Close()
	}
	w := newWeb(t, Config{Hosts: 5})
	srv, err := w.ServeLoopback(3, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if len(srv.Addrs) != 3 {
		t.Fatalf("Addrs %v", srv.Addrs)
	}
	_, port, _ := net.SplitHostPort(srv.Addr)
	for i, a := range srv.Addrs {
		if want := fmt.Sprintf("127.0.0.%d:%s", i+2, port); a != want {
			t.Errorf("Addrs[%d] = %s, want %s", i, a, want)
		}
	}
	if _, err := w.ServeLoopback(2, 0); err == nil {
		t.Error("second ServeLoopback succeeded")
	}
	ct := srv.ConnectTo()
	for i, h := range w.Hosts() {
		if h.Addr != srv.Addrs[i%3] {
			t.Errorf("%s.Addr = %s, want %s", h.Name, h.Addr, srv.Addrs[i%3])
		}
		if want := h.Name + ":80:" + h.Addr; ct[i] != want {
			t.Errorf("ConnectTo[%d] = %s, want %s", i, ct[i], want)
		}
		for _, a := range srv.Addrs {
			resp, _ := get(t, clientFor(a), h.URL("/"))
			want := 200
			if a != h.Addr {
				want = http.StatusMisdirectedRequest
			}
			if resp.StatusCode != want {
				t.Errorf("%s via %s: status %d, want %d", h.Name, a, resp.StatusCode, want)
			}
		}
	}
	// The loopback assignment does not apply to another listener.
	main, err := w.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer main.Close()
	if resp, _ := get(t, clientFor(main.Addr), "http://a.test/"); resp.StatusCode != 200 {
		t.Errorf("main listener: status %d", resp.StatusCode)
	}
	w.Drain(context.Background())
	for _, e := range w.Requests() {
		if e.Status == 200 && e.Local != w.Host(e.Host).Addr && e.Local != main.Addr {
			t.Errorf("served %s on %s", e.Host, e.Local)
		}
	}
	srv.Close()
	srv2, err := w.ServeLoopback(1, 0)
	if err != nil {
		t.Fatalf("ServeLoopback after Close: %v", err)
	}
	srv2.Close()
}
