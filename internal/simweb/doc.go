// Package simweb is a synthetic web: many virtual hosts served from one HTTP
// listener, chosen by the Host header, whose pages, links and robots.txt
// files are generated deterministically from a seed.
//
// gentlecrawl uses it to test, benchmark and demonstrate itself without a
// network. A Web knows the ground truth a crawler is measured against:
//
//   - Host.Resources lists every servable resource of a host, and
//     Resource.Links the exact set of absolute URLs a correct link extractor
//     finds in a page (after <base href>, relative references, dot segments,
//     fragments and case differences have been resolved);
//   - Web.Allowed says, independently of any robots.txt parser, whether a
//     host's robots.txt profile allows a path to a user agent;
//   - Web.Requests is the log of every request with its start and end
//     times, status, size and request headers, from which tests read a
//     crawler's politeness (one request in flight per host, Crawl-delay,
//     conditional GET, compression, no cookies).
//
// The same seed always produces byte-identical response bodies, and each
// host's graph depends only on the seed and the host's index, never on the
// order of requests. Host graphs are built lazily, so a Web with 10,000
// hosts is cheap until its hosts are visited.
//
// Hosts can be made to struggle (Config.HostOptions): a Capacity gives a
// host a server of limited workers whose latency grows with its queue and
// which refuses with 503 or 429 and Retry-After when the queue is full;
// Config.AddrCapacity does the same per server address, shared by the
// hosts served there; an Outage answers only errors for a scripted
// window; a RateLimit refuses requests above a rate, as nginx's limit_req
// does, with flat latency. The Model behind a Capacity uses only timers, channels and a
// mutex, so it — and a Web called through ServeHTTP without sockets —
// runs on the simulated clock of a testing/synctest bubble.
//
// Hosts can also multiply their URLs (HostOptions.Traps): session ids in
// every link, an endless calendar, a faceted catalog, an endless path,
// soft 404s, and sitemaps. HostOptions.Pages fixes a host's number of
// real pages; Host.DistinctPages lists them and Host.PageOf says which
// one any URL serves, so that a test can count a crawl's requests against
// the pages it found.
//
// A host can instead be an online shop (HostOptions.Shop) whose traps —
// session ids fresh on every response, an unknown tracking parameter,
// sort orders, an endless calendar, an endless path and an endless news
// chain — have names, parameters and URL shapes drawn from the seed, so
// that tests which run several seeds cannot be passed by rules fitted to
// one shape. Host.TrapOf names the trap family of a URL.
//
// Pages can change over time (HostOptions.Changes): each page of a host
// as a Poisson process of its own rate drawn from the seed, on the Web's
// clock, with new text and validators per version (or validators that
// lie). Host.ChangesOf, Host.ChangeRate and Host.Staleness are the ground
// truth a crawler's revisit schedule is measured against.
//
// A Web is an http.Handler. Start serves it on one listener; ServeLoopback
// serves it on several loopback addresses so that per-IP behaviour can be
// tested; the cmd/simweb command runs it as a standalone server.
package simweb
