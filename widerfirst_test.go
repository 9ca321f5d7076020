package gentlecrawl_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestWiderViewFirst: a catalogue whose first page links a wider view of
// itself ("show all", 160 to a page) before its numbered later pages, its
// products' cards short and alike, so that every page of the list reads
// nearly as the wider view does. The wider view is the variant; the later
// pages are the list's own pages, not a path below the list that serves
// the wider view again: every one is fetched, and every product.
func TestWiderViewFirst(t *testing.T) {
	for _, shape := range []struct {
		name      string
		later     string // format of the n-th page's path, n ≥ 2
		perPage   int
		products  int
		wide      string // the wider view's query
		wideCount int    // how many products it shows, from the first
		descWords int    // words of a card's description
	}{
		{"path", "/c/page/%d/", 12, 120, "show=all", 120, 24},
		{"short", "/c/p/%d/", 40, 320, "ipp=160", 160, 12},
		{"query", "/c/?page=%d", 15, 150, "view=all", 150, 30},
		{"cards", "/c/page/%d/", 30, 210, "per_page=240", 210, 6},
	} {
		t.Run(shape.name, func(t *testing.T) {
			pages := (shape.products + shape.perPage - 1) / shape.perPage
			pageURL := func(n int) string {
				if n == 1 {
					return "/c/"
				}
				return fmt.Sprintf(shape.later, n)
			}
			// The same filters' names and counts on every page of the
			// list: most of a page's words when its cards are short.
			var b strings.Builder
			for i := range 8 {
				fmt.Fprintf(&b, `<span>%s</span> (%d) `, prose(100+i, 2), 3+i*7%40)
			}
			facets := b.String()
			list := func(w http.ResponseWriter, from, to int, pager bool) {
				fmt.Fprintf(w, `<html><body><nav><a href="/">home</a> <a href="/about">about</a></nav><aside>%s</aside><main>`, facets)
				for i := from; i < to && i < shape.products; i++ {
					fmt.Fprintf(w, `<div><a href="/item/%d">%s</a><p>%s</p></div>`, i, prose(7000+i, 2), blurb(i, shape.descWords))
				}
				fmt.Fprint(w, `</main>`)
				if pager {
					fmt.Fprintf(w, `<a href="/c/?%s">show all</a> `, shape.wide)
					for n := 1; n <= pages; n++ {
						fmt.Fprintf(w, `<a href="%s">%d</a> `, pageURL(n), n)
					}
				}
				fmt.Fprint(w, `</body></html>`)
			}
			count, _ := crawlSite(t, func(w http.ResponseWriter, r *http.Request) {
				var n int
				uri := r.URL.RequestURI()
				switch {
				case uri == "/":
					fmt.Fprint(w, `<html><body><a href="/c/">catalogue</a> <a href="/about">about</a></body></html>`)
				case uri == "/about":
					fmt.Fprintf(w, `<html><body><p>%s</p><a href="/">home</a></body></html>`, prose(1, 50))
				case uri == "/c/":
					list(w, 0, shape.perPage, true)
				case uri == "/c/?"+shape.wide:
					list(w, 0, shape.wideCount, false)
				case sscan(uri, shape.later, &n) && n >= 2 && n <= pages:
					list(w, (n-1)*shape.perPage, n*shape.perPage, true)
				case sscan(uri, "/item/%d", &n) && n < shape.products:
					fmt.Fprintf(w, `<html><body><h1>product %d</h1><p>%s</p><a href="/c/">catalogue</a></body></html>`, n, prose(9000+n, 80))
				default:
					http.NotFound(w, r)
				}
			})
			if count["/c/?"+shape.wide] == 0 {
				t.Fatalf("the wider view was never fetched: the test does not test what it says")
			}
			for n := 2; n <= pages; n++ {
				if count[pageURL(n)] == 0 {
					t.Errorf("page %d of the catalogue (%s) never fetched", n, pageURL(n))
				}
			}
			missed := 0
			for i := range shape.products {
				if count[fmt.Sprintf("/item/%d", i)] == 0 {
					missed++
				}
			}
			if missed > 0 {
				t.Errorf("%d of %d products never fetched", missed, shape.products)
			}
			var order []string
			for u, c := range count {
				if c > 1 {
					order = append(order, u)
				}
			}
			if len(order) > 0 {
				slices.Sort(order)
				t.Errorf("requested more than once: %s", strings.Join(order, " "))
			}
		})
	}
}

// blurb returns a product's short description: words words drawn from a
// catalogue's few, so that every list of the catalogue reads alike.
func blurb(n, words int) string {
	vocab := strings.Fields("soft cotton linen wool shirt slim regular fit striped plain blue green red washable classic tailored summer winter light warm")
	var b strings.Builder
	for i := range words {
		h := uint64(n+1)*2654435761 + uint64(i)*40503
		b.WriteString(vocab[(h>>7)%uint64(len(vocab))])
		b.WriteByte(' ')
	}
	return b.String()
}
