package gentlecrawl

// HostsInTurn is Crawler.inTurn, for the tests of the package's own
// (hostsinturn_test.go): how many hosts the crawl is fetching from now.
func HostsInTurn(c *Crawler) int { return c.inTurn() }
