package gentlecrawl

import (
	"fmt"
	"testing"
)

func TestStripCoding(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{`"5f3a-6a1b-gzip"`, `"5f3a-6a1b"`, true},
		{`W/"5f3a-br"`, `W/"5f3a"`, true},
		{`"abc-zstd"`, `"abc"`, true},
		{`"abc"`, `"abc"`, false},
		{`"-gzip"`, `"-gzip"`, false},
		{`"abc-gzipped"`, `"abc-gzipped"`, false},
		{`abc-gzip`, `abc-gzip`, false},
		{``, ``, false},
	} {
		if got, ok := stripCoding(c.in); got != c.want || ok != c.ok {
			t.Errorf("stripCoding(%s) = %s, %v; want %s, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestValidatorBookBounded: past maxValidatorHosts origins, new ones are
// not learned (they are sent both validators), and nothing breaks.
func TestValidatorBookBounded(t *testing.T) {
	var b validatorBook
	for i := range maxValidatorHosts + 10 {
		b.observe(fmt.Sprint(i, ".test"), sendBoth, false, true, `"x-gzip"`, "")
	}
	if len(b.hosts) != maxValidatorHosts {
		t.Errorf("%d origins kept, want %d", len(b.hosts), maxValidatorHosts)
	}
	if _, _, mode := b.request(fmt.Sprint(maxValidatorHosts+5, ".test"), `"x-gzip"`, ""); mode != sendBoth {
		t.Errorf("an origin past the bound is sent %v", mode)
	}
	if e, _, mode := b.request(fmt.Sprint(3, ".test"), `"x-gzip"`, ""); mode != sendStripped || e != `"x"` {
		t.Errorf("a learned origin is sent %s (%v)", e, mode)
	}
}
