package inflate

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"
)

// htmlRoot holds the Debian Rust documentation: tens of thousands of real,
// generated HTML pages.
const htmlRoot = "/usr/share/doc/rust-doc/html"

// htmlFiles lists the pages under htmlRoot, sorted by path, with sizes.
var htmlFiles = sync.OnceValues(func() ([]htmlFile, error) {
	var files []htmlFile
	err := filepath.WalkDir(htmlRoot, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() || !strings.HasSuffix(p, ".html") {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		files = append(files, htmlFile{p, info.Size()})
		return nil
	})
	return files, err
})

type htmlFile struct {
	path string
	size int64
}

// htmlSample returns up to 200 real HTML pages of sizes in [lo, hi), spread
// evenly over the sorted tree so that they mix the kinds of page (API items,
// module indexes, book chapters) the way a crawl would. It skips the test if
// the documentation is not installed.
func htmlSample(tb testing.TB, lo, hi int64) [][]byte {
	tb.Helper()
	files, err := htmlFiles()
	var fit []string
	for _, f := range files {
		if f.size >= lo && f.size < hi {
			fit = append(fit, f.path)
		}
	}
	if err != nil || len(fit) == 0 {
		tb.Skipf("no HTML corpus under %s: %v", htmlRoot, err)
	}
	const want = 200
	var pages [][]byte
	for i := 0; i < len(fit) && len(pages) < want; i += max(1, len(fit)/want) {
		b, err := os.ReadFile(fit[i])
		if err != nil {
			tb.Fatal(err)
		}
		pages = append(pages, b)
	}
	return pages
}

// htmlPages returns pages of the sizes the crawler mostly sees.
func htmlPages(tb testing.TB) [][]byte { return htmlSample(tb, 20<<10, 500<<10) }

// smallHTMLPages returns small pages, where per-stream costs weigh more.
func smallHTMLPages(tb testing.TB) [][]byte { return htmlSample(tb, 2<<10, 20<<10) }

// syntheticPages stands in for real pages when none are installed: markup
// around words drawn with a skewed distribution, compressible like HTML.
func syntheticPages(n int) [][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the of and to a in is it you that he was for on are with as I his they be at one have this from " +
		"or had by hot word but what some we can out other were all there when up use your how said an each she which do " +
		"crawler robots sitemap frontier fetch politeness header response request status")
	var pages [][]byte
	for range n {
		var b bytes.Buffer
		b.WriteString("<!DOCTYPE html>\n<html><head><title>page</title></head><body>\n")
		for b.Len() < 20<<10+r.IntN(200<<10) {
			b.WriteString("  <div class=\"item\"><p>")
			for range 5 + r.IntN(40) {
				w := words[int(float64(len(words))*r.Float64()*r.Float64())]
				b.WriteString(w)
				b.WriteByte(' ')
			}
			b.WriteString("</p></div>\n")
		}
		b.WriteString("</body></html>\n")
		pages = append(pages, b.Bytes())
	}
	return pages
}

func BenchmarkGunzip(b *testing.B) {
	corpora := []struct {
		name  string
		pages func(testing.TB) [][]byte
	}{
		{"html", htmlPages},
		{"html-small", smallHTMLPages},
		{"synthetic", func(testing.TB) [][]byte { return syntheticPages(50) }},
	}
	for _, c := range corpora {
		b.Run(c.name, func(b *testing.B) {
			pages := c.pages(b)
			var zs [][]byte
			total, largest := 0, 0
			for _, p := range pages {
				zs = append(zs, gzipBytes(b, p, 6))
				total += len(p)
				largest = max(largest, len(p))
			}
			b.Run("inflate", func(b *testing.B) {
				buf := make([]byte, 0, largest)
				b.SetBytes(int64(total))
				for b.Loop() {
					for _, z := range zs {
						out, _, err := Gunzip(buf[:0], z, 1<<30)
						if err != nil {
							b.Fatal(err)
						}
						buf = out
					}
				}
			})
			for _, ref := range []struct {
				name string
				zr   interface {
					io.Reader
					Reset(io.Reader) error
				}
			}{{"klauspost", new(kgzip.Reader)}, {"stdlib", new(gzip.Reader)}} {
				b.Run(ref.name, func(b *testing.B) {
					var br bytes.Reader
					var out bytes.Buffer
					out.Grow(largest)
					b.SetBytes(int64(total))
					for b.Loop() {
						for _, z := range zs {
							br.Reset(z)
							if err := ref.zr.Reset(&br); err != nil {
								b.Fatal(err)
							}
							out.Reset()
							if _, err := io.Copy(&out, ref.zr); err != nil {
								b.Fatal(err)
							}
						}
					}
				})
			}
		})
	}
}
