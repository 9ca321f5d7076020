package simweb

import (
	"bytes"
	"fmt"
	"html"
	"math/rand/v2"
	"strings"
)

// outsideURL is linked from some pages: an http URL of a host that is not
// part of the web, which a crawler scoped to the web must not fetch.
const outsideURL = "http://outside.example/"

// target is the destination of a generated link.
type target struct {
	host int    // host index, or -1 for outsideURL
	path string // escaped path and query
}

// renderer writes one HTML page and records the ground truth of its links.
type renderer struct {
	web     *Web
	host    *Host
	rng     *rand.Rand
	baseDir string // directory that relative references resolve against
	buf     bytes.Buffer
	links   []string
	seen    map[string]bool

	where    string // names the page for its session ids (Traps.SessionIDs)
	sessions int    // session ids written
}

// renderPage returns the body of page i of h and its links (see
// Resource.Links). The same page always renders to the same bytes.
func (h *Host) renderPage(i int) ([]byte, []string) {
	sk := h.skeleton()
	page := &sk.res[i]
	r := &renderer{
		web:     h.web,
		host:    h,
		rng:     rand.New(rand.NewPCG(page.seed, 0x9a9e)),
		baseDir: dirOf(page.path),
		seen:    make(map[string]bool),
		where:   "page/" + page.path,
	}
	r.buf.Grow(maxPageSize)

	title := r.title(i)
	if i == 0 {
		title = h.Name + " home"
	}
	base := ""
	if i > 0 && r.rng.IntN(8) == 0 {
		base = r.baseHref()
	}
	targets := r.targets(i)
	want := minPageSize + r.rng.IntN(maxPageSize-minPageSize-2048)

	fmt.Fprintf(&r.buf, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n", title)
	if base != "" {
		fmt.Fprintf(&r.buf, "<base href=\"%s\">\n", html.EscapeString(base))
	}
	r.buf.WriteString("</head>\n<body>\n<header><nav>")
	// Navigation: home, then the next page of the chain, so that every
	// page is reachable from "/".
	r.link(target{h.index, "/"}, "Home")
	if i+1 < sk.normal {
		r.buf.WriteString(" | ")
		r.link(target{h.index, sk.res[i+1].path}, "Next: "+r.words(2))
	}
	r.trapNav(i)
	fmt.Fprintf(&r.buf, "</nav></header>\n<main>\n<h1 id=\"top\">%s</h1>\n", title)

	// Body links, a few per paragraph.
	for len(targets) > 0 {
		n := min(len(targets), 1+r.rng.IntN(4))
		r.buf.WriteString("<p>")
		for _, t := range targets[:n] {
			r.text(3 + r.rng.IntN(12))
			r.buf.WriteByte(' ')
			r.link(t, r.words(1+r.rng.IntN(3)))
			r.buf.WriteByte(' ')
		}
		r.text(5 + r.rng.IntN(20))
		r.buf.WriteString("</p>\n")
		targets = targets[n:]
	}
	if r.rng.IntN(6) == 0 {
		r.imageMap(i)
	}
	if r.rng.IntN(5) == 0 {
		// Markup that looks like links but is not: a correct extractor
		// ignores comments and script text.
		fmt.Fprintf(&r.buf, "<!-- <a href=\"/old/%d.html\">old version</a> -->\n", i)
		fmt.Fprintf(&r.buf, "<script>var tpl = '<a href=\"/tpl/%d.html\">x</a>';</script>\n", i)
	}
	for r.buf.Len() < want {
		fmt.Fprintf(&r.buf, "<h2>%s</h2>\n<p>", r.title(i))
		r.text(40 + r.rng.IntN(80))
		r.buf.WriteString("</p>\n")
	}
	r.buf.WriteString("</main>\n<footer><p>")
	// Links that are not pages to crawl.
	if r.rng.IntN(2) == 0 {
		fmt.Fprintf(&r.buf, "<a href=\"mailto:webmaster@%s\">Write to us</a> ", h.Name)
	}
	if r.rng.IntN(3) == 0 {
		r.buf.WriteString("<a href=\"javascript:void(0)\">Print</a> ")
	}
	if r.rng.IntN(3) == 0 {
		r.buf.WriteString("<a href=\"tel:+15550100\">Call</a> ")
	}
	if r.rng.IntN(4) == 0 {
		r.link(target{-1, "/"}, "Elsewhere")
		r.buf.WriteByte(' ')
	}
	if base == "" && r.rng.IntN(2) == 0 && h.opts.Traps.SessionIDs == "" {
		// A fragment-only reference resolves to the page itself (with
		// whatever session id the request had: hence none with them).
		r.buf.WriteString("<a href=\"#top\">Back to top</a> ")
		r.record(h.URL(sk.res[i].path))
	}
	r.buf.WriteString("<a>no href</a></p></footer>\n</body>\n</html>\n")
	return r.buf.Bytes(), r.links
}

// targets chooses the body links of page i, in order of appearance.
func (r *renderer) targets(i int) []target {
	h, sk := r.host, r.host.skeleton()
	var ts []target
	self := func(j int) target { return target{h.index, sk.res[j].path} }
	files := len(sk.res) - sk.pages
	if i < sk.normal {
		// Pages under robots-sensitive paths and files are each linked
		// from one fixed page of the chain, so all are reachable from "/".
		for s := sk.normal; s < sk.pages; s++ {
			if (s*5+1)%sk.normal == i {
				ts = append(ts, self(s))
			}
		}
		for j := sk.pages; j < len(sk.res); j++ {
			if (j*3+1)%sk.normal == i {
				ts = append(ts, self(j))
			}
		}
	}
	for range 5 + r.rng.IntN(21) {
		ts = append(ts, self(r.rng.IntN(sk.pages)))
	}
	if files > 0 {
		for range r.rng.IntN(4) {
			ts = append(ts, self(sk.pages+r.rng.IntN(files)))
		}
	}
	if n := len(r.web.hosts); n > 1 {
		for range r.rng.IntN(4) {
			o := r.rng.IntN(n - 1)
			if o >= h.index {
				o++
			}
			osk := r.web.hosts[o].skeleton()
			t := target{o, osk.res[r.rng.IntN(osk.pages)].path}
			if r.web.hosts[o].opts.Shop != nil {
				t.path = "/" // a shop's pages are not its skeleton's
			}
			ts = append(ts, t)
		}
	}
	for range r.rng.IntN(4) { // duplicates, written in another form
		ts = append(ts, ts[r.rng.IntN(len(ts))])
	}
	r.rng.Shuffle(len(ts), func(a, b int) { ts[a], ts[b] = ts[b], ts[a] })
	return ts
}

// baseHref picks a <base href> for the page and sets r.baseDir to match.
func (r *renderer) baseHref() string {
	dirs := []string{"/articles/", "/blog/", "/products/", "/docs/", "/"}
	dir := dirs[r.rng.IntN(len(dirs))]
	r.baseDir = dir
	switch r.rng.IntN(4) {
	case 0:
		return dir // relative to the document URL
	case 1:
		return "HTTP://" + strings.ToUpper(r.host.Name) + dir
	case 2:
		return dir + "index.html" // the file part does not count
	default:
		return r.host.URL(dir)
	}
}

// link writes an <a> to t in a randomly chosen form and records it.
func (r *renderer) link(t target, text string) {
	fmt.Fprintf(&r.buf, "<a href=\"%s\">%s</a>", html.EscapeString(r.href(t)), text)
}

// href returns a reference to t that resolves, against the page's base,
// to t's canonical URL, which it records.
func (r *renderer) href(t target) string {
	if t.host < 0 {
		r.record(outsideURL)
		return outsideURL
	}
	name := r.web.hosts[t.host].Name
	if t.host == r.host.index {
		t.path = r.withSession(t.path)
	}
	r.record("http://" + name + t.path)
	var ref string
	choice := r.rng.IntN(10)
	if t.host != r.host.index {
		choice %= 4 // only absolute forms reach another host
	}
	switch choice {
	case 0:
		ref = "http://" + name + t.path
	case 1:
		ref = "HTTP://" + strings.ToUpper(name) + t.path
	case 2:
		ref = "http://" + name + ":80" + t.path
	case 3:
		ref = "//" + name + t.path
	case 4, 5:
		ref = t.path
	case 6:
		ref = "/x/.." + t.path // dot segments
	default:
		ref = relativeRef(r.baseDir, t.path)
	}
	if r.rng.IntN(4) == 0 {
		ref += "#" + words[r.rng.IntN(len(words))]
	}
	return ref
}

// record adds a canonical URL to the page's links unless already there.
func (r *renderer) record(u string) {
	if !r.seen[u] {
		r.seen[u] = true
		r.links = append(r.links, u)
	}
}

// imageMap writes an image map whose <area href> elements are links.
func (r *renderer) imageMap(i int) {
	sk := r.host.skeleton()
	src := ""
	for j := sk.pages; j < len(sk.res); j++ {
		if k := sk.res[j].kind; k == kindJPEG || k == kindPNG {
			src = fmt.Sprintf(" src=\"%s\"", sk.res[j].path)
			break
		}
	}
	fmt.Fprintf(&r.buf, "<img%s usemap=\"#map%d\" width=\"300\" height=\"100\" alt=\"map\">\n<map name=\"map%d\">\n", src, i, i)
	for a := range 1 + r.rng.IntN(3) {
		t := target{r.host.index, sk.res[r.rng.IntN(sk.pages)].path}
		fmt.Fprintf(&r.buf, "<area shape=\"rect\" coords=\"%d,0,%d,100\" href=\"%s\" alt=\"%s\">\n",
			a*100, a*100+99, html.EscapeString(r.href(t)), r.words(1))
	}
	r.buf.WriteString("</map>\n")
}

func (r *renderer) title(i int) string {
	w := r.words(2 + r.rng.IntN(5))
	return strings.ToUpper(w[:1]) + w[1:] + fmt.Sprintf(" %d", i)
}

func (r *renderer) words(n int) string {
	var b strings.Builder
	for k := range n {
		if k > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[r.rng.IntN(len(words))])
	}
	return b.String()
}

// text writes n words of filler with occasional punctuation.
func (r *renderer) text(n int) {
	for k := range n {
		if k > 0 {
			if r.rng.IntN(12) == 0 {
				r.buf.WriteString(". ")
			} else {
				r.buf.WriteByte(' ')
			}
		}
		r.buf.WriteString(words[r.rng.IntN(len(words))])
	}
}

// dirOf returns the directory part of an escaped path with optional query:
// everything up to and including the last "/" before the query.
func dirOf(p string) string {
	if q := strings.IndexByte(p, '?'); q >= 0 {
		p = p[:q]
	}
	return p[:strings.LastIndexByte(p, '/')+1]
}

// relativeRef returns a relative reference that resolves against any URL
// in directory baseDir (which ends in "/") to the absolute path p (which
// may carry a query), per RFC 3986 §5.2.
func relativeRef(baseDir, p string) string {
	query := ""
	if q := strings.IndexByte(p, '?'); q >= 0 {
		p, query = p[:q], p[q:]
	}
	dir, file := dirOf(p), p[strings.LastIndexByte(p, '/')+1:]
	bs := strings.Split(strings.Trim(baseDir, "/"), "/")
	ts := strings.Split(strings.Trim(dir, "/"), "/")
	if baseDir == "/" {
		bs = nil
	}
	if dir == "/" {
		ts = nil
	}
	common := 0
	for common < len(bs) && common < len(ts) && bs[common] == ts[common] {
		common++
	}
	var b strings.Builder
	for range len(bs) - common {
		b.WriteString("../")
	}
	if b.Len() == 0 {
		b.WriteString("./")
	}
	for _, s := range ts[common:] {
		b.WriteString(s)
		b.WriteByte('/')
	}
	b.WriteString(file)
	b.WriteString(query)
	ref := b.String()
	// "./x" and "x" are the same reference; drop the "./" sometimes, but
	// only where the result could not be mistaken for a scheme.
	if strings.HasPrefix(ref, "./") && len(ref) > 2 && ref[2] != '?' && !strings.Contains(strings.SplitN(ref[2:], "/", 2)[0], ":") && len(file)%2 == 0 {
		ref = ref[2:]
	}
	return ref
}
