// Package hostload decides when each host may be asked, and how hard.
//
// [Scheduler] hands hosts to workers: one worker holds a host at a time, a
// host is handed out only once its next allowed time has come, and hosts
// that must wait are parked in a heap ordered by that time, so that no
// worker sleeps while another host is due. Hosts at one IP address share a
// budget of requests in flight ([LoadConfig.MaxPerAddr], by default
// [DefaultMaxPerAddr]): sites on shared hosting share a server.
//
// [Load] follows how one host copes and sets the pace of its requests: a
// floor (--delay, Crawl-delay, an override) that is never undercut, and on
// top of it a rate learned from the host's answers — response times against
// its baseline, refusals (429, 502 to 504, connections refused or reset),
// Retry-After — controlled the way TCP's CUBIC controls a window. Refusals
// also pause the host. A host with no floor that stays fast may have more
// than one request in flight ([Load.Concurrency], [Scheduler.TryExtra]).
// [RateMemo] carries what a Load learned to another process of a shared
// crawl.
//
// The package decides; it does no I/O and imports no network package.
package hostload
