package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestParseRates(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []float64
		ok   bool
	}{
		{"0.5", []float64{0.5}, true},
		{"1h, 2s,0", []float64{1.0 / 3600, 0.5, 0}, true},
		{"-1", nil, false},
		{"0s", nil, false},
		{"fast", nil, false},
		{"1,", nil, false},
	} {
		got, err := parseRates(tc.in)
		if (err == nil) != tc.ok || len(got) != len(tc.want) {
			t.Errorf("parseRates(%q) = %v, %v", tc.in, got, err)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("parseRates(%q) = %v, want %v", tc.in, got, tc.want)
			}
		}
	}
}

// TestRunChanges: with --changes at 1000 changes per second every page of
// a non-shop host has changed by the time it is fetched; the shop has not.
func TestRunChanges(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines, errc := runAsync(t, ctx, "--listen", "127.0.0.1:0", "--hosts", "2", "--pages", "3",
		"--shop", "b.test", "--changes", "1000,1ms")
	out := strings.Join(readUntil(t, lines, "Ctrl-C"), "\n")
	if want := "changes: pages change at 1000/s (every 1ms on average), 1000/s (every 1ms on average)"; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	addr := regexp.MustCompile(`serving 2 hosts on http://(\S+)`).FindStringSubmatch(out)[1]
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}}
	time.Sleep(20 * time.Millisecond)
	for u, want := range map[string]string{"http://a.test/": "Updated: version ", "http://b.test/robots.txt": ""} {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Errorf("%s: %d, lacks %q", u, resp.StatusCode, want)
		}
		if want != "" && !regexp.MustCompile(`-v\d+"$`).MatchString(resp.Header.Get("ETag")) {
			t.Errorf("%s: ETag %s has no version", u, resp.Header.Get("ETag"))
		}
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

func TestRunChangesErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--changes", "often"},
		{"--changes-static", "0.5"},
		{"--lying-validators"},
		{"--changes", "1", "--changes-static", "2"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := run(ctx, append([]string{"--listen", "127.0.0.1:0", "--hosts", "3"}, args...), io.Discard, io.Discard); err == nil {
			t.Errorf("run %q succeeded", args)
		}
	}
}
