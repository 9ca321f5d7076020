package simweb

import "testing"

// FuzzHeaderParsers checks that the request header parsers never panic and
// that an entity tag always matches a list that contains it.
func FuzzHeaderParsers(f *testing.F) {
	for _, s := range []string{"", "*", `"a"`, `W/"a", "b"`, `"a,b"`, "W/", `"`, "gzip;q=0", "*;q=0.5, gzip;q=0", "gzip;q=1;q=0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		acceptsGzip(s)
		etagListMatches(s, `"x"`)
		if !etagListMatches(`"y", `+`W/"x"`, `"x"`) {
			t.Fatal("weak comparison failed")
		}
	})
}
