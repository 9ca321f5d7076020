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

func TestParseOutage(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want outageFlag
		ok   bool
	}{
		{"30s+5m", outageFlag{"", 30 * time.Second, 5 * time.Minute}, true},
		{"A.test=0s+1h", outageFlag{"a.test", 0, time.Hour}, true},
		{"1m", outageFlag{}, false},
		{"x+5m", outageFlag{}, false},
		{"-1s+5m", outageFlag{}, false},
		{"1s+0s", outageFlag{}, false},
		{"a.test=1s+", outageFlag{}, false},
	} {
		got, err := parseOutage(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("parseOutage(%q) = %+v, %v", tc.in, got, err)
		}
	}
}

func TestRunCapacityAndOutage(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines, errc := runAsync(t, ctx, "--listen", "127.0.0.1:0", "--hosts", "3", "--pages", "3",
		"--capacity", "1000", "--slowdown", "2", "--overload", "429", "--retry-after", "5s", "--outage", "b.test=0s+1h")
	out := strings.Join(readUntil(t, lines, "Ctrl-C"), "\n")
	for _, want := range []string{
		"capacity per host: 1000 requests/s (1 worker(s) × 1ms), queue 10, then 429 with Retry-After 5s; 2× slower while requests wait",
		"outage: b.test answers 429 from 0s after start for 1h0m0s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	addr := regexp.MustCompile(`serving 3 hosts on http://(\S+)`).FindStringSubmatch(out)[1]
	checkAnswers(t, addr, []answer{
		{"http://a.test/", 200, ""},
		{"http://b.test/robots.txt", 429, "5"},
		{"http://c.test/robots.txt", 200, ""},
	})
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// TestRunRateLimit: with --rate-limit and --burst every host takes the
// first request and --burst more at once, then refuses with --overload and
// --retry-after, robots.txt included, while another host is untouched. At
// 0.01 requests/s the bucket takes 100 s to drain one request, so no
// request of the test can find it drained.
func TestRunRateLimit(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines, errc := runAsync(t, ctx, "--listen", "127.0.0.1:0", "--hosts", "2", "--pages", "3",
		"--rate-limit", "0.01", "--burst", "1", "--overload", "429", "--retry-after", "1m")
	out := strings.Join(readUntil(t, lines, "Ctrl-C"), "\n")
	if want := "rate limit per host: 0.01 requests/s, burst 1, then 429 with Retry-After 1m0s (nginx limit_req nodelay)"; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	addr := regexp.MustCompile(`serving 2 hosts on http://(\S+)`).FindStringSubmatch(out)[1]
	checkAnswers(t, addr, []answer{
		{"http://a.test/robots.txt", 200, ""},
		{"http://a.test/", 200, ""}, // the burst
		{"http://a.test/", 429, "60"},
		{"http://a.test/robots.txt", 429, "60"},
		{"http://b.test/", 200, ""},
	})
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// answer is the status and Retry-After a URL must get.
type answer struct {
	url        string
	status     int
	retryAfter string
}

// checkAnswers requests each URL in order from the server at addr, whatever
// its host, and checks the status and Retry-After.
func checkAnswers(t *testing.T, addr string, answers []answer) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}}
	for _, tc := range answers {
		resp, err := c.Get(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get("Retry-After") != tc.retryAfter {
			t.Errorf("%s: %d Retry-After %q, want %d %q", tc.url, resp.StatusCode, resp.Header.Get("Retry-After"), tc.status, tc.retryAfter)
		}
	}
}

func TestRunLoadErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--capacity", "-1"},
		{"--capacity", "5", "--workers", "0"},
		{"--addr-capacity", "-2"},
		{"--overload", "200"},
		{"--retry-after", "-1s"},
		{"--rate-limit", "-1"},
		{"--rate-limit", "NaN"},
		{"--rate-limit", "0.0001"},
		{"--rate-limit", "2e9"},
		{"--rate-limit", "5", "--burst", "-1"},
		{"--burst", "-1"},
		{"--slowdown", "0.5"},
		{"--jitter", "2"},
		{"--outage", "soon"},
		{"--outage", "zz.test=0s+1m"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := run(ctx, append([]string{"--listen", "127.0.0.1:0", "--hosts", "3"}, args...), io.Discard, io.Discard); err == nil {
			t.Errorf("run %q succeeded", args)
		}
	}
}
