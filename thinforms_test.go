package gentlecrawl_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestThinForms: a shop whose every product links a wishlist form
// around the product's name (/wishlist/add/N: "Please log in to add
// <name> to your wishlist" in the shop's chrome, a few words apart from
// each other, too far apart for near-copies). Every product is fetched;
// the forms stop after a handful, not one per product.
func TestThinForms(t *testing.T) {
	const products = 60
	words := strings.Fields("amber birch cedar dune ember fjord grove heath inlet juniper kelp lagoon meadow nectar orchard pebble quartz river saffron tundra umber valley willow yarrow zephyr")
	name := func(i int) string {
		return strings.Title(words[i%len(words)]) + " " + words[(i*7+3)%len(words)] + " " + words[(i*11+5)%len(words)] + fmt.Sprint(i)
	}
	chrome := func(w http.ResponseWriter, body string) {
		fmt.Fprintf(w, `<html><body><nav><a href="/">Home</a> <a href="/about">About us</a> <a href="/help">Help and delivery</a></nav>
<aside><h3>Categories</h3><ul><li>Jackets for every season</li><li>Trousers and shorts</li><li>Shoes and boots</li><li>Bags and small leather goods</li></ul>
<p>Free delivery on orders over fifty and free returns within thirty days of purchase, always.</p></aside>
<main>%s</main><footer>Shop ltd, 1 High Street, all rights reserved. Terms, privacy and cookies.</footer></body></html>`, body)
	}
	count, _ := crawlSite(t, func(w http.ResponseWriter, r *http.Request) {
		var n int
		switch {
		case r.URL.Path == "/":
			var b strings.Builder
			for i := range products {
				fmt.Fprintf(&b, `<a href="/p/%d">%s</a> `, i, name(i))
			}
			chrome(w, b.String())
		case sscan(r.URL.Path, "/p/%d", &n) && n < products:
			var b strings.Builder
			for k := range 50 {
				b.WriteString(words[(n*13+k*k+k)%len(words)] + fmt.Sprint(n*50+k) + " ")
			}
			chrome(w, fmt.Sprintf(`<h1>%s</h1><p>%s</p><a href="/wishlist/add/%d">Wishlist</a>`, name(n), b.String(), n))
		case sscan(r.URL.Path, "/wishlist/add/%d", &n) && n < products:
			chrome(w, fmt.Sprintf(`<h1>Wishlist</h1><p>Please log in to add <a href="/p/%d">%s</a> to your wishlist.</p>`, n, name(n)))
		case r.URL.Path == "/about" || r.URL.Path == "/help":
			chrome(w, "<p>"+strings.Repeat("about the shop and its help pages ", 10)+"</p>")
		default:
			http.NotFound(w, r)
		}
	})
	forms := 0
	for i := range products {
		if p := fmt.Sprintf("/p/%d", i); count[p] != 1 {
			t.Errorf("%s requested %d times, want once", p, count[p])
		}
		forms += count[fmt.Sprintf("/wishlist/add/%d", i)]
	}
	// Six to learn, and what was leased before the seventh's answer.
	if forms > products/5 {
		t.Errorf("%d of %d wishlist forms requested, want at most %d", forms, products, products/5)
	}
	t.Logf("%d of %d wishlist forms requested", forms, products)
}
