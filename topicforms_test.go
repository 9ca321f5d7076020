package gentlecrawl_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
)

// TestTopicFirstMetInOtherForms: a forum whose topics are linked in three
// forms besides their own URL (?t=N): by their boards with the board's
// number (?f=B&t=N), by their authors with the first page written out
// (?t=N&page=1), and by a search with a word highlighted (?t=N&hl=word).
// Every topic's page links the topic's own URL and its later pages
// (?t=N&page=K). Whichever form is met first, the others are copies of
// it, and none of them is evidence against the topic's later pages, nor
// against the topic's own URL (a highlighted view does not stand for it):
//
//   - numbered: boards link the numbered form and are crawled before the
//     authors. The authors' first pages written out repeat the boards'
//     forms; counted against their pattern (?page&t), which is also that
//     of the later pages, they spent it, and the later pages went
//     unfetched.
//   - highlighted: a search links many topics highlighted before the
//     boards' later pages list them by their own URL. The own URL, first
//     met on the highlighted page, repeats it; counted as barren links
//     within the section, they spent the family's budget for such links,
//     and topics met highlighted were never fetched by their own URL.
func TestTopicFirstMetInOtherForms(t *testing.T) {
	for _, shape := range []struct {
		name                   string
		page, hl, board        string // the parameters' names
		boardForm, authorForm  bool   // boards link ?f=B&t=N; authors ?t=N&page=1
		search                 bool   // the search links every second topic highlighted
		topics, boards, onPage int
	}{
		{"numbered", "page", "hl", "f", true, true, false, 60, 3, 20},
		{"numbered-offset", "offset", "hl", "forum", true, true, false, 48, 4, 12},
		{"highlighted", "page", "highlight", "f", false, false, true, 72, 3, 6},
		{"highlighted-words", "paged", "words", "b", false, true, true, 64, 4, 5},
	} {
		t.Run(shape.name, func(t *testing.T) {
			testTopicForms(t, shape.page, shape.hl, shape.board, shape.boardForm, shape.authorForm, shape.search, shape.topics, shape.boards, shape.onPage)
		})
	}
}

func testTopicForms(t *testing.T, pageParam, hlParam, boardParam string, boardForm, authorForm, search bool, topics, boards, onPage int) {
	pages := func(n int) int { return 2 + n%3 } // a topic's pages
	first := "1"
	if pageParam == "offset" {
		first = "0"
	}
	pageValue := func(k int) string {
		if pageParam == "offset" {
			return fmt.Sprint((k - 1) * 20)
		}
		return fmt.Sprint(k)
	}
	own := func(n int) string { return fmt.Sprintf("/topic?t=%d", n) }
	later := func(n, k int) string { return fmt.Sprintf("/topic?%s=%s&t=%d", pageParam, pageValue(k), n) }
	count, _ := crawlSite(t, func(w http.ResponseWriter, r *http.Request) {
		var n int
		q := r.URL.Query()
		switch {
		case r.URL.Path == "/":
			fmt.Fprint(w, "<html><body>")
			if search {
				fmt.Fprint(w, `<a href="/search?q=word">search</a> `)
			}
			for b := range boards {
				fmt.Fprintf(w, `<a href="/board?%s=%d">board %d</a> `, boardParam, b, b)
			}
			if authorForm {
				for a := range topics / 4 {
					fmt.Fprintf(w, `<a href="/author/%d">author %d</a> `, a, a)
				}
			}
			fmt.Fprint(w, "</body></html>")
		case r.URL.Path == "/search" && q.Get("q") == "word":
			fmt.Fprintf(w, `<html><body><p>%s</p>`, prose(3*topics, 30))
			for n := 1; n < topics; n += 2 {
				fmt.Fprintf(w, `<a href="/topic?%s=word&t=%d">topic %d</a> `, hlParam, n, n)
			}
			fmt.Fprint(w, "</body></html>")
		case sscan(r.URL.Path, "/author/%d", &n) && n < topics/4:
			fmt.Fprintf(w, `<html><body><p>%s</p>`, prose(4*topics+n, 30))
			for i := 4 * n; i < 4*n+4; i++ {
				fmt.Fprintf(w, `<a href="/topic?%s=%s&t=%d">topic %d</a> `, pageParam, first, i, i)
			}
			fmt.Fprint(w, "</body></html>")
		case r.URL.Path == "/board" && sscan(q.Get(boardParam), "%d", &n) && n < boards:
			// The board's topics, onPage to a page, newest first.
			var mine []int
			for i := topics - 1; i >= 0; i-- {
				if i%boards == n {
					mine = append(mine, i)
				}
			}
			p := 1
			if v := q.Get("p"); v != "" && !sscan(v, "%d", &p) {
				http.NotFound(w, r)
				return
			}
			if p < 1 || (p-1)*onPage >= len(mine) {
				http.NotFound(w, r)
				return
			}
			fmt.Fprint(w, "<html><body>")
			for _, i := range mine[(p-1)*onPage : min(p*onPage, len(mine))] {
				if boardForm {
					fmt.Fprintf(w, `<a href="/topic?%s=%d&t=%d">topic %d</a> `, boardParam, n, i, i)
				} else {
					fmt.Fprintf(w, `<a href="%s">topic %d</a> `, own(i), i)
				}
			}
			for k := 2; (k-1)*onPage < len(mine); k++ {
				fmt.Fprintf(w, `<a href="/board?%s=%d&p=%d">%d</a> `, boardParam, n, k, k)
			}
			fmt.Fprint(w, "</body></html>")
		case r.URL.Path == "/topic" && sscan(q.Get("t"), "%d", &n) && n < topics:
			k, ok := topicPage(q, pageParam, hlParam, boardParam, n%boards, pages(n), pageValue)
			if !ok {
				http.NotFound(w, r)
				return
			}
			fmt.Fprintf(w, `<html><body><p>%s</p><a href="%s">permalink</a> <a href="/board?%s=%d">board</a> `, prose(10*n+k, 200), own(n), boardParam, n%boards)
			for j := 2; j <= pages(n); j++ {
				fmt.Fprintf(w, `<a href="%s">%d</a> `, later(n, j), j)
			}
			fmt.Fprint(w, "</body></html>")
		default:
			http.NotFound(w, r)
		}
	})
	lostLater, lostOwn := 0, 0
	for n := range topics {
		for k := 2; k <= pages(n); k++ {
			if count[later(n, k)] == 0 {
				lostLater++
				t.Errorf("%s never fetched", later(n, k))
			}
		}
		// Its first page by a URL that is no highlighted view: its own,
		// or, when the host links it so, its board's or its first page
		// written out (which stand for the own URL once fetched).
		forms := []string{own(n), fmt.Sprintf("/topic?%s=%s&t=%d", pageParam, first, n)}
		if boardForm {
			forms = append(forms, fmt.Sprintf("/topic?%s=%d&t=%d", boardParam, n%boards, n))
		}
		fetched := false
		for _, f := range forms {
			fetched = fetched || count[f] > 0
		}
		if !fetched {
			lostOwn++
			t.Errorf("topic %d never fetched but highlighted", n)
		}
	}
	t.Logf("%d later pages and %d topics not fetched", lostLater, lostOwn)
}

// topicPage returns which page of a topic (of board b, with pages pages)
// the query asks for: 1 for its first page in any of its forms, and ok
// false for none.
func topicPage(q url.Values, pageParam, hlParam, boardParam string, b, pages int, pageValue func(int) string) (int, bool) {
	for name := range q {
		switch name {
		case "t":
		case hlParam:
			if q.Get(name) != "word" {
				return 0, false
			}
		case boardParam:
			if q.Get(name) != fmt.Sprint(b) {
				return 0, false
			}
		case pageParam:
		default:
			return 0, false
		}
	}
	if !q.Has(pageParam) {
		return 1, true
	}
	for k := 1; k <= pages; k++ {
		if q.Get(pageParam) == pageValue(k) {
			return k, true
		}
	}
	return 0, false
}
