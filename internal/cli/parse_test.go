package cli

import (
	"net/netip"
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
)

func TestParseHourWindow(t *testing.T) {
	w, err := parseHourWindow("22:00-06:00 2s")
	if err != nil || w.From != 22*60 || w.To != 6*60 || w.Location != time.UTC || w.Delay != 2*time.Second {
		t.Errorf("22:00-06:00 2s: %+v, %v", w, err)
	}
	if _, err := time.LoadLocation("Europe/Warsaw"); err == nil {
		w, err := parseHourWindow("09:00-18:00 Europe/Warsaw 5s")
		if err != nil || w.From != 9*60 || w.To != 18*60 || w.Location.String() != "Europe/Warsaw" || w.Delay != 5*time.Second {
			t.Errorf("09:00-18:00 Europe/Warsaw 5s: %+v, %v", w, err)
		}
	}
}

func TestParseHourWindowErrors(t *testing.T) {
	for _, s := range []string{"", "9-18 5s", "09:00-18:00", "09:00-18:00 Mars/Olympus 5s", "09:00-25:00 5s", "09:00-18:00 -1s", "09:00 18:00 UTC 5s x"} {
		if _, err := parseHourWindow(s); err == nil {
			t.Errorf("parseHourWindow(%q) accepted", s)
		}
	}
}

// TestParseRouting: --resolve and --connect-to, in curl's syntax, become
// the library's typed rules.
func TestParseRouting(t *testing.T) {
	rs, err := parseResolve([]string{"A.test:443:127.0.0.1,[::1]"})
	want := gentlecrawl.Resolve{Host: "a.test", Port: 443, Addrs: []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}}
	if err != nil || len(rs) != 1 || rs[0].Host != want.Host || rs[0].Port != want.Port || len(rs[0].Addrs) != 2 || rs[0].Addrs[1] != want.Addrs[1] {
		t.Errorf("--resolve: %+v, %v; want %+v", rs, err, want)
	}
	cts, err := parseConnectTo([]string{"a.test:80:127.0.0.1:8080", "::[::1]:"})
	if err != nil || len(cts) != 2 ||
		cts[0] != (gentlecrawl.ConnectTo{FromHost: "a.test", FromPort: 80, ToHost: "127.0.0.1", ToPort: 8080}) ||
		cts[1] != (gentlecrawl.ConnectTo{ToHost: "::1"}) {
		t.Errorf("--connect-to: %+v, %v", cts, err)
	}
	if _, err := parseConnectTo([]string{"nonsense"}); err == nil {
		t.Error("--connect-to nonsense accepted")
	}
}

func TestParseCrawlDelayAndScope(t *testing.T) {
	for s, want := range map[string]gentlecrawl.CrawlDelayPolicy{
		"honor": {Mode: gentlecrawl.CrawlDelayHonor}, "ignore": {Mode: gentlecrawl.CrawlDelayIgnore},
		"cap=10s": {Mode: gentlecrawl.CrawlDelayCap, Cap: 10 * time.Second},
	} {
		if got, err := parseCrawlDelayPolicy(s); err != nil || got != want {
			t.Errorf("--crawl-delay %s: %+v, %v", s, got, err)
		}
	}
	for _, s := range []string{"sometimes", "cap=", "cap=-1s"} {
		if _, err := parseCrawlDelayPolicy(s); err == nil {
			t.Errorf("--crawl-delay %s accepted", s)
		}
	}
	if sc, err := parseScope("domain"); err != nil || sc != gentlecrawl.ScopeDomain {
		t.Errorf("--scope domain: %v, %v", sc, err)
	}
	if _, err := parseScope("planet"); err == nil {
		t.Error("--scope planet accepted")
	}
}
