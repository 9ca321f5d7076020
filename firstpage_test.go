package gentlecrawl_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestFirstPageNamed: a forum whose board links every topic with its
// first page named in the path (/t/N/page/1/), which names the topic
// itself (/t/N/) as its canonical, or links it: every topic and later
// page is fetched, and once three first pages named have shown
// themselves copies, the others stand for their topics and are not
// requested (with the canonical, the topic is otherwise linked only from
// its later pages).
func TestFirstPageNamed(t *testing.T) {
	for _, hint := range []string{"canonical", "link"} {
		t.Run(hint, func(t *testing.T) { testFirstPageNamed(t, hint) })
	}
}

func testFirstPageNamed(t *testing.T, hint string) {
	const topics = 40
	topic := func(w http.ResponseWriter, n, page int) {
		head, up := "", ""
		if hint == "canonical" {
			head = fmt.Sprintf(`<link rel="canonical" href="/t/%d/%s">`, n, map[bool]string{true: "", false: fmt.Sprintf("page/%d/", page)}[page == 1])
		} else {
			up = fmt.Sprintf(`<a href="/t/%d/">topic %d</a>`, n, n)
		}
		fmt.Fprintf(w, `<html><head>%s</head><body>%s<p>%s</p>`, head, up,
			strings.Repeat(fmt.Sprintf("post%dx%d says something of its own ", page, n), 12))
		fmt.Fprintf(w, `<a href="/u/%d">poster</a> <a href="/t/%d/page/2/">2</a> <a href="/t/%d/page/1/">1</a> <a href="/">board</a></body></html>`, 2*n+page, n, n)
	}
	count, _ := crawlSite(t, func(w http.ResponseWriter, r *http.Request) {
		var n, page int
		switch {
		case r.URL.Path == "/":
			fmt.Fprint(w, "<html><body>")
			for i := range topics {
				fmt.Fprintf(w, `<a href="/t/%d/page/1/">topic %d</a> `, i, i)
			}
			fmt.Fprint(w, "</body></html>")
		case sscan(r.URL.Path, "/t/%d/page/%d/", &n, &page) && page >= 1 && page <= 2 && n < topics:
			topic(w, n, page)
		case sscan(r.URL.Path, "/t/%d/", &n) && n < topics:
			topic(w, n, 1)
		case sscan(r.URL.Path, "/u/%d", &n):
			fmt.Fprintf(w, "<html><body><p>%s</p></body></html>", strings.Repeat(fmt.Sprintf("member%d writes ", n), 20))
		default:
			http.NotFound(w, r)
		}
	})
	named := 0
	for i := range topics {
		for _, p := range []string{fmt.Sprintf("/t/%d/", i), fmt.Sprintf("/t/%d/page/2/", i)} {
			if count[p] != 1 {
				t.Errorf("%s requested %d times, want once", p, count[p])
			}
		}
		named += count[fmt.Sprintf("/t/%d/page/1/", i)]
	}
	// Three to learn, and what was leased before the third's answer
	// came back.
	if named > 6 {
		t.Errorf("%d of %d first pages named requested, want at most 6", named, topics)
	}
}
