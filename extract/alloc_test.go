package extract

import (
	"bytes"
	"math/rand/v2"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

// TestRawAttrsMatchTokenizer checks that the attributes read from z.Raw()
// are those TagAttr returns, on random tags.
func TestRawAttrsMatchTokenizer(t *testing.T) {
	pieces := []string{"<a", "<A", "<area", "<img", "<iframe", "<link", "<script", " ", "\t", "\n", "\f", "\r", "/", ">", "=", "'", `"`,
		"href", "HREF", "hRef", "src", "srcset", "rel", "Rel", "hreflang", "x", "=a", "/p?q=1", "&amp;", "&copy=", "&", "&lt;", "\x00", "nofollow", "ſrc",
		"&#64;", "&#x40;", "&#X4a;", "&#xe9;", "&#0;", "&#128;", "&#159;", "&#160;", "&#xD800;", "&#1114111;", "&#1114112;",
		"&#00000065;", "&#99999999999;", "&#;", "&#x;", "&#64", "&#6a;", "&quot;", "&gt;", "&apos;", "&nbsp;", "&AMP;", "&ltx;", "&notin;", ";"}
	r := rand.New(rand.NewPCG(3, 4))
	p := &pass{s: new(scratch)}
	n := 0
	for range 100000 {
		var sb strings.Builder
		for range 1 + r.IntN(12) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		sb.WriteString(">")
		z := html.NewTokenizer(strings.NewReader(sb.String()))
		for {
			tt := z.Next()
			if tt == html.ErrorToken {
				break
			}
			if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
				continue
			}
			raw := z.Raw()
			end := 2
			for end < len(raw) && !isSpace(raw[end]) && raw[end] != '/' && raw[end] != '>' {
				end++
			}
			name := ""
			if id := lookupTag(raw[1:end]); tagFlags[id]&tagLinks != 0 {
				name = tagNames[id]
			}
			got, ok := p.rawAttrs(raw, end)
			tn, _ := z.TagName()
			if (name != "") != (string(tn) == name) {
				t.Fatalf("%q: name %q, tokenizer %q", raw, name, tn)
			}
			want := readAttrs(z)
			if !ok {
				continue
			}
			n++
			if !equalAttrs(got, want) {
				t.Fatalf("%q:\n raw       %+v\n tokenizer %+v", raw, got, want)
			}
		}
	}
	if n < 50000 {
		t.Errorf("only %d tags read from raw", n)
	}
}

func equalAttrs(a, b attrs) bool {
	return bytes.Equal(a.href, b.href) && bytes.Equal(a.src, b.src) && bytes.Equal(a.srcset, b.srcset) &&
		bytes.Equal(a.rel, b.rel) && bytes.Equal(a.hreflang, b.hreflang) &&
		a.hasHref == b.hasHref && a.hasSrc == b.hasSrc && a.hasSrcset == b.hasSrcset &&
		a.hasRel == b.hasRel && a.hasHreflang == b.hasHreflang
}

var keyBases = []string{"http://example.com/dir/page.html?x=1", "https://Ex.COM:443", "http://h:8080/a/b/", "http://h/a/./b/../c",
	"http://h/p?b=2&a=1&&a=0", "http://h/a%20b/?q=%41", "http://H:0080/x", "https://h:00/x", "http://h:99999/", "http://h/(x)/?z"}

var keyPieces = []string{"a", "b", "/", "/", ".", "..", "?", "q=1", "&", "&&", "#", "f", "//", "http:", "HTTPS:", "h2", "H2", ":81", ":080",
	":443", ":80", ":0", ":65536", "!", "(x)", "*", "'", "@", ";", "=", "~", "a=2", "b=1", "A=0", "%41", "%2f", "./", "../"}

// TestFastKeyMatchesCanonical checks that the key computed without making
// the URL is urlnorm.Canonical of the URL made, on random hrefs.
func TestFastKeyMatchesCanonical(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var res resolver
	n := 0
	for range 200000 {
		var sb strings.Builder
		for range r.IntN(8) {
			sb.WriteString(keyPieces[r.IntN(len(keyPieces))])
		}
		href := sb.String()
		res.init(mustParse(t, keyBases[r.IntN(len(keyBases))]))
		h, schemeEnd, ok := res.prepare([]byte(href))
		if !ok || !res.fast {
			continue
		}
		b, st := res.fastBuild(h, schemeEnd)
		if st != fastOK {
			continue
		}
		var u url.URL
		res.fill(&u, b)
		if _, ok := res.fastKey(b); !ok {
			continue
		}
		n++
		if got, want := string(res.key), urlnorm.Canonical(&u); got != want {
			t.Fatalf("base %s href %q: key %q, Canonical %q", res.base, href, got, want)
		}
	}
	if n < 20000 {
		t.Errorf("only %d keys computed", n)
	}
}

// TestDedupByCanonical checks on random pages that the links are those of
// a de-duplication by urlnorm.Canonical of the resolved hrefs.
func TestDedupByCanonical(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 300 {
		base := mustParse(t, keyBases[r.IntN(len(keyBases))])
		var page strings.Builder
		var res resolver
		res.init(base)
		var want []string
		seen := map[string]bool{}
		for range 50 {
			var sb strings.Builder
			for range r.IntN(6) {
				sb.WriteString(keyPieces[r.IntN(len(keyPieces))])
			}
			href := sb.String()
			page.WriteString(`<a href="` + html.EscapeString(href) + `">x</a>`)
			u := res.resolve([]byte(href))
			if u == nil {
				continue
			}
			if c := urlnorm.Canonical(u); !seen[c] {
				seen[c] = true
				want = append(want, u.String())
			}
		}
		p, err := HTML(base, []byte(page.String()))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range p.Links {
			got = append(got, l.URL)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("base %s page %s:\n got  %q\n want %q", base, page.String(), got, want)
		}
	}
}

// TestHTMLAllocs bounds the allocations of a page of links: none per
// link but what the tokenizer does itself (two per attribute in this
// version of golang.org/x/net/html: it copies every attribute name), and a
// few per page, among them one string for all the link URLs.
func TestHTMLAllocs(t *testing.T) {
	skipRace(t)
	var b strings.Builder
	for i := range 200 {
		b.WriteString(`<a href="/item/` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + `/` + string(rune('a'+i/26)) + `?a=1&amp;b=2">t</a> text `)
	}
	body := []byte(b.String())
	u := mustParse(t, "https://example.com/dir/page")
	n := testing.AllocsPerRun(20, func() {
		if p, err := HTML(u, body); err != nil || len(p.Links) != 200 {
			t.Fatalf("%d links, err %v", len(p.Links), err)
		}
	})
	if n > 2*200+20 {
		t.Errorf("%v allocations for 200 links", n)
	}
}

// TestHTMLBytes holds the benchmark's page (BenchmarkHTML: 120 KiB, 600
// links) to a budget of 120 KB allocated, most of which goes to Page.Links
// and the string of its URLs. Bytes are counted, not time, so the test
// does not depend on the machine.
func TestHTMLBytes(t *testing.T) {
	skipRace(t)
	body := benchPage(120<<10, 600)
	u := mustParse(t, "https://www.example.com/section/article.html")
	n := bytesPerRun(20, func() {
		if p, err := HTML(u, body); err != nil || len(p.Links) != 600 {
			t.Fatalf("%d links, err %v", len(p.Links), err)
		}
	})
	t.Logf("%d bytes allocated per page", n)
	if n > 120_000 {
		t.Errorf("%d bytes allocated for a 120 KiB page of 600 links, want at most 120,000", n)
	}
}

// raceEnabled is set when the tests are built with -race (race_test.go).
var raceEnabled bool

// skipRace skips a test that counts allocations when the race detector
// is on: its sync.Pool drops items at random, so the scratch memory of a
// pass is allocated again now and then.
func skipRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("allocations are not counted under the race detector")
	}
}

// bytesPerRun is testing.AllocsPerRun for bytes: the average bytes
// allocated by a call of f, after a first call to warm up.
func bytesPerRun(runs int, f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(runs)
}

// TestEscapedBasePath: relative links on a page whose own path has escapes
// keep them once (not %2520 for %20).
func TestEscapedBasePath(t *testing.T) {
	doc, _ := url.Parse("http://example.com/a%20b/page")
	page, err := HTML(doc, []byte(`<a href="x">x</a><a href="../c%2Fd">y</a>`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range page.Links {
		got = append(got, l.URL)
	}
	want := []string{"http://example.com/a%20b/x", "http://example.com/c%2Fd"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("links %q, want %q", got, want)
	}
}
