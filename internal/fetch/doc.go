// Package fetch performs one HTTP exchange the way a polite crawler should.
//
// A [Client] sends a single GET per call to [Client.Do] and returns a [Result]
// holding everything the crawler needs afterwards: the status and headers for
// politeness and revisit decisions, the decoded body for link extraction, the
// request and response as the WARC record keeps them, and timings and byte
// counts for statistics.
//
// Two stacks carry the exchanges. http:// URLs go through the package's own
// HTTP/1.1 client (h1.go): the request is written and the response read on
// the caller's goroutine, over kept-alive connections whose reads and writes
// are raw system calls on Linux (package internal/rawio), so that a polite
// crawl, idle between requests, does not wake the Go runtime's threads for
// every page. https:// URLs go through net/http's Transport, for TLS and
// HTTP/2. Both follow the same rules; the hostile-server tests run on both.
//
// What Do does, and why:
//
//   - It sends a request once, or twice when a kept-alive connection fails
//     before any byte of the answer (the server closed it as the request
//     came): then once more on a new connection, as net/http does, on
//     http:// and https:// alike, and [Result.Retried] says so. Never a
//     third time, never once a byte of the answer has come.
//
//   - It never follows redirects. A 3xx comes back as a Result with its
//     Location header intact, so that every hop goes back through the
//     crawler's scope, robots and seen-set checks.
//
//   - It sends User-Agent, From, Accept and Accept-Encoding, and the
//     validators of a conditional GET (If-None-Match, If-Modified-Since)
//     exactly as the server gave them. It never sends cookies or a Referer.
//     Given a key ([Config.SignKey]), it signs every request for its own
//     authority (HTTP Message Signatures, Web Bot Auth: Signature-Agent,
//     Signature-Input, Signature), after every other field is set, so that
//     [Result.RequestRaw] holds the fields as sent.
//
//   - It asks for compressed responses and decodes them itself, capping the
//     decoded size ([Config.MaxBodySize]) and the bytes read from the wire
//     ([Config.MaxRawSize]). Limits are not errors: a body cut by a limit, by
//     the deadline or by the server going away is returned with
//     [Result.Truncated] set, using the values of the WARC-Truncated field
//     (WARC 1.1 §5.13), and [Result.Cause] saying which limit or fault.
//
//   - It refuses to connect to loopback, private, link-local and other
//     non-public addresses unless [Config.AllowPrivateNetworks] is set. The
//     check is made on the address actually dialed, after --connect-to,
//     --resolve and DNS, so a public name that resolves to 127.0.0.1 is
//     refused too.
//
//   - It honours curl's --resolve and --connect-to rules ([Resolve],
//     [ConnectTo]): the URL and Host header stay as they are, only the TCP
//     destination changes.
//
//   - It goes through an HTTP proxy when told ([Config.Proxy], [Proxy]):
//     http:// URLs as requests in absolute form, https:// URLs through a
//     CONNECT tunnel. The guard still checks each target where its name
//     resolves here; the proxy's own address is allowed.
//
//   - It decodes gzip, x-gzip, deflate (zlib or raw, told apart by the
//     zlib header), br and zstd, and up to two of them chained, and keeps
//     the body as it came, still content-encoded but with any chunked
//     framing removed ([Result.RawBody], the WARC record's payload), and
//     the response head rebuilt from the parsed fields
//     ([Result.ResponseHead]). Every limit a server could abuse has its
//     own error, a counter in [Client.Stats] and a default: decoded size,
//     raw size, decompression ratio ([ErrDecompressionBomb]), number of
//     codings, header bytes, connect, TLS, first byte, total time and a
//     minimum transfer rate ([ErrTooSlow]). A body cut short says why in
//     [Result.Cause].
//
//   - It recognises what a body is: [Result.MediaType] is the Content-Type,
//     or what the first bytes say when that is missing, generic or a lie;
//     a [TypePolicy] stops downloading what the crawl does not want. An
//     [ExtensionPolicy] lets the crawler skip URLs before fetching them.
//
//   - It caches DNS answers (single flight, TTL, bounded; [Resolver] is the
//     seam for tests) and tells the crawler where a host resolves
//     ([Client.LookupIP]) for per-IP politeness.
//
//   - Redirects are the crawler's: [ResolveLocation] turns a Location value,
//     however sloppy, into a URL or a [*LocationError], and [CheckRedirect]
//     enforces [MaxRedirects] and detects loops.
//
// Do returns an error only when there is no HTTP response to record at all;
// such errors are [*Error] values that unwrap to their cause.
package fetch
