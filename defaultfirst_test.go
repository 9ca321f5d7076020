package gentlecrawl_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestDefaultWrittenFirst: a forum whose members' pages link their topics
// with the first page's default written out (?t=N&start=0), whose search
// links others with a word highlighted (?t=N&hl=word: the same text), and
// whose board, crawled after them, links every topic by its own URL
// (?t=N). Every topic is fetched by its own URL once, but those fetched
// first with the default written out: once one pair has shown the default
// to change nothing, they are not requested again. A highlighted topic is
// a view: its own URL is fetched.
func TestDefaultWrittenFirst(t *testing.T) {
	for _, shape := range []struct {
		param, first  string
		topics, every int
	}{
		{"start", "0", 90, 6},
		{"page", "1", 120, 4},
	} {
		t.Run(shape.param, func(t *testing.T) {
			testDefaultWrittenFirst(t, shape.param, shape.first, shape.topics, shape.every)
		})
	}
}

func testDefaultWrittenFirst(t *testing.T, param, first string, topics, every int) {
	count, _ := crawlSite(t, func(w http.ResponseWriter, r *http.Request) {
		var n int
		q := r.URL.Query()
		switch {
		case r.URL.Path == "/":
			fmt.Fprint(w, "<html><body>")
			for i := range topics / every {
				fmt.Fprintf(w, `<a href="/member/%d">member %d</a> `, i, i)
			}
			fmt.Fprint(w, `<a href="/search?q=word">search</a> <a href="/board">board</a></body></html>`)
		case r.URL.Path == "/search" && q.Get("q") == "word":
			fmt.Fprintf(w, `<html><body><p>%s</p>`, prose(2*topics, 20))
			for i := 1; i < topics; i += every {
				fmt.Fprintf(w, `<a href="/topic?t=%d&hl=word">topic %d</a> `, i, i)
			}
			fmt.Fprint(w, "</body></html>")
		case sscan(r.URL.Path, "/member/%d", &n) && n < topics/every:
			fmt.Fprintf(w, `<html><body><p>%s</p><a href="/topic?t=%d&%s=%s">my topic</a></body></html>`,
				prose(topics+n, 40), n*every, param, first)
		case r.URL.Path == "/board":
			fmt.Fprint(w, "<html><body>")
			for i := range topics {
				fmt.Fprintf(w, `<a href="/topic?t=%d">topic %d</a> `, i, i)
			}
			fmt.Fprint(w, "</body></html>")
		case r.URL.Path == "/topic" && sscan(q.Get("t"), "%d", &n) && n < topics &&
			(len(q) == 1 || len(q) == 2 && (q.Get(param) == first || q.Get("hl") == "word")):
			fmt.Fprintf(w, `<html><body><p>%s</p><a href="/board">board</a></body></html>`, prose(n, 60))
		default:
			http.NotFound(w, r)
		}
	})
	again := 0
	for i := range topics {
		p := fmt.Sprintf("/topic?t=%d", i)
		if i%every == 0 {
			if w := p + "&" + param + "=" + first; count[w] != 1 {
				t.Errorf("%s requested %d times, want once", w, count[w])
			}
			again += count[p]
		} else if count[p] != 1 {
			t.Errorf("%s requested %d times, want once", p, count[p])
		}
	}
	// One pair to learn, and what was leased before its answer came back.
	t.Logf("%d of %d topics fetched again", again, topics/every)
	if again > 4 {
		t.Errorf("%d of %d topics fetched first with %s=%s requested again by their own URL, want at most 4", again, topics/every, param, first)
	}
}

// prose returns words words of text of their own for page n: words
// spelled from numbers that no other page's text draws.
func prose(n, words int) string {
	var b strings.Builder
	for i := range words {
		b.WriteString(spell((n*words+i)*7919%1000003 + 1000))
		b.WriteByte(' ')
	}
	return b.String()
}
