package gentlecrawl

// HostsInTurn is Crawler.inTurn, for the tests of the package's own
// (hostsinturn_test.go): how many hosts the crawl is fetching from now.
func HostsInTurn(c *Crawler) int { return c.inTurn() }

// SetHostBounds makes what a crawler keeps per host small, for tests that
// must see hosts evicted: parsed robots.txt rules for at most robots
// origins, and idle hosts forgotten by the scheduler at once.
func SetHostBounds(c *Crawler, robots int) {
	c.robots.max = robots
	c.sched.SetIdleSweep(0, 0)
}
