package urlnorm

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"http://example.com/", "http://example.com/"},
		{"  https://Example.COM/a?b#c \n", "https://example.com/a?b#c"},
		{"HTTP://EXAMPLE.com", "http://example.com"},
		{"http://example.com:80/", "http://example.com/"},
		{"https://example.com:443/", "https://example.com/"},
		{"http://example.com:443/", "http://example.com:443/"},
		{"http://example.com:0080/", "http://example.com/"},
		{"http://example.com:/", "http://example.com/"},
		{"http://example.com:8080/x", "http://example.com:8080/x"},
		{"http://bücher.example/", "http://xn--bcher-kva.example/"},
		{"http://BÜCHER.example/", "http://xn--bcher-kva.example/"},
		{"http://例え.テスト/", "http://xn--r8jz45g.xn--zckzah/"},
		{"http://xn--bcher-kva.example/", "http://xn--bcher-kva.example/"},
		{"http://my_host.example/", "http://my_host.example/"},
		{"http://[2001:DB8::1]/", "http://[2001:db8::1]/"},
		{"http://[2001:db8::1]:80/", "http://[2001:db8::1]/"},
		{"http://[2001:db8::1]:8080/", "http://[2001:db8::1]:8080/"},
		{"http://192.0.2.1:8080/", "http://192.0.2.1:8080/"},
		{"http://user:pw@example.com/", "http://user:pw@example.com/"},
		{"http://example.com/ü", "http://example.com/%C3%BC"},
	}
	for _, tt := range tests {
		u, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := u.String(); got != tt.want {
			t.Errorf("Parse(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in   string
		want error
		msg  string
	}{
		{"ftp://example.com/", ErrScheme, `urlnorm: parse "ftp://example.com/": unsupported scheme "ftp"`},
		{"mailto:a@example.com", ErrScheme, ""},
		{"javascript:alert(1)", ErrScheme, ""},
		{"example.com/a", ErrScheme, ""},
		{"/relative", ErrScheme, ""},
		{"http:///path", ErrNoHost, ""},
		{"http:opaque", ErrNoHost, ""},
		{"http://", ErrNoHost, ""},
		{"http://example.com:99999/", ErrPort, ""},
		{"http://example.com:0/", ErrPort, ""},
		{"http://example.com:8x/", ErrSyntax, ""},
		{"http://exa\tmple.com/", ErrControl, ""},
		{"http://example.com/a\x00b", ErrControl, ""},
		{"http://example.com/a\x7f", ErrControl, ""},
		{"http://example.com/%zz", ErrSyntax, ""},
		{"http://xn--a.example/\u00e9", nil, ""}, // ASCII host: not IDNA-checked
		{"http://a\u200d\u0301.example/", ErrHost, ""},
		{"http://\u034f/", ErrHost, ""}, // a host IDNA maps to nothing
		{"http://[::1/", ErrSyntax, ""},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		if tt.want == nil {
			if err != nil {
				t.Errorf("Parse(%q): unexpected error %v", tt.in, err)
			}
			continue
		}
		if !errors.Is(err, tt.want) {
			t.Errorf("Parse(%q) error = %v, want %v", tt.in, err, tt.want)
			continue
		}
		var ue *Error
		if !errors.As(err, &ue) || ue.URL != tt.in {
			t.Errorf("Parse(%q) error %v is not an *Error for the input", tt.in, err)
		}
		if tt.msg != "" && err.Error() != tt.msg {
			t.Errorf("Parse(%q) error message %q, want %q", tt.in, err.Error(), tt.msg)
		}
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		// RFC 3986 §6.2.2 examples.
		{"HTTP://www.Example.com/", "http://www.example.com/"},
		{"http://example.com/a%c2%b1b", "http://example.com/a%C2%B1b"},
		{"http://example.com/%7Euser/%41%62%63", "http://example.com/~user/Abc"},
		{"http://example.com/%7euser", "http://example.com/~user"},
		{"http://example.com/a/./b/../b/%63/%7bfoo%7d", "http://example.com/a/b/c/%7Bfoo%7D"},
		// RFC 3986 §6.2.3 examples: all equivalent.
		{"http://example.com", "http://example.com/"},
		{"http://example.com/", "http://example.com/"},
		{"http://example.com:/", "http://example.com/"},
		{"http://example.com:80/", "http://example.com/"},
		// Reserved characters keep their escapes.
		{"http://example.com/a%2fb", "http://example.com/a%2Fb"},
		{"http://example.com/a%2Fb%3f", "http://example.com/a%2Fb%3F"},
		{"http://example.com/?q=a%26b%3dc", "http://example.com/?q=a%26b%3Dc"},
		{"http://example.com/?q=%7e%41", "http://example.com/?q=~A"},
		// Dot segments, RFC 3986 §5.2.4.
		{"http://example.com/a/b/c/./../../g", "http://example.com/a/g"},
		{"http://example.com/mid/content=5/../6", "http://example.com/mid/6"},
		{"http://example.com/..", "http://example.com/"},
		{"http://example.com/../../a", "http://example.com/a"},
		{"http://example.com/a/.", "http://example.com/a/"},
		{"http://example.com/a/..", "http://example.com/"},
		{"http://example.com/a/%2e%2E/b", "http://example.com/b"},
		{"http://example.com/a/.b/..c/", "http://example.com/a/.b/..c/"},
		{"http://example.com//a//b", "http://example.com//a//b"},
		// Fragment and query.
		{"http://example.com/a#frag", "http://example.com/a"},
		{"http://example.com/a?#frag", "http://example.com/a"},
		{"http://example.com/a?", "http://example.com/a"},
		{"http://example.com/a?b=2&a=1&c=3", "http://example.com/a?a=1&b=2&c=3"},
		{"http://example.com/a?b=2&a=1&b=1&a=0", "http://example.com/a?a=1&a=0&b=2&b=1"},
		{"http://example.com/a?a=1&&b", "http://example.com/a?a=1&b"},
		{"http://example.com/a?&", "http://example.com/a"},
		{"http://example.com/a?ab=1&a=2", "http://example.com/a?a=2&ab=1"},
		{"http://example.com/?q=a b", "http://example.com/?q=a%20b"},
		{"http://example.com/?q=ü", "http://example.com/?q=%C3%BC"},
		{"http://example.com/?q=a+b", "http://example.com/?q=a+b"},
		// Host and port.
		{"https://Example.com:443/x", "https://example.com/x"},
		{"https://example.com:80/x", "https://example.com:80/x"},
		{"http://[2001:db8::A]:80/", "http://[2001:db8::a]/"},
		{"http://[2001:db8::a]:81/", "http://[2001:db8::a]:81/"},
		{"http://bücher.example/", "http://xn--bcher-kva.example/"},
		{"http://user@example.com/", "http://user@example.com/"},
	}
	for _, tt := range tests {
		u, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		got := Canonical(u)
		if got != tt.want {
			t.Errorf("Canonical(%q) = %q, want %q", tt.in, got, tt.want)
		}
		checkIdempotent(t, tt.in, got)
	}
}

// TestCanonicalRaw feeds URLs that did not come through Parse.
func TestCanonicalRaw(t *testing.T) {
	u := &url.URL{Scheme: "HTTPS", Host: "A.example:443", Path: ""}
	if got, want := Canonical(u), "https://a.example/"; got != want {
		t.Errorf("Canonical = %q, want %q", got, want)
	}
	u = &url.URL{Scheme: "http", Host: "a.example", Path: "rel/x"}
	if got, want := Canonical(u), "http://a.example/rel/x"; got != want {
		t.Errorf("Canonical = %q, want %q", got, want)
	}
}

func TestCanonicalDoesNotModify(t *testing.T) {
	u, _ := Parse("http://example.com/a/../b?z=1&a=2#f")
	before := *u
	Canonical(u)
	if *u != before {
		t.Errorf("Canonical modified its argument: %+v, was %+v", *u, before)
	}
}

func TestHostKey(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"http://Example.com/a?b", "http://example.com"},
		{"http://example.com:80/", "http://example.com"},
		{"https://example.com:443/", "https://example.com"},
		{"https://example.com:8443/", "https://example.com:8443"},
		{"http://user:pw@example.com/", "http://example.com"},
		{"http://[2001:db8::1]:8080/", "http://[2001:db8::1]:8080"},
		{"http://[2001:db8::1]:80/", "http://[2001:db8::1]"},
		{"http://bücher.example/", "http://xn--bcher-kva.example"},
	}
	for _, tt := range tests {
		u, err := Parse(tt.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.in, err)
		}
		if got := HostKey(u); got != tt.want {
			t.Errorf("HostKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// Not through Parse: still lowercased with the default port dropped.
	u := &url.URL{Scheme: "HTTP", Host: "EXAMPLE.com:80"}
	if got, want := HostKey(u), "http://example.com"; got != want {
		t.Errorf("HostKey = %q, want %q", got, want)
	}
}

func TestClean(t *testing.T) {
	base, _ := Parse("http://example.com/a/b")
	ref, _ := url.Parse("HTTPS://Other.Example:443/x#f")
	c, err := Clean(base.ResolveReference(ref))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.String(), "https://other.example/x#f"; got != want {
		t.Errorf("Clean = %q, want %q", got, want)
	}
	if _, err := Clean(&url.URL{Scheme: "ftp", Host: "x"}); !errors.Is(err, ErrScheme) {
		t.Errorf("Clean(ftp) error = %v, want ErrScheme", err)
	}
}

func checkIdempotent(t *testing.T, in, canon string) {
	t.Helper()
	u, err := Parse(canon)
	if err != nil {
		t.Errorf("Canonical(%q) = %q, which does not parse: %v", in, canon, err)
		return
	}
	if again := Canonical(u); again != canon {
		t.Errorf("Canonical not idempotent for %q: %q then %q", in, canon, again)
	}
}

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		"http://example.com/", "HTTP://a.B:80/./x/../y?b=1&a=2#f", "https://[::1]:443/%7e?%2f",
		"http://bücher.example/ü?ü=ü", "http://a/%2e%2E/..//.", "http://a/?&&=&",
		"http://u:p@h:8080/p;q?r", "http://a/b%zz", "http://a/?q=%zz%", "http://a/.%2e/x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := Parse(s)
		if err != nil {
			return
		}
		c := Canonical(u)
		HostKey(u)
		if !strings.HasPrefix(c, "http://") && !strings.HasPrefix(c, "https://") {
			t.Fatalf("Canonical(%q) = %q: bad scheme", s, c)
		}
		u2, err := Parse(c)
		if err != nil {
			t.Fatalf("Canonical(%q) = %q does not parse: %v", s, c, err)
		}
		if c2 := Canonical(u2); c2 != c {
			t.Fatalf("Canonical not idempotent for %q: %q then %q", s, c, c2)
		}
	})
}

func BenchmarkCanonical(b *testing.B) {
	urls := []string{
		"http://www.example.com/",
		"https://Example.com:443/a/b/../c/%7euser/index.html?z=1&a=2&m=%41",
		"http://shop.example.com/category/shoes?color=red&size=42&sort=price",
		"http://example.com/very/long/path/with/many/segments/and/a/file.html",
	}
	parsed := make([]*url.URL, len(urls))
	for i, s := range urls {
		u, err := Parse(s)
		if err != nil {
			b.Fatal(err)
		}
		parsed[i] = u
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		Canonical(parsed[i%len(parsed)])
	}
}

// TestCleanRefusesColonInHost: a relative reference "//:81:81" resolves
// (url.URL.ResolveReference) to a URL whose host, once the port is split
// off, still holds a colon; no request could reach it.
func TestCleanRefusesColonInHost(t *testing.T) {
	base, _ := url.Parse("http://example.com/a/")
	for _, ref := range []string{"//:81:81", "//a:b:80/x"} {
		r, err := url.Parse(ref)
		if err != nil {
			continue // refused already
		}
		u := base.ResolveReference(r)
		if _, err := Clean(u); !errors.Is(err, ErrHost) {
			t.Errorf("Clean(%q) = %v, want ErrHost", u.Host, err)
		}
	}
	if _, err := Clean(&url.URL{Scheme: "http", Host: "[::1]:81", Path: "/"}); err != nil {
		t.Errorf("an IPv6 literal with a port: %v", err)
	}
}

// TestHostKeyMemo checks the remembered keys against keys made afresh, for
// more hosts than the memo has slots, asked for in a random order from
// several goroutines, and that a host asked for again costs nothing.
func TestHostKeyMemo(t *testing.T) {
	var urls []*url.URL
	for i := range 300 {
		for _, scheme := range []string{"http", "https", "HTTP"} {
			host := fmt.Sprintf("h%d.example", i)
			switch i % 4 {
			case 1:
				host = strings.ToUpper(host) + ":80"
			case 2:
				host += ":8443"
			case 3:
				host = fmt.Sprintf("[2001:db8::%x]:443", i)
			}
			urls = append(urls, &url.URL{Scheme: scheme, Host: host})
		}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 9))
			for range 20000 {
				u := urls[r.IntN(len(urls))]
				if got, want := HostKey(u), hostKey(u); got != want {
					t.Errorf("HostKey(%s://%s) = %q, want %q", u.Scheme, u.Host, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
	u := &url.URL{Scheme: "http", Host: "Example.com:80", Path: "/a"}
	HostKey(u)
	if n := testing.AllocsPerRun(100, func() { HostKey(u) }); n != 0 {
		t.Errorf("HostKey of a host asked for again: %v allocations, want 0", n)
	}
}
