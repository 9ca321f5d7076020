package proxytest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"
)

func TestStart(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello "+r.URL.Path)
	}))
	defer srv.Close()
	for _, opts := range []Options{{}, {User: "crawler", Password: "s3cret"}} {
		p := Start(t, opts)
		pu, _ := url.Parse(p.URL())
		c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
		resp, err := c.Get(srv.URL + "/x")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "hello /x" {
			t.Fatalf("through tinyproxy: %d %q", resp.StatusCode, b)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		reqs, err := p.WaitRequests(ctx, 1)
		cancel()
		if err != nil || len(reqs) != 1 || reqs[0] != (Request{Method: "GET", Target: srv.URL + "/x"}) {
			t.Errorf("Requests = %v, %v", reqs, err)
		}
		if opts.User != "" {
			// Without the credentials: 407.
			c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: p.Addr})}}
			resp, err := c.Get(srv.URL + "/y")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusProxyAuthRequired {
				t.Errorf("without credentials: %d, want 407", resp.StatusCode)
			}
		}
		p.Stop()
	}
}
