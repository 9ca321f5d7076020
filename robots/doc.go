// Package robots parses robots.txt files and answers whether a crawler may
// fetch a URL, following RFC 9309 (the Robots Exclusion Protocol) and, where
// the RFC leaves room, the way Google's open-source parser reads real-world
// files.
//
// Parsing never fails: like Google, the parser skips a byte order mark,
// accepts any mix of CR, LF and CRLF line endings, a missing colon
// ("Disallow /"), common misspellings ("dissallow", "useragent"), and
// ignores lines it does not understand, so an HTML error page served as
// robots.txt yields whatever valid lines it happens to contain. Only the
// first [MaxSize] bytes are read (RFC 9309 §2.5).
//
// Matching follows RFC 9309 §2.2: the group whose user-agent names the
// crawler's product token (case-insensitively, as a whole token) applies,
// else the "*" group; the longest matching pattern wins and Allow wins a
// tie; "*" matches any sequence of characters and a final "$" anchors the
// end. Patterns and paths are compared after percent-encoding
// normalization (§2.2.2). Where Google's parser departs from the RFC the RFC
// wins; the conformance test names each such case.
//
// [FromResponse] turns the outcome of fetching /robots.txt into rules
// (RFC 9309 §2.3.1): 4xx means no restrictions, 5xx and network errors mean
// complete disallow until a later fetch succeeds.
//
// A parsed *Robots and the *Group values it returns are immutable and safe
// for concurrent use by multiple goroutines. Matching does not allocate.
package robots
