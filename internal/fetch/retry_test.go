package fetch

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
)

// TestNoSilentRetryAfterServerSawRequest: a server that reads a request and
// drops the connection must see that request once. net/http on its own
// would send a GET again at once on a new connection when a reused one
// fails; to the site that is a second request with no gap.
func TestNoSilentRetryAfterServerSawRequest(t *testing.T) {
	var drops atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/drop" {
			drops.Add(1)
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	c := newClient(t, Config{AllowPrivateNetworks: true})
	base, _ := url.Parse(srv.URL)
	// Warm a kept-alive connection so that the next request reuses it.
	if res, err := c.Do(context.Background(), Request{URL: mustParse(base, "/warm")}); err != nil || res.Status != 200 {
		t.Fatalf("warm-up: %v %+v", err, res)
	}
	_, err := c.Do(context.Background(), Request{URL: mustParse(base, "/drop")})
	if err == nil {
		t.Fatal("Do succeeded on a dropped connection")
	}
	if n := drops.Load(); n != 1 {
		t.Errorf("the server saw the request %d times, want once", n)
	}
}

func mustParse(base *url.URL, ref string) *url.URL {
	u, err := base.Parse(ref)
	if err != nil {
		panic(err)
	}
	return u
}
