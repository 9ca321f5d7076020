package gentlecrawl_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestMarkedLinks: a shop whose product pages link four related products
// with a mark on the link (?source=related, which serves the product
// page again). The products are linked plainly from the
// home page (some) and the catalogue's later pages (all), which are
// queued after the products a page links, so the related links, met
// first, lead to products not yet known plainly: fetched as
// found, each costs a request until the pages they mark show them for
// copies. The marked links are queued after the plain ones; every
// product is fetched once plainly, and a handful of marked forms.
func TestMarkedLinks(t *testing.T) {
	const products, perPage, related, featured = 240, 12, 4, 80
	words := strings.Fields("amber birch cedar dune ember fjord grove heath inlet juniper kelp lagoon meadow nectar orchard pebble quartz river saffron tundra umber valley willow yarrow zephyr")
	slug := func(i int) string {
		return words[i%len(words)] + "-" + words[(i/len(words)+i*7+3)%len(words)] + "-" + strconv.Itoa(500+i)
	}
	bySlug := map[string]int{}
	for i := range products {
		bySlug[slug(i)] = i
	}
	chrome := func(w http.ResponseWriter, body string) {
		fmt.Fprintf(w, `<html><body><nav><a href="/">Home</a> <a href="/catalog">Catalogue</a> <a href="/help">Help</a></nav>
<main>%s</main><footer>Shop ltd, 1 High Street. Terms, privacy and cookies.</footer></body></html>`, body)
	}
	count, reqs := crawlSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/":
			var b strings.Builder
			for i := range featured {
				fmt.Fprintf(&b, `<a href="/item/%s">%s</a> `, slug(i), slug(i))
			}
			chrome(w, "<p>Featured:</p>"+b.String())
		case r.URL.Path == "/help":
			chrome(w, "<p>"+strings.Repeat("welcome to the shop and its help pages ", 10)+"</p>")
		case r.URL.Path == "/catalog":
			body, ok := catalogPage(r, products, perPage, func(i int) string { return "/item/" + slug(i) }, slug)
			if !ok {
				http.NotFound(w, r)
				return
			}
			chrome(w, body)
		case strings.HasPrefix(r.URL.Path, "/item/"):
			i, ok := bySlug[strings.TrimPrefix(r.URL.Path, "/item/")]
			if !ok || r.URL.RawQuery != "" && r.URL.RawQuery != "source=related" {
				http.NotFound(w, r)
				return
			}
			var b strings.Builder
			fmt.Fprintf(&b, "<h1>%s</h1><p>", slug(i))
			for k := range 60 {
				b.WriteString(words[(i*13+k*k+k)%len(words)] + strconv.Itoa(i*60+k) + " ")
			}
			b.WriteString(`</p><div class="related">`)
			for k := 1; k <= related; k++ {
				j := featured + (i*7+13*k)%(products-featured) // not featured
				fmt.Fprintf(&b, `<a href="/item/%s?source=related">%s</a> `, slug(j), slug(j))
			}
			chrome(w, b.String()+"</div>")
		default:
			http.NotFound(w, r)
		}
	})
	marked := 0
	for i := range products {
		p := "/item/" + slug(i)
		if count[p] != 1 {
			t.Errorf("%s requested %d times, want once", p, count[p])
		}
		marked += count[p+"?source=related"]
	}
	if marked > products/8 {
		t.Errorf("%d of %d marked links requested, want at most %d", marked, products, products/8)
	}
	// The marked links are queued after the plain ones: but for the first
	// two, met before the mark showed on three paths, none is requested
	// before the last product page requested plainly.
	last := 0
	for i, r := range reqs {
		if strings.HasPrefix(r, "/item/") && !strings.Contains(r, "?") {
			last = i
		}
	}
	early := 0
	for _, r := range reqs[:last] {
		if strings.HasSuffix(r, "?source=related") {
			early++
		}
	}
	if early > 2 {
		t.Errorf("%d marked links requested before the last plain product page, want at most 2", early)
	}
	t.Logf("%d of %d marked links requested, %d before the last plain product page", marked, products, early)
}
