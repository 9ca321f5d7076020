package gentlecrawl

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gentlecrawl/gentlecrawl/extract"
)

// BenchmarkPrintText reads the visible text of real pages (Debian's
// python3-doc and rust-doc) for its prints.
func BenchmarkPrintText(b *testing.B) {
	var texts [][]byte
	var size int64
	for _, root := range []string{"/usr/share/doc/python3-doc/html", "/usr/share/doc/rust-doc/html/std"} {
		n := 0
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".html") || n >= 200 {
				return nil
			}
			body, err := os.ReadFile(path)
			if err != nil {
				return nil
			}
			if t, err := extract.Text(body); err == nil {
				texts = append(texts, t)
				size += int64(len(t))
				n++
			}
			return nil
		})
	}
	if len(texts) == 0 {
		b.Skip("no python3-doc or rust-doc HTML on this machine")
	}
	b.SetBytes(size)
	for b.Loop() {
		for _, t := range texts {
			printText(t)
		}
	}
}
