package urlspace_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
)

// recentWiki is a small wiki written here, not by gensite: namespaces of
// pages, each page with its history, its source and diffs between its
// revisions, and a home page whose "recent changes" link histories and
// diffs across the namespaces — views linked from another section,
// before the host has shown them as views.
type recentWiki struct {
	ns     []string
	recent int                 // pages of each namespace in the recent changes
	pages  map[string][]string // namespace → page names
	text   map[string]string   // "/ns/page" → its text
	revs   map[string][]int    // "/ns/page" → its revision ids, newest first

	mu   sync.Mutex
	reqs []string
}

func newRecentWiki(seed uint64) *recentWiki {
	r := rand.New(rand.NewPCG(seed, 7))
	syll := []string{"ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "qu", "fa"}
	word := func() string {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteString(syll[r.IntN(len(syll))])
		}
		return b.String()
	}
	w := &recentWiki{recent: 3 + r.IntN(3), pages: map[string][]string{}, text: map[string]string{}, revs: map[string][]int{}}
	id := 80000
	for range 4 + r.IntN(4) {
		ns := strings.ToUpper(word()[:1]) + word()
		w.ns = append(w.ns, ns)
		for range 8 + r.IntN(5) {
			name := strings.ToUpper(word()[:1]) + word() + "_" + word()
			w.pages[ns] = append(w.pages[ns], name)
			var txt []string
			for range 120 {
				txt = append(txt, word())
			}
			key := "/" + ns + "/" + name
			w.text[key] = strings.Join(txt, " ")
			for range 3 + r.IntN(4) {
				id += 1 + r.IntN(40)
				w.revs[key] = append([]int{id}, w.revs[key]...)
			}
		}
	}
	return w
}

func (w *recentWiki) ServeHTTP(rw http.ResponseWriter, req *http.Request) {
	w.mu.Lock()
	w.reqs = append(w.reqs, req.URL.RequestURI())
	w.mu.Unlock()
	var b strings.Builder
	nav := `<nav><a href="/">Home</a>`
	for _, ns := range w.ns {
		nav += `<a href="/` + ns + `/">` + ns + `</a>`
	}
	nav += "</nav>"
	page := func(title, body string) {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(rw, "<!doctype html><html><head><title>%s</title></head><body>%s<main><h1>%s</h1>%s</main><footer>A wiki for tests, its pages free to copy.</footer></body></html>", title, nav, title, body)
	}
	segs := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case req.URL.Path == "/robots.txt":
		http.NotFound(rw, req)
	case req.URL.Path == "/":
		b.WriteString("<p>Welcome to the wiki.</p><h2>Recent changes</h2><ul>")
		for i := range w.recent {
			for _, ns := range w.ns {
				name := w.pages[ns][i]
				key := "/" + ns + "/" + name
				rv := w.revs[key]
				fmt.Fprintf(&b, `<li><a href="%s">%s</a> (<a href="%s/history">history</a> | <a href="%s/diff/%d/%d">diff</a>)</li>`, key, name, key, key, rv[1], rv[0])
			}
		}
		b.WriteString("</ul>")
		page("Home", b.String())
	case len(segs) == 1 && w.pages[segs[0]] != nil:
		for _, name := range w.pages[segs[0]] {
			fmt.Fprintf(&b, `<li><a href="/%s/%s">%s</a></li>`, segs[0], name, name)
		}
		page(segs[0], "<ul>"+b.String()+"</ul>")
	case len(segs) >= 2 && w.text["/"+segs[0]+"/"+segs[1]] != "":
		key := "/" + segs[0] + "/" + segs[1]
		rv := w.revs[key]
		switch view := strings.Join(segs[2:], "/"); {
		case view == "":
			fmt.Fprintf(&b, `<p>%s</p><p><a href="%s/history">History</a> <a href="%s/source">Source</a></p>`, w.text[key], key, key)
			names := w.pages[segs[0]]
			for i, name := range names {
				if name == segs[1] {
					fmt.Fprintf(&b, `<p>See <a href="/%s/%s">%s</a>.</p>`, segs[0], names[(i+1)%len(names)], names[(i+1)%len(names)])
				}
			}
			page(segs[1], b.String())
		case view == "history":
			b.WriteString("<table>")
			for i, id := range rv {
				fmt.Fprintf(&b, `<tr><td><a href="%s/version/%d">revision %d</a></td><td>edited by a reader</td>`, key, id, id)
				if i+1 < len(rv) {
					fmt.Fprintf(&b, `<td><a href="%s/diff/%d/%d">diff</a></td>`, key, rv[i+1], id)
				}
				b.WriteString("</tr>")
			}
			page("History of "+segs[1], b.String()+"</table>")
		case view == "source":
			page("Source of "+segs[1], "<pre>"+w.text[key]+"</pre>")
		case strings.HasPrefix(view, "version/"), strings.HasPrefix(view, "diff/"):
			words := strings.Fields(w.text[key])
			page(segs[1]+": "+view, "<p>"+strings.Join(words[:40], " ")+"</p><p>"+strings.Join(words[60:100], " ")+"</p>")
		default:
			http.NotFound(rw, req)
		}
	default:
		http.NotFound(rw, req)
	}
}

// TestRecentChangesViews: the histories and diffs a wiki's home page
// links in its recent changes are judged, when their turn comes, as the
// views the host has shown them to be by then, sharing the views' budget
// with those linked from within their namespaces; the wiki's real pages
// are all fetched.
func TestRecentChangesViews(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		w := newRecentWiki(seed)
		crawlSite(t, w, 2)
		w.mu.Lock()
		reqs := slices.Clone(w.reqs)
		w.mu.Unlock()
		fetched := map[string]bool{}
		views := 0
		for _, r := range reqs {
			fetched[r] = true
			if strings.Count(r, "/") > 2 {
				views++
			}
		}
		missed := 0
		for ns, names := range w.pages {
			for _, name := range names {
				if !fetched["/"+ns+"/"+name] {
					missed++
				}
			}
		}
		linked := 2 * w.recent * len(w.ns) // the recent changes' histories and diffs
		t.Logf("seed %d: %d requests, %d of them views; %d real pages missed", seed, len(reqs), views, missed)
		if missed > 0 {
			t.Errorf("seed %d: %d real pages never fetched", seed, missed)
		}
		if views >= linked {
			t.Errorf("seed %d: %d views fetched, as many as the home page's recent changes link (%d) or more", seed, views, linked)
		}
	}
}
