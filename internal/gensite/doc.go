// Package gensite generates synthetic websites built like real ones — a
// faceted shop, a news site, a forum and a wiki — whose URL spaces explode
// the way real sites do. It is the ground truth for tests that measure how
// many requests a crawler spends per real page: a Site knows exactly
// which URLs are real pages (RealPages), which real page any URL serves in
// full (PageOf) and which trap family a URL belongs to (FamilyOf), and it
// logs every request it answers (Requests).
//
// Everything is drawn from the kind and a seed: the vocabulary (pseudo-
// words built from syllables drawn per seed), the site's size (250–700
// real pages), its chrome, and above all the surface of every trap family
// — parameter names, query or path style, separators, pagination shapes,
// sort names, print and AMP shapes, which links write default values out.
// Crawler hints are drawn too: rel="canonical", rel="nofollow" on links to
// variants, and a robots meta tag on variants are each on in some seeds
// and off in others, and about half the seeds have none at all. The same
// kind and seed always give the same site, byte for byte; pages are
// rendered on request.
//
// Real pages, by kind (every list under its default order and default
// parameters, written in its canonical form):
//
//   - Shop: the home page; every product; every page of the whole
//     catalogue; every page of each single-facet-value list (a value with
//     no products has no list); the footer pages. Traps: every list of two
//     or more facet values at once (facet-combination), other sort orders
//     (sort), other page sizes (per-page), other display modes
//     (view-mode), cart and wishlist links (action), and default values
//     written out (default-value).
//   - News: the home page; every article; every page of every section
//     list; page 1 of every tag, author and monthly archive list (months
//     with articles); the footer pages. Traps: the filter list with every
//     combination of its filters (filter-combination), tag intersections
//     (tag-intersection), other sort orders (sort), AMP copies (amp), pages
//     after the first of tag, author and archive lists (extra-pagination).
//   - Forum: the index; every page of every board (default order, all
//     days); every page of every topic; the profile of every member who
//     posted; the footer pages. Traps: board lists in other orders (sort)
//     or day ranges (day-range), print views (print), highlighted views
//     (highlight), reply, quote and new-topic forms (action), searches
//     (search), "newest post" redirects (redirect); and duplicates that
//     serve a real page in full: post addresses (post-link), a redundant
//     board id (extra-param), start=0-like defaults (default-value).
//   - Wiki: the home page; every wiki page at its current revision; the
//     index of all pages and one index per namespace; the footer pages.
//     Traps: every page's history, paginated (history); every revision
//     (revision); diffs between revisions (diff); the action views drawn
//     for the seed — source, raw text, backlinks, information (action).
//
// In every kind a real page asked with its parameters in another order
// (param-order), other escapes (encoding) or with the site's tracking
// parameter (tracking) is served in full, and PageOf names it. Unknown
// paths, parameters and values answer 404 (family "404"); a few links on
// some sites are deliberately broken, as on real sites. /robots.txt allows
// everything and is family "robots.txt".
//
// Every page type has one template: a header with the site name and
// navigation, a sidebar of widgets drawn per seed, the main content and a
// footer linking the footer pages. Print views and raw views have no
// chrome; AMP copies have their own.
package gensite
