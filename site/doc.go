// Package site helps the owner of a Go web site answer crawlers well: it
// is the server's side of what gentlecrawl does as a client. It has three
// parts, each usable alone.
//
// # Conditional GET
//
// A crawler that has seen a page asks for it again with the validators it
// kept: If-None-Match with the ETag, If-Modified-Since with the
// Last-Modified date. A server that answers 304 Not Modified when nothing
// changed spares itself the rendering and both sides the bytes, and the
// crawler can spend its visits on pages that did change. Static files get
// this from http.ServeContent; a page built from a database does not.
// With this package the handler states its validators before it renders —
// cheaply, from version columns and update times, with [ETagOf] and
// [Newest] — and [Conditional] answers 304 (or 412 for a failed
// If-Match) following RFC 9110 §13.2.2 to the letter, or sets ETag and
// Last-Modified for the full answer:
//
//	v := site.Validators{ETag: site.ETagOf(post.ID, post.Version, templateVersion), LastModified: post.Updated}
//	if site.Conditional(w, r, v) {
//		return // 304 or 412 written
//	}
//	render(w, post)
//
// [ConditionalHandler] is the same as middleware.
//
// # Crawler verification
//
// Anyone can send "User-Agent: Googlebot". [Verifier] checks such a claim
// the way the search engines document it: the address's reverse DNS name
// must lie in the crawler's domains (googlebot.com, search.msn.com, …) and
// resolve back to the address; or the address must be in the IP ranges
// the engine publishes (googlebot.json, bingbot.json: [ParseIPRanges]).
// [KnownCrawlers] lists the crawlers and domains it knows. Answers are
// cached, failed lookups only briefly, so a DNS outage does not make a
// real crawler look like a fake for long. Tests give the Verifier a fake
// [Resolver].
//
// # Load shedding
//
// When a server is overloaded, a crawler can wait and a person cannot.
// [LoadShedder] is middleware that, while the requests in progress or the
// recent response times pass a threshold, answers crawlers 503 with a
// Retry-After that grows with the overload, and serves people as always.
// Search engines slow down on 503s and come back later; they do not read
// Crawl-delay in robots.txt (Google never did), and a robots.txt changed
// to keep them out is read a day late and may cost pages their place in
// the index.
//
// The example server in examples/siteserver puts the three together with
// gzip, robots.txt, a sitemap and real 404s.
package site
