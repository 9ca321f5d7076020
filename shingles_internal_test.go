package gentlecrawl

import (
	"fmt"
	"strings"
	"testing"
)

// TestShingles: a page's new text is novel once; the same text again,
// on the same host, is not; on another host it is; a long page samples
// at most maxShingleSamples shingles.
func TestShingles(t *testing.T) {
	s := newShingles()
	var b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b, "word%d alpha%d beta%d ", i, i*7, i*13)
	}
	text := []byte(b.String())
	novel, total := s.novel(1, text)
	if total < 100 || novel < total*9/10 || !newText(novel, total) {
		t.Fatalf("new text: %d of %d sampled shingles novel", novel, total)
	}
	if again, total2 := s.novel(1, text); again > total2/20 || total2 != total || newText(again, total2) {
		t.Errorf("the same text again: %d of %d novel", again, total2)
	}
	if other, total3 := s.novel(2, text); other < total3*9/10 {
		t.Errorf("the same text on another host: %d of %d novel", other, total3)
	}
	b.Reset()
	for i := range 20000 {
		fmt.Fprintf(&b, "long%d ", i)
	}
	if _, n := s.novel(1, []byte(b.String())); n != maxShingleSamples {
		t.Errorf("a long page: %d shingles sampled, want %d", n, maxShingleSamples)
	}
	// Short lines (a menu, buttons, a list of names) are chrome: not
	// sampled, however many.
	b.Reset()
	for i := range 500 {
		fmt.Fprintf(&b, "menu item %d\n", i)
	}
	if _, n := s.novel(4, []byte(b.String())); n != 0 {
		t.Errorf("short lines: %d shingles sampled, want none", n)
	}
	// A short text has too few shingles to show new text.
	if novel, total := s.novel(3, []byte("just a few words here")); newText(novel, total) {
		t.Errorf("a short text shows new text: %d of %d", novel, total)
	}
}
