// Package servers holds end-to-end tests of crawls against servers we did
// not write — Debian's nginx, Apache, tinyproxy and PostgreSQL, run by
// the tests on loopback (internal/nginxtest, internal/apachetest,
// internal/proxytest, internal/pgtest) — each read from the server's own
// access log, the way a site owner would read it:
//
//   - TestNginxRateLimits: behind nginx's limit_req, no request inside a
//     Retry-After window or sooner than the delay, and once the limit is
//     found the refusals stop;
//   - TestRealSiteLosesNothing: a real site (Debian's rust-doc HTML,
//     served by nginx) crawled whole: every page a walk of the files
//     finds is fetched once, and nothing else;
//   - TestSharedRealServer: the same site as three sites on one address,
//     crawled by three processes on one PostgreSQL: every page once, one
//     request at a time per site with the delay, and the per-address
//     budget kept by the processes together;
//   - TestCrawlThroughProxy: a crawl through a real proxy asks what it
//     asks without one, in the same order and with the same manners;
//   - TestReportAgainstNginx: the report, the metrics and the export
//     count what nginx logged.
//
// Without the servers installed the tests are skipped, unless the
// environment variable CI is set (scripts/test installs them). They are
// a package of their own so that go test runs them beside the root
// package's tests. Every crawl they run checks the work it skips, as the
// root package's tests do (crawltest.Main).
package servers
