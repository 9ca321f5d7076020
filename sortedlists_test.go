package gentlecrawl_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestSortedListsNofollowPager: a news site whose sections' lists can be
// sorted two ways (?o=az, ?o=top); the sorted lists mark their pager
// rel="nofollow", the plain lists do not. A sorted list is the same list
// in another order, with as many pages, whether or not the site marks its
// pager: once a few sections have shown a sort to be one, the other
// sections' sorted lists are not requested. Every article is.
func TestSortedListsNofollowPager(t *testing.T) {
	const sections, pages, perPage = 10, 3, 5
	words := strings.Fields("amber birch cedar dune ember fjord grove heath inlet juniper kelp lagoon meadow nectar orchard pebble quartz river saffron tundra")
	sec := func(s int) string { return words[s] }
	article := func(s, i int) string {
		return fmt.Sprintf("/%s/2024/%02d/%s-%s/", sec(s), 1+i%12, words[i], words[(i*7+s)%len(words)])
	}
	articles := map[string]int{}
	for s := range sections {
		for i := range pages * perPage {
			articles[article(s, i)] = 100*s + i
		}
	}
	chrome := func(w http.ResponseWriter, body string) {
		var nav strings.Builder
		for s := range sections {
			fmt.Fprintf(&nav, `<a href="/%s/">%s</a> `, sec(s), sec(s))
		}
		fmt.Fprintf(w, `<html><body><nav><a href="/">Home</a> %s</nav><main>%s</main><footer>The Daily, all rights reserved.</footer></body></html>`, nav.String(), body)
	}
	count, _ := crawlSite(t, func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		s := slices.Index(words[:sections], parts[0])
		switch {
		case r.URL.Path == "/":
			chrome(w, "<p>"+strings.Repeat("the news of the day in every section ", 10)+"</p>")
		case s >= 0 && len(parts) == 1 && strings.HasSuffix(r.URL.Path, "/"):
			q := r.URL.Query()
			page, _ := strconv.Atoi(q.Get("page"))
			if q.Get("page") == "" {
				page = 1
			}
			o := q.Get("o")
			if page < 1 || page > pages || o != "" && o != "az" && o != "top" || len(q) > 2 {
				http.NotFound(w, r)
				return
			}
			order := make([]int, pages*perPage)
			for i := range order {
				order[i] = i
			}
			switch o {
			case "az":
				slices.Reverse(order)
			case "top":
				order = append(order[perPage:], order[:perPage]...)
			}
			var b strings.Builder
			fmt.Fprintf(&b, "<h1>%s</h1><ul>", sec(s))
			for _, i := range order[(page-1)*perPage : page*perPage] {
				fmt.Fprintf(&b, `<li><a href="%s">story %d</a></li>`, article(s, i), i)
			}
			b.WriteString("</ul><p>")
			for _, other := range []string{"", "az", "top"} {
				if other == o {
					continue
				}
				if other == "" {
					fmt.Fprintf(&b, `<a href="/%s/">newest</a> `, sec(s))
				} else {
					fmt.Fprintf(&b, `<a href="/%s/?o=%s">by %s</a> `, sec(s), other, other)
				}
			}
			b.WriteString("</p><p>")
			for p := 2; p <= pages; p++ {
				if o == "" {
					fmt.Fprintf(&b, `<a href="/%s/?page=%d">%d</a> `, sec(s), p, p)
				} else {
					fmt.Fprintf(&b, `<a rel="nofollow" href="/%s/?o=%s&amp;page=%d">%d</a> `, sec(s), o, p, p)
				}
			}
			chrome(w, b.String()+"</p>")
		case s >= 0 && len(parts) == 4:
			i, ok := articles[r.URL.Path]
			if !ok || r.URL.RawQuery != "" {
				http.NotFound(w, r)
				return
			}
			var b strings.Builder
			fmt.Fprintf(&b, "<h1>%s</h1><p>", parts[3])
			for k := range 60 {
				b.WriteString(words[(i*13+k*k+k)%len(words)] + strconv.Itoa(i*60+k) + " ")
			}
			chrome(w, b.String()+"</p>")
		default:
			http.NotFound(w, r)
		}
	})
	for s := range sections {
		for i := range pages * perPage {
			if p := article(s, i); count[p] != 1 {
				t.Errorf("%s requested %d times, want once", p, count[p])
			}
		}
	}
	sorted := 0
	for s := range sections {
		for _, o := range []string{"az", "top"} {
			sorted += count[fmt.Sprintf("/%s/?o=%s", sec(s), o)]
		}
	}
	if sorted > sections {
		t.Errorf("%d of %d sorted lists requested, want at most %d", sorted, 2*sections, sections)
	}
	t.Logf("%d of %d sorted lists requested", sorted, 2*sections)
}
