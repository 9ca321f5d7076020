package gentlecrawl

// Every crawl the tests run (the processes they start too: the test
// binary) checks the work it skips: a URL whose history is not read has
// none, and a link skipped as queued is seen.
func init() { verifyShortcuts = true }

// HostsInTurn is Crawler.inTurn, for the tests of the package's own
// (hostsinturn_test.go): how many hosts the crawl is fetching from now.
func HostsInTurn(c *Crawler) int { return c.inTurn() }
