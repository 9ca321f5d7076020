package fetch

import (
	"errors"
	"net/url"
	"testing"
)

func TestResolveLocation(t *testing.T) {
	base, _ := url.Parse("http://www.example.com/dir/page.html?q=1#sec")
	for _, tt := range []struct {
		loc, want string
	}{
		// RFC 3986 §5.4 style resolution.
		{"/new", "http://www.example.com/new#sec"},
		{"other.html", "http://www.example.com/dir/other.html#sec"},
		{"../up", "http://www.example.com/up#sec"},
		{"?x=2", "http://www.example.com/dir/page.html?x=2#sec"},
		{"#frag", "http://www.example.com/dir/page.html?q=1#frag"},
		{"//cdn.example.com/a", "http://cdn.example.com/a#sec"},
		{"https://secure.example.com/", "https://secure.example.com/#sec"},
		{"HTTPS://Secure.Example.com/x#own", "https://Secure.Example.com/x#own"},
		// What servers send, read as browsers read it.
		{"  /spaced  ", "http://www.example.com/spaced#sec"},
		{"/a b/c d?e f", "http://www.example.com/a%20b/c%20d?e%20f#sec"},
		{"/tab\tand\nnewline", "http://www.example.com/tabandnewline#sec"},
		{`\back\slash`, "http://www.example.com/back/slash#sec"},
		{`\\other.example.com\x`, "http://other.example.com/x#sec"},
		{"http:/same-scheme", "http://www.example.com/same-scheme#sec"},
		{"http:relative", "http://www.example.com/dir/relative#sec"},
		{"https:other.example.com/p", "https://other.example.com/p#sec"},
		{"https:/other.example.com/p", "https://other.example.com/p#sec"},
		{"http:///three.example.com/", "http://three.example.com/#sec"},
		{"////four.example.com/", "http://four.example.com/#sec"},
		{"/caf\u00e9", "http://www.example.com/caf%C3%A9#sec"},
		{"/100%", "http://www.example.com/100%25#sec"},
		{"/ok%20already", "http://www.example.com/ok%20already#sec"},
		{"/<x>", "http://www.example.com/%3Cx%3E#sec"},
		{"http://user:pw@www.example.com/", "http://www.example.com/#sec"},
	} {
		got, err := ResolveLocation(base, tt.loc)
		if err != nil {
			t.Errorf("ResolveLocation(%q): %v", tt.loc, err)
			continue
		}
		if got.String() != tt.want {
			t.Errorf("ResolveLocation(%q) = %q, want %q", tt.loc, got, tt.want)
		}
	}
}

func TestResolveLocationErrors(t *testing.T) {
	base, _ := url.Parse("http://www.example.com/")
	long := "/" + string(make([]byte, 9000))
	for _, loc := range []string{
		"",
		"   ",
		"javascript:alert(1)",
		"mailto:a@example.com",
		"ftp://example.com/file",
		"data:text/html,hi",
		"http://",
		"http:// spaced.example.com/",
		"http://example.com:port/",
		"http://[::1/",
		long,
	} {
		u, err := ResolveLocation(base, loc)
		var le *LocationError
		if err == nil || !errors.Is(err, ErrBadLocation) || !errors.As(err, &le) || le.Location != loc {
			t.Errorf("ResolveLocation(%.40q) = %v, %v; want a *LocationError", loc, u, err)
		}
	}
	if _, err := ResolveLocation(nil, "/x"); !errors.Is(err, ErrBadLocation) {
		t.Errorf("nil base: %v", err)
	}
}

func FuzzResolveLocation(f *testing.F) {
	for _, s := range []string{"/a", `\\x\y`, "http:x", "https:/x", "//a b/", "?q", "#f", "%zz", "http://[::1]:80/"} {
		f.Add(s)
	}
	base, _ := url.Parse("https://www.example.com/a/b?c#d")
	f.Fuzz(func(t *testing.T, loc string) {
		u, err := ResolveLocation(base, loc)
		if err != nil {
			if !errors.Is(err, ErrBadLocation) {
				t.Fatalf("error %v does not match ErrBadLocation", err)
			}
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			t.Fatalf("ResolveLocation(%q) = %q: not a fetchable URL", loc, u)
		}
		// What it returns survives a round trip through its string form.
		if _, err := url.Parse(u.String()); err != nil {
			t.Fatalf("ResolveLocation(%q) = %q, which does not parse: %v", loc, u, err)
		}
	})
}

func TestCheckRedirect(t *testing.T) {
	chain := []string{"http://a/0"}
	for i := 1; i <= 10; i++ {
		next := "http://a/" + string(rune('0'+i%10)) + "x"
		if err := CheckRedirect(chain, next, 0); err != nil {
			t.Fatalf("hop %d refused: %v", i, err)
		}
		chain = append(chain, next)
	}
	if err := CheckRedirect(chain, "http://a/11", 0); !errors.Is(err, ErrTooManyRedirects) {
		t.Errorf("hop 11: %v, want ErrTooManyRedirects", err)
	}
	if err := CheckRedirect([]string{"http://a/", "http://b/"}, "http://a/", 0); !errors.Is(err, ErrRedirectLoop) {
		t.Errorf("loop: %v, want ErrRedirectLoop", err)
	}
	if err := CheckRedirect([]string{"http://a/", "http://b/"}, "http://c/", 1); !errors.Is(err, ErrTooManyRedirects) {
		t.Errorf("max 1: %v", err)
	}
}
