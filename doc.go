// Package gentlecrawl is a web crawler that site owners are glad to see in
// their logs.
//
// It reads robots.txt as RFC 9309 and Google do, and honours Crawl-delay.
// It asks for compressed answers and refetches with conditional GET. It
// slows down at once when a server struggles, finds the traps in a site's
// URL space, and writes what it fetched to WARC files. All the state of a
// crawl lives in its job directory, so an interrupted crawl resumes where it
// stopped. With Config.Continuous it keeps a copy fresh: it revisits each
// page about as often as the page changes, within a budget.
//
// Create a Crawler with New and call Run:
//
//	c, err := gentlecrawl.New(gentlecrawl.Config{
//		JobDir: "jobs/example",
//		Seeds:  []string{"https://example.org/"},
//		From:   "you@example.org",
//	})
//	if err != nil {
//		return err
//	}
//	sum, err := c.Run(ctx)
//
// The command gentlecrawl (cmd/gentlecrawl) runs the same crawler from a
// shell, and its README explains what a crawl does and leaves behind.
package gentlecrawl
