package urlnorm

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestRFC3986Equivalence checks the examples of RFC 3986 §6: every URL of
// a group gets the same key, and URLs of different groups different ones.
func TestRFC3986Equivalence(t *testing.T) {
	groups := [][]string{
		// §6.2.2: case, percent-encoding and path segment normalization.
		{"http://a/b/c/%7Bfoo%7D", "HTTP://a/./b/../b/%63/%7bfoo%7d", "http://A/b/c/%7bfoo%7D"},
		// §6.2.2.1
		{"http://www.example.com/", "HTTP://www.EXAMPLE.com/"},
		// §6.2.2.2
		{"http://example.com/~user", "http://example.com/%7Euser", "http://example.com/%7euser"},
		// §6.2.3: empty path, empty and default port.
		{"http://example.com", "http://example.com/", "http://example.com:/", "http://example.com:80/"},
		// §6.2.3 for https.
		{"https://example.com/", "https://example.com:443", "HTTPS://EXAMPLE.COM:443/"},
		// Not equivalent: case of the path, reserved escapes, other port.
		{"http://example.com/A"},
		{"http://example.com/a%2Fb"},
		{"http://example.com/a/b"},
		{"http://example.com:8080/"},
		{"https://example.com:80/"},
	}
	owner := map[string]int{}
	for g, urls := range groups {
		var first string
		for _, s := range urls {
			u, err := Parse(s)
			if err != nil {
				t.Fatalf("Parse(%q): %v", s, err)
			}
			c := Canonical(u)
			if first == "" {
				first = c
			} else if c != first {
				t.Errorf("group %d: Canonical(%q) = %q, want %q", g, s, c, first)
			}
		}
		if o, ok := owner[first]; ok {
			t.Errorf("groups %d and %d share the key %q", o, g, first)
		}
		owner[first] = g
	}
}

func TestCanonicalRawIDNA(t *testing.T) {
	u := &url.URL{Scheme: "http", Host: "Bücher.example:80", Path: "/"}
	if got, want := Canonical(u), "http://xn--bcher-kva.example/"; got != want {
		t.Errorf("Canonical = %q, want %q", got, want)
	}
}

func TestStripSessionIDs(t *testing.T) {
	const hex32 = "0123456789abcdef0123456789ABCDEF"
	tests := []struct {
		in, want string
		removed  []string
	}{
		{"http://e.com/a", "http://e.com/a", nil},
		{"http://e.com/a?b=1", "http://e.com/a?b=1", nil},
		// Path parameters, any case, anywhere in the path.
		{"http://e.com/a;jsessionid=" + hex32, "http://e.com/a", []string{"jsessionid"}},
		{"http://e.com/a;JSESSIONID=x1?b=2", "http://e.com/a?b=2", []string{"JSESSIONID"}},
		{"http://e.com/a;jsessionid=1/b;x=2", "http://e.com/a/b;x=2", []string{"jsessionid"}},
		{"http://e.com/a;v=1;jsessionid=1;w=2", "http://e.com/a;v=1;w=2", []string{"jsessionid"}},
		{"http://e.com/a;v=1", "http://e.com/a;v=1", nil},
		// Query parameters whatever their value.
		{"http://e.com/?PHPSESSID=abc&b=2", "http://e.com/?b=2", []string{"PHPSESSID"}},
		{"http://e.com/?b=2&phpsessid=abc", "http://e.com/?b=2", []string{"phpsessid"}},
		{"http://e.com/?jsessionid=1", "http://e.com/", []string{"jsessionid"}},
		{"http://e.com/?ASPSESSIONIDQQGGQGPA=KDNFJ&x=1", "http://e.com/?x=1", []string{"ASPSESSIONIDQQGGQGPA"}},
		{"http://e.com/?CFID=12345&CFTOKEN=67890&p=3", "http://e.com/?p=3", []string{"CFID", "CFTOKEN"}},
		{"http://e.com/?osCsid=" + hex32, "http://e.com/", []string{"osCsid"}},
		{"http://e.com/?zenid=k3q8v2m5", "http://e.com/", []string{"zenid"}},
		// sid and friends only with session-looking values.
		{"http://e.com/?sid=2", "http://e.com/?sid=2", nil},
		{"http://e.com/?sid=en", "http://e.com/?sid=en", nil},
		{"http://e.com/?sid=1234567890123456789", "http://e.com/?sid=1234567890123456789", nil},
		{"http://e.com/?sid=deadbeefdeadbeef", "http://e.com/?sid=deadbeefdeadbeef", nil}, // no digit
		{"http://e.com/?sid=" + hex32, "http://e.com/", []string{"sid"}},
		{"http://e.com/?a=1&SID=" + hex32 + "&b=2", "http://e.com/?a=1&b=2", []string{"SID"}},
		{"http://e.com/?sessionid=k3q8v2m5n7b1c9x0z4l6j8h2g5", "http://e.com/", []string{"sessionid"}},
		{"http://e.com/?session_id=550e8400-e29b-41d4-a716-446655440000", "http://e.com/", []string{"session_id"}},
		{"http://e.com/?sessid=dGhpcyBpcyBhIHNlc3Npb24gaWQ%3D", "http://e.com/", []string{"sessid"}},
		{"http://e.com/?sessionid=a-long-descriptive-slug-here", "http://e.com/?sessionid=a-long-descriptive-slug-here", nil},
		// s is a search on WordPress: only random tokens go.
		{"http://e.com/?s=2", "http://e.com/?s=2", nil},
		{"http://e.com/?s=summer-sale-2024-collection", "http://e.com/?s=summer-sale-2024-collection", nil},
		{"http://e.com/?s=iphone15-pro-max-256gb-2023", "http://e.com/?s=iphone15-pro-max-256gb-2023", nil},
		{"http://e.com/?s=iphone15+pro+max+256gb+2023", "http://e.com/?s=iphone15+pro+max+256gb+2023", nil},
		{"http://e.com/?s=k3q8v2m5n7b1c9x0z4l6j8", "http://e.com/", []string{"s"}},
		{"http://e.com/?s=" + hex32, "http://e.com/", []string{"s"}},
		// Not sessions: similar names.
		{"http://e.com/?ssid=" + hex32 + "&sids=" + hex32, "http://e.com/?ssid=" + hex32 + "&sids=" + hex32, nil},
		// Fragment kept; empty query dropped.
		{"http://e.com/a?PHPSESSID=1#top", "http://e.com/a#top", []string{"PHPSESSID"}},
	}
	for _, tt := range tests {
		u, err := Parse(tt.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.in, err)
		}
		before := *u
		got, removed := StripSessionIDs(u)
		if got.String() != tt.want || !slices.Equal(removed, tt.removed) {
			t.Errorf("StripSessionIDs(%q) = %q, %q; want %q, %q", tt.in, got, removed, tt.want, tt.removed)
		}
		if *u != before {
			t.Errorf("StripSessionIDs(%q) modified its argument", tt.in)
		}
		if tt.removed == nil && got != u {
			t.Errorf("StripSessionIDs(%q) copied a URL it did not change", tt.in)
		}
		// Key agrees with Canonical of the stripped URL.
		if k, c := Key(u, nil), Canonical(got); k != c {
			t.Errorf("Key(%q) = %q, want Canonical(stripped) = %q", tt.in, k, c)
		}
	}
}

func TestStripParams(t *testing.T) {
	tests := []struct {
		in      string
		names   []string
		want    string
		removed []string
	}{
		{"http://e.com/a?ref=x&id=1", []string{"ref"}, "http://e.com/a?id=1", []string{"ref"}},
		{"http://e.com/a?ref=x&id=1&ref=y", []string{"ref", "utm"}, "http://e.com/a?id=1", []string{"ref", "ref"}},
		{"http://e.com/a?Ref=x", []string{"ref"}, "http://e.com/a?Ref=x", nil}, // case-sensitive, as Clean-param
		{"http://e.com/a?r%65f=x", []string{"ref"}, "http://e.com/a", []string{"ref"}},
		{"http://e.com/a?ref", []string{"ref"}, "http://e.com/a", []string{"ref"}},
		{"http://e.com/a", []string{"ref"}, "http://e.com/a", nil},
		{"http://e.com/a?ref=1", nil, "http://e.com/a?ref=1", nil},
	}
	for _, tt := range tests {
		u, _ := Parse(tt.in)
		got, removed := StripParams(u, tt.names)
		if got.String() != tt.want || !slices.Equal(removed, tt.removed) {
			t.Errorf("StripParams(%q, %q) = %q, %q; want %q, %q", tt.in, tt.names, got, removed, tt.want, tt.removed)
		}
	}
}

func TestKey(t *testing.T) {
	drop := func(name string) bool { return name == "sort" || name == "utm source" }
	tests := []struct{ in, want string }{
		{"http://E.com/a/../b?sort=price&id=2&PHPSESSID=xyz#f", "http://e.com/b?id=2"},
		{"http://e.com/b;jsessionid=AB12?id=2&sort=name", "http://e.com/b?id=2"},
		{"http://e.com/b?utm+source=x&id=2", "http://e.com/b?id=2"},
		{"http://e.com/b?utm%20source=x&id=2", "http://e.com/b?id=2"},
		{"http://e.com/b?sort=1", "http://e.com/b"},
		{"http://e.com/b?sorted=1", "http://e.com/b?sorted=1"},
		{"http://e.com/a/.;jsessionid=1/b", "http://e.com/a/b"},
		{"http://e.com/b?z=1&sid=2&a=1", "http://e.com/b?a=1&sid=2&z=1"},
	}
	for _, tt := range tests {
		u, err := Parse(tt.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.in, err)
		}
		if got := Key(u, drop); got != tt.want {
			t.Errorf("Key(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzKey(f *testing.F) {
	for _, s := range []string{
		"http://e.com/a;jsessionid=1/b?PHPSESSID=1&s=k3q8v2m5n7b1c9x0z4l6j8&x=1",
		"http://e.com/.;jsessionid=1/..;x/?sid=0123456789abcdef0123",
		"http://e.com/?drop=1&&keep=%41", "http://e.com/;;;/?%=",
	} {
		f.Add(s)
	}
	drop := func(name string) bool { return strings.HasPrefix(name, "drop") }
	f.Fuzz(func(t *testing.T, s string) {
		u, err := Parse(s)
		if err != nil {
			return
		}
		k := Key(u, drop)
		stripped, _ := StripSessionIDs(u)
		StripParams(stripped, []string{"drop"})
		u2, err := Parse(k)
		if err != nil {
			t.Fatalf("Key(%q) = %q does not parse: %v", s, k, err)
		}
		if k2 := Key(u2, drop); k2 != k {
			t.Fatalf("Key not idempotent for %q: %q then %q", s, k, k2)
		}
	})
}

func BenchmarkKey(b *testing.B) {
	sets := []struct {
		name string
		urls []string
	}{
		// The URLs of BenchmarkCanonical: Key costs what Canonical costs.
		{"plain", []string{
			"http://www.example.com/",
			"https://Example.com:443/a/b/../c/%7euser/index.html?z=1&a=2&m=%41",
			"http://shop.example.com/category/shoes?color=red&size=42&sort=price",
			"http://example.com/very/long/path/with/many/segments/and/a/file.html",
		}},
		{"sessions", []string{
			"http://shop.example.com/category/shoes;jsessionid=0123456789ABCDEF?color=red&size=42&sort=price",
			"http://example.com/forum/viewtopic.php?t=42&PHPSESSID=k3q8v2m5n7b1c9x0z4l6j8h2g5",
		}},
	}
	drop := func(name string) bool { return name == "sort" }
	for _, set := range sets {
		parsed := make([]*url.URL, len(set.urls))
		for i, s := range set.urls {
			u, err := Parse(s)
			if err != nil {
				b.Fatal(err)
			}
			parsed[i] = u
		}
		b.Run(set.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				Key(parsed[i%len(parsed)], drop)
			}
		})
	}
}

func TestStripFunc(t *testing.T) {
	drop := func(name string) bool { return name == "trk" || name == ";vsid" }
	for _, c := range []struct{ in, fetch, key string }{
		{"http://a.test/p;vsid=AB12CD/x?trk=9f&id=3", "http://a.test/p/x?id=3", "http://a.test/p/x?id=3"},
		{"http://a.test/p;other=1?b=2&trk=1&a=1", "http://a.test/p;other=1?b=2&a=1", "http://a.test/p;other=1?a=1&b=2"},
		{"http://a.test/p;jsessionid=0123456789ABCDEF?q=1", "http://a.test/p?q=1", "http://a.test/p?q=1"},
		{"http://a.test/plain", "http://a.test/plain", "http://a.test/plain"},
	} {
		u, err := url.Parse(c.in)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := StripFunc(u, drop)
		if got.String() != c.fetch {
			t.Errorf("StripFunc(%s) = %s, want %s", c.in, got, c.fetch)
		}
		if k := Key(u, drop); k != c.key {
			t.Errorf("Key(%s) = %s, want %s", c.in, k, c.key)
		}
	}
}
