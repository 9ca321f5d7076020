package fetch

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

func TestParseResolve(t *testing.T) {
	tests := []struct {
		in      string
		want    Resolve
		wantErr string
	}{
		{in: "example.com:443:127.0.0.1", want: Resolve{"example.com", 443, addrs("127.0.0.1")}},
		{in: "Example.COM.:80:1.2.3.4,5.6.7.8", want: Resolve{"example.com", 80, addrs("1.2.3.4", "5.6.7.8")}},
		{in: "a.test:80:[::1]", want: Resolve{"a.test", 80, addrs("::1")}},
		{in: "a.test:80:::1", want: Resolve{"a.test", 80, addrs("::1")}},
		{in: "a.test:80:[2001:db8::1],192.0.2.1", want: Resolve{"a.test", 80, addrs("2001:db8::1", "192.0.2.1")}},
		{in: "*:443:203.0.113.7", want: Resolve{"*", 443, addrs("203.0.113.7")}},
		{in: "[::1]:80:127.0.0.1", want: Resolve{"::1", 80, addrs("127.0.0.1")}},

		{in: "", wantErr: `--resolve "": want HOST:PORT:ADDR`},
		{in: "x", wantErr: `--resolve "x": want HOST:PORT:ADDR`},
		{in: "x:80", wantErr: `want HOST:PORT:ADDR`},
		{in: "x:80:", wantErr: `want HOST:PORT:ADDR`},
		{in: ":80:1.2.3.4", wantErr: `want HOST:PORT:ADDR`},
		{in: "x::1.2.3.4", wantErr: `bad port ""`},
		{in: "x:http:1.2.3.4", wantErr: `bad port "http"`},
		{in: "x:0:1.2.3.4", wantErr: `bad port "0"`},
		{in: "x:65536:1.2.3.4", wantErr: `bad port "65536"`},
		{in: "x:-1:1.2.3.4", wantErr: `bad port "-1"`},
		{in: ".:80:1.2.3.4", wantErr: `bad host "."`},
		{in: "a..b:80:1.2.3.4", wantErr: `bad host "a..b"`},
		{in: "x:80:not-an-ip", wantErr: `bad address "not-an-ip"`},
		{in: "x:80:1.2.3.4,", wantErr: `bad address ""`},
		{in: "x:80:[1.2.3.4]", wantErr: `bad address "[1.2.3.4]"`},
		{in: "[::1:80:1.2.3.4", wantErr: `missing ']'`},
		{in: "[nope]:80:1.2.3.4", wantErr: `bad IPv6 address`},
	}
	for _, tt := range tests {
		got, err := ParseResolve(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseResolve(%q) error = %v, want containing %q", tt.in, err, tt.wantErr)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "--resolve ") {
				t.Errorf("ParseResolve(%q) error %q does not name the flag", tt.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseResolve(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseResolve(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
		again, err := ParseResolve(got.String())
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("ParseResolve(%q.String() = %q) = %+v, %v", tt.in, got.String(), again, err)
		}
	}
}

func TestParseConnectTo(t *testing.T) {
	tests := []struct {
		in      string
		want    ConnectTo
		wantErr string
	}{
		{in: "a.test:80:127.0.0.1:8080", want: ConnectTo{"a.test", 80, "127.0.0.1", 8080}},
		{in: "A.Test:443:b.test:", want: ConnectTo{"a.test", 443, "b.test", 0}},
		{in: "::b.test:8443", want: ConnectTo{"", 0, "b.test", 8443}},
		{in: ":::", want: ConnectTo{}},
		{in: "a.test:::9000", want: ConnectTo{"a.test", 0, "", 9000}},
		{in: "[::1]:80:[2001:db8::2]:81", want: ConnectTo{"::1", 80, "2001:db8::2", 81}},
		{in: "a.test:80:[::1]:", want: ConnectTo{"a.test", 80, "::1", 0}},

		{in: "", wantErr: `--connect-to "": want HOST1:PORT1:HOST2:PORT2`},
		{in: "a.test:80", wantErr: "want HOST1:PORT1:HOST2:PORT2"},
		{in: "a.test:80:b.test", wantErr: "want HOST1:PORT1:HOST2:PORT2"},
		{in: "a.test:x:b.test:80", wantErr: `bad port "x"`},
		{in: "a.test:80:b.test:99999", wantErr: `bad port "99999"`},
		{in: "a.test:80:b.test:80:1", wantErr: `bad port "80:1"`},
		{in: "a.test:80:::1:80", wantErr: `bad port ":1:80"`},
		{in: "a.test:80:[::1:80", wantErr: "missing ']'"},
		{in: "a.test:80:[::1]x:80", wantErr: "unexpected"},
		{in: "..:::", wantErr: `bad host ".."`},
		{in: ".:80::", wantErr: `bad host "."`},
		{in: "a..test:80::", wantErr: `bad host "a..test"`},
		{in: "a.test:80:.b.test:", wantErr: `bad host ".b.test"`},
		{in: "a test:80::", wantErr: `bad host "a test"`},
		{in: "a.test.:80:b.test.:", want: ConnectTo{"a.test", 80, "b.test", 0}},
	}
	for _, tt := range tests {
		got, err := ParseConnectTo(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseConnectTo(%q) error = %v, want containing %q", tt.in, err, tt.wantErr)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "--connect-to ") {
				t.Errorf("ParseConnectTo(%q) error %q does not name the flag", tt.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseConnectTo(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseConnectTo(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
		if again, err := ParseConnectTo(got.String()); err != nil || again != got {
			t.Errorf("ParseConnectTo(%q.String() = %q) = %+v, %v", tt.in, got.String(), again, err)
		}
	}
}

func FuzzParseRules(f *testing.F) {
	for _, s := range []string{"a:1:1.2.3.4", "*:443:[::1],10.0.0.1", "a.test:80:b.test:81", ":::", "[::1]:80:[::2]:", "..:::", "a.:1:1.2.3.4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if r, err := ParseResolve(s); err == nil {
			again, err := ParseResolve(r.String())
			if err != nil || !reflect.DeepEqual(again, r) {
				t.Errorf("ParseResolve(%q) = %+v; reparse of %q = %+v, %v", s, r, r.String(), again, err)
			}
		}
		if ct, err := ParseConnectTo(s); err == nil {
			again, err := ParseConnectTo(ct.String())
			if err != nil || again != ct {
				t.Errorf("ParseConnectTo(%q) = %+v; reparse of %q = %+v, %v", s, ct, ct.String(), again, err)
			}
		}
	})
}

func TestRuleMatching(t *testing.T) {
	cts := []ConnectTo{
		{FromHost: "a.test", FromPort: 80, ToHost: "b.test"},
		{FromHost: "a.test", ToPort: 9000},
		{FromPort: 443, ToHost: "tls.test", ToPort: 8443},
	}
	for _, tt := range []struct {
		host     string
		port     int
		wantHost string
		wantPort int
	}{
		{"a.test", 80, "b.test", 80},   // first rule, port kept
		{"A.TEST.", 80, "b.test", 80},  // names compare case-insensitively
		{"a.test", 81, "a.test", 9000}, // second rule, host kept
		{"c.test", 443, "tls.test", 8443},
		{"c.test", 80, "c.test", 80}, // no rule
	} {
		r := newConnectRules(cts)
		h, p := r.target(tt.host, tt.port)
		if h != tt.wantHost || p != tt.wantPort {
			t.Errorf("connectTarget(%s:%d) = %s:%d, want %s:%d", tt.host, tt.port, h, p, tt.wantHost, tt.wantPort)
		}
	}

	rs := []Resolve{
		{Host: "*", Port: 80, Addrs: addrs("192.0.2.1")},
		{Host: "a.test", Port: 80, Addrs: addrs("192.0.2.2")},
		{Host: "a.test", Port: 80, Addrs: addrs("192.0.2.3")}, // later wins
		{Host: "*", Port: 80, Addrs: addrs("192.0.2.4")},      // but never over a named entry
	}
	for _, tt := range []struct {
		host string
		port int
		want []netip.Addr
	}{
		{"a.test", 80, addrs("192.0.2.3")},
		{"b.test", 80, addrs("192.0.2.4")},
		{"a.test", 81, nil},
	} {
		r := newResolveRules(rs)
		if got := r.pinned(tt.host, tt.port); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("pinned(%s:%d) = %v, want %v", tt.host, tt.port, got, tt.want)
		}
	}
}

func TestIsPublic(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"8.8.8.8", true},
		{"1.1.1.1", true},
		{"93.184.216.34", true},
		{"2606:4700:4700::1111", true},
		{"::ffff:8.8.8.8", true},
		{"64:ff9b::808:808", true}, // NAT64 of 8.8.8.8

		{"127.0.0.1", false},
		{"127.255.255.254", false},
		{"10.1.2.3", false},
		{"172.16.0.1", false},
		{"172.31.255.255", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false},
		{"100.64.0.1", false},
		{"100.127.255.255", false},
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"255.255.255.255", false},
		{"240.0.0.1", false},
		{"224.0.0.1", false},
		{"239.255.255.250", false},
		{"198.18.0.1", false},
		{"192.0.0.8", false},
		{"::", false},
		{"::1", false},
		{"::7f00:1", false}, // IPv4-compatible 127.0.0.1
		{"::ffff:127.0.0.1", false},
		{"::ffff:10.0.0.1", false},
		{"::ffff:169.254.169.254", false},
		{"64:ff9b::7f00:1", false}, // NAT64 of 127.0.0.1
		{"fc00::1", false},
		{"fd12:3456::1", false},
		{"fe80::1", false},
		{"fe80::1%eth0", false},
		{"fec0::1", false},
		{"ff02::1", false},
		{"ff0e::1", false},

		{"172.15.255.255", true}, // just outside 172.16/12
		{"172.32.0.0", true},
		{"100.63.255.255", true}, // just outside 100.64/10
		{"100.128.0.0", true},
	}
	for _, tt := range tests {
		if got := IsPublic(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("IsPublic(%s) = %v, want %v", tt.addr, got, tt.want)
		}
	}
	if IsPublic(netip.Addr{}) {
		t.Error("IsPublic(zero Addr) = true")
	}
}

func TestCheckTargets(t *testing.T) {
	mustR := func(s string) Resolve {
		r, err := ParseResolve(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	mustC := func(s string) ConnectTo {
		c, err := ParseConnectTo(s)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	tests := []struct {
		name     string
		cfg      Config
		wantFlag string // "" means no error
	}{
		{"none", Config{}, ""},
		{"public resolve", Config{Resolve: []Resolve{mustR("a.test:80:8.8.8.8")}}, ""},
		{"public connect-to", Config{ConnectTo: []ConnectTo{mustC("a.test:80:8.8.8.8:80"), mustC("a.test:80:b.example:")}}, ""},
		{"keep host", Config{ConnectTo: []ConnectTo{mustC("a.test:80::8080")}}, ""},
		{"loopback resolve", Config{Resolve: []Resolve{mustR("a.test:80:8.8.8.8,127.0.0.1")}}, "--resolve"},
		{"private connect-to", Config{ConnectTo: []ConnectTo{mustC("a.test:80:10.0.0.1:80")}}, "--connect-to"},
		{"v6 loopback connect-to", Config{ConnectTo: []ConnectTo{mustC("a.test:80:[::1]:80")}}, "--connect-to"},
		{"localhost connect-to", Config{ConnectTo: []ConnectTo{mustC("a.test:80:localhost:80")}}, "--connect-to"},
		{"sub.localhost connect-to", Config{ConnectTo: []ConnectTo{mustC("::app.localhost:")}}, "--connect-to"},
		{"allowed", Config{AllowPrivateNetworks: true, Resolve: []Resolve{mustR("a.test:80:127.0.0.1")}}, ""},
	}
	for _, tt := range tests {
		err := tt.cfg.CheckTargets()
		if tt.wantFlag == "" {
			if err != nil {
				t.Errorf("%s: CheckTargets() = %v, want nil", tt.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: CheckTargets() = nil, want an error", tt.name)
			continue
		}
		if !errors.Is(err, ErrPrivateNetwork) || !strings.Contains(err.Error(), tt.wantFlag) || !strings.Contains(err.Error(), "--allow-private-networks") {
			t.Errorf("%s: CheckTargets() = %v; want ErrPrivateNetwork naming %s and --allow-private-networks", tt.name, err, tt.wantFlag)
		}
	}
}

// TestRulesIndexed: the indexed rules answer as a pass over them in order
// would (the first matching --connect-to wins; a named --resolve beats
// "*", the last of equals winning), on random rule sets.
func TestRulesIndexed(t *testing.T) {
	linearTarget := func(rules []ConnectTo, host string, port int) (string, int) {
		h := normHost(host)
		for _, r := range rules {
			if (r.FromHost == "" || r.FromHost == h) && (r.FromPort == 0 || r.FromPort == port) {
				return cmp.Or(r.ToHost, host), cmp.Or(r.ToPort, port)
			}
		}
		return host, port
	}
	linearPinned := func(rules []Resolve, host string, port int) []netip.Addr {
		var exact, wild []netip.Addr
		for _, r := range rules {
			switch {
			case r.Port != port:
			case r.Host == normHost(host):
				exact = r.Addrs
			case r.Host == "*":
				wild = r.Addrs
			}
		}
		if exact != nil {
			return exact
		}
		return wild
	}
	rng := rand.New(rand.NewPCG(1, 2))
	hosts := []string{"", "a.test", "b.test", "c.test"}
	ports := []int{0, 80, 443}
	for range 500 {
		var cts []ConnectTo
		var rs []Resolve
		for i := range rng.IntN(6) {
			cts = append(cts, ConnectTo{FromHost: hosts[rng.IntN(4)], FromPort: ports[rng.IntN(3)],
				ToHost: hosts[rng.IntN(4)], ToPort: 9000 + i})
			h := hosts[rng.IntN(4)]
			if h == "" {
				h = "*"
			}
			rs = append(rs, Resolve{Host: h, Port: ports[1+rng.IntN(2)], Addrs: addrs(fmt.Sprintf("192.0.2.%d", i+1))})
		}
		cr, rr := newConnectRules(cts), newResolveRules(rs)
		for _, h := range []string{"a.test", "B.test.", "d.test"} {
			for _, p := range ports[1:] {
				gh, gp := cr.target(h, p)
				wh, wp := linearTarget(cts, h, p)
				if gh != wh || gp != wp {
					t.Fatalf("rules %+v: %s:%d goes to %s:%d, want %s:%d", cts, h, p, gh, gp, wh, wp)
				}
				if got, want := rr.pinned(h, p), linearPinned(rs, h, p); !reflect.DeepEqual(got, want) {
					t.Fatalf("rules %+v: %s:%d pinned to %v, want %v", rs, h, p, got, want)
				}
			}
		}
	}
}

// BenchmarkRulesManyHosts: a crawl of many hosts on loopback gives one
// --connect-to per host; finding a host's rule must not cost a pass over
// all of them on every connection.
func BenchmarkRulesManyHosts(b *testing.B) {
	for _, n := range []int{10, 10_000} {
		var cts []ConnectTo
		var rs []Resolve
		for i := range n {
			h := fmt.Sprintf("h%d.test", i)
			cts = append(cts, ConnectTo{FromHost: h, FromPort: 80, ToHost: "127.0.0.2", ToPort: 8080})
			rs = append(rs, Resolve{Host: h, Port: 80, Addrs: addrs("127.0.0.3")})
		}
		cr, rr := newConnectRules(cts), newResolveRules(rs)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				h := cts[i%n].FromHost
				cr.target(h, 80)
				rr.pinned(h, 80)
			}
		})
	}
}
