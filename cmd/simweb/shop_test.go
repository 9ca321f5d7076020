package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

func TestRunShop(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines, errc := runAsync(t, ctx, "--listen", "127.0.0.1:0", "--hosts", "3", "--pages", "5", "--seed", "7",
		"--traps", "calendar", "--shop", "A.test", "--shop-catalog", "2", "--shop-per-page", "3")
	out := strings.Join(readUntil(t, lines, "Ctrl-C"), "\n")
	for _, want := range []string{"shop: a.test: 6 items at ", "traps: b.test c.test: calendar"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "shop: b.test") {
		t.Errorf("b.test is a shop:\n%s", out)
	}
	addr := regexp.MustCompile(`::(127\.0\.0\.1:\d+)`).FindStringSubmatch(out)[1]
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}}
	for u, want := range map[string]string{"http://a.test/": "<h1>Welcome to ", "http://b.test/calendar": "Events calendar"} {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Errorf("%s: %d, lacks %q", u, resp.StatusCode, want)
		}
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

func TestRunShopErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--shop", "z.test"},
		{"--shop", "all", "--shop-catalog", "0"},
		{"--shop", "all", "--shop-catalog", "1000", "--shop-per-page", "1000"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := run(ctx, append([]string{"--listen", "127.0.0.1:0", "--hosts", "3"}, args...), io.Discard, io.Discard); err == nil {
			t.Errorf("run %q succeeded", args)
		}
	}
}
