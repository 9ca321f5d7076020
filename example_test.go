package gentlecrawl_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
)

// A crawl of a small site: its robots.txt (absent here), then every page
// its links reach, with the summary of what was done.
func Example() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<html><body><a href="/a">A</a> <a href="/b">B</a></body></html>`)
		case "/a", "/b":
			fmt.Fprint(w, `<html><body><a href="/">home</a></body></html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	job, err := os.MkdirTemp("", "gentlecrawl-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(job)

	c, err := gentlecrawl.New(gentlecrawl.Config{
		JobDir:               job,
		Seeds:                []string{site.URL + "/"},
		Delay:                1, // a nanosecond: the test server does not mind
		AllowPrivateNetworks: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	sum, err := c.Run(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d requests, %d pages, %d answered 200\n", sum.Stopped, sum.Requests, sum.Pages, sum.ByStatus[200])
	// Output: finished: 4 requests, 3 pages, 3 answered 200
}
