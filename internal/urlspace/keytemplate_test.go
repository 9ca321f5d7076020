package urlspace

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// keyTemplateSplit is KeyTemplate as it was first written, by splitting
// the path: the reference for the one that avoids copies.
func keyTemplateSplit(key string) string {
	path, params := splitParams(KeyRequestURI(key))
	var b strings.Builder
	for i, seg := range strings.Split(path, "/") {
		if i > 0 {
			b.WriteByte('/')
		}
		if strings.ContainsAny(seg, "0123456789") {
			seg = "*"
		} else if len(seg) > 64 {
			seg = seg[:64] + "…"
		}
		b.WriteString(seg)
	}
	sep := byte('?')
	var last string
	for _, p := range params {
		if strings.HasPrefix(p.name, ";") || p.name == last {
			continue
		}
		last = p.name
		b.WriteByte(sep)
		sep = '&'
		b.WriteString(p.name)
	}
	return b.String()
}

// TestKeyTemplateMatchesSplit compares KeyTemplate with the reference on
// random keys.
func TestKeyTemplateMatchesSplit(t *testing.T) {
	pieces := []string{"/", "/", "a", "std", "index.html", "2024", "x1", "?", "&", "=", "q=1", "sort=asc", ";", "jsessionid=ab",
		strings.Repeat("l", 63), strings.Repeat("m", 64), strings.Repeat("n", 65), "é", "%41"}
	r := rand.New(rand.NewPCG(18, 5))
	for range 50000 {
		var sb strings.Builder
		sb.WriteString([]string{"http://h", "https://h:8080", "http://h/", "h"}[r.IntN(4)])
		for range r.IntN(14) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		key := sb.String()
		if got, want := KeyTemplate(key), keyTemplateSplit(key); got != want {
			t.Fatalf("KeyTemplate(%q) = %q, want %q", key, got, want)
		}
	}
}
