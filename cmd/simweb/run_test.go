package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runAsync starts run and returns the lines it prints, as they come, and
// a channel with its result.
func runAsync(t *testing.T, ctx context.Context, args ...string) (<-chan string, <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	lines := make(chan string, 100)
	errc := make(chan error, 1)
	go func() {
		err := run(ctx, args, pw, io.Discard)
		pw.Close()
		errc <- err
	}()
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines, errc
}

// readUntil collects lines up to and including one containing marker.
func readUntil(t *testing.T, lines <-chan string, marker string) []string {
	t.Helper()
	var got []string
	for l := range lines {
		got = append(got, l)
		if strings.Contains(l, marker) {
			return got
		}
	}
	t.Fatalf("output ended without %q:\n%s", marker, strings.Join(got, "\n"))
	return nil
}

func TestRunServesAndStops(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "requests.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines, errc := runAsync(t, ctx, "--listen", "127.0.0.1:0", "--hosts", "12", "--pages", "5", "--log", logFile)
	out := strings.Join(readUntil(t, lines, "Ctrl-C"), "\n")

	m := regexp.MustCompile(`catch-all: --connect-to ::(127\.0\.0\.1:\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no catch-all line in:\n%s", out)
	}
	addr := m[1]
	for _, want := range []string{
		"serving 12 hosts on http://" + addr,
		"a.test  allow        --connect-to a.test:80:" + addr,
		"i.test  500          --connect-to i.test:80:" + addr,
		"l.test  agent        --connect-to l.test:80:" + addr,
		"example: gentlecrawl crawl --allow-private-networks --connect-to ::" + addr + " http://a.test/",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}}
	resp, err := c.Get("http://b.test/robots.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "Disallow: /private/") {
		t.Errorf("b.test/robots.txt: %d %q", resp.StatusCode, b)
	}

	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("run did not return after cancel")
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Error("still listening after run returned")
	}
	log, err := os.ReadFile(logFile)
	if err != nil || !strings.Contains(string(log), `"path":"/robots.txt"`) || !strings.Contains(string(log), `"host":"b.test"`) {
		t.Errorf("log file %q, %v", log, err)
	}
}

func TestRunManyHostsAndPrintConnectTo(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines, errc := runAsync(t, ctx, "--listen", "127.0.0.1:0", "--hosts", "60", "--pages", "2")
	out := strings.Join(readUntil(t, lines, "Ctrl-C"), "\n")
	if strings.Contains(out, "a.test:80:") || !strings.Contains(out, "--print-connect-to") {
		t.Errorf("with 60 hosts, want no per-host lines and a hint:\n%s", out)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}

	lines, errc = runAsync(t, context.Background(), "--listen", "127.0.0.1:0", "--hosts", "60", "--print-connect-to")
	var got []string
	for l := range lines {
		got = append(got, l)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if len(got) != 60 || !regexp.MustCompile(`^--connect-to a\.test:80:127\.0\.0\.1:\d+$`).MatchString(got[0]) || !strings.HasPrefix(got[59], "--connect-to bh.test:80:") {
		t.Errorf("--print-connect-to printed %d lines: %q … %q", len(got), got[0], got[len(got)-1])
	}
}

func TestRunLoopback(t *testing.T) {
	if ln, err := net.Listen("tcp", "127.0.0.2:0"); err != nil {
		t.Skipf("127.0.0.2 is not bindable here: %v", err)
	} else {
		ln.Close()
	}
	lines, errc := runAsync(t, context.Background(), "--listen", "127.0.0.1:0", "--hosts", "4", "--loopback", "2", "--print-connect-to")
	var got []string
	for l := range lines {
		got = append(got, l)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || !strings.Contains(got[0], ":80:127.0.0.2:") || !strings.Contains(got[1], ":80:127.0.0.3:") || !strings.Contains(got[2], ":80:127.0.0.2:") {
		t.Errorf("got %q", got)
	}
}

func TestRunErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--hosts", "0"},
		{"--hosts", "10001"},
		{"--pages", "-1"},
		{"--no-such-flag"},
		{"extra"},
		{"--listen", "256.0.0.1:1"},
		{"--crawl-delay", "-1s"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := run(ctx, append([]string{"--listen", "127.0.0.1:0"}, args...), io.Discard, io.Discard); err == nil {
			t.Errorf("run %q succeeded", args)
		}
	}
}
