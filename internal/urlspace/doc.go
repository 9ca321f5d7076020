// Package urlspace holds what the crawler learns about the URL space of each
// host, so that it fetches each page once and stays out of traps. It is
// pure: no I/O and no clock. The crawler tells it what it found and fetched,
// and asks it what to leave out.
//
// Asked about each URL found, before it is queued:
//
//   - [Checker] refuses URLs by their shape (long URLs, deep paths, many
//     parameters, repeated segments, calendar pages far from the first
//     dates seen or from today) and holds each host to a URL budget,
//     counting every refusal by reason;
//   - [Learner] learns the query parameters that do not change a host's
//     content (URLs differing only in them keep returning one digest) and
//     tells the seen-key to leave them out ([Learner.DropFunc]);
//   - [Defaults] learns the parameters whose one value gives the same page
//     as their absence (start=0, page=1, a default sort order) and strips
//     them ([Defaults.Strip]).
//
// Taught by the pages fetched, and asked whether a queued URL is still worth
// fetching:
//
//   - [Patterns] gives each URL pattern of a host ([Template], or for an
//     endless path the tail its URLs repeat) a budget in proportion to the
//     new content its pages yield. Pages that repeat others ([Dup]: copies,
//     reordered lists, lists shown wider, chains of near-identical pages,
//     endless paths, views, redirects) spend it, and a spent pattern's other
//     URLs are not fetched. It also learns a host's rewrites — the path
//     prefix or suffix, or the parameters, that turn a page's URL into its
//     print or AMP view, a sort order or a larger page size — and names the
//     page a variant stands for ([Patterns.StripVariant]);
//   - [Families] judges families of URLs (patterns with tag and slug
//     positions masked too) by what their pages yield, new URLs elsewhere on
//     the host or new text: a list's next pages are fetched, its filters,
//     sort orders and views while they keep yielding. [LinkClass] says how
//     a link stands to the page it was found on, which orders a host's
//     queue and says which budget it is fetched under;
//   - [Explosion] notices, for the report, hosts whose URLs grow far faster
//     than their distinct content, and names the parameters and paths
//     responsible.
//
// Hosts are named by [urlnorm.HostKey] ("scheme://host[:port]"). Each of
// these types is safe for concurrent use, keeps bounded state per host and
// a bounded number of hosts, and is created with its New function. The
// package also holds the functions on URLs and their keys that they share
// ([Template], [KeyTemplate], [Section], [Numbered], [CalendarLike]), and
// [FIFOMap], a bounded map the crawler uses, which is not safe for
// concurrent use.
package urlspace
