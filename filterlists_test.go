package gentlecrawl_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestFilterListsOfEverything: a news site whose list of its newest
// articles (/articles/) can be filtered in the query by section, tag or
// author, each filter a list with later pages, linked from every article. The
// sections' own lists (/c/NAME/) lead to every article; the filtered
// lists' later pages list them again. Each parameter alone has too few
// values to be a taxonomy; together they are one, and their later pages
// stop once they have shown nothing new — while every article and every
// page of the sections' lists is fetched.
//
// In the shape "only" the sections' lists show their newest articles
// alone: the filters' later pages are the way to the older ones, yield,
// and are all fetched.
func TestFilterListsOfEverything(t *testing.T) {
	for _, shape := range []struct {
		name           string
		params         [3]string // section, tag, author
		pageParam      string
		articles, tags int
		only           bool // the sections' lists show their first page only
	}{
		{"section-tag-author", [3]string{"section", "tag", "author"}, "page", 700, 8, false},
		{"cat-topic-by", [3]string{"cat", "topic", "by"}, "pg", 360, 10, false},
		{"only", [3]string{"section", "tag", "author"}, "page", 240, 8, true},
	} {
		t.Run(shape.name, func(t *testing.T) {
			testFilterLists(t, shape.params, shape.pageParam, shape.articles, shape.tags, shape.only)
		})
	}
}

func testFilterLists(t *testing.T, params [3]string, pageParam string, articles, tags int, only bool) {
	const sections, authors, onPage = 6, 6, 10
	secName := func(s int) string { return spell(300 + s*17) }
	tagName := func(g int) string { return spell(900 + g*31) }
	authorName := func(a int) string { return spell(1500 + a*13) }
	// Article n: section n%sections, tags n%tags and (n/3)%tags, author
	// (n/7)%authors; newest first by number.
	in := func(n, p int, v string) bool {
		switch p {
		case 0:
			return secName(n%sections) == v
		case 1:
			return tagName(n%tags) == v || tagName((n/3)%tags) == v
		default:
			return authorName((n/7)%authors) == v
		}
	}
	values := func(p int) []string {
		var vs []string
		for i := range [3]int{sections, tags, authors}[p] {
			vs = append(vs, [3]func(int) string{secName, tagName, authorName}[p](i))
		}
		return vs
	}
	list := func(w http.ResponseWriter, title string, items []int, page int, pageURL func(int) string) bool {
		if page < 1 || (page-1)*onPage >= max(len(items), 1) {
			return false
		}
		var b strings.Builder
		fmt.Fprintf(&b, "<html><body><h1>%s</h1><ul>", title)
		for _, n := range items[(page-1)*onPage : min(page*onPage, len(items))] {
			fmt.Fprintf(&b, `<li><a href="/a/%d">%s</a></li>`, n, strings.TrimSpace(prose(n, 6)))
		}
		b.WriteString("</ul><nav>")
		for k := 2; pageURL != nil && (k-1)*onPage < len(items); k++ {
			fmt.Fprintf(&b, `<a href="%s">%d</a> `, pageURL(k), k)
		}
		b.WriteString(`</nav><p><a href="/">Home</a></p></body></html>`)
		fmt.Fprint(w, b.String())
		return true
	}
	count, _ := crawlSite(t, func(w http.ResponseWriter, r *http.Request) {
		var n int
		q := r.URL.Query()
		page := 1
		if v := q.Get(pageParam); v != "" && !sscan(v, "%d", &page) {
			http.NotFound(w, r)
			return
		}
		switch {
		case r.URL.Path == "/":
			fmt.Fprintf(w, `<html><body><p>%s</p>`, prose(1, 40))
			for s := range sections {
				fmt.Fprintf(w, `<a href="/c/%s/">%s</a> `, secName(s), secName(s))
			}
			fmt.Fprint(w, `<a href="/articles/">All articles</a></body></html>`)
		case strings.HasPrefix(r.URL.Path, "/c/"):
			sec := strings.Trim(strings.TrimPrefix(r.URL.Path, "/c/"), "/")
			var items []int
			for i := articles - 1; i >= 0; i-- {
				if in(i, 0, sec) {
					items = append(items, i)
				}
			}
			pageURL := func(k int) string { return fmt.Sprintf("/c/%s/?%s=%d", sec, pageParam, k) }
			if only {
				items, pageURL = items[:min(len(items), onPage)], nil
			}
			if len(items) == 0 || len(q) > 1 || len(q) == 1 && !q.Has(pageParam) || !list(w, sec, items, page, pageURL) {
				http.NotFound(w, r)
			}
		case r.URL.Path == "/articles/":
			filter, v := -1, ""
			for p, name := range params {
				if q.Has(name) {
					if filter >= 0 {
						http.NotFound(w, r)
						return
					}
					filter, v = p, q.Get(name)
				}
			}
			var items []int
			for i := articles - 1; i >= 0; i-- {
				if filter < 0 || in(i, filter, v) {
					items = append(items, i)
				}
			}
			pageURL := func(k int) string { return fmt.Sprintf("/articles/?%s=%d", pageParam, k) }
			if filter >= 0 {
				pageURL = func(k int) string { return fmt.Sprintf("/articles/?%s=%s&%s=%d", params[filter], v, pageParam, k) }
			}
			if filter < 0 && page == 1 {
				// The list of everything shows its filters.
				var b strings.Builder
				for p := range params {
					for _, v := range values(p) {
						fmt.Fprintf(&b, `<a href="/articles/?%s=%s">%s</a> `, params[p], v, v)
					}
				}
				fmt.Fprintf(w, "<aside>%s</aside>", b.String())
			}
			if len(items) == 0 || !list(w, "Articles", items, page, pageURL) {
				http.NotFound(w, r)
			}
		case sscan(r.URL.Path, "/a/%d", &n) && n < articles && r.URL.RawQuery == "":
			fmt.Fprintf(w, `<html><body><h1>%s</h1><p>%s</p><p>`, prose(n, 6), prose(10000+n, 150))
			fmt.Fprintf(w, `<a href="/c/%s/">%s</a></p></body></html>`, secName(n%sections), secName(n%sections))
		default:
			http.NotFound(w, r)
		}
	})
	for n := range articles {
		if count[fmt.Sprintf("/a/%d", n)] == 0 {
			t.Errorf("/a/%d never fetched", n)
		}
	}
	for s := range sections {
		pages := 0
		for i := 0; i < articles; i++ {
			if in(i, 0, secName(s)) {
				pages++
			}
		}
		pages = (pages + onPage - 1) / onPage
		if only {
			pages = 1
		}
		for k := 2; k <= pages; k++ {
			if u := fmt.Sprintf("/c/%s/?%s=%d", secName(s), pageParam, k); count[u] == 0 {
				t.Errorf("%s never fetched", u)
			}
		}
	}
	later, fetched := 0, 0
	for p := range params {
		for _, v := range values(p) {
			items := 0
			for i := range articles {
				if in(i, p, v) {
					items++
				}
			}
			for k := 2; (k-1)*onPage < items; k++ {
				later++
				if count[fmt.Sprintf("/articles/?%s=%s&%s=%d", params[p], v, pageParam, k)] > 0 {
					fetched++
				}
			}
		}
	}
	t.Logf("%d of the filters' %d later pages fetched", fetched, later)
	if !only && 2*fetched > later {
		t.Errorf("%d of the filters' %d later pages fetched, want at most half: they list again what the sections' lists led to", fetched, later)
	}
}
