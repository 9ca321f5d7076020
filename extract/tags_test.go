package extract

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestLookupTag: every name of tagNames is found in any case, and random
// names that are not among them are not.
func TestLookupTag(t *testing.T) {
	names := map[string]bool{}
	for i, n := range tagNames[1:] {
		names[n] = true
		for _, v := range []string{n, strings.ToUpper(n), strings.ToUpper(n[:1]) + n[1:]} {
			if got := lookupTag([]byte(v)); got != tagID(i+1) {
				t.Errorf("lookupTag(%q) = %d, want %d", v, got, i+1)
			}
		}
	}
	r := rand.New(rand.NewPCG(4, 5))
	const letters = "abcdefghijklmnoprstuvwxyzABMSTX1-_:\x00é"
	for range 200000 {
		b := make([]byte, r.IntN(maxTagName+3))
		for i := range b {
			b[i] = letters[r.IntN(len(letters))]
		}
		got := lookupTag(b)
		want := tagOther
		if l := strings.ToLower(string(b)); names[l] {
			for i, n := range tagNames {
				if n == l {
					want = tagID(i)
				}
			}
		}
		if got != want {
			t.Fatalf("lookupTag(%q) = %d, want %d", b, got, want)
		}
	}
}
