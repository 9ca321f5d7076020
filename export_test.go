package gentlecrawl

// Every crawl the tests run (the processes they start too: the test
// binary) checks the work it skips: a URL whose history is not read has
// none, and a link skipped as queued is seen.
func init() { verifyShortcuts = true }
