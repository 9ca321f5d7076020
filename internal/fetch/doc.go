// Package fetch performs one HTTP exchange the way a polite crawler should.
//
// A [Client] sends a single GET per call to [Client.Do] and returns a [Result]
// holding everything the crawler needs afterwards: the status and headers for
// politeness and revisit decisions, the decoded body for link extraction, the
// raw request and response bytes for the WARC record, and timings and byte
// counts for statistics.
//
// What Do does, and why:
//
//   - It never follows redirects. A 3xx comes back as a Result with its
//     Location header intact, so that every hop goes back through the
//     crawler's scope, robots and seen-set checks.
//   - It sends User-Agent, From, Accept and Accept-Encoding, and the
//     validators of a conditional GET (If-None-Match, If-Modified-Since)
//     exactly as the server gave them. It never sends cookies or a Referer.
//   - It asks for compressed responses and decodes them itself, capping the
//     decoded size ([Config.MaxBodySize]) and the bytes read from the wire
//     ([Config.MaxRawSize]). Limits are not errors: a body cut by a limit, by
//     the deadline or by the server going away is returned with
//     [Result.Truncated] set, using the values of the WARC-Truncated field
//     (WARC 1.1 §5.13).
//   - It refuses to connect to loopback, private, link-local and other
//     non-public addresses unless [Config.AllowPrivateNetworks] is set. The
//     check is made on the address actually dialed, after --connect-to,
//     --resolve and DNS, so a public name that resolves to 127.0.0.1 is
//     refused too.
//   - It honours curl's --resolve and --connect-to rules ([Resolve],
//     [ConnectTo]): the URL and Host header stay as they are, only the TCP
//     destination changes.
//
// Do returns an error only when there is no HTTP response to record at all;
// such errors are [*Error] values that unwrap to their cause.
package fetch
