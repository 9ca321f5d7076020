package gentlecrawl

// Every crawl the tests run (the processes they start too: the test
// binary) checks that a URL whose history is not read has none.
func init() { verifyFirstVisits = true }
