// Package hook gives the command line (internal/cli) what the root package
// keeps out of its API, because only a program that owns its process should
// use it. The root package sets the hooks when it is initialized.
package hook

// HostsInTurn returns how many hosts the crawl of c, a *gentlecrawl.Crawler,
// is fetching from now: a host's turn starts with its first request and
// ends when its pages are settled. It may be called from any goroutine
// while the crawl runs. The command line runs a crawl of one host at a
// time on one P (internal/cli's procTuner).
var HostsInTurn func(c any) int
