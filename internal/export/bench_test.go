package export

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/warc"
)

// rustDoc is Debian's rust-doc package: some 32,000 HTML pages of a real
// site (the Rust documentation), with a few very large ones.
const rustDoc = "/usr/share/doc/rust-doc/html"

// rustDocJob writes a job of n pages of rust-doc as a crawl of a server
// that gzips its HTML would: every body gzip-encoded, with Content-Encoding
// and Content-Length. The pages are every k-th of the sorted list of its
// .html files, so they come from all of its parts (std, core, the books,
// the source views). It returns the job directory, the WARC bytes written
// and the HTML bytes (decoded) of the pages.
func rustDocJob(tb testing.TB, n int) (job string, warcBytes, htmlBytes int64) {
	tb.Helper()
	var paths []string
	err := filepath.WalkDir(rustDoc, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(path, ".html") {
			paths = append(paths, path)
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	slices.Sort(paths)
	if len(paths) < n {
		tb.Skipf("%s has %d HTML files, fewer than %d", rustDoc, len(paths), n)
	}
	step := len(paths) / n

	job = tb.TempDir()
	dir := filepath.Join(job, "warc")
	if err := os.Mkdir(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	w, err := warc.Create(warc.Options{Dir: dir})
	if err != nil {
		tb.Fatal(err)
	}
	date := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range n {
		path := paths[i*step]
		body, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		htmlBytes += int64(len(body))
		rel, _ := filepath.Rel(rustDoc, path)
		gz := encode(tb, "gzip", body)
		resp := "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/html; charset=utf-8\r\n" +
			"Content-Encoding: gzip\r\nContent-Length: " + strconv.Itoa(len(gz)) + "\r\nVary: Accept-Encoding\r\n\r\n"
		uri := "https://doc.rust-lang.org/" + filepath.ToSlash(rel)
		ex := &warc.Exchange{
			TargetURI: uri,
			Date:      date.Add(time.Duration(i) * time.Second),
			IP:        "192.0.2.1",
			Request:   []byte("GET /" + filepath.ToSlash(rel) + " HTTP/1.1\r\nHost: doc.rust-lang.org\r\nUser-Agent: gentlecrawl\r\nAccept-Encoding: gzip\r\n\r\n"),
			Response:  append([]byte(resp), gz...),
		}
		if _, err := w.Write(ex); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	for _, f := range w.Files() {
		st, err := os.Stat(f)
		if err != nil {
			tb.Fatal(err)
		}
		warcBytes += st.Size()
	}
	return job, warcBytes, htmlBytes
}

// BenchmarkExportRustDoc is BenchmarkExport on 3,000 pages of rust-doc
// (see rustDocJob). It is skipped where rust-doc is not installed.
func BenchmarkExportRustDoc(b *testing.B) {
	if _, err := os.Stat(rustDoc); err != nil {
		b.Skipf("%s: %v (Debian's rust-doc package)", rustDoc, err)
	}
	job, size, html := rustDocJob(b, 3000)
	b.Logf("%d pages: %.1f MB of WARC, %.1f MB of HTML", 3000, float64(size)/1e6, float64(html)/1e6)
	benchExport(b, job, size)
}

// benchExport exports the job, of size bytes of WARC files, in
// sub-benchmarks text=false and text=true, each with workers=1 and
// workers=GOMAXPROCS, and reports the WARC bytes read per second and the
// pages per second.
func benchExport(b *testing.B, job string, size int64) {
	files, _, err := Files(job)
	if err != nil {
		b.Fatal(err)
	}
	workers := []int{1}
	if n := runtime.GOMAXPROCS(0); n > 1 {
		workers = append(workers, n)
	}
	for _, text := range []bool{false, true} {
		for _, n := range workers {
			b.Run(fmt.Sprintf("text=%v/workers=%d", text, n), func(b *testing.B) {
				b.SetBytes(size)
				b.ReportAllocs()
				pages := 0
				for b.Loop() {
					e := New(io.Discard, Options{Text: text, Workers: n})
					for _, f := range files {
						if err := e.File(b.Context(), f); err != nil {
							b.Fatal(err)
						}
					}
					e.Flush()
					pages += e.Stats().Pages
				}
				b.ReportMetric(float64(pages)/b.Elapsed().Seconds(), "pages/s")
			})
		}
	}
}
