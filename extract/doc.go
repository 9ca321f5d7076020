// Package extract reads what a crawler needs from the bodies it fetches:
//
//   - [HTML]: what a page says about crawling — its links, base, canonical
//     URL, robots directives, search forms and declared encoding;
//   - [Text]: a page's visible text ([Options.Read] gives both in one
//     reading);
//   - [ParseSitemap]: the URLs a sitemap or a sitemap index lists;
//   - [XRobotsTag]: the directives of an X-Robots-Tag header.
//
// Pages are read by the package's own scanner (scan.go), which splits a
// page into the tokens of the HTML tokenization algorithm where it lies in
// memory, without building a tree or copying tags, and stops at a token
// longer than [Options.MaxToken]; the attributes of the few tags that
// matter are read from the tag's bytes too. golang.org/x/net/html's
// tokenizer is the reference: the tests compare the scanner with it on
// random pages and on real documentation sites, and the attribute reader
// on random tags. It still reads the rare tag whose attributes hold what the
// package does not decode itself (a NUL, a carriage return, a character
// reference it does not know).
//
// Links are resolved against the page's effective base URL, normalized with
// package urlnorm and returned once each, in document order. Only http and
// https links are kept.
//
// The package is pure: it does no I/O and does not import net/http. Its
// functions are safe for concurrent use; a returned *Page belongs to the
// caller.
package extract
