package gentlecrawl_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestMemberProfiles: a forum whose members' profiles are short pages in
// a wide chrome — a name, a join date, a post count, a link to the
// member's posts and the few topics the member started, every one of
// them listed on a board already — reached from the topics their
// members wrote in, beside each topic's reply form (a form around the
// topic's name). The profiles are near-copies of each other by their
// words and yield nothing new, as the forms do; but each lists things of
// its own, and all of them are fetched, while the forms stop after a
// handful.
//
// The shapes vary the profiles' URLs, how many topics their members
// started (a few members none), the chrome's width, and whether a form
// names its topic by a link.
func TestMemberProfiles(t *testing.T) {
	for _, shape := range []struct {
		name       string
		profile    string // the profile's URL, from the member's number and name
		members    int
		started    func(m int) int // topics member m started, at most five
		chrome     int             // the sidebar's popular words
		formLinked bool            // the reply form links its topic
	}{
		{"slug", "/u/%d-%s/", 90, func(m int) int { return []int{1, 2, 2, 3, 1, 5, 2}[m%7] }, 120, true},
		{"query", "/memberlist.php?mode=viewprofile&u=%d", 72, func(m int) int { return 1 + m%3 }, 150, true},
		{"path", "/profile/%d/%s", 100, func(m int) int { return []int{1, 1, 4, 0, 2, 1, 1, 3, 1, 1, 2}[m%11] }, 100, false},
	} {
		t.Run(shape.name, func(t *testing.T) {
			testMemberProfiles(t, shape.profile, shape.members, shape.started, shape.chrome, shape.formLinked)
		})
	}
}

func testMemberProfiles(t *testing.T, profileForm string, members int, started func(int) int, chromeWords int, formLinked bool) {
	const boards, onPage = 6, 15
	// Topics by their starters: member m starts topics first[m] ...
	// first[m]+started(m)-1; the topics' other posters are members of
	// their own.
	var starter []int
	for m := range members {
		for range started(m) {
			starter = append(starter, m)
		}
	}
	topics := len(starter)
	name := func(m int) string { return spell(m*7717%100003 + 500) }
	profile := func(m int) string {
		if strings.Contains(profileForm, "%s") {
			return fmt.Sprintf(profileForm, m, name(m))
		}
		return fmt.Sprintf(profileForm, m)
	}
	title := func(n int) string { return strings.TrimSpace(prose(9000+n, 4+n%4)) }
	posters := func(n int) []int { return []int{starter[n], (n*13 + 5) % members, (n*29 + 11) % members} }
	chrome := func(w http.ResponseWriter, body string) {
		fmt.Fprint(w, `<html><body><header><a href="/">Board index</a> <a href="/faq">FAQ</a></header><aside><h3>Recent topics</h3><ul>`)
		for n := topics - 1; n >= topics-5; n-- {
			fmt.Fprintf(w, `<li><a href="/topic/%d">%s</a></li>`, n, title(n))
		}
		fmt.Fprint(w, `</ul><h3>Forums</h3><ul>`)
		for b := range boards {
			fmt.Fprintf(w, `<li><a href="/board/%d">%s</a></li>`, b, prose(700+b, 3))
		}
		fmt.Fprintf(w, `</ul><h3>Popular</h3><p>%s</p></aside><main>%s</main><footer>%s</footer></body></html>`, prose(800, chromeWords), body, prose(900, 12))
	}
	count, _ := crawlSite(t, func(w http.ResponseWriter, r *http.Request) {
		var n, m, p int
		switch {
		case r.URL.Path == "/":
			var b strings.Builder
			for i := range boards {
				fmt.Fprintf(&b, `<h2><a href="/board/%d">board %d</a></h2><p>%s</p>`, i, i, prose(600+i, 20))
			}
			chrome(w, b.String())
		case r.URL.Path == "/faq":
			chrome(w, "<p>"+prose(1, 120)+"</p>")
		case sscan(r.URL.Path, "/board/%d", &n) && n < boards:
			var mine []int
			for i := topics - 1; i >= 0; i-- {
				if i%boards == n {
					mine = append(mine, i)
				}
			}
			p = 1
			if v := r.URL.Query().Get("page"); v != "" && !sscan(v, "%d", &p) || p < 1 || (p-1)*onPage >= len(mine) {
				http.NotFound(w, r)
				return
			}
			var b strings.Builder
			for _, i := range mine[(p-1)*onPage : min(p*onPage, len(mine))] {
				fmt.Fprintf(&b, `<li><a href="/topic/%d">%s</a> by %s</li>`, i, title(i), name(starter[i]))
			}
			for k := 2; (k-1)*onPage < len(mine); k++ {
				fmt.Fprintf(&b, ` <a href="/board/%d?page=%d">%d</a>`, n, k, k)
			}
			chrome(w, "<ul>"+b.String()+"</ul>")
		case sscan(r.URL.Path, "/topic/%d", &n) && n < topics && r.URL.RawQuery == "":
			var b strings.Builder
			fmt.Fprintf(&b, `<h1>%s</h1><a href="/posting?mode=reply&t=%d">Post a reply</a>`, title(n), n)
			for k, a := range posters(n) {
				fmt.Fprintf(&b, `<div class="post"><a href="%s">%s</a> <a href="/search?author=%d">posts</a><p>%s</p></div>`, profile(a), name(a), a, prose(10*n+k, 60))
			}
			chrome(w, b.String())
		case r.URL.Path == "/posting" && r.URL.Query().Get("mode") == "reply" && sscan(r.URL.Query().Get("t"), "%d", &n) && n < topics && len(r.URL.Query()) == 2:
			topic := title(n)
			if formLinked {
				topic = fmt.Sprintf(`<a href="/topic/%d">%s</a>`, n, topic)
			}
			chrome(w, fmt.Sprintf(`<h1>Post a reply</h1><p>You need to log in before you can reply to %s.</p><form method="post"><textarea name="message"></textarea></form>`, topic))
		case r.URL.Path == "/search" && sscan(r.URL.Query().Get("author"), "%d", &m) && m < members:
			var b strings.Builder
			for i := range topics {
				if posters(i)[1] == m {
					fmt.Fprintf(&b, `<li><a href="/topic/%d">%s</a></li>`, i, title(i))
				}
			}
			chrome(w, "<h1>Search</h1><ul>"+b.String()+"</ul>")
		default:
			if m, ok := profileOf(r.URL.RequestURI(), members, profile); ok {
				var b strings.Builder
				fmt.Fprintf(&b, `<h1>%s</h1><dl><dt>Joined</dt><dd>%d %s 20%02d</dd><dt>Total posts</dt><dd>%d <a href="/search?author=%d">Search user’s posts</a></dd></dl>`,
					name(m), 1+m%28, []string{"Jan", "Mar", "Jun", "Sep", "Nov"}[m%5], 10+m%14, 3+m*37%400, m)
				if started(m) > 0 {
					b.WriteString("<h2>Topics started</h2><ul>")
					for i, s := range starter {
						if s == m {
							fmt.Fprintf(&b, `<li><a href="/topic/%d">%s</a></li>`, i, title(i))
						}
					}
					b.WriteString("</ul>")
				}
				chrome(w, b.String())
				return
			}
			http.NotFound(w, r)
		}
	})
	lost, forms := 0, 0
	for m := range members {
		linked := m == 0 // linked from a topic, as a poster
		for n := range topics {
			for _, a := range posters(n) {
				linked = linked || a == m
			}
		}
		if linked && count[profile(m)] == 0 {
			lost++
			t.Errorf("%s never fetched (%d topics started)", profile(m), started(m))
		}
	}
	for n := range topics {
		if count[fmt.Sprintf("/topic/%d", n)] == 0 {
			t.Errorf("/topic/%d never fetched", n)
		}
		forms += count[fmt.Sprintf("/posting?mode=reply&t=%d", n)]
	}
	t.Logf("%d topics, %d members: %d profiles lost, %d reply forms fetched", topics, members, lost, forms)
	if forms > topics/4 {
		t.Errorf("%d of %d reply forms fetched, want at most %d", forms, topics, topics/4)
	}
}

// profileOf returns the member whose profile is at uri.
func profileOf(uri string, members int, profile func(int) string) (int, bool) {
	for m := range members {
		if profile(m) == uri {
			return m, true
		}
	}
	return 0, false
}
