// Package hook gives the command line (internal/cli) and the module's
// tests what the root package keeps out of its API, because only a program
// that owns its process should use it. The root package sets the hooks
// when it is initialized.
package hook

// HostsInTurn returns how many hosts the crawl of c, a *gentlecrawl.Crawler,
// is fetching from now: a host's turn starts with its first request and
// ends when its pages are settled. It may be called from any goroutine
// while the crawl runs. The command line runs a crawl of one host at a
// time on one P (internal/cli's procTuner).
var HostsInTurn func(c any) int

// VerifyShortcuts makes every crawl the process runs from then on check
// the work it skips: that a URL whose history it does not read has none,
// and that a link it skips as queued is seen. It costs a read of the
// store where the crawl saves one, and fails the crawl when a shortcut
// was wrong. For tests only (internal/crawltest.Main calls it before the
// tests start); call it before any crawl starts.
var VerifyShortcuts func()
