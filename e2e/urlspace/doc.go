// Package urlspace holds end-to-end tests of how a crawl copes with a
// site's URL space — the URLs that multiply without new pages: session
// ids, facets, sorts, calendars, print views, reply links, revisions and
// diffs. Each test compares the requests a crawl made with the site's own
// list of its real pages:
//
//   - TestURLSpaceTraps: a host of 500 real pages behind session ids, a
//     faceted catalog and an endless calendar: every real page, at most
//     1.2 requests per page;
//   - TestShopTraps: faceted shops drawn per seed (internal/simweb);
//   - TestGeneratedWebs: sites built like real ones the crawler's rules
//     were not written for — a shop, a news site, a forum, a wiki —
//     drawn per seed (internal/gensite).
//
// The crawls of real CMSs are in e2e/cms.
//
// The shape of these crawls (the requests per real page, the families
// and traps the summary names) is what BENCHMARKS.md's URL-space figures
// measure. They are a package of their own so that go test runs them
// beside the root package's tests. Every crawl they run checks the work
// it skips, as the root package's tests do (crawltest.Main).
package urlspace
