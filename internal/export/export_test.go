package export

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"

	"github.com/gentlecrawl/gentlecrawl/warc"
)

// encode applies one content coding; "rawdeflate" is raw deflate, which
// some servers send as "deflate".
func encode(t testing.TB, coding string, p []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	var w io.WriteCloser
	var err error
	switch coding {
	case "gzip":
		w = gzip.NewWriter(&b)
	case "deflate":
		w = zlib.NewWriter(&b)
	case "rawdeflate":
		w, err = flate.NewWriter(&b, flate.DefaultCompression)
	case "br":
		w = brotli.NewWriter(&b)
	case "zstd":
		w, err = zstd.NewWriter(&b, zstd.WithEncoderConcurrency(1))
	default:
		t.Fatalf("unknown coding %q", coding)
	}
	if err != nil {
		t.Fatal(err)
	}
	w.Write(p)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// exchange returns a WARC exchange for a GET of uri answered with the given
// status line, header lines and raw body.
func exchange(uri, status string, header []string, body []byte) *warc.Exchange {
	head := "HTTP/1.1 " + status + "\r\n"
	for _, h := range header {
		head += h + "\r\n"
	}
	head += "\r\n"
	return &warc.Exchange{
		TargetURI: uri,
		Date:      time.Date(2026, 3, 1, 12, 0, 0, 5000, time.UTC),
		Request:   []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		Response:  append([]byte(head), body...),
	}
}

// writeJob writes exchanges into JOB/warc as the crawler does and returns
// the job directory and the files written.
func writeJob(t testing.TB, maxFile int64, exs ...*warc.Exchange) (job string, files []string) {
	t.Helper()
	job = t.TempDir()
	dir := filepath.Join(job, "warc")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := warc.Create(warc.Options{Dir: dir, MaxFileSize: maxFile})
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range exs {
		if _, err := w.Write(ex); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return job, w.Files()
}

// export runs an Exporter over the job's files and returns the lines, the
// stats and the error.
func export(t testing.TB, job string, opts Options) ([]Page, Stats, error) {
	t.Helper()
	files, _, err := Files(job)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	e := New(&out, opts)
	var errs []error
	for _, f := range files {
		if err := e.File(t.Context(), f); err != nil {
			errs = append(errs, err)
		}
	}
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	return decodeLines(t, out.Bytes()), e.Stats(), errors.Join(errs...)
}

func decodeLines(t testing.TB, out []byte) []Page {
	t.Helper()
	var pages []Page
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var p Page
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("line %q: %v", sc.Bytes(), err)
		}
		pages = append(pages, p)
	}
	return pages
}

const home = `<!DOCTYPE html><html><head><meta charset="utf-8">
<title>
  Caf&eacute;  &amp; <b>bar</b>
</title></head><body>
<svg><title>not this</title></svg>
<a href="/a">A</a> <a href="b?x=1#frag">B</a> <a href="/a">A again</a>
<a href="https://Other.Example:443/x">out</a> <a href="mailto:me@example.org">mail</a>
<img src="/logo.png"><script>document.write("<a href='/no'>")</script>
<p>Hello,   <b>world</b>.</p></body></html>`

// TestPages: every field of a line, for each kind of record the crawler
// writes: HTML (in every content coding), a redirect, a 404, a 304
// revisit, a sitemap, a body that does not decode, a body cut short; and
// robots.txt and request records give no line.
func TestPages(t *testing.T) {
	html := []byte(home)
	exs := []*warc.Exchange{
		exchange("http://a.test/robots.txt", "200 OK", []string{"Content-Type: text/plain"}, []byte("User-agent: *\nDisallow:\n")),
		exchange("http://a.test/", "200 OK", []string{"Content-Type: text/html; charset=utf-8", "Content-Encoding: gzip"}, encode(t, "gzip", html)),
		exchange("http://a.test/old", "301 Moved Permanently", []string{"Location: ../new?q=1", "Content-Type: text/html"}, []byte(`<a href="/new?q=1">moved</a>`)),
		exchange("http://a.test/gone", "404 Not Found", []string{"Content-Type: text/html"}, []byte("<title>Not found</title>")),
		exchange("http://a.test/sitemap.xml", "200 OK", []string{"Content-Type: application/xml"}, []byte(`<?xml version="1.0"?><urlset><url><loc>http://a.test/a</loc></url></urlset>`)),
		exchange("http://a.test/bad", "200 OK", []string{"Content-Type: text/html", "Content-Encoding: gzip"}, []byte("this is not gzip")),
		exchange("http://a.test/latin", "200 OK", []string{"Content-Type: text/html; charset=windows-1252"}, []byte("<title>na\xefve</title><a href=\"/caf\xe9\">x</a>")),
		exchange("http://a.test/sniffed", "200 OK", nil, []byte("<html><title>no type</title></html>")),
		exchange("http://a.test/robots.txt?lang=en", "200 OK", []string{"Content-Type: text/plain"}, []byte("a page that links here")),
	}
	for _, c := range []string{"deflate", "rawdeflate", "br", "zstd"} {
		name := c
		if c == "rawdeflate" {
			name = "deflate"
		}
		exs = append(exs, exchange("http://a.test/"+c, "200 OK", []string{"Content-Type: text/html", "Content-Encoding: " + name}, encode(t, c, html)))
	}
	cut := exchange("http://a.test/cut", "200 OK", []string{"Content-Type: text/html", "Content-Encoding: gzip"}, encode(t, "gzip", html)[:60])
	cut.Truncated = "disconnect"
	revisit := exchange("http://a.test/", "304 Not Modified", []string{`ETag: "v1"`}, nil)
	revisit.Revisit, revisit.RefersToTargetURI, revisit.RefersToPayloadDigest = true, "http://a.test/", "sha1:ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	exs = append(exs, cut, revisit)

	job, files := writeJob(t, 0, exs...)
	pages, stats, err := export(t, job, Options{Text: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != len(exs)-1 || stats.Pages != len(pages) || stats.Robots != 1 || stats.Records != 2*len(exs)+1 || stats.Files != len(files) {
		t.Fatalf("%d lines, stats %+v; want %d lines, 1 robots.txt, %d records", len(pages), stats, len(exs)-1, 2*len(exs)+1)
	}
	byURL := map[string][]Page{}
	for _, p := range pages {
		byURL[p.URL] = append(byURL[p.URL], p)
		if p.Links == nil {
			t.Errorf("%s: links is null", p.URL)
		}
		if p.Text == nil {
			t.Errorf("%s: no text field with Options.Text", p.URL)
		}
		if p.Fetched != "2026-03-01T12:00:00.000005Z" {
			t.Errorf("%s: fetched %q", p.URL, p.Fetched)
		}
	}

	wantLinks := []string{"http://a.test/a", "http://a.test/b?x=1", "https://other.example/x"}
	for _, path := range []string{"/", "/deflate", "/rawdeflate", "/br", "/zstd"} {
		p := byURL["http://a.test"+path][0]
		if p.Status != 200 || p.Title != "Café & <b>bar</b>" || p.Length != len(html) || p.Error != "" ||
			strings.Join(p.Links, " ") != strings.Join(wantLinks, " ") || p.FinalURL != p.URL {
			t.Errorf("%s: %+v", path, p)
		}
		if !strings.HasPrefix(p.Digest, "sha1:") {
			t.Errorf("%s: digest %q", path, p.Digest)
		}
		if want := "Café & <b>bar</b>\nA B A again out mail\nHello, world."; *p.Text != want {
			t.Errorf("%s: text %q, want %q", path, *p.Text, want)
		}
	}
	if p := byURL["http://a.test/old"][0]; p.Status != 301 || p.FinalURL != "http://a.test/new?q=1" || len(p.Links) != 1 {
		t.Errorf("redirect: %+v", p)
	}
	if p := byURL["http://a.test/gone"][0]; p.Status != 404 || p.Title != "Not found" || p.FinalURL != p.URL {
		t.Errorf("404: %+v", p)
	}
	if p := byURL["http://a.test/sitemap.xml"][0]; p.Status != 200 || len(p.Links) != 0 || p.Title != "" || p.ContentType != "application/xml" || *p.Text != "" {
		t.Errorf("sitemap: %+v", p)
	}
	if p := byURL["http://a.test/bad"][0]; p.Status != 200 || p.Error == "" || p.Title != "" || len(p.Links) != 0 || p.Length != 0 {
		t.Errorf("undecodable body: %+v", p)
	}
	if p := byURL["http://a.test/latin"][0]; p.Title != "naïve" || len(p.Links) != 1 || p.Links[0] != "http://a.test/caf%C3%A9" {
		t.Errorf("windows-1252 page: %+v", p)
	}
	if p := byURL["http://a.test/sniffed"][0]; p.Title != "no type" || p.ContentType != "" {
		t.Errorf("page without a Content-Type: %+v", p)
	}
	if ps := byURL["http://a.test/robots.txt?lang=en"]; len(ps) != 1 || ps[0].Status != 200 || ps[0].Length != 22 {
		t.Errorf("/robots.txt with a query, which the crawler fetches as a page: %+v", ps)
	}
	if p := byURL["http://a.test/cut"][0]; p.Truncated != "disconnect" || !strings.Contains(p.Error, "WARC-Truncated disconnect") {
		t.Errorf("cut body: %+v", p)
	}
	if ps := byURL["http://a.test/"]; len(ps) != 2 {
		t.Errorf("home: %d lines, want the 200 and the 304", len(ps))
	} else if p := ps[1]; p.Status != 304 || p.Digest != "sha1:ABCDEFGHIJKLMNOPQRSTUVWXYZ234567" || p.Title != "" ||
		len(p.Links) != 0 || *p.Text != "" || p.Length != 0 || p.FinalURL != p.URL {
		t.Errorf("304 revisit: %+v", p)
	}
	// Lines come in record order.
	if pages[0].URL != "http://a.test/" || pages[len(pages)-1].Status != 304 {
		t.Errorf("first line %s, last %s %d", pages[0].URL, pages[len(pages)-1].URL, pages[len(pages)-1].Status)
	}
}

// TestOutputIsRaw: URLs and titles are written as they are, without HTML
// escaping of <, > and &.
func TestOutputIsRaw(t *testing.T) {
	job, _ := writeJob(t, 0, exchange("http://a.test/?a=1&b=2", "200 OK", []string{"Content-Type: text/html"}, []byte("<title>a &lt;b&gt; &amp; c</title>")))
	files, _, _ := Files(job)
	var out bytes.Buffer
	e := New(&out, Options{})
	if err := e.File(t.Context(), files[0]); err != nil {
		t.Fatal(err)
	}
	e.Flush()
	if s := out.String(); !strings.Contains(s, `"url":"http://a.test/?a=1&b=2"`) || !strings.Contains(s, `"title":"a <b> & c"`) {
		t.Errorf("output %s", s)
	}
}

// TestLimits: a body that decodes past MaxBodySize is cut there, and
// reported; a record above MaxRecordSize is skipped with an error naming
// it, and the records after it are read.
func TestLimits(t *testing.T) {
	big := bytes.Repeat([]byte("<p>zzzzzzzzzzzzzzzzzzzzzzzz</p>\n"), 4096) // 128 KiB
	job, files := writeJob(t, 0,
		exchange("http://a.test/1", "200 OK", []string{"Content-Type: text/html", "Content-Encoding: gzip"}, encode(t, "gzip", append([]byte("<title>one</title>"), big...))),
		exchange("http://a.test/2", "200 OK", []string{"Content-Type: text/html"}, big),
		exchange("http://a.test/3", "200 OK", []string{"Content-Type: text/html"}, []byte("<title>three</title>")),
	)
	pages, _, err := export(t, job, Options{MaxBodySize: 64 << 10, MaxRecordSize: 100 << 10})
	if len(pages) != 2 || pages[0].URL != "http://a.test/1" || pages[1].URL != "http://a.test/3" {
		t.Fatalf("lines %+v", pages)
	}
	if p := pages[0]; p.Length != 64<<10 || p.Title != "one" || !strings.Contains(p.Error, "cut at 65536") {
		t.Errorf("body over MaxBodySize: length %d, title %q, error %q", p.Length, p.Title, p.Error)
	}
	var re *ReadError
	if !errors.As(err, &re) || re.File != files[0] || re.Record != 5 || !errors.Is(err, warc.ErrBlockTooLarge) {
		t.Fatalf("error %v; want the 5th record of %s, too large", err, files[0])
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("at byte %d", re.Offset)) || re.Offset == 0 {
		t.Errorf("error %q, offset %d", err, re.Offset)
	}
}

// TestDamagedFiles: a file cut in the middle of a record, and one with a
// corrupted byte: the complete records before the damage have their lines,
// and the error names the file and the offset of the damaged record's gzip
// member. A file that is not gzip fails at offset 0.
func TestDamagedFiles(t *testing.T) {
	var exs []*warc.Exchange
	for i := range 10 {
		exs = append(exs, exchange(fmt.Sprintf("http://a.test/%d", i), "200 OK", []string{"Content-Type: text/html"}, fmt.Appendf(nil, "<title>page %d</title>", i)))
	}
	// Where the members of the 7th exchange (records 14 and 15) start.
	job, files := writeJob(t, 0, exs...)
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	offsets := memberOffsets(t, data)
	if len(offsets) != 21 {
		t.Fatalf("%d gzip members, want 21", len(offsets))
	}
	resp7 := offsets[14] // warcinfo, then request and response per exchange

	for _, tc := range []struct {
		name   string
		damage func([]byte) []byte
		lines  int
		record int
		offset int64
	}{
		{"cut in a record", func(b []byte) []byte { return b[:resp7+40] }, 6, 15, int64(resp7)},
		{"cut in a gzip header", func(b []byte) []byte { return b[:resp7+5] }, 6, 15, int64(resp7)},
		{"corrupted byte", func(b []byte) []byte { b[resp7+30] ^= 0xff; return b }, 6, 15, int64(resp7)},
		{"not gzip", func([]byte) []byte { return []byte("WARC/1.1\r\n") }, 0, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.WriteFile(files[0], tc.damage(bytes.Clone(data)), 0o644)
			pages, _, err := export(t, job, Options{})
			if len(pages) != tc.lines {
				t.Errorf("%d lines, want %d", len(pages), tc.lines)
			}
			for i, p := range pages {
				if want := fmt.Sprintf("page %d", i); p.Title != want {
					t.Errorf("line %d: title %q, want %q", i, p.Title, want)
				}
			}
			var re *ReadError
			if !errors.As(err, &re) || re.File != files[0] || re.Record != tc.record || re.Offset != tc.offset {
				t.Fatalf("error %v; want record %d at byte %d of %s", err, tc.record, tc.offset, files[0])
			}
			if msg := err.Error(); !strings.Contains(msg, files[0]) || !strings.Contains(msg, fmt.Sprintf("at byte %d", tc.offset)) {
				t.Errorf("message %q does not name the file and the offset", msg)
			}
			t.Log(err)
		})
	}
}

// memberOffsets returns where each gzip member of a file starts.
func memberOffsets(t *testing.T, data []byte) []int {
	r := bytes.NewReader(data) // which the gzip reader reads no further than a member's end
	var zr gzip.Reader
	var offs []int
	for {
		start := len(data) - r.Len()
		if err := zr.Reset(r); err == io.EOF {
			return offs
		} else if err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false)
		if _, err := io.Copy(io.Discard, &zr); err != nil {
			t.Fatal(err)
		}
		offs = append(offs, int(start))
	}
}

// TestFiles: the WARC files of a job in the order written (by serial, not
// by time stamp), the .open ones apart; a job without a warc directory has
// none; a missing job directory, or a file in its place, is an error.
func TestFiles(t *testing.T) {
	job := t.TempDir()
	dir := filepath.Join(job, "warc")
	os.Mkdir(dir, 0o755)
	for _, name := range []string{
		"gentlecrawl-20260301120000-00002.warc.gz",
		"gentlecrawl-20260301110000-00010.warc.gz", // a clock set back: the serial decides
		"gentlecrawl-20260301130000-00001.warc.gz",
		"gentlecrawl-20260301140000-00011.warc.gz.open",
		"gentlecrawl-20260301120000-00002.cdxj", // the index beside a file
		"other.warc.gz",
		"notes.txt",
	} {
		os.WriteFile(filepath.Join(dir, name), nil, 0o644)
	}
	os.Mkdir(filepath.Join(dir, "sub.warc.gz"), 0o755)
	files, open, err := Files(job)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	want := "gentlecrawl-20260301130000-00001.warc.gz gentlecrawl-20260301120000-00002.warc.gz gentlecrawl-20260301110000-00010.warc.gz other.warc.gz"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("files %s\nwant  %s", got, want)
	}
	if len(open) != 1 || filepath.Base(open[0]) != "gentlecrawl-20260301140000-00011.warc.gz.open" {
		t.Errorf("open files %q", open)
	}

	if files, open, err := Files(t.TempDir()); err != nil || files != nil || open != nil {
		t.Errorf("job without warc/: %q %q %v", files, open, err)
	}
	if _, _, err := Files(filepath.Join(job, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing job directory: %v", err)
	}
	if _, _, err := Files(filepath.Join(dir, "notes.txt")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a file as job directory: %v", err)
	}
}

// TestUnreadableFile: a file that cannot be opened is a ReadError naming it.
func TestUnreadableFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gone.warc.gz")
	err := New(io.Discard, Options{}).File(t.Context(), path)
	var re *ReadError
	if !errors.As(err, &re) || !errors.Is(err, os.ErrNotExist) || err.Error() != path+": open "+path+": no such file or directory" {
		t.Errorf("error %v", err)
	}
}

// TestCancel: File stops when its context is done, with the context's error.
func TestCancel(t *testing.T) {
	_, files := writeJob(t, 0, sitePage(t, 1), sitePage(t, 2))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var out bytes.Buffer
	e := New(&out, Options{})
	if err := e.File(ctx, files[0]); !errors.Is(err, context.Canceled) {
		t.Errorf("File with a cancelled context: %v", err)
	}
	e.Flush()
	if out.Len() != 0 {
		t.Errorf("output %q", out.String())
	}
}

// sitePage is a page of a synthetic site: some kilobytes of HTML with a
// title and links, gzip-encoded for odd i.
func sitePage(t testing.TB, i int) *warc.Exchange {
	var b bytes.Buffer
	fmt.Fprintf(&b, "<!DOCTYPE html><html><head><title>Page %d</title></head><body>\n", i)
	for j := range 40 {
		fmt.Fprintf(&b, "<p>Paragraph %d of page %d, with a <a href=\"/p/%d\">link to page %d</a> and some words to read.</p>\n", j, i, i*7+j, i*7+j)
	}
	b.WriteString("</body></html>\n")
	uri := fmt.Sprintf("http://site.test/p/%d", i)
	if i%2 == 1 {
		return exchange(uri, "200 OK", []string{"Content-Type: text/html; charset=utf-8", "Content-Encoding: gzip"}, encode(t, "gzip", b.Bytes()))
	}
	return exchange(uri, "200 OK", []string{"Content-Type: text/html; charset=utf-8"}, b.Bytes())
}

// siteJob writes a job of n pages in files of about 1 MiB.
func siteJob(t testing.TB, n int) (job string, bytes int64) {
	exs := make([]*warc.Exchange, n)
	for i := range exs {
		exs[i] = sitePage(t, i)
	}
	job, files := writeJob(t, 1<<20, exs...)
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		bytes += st.Size()
	}
	return job, bytes
}

// peakHeap is an io.Writer that discards what it is given and samples the
// live heap every so many writes: what a collection found live, not
// counting what workers allocate after it.
type peakHeap struct {
	every, n int
	peak     uint64
}

func (p *peakHeap) Write(b []byte) (int, error) {
	p.n++
	if p.n%p.every == 0 {
		runtime.GC()
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(live)
		p.peak = max(p.peak, live[0].Value.Uint64())
	}
	return len(b), nil
}

// TestMemoryFlat: exporting four times as many records does not need more
// memory, with one worker or several. The live heap is sampled during each
// export; the peak for 4N pages must stay within the peak for N pages plus
// slack, where holding the records (or the lines) would add megabytes. N
// pages are more than a WARC file of 1 MiB, whose batches fill the
// workers' queue.
func TestMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("writes two jobs of some MiB")
	}
	if raceEnabled {
		// The live heap is the same with the race detector, the run ten
		// times slower: scripts/test runs this test without -race.
		t.Skip("measures memory; run without -race")
	}
	const n = 1000
	peak := func(job string, opts Options, every int) (uint64, int) {
		files, _, err := Files(job)
		if err != nil {
			t.Fatal(err)
		}
		sink := &peakHeap{every: every} // the Exporter writes in chunks of 64 KiB
		e := New(sink, opts)
		for _, f := range files {
			if err := e.File(t.Context(), f); err != nil {
				t.Fatal(err)
			}
		}
		e.Flush()
		return sink.peak, e.Stats().Pages
	}
	small, smallBytes := siteJob(t, n)
	large, largeBytes := siteJob(t, 4*n)
	for _, workers := range []int{1, 4} {
		for _, text := range []bool{false, true} {
			opts := Options{Text: text, Workers: workers}
			// As many samples of each: with workers, what is live at a
			// sample varies with what each worker is at, and the peak of
			// more samples would be higher for that alone.
			runtime.GC()
			p1, pages1 := peak(small, opts, 2)
			p4, pages4 := peak(large, opts, 8)
			t.Logf("workers=%d text=%v: %d pages (%d KiB of WARC): peak live heap %d KiB; %d pages (%d KiB): %d KiB",
				workers, text, pages1, smallBytes>>10, p1>>10, pages4, largeBytes>>10, p4>>10)
			if pages1 != n || pages4 != 4*n {
				t.Fatalf("%d and %d pages, want %d and %d", pages1, pages4, n, 4*n)
			}
			// 3N more pages are several MiB of WARC and of JSON: the slack is
			// below either, and below both, which the batches hold, with
			// workers, where samples vary more.
			slack := uint64(1 << 20)
			if workers > 1 {
				slack = 2 << 20
			}
			if p4 > p1+p1/4+slack {
				t.Errorf("workers=%d text=%v: peak live heap %d KiB for %d pages, %d KiB for %d: memory grows with the job",
					workers, text, p4>>10, 4*n, p1>>10, n)
			}
		}
	}
}

// BenchmarkExport reports the WARC bytes read per second (compressed, as on
// disk) and the pages per second, for a job of 2000 pages of about 6 KiB of
// HTML, half of them gzip-encoded; with one worker and with GOMAXPROCS.
func BenchmarkExport(b *testing.B) {
	job, size := siteJob(b, 2000)
	benchExport(b, job, size)
}

// raceEnabled is set when the tests are built with -race (race_test.go).
var raceEnabled bool
