// Package robots parses robots.txt files and answers whether a crawler may
// fetch a URL, following RFC 9309 (the Robots Exclusion Protocol) and, where
// the RFC leaves room, the way Google's open-source parser reads real-world
// files.
//
// Parsing never fails: like Google, the parser skips a byte order mark
// (whole, partial or broken), accepts any mix of CR, LF and CRLF line
// endings, a missing colon ("Disallow /"), common misspellings
// ("dissallow", "useragent"), cuts over-long lines safely, and ignores lines
// it does not understand, so an HTML error page served as robots.txt yields
// whatever valid lines it happens to contain. Only the first [MaxSize]
// bytes are read (RFC 9309 §2.5). A file in UTF-16 is converted to UTF-8
// first. [Robots.Issues] lists every line that was ignored or read
// leniently, with its number and why, for a tester to show.
//
// Matching follows RFC 9309 §2.2: the group whose user-agent names the
// crawler's product token (case-insensitively, as a whole token) applies,
// else the "*" group; groups naming the same agent are merged; the longest
// matching pattern wins and Allow wins a tie; "*" matches any sequence of
// characters and a final "$" anchors the end. Patterns and paths are
// compared after percent-encoding normalization (§2.2.2). Where Google's
// parser departs from the RFC the RFC wins; the conformance test names each
// such case.
//
// Besides the rules, a file gives Sitemap URLs, Yandex's Clean-param
// records ([Robots.CleanParams]) and, per group, a Crawl-delay
// ([Group.CrawlDelayInfo]): the minimum time between the starts of two
// requests, as Bing and Yandex read it, reported with its raw value and
// whether it is absurd; honouring it is the caller's decision.
//
// Cost: parsing is one linear pass that allocates a few slices per file,
// not per line. A group builds its matching index on first use (so the
// groups of other crawlers cost nothing), after which a match does not
// allocate and looks only at the rules whose literal prefix the path
// starts with.
//
// [Policy.Decide] turns the outcome of fetching /robots.txt into rules
// (RFC 9309 §2.3 and §2.4, completed with Google's documented handling): 4xx
// means no restrictions, 5xx, 429 and network errors complete disallow or
// the last good copy, and it says how long to keep the answer.
// [FromResponse] is its older, stateless form.
//
// A parsed *Robots and the *Group values it returns are immutable and safe
// for concurrent use by multiple goroutines.
package robots
