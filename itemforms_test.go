package gentlecrawl_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestItemForms: a shop whose product pages, named by words, link
// themselves with the product's number to put it in the basket
// (/p/amber-birch.html?add=86037: the product page again, with a line
// saying so). The link adds a number to the page's URL, as a later page
// would; the catalogue's later pages keep finding products, so the host
// never looks as if its later pages led nowhere. Every product is
// fetched once; the basket forms stop after a handful.
func TestItemForms(t *testing.T) {
	const products, perPage = 72, 6
	words := strings.Fields("amber birch cedar dune ember fjord grove heath inlet juniper kelp lagoon meadow nectar orchard pebble quartz river saffron tundra umber valley willow yarrow zephyr")
	slug := func(i int) string {
		return words[i%len(words)] + "-" + words[(i/len(words)+i*7+3)%len(words)] + "-" + words[(i*11+5)%len(words)]
	}
	id := func(i int) int { return 86000 + i*37 }
	bySlug := map[string]int{}
	for i := range products {
		bySlug[slug(i)] = i
	}
	chrome := func(w http.ResponseWriter, body string) {
		fmt.Fprintf(w, `<html><body><nav><a href="/">Home</a> <a href="/catalog">Catalogue</a> <a href="/help">Help and delivery</a>
<a href="/about">About us</a> <a href="/returns">Returns</a> <a href="/contact">Contact</a></nav>
<main>%s</main><footer>Shop ltd, 1 High Street, all rights reserved. Terms, privacy and cookies.</footer></body></html>`, body)
	}
	product := func(i int, added bool) string {
		var b strings.Builder
		if added {
			b.WriteString("<p>Added to your basket.</p>")
		}
		fmt.Fprintf(&b, "<h1>%s</h1><p>", strings.ReplaceAll(slug(i), "-", " "))
		for k := range 60 {
			b.WriteString(words[(i*13+k*k+k)%len(words)] + strconv.Itoa(i*60+k) + " ")
		}
		fmt.Fprintf(&b, `</p><a href="/p/%s.html?add=%d">Add to basket</a>`, slug(i), id(i))
		return b.String()
	}
	count, _ := crawlSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/" || r.URL.Path == "/help" || r.URL.Path == "/about" || r.URL.Path == "/returns" || r.URL.Path == "/contact":
			chrome(w, "<p>"+strings.Repeat("welcome to the shop and its help pages ", 10)+"</p>")
		case r.URL.Path == "/catalog":
			body, ok := catalogPage(r, products, perPage, func(i int) string { return "/p/" + slug(i) + ".html" }, slug)
			if !ok {
				http.NotFound(w, r)
				return
			}
			chrome(w, body)
		case strings.HasPrefix(r.URL.Path, "/p/") && strings.HasSuffix(r.URL.Path, ".html"):
			i, ok := bySlug[strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/p/"), ".html")]
			add := r.URL.Query().Get("add")
			if !ok || add != "" && add != strconv.Itoa(id(i)) {
				http.NotFound(w, r)
				return
			}
			chrome(w, product(i, add != ""))
		default:
			http.NotFound(w, r)
		}
	})
	forms := 0
	for i := range products {
		if p := "/p/" + slug(i) + ".html"; count[p] != 1 {
			t.Errorf("%s requested %d times, want once", p, count[p])
		}
		forms += count[fmt.Sprintf("/p/%s.html?add=%d", slug(i), id(i))]
	}
	if forms > products/8 {
		t.Errorf("%d of %d basket forms requested, want at most %d", forms, products, products/8)
	}
	t.Logf("%d of %d basket forms requested", forms, products)
}
