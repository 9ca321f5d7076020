package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

func TestParseTraps(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want trapSpec
		ok   bool
	}{
		{"calendar", trapSpec{traps: simweb.Traps{Calendar: true}}, true},
		{"B.test=sessions,facets", trapSpec{"b.test", simweb.Traps{SessionIDs: "?", Facets: true}}, true},
		{"deep,soft404,sitemaps", trapSpec{traps: simweb.Traps{DeepPath: true, Soft404: true, Sitemaps: true}}, true},
		{"all", trapSpec{traps: simweb.Traps{SessionIDs: "?", Calendar: true, Facets: true, DeepPath: true, Soft404: true, Sitemaps: true}}, true},
		{"calendar,nope", trapSpec{}, false},
		{"a.test=", trapSpec{}, false},
	} {
		got, err := parseTraps(tc.in, "")
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("parseTraps(%q) = %+v, %v", tc.in, got, err)
		}
	}
}

func TestRunTraps(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines, errc := runAsync(t, ctx, "--listen", "127.0.0.1:0", "--hosts", "3", "--pages", "5",
		"--traps", "sitemaps", "--traps", "a.test=sessions,facets,calendar", "--session-param", "PHPSESSID",
		"--exact-pages", "100", "--capacity", "1000")
	out := strings.Join(readUntil(t, lines, "Ctrl-C"), "\n")
	for _, want := range []string{
		"traps: a.test: sessions (PHPSESSID), calendar, facets, sitemaps",
		"traps: b.test c.test: sitemaps",
		"exactly 100 real pages",
		"capacity per host: 1000 requests/s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	addr := regexp.MustCompile(`::(127\.0\.0\.1:\d+)`).FindStringSubmatch(out)[1]
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}}
	for u, want := range map[string]string{
		"http://a.test/":                       "/catalog?PHPSESSID=",
		"http://a.test/calendar?month=2030-01": "Events calendar: January 2030",
		"http://c.test/robots.txt":             "Sitemap: http://c.test/sitemap.xml",
	} {
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

func TestRunTrapsErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--traps", "wormholes"},
		{"--traps", "z.test=calendar"},
		{"--exact-pages", "10"},
		{"--traps", "facets", "--exact-pages", "30"},
		{"--traps", "sessions", "--session-param", "a b"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := run(ctx, append([]string{"--listen", "127.0.0.1:0", "--hosts", "3"}, args...), io.Discard, io.Discard); err == nil {
			t.Errorf("run %q succeeded", args)
		}
	}
}
