// Package site helps the owner of a Go web site answer crawlers well: it
// is the server's side of what gentlecrawl does as a client. It has four
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
// # Signed requests
//
// A crawler run from a cloud address has no DNS name to verify it by. It
// can sign its requests instead: HTTP Message Signatures (RFC 9421) in the
// Web Bot Auth profile (draft-meunier-web-bot-auth-architecture), with an
// Ed25519 key whose public half its operator publishes at
// https://AGENT/.well-known/http-message-signatures-directory, the origin
// named in the request's Signature-Agent field. gentlecrawl signs with
// --sign-key. [BotAuth] checks such a signature — tag, algorithm, clock,
// nonce, covered components, the key fetched politely from the agent's
// directory — together with Verifier's check of a known crawler's name,
// and gives one verdict: [VerifiedBySignature], [VerifiedByDNS],
// [Unverified] or [Spoofed]. [BotAuth.Handler] puts it in the request's
// context ([IdentityFrom]); [BotAuth.Verify] takes a [Message] for servers
// not built on net/http.
//
//	auth := &site.BotAuth{}
//	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
//		id, _ := site.IdentityFrom(r.Context())
//		if id.Verdict == site.Spoofed {
//			http.Error(w, "", http.StatusForbidden)
//			return
//		}
//		// id.Agent is the verified signer, "https://crawler.example.org"
//	})
//	http.ListenAndServe(":8080", auth.Handler(mux))
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
