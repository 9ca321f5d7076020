package extract

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// tokenizerTokens lists the tokens golang.org/x/net/html's Tokenizer
// reads from body, one line each: the kind, the raw bytes, and the tag
// name or the text as Text returns it.
func tokenizerTokens(body []byte) []string {
	z := html.NewTokenizer(bytes.NewReader(body))
	z.SetMaxBuf(0)
	var out []string
	for {
		tt := z.Next()
		raw := string(z.Raw())
		switch tt {
		case html.ErrorToken:
			if z.Err() != io.EOF {
				out = append(out, "error "+z.Err().Error())
			}
			return out
		case html.TextToken:
			out = append(out, fmt.Sprintf("text %q %q", raw, z.Text()))
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, _ := z.TagName()
			kind := map[html.TokenType]string{html.StartTagToken: "start", html.SelfClosingTagToken: "self", html.EndTagToken: "end"}[tt]
			out = append(out, fmt.Sprintf("%s %q %q", kind, raw, name))
		case html.CommentToken, html.DoctypeToken:
			out = append(out, fmt.Sprintf("comment %q", raw))
		}
	}
}

// scannerTokens lists the tokens the scanner reads, in tokenizerTokens'
// form.
func scannerTokens(body []byte) []string {
	var s scanner
	s.reset(body, 1<<30)
	var out []string
	for {
		k := s.next()
		raw := string(s.raw())
		switch k {
		case tokEOF:
			return out
		case tokTooLong:
			return append(out, "too long")
		case tokText:
			// The Tokenizer makes "\r\n" and "\r" "\n" before it decodes
			// entities; the scanner leaves them (both are white space to
			// the visible text).
			text := appendText(nil, crlf(s.data()), s.textRaw, s.convertNUL)
			out = append(out, fmt.Sprintf("text %q %q", raw, text))
		case tokStart, tokSelfClosing, tokEnd:
			name := bytes.ReplaceAll(bytes.ToLower(s.data()), []byte{0}, []byte("\uFFFD"))
			for i, c := range s.data() { // ASCII only, as the Tokenizer
				if c >= 0x80 {
					name = nil
					_ = i
					break
				}
			}
			if name == nil {
				name = bytes.ReplaceAll(asciiLower(s.data()), []byte{0}, []byte("\uFFFD"))
			}
			kind := map[tokenKind]string{tokStart: "start", tokSelfClosing: "self", tokEnd: "end"}[k]
			out = append(out, fmt.Sprintf("%s %q %q", kind, raw, name))
		case tokComment:
			out = append(out, fmt.Sprintf("comment %q", raw))
		}
	}
}

func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = lower(c)
	}
	return out
}

// crlf makes "\r\n" and "\r" "\n", as the Tokenizer's Text does.
func crlf(b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	return bytes.ReplaceAll(b, []byte("\r"), []byte("\n"))
}

// htmlPieces make random pages that exercise the tokenizer's states.
var htmlPieces = []string{
	"<", ">", "/", "!", "?", "-", "--", "=", "'", `"`, " ", "\n", "\r", "\r\n", "\t", "\f", "\x00", "x", "Text", "é", "ſ",
	"<a", "<A", "<a href=/x>", "</a>", "<b>", "</B>", "<br/>", "<br />", "<p a=/>", "<p a=1 a=x/>", "<p a=x/ b>", "<img src=x />",
	"<!--", "-->", "--!>", "<!-->", "<!--->", "<!---->", "--!", "<!-", "<!", "<!DOCTYPE html>", "<!doctype", "<![CDATA[", "]]>", "<?xml ?>",
	"</", "</>", "</ x>", "</1>", "<1", "< a",
	"<script>", "</script>", "<SCRIPT>", "</SCRIPT >", "</script/", "<script type=x>", "<!--<script>", "</script x>", "<scrip", "</scrip",
	"<style>", "</style>", "<title>", "</title>", "<textarea>", "</textarea>", "<xmp>", "</xmp>", "<iframe>", "</iframe>",
	"<noscript>", "</noscript>", "<noembed>", "</noembed>", "<noframes>", "</noframes>", "<plaintext>", "<svg>", "</svg>", "<template>",
	"&", "&amp;", "&amp", "&lt;", "&gt", "&quot;", "&#39;", "&#x27;", "&#0;", "&#128;", "&#xD800;", "&#1234567;", "&nbsp;", "&nbsp",
	"&notit;", "&notin;", "&copy", "&copy2", "&Aacute;", "&acE;", "&#", "&#x", "&#;", "&x;", "&;", "&apos;",
	"<meta charset=utf-8>", `<meta name="robots" content="noindex">`, "<base href=/b/>", "<div\tclass='a>b'>", `<a title=">" href=y>`,
}

func randomPage(r *rand.Rand, n int) []byte {
	var sb strings.Builder
	for range n {
		sb.WriteString(htmlPieces[r.IntN(len(htmlPieces))])
	}
	return []byte(sb.String())
}

// TestScannerMatchesTokenizer checks that the scanner reads the tokens
// the Tokenizer reads, with the same raw bytes, names and text, on
// random pages made to visit every state.
func TestScannerMatchesTokenizer(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 1))
	for i := range 60000 {
		body := randomPage(r, 1+r.IntN(24))
		want, got := tokenizerTokens(body), scannerTokens(body)
		if d := firstDiff(want, got); d != "" {
			t.Fatalf("page %d %q:\n%s", i, body, d)
		}
	}
}

func firstDiff(want, got []string) string {
	for i := range max(len(want), len(got)) {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			return fmt.Sprintf("token %d:\n tokenizer %s\n scanner   %s", i, w, g)
		}
	}
	return ""
}

func FuzzScanner(f *testing.F) {
	r := rand.New(rand.NewPCG(18, 2))
	for range 20 {
		f.Add(randomPage(r, 12))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if d := firstDiff(tokenizerTokens(body), scannerTokens(body)); d != "" {
			t.Fatal(d)
		}
	})
}

// tokenizerText is the visible text as Text gave it when it read the page
// with the Tokenizer: the reference for the scanner's.
func tokenizerText(body []byte) []byte {
	z := html.NewTokenizer(bytes.NewReader(body))
	var out []byte
	skip, space := 0, true
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return bytes.TrimRight(out, " \n")
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			if hidden(name) {
				switch tt {
				case html.StartTagToken:
					skip++
				case html.EndTagToken:
					if skip > 0 {
						skip--
					}
				}
				continue
			}
			if !inline(name) {
				switch {
				case !space:
					out, space = append(out, '\n'), true
				case len(out) > 0 && out[len(out)-1] == ' ':
					out[len(out)-1] = '\n'
				}
			}
		case html.TextToken:
			if skip > 0 {
				continue
			}
			for _, c := range z.Text() {
				if isSpace(c) {
					if !space {
						out, space = append(out, ' '), true
					}
					continue
				}
				out, space = append(out, c), false
			}
		}
	}
}

// TestTextMatchesTokenizer checks Text against the text read through the
// Tokenizer, and Read against HTML and Text, on random pages.
func TestTextMatchesTokenizer(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 3))
	u, _ := url.Parse("http://example.com/d/p.html")
	for i := range 20000 {
		body := randomPage(r, 1+r.IntN(30))
		got, err := Text(body)
		if want := tokenizerText(Options{}.textBody(body)); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("page %d %q:\n Text      %q (err %v)\n tokenizer %q", i, body, got, err, want)
		}
		checkRead(t, u, body, Options{})
	}
}

// checkRead checks that Read gives what HTML and Text give.
func checkRead(t *testing.T, u *url.URL, body []byte, o Options) {
	t.Helper()
	r := o.Read(u, body)
	page, err := o.HTML(u, body)
	text, textErr := o.Text(body)
	if fmt.Sprint(r.Err) != fmt.Sprint(err) || fmt.Sprint(r.TextErr) != fmt.Sprint(textErr) || !bytes.Equal(r.Text, text) {
		t.Fatalf("%s: Read: err %v, text err %v, text %q;\n HTML and Text: %v, %v, %q", u, r.Err, r.TextErr, r.Text, err, textErr, text)
	}
	if a, b := fmt.Sprintf("%+v", *r.Page), fmt.Sprintf("%+v", *page); a != b {
		t.Fatalf("%s: Read: page\n %s\nHTML:\n %s", u, a, b)
	}
	// A lent buffer (TextBuf) with bytes of an earlier page in it gets
	// the same text, in its own memory when it has the room.
	lent := append(make([]byte, 0, len(text)+8), "stale"...)
	o.TextBuf = lent
	for _, got := range [][]byte{o.Read(u, body).Text, func() []byte { b, _ := o.Text(body); return b }()} {
		if !bytes.Equal(got, text) {
			t.Fatalf("%s: with TextBuf: text %q, want %q", u, got, text)
		}
		if len(got) > 0 && &got[0] != &lent[:1][0] {
			t.Fatalf("%s: with TextBuf of capacity %d, the text of %d bytes is not in it", u, cap(lent), len(got))
		}
	}
}

// TestRealPagesMatchTokenizer reads real documentation sites from Debian
// (rust-doc, python3-doc; scripts/test installs them) with the scanner
// and the Tokenizer: tokens, text, and Read against HTML and Text. It
// samples 400 files a run; GENTLECRAWL_EXTRACT_ALL=1 reads all of them.
func TestRealPagesMatchTokenizer(t *testing.T) {
	var files []string
	for _, root := range []string{"/usr/share/doc/rust-doc/html", "/usr/share/doc/python3/html", "/usr/share/doc/python3-doc/html"} {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".html") {
				files = append(files, path)
			}
			return nil
		})
	}
	if len(files) == 0 {
		t.Skip("no rust-doc or python3-doc HTML on this machine")
	}
	// A spread sample, different on each run's seed but reproducible
	// from the log.
	seed := rand.Uint64()
	t.Logf("%d files; sample seed %d", len(files), seed)
	r := rand.New(rand.NewPCG(seed, 18))
	n := min(len(files), 400)
	if testing.Short() {
		n = min(n, 60)
	}
	all := os.Getenv("GENTLECRAWL_EXTRACT_ALL") != "" // every file, in order (about a minute)
	if all {
		n = len(files)
	}
	for i := range n {
		path := files[r.IntN(len(files))]
		if all {
			path = files[i]
		}
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if d := firstDiff(tokenizerTokens(body), scannerTokens(body)); d != "" {
			t.Fatalf("%s:\n%s", path, d)
		}
		got, err := Text(body)
		want := tokenizerText(Options{}.textBody(body))
		if errors.Is(err, ErrTextTooLong) {
			// A few pages (the whole book on one page, the largest
			// sources) hold more than MaxText of text: what is returned
			// is the start of it.
			if len(got) > DefaultMaxText || !bytes.HasPrefix(want, got) {
				t.Fatalf("%s: text past the limit is not the start of the Tokenizer's", path)
			}
		} else if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: text differs from the Tokenizer's (err %v)", path, err)
		}
		u, _ := url.Parse("http://docs.example" + strings.TrimPrefix(path, "/usr/share/doc"))
		checkRead(t, u, body, Options{})
	}
}

// benchPages returns every 64th HTML file of Debian's rust-doc, in path
// order, or skips.
func benchPages(b *testing.B) (pages [][]byte, size int64) {
	root := "/usr/share/doc/rust-doc/html"
	if r := os.Getenv("GENTLECRAWL_BENCH_DOCS"); r != "" {
		root = r // another corpus: python3-doc's, postgresql-doc's
	}
	var files []string
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".html") {
			files = append(files, path)
		}
		return nil
	})
	step := max(len(files)/500, 1)
	for i := 0; i < len(files); i += step {
		body, err := os.ReadFile(files[i])
		if err != nil {
			b.Fatal(err)
		}
		pages = append(pages, body)
		size += int64(len(body))
	}
	if len(pages) == 0 {
		b.Skipf("no HTML under %s on this machine", root)
	}
	return pages, size
}

// BenchmarkRealPages reads a sample of about 500 of rust-doc's pages
// (GENTLECRAWL_BENCH_DOCS names another directory of HTML): links (HTML),
// text (Text), and both at once (Read), as the crawler does for every
// page. One op is the whole sample.
func BenchmarkRealPages(b *testing.B) {
	pages, size := benchPages(b)
	u, _ := url.Parse("http://127.0.0.1/std/collections/index.html")
	b.Run("HTML", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, p := range pages {
				HTML(u, p)
			}
		}
	})
	b.Run("Text", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, p := range pages {
				Text(p)
			}
		}
	})
	b.Run("Read", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, p := range pages {
				Options{}.Read(u, p)
			}
		}
	})
}

// TestCharsetDetermineMatches checks charsetDetermine against
// golang.org/x/net/html/charset's DetermineEncoding on random pages full
// of encoding declarations.
func TestCharsetDetermineMatches(t *testing.T) {
	// Whole attributes, so that tags declare an encoding often, and
	// pieces that break them.
	pieces := []string{"<meta", "<META", "<meta", ">", ">", "/>", " charset=utf-8", ` charset="latin1"`, " CharSet='shift_jis'", " charset=bogus",
		" charset=UTF-16LE", " http-equiv=content-type", ` HTTP-EQUIV="Content-Type"`, " http-equiv=refresh",
		` content="text/html; charset=koi8-r"`, " content='text/html;charset=windows-1251'", " content=text/html",
		` content="charset = shift_jis"`, ` content="charset='euc-kr'"`, ` content="a&amp;b; charset=utf-16"`, " content=charset=",
		" name=robots", " x=1", " ", "\n", "\r", "=", `"`, "'", "&quot;", "\x00", "<!--", "-->", "<script>", "</script>", "<p>", "é", "\xe9",
		"x", "<", strings.Repeat("a", 300)}
	types := []string{"", "text/html", "text/html; charset=iso-8859-2", "text/html;CHARSET=utf-8", "text/html; charset=nope", "bad/;;"}
	r := rand.New(rand.NewPCG(18, 4))
	n := 0
	for i := range 50000 {
		var sb strings.Builder
		for range 1 + r.IntN(20) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		body := []byte(sb.String())
		ct := types[r.IntN(len(types))]
		_, want, wantCertain := charset.DetermineEncoding(body, ct)
		_, got, gotCertain := charsetDetermine(body, ct)
		if got != want || gotCertain != wantCertain {
			t.Fatalf("page %d %q, Content-Type %q: %q %v, DetermineEncoding %q %v", i, body, ct, got, gotCertain, want, wantCertain)
		}
		if want != "windows-1252" {
			n++
		}
	}
	if n < 5000 {
		t.Errorf("only %d pages declared an encoding", n)
	}
}
