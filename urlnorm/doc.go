// Package urlnorm parses crawlable URLs and computes their canonical form.
//
// Two URLs that a server is bound to treat as the same resource (RFC 3986
// §6.2.2 syntax-based normalization plus the scheme-based rules of §6.2.3)
// get the same [Canonical] string, which the crawler uses as the key of its
// seen-set. The URL as found is kept for fetching: canonicalization is only
// for deduplication, because some servers do care about, for example, the
// order of query parameters.
//
// [Key] is the seen-set key proper: the canonical form without session ids
// ([StripSessionIDs]) and without the query parameters the caller says to
// drop (robots.txt Clean-param, parameters learned to be irrelevant).
//
// [HostKey] names the unit of politeness and scope: scheme, host and port.
//
// The package is pure (no I/O) and all its functions are safe for
// concurrent use; they never modify the *url.URL they are given.
package urlnorm
