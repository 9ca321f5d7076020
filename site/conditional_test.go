package site_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/site"
)

// page is a record a handler renders, changed by edit.
type page struct {
	mu      sync.Mutex
	version int
	updated time.Time
	body    string
}

func (p *page) validators() site.Validators {
	p.mu.Lock()
	defer p.mu.Unlock()
	return site.Validators{ETag: site.ETagOf("page", p.version), LastModified: p.updated}
}

func (p *page) edit(body string, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.version++
	p.body, p.updated = body, at
}

// TestConditionalOverHTTP makes the requests a crawler makes, with Go's
// client against a real server: a first visit, revisits with the
// validators it kept, and a revisit after the page changed.
func TestConditionalOverHTTP(t *testing.T) {
	p := &page{version: 1, updated: time.Now().Add(-time.Hour), body: "first"}
	var renders atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		if site.Conditional(w, r, p.validators()) {
			return
		}
		renders.Add(1)
		p.mu.Lock()
		body := p.body
		p.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, body)
	}))
	defer srv.Close()

	get := func(method string, header ...string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(b)
	}

	first, body := get("GET")
	etag, lm := first.Header.Get("ETag"), first.Header.Get("Last-Modified")
	if first.StatusCode != 200 || body != "first" || etag == "" || lm == "" {
		t.Fatalf("first visit: %d %q ETag %q Last-Modified %q", first.StatusCode, body, etag, lm)
	}

	for _, tt := range []struct {
		name   string
		method string
		header []string
	}{
		{"both validators", "GET", []string{"If-None-Match", etag, "If-Modified-Since", lm}},
		{"If-None-Match alone", "GET", []string{"If-None-Match", etag}},
		{"If-Modified-Since alone", "GET", []string{"If-Modified-Since", lm}},
		{"HEAD", "HEAD", []string{"If-None-Match", etag}},
	} {
		resp, body := get(tt.method, tt.header...)
		if resp.StatusCode != 304 || body != "" {
			t.Errorf("%s: %d %q, want 304 and no body", tt.name, resp.StatusCode, body)
		}
		if got := resp.Header.Get("ETag"); got != etag {
			t.Errorf("%s: 304 ETag %q, want %q", tt.name, got, etag)
		}
		if got := resp.Header.Get("Cache-Control"); got != "no-cache" {
			t.Errorf("%s: 304 Cache-Control %q, want the 200's", tt.name, got)
		}
		if resp.Header.Get("Date") == "" {
			t.Errorf("%s: 304 without Date", tt.name)
		}
	}
	if n := renders.Load(); n != 1 {
		t.Errorf("the page was rendered %d times, want once: a 304 costs no rendering", n)
	}

	// The page changes: the old validators get the new page.
	p.edit("second", time.Now())
	for _, header := range [][]string{
		{"If-None-Match", etag, "If-Modified-Since", lm},
		{"If-None-Match", etag},
	} {
		resp, body := get("GET", header...)
		if resp.StatusCode != 200 || body != "second" || resp.Header.Get("ETag") == etag {
			t.Errorf("after the edit, %q: %d %q ETag %q", header, resp.StatusCode, body, resp.Header.Get("ETag"))
		}
	}
	// A write that expected the old version fails.
	resp, _ := get("PUT", "If-Match", etag)
	if resp.StatusCode != 412 {
		t.Errorf("PUT If-Match of the old version: %d, want 412", resp.StatusCode)
	}
}

func TestConditionalHandler(t *testing.T) {
	p := &page{version: 1, updated: time.Now().Add(-time.Hour), body: "hello"}
	var calls atomic.Int32
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, p.body)
	})
	errMissing := errors.New("no such page")
	h := site.ConditionalHandler(func(r *http.Request) (site.Validators, error) {
		switch r.URL.Path {
		case "/missing":
			return site.Validators{}, errMissing
		case "/unversioned":
			return site.Validators{}, nil
		}
		return p.validators(), nil
	}, next)
	etag := p.validators().ETag

	for _, tt := range []struct {
		path      string
		inm       string
		want      int
		wantCalls int32
	}{
		{"/", "", 200, 1},
		{"/", etag, 304, 0},
		{"/", `"other"`, 200, 1},
		{"/missing", "*", 404, 1},     // preconditions do not apply to a 404
		{"/unversioned", "*", 200, 1}, // nothing to compare: next decides
	} {
		calls.Store(0)
		r := httptest.NewRequest("GET", tt.path, nil)
		if tt.inm != "" {
			r.Header.Set("If-None-Match", tt.inm)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tt.want || calls.Load() != tt.wantCalls {
			t.Errorf("GET %s If-None-Match %q: %d with %d calls of next, want %d with %d", tt.path, tt.inm, w.Code, calls.Load(), tt.want, tt.wantCalls)
		}
		if tt.want == 200 && tt.path == "/" && w.Header().Get("ETag") != etag {
			t.Errorf("GET %s: ETag %q, want %q", tt.path, w.Header().Get("ETag"), etag)
		}
	}
}

func TestETagOf(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	paris, _ := time.LoadLocation("Europe/Paris")
	same := [][2]string{
		{site.ETagOf("a", 1), site.ETagOf("a", int64(1))},
		{site.ETagOf(at), site.ETagOf(at.In(time.FixedZone("X", 3600)))},
		{site.ETagOf("x", []byte("y")), site.ETagOf("x", "y")},
	}
	if paris != nil {
		same = append(same, [2]string{site.ETagOf(at), site.ETagOf(at.In(paris))})
	}
	for _, s := range same {
		if s[0] != s[1] {
			t.Errorf("%s != %s", s[0], s[1])
		}
	}
	differ := [][2]string{
		{site.ETagOf("ab", "c"), site.ETagOf("a", "bc")},
		{site.ETagOf("1"), site.ETagOf(1)},
		{site.ETagOf(1), site.ETagOf(2)},
		{site.ETagOf(at), site.ETagOf(at.Add(1))},
		{site.ETagOf(1.5), site.ETagOf(2.5)},
		{site.ETagOf(), site.ETagOf("")},
	}
	for _, d := range differ {
		if d[0] == d[1] {
			t.Errorf("equal tags for different versions: %s", d[0])
		}
	}
	if tag := site.ETagOf("x"); len(tag) != 34 || tag[0] != '"' || tag[33] != '"' {
		t.Errorf("ETagOf: %s, want 32 hex digits in quotes", tag)
	}
}

func TestNewest(t *testing.T) {
	a := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	b := a.Add(time.Hour)
	if got := site.Newest(a, time.Time{}, b, a); !got.Equal(b) {
		t.Errorf("Newest = %v, want %v", got, b)
	}
	if got := site.Newest(); !got.IsZero() {
		t.Errorf("Newest() = %v, want zero", got)
	}
}
