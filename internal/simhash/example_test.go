package simhash_test

import (
	"fmt"

	"github.com/gentlecrawl/gentlecrawl/internal/simhash"
)

func Example() {
	ix := simhash.NewIndex[string](3, 1000)
	ix.Add(simhash.Sum([]byte("The quick brown fox jumps over the lazy dog")), "https://example.com/a")
	q := simhash.Sum([]byte("The quick brown fox jumps over the lazy dog"))
	for _, m := range ix.Near(q) {
		fmt.Println(m.Value, m.Distance)
	}
	// Output:
	// https://example.com/a 0
}
