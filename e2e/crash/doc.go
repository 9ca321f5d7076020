// Package crash holds end-to-end tests of what a crawl keeps when its
// process dies, and of crawls run as several processes on one shared
// frontier. It has no code of its own: its tests run the crawler as real
// processes (the test binary run as the command line: internal/crawltest),
// kill them with SIGKILL at random moments, restart the PostgreSQL
// server under a shared crawl, and read the web server's log the way a
// site owner would:
//
//   - TestKillNineLosesNothing: killed twenty times or more and resumed
//     each time, a crawl fetches every page, none more than twice, never
//     two requests at once to a host nor one sooner than the delay after
//     the last (across the restarts too), and leaves every WARC file
//     readable and every request log whole up to the kill;
//   - TestSharedFrontier: one crawl as several processes on a frontier in
//     a real PostgreSQL, one of them killed and another joining: every
//     page fetched, none more than twice, robots.txt first, one request
//     at a time per host with the delay, Retry-After windows and the
//     per-address budget kept whichever process sent the requests;
//   - TestSharedFrontierRestart: the database server restarted twice in
//     the middle of a shared crawl, once as in a crash: every process
//     rides it out, and every page is fetched.
//
// They are a package of their own so that go test runs them beside the
// root package's tests. Every crawl they run checks the work it skips, as
// the root package's tests do (crawltest.Main).
package crash
