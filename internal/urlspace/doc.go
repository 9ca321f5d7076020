// Package urlspace holds what the crawler learns about the URL space of each
// host, so that it fetches one URL per page and stays out of traps:
//
//   - [Learner] learns query parameters that do not change a host's content
//     (URLs differing only in them keep returning the same digest), keeps the
//     evidence, and tells the seen-key which parameters to drop;
//   - [Checker] refuses trap-like URLs (repeated path segments, deep paths,
//     long URLs, many parameters, calendars running away) and enforces a
//     per-host URL budget, counting every refusal by reason per host;
//   - [Explosion] notices hosts whose URLs grow far faster than their
//     distinct content and names the parameters and paths responsible.
//
// Hosts are named by [urlnorm.HostKey] ("scheme://host[:port]"). The package
// is pure: no I/O and no clock. Each type is safe for concurrent use, keeps
// bounded state per host and a bounded number of hosts (the least recently
// used host is forgotten first), and is created with its New function.
package urlspace
