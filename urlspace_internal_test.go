package gentlecrawl

import "testing"

func TestBagOfWords(t *testing.T) {
	a := bagOfWords([]byte("red shirt 10 EUR\nblue hat 5 EUR"))
	for _, same := range []string{"blue hat 5 EUR red shirt 10 EUR", "  EUR 10 shirt red\t\tEUR 5 hat blue  "} {
		if bagOfWords([]byte(same)) != a {
			t.Errorf("%q: the same words in another order should hash the same", same)
		}
	}
	for _, other := range []string{"red shirt 10 EUR blue hat 6 EUR", "red shirt 10 EUR blue hat 5 EUR EUR", "red shirt 10 EUR"} {
		if bagOfWords([]byte(other)) == a {
			t.Errorf("%q: different words hash the same", other)
		}
	}
	if n := testing.AllocsPerRun(100, func() { bagOfWords([]byte("a b c d e f")) }); n != 0 {
		t.Errorf("bagOfWords allocates %v times", n)
	}
}
