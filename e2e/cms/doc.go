// Package cms holds the end-to-end test of crawls of real CMSs:
// TestCMSCrawl crawls WordPress (posts, pages, categories, tags, authors,
// comments with their reply links, the calendar's day archives, feeds)
// and DokuWiki (pages with revisions, diffs, backlinks, the index) from
// Debian's packages, run on loopback under Apache with mod_php
// (internal/cmstest), and compares what Apache logged with each CMS's own
// list of its content: the real pages found, the requests per real page,
// and the families and traps the summary names (BENCHMARKS.md's
// URL-space figures). It is the real-world side of e2e/urlspace's
// generated webs.
//
// Without WordPress, DokuWiki, MariaDB or mod_php installed the test is
// skipped, unless the environment variable CI is set (scripts/test
// installs them). A package of its own, go test runs it beside the
// others: the crawl of WordPress alone takes a minute or more. Every crawl
// it runs checks the work it skips, as the root package's tests do
// (crawltest.Main).
package cms
