package gensite_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/gentlecrawl/gentlecrawl/internal/gensite"
)

// A site is served on loopback; afterwards its request log is compared
// with the real pages.
func Example() {
	site, err := gensite.New(gensite.Forum, 1)
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(site)
	defer srv.Close()

	for _, u := range []string{"/", "/robots.txt", "/no-such-page"} {
		resp, err := http.Get(srv.URL + u)
		if err != nil {
			panic(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	real := map[string]bool{}
	for _, u := range site.RealPages() {
		real[u] = true
	}
	for _, r := range site.Requests() {
		fmt.Printf("%s %d real=%v family=%q\n", r.URI, r.Status, real[r.URI], site.FamilyOf(r.URI))
	}
	// Output:
	// / 200 real=true family=""
	// /robots.txt 200 real=false family="robots.txt"
	// /no-such-page 404 real=false family="404"
}
