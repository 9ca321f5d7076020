// Package check audits a web site for how well it answers crawlers: the
// work of `gentlecrawl check`, for site owners.
//
// [Run] reads the site's robots.txt as the crawler reads it (up to five
// redirects; 404: no restrictions; 5xx, 429 or no answer: complete
// disallow), then a small sample of pages, following links on the host,
// and returns a [Report] of [Finding]s, each with an id, a severity, a
// message and the evidence it rests on (URLs, headers, numbers).
//
// The check is polite in the way the crawler is: robots.txt comes first,
// one request at a time, at least [Config.Delay] and any Crawl-delay
// between the end of one request and the start of the next, never a URL
// robots.txt disallows, at most [MaxRequests] requests in all (robots.txt,
// sitemaps, the soft-404 probe and the conditional re-requests included),
// and the whole check within [Config.Time]: a long Crawl-delay or slow
// answers make the sample smaller, and the report says so.
//
// Each finding needs its own evidence and enough sample to conclude: a
// check that could not conclude says so in an info finding rather than
// guess. The ids and what they mean are listed with the ID constants.
package check
