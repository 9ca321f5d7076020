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
// # A crawl
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
// JobDir and Seeds are all a crawl needs; every other field of Config has a
// default fit for crawling sites one does not own, given in its comment.
// From is the way a site owner can reach whoever runs the crawl. Scope,
// Include and Exclude say which links are followed; MaxPages, MaxDepth and
// For bound the crawl; Delay, MaxRate and HostRules make it gentler still.
// Running the same job again resumes it, or with Recrawl refetches what it
// has with conditional GET.
//
// Run returns a Summary: what was fetched, how the servers answered, what
// was learned of each host — where a host that pushed back settled
// (Summary.Slowed), how it honours validators (Validators), how often its
// pages change (Demand), its URL space (URLSpace). Progress is a live view
// while Run runs, and MetricsHandler serves Prometheus metrics.
//
// What a crawl fetched is in the WARC files of its job directory, and
// Config.OnPage hands each page to the program as it comes (see the
// examples).
//
// # Where requests go
//
// Config.Resolve and Config.ConnectTo send a crawl's connections where the
// program says rather than where DNS does (a staging copy, a test server),
// without changing its URLs; Config.Proxy sends them through an HTTP proxy.
// Loopback and private addresses are refused unless
// Config.AllowPrivateNetworks is set, so that a public page cannot steer the
// crawler inside a network.
//
// # A crawl shared by many processes
//
// With Config.Frontier, a SharedFrontier in PostgreSQL (OpenSharedFrontier)
// holds the frontier in place of the job directory, and every crawler run
// on the same database, in any process on any machine, is one more worker
// of one crawl: politeness, robots.txt and the URLs are the crawl's, not
// each process's.
//
// # The command line
//
// The command gentlecrawl (cmd/gentlecrawl) runs the same crawler from a
// shell: `gentlecrawl crawl` takes the settings of Config as flags (curl's
// syntax for --resolve, --connect-to and --proxy, a DSN for --frontier),
// `gentlecrawl report` describes a job, `gentlecrawl export` reads its
// pages back. Its README explains what a crawl does and leaves behind.
//
// # The other side
//
// Package site is for the owners of the sites crawled: HTTP middleware that
// answers conditional requests with 304, sheds load with 503 and
// Retry-After before a server struggles, and tells real crawlers from
// impostors.
package gentlecrawl
