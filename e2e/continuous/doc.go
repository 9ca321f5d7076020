// Package continuous holds end-to-end tests of continuous crawls
// (Config.Continuous): crawls of webs whose pages change at known rates
// (internal/simweb) and of a real Apache whose files are rewritten while
// it is crawled, held to the server's log:
//
//   - TestContinuous: every page fetched, the pages that change revisited
//     and the static ones not, never within --revisit-min, never past
//     --max-rate over any 10 s; run again, the plan is kept;
//   - TestContinuousLyingValidators: a host whose validators never change
//     is found out, and refreshed without them;
//   - TestContinuousKillNine: killed with SIGKILL at random moments and
//     resumed, a continuous crawl keeps its plan;
//   - TestContinuousAfterPlainCrawl: a job crawled once, then continued,
//     revisits what changes and not what does not;
//   - TestContinuousApache: against Debian's Apache with mod_deflate, the
//     changing pages come back as 200s and 304s, the old ones never.
//
// Their crawls run for a set time (--for), mostly waiting on the rate
// they are held to: a package of their own, go test runs them beside the
// root package's tests. Every crawl they run checks the work it skips,
// as the root package's tests do (crawltest.Main).
package continuous
