package extract

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
)

const docURL = "http://example.com/dir/page.html?x=1"

type want struct {
	url      string
	tag      string
	nofollow bool
}

func links(t *testing.T, p *Page) []want {
	t.Helper()
	var got []want
	for _, l := range p.Links {
		got = append(got, want{l.URL, l.Tag, l.NoFollow})
	}
	return got
}

func mustParse(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestLinks(t *testing.T) {
	tests := []struct {
		name string
		html string
		want []want
	}{
		{"relative and absolute", `<a href="a.html">x</a><a href="/b">y</a><a href="https://other.example/c">z</a>`,
			[]want{{"http://example.com/dir/a.html", "a", false}, {"http://example.com/b", "a", false}, {"https://other.example/c", "a", false}}},
		{"area", `<map><area href="/m" shape="rect"></map>`, []want{{"http://example.com/m", "area", false}}},
		{"dot segments and query-only", `<a href="../up">u</a><a href="?q=2">q</a><a href="//cdn.example/x">p</a>`,
			[]want{{"http://example.com/up", "a", false}, {"http://example.com/dir/page.html?q=2", "a", false}, {"http://cdn.example/x", "a", false}}},
		{"fragment removed", `<a href="#top">t</a><a href="/f#sec">f</a>`,
			[]want{{"http://example.com/dir/page.html?x=1", "a", false}, {"http://example.com/f", "a", false}}},
		{"empty href is the page", `<a href="">self</a>`, []want{{"http://example.com/dir/page.html?x=1", "a", false}}},
		{"no href", `<a name="x">n</a><a>m</a>`, nil},
		{"non-http schemes skipped",
			`<a href="javascript:void(0)">j</a><a href="mailto:a@example.com">m</a><a href="tel:+1">t</a>` +
				`<a href="data:text/html,hi">d</a><a href="ftp://example.com/f">f</a><a href=" JavaScript:x">J</a>` +
				"<a href=\"java\tscript:x\">j2</a><a href=\"/ok\">ok</a>",
			[]want{{"http://example.com/ok", "a", false}}},
		{"whitespace trimmed and removed", "<a href=\"  /a\n/b\t \">x</a><a href=\"\n\thttp://Example.COM:80/c\r\n\">y</a>",
			[]want{{"http://example.com/a/b", "a", false}, {"http://example.com/c", "a", false}}},
		{"entities decoded", `<a href="/s?a=1&amp;b=2">x</a><a href="/&#x41;&#66;">y</a><a href="/p&quot;q">z</a>`,
			[]want{{"http://example.com/s?a=1&b=2", "a", false}, {"http://example.com/AB", "a", false}, {"http://example.com/p%22q", "a", false}}},
		{"uppercase tags and attributes", `<A HREF="U">u</A><AREA Href="/V"><BASE HREF="/late/">`,
			[]want{{"http://example.com/late/U", "a", false}, {"http://example.com/V", "area", false}}},
		{"nofollow", `<a href="/n" rel="nofollow">n</a><a href="/m" rel="external NoFollow noopener">m</a><a href="/f" rel="follow">f</a>`,
			[]want{{"http://example.com/n", "a", true}, {"http://example.com/m", "a", true}, {"http://example.com/f", "a", false}}},
		{"duplicates once, followed if any is", `<a href="/d" rel="nofollow">1</a><a href="/d#x">2</a><a href="http://EXAMPLE.com:80/d">3</a><a href="/e" rel=nofollow>4</a><a href="/e" rel=nofollow>5</a>`,
			[]want{{"http://example.com/d", "a", false}, {"http://example.com/e", "a", true}}},
		{"canonical duplicates", `<a href="/q?b=1&a=2">1</a><a href="/q?a=2&b=1">2</a><a href="/%7Eu">3</a><a href="/~u">4</a>`,
			[]want{{"http://example.com/q?b=1&a=2", "a", false}, {"http://example.com/%7Eu", "a", false}}},
		{"duplicate attributes: first wins", `<a href="/first" href="/second">x</a>`, []want{{"http://example.com/first", "a", false}}},
		{"unparseable skipped", `<a href="http://[::1">x</a><a href="/%zz">y</a><a href="http://example.com:99999/">z</a><a href="/ok">ok</a>`,
			[]want{{"http://example.com/ok", "a", false}}},
		{"IDNA host", `<a href="http://bücher.example/x">b</a>`, []want{{"http://xn--bcher-kva.example/x", "a", false}}},
		{"malformed HTML", `<html><body><a href=/unquoted>x<a href='/single'>y</p></div><a href="/unclosed`,
			[]want{{"http://example.com/unquoted", "a", false}, {"http://example.com/single", "a", false}}},
		{"links in script and comments ignored", `<script>var s = '<a href="/js">';</script><!-- <a href="/comment"> --><a href="/real">r</a><textarea><a href="/ta"></textarea>`,
			[]want{{"http://example.com/real", "a", false}}},
		{"self-closing", `<a href="/sc"/>`, []want{{"http://example.com/sc", "a", false}}},
		{"stylesheets and embeds ignored by default, frames kept", `<link href="/style.css" rel="stylesheet"><img src="/i.png"><script src="/s.js"></script><iframe src="/f"></iframe>`,
			[]want{{"http://example.com/f", "iframe", false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := HTML(mustParse(t, docURL), []byte(tt.html))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, links(t, p), cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("links mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBase(t *testing.T) {
	tests := []struct {
		name, html, base, link string
	}{
		{"absolute base", `<base href="https://cdn.example/root/"><a href="x">x</a>`, "https://cdn.example/root/", "https://cdn.example/root/x"},
		{"relative base", `<base href="../other/"><a href="x">x</a>`, "http://example.com/other/", "http://example.com/other/x"},
		{"first base wins", `<base href="/one/"><base href="/two/"><a href="x">x</a>`, "http://example.com/one/", "http://example.com/one/x"},
		{"base without href skipped", `<base target="_blank"><base href="/two/"><a href="x">x</a>`, "http://example.com/two/", "http://example.com/two/x"},
		{"invalid base ignored", `<base href="javascript:alert(1)"><a href="x">x</a>`, docURL, "http://example.com/dir/x"},
		{"unparseable base ignored", `<base href="http://[bad"><a href="x">x</a>`, docURL, "http://example.com/dir/x"},
		{"base applies to earlier links", `<a href="x">x</a><base href="/late/">`, "http://example.com/late/", "http://example.com/late/x"},
		{"base fragment dropped", `<base href="/b/#f"><a href="x">x</a>`, "http://example.com/b/", "http://example.com/b/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := HTML(mustParse(t, docURL), []byte(tt.html))
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Base.String(); got != tt.base {
				t.Errorf("Base = %q, want %q", got, tt.base)
			}
			if len(p.Links) != 1 || p.Links[0].URL != tt.link {
				t.Errorf("Links = %v, want [%s]", links(t, p), tt.link)
			}
		})
	}
}

func TestMetaRobots(t *testing.T) {
	tests := []struct {
		html              string
		agent             string
		nofollow, noindex bool
	}{
		{`<meta name="robots" content="noindex, nofollow">`, "", true, true},
		{`<meta name="ROBOTS" content="NOFOLLOW">`, "", true, false},
		{`<META NAME="robots" CONTENT="noindex">`, "", false, true},
		{`<meta name="robots" content="none">`, "", true, true},
		{`<meta name="robots" content="all">`, "", false, false},
		{`<meta name="robots" content="index,follow">`, "", false, false},
		{`<meta name=" robots " content=" noindex ">`, "", false, true},
		{`<meta name="robots" content="noindex"><meta name="robots" content="nofollow">`, "", true, true},
		{`<meta name="googlebot" content="nofollow">`, "", false, false},
		{`<meta name="gentlecrawl" content="nofollow">`, "", false, false},
		{`<meta name="GentleCrawl" content="nofollow">`, "gentlecrawl", true, false},
		{`<meta name="otherbot" content="nofollow">`, "gentlecrawl", false, false},
		{`<meta content="nofollow">`, "", false, false},
		{`<meta name="description" content="nofollow">`, "", false, false},
		{`<meta name="robots">`, "", false, false},
	}
	for _, tt := range tests {
		p, err := Options{Agent: tt.agent}.HTML(mustParse(t, docURL), []byte(tt.html))
		if err != nil {
			t.Fatal(err)
		}
		if p.NoFollow != tt.nofollow || p.NoIndex != tt.noindex {
			t.Errorf("%s (agent %q): NoFollow %v NoIndex %v, want %v %v", tt.html, tt.agent, p.NoFollow, p.NoIndex, tt.nofollow, tt.noindex)
		}
	}
}

func TestTokenTooLong(t *testing.T) {
	body := `<a href="/before">b</a><a title="` + strings.Repeat("x", 5000) + `" href="/long">l</a><a href="/after">a</a>`
	p, err := Options{MaxToken: 1024}.HTML(mustParse(t, docURL), []byte(body))
	if !errors.Is(err, ErrTokenTooLong) || !errors.Is(err, html.ErrBufferExceeded) {
		t.Fatalf("err = %v, want ErrTokenTooLong wrapping html.ErrBufferExceeded", err)
	}
	if !strings.HasPrefix(err.Error(), "extract: token exceeds buffer") {
		t.Errorf("err = %q", err)
	}
	if p == nil || len(p.Links) != 1 || p.Links[0].URL != "http://example.com/before" {
		t.Errorf("page = %+v, want the link before the long token", p)
	}
	// The default limit takes the same page in its stride.
	if p, err := HTML(mustParse(t, docURL), []byte(body)); err != nil || len(p.Links) != 3 {
		t.Errorf("default options: %d links, err %v", len(p.Links), err)
	}
}

func TestEmptyAndBinary(t *testing.T) {
	for _, body := range [][]byte{nil, {}, []byte("\x00\xff\xfe<<<>>>&&&"), []byte("<"), []byte("<a href")} {
		p, err := HTML(mustParse(t, docURL), body)
		if err != nil || p == nil || p.Base.String() != docURL {
			t.Errorf("%q: page %+v, err %v", body, p, err)
		}
	}
	if _, err := HTML(nil, nil); err == nil {
		t.Error("nil document URL: no error")
	}
}

func FuzzHTML(f *testing.F) {
	for _, s := range []string{
		`<a href="a">x</a><base href="/b/"><area href="//h/x" rel=nofollow>`,
		`<meta name=robots content=none><a href="javascript:x"><a href="http://[::1]:8080/a?b#c">`,
		`<A HREF="  ../../x&amp;y  ">`, `<a href="http://bücher.example/">`, `<!--`, `<script><a href=/x>`, `<a href="//:81:81">`,
	} {
		f.Add(s)
	}
	u, _ := url.Parse(docURL)
	f.Fuzz(func(t *testing.T, body string) {
		p, err := Options{MaxToken: 4096}.HTML(u, []byte(body))
		if p == nil {
			t.Fatalf("nil page, err %v", err)
		}
		for _, l := range p.Links {
			u, err := url.Parse(l.URL)
			if err != nil {
				// url.Parse refuses a few hosts that urlnorm lets
				// through (":81:81", from "//:81:81").
				if !strings.HasPrefix(l.URL, "http://") && !strings.HasPrefix(l.URL, "https://") {
					t.Fatalf("bad link %q: %v", l.URL, err)
				}
				continue
			}
			if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.Fragment != "" || u.String() != l.URL {
				t.Fatalf("bad link %q", l.URL)
			}
		}
	})
}

func BenchmarkHTML(b *testing.B) {
	body := benchPage(120<<10, 600)
	u := mustParse(b, "https://www.example.com/section/article.html")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		p, err := HTML(u, body)
		if err != nil || len(p.Links) != 600 {
			b.Fatalf("%d links, err %v", len(p.Links), err)
		}
	}
}

// benchPage returns an HTML page of about size bytes with n distinct
// links of various shapes, padded with text and markup.
func benchPage(size, n int) []byte {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>Benchmark</title>` +
		`<meta name="robots" content="index, follow"><link rel="stylesheet" href="/s.css"></head><body>`)
	per := size / n
	for i := range n {
		start := b.Len()
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, `<p class="item"><a href="/item/%d?ref=list&amp;page=2">Item %d</a>`, i, i)
		case 1:
			fmt.Fprintf(&b, `<div><a class="nav" href="../other/%d.html" rel="nofollow">Other %d</a>`, i, i)
		case 2:
			fmt.Fprintf(&b, `<li><a href="https://cdn%d.example.org/assets/%d#frag">Asset</a>`, i%7, i)
		case 3:
			fmt.Fprintf(&b, `<span><area href="//www.example.com/map/%d" alt="m">`, i)
		}
		for b.Len()-start < per {
			b.WriteString(" Lorem ipsum dolor sit amet, <b>consectetur</b> adipiscing elit.")
		}
		b.WriteString("</p>\n")
	}
	b.WriteString("</body></html>")
	return []byte(b.String())
}
