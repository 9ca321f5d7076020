package extract

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/gzip"
	"golang.org/x/text/encoding/japanese"
)

type kwant struct {
	url, tag, kind string
	nofollow       bool
}

func klinks(p *Page) []kwant {
	var got []kwant
	for _, l := range p.Links {
		got = append(got, kwant{l.URL, l.Tag, l.Kind.String(), l.NoFollow})
	}
	return got
}

func TestKinds(t *testing.T) {
	body := `<html><head><link rel="canonical" href="/canon"><link rel="alternate" hreflang="fr" href="/fr/">` +
		`<link rel="alternate" type="application/rss+xml" href="/feed"><script src="/app.js"></script></head><body>` +
		`<img src="/a.png" srcset="/a-2x.png 2x, /a,3.png 3x,/a-4x.png"><iframe src="/frame"></iframe><frame src="/f2">` +
		`<img src="/page"><a href="/page" rel=nofollow>p</a><a href="/a.png">img as page</a>` +
		`<link rel="canonical" href="/body-canon"></body></html>`
	p, err := Options{Embeds: true}.HTML(mustParse(t, docURL), []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []kwant{
		{"http://example.com/fr/", "link", "page", false},
		{"http://example.com/app.js", "script", "embed", false},
		{"http://example.com/a.png", "a", "page", false},
		{"http://example.com/a-2x.png", "img", "embed", false},
		{"http://example.com/a,3.png", "img", "embed", false},
		{"http://example.com/a-4x.png", "img", "embed", false},
		{"http://example.com/frame", "iframe", "page", false},
		{"http://example.com/f2", "frame", "page", false},
		{"http://example.com/page", "a", "page", true},
	}
	if diff := cmp.Diff(want, klinks(p), cmp.AllowUnexported(kwant{})); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
	if p.Canonical == nil || p.Canonical.String() != "http://example.com/canon" {
		t.Errorf("Canonical = %v", p.Canonical)
	}
	// Default options: no embeds, canonical not a link.
	p, _ = HTML(mustParse(t, docURL), []byte(body))
	for _, l := range p.Links {
		if l.Kind != KindPage || l.URL == "http://example.com/canon" {
			t.Errorf("default options: %v %v", l.Kind, l.URL)
		}
	}
	p, _ = Options{CanonicalLinks: true}.HTML(mustParse(t, docURL), []byte(body))
	if p.Links[0].URL != "http://example.com/canon" || p.Links[0].Tag != "link" {
		t.Errorf("CanonicalLinks: first link %v", p.Links[0])
	}
}

func TestCanonical(t *testing.T) {
	for _, tt := range []struct{ html, want string }{
		{`<link rel=canonical href="https://example.com/c?a=1#x">`, "https://example.com/c?a=1"},
		{`<link rel="Canonical" href="/c"><link rel=canonical href="/c#same">`, "http://example.com/c"},
		{`<link rel=canonical href="/c"><link rel=canonical href="/d">`, "<nil>"},
		{`<link rel=canonical href="mailto:x@y">`, "<nil>"},
		{`<body><link rel=canonical href="/c">`, "<nil>"},
		{`<link rel=canonical href="c"><base href="/b/">`, "http://example.com/b/c"},
	} {
		p, err := HTML(mustParse(t, docURL), []byte(tt.html))
		if err != nil {
			t.Fatal(err)
		}
		got := "<nil>"
		if p.Canonical != nil {
			got = p.Canonical.String()
		}
		if got != tt.want {
			t.Errorf("%s: Canonical %v, want %s", tt.html, p.Canonical, tt.want)
		}
	}
}

func TestCharset(t *testing.T) {
	sjis, _ := japanese.ShiftJIS.NewEncoder().String(`<a href="/日本/語?q=検索">x</a>`)
	const wantJ = "http://example.com/%E6%97%A5%E6%9C%AC/%E8%AA%9E?q=%E6%A4%9C%E7%B4%A2"
	tests := []struct {
		name, ct, body, want, charset string
	}{
		{"utf-8", "", `<meta charset="utf-8"><a href="/é?q=é">x</a>`, "http://example.com/%C3%A9?q=%C3%A9", "utf-8"},
		{"undeclared utf-8", "", `<a href="/é">x</a>`, "http://example.com/%C3%A9", ""},
		{"undeclared latin1", "", "<a href=\"/\xe9\">x</a>", "http://example.com/%C3%A9", ""},
		{"meta windows-1252", "", "<meta charset=windows-1252><a href=\"/caf\xe9?q=\xe9\">x</a>", "http://example.com/caf%C3%A9?q=%C3%A9", "windows-1252"},
		{"http-equiv", "", "<meta http-equiv=Content-Type content='text/html; charset=iso-8859-1'><a href=\"/\xe9\">x</a>", "http://example.com/%C3%A9", "windows-1252"},
		{"meta after link", "", "<a href=\"/\x82\xa0\">x</a><meta charset=shift_jis>", "http://example.com/%E3%81%82", "shift_jis"},
		{"content-type shift_jis", "text/html; charset=Shift_JIS", sjis, wantJ, "shift_jis"},
		{"meta shift_jis", "", `<meta charset="shift_jis">` + sjis, wantJ, "shift_jis"},
		{"content-type beats meta", `text/html;charset="shift_jis"`, `<meta charset="utf-8">` + sjis, wantJ, "shift_jis"},
		{"space escaped in query", "", `<a href="/a b?q=a b">x</a>`, "http://example.com/a%20b?q=a%20b", ""},
		{"IDNA host kept", "", `<a href="http://bücher.example/ü">x</a>`, "http://xn--bcher-kva.example/%C3%BC", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Options{ContentType: tt.ct}.HTML(mustParse(t, docURL), []byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Links) != 1 || p.Links[0].URL != tt.want {
				t.Errorf("links %v, want %s", klinks(p), tt.want)
			}
			if p.Charset != tt.charset {
				t.Errorf("Charset %q, want %q", p.Charset, tt.charset)
			}
		})
	}
	// UTF-16 with a byte order mark.
	u16 := []byte{0xFF, 0xFE}
	for _, r := range `<a href="/ü">x</a>` {
		u16 = append(u16, byte(r), byte(r>>8))
	}
	p, _ := HTML(mustParse(t, docURL), u16)
	if len(p.Links) != 1 || p.Links[0].URL != "http://example.com/%C3%BC" {
		t.Errorf("utf-16: %v", klinks(p))
	}
}

// TestResolveFastMatchesSlow checks the allocation-saving resolver against
// net/url on hrefs made of the characters the fast path takes: the URL it
// makes, and the string it writes for a link without making the URL.
func TestResolveFastMatchesSlow(t *testing.T) {
	bases := []string{"http://example.com/dir/page.html?x=1", "https://Ex.COM:443", "http://h:8080/a/b/", "http://h/a/./b/../c",
		"http://a!b$c.example/d/", "http://[FE80::1%25en0]:8080/z/", "https://[::1]/"}
	pieces := []string{"a", "b", "/", "/", ".", "..", "?", "q=1", "&", "#", "f", "//", "http:", "HTTPS:", "h2", ":81", "!", "(x)", "*", "'", "@", ";", "=", "~",
		"#impl-From%3C%26str%3E", "%", "%2", "%zz", "%3c", "\x01", "\x7f", " "}
	r := rand.New(rand.NewPCG(7, 8))
	var res resolver
	n := 0
	for range 200000 {
		var sb strings.Builder
		for range r.IntN(7) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		href := sb.String()
		base := mustParse(t, bases[r.IntN(len(bases))])
		res.init(base)
		h := res.clean([]byte(href))
		schemeEnd := -1
		if i := bytes.IndexByte(h, ':'); i > 0 && bytes.IndexAny(h[:i], "/?#") < 0 {
			if s := strings.ToLower(string(h[:i])); s != "http" && s != "https" {
				continue
			}
			schemeEnd = i
		}
		fast, ok := res.fastResolve(h, schemeEnd)
		if !ok {
			continue
		}
		n++
		slow := slowResolve(base, string(h)) // as resolve does: the cleaned href
		if (fast == nil) != (slow == nil) || fast != nil && (*fast != *slow) {
			t.Fatalf("base %s href %q: fast %#v, slow %#v", base, href, fast, slow)
		}
		if fast == nil {
			continue
		}
		b, _ := res.fastBuild(h, schemeEnd)
		if got, want := string(res.appendURL(nil, b)), slow.String(); got != want {
			t.Fatalf("base %s href %q: appendURL %q, String %q", base, href, got, want)
		}
	}
	if n < 10000 {
		t.Errorf("only %d hrefs took the fast path", n)
	}
}

func TestXRobotsTag(t *testing.T) {
	tests := []struct {
		header, agent     string
		noindex, nofollow bool
	}{
		{"noindex", "gentlecrawl", true, false},
		{"noindex, nofollow", "", true, true},
		{"NONE", "gentlecrawl", true, true},
		{"all", "gentlecrawl", false, false},
		{"googlebot: nofollow", "gentlecrawl", false, false},
		{"gentlecrawl: noindex, nofollow", "GentleCrawl", true, true},
		{"googlebot: noindex\notherbot: nofollow\ngentlecrawl: nofollow", "gentlecrawl", false, true},
		{"noarchive, googlebot: noindex", "gentlecrawl", false, false},
		{"unavailable_after: Friday, 25-Jun-2010 15:00:00 PST, noindex", "gentlecrawl", true, false},
		{"max-snippet: 20, nofollow", "gentlecrawl", false, true},
		{"gentlecrawl: noindex", "", false, false},
		{"", "gentlecrawl", false, false},
	}
	for _, tt := range tests {
		ni, nf := XRobotsTag(tt.header, tt.agent)
		if ni != tt.noindex || nf != tt.nofollow {
			t.Errorf("XRobotsTag(%q, %q) = %v, %v; want %v, %v", tt.header, tt.agent, ni, nf, tt.noindex, tt.nofollow)
		}
	}
}

func TestText(t *testing.T) {
	body := `<html><head><title>T&amp;itle</title><style>p{}</style><script>var x="<p>no</p>";</script></head>` +
		`<body><p>Hello <b>wor</b>ld</p><div>next&nbsp;one</div><noscript>hidden</noscript>` +
		`<template><p>tpl</p></template><ul><li>a</li><li>b</li></ul>  end ` +
		`<form><textarea name="wikitext">[[Page|a page]] &amp; its source</textarea></form></body></html>`
	got, err := Text([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if want := "T&itle\nHello world\nnext\u00a0one\na\nb\nend"; string(got) != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
	got, err = Options{MaxText: 8}.Text([]byte(body))
	if !errors.Is(err, ErrTextTooLong) || len(got) > 8 {
		t.Errorf("MaxText: %q, %v", got, err)
	}
	got, _ = Options{ContentType: "text/html; charset=windows-1252"}.Text([]byte("<p>caf\xe9</p>"))
	if string(got) != "café" {
		t.Errorf("windows-1252 text %q", got)
	}
}

const smURL = "https://example.com/shop/sitemap.xml"

func TestSitemapURLSet(t *testing.T) {
	body := `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc> https://example.com/shop/a?x=1&amp;y=2 </loc><lastmod>2024-03-05</lastmod><changefreq>daily</changefreq></url>
  <url><loc>https://example.com/shop/b</loc><lastmod>2024-03-05T10:20:30.5+01:00</lastmod><changefreq> Hourly </changefreq></url>
  <url><loc>https://example.com/shop/c</loc><lastmod>2024</lastmod><changefreq>sometimes</changefreq></url>
  <url><loc>https://example.com/shop/d</loc><lastmod>2024-03-05T10:20Z</lastmod></url>
  <url><loc>https://example.com/shop/e</loc><lastmod>yesterday</lastmod></url>
  <url><loc>https://example.com/other/x</loc></url>
  <url><loc>https://example.com/shop/../other/y</loc></url>
  <url><loc>http://example.com/shop/z</loc></url>
  <url><loc>https://cdn.example.com/shop/z</loc></url>
  <url><loc>ftp://example.com/shop/f</loc></url>
  <url><loc>https://example.com/shop/g?a=1&b=2</loc></url>
</urlset>`
	sm, err := ParseSitemap([]byte(body), mustParse(t, smURL))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range sm.URLs {
		got = append(got, strings.TrimSpace(e.URL.String()+" "+e.LastMod.UTC().Format(time.RFC3339Nano)+" "+e.ChangeFreq))
	}
	want := []string{
		"https://example.com/shop/a?x=1&y=2 2024-03-05T00:00:00Z daily",
		"https://example.com/shop/b 2024-03-05T09:20:30.5Z hourly",
		"https://example.com/shop/c 2024-01-01T00:00:00Z",
		"https://example.com/shop/d 2024-03-05T10:20:00Z",
		"https://example.com/shop/e 0001-01-01T00:00:00Z",
		"https://example.com/shop/g?a=1&b=2 0001-01-01T00:00:00Z",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("URLs (-want +got):\n%s", diff)
	}
	if sm.Index || sm.Gzip || sm.Text || sm.OutOfScope != 4 || sm.Invalid != 1 {
		t.Errorf("sitemap %+v", sm)
	}
}

func gz(t *testing.T, s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func TestSitemapIndexGzipText(t *testing.T) {
	index := `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>https://example.com/sitemaps/1.xml.gz</loc><lastmod>2024-01-02</lastmod></sitemap>
<sitemap><loc>https://other.example/s.xml</loc></sitemap></sitemapindex>`
	sm, err := ParseSitemap(gz(t, index), mustParse(t, smURL))
	if err != nil {
		t.Fatal(err)
	}
	if !sm.Index || !sm.Gzip || len(sm.Sitemaps) != 1 || sm.Sitemaps[0].URL.Path != "/sitemaps/1.xml.gz" || sm.OutOfScope != 1 {
		t.Errorf("index: %+v", sm)
	}
	text := "\xEF\xBB\xBFhttps://example.com/shop/1\r\n\nhttps://example.com/shop/2  \nnot a url\nhttps://example.com/3\n"
	sm, err = ParseSitemap([]byte(text), mustParse(t, smURL))
	if err != nil {
		t.Fatal(err)
	}
	if !sm.Text || len(sm.URLs) != 2 || sm.Invalid != 1 || sm.OutOfScope != 1 {
		t.Errorf("text: %+v", sm)
	}
	if _, err := ParseSitemap([]byte("<html><body>no</body></html>"), mustParse(t, smURL)); err == nil {
		t.Error("HTML page: no error")
	}
	if _, err := ParseSitemap([]byte{0x1f, 0x8b, 1, 2}, mustParse(t, smURL)); err == nil {
		t.Error("broken gzip: no error")
	}
}

func TestSitemapLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString("<urlset>")
	for range 6 {
		b.WriteString("<url><loc>https://example.com/shop/p</loc></url>")
	}
	b.WriteString("</urlset>")
	o := SitemapOptions{MaxURLs: 5}
	sm, err := o.Parse([]byte(b.String()), mustParse(t, smURL))
	if !errors.Is(err, ErrSitemapTooManyURLs) || len(sm.URLs) != 5 {
		t.Errorf("MaxURLs: %d URLs, err %v", len(sm.URLs), err)
	}
	if _, err := (SitemapOptions{MaxURLs: 6}).Parse([]byte(b.String()), mustParse(t, smURL)); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	if _, err := (SitemapOptions{MaxURLs: 5}).Parse([]byte(strings.Repeat("https://example.com/shop/p\n", 6)), mustParse(t, smURL)); !errors.Is(err, ErrSitemapTooManyURLs) {
		t.Errorf("text MaxURLs: %v", err)
	}
	big := b.String()
	for _, body := range [][]byte{[]byte(big), gz(t, big)} {
		_, err := SitemapOptions{MaxBytes: int64(len(big) - 1)}.Parse(body, mustParse(t, smURL))
		if !errors.Is(err, ErrSitemapTooLarge) {
			t.Errorf("MaxBytes: err %v", err)
		}
		if _, err := (SitemapOptions{MaxBytes: int64(len(big))}).Parse(body, mustParse(t, smURL)); err != nil {
			t.Errorf("at MaxBytes: %v", err)
		}
	}
}

func FuzzSitemap(f *testing.F) {
	f.Add([]byte(`<urlset><url><loc>https://example.com/shop/a</loc><lastmod>2024-01-01</lastmod></url></urlset>`))
	f.Add([]byte(`<sitemapindex><sitemap><loc>https://example.com/s.xml</loc></sitemap></sitemapindex>`))
	f.Add([]byte("https://example.com/shop/a\nhttps://example.com/b\n"))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	u, _ := url.Parse(smURL)
	f.Fuzz(func(t *testing.T, body []byte) {
		sm, err := SitemapOptions{MaxURLs: 100, MaxBytes: 1 << 16}.Parse(body, u)
		if sm == nil {
			t.Fatalf("nil sitemap, err %v", err)
		}
		if len(sm.URLs)+len(sm.Sitemaps) > 100 {
			t.Fatal("more entries than MaxURLs")
		}
		for _, e := range sm.URLs {
			if !strings.HasPrefix(e.URL.String(), "https://example.com/shop/") {
				t.Fatalf("out of scope: %s", e.URL)
			}
		}
	})
}

func TestSearchForms(t *testing.T) {
	for _, tt := range []struct {
		html string
		want []string
	}{
		{`<form action="/search/" method="get"><input name="q"><button>Go</button></form>`, []string{"http://example.com/search/"}},
		{`<form action="/search?x=1#f"><input type="search" name="q"></form>`, []string{"http://example.com/search"}},
		{`<form action="s.php" method=GET><input type=hidden name=do value=search><input type=TEXT name=q></form>`, []string{"http://example.com/dir/s.php"}},
		{`<form><input name=q></form>`, []string{"http://example.com/dir/page"}},
		// A form sent with POST, or without a text field, is not a search.
		{`<form action="/post" method="post"><input name="message"></form>`, nil},
		{`<form action="/sort"><input type="hidden" name="o" value="az"><input type=submit></form>`, nil},
		{`<form action="/sort"><select name="o"></select></form>`, nil},
		// Each action once, at most maxSearchForms.
		{`<form action="/s"><input name=q></form><form action="/s"><input name=q></form>`, []string{"http://example.com/s"}},
		{strings.Repeat(`<form action="/s"><input name=q></form>`, 1) + manyForms(20), nil},
	} {
		p, err := HTML(mustParse(t, "http://example.com/dir/page?id=3"), []byte(tt.html))
		if err != nil {
			t.Fatal(err)
		}
		if tt.want == nil && strings.HasPrefix(tt.html, `<form action="/s">`) {
			if len(p.SearchForms) != maxSearchForms {
				t.Errorf("%d search forms kept, want %d", len(p.SearchForms), maxSearchForms)
			}
			continue
		}
		if !slices.Equal(p.SearchForms, tt.want) {
			t.Errorf("%s: SearchForms %q, want %q", tt.html, p.SearchForms, tt.want)
		}
	}
}

func manyForms(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `<form action="/s%d"><input name=q></form>`, i)
	}
	return b.String()
}
