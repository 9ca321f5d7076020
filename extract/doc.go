// Package extract finds the links and the robots directives in an HTML page.
//
// It reads the page with the golang.org/x/net/html tokenizer, without
// building a tree, and bounds the memory it uses for one token. Links are
// resolved against the page's effective base URL, normalized with package
// urlnorm and returned once each, in document order. Only http and https
// links are kept.
//
// The package is pure: it does no I/O and does not import net/http. Its
// functions are safe for concurrent use; a returned *Page belongs to the
// caller.
package extract
