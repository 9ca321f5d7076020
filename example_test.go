package gentlecrawl_test

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
)

// exampleSite is a small site of three pages, on loopback: the examples
// crawl it.
func exampleSite() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<html><title>Home</title><body><a href="/a">A</a> <a href="/b">B</a></body></html>`)
		case "/a", "/b":
			fmt.Fprintf(w, `<html><title>Page %s</title><body><a href="/">home</a></body></html>`, r.URL.Path[1:])
		default:
			http.NotFound(w, r)
		}
	}))
}

// exampleJob is a job directory of its own for an example.
func exampleJob() string {
	job, err := os.MkdirTemp("", "gentlecrawl-example")
	if err != nil {
		log.Fatal(err)
	}
	return job
}

// A crawl of a small site: its robots.txt (absent here), then every page
// its links reach, with the summary of what was done.
func Example() {
	site := exampleSite()
	defer site.Close()
	job := exampleJob()
	defer os.RemoveAll(job)

	c, err := gentlecrawl.New(gentlecrawl.Config{
		JobDir: job,
		Seeds:  []string{site.URL + "/"},
		From:   "you@example.org",
		// The test server does not mind: a real site gets the default,
		// a second between two requests.
		NoDelay: true,
		// The site is on loopback, which a crawl refuses by default.
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

// OnPage hands each page fetched to the program as soon as it is in the
// WARC files: its status, header, decoded body and the links new to the
// crawl it leads to. It runs on the crawl's workers, for pages of several
// hosts at once, so it guards what it shares.
func ExampleConfig_onPage() {
	site := exampleSite()
	defer site.Close()
	job := exampleJob()
	defer os.RemoveAll(job)

	var (
		mu     sync.Mutex
		titles []string
	)
	c, err := gentlecrawl.New(gentlecrawl.Config{
		JobDir:               job,
		Seeds:                []string{site.URL + "/"},
		NoDelay:              true,
		AllowPrivateNetworks: true,
		OnPage: func(ctx context.Context, p *gentlecrawl.Page) error {
			_, title, _ := strings.Cut(string(p.Body), "<title>")
			title, _, _ = strings.Cut(title, "</title>")
			mu.Lock()
			defer mu.Unlock()
			titles = append(titles, fmt.Sprintf("%d %s %s", p.Status, p.Header.Get("Content-Type"), title))
			return nil // an error would stop the crawl, and Run return it
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.Run(context.Background()); err != nil {
		log.Fatal(err)
	}
	slices.Sort(titles)
	for _, t := range titles {
		fmt.Println(t)
	}
	// Output:
	// 200 text/html; charset=utf-8 Home
	// 200 text/html; charset=utf-8 Page a
	// 200 text/html; charset=utf-8 Page b
}

// A continuous crawl does not end when nothing new is left: it revisits
// each page about as often as the page changes, within each host's budget,
// until its context is done or For has passed. Running the same job again
// goes on with the revisits it planned.
func ExampleConfig_continuous() {
	site := exampleSite()
	defer site.Close()
	job := exampleJob()
	defer os.RemoveAll(job)

	c, err := gentlecrawl.New(gentlecrawl.Config{
		JobDir:               job,
		Seeds:                []string{site.URL + "/"},
		NoDelay:              true,
		AllowPrivateNetworks: true,
		Continuous:           true,
		For:                  time.Second,      // a week, say, for a real site; or cancel the context
		RevisitMin:           10 * time.Minute, // no page is asked again sooner
	})
	if err != nil {
		log.Fatal(err)
	}
	sum, err := c.Run(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d pages discovered, %d refreshed\n", sum.Stopped, sum.ByPurpose["discovery"], sum.ByPurpose["refresh"])
	// Output: time limit: 3 pages discovered, 0 refreshed
}

// The metrics of a crawl, in the Prometheus text format, for a monitoring
// system to scrape: the program mounts the handler where it serves them.
func ExampleCrawler_MetricsHandler() {
	site := exampleSite()
	defer site.Close()
	job := exampleJob()
	defer os.RemoveAll(job)

	c, err := gentlecrawl.New(gentlecrawl.Config{
		JobDir: job, Seeds: []string{site.URL + "/"}, NoDelay: true, AllowPrivateNetworks: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", c.MetricsHandler()) // before Run: every request is counted
	if _, err := c.Run(context.Background()); err != nil {
		log.Fatal(err)
	}

	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	requests := 0.0
	sc := bufio.NewScanner(w.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "gentlecrawl_requests_total{") {
			f := strings.Fields(line)
			n, _ := strconv.ParseFloat(f[len(f)-1], 64)
			requests += n
		}
	}
	fmt.Println("gentlecrawl_requests_total:", requests)
	// Output: gentlecrawl_requests_total: 4
}

// A shared crawl: every crawler run on the same database, in this process
// or in others on other machines, is one more worker of one crawl; one
// request at a time per host, the gaps between requests, Crawl-delay,
// Retry-After and robots.txt hold across them all. Each has a job
// directory of its own, for its WARC files and request log.
//
// The program opens the frontier and closes it; a frontier serves one Run
// at a time, so two crawlers in one process open one each.
// (TestSharedFrontierInProcess runs this against a PostgreSQL server.)
func ExampleOpenSharedFrontier() {
	ctx := context.Background()
	dsn := os.Getenv("GENTLECRAWL_FRONTIER") // postgres://crawler@db.example.org:5432/crawl
	seeds := [][]string{{"https://example.org/"}, {"https://example.com/"}}
	var wg sync.WaitGroup
	for i := range 2 {
		f, err := gentlecrawl.OpenSharedFrontier(ctx, dsn, gentlecrawl.SharedFrontierOptions{LeaseTTL: 30 * time.Second})
		if err != nil {
			log.Fatal(err)
		}
		defer f.Close()
		c, err := gentlecrawl.New(gentlecrawl.Config{
			JobDir:   fmt.Sprintf("jobs/worker-%d", i),
			Seeds:    seeds[i], // optional: a worker may join without seeds
			From:     "you@example.org",
			Frontier: f,
		})
		if err != nil {
			log.Fatal(err)
		}
		wg.Go(func() {
			sum, err := c.Run(ctx)
			if err != nil {
				log.Print(err)
				return
			}
			fmt.Printf("worker %d: %s after %d pages\n", i, sum.Stopped, sum.Pages)
		})
	}
	wg.Wait()
}
