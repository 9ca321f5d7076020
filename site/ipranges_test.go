package site_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gentlecrawl/gentlecrawl/site"
)

// googleStyle is shaped like Google's googlebot.json (a few of its
// prefixes, in its layout).
const googleStyle = `{
  "creationTime": "2025-06-01T15:46:04.000000",
  "prefixes": [
    {
      "ipv6Prefix": "2001:4860:4801:10::/64"
    },
    {
      "ipv6Prefix": "2001:4860:4801:12::/64"
    },
    {
      "ipv4Prefix": "66.249.64.0/27"
    },
    {
      "ipv4Prefix": "66.249.64.32/27"
    },
    {
      "ipv4Prefix": "66.249.66.0/27"
    },
    {
      "ipv4Prefix": "192.178.4.0/27"
    }
  ]
}`

func TestParseIPRanges(t *testing.T) {
	r, err := site.ParseIPRanges(strings.NewReader(googleStyle))
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != 6 || r.CreationTime != "2025-06-01T15:46:04.000000" {
		t.Errorf("Len %d, CreationTime %q", r.Len(), r.CreationTime)
	}
	for ip, want := range map[string]bool{
		"66.249.64.0":                           true,
		"66.249.64.31":                          true,
		"66.249.64.32":                          true, // the next, adjacent prefix
		"66.249.64.63":                          true,
		"66.249.64.64":                          false,
		"66.249.63.255":                         false,
		"66.249.66.17":                          true,
		"66.249.65.1":                           false,
		"192.178.4.31":                          true,
		"192.178.4.32":                          false,
		"::ffff:66.249.66.1":                    true, // IPv4 in IPv6 form
		"2001:4860:4801:10::":                   true,
		"2001:4860:4801:10::1":                  true,
		"2001:4860:4801:10:ffff:ffff:ffff:ffff": true,
		"2001:4860:4801:11::1":                  false,
		"2001:4860:4801:12::99":                 true,
		"2001:4860:4801:13::":                   false,
		"fe80::1%eth0":                          false,
		"0.0.0.0":                               false,
		"255.255.255.255":                       false,
		"::":                                    false,
	} {
		if got := r.Contains(netip.MustParseAddr(ip)); got != want {
			t.Errorf("Contains(%s) = %v, want %v", ip, got, want)
		}
	}
	if r.Contains(netip.Addr{}) {
		t.Error("Contains(invalid address)")
	}
	var nilRanges *site.IPRanges
	if nilRanges.Contains(netip.MustParseAddr("66.249.64.1")) || nilRanges.Len() != 0 {
		t.Error("a nil IPRanges is not empty")
	}
}

// Overlapping, nested, unsorted and host-bit prefixes, and the ends of
// the address space.
func TestIPRangesMerge(t *testing.T) {
	r, err := site.ParseIPRanges(strings.NewReader(`{"prefixes":[
		{"ipv4Prefix":"10.0.1.0/24"},{"ipv4Prefix":"10.0.0.0/16"},{"ipv4Prefix":"10.0.0.5/32"},
		{"ipv4Prefix":"10.1.0.0/16"},{"ipv4Prefix":"192.0.2.77/24"},
		{"ipv4Prefix":"255.255.255.255/32"},{"ipv4Prefix":"0.0.0.0/32"},
		{"ipv6Prefix":"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ff00/120"},{"ipv6Prefix":"::/128"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for ip, want := range map[string]bool{
		"10.0.0.0": true, "10.0.255.255": true, "10.1.0.0": true, "10.1.255.255": true, "10.2.0.0": false,
		"9.255.255.255": false, "192.0.2.0": true, "192.0.2.255": true, "192.0.3.0": false,
		"255.255.255.255": true, "255.255.255.254": false, "0.0.0.0": true, "0.0.0.1": false,
		"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff": true, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:feff": false,
		"::": true, "::1": false,
	} {
		if got := r.Contains(netip.MustParseAddr(ip)); got != want {
			t.Errorf("Contains(%s) = %v, want %v", ip, got, want)
		}
	}
}

// Against a plain scan of the prefixes, on random lists and addresses.
func TestIPRangesContainsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		var prefixes []netip.Prefix
		var doc bytes.Buffer
		doc.WriteString(`{"prefixes":[`)
		for i := range 1 + rng.IntN(200) {
			var p netip.Prefix
			if rng.IntN(2) == 0 {
				a := netip.AddrFrom4([4]byte{10, byte(rng.IntN(4)), byte(rng.IntN(256)), byte(rng.IntN(256))})
				p = netip.PrefixFrom(a, 14+rng.IntN(19)).Masked()
				fmt.Fprintf(&doc, `%s{"ipv4Prefix":%q}`, comma(i), p)
			} else {
				var b [16]byte
				b[0], b[1], b[2] = 0x20, 0x01, byte(rng.IntN(4))
				b[3] = byte(rng.IntN(256))
				p = netip.PrefixFrom(netip.AddrFrom16(b), 16+rng.IntN(113)).Masked()
				fmt.Fprintf(&doc, `%s{"ipv6Prefix":%q}`, comma(i), p)
			}
			prefixes = append(prefixes, p)
		}
		doc.WriteString(`]}`)
		r, err := site.ParseIPRanges(&doc)
		if err != nil {
			t.Fatal(err)
		}
		for range 500 {
			var ip netip.Addr
			if rng.IntN(2) == 0 {
				ip = netip.AddrFrom4([4]byte{10, byte(rng.IntN(4)), byte(rng.IntN(256)), byte(rng.IntN(256))})
			} else {
				var b [16]byte
				b[0], b[1], b[2], b[3] = 0x20, 0x01, byte(rng.IntN(4)), byte(rng.IntN(256))
				for i := 4; i < 16; i++ {
					b[i] = byte(rng.IntN(256))
				}
				ip = netip.AddrFrom16(b)
			}
			want := false
			for _, p := range prefixes {
				want = want || p.Contains(ip)
			}
			if got := r.Contains(ip); got != want {
				t.Fatalf("Contains(%s) = %v, want %v", ip, got, want)
			}
		}
	}
}

func comma(i int) string {
	if i == 0 {
		return ""
	}
	return ","
}

func TestParseIPRangesErrors(t *testing.T) {
	for _, tt := range []struct {
		in, want string
	}{
		{``, "unexpected end of JSON input"},
		{`[]`, "cannot unmarshal array"},
		{`{"creationTime":"x"}`, `no "prefixes" array`},
		{`{"prefixes":[]}`, "no prefixes"},
		{`{"prefixes":{}}`, "cannot unmarshal object"},
		{`{"prefixes":[{"ipv4Prefix":"66.249.64.0/27"}]} trailing`, "invalid character"},
		{`{"prefixes":[{"ipv4Prefix":"66.249.64.0/27"},{}]}`, "prefixes[1]: neither ipv4Prefix nor ipv6Prefix"},
		{`{"prefixes":[{"ipv4Prefix":"66.249.64.0/27","ipv6Prefix":"2001:db8::/32"}]}`, "prefixes[0]: both"},
		{`{"prefixes":[{"ipv4Prefix":"66.249.64.0"}]}`, "prefixes[0]: netip.ParsePrefix"},
		{`{"prefixes":[{"ipv4Prefix":"66.249.64.0/33"}]}`, "prefix length out of range"},
		{`{"prefixes":[{"ipv4Prefix":"2001:db8::/32"}]}`, `ipv4Prefix "2001:db8::/32" is not IPv4`},
		{`{"prefixes":[{"ipv6Prefix":"66.249.64.0/27"}]}`, `ipv6Prefix "66.249.64.0/27" is not IPv6`},
		{`{"prefixes":[{"ipv6Prefix":"::ffff:66.249.64.0/120"}]}`, "is not IPv6"},
		{`{"prefixes":[{"ipv4Prefix":42}]}`, "prefixes[0]: json: cannot unmarshal number"},
		{`{"prefixes":["66.249.64.0/27"]}`, "prefixes[0]: json: cannot unmarshal string"},
	} {
		_, err := site.ParseIPRanges(strings.NewReader(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseIPRanges(%.60q): %v, want an error with %q", tt.in, err, tt.want)
		}
		var rerr *site.IPRangesError
		if err != nil && !errors.As(err, &rerr) {
			t.Errorf("ParseIPRanges(%.60q): %T, want *IPRangesError", tt.in, err)
		}
	}
}

func TestParseIPRangesLimits(t *testing.T) {
	// At the prefix limit: fine; one more: ErrTooManyPrefixes.
	list := func(n int) *bytes.Buffer {
		var b bytes.Buffer
		b.WriteString(`{"prefixes":[`)
		for i := range n {
			fmt.Fprintf(&b, `%s{"ipv4Prefix":"10.%d.%d.0/24"}`, comma(i), i>>8&0xff, i&0xff)
		}
		b.WriteString(`]}`)
		return &b
	}
	full := list(site.MaxIPRangesPrefixes)
	if full.Len() > site.MaxIPRangesSize {
		t.Fatalf("the test list (%d bytes) is over the size limit", full.Len())
	}
	r, err := site.ParseIPRanges(full)
	if err != nil || r.Len() != site.MaxIPRangesPrefixes {
		t.Fatalf("%d prefixes: %v", site.MaxIPRangesPrefixes, err)
	}
	if !r.Contains(netip.MustParseAddr("10.255.255.1")) || r.Contains(netip.MustParseAddr("11.0.0.0")) {
		t.Error("the full list does not hold 10.0.0.0/8 exactly")
	}
	if _, err := site.ParseIPRanges(list(site.MaxIPRangesPrefixes + 1)); !errors.Is(err, site.ErrTooManyPrefixes) {
		t.Errorf("%d prefixes: %v, want ErrTooManyPrefixes", site.MaxIPRangesPrefixes+1, err)
	}

	// At the size limit: read; one byte over: ErrIPRangesTooLarge.
	const doc = `{"prefixes":[{"ipv4Prefix":"66.249.64.0/27"}]}`
	padded := func(n int) *strings.Reader {
		return strings.NewReader(doc + strings.Repeat(" ", n-len(doc)))
	}
	if _, err := site.ParseIPRanges(padded(site.MaxIPRangesSize)); err != nil {
		t.Errorf("%d bytes: %v", site.MaxIPRangesSize, err)
	}
	if _, err := site.ParseIPRanges(padded(site.MaxIPRangesSize + 1)); !errors.Is(err, site.ErrIPRangesTooLarge) {
		t.Errorf("%d bytes: %v, want ErrIPRangesTooLarge", site.MaxIPRangesSize+1, err)
	}
}

func TestLoadIPRanges(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "googlebot.json")
	if err := os.WriteFile(good, []byte(googleStyle), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := site.LoadIPRanges(good); err != nil || r.Len() != 6 {
		t.Errorf("LoadIPRanges: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"prefixes":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := site.LoadIPRanges(bad); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("LoadIPRanges of an empty list: %v, want an error naming the file", err)
	}
	if _, err := site.LoadIPRanges(filepath.Join(dir, "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadIPRanges of a missing file: %v", err)
	}
}

func BenchmarkIPRangesContains(b *testing.B) {
	// 5000 scattered /24s and /64s: more than any crawler publishes.
	rng := rand.New(rand.NewPCG(3, 4))
	var doc bytes.Buffer
	doc.WriteString(`{"prefixes":[`)
	for i := range 5000 {
		if i%2 == 0 {
			fmt.Fprintf(&doc, `%s{"ipv4Prefix":"%d.%d.%d.0/24"}`, comma(i), 1+rng.IntN(223), rng.IntN(256), rng.IntN(256))
		} else {
			fmt.Fprintf(&doc, `%s{"ipv6Prefix":"2001:%x:%x:%x::/64"}`, comma(i), rng.IntN(65536), rng.IntN(65536), rng.IntN(65536))
		}
	}
	doc.WriteString(`]}`)
	r, err := site.ParseIPRanges(&doc)
	if err != nil {
		b.Fatal(err)
	}
	ips := make([]netip.Addr, 1024)
	for i := range ips {
		ips[i] = netip.AddrFrom4([4]byte{byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256))})
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		r.Contains(ips[i%len(ips)])
	}
}
