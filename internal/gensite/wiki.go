package gensite

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A wiki. Its real pages are every wiki page (current text), the index of
// all pages, one index per namespace, the home page and the footer pages.
// Traps: each page's history (paginated), every old revision, diffs
// between revisions, and the action views drawn for the seed (source or
// edit, raw text, backlinks, page information).
type wiki struct {
	c       *common
	nss     []ent
	pages   []wpage
	byKey   map[string]int
	users   []string
	red     []string // keys of missing pages that some pages link to
	titleCs bool     // MediaWiki-like capitalised names
	markup  int      // 0: DokuWiki-like source, 1: MediaWiki-like

	query   bool   // /doku.php?id=ns:page (else a path)
	script  string // query mode
	titleP  string
	prefix  string // path mode, ends with "/"
	nsSep   string // path mode: ":" or "/"
	actPath bool   // actions as path suffixes (path mode only)
	actP    string
	revP    string
	rev2P   string
	words   map[int]string // action → its value or path word
	acts    []int          // the action views this wiki has
	histPg  pageStyle
	histPer int
	stamps  bool // revision ids are timestamps

	indexPath string
	nsIdxP    string // "" for indexPath/ns
	boxes     []string
	recent    [][2]int // page, revision: the latest edits, newest first
}

const (
	actView = iota
	actHistory
	actEdit
	actRaw
	actBacklinks
	actInfo
	actRev
	actDiff
)

type wpage struct {
	ns    int
	name  string // as written in URLs
	title string
	links []int // linked pages; negative: -1-k for red link k
	back  []int
	revs  []wrev // oldest first; the last is current
}

type wrev struct {
	id   int
	t    int64
	user int
	sum  string
}

func newWiki(c *common) (*wiki, error) {
	for attempt := 0; attempt < 400; attempt++ {
		w := drawWiki(c, attempt)
		if k := len(w.realPages()); k >= 250 && k <= 700 {
			return w, nil
		}
	}
	return nil, errors.New("gensite: could not draw a wiki of 250–700 real pages")
}

func drawWiki(c *common, attempt int) *wiki {
	c.usedParams = map[string]bool{}
	c.usedPaths = map[string]bool{firstSeg(c.footer[0].path): true}
	r := c.rng("wiki", attempt)
	v := c.v
	w := &wiki{c: c, byKey: map[string]int{}, words: map[int]string{}}
	w.markup = r.intn(2)
	w.titleCs = w.markup == 1 || r.chance(0.2)
	name := func(s string) string {
		if w.titleCs {
			return title(s)
		}
		return s
	}

	// Surface.
	w.query = r.chance(0.4)
	if w.query {
		w.script = pick(r, []string{"/doku.php", "/index.php", "/wiki.php", "/w/index.php"})
		c.usedPaths[firstSeg(w.script)] = true
		w.titleP = c.param(r, "id", "title", "page")
	} else {
		w.prefix = pick(r, []string{"/wiki/", "/", "/w/", "/doc/", "/kb/", "/doku.php/"})
		if w.prefix != "/" {
			c.usedPaths[firstSeg(w.prefix)] = true
		}
		w.nsSep = pick(r, []string{":", "/"})
		w.actPath = r.chance(0.5)
	}
	w.actP = c.param(r, "do", "action", "a", "mode")
	w.revP = c.param(r, "rev", "oldid", "r", "version")
	w.rev2P = c.param(r, "rev2", "diff", "to", "newer")
	if w.actPath {
		w.words[actHistory] = pick(r, []string{"history", "revisions", "log"})
		w.words[actEdit] = pick(r, []string{"edit", "source"})
		w.words[actRaw] = pick(r, []string{"raw", "plain"})
		w.words[actBacklinks] = pick(r, []string{"backlinks", "links-here"})
		w.words[actInfo] = pick(r, []string{"info", "details"})
		w.words[actRev] = pick(r, []string{"rev", "revision", "version"})
		w.words[actDiff] = pick(r, []string{"diff", "compare"})
	} else {
		w.words[actHistory] = pick(r, []string{"revisions", "history", "log"})
		w.words[actEdit] = pick(r, []string{"edit", "source"})
		w.words[actRaw] = pick(r, []string{"raw", "export_raw"})
		w.words[actBacklinks] = pick(r, []string{"backlink", "backlinks", "whatlinkshere"})
		w.words[actInfo] = pick(r, []string{"info", "details"})
		w.words[actDiff] = pick(r, []string{"diff", "compare"})
	}
	w.acts = sample(r, []int{actEdit, actRaw, actBacklinks, actInfo}, r.between(1, 4))
	slices.Sort(w.acts)
	w.histPg = c.drawPageStyle(r, false)
	w.histPer = r.between(5, 10)
	w.stamps = r.chance(0.5)
	w.indexPath = "/" + c.segment(r, "sitemap", "index", "allpages", "pages", "contents")
	if r.chance(0.5) {
		w.nsIdxP = c.param(r, "ns", "idx", "namespace")
	}

	// Namespaces and pages.
	nn := r.between(3, 8)
	for i := 0; i < nn; i++ {
		s := v.name(r)
		w.nss = append(w.nss, ent{slug: name(s), name: title(s)})
		c.usedPaths[name(s)] = true
	}
	np := r.between(200, 500)
	for len(w.pages) < np {
		ns := r.skewed(nn, 1.3)
		if len(w.pages) < nn {
			ns = len(w.pages)
		}
		k := r.between(1, 3)
		ws := make([]string, k)
		for i := range ws {
			ws[i] = name(v.words[r.skewed(len(v.words), 1.2)])
		}
		nm := strings.Join(ws, "_")
		key := w.key(ns, nm)
		if _, dup := w.byKey[key]; dup || len(nm) < 3 || reservedWords[strings.ToLower(nm)] {
			continue
		}
		w.byKey[key] = len(w.pages)
		w.pages = append(w.pages, wpage{ns: ns, name: nm, title: titleWords(strings.ReplaceAll(nm, "_", " "))})
	}
	for i := 0; i < r.between(2, 8); i++ {
		ns := r.intn(nn)
		nm := name(v.name(r))
		if _, dup := w.byKey[w.key(ns, nm)]; !dup {
			w.red = append(w.red, w.key(ns, nm))
		}
	}
	// Links: 5–20 per page, mostly within the namespace.
	byNS := make([][]int, nn)
	for i, p := range w.pages {
		byNS[p.ns] = append(byNS[p.ns], i)
	}
	for i := range w.pages {
		p := &w.pages[i]
		n := r.between(5, 20)
		for tries := 0; len(p.links) < n && tries < 200; tries++ {
			var j int
			if r.chance(0.6) {
				j = pick(r, byNS[p.ns])
			} else {
				j = r.intn(np)
			}
			if j != i && !slices.Contains(p.links, j) {
				p.links = append(p.links, j)
			}
		}
		if len(w.red) > 0 && r.chance(0.04) {
			p.links = append(p.links, -1-r.intn(len(w.red)))
		}
		for _, j := range p.links {
			if j >= 0 {
				w.pages[j].back = append(w.pages[j].back, i)
			}
		}
	}
	// Revisions: 2–12 per page, between the wiki's start and now.
	for i := 0; i < r.between(10, 40); i++ {
		w.users = append(w.users, title(v.name(r)))
	}
	now := c.now.Unix()
	start := now - int64(r.between(2, 8))*365*86400
	type ref struct {
		t    int64
		p, k int
	}
	var all []ref
	for i := range w.pages {
		p := &w.pages[i]
		n := r.between(2, 12)
		ts := make([]int64, n)
		for k := range ts {
			ts[k] = start + int64(r.intn(int(now-start)))
		}
		slices.Sort(ts)
		for k := 1; k < n; k++ {
			if ts[k] <= ts[k-1] {
				ts[k] = ts[k-1] + 1
			}
		}
		for k, t := range ts {
			sum := ""
			if r.chance(0.7) {
				sum = c.v.phrase(r, r.between(2, 5))
			}
			if k == 0 {
				sum = "created"
			}
			p.revs = append(p.revs, wrev{id: int(t), t: t, user: r.skewed(len(w.users), 2), sum: sum})
			all = append(all, ref{t, i, k})
		}
	}
	slices.SortFunc(all, func(a, b ref) int {
		if d := cmp64(a.t, b.t); d != 0 {
			return d
		}
		return a.p - b.p
	})
	base := r.between(1000, 500000)
	if !w.stamps {
		for n, rf := range all {
			w.pages[rf.p].revs[rf.k].id = base + n
		}
	}
	for n := len(all) - 1; n >= 0 && len(w.recent) < 12; n-- {
		w.recent = append(w.recent, [2]int{all[n].p, all[n].k})
	}
	w.boxes = append([]string{"namespaces"}, sample(r, []string{"siblings", "tools"}, r.between(1, 2))...)
	nav := []string{c.a("/", "Main page"), c.a(w.indexPath, "Index")}
	for i := range w.nss {
		if i < 5 {
			nav = append(nav, c.a(w.nsIndexURI(i), w.nss[i].name))
		}
	}
	c.nav = nav
	c.sidebar = func(d *doc) { w.sidebar(d, -1) }
	return w
}

func (w *wiki) key(ns int, name string) string { return w.nss[ns].slug + ":" + name }

func (w *wiki) realPages() []string {
	out := []string{"/", w.indexPath}
	out = append(out, w.c.footerPages()...)
	for i := range w.nss {
		out = append(out, w.nsIndexURI(i))
	}
	for i := range w.pages {
		out = append(out, w.pageURI(i))
	}
	return out
}

func (w *wiki) nsIndexURI(ns int) string {
	if w.nsIdxP != "" {
		return uri(w.indexPath, qs{{w.nsIdxP, w.nss[ns].slug}})
	}
	return w.indexPath + "/" + w.nss[ns].slug
}

// keyURI is the view URL of a page key "ns:name" (which may be missing).
func (w *wiki) keyURI(key string) string {
	if w.query {
		return uri(w.script, qs{{w.titleP, key}})
	}
	ns, nm, _ := strings.Cut(key, ":")
	return w.prefix + ns + w.nsSep + nm
}

func (w *wiki) pageURI(i int) string { return w.keyURI(w.key(w.pages[i].ns, w.pages[i].name)) }

// actURI writes an action view of page i; args are the revision ids of
// actRev and actDiff, and the page of actHistory.
func (w *wiki) actURI(i, act int, args ...int) string {
	u := w.pageURI(i)
	if w.actPath {
		switch act {
		case actHistory:
			u += "/" + w.words[act]
			if args[0] > 1 {
				u = addParam(u, w.histPg.name, w.histPg.value(args[0], w.histPer))
			}
			return u
		case actRev, actDiff:
			u += "/" + w.words[act]
			for _, a := range args {
				u += "/" + strconv.Itoa(a)
			}
			return u
		}
		return u + "/" + w.words[act]
	}
	switch act {
	case actRev:
		return addParam(u, w.revP, strconv.Itoa(args[0]))
	case actDiff:
		u = addParam(addParam(u, w.actP, w.words[actDiff]), w.revP, strconv.Itoa(args[0]))
		if len(args) > 1 {
			u = addParam(u, w.rev2P, strconv.Itoa(args[1]))
		}
		return u
	case actHistory:
		u = addParam(u, w.actP, w.words[act])
		if args[0] > 1 {
			u = addParam(u, w.histPg.name, w.histPg.value(args[0], w.histPer))
		}
		return u
	}
	return addParam(u, w.actP, w.words[act])
}

func (w *wiki) revIndex(i, id int) int {
	return slices.IndexFunc(w.pages[i].revs, func(r wrev) bool { return r.id == id })
}

func (w *wiki) route(path string, p *params) *resolved {
	c := w.c
	if path == "/" && p.empty() {
		return &resolved{canon: "/", render: w.home}
	}
	if res := c.footerRoute(path); res != nil {
		return res
	}
	if path == w.indexPath {
		if w.nsIdxP != "" {
			if v, ok := p.get(w.nsIdxP); ok {
				ns := slices.IndexFunc(w.nss, func(e ent) bool { return e.slug == v })
				if ns < 0 {
					return nil
				}
				return &resolved{canon: w.nsIndexURI(ns), render: func(d *doc) { w.indexPage(d, ns) }}
			}
		}
		return &resolved{canon: w.indexPath, render: func(d *doc) { w.indexPage(d, -1) }}
	}
	if w.nsIdxP == "" {
		if v, ok := strings.CutPrefix(path, w.indexPath+"/"); ok {
			ns := slices.IndexFunc(w.nss, func(e ent) bool { return e.slug == v })
			if ns < 0 {
				return nil
			}
			return &resolved{canon: w.nsIndexURI(ns), render: func(d *doc) { w.indexPage(d, ns) }}
		}
	}
	// A page, then its action.
	var key string
	var rest []string
	if w.query {
		if path != w.script {
			return nil
		}
		v, ok := p.get(w.titleP)
		if !ok {
			return nil
		}
		key = v
	} else {
		tail, ok := strings.CutPrefix(path, w.prefix)
		if !ok {
			return nil
		}
		sg := strings.Split(tail, "/")
		if w.nsSep == "/" {
			if len(sg) < 2 {
				return nil
			}
			key, rest = sg[0]+":"+sg[1], sg[2:]
		} else {
			key, rest = sg[0], sg[1:]
		}
	}
	i, ok := w.byKey[key]
	if !ok {
		return nil
	}
	act := actView
	var args []int
	histPage, explicitHist := 1, false
	if w.actPath {
		if len(rest) > 0 {
			act = -1
			for a, word := range w.words {
				if word == rest[0] {
					act = a
				}
			}
			if act < 0 {
				return nil
			}
			for _, s := range rest[1:] {
				n, ok := atoi(s)
				if !ok {
					return nil
				}
				args = append(args, n)
			}
		}
		if act == actHistory {
			histPage, explicitHist = w.histPg.fromQuery(p, w.histPer)
		}
	} else {
		if len(rest) > 0 {
			return nil
		}
		if v, ok := p.get(w.actP); ok {
			act = -1
			for a, word := range w.words {
				if word == v && a != actRev {
					act = a
				}
			}
			if act < 0 {
				return nil
			}
		}
		if v, ok := p.get(w.revP); ok {
			n, ok := atoi(v)
			if !ok {
				return nil
			}
			args = append(args, n)
			if act == actView {
				act = actRev
			}
		}
		if v, ok := p.get(w.rev2P); ok {
			n, ok := atoi(v)
			if !ok || act != actDiff {
				return nil
			}
			args = append(args, n)
		}
		if act == actHistory {
			histPage, explicitHist = w.histPg.fromQuery(p, w.histPer)
		}
	}
	pg := &w.pages[i]
	switch act {
	case actView:
		if len(args) > 0 {
			return nil
		}
		return &resolved{canon: w.pageURI(i), render: func(d *doc) { w.pageView(d, i, len(pg.revs)-1) }}
	case actHistory:
		np := pages(len(pg.revs), w.histPer)
		if len(args) > 0 || histPage == 0 || histPage > np || (explicitHist && histPage == 1) {
			return nil
		}
		return &resolved{family: FamHistory, canon: w.actURI(i, actHistory, histPage), base: w.pageURI(i),
			render: func(d *doc) { w.historyPage(d, i, histPage) }}
	case actRev:
		if len(args) != 1 {
			return nil
		}
		k := w.revIndex(i, args[0])
		if k < 0 {
			return nil
		}
		return &resolved{family: FamRevision, canon: w.actURI(i, actRev, args[0]), base: w.pageURI(i),
			render: func(d *doc) { w.pageView(d, i, k) }}
	case actDiff:
		if len(args) < 1 || len(args) > 2 {
			return nil
		}
		a := w.revIndex(i, args[0])
		b := len(pg.revs) - 1
		if len(args) == 2 {
			b = w.revIndex(i, args[1])
		}
		if a < 0 || b < 0 || a == b {
			return nil
		}
		return &resolved{family: FamDiff, canon: w.actURI(i, actDiff, args...), base: w.pageURI(i),
			render: func(d *doc) { w.diffPage(d, i, min(a, b), max(a, b)) }}
	}
	if len(args) > 0 || !slices.Contains(w.acts, act) {
		return nil
	}
	return &resolved{family: FamAction, canon: w.actURI(i, act), base: w.pageURI(i), render: func(d *doc) { w.actionPage(d, i, act) }}
}

// ---- text ----

// wtok is one word of a page's text: a plain word, or a link to page
// link (when link >= 0), a red link (link < -1), or a heading marker.
type wtok struct {
	w    string
	link int
}

const noLink = -1 << 30

type wpara struct {
	heading bool
	toks    []wtok
}

// text returns page i's text at revision k: revision 0 is drawn, and each
// later revision replaces 5–15 % of the plain words of the one before.
func (w *wiki) text(i, k int) []wpara {
	t, _ := w.texts(i, k, k)
	return t
}

// texts returns page i's text at revisions a and b (a <= b) in one pass.
func (w *wiki) texts(i, a, b int) ([]wpara, []wpara) {
	c := w.c
	pg := &w.pages[i]
	r := c.rng("wikitext", i)
	np := r.between(2, 8)
	var ps []wpara
	li := 0
	for n := 0; n < np; n++ {
		if n > 0 && r.chance(0.5) {
			ps = append(ps, wpara{heading: true, toks: []wtok{{w: c.v.phrase(r, r.between(1, 3)), link: noLink}}})
		}
		var toks []wtok
		lead := ""
		if n == 0 {
			lead = pg.title
		}
		for _, s := range strings.SplitAfter(c.v.paragraph(r, lead), " ") {
			toks = append(toks, wtok{w: strings.TrimSpace(s), link: noLink})
		}
		// Spread the links over the paragraphs.
		share := (len(pg.links) - li + (np - n) - 1) / (np - n)
		for j := 0; j < share && li < len(pg.links); j++ {
			at := 1 + r.intn(len(toks)-1)
			t := pg.links[li]
			text := ""
			if t >= 0 {
				text = strings.ToLower(w.pages[t].title)
			} else {
				_, nm, _ := strings.Cut(w.red[-1-t], ":")
				text = strings.ToLower(strings.ReplaceAll(nm, "_", " "))
			}
			toks = slices.Insert(toks, at, wtok{w: text, link: t})
			li++
		}
		ps = append(ps, wpara{toks: toks})
	}
	var at []wpara
	if a == 0 {
		at = ps
	}
	// The plain words, which revisions may change; links and headings
	// stay.
	var plain [][2]int
	for pi, p := range ps {
		if p.heading {
			continue
		}
		for ti, t := range p.toks {
			if t.link == noLink {
				plain = append(plain, [2]int{pi, ti})
			}
		}
	}
	for rev := 1; rev <= b; rev++ {
		rr := c.rng("wikirev", i, rev)
		frac := 5 + rr.intn(11)
		n := max(1, len(plain)*frac/100)
		// Draw n distinct words: a partial shuffle of plain.
		for j := 0; j < n; j++ {
			k := j + rr.intn(len(plain)-j)
			plain[j], plain[k] = plain[k], plain[j]
		}
		// Copy the paragraphs this revision touches.
		ps = slices.Clone(ps)
		copied := map[int]bool{}
		for _, at := range plain[:n] {
			if !copied[at[0]] {
				ps[at[0]].toks = slices.Clone(ps[at[0]].toks)
				copied[at[0]] = true
			}
			old := ps[at[0]].toks[at[1]].w
			nw := c.v.word(rr)
			if old != "" && old[0] >= 'A' && old[0] <= 'Z' {
				nw = title(nw)
			}
			if strings.HasSuffix(old, ".") || strings.HasSuffix(old, ",") {
				nw += old[len(old)-1:]
			}
			ps[at[0]].toks[at[1]].w = nw
		}
		if rev == a {
			at = ps
		}
	}
	return at, ps
}

func (w *wiki) tokHTML(t wtok) string {
	switch {
	case t.link == noLink:
		return esc(t.w)
	case t.link >= 0:
		return `<a class="wikilink" href="` + esc(w.pageURI(t.link)) + `" title="` + esc(w.pages[t.link].title) + `">` + esc(t.w) + `</a>`
	}
	return `<a class="wikilink-missing" href="` + esc(w.keyURI(w.red[-1-t.link])) + `" rel="nofollow">` + esc(t.w) + `</a>`
}

func (w *wiki) writeText(d *doc, ps []wpara) {
	for _, p := range ps {
		if p.heading {
			d.h2(p.toks[0].w)
			continue
		}
		parts := make([]string, len(p.toks))
		for i, t := range p.toks {
			parts[i] = w.tokHTML(t)
		}
		d.printf("<p>%s</p>\n", strings.Join(parts, " "))
	}
}

func (w *wiki) source(i int, ps []wpara) string {
	var b strings.Builder
	for _, p := range ps {
		if p.heading {
			if w.markup == 0 {
				b.WriteString("===== " + p.toks[0].w + " =====\n\n")
			} else {
				b.WriteString("== " + p.toks[0].w + " ==\n\n")
			}
			continue
		}
		for j, t := range p.toks {
			if j > 0 {
				b.WriteByte(' ')
			}
			switch {
			case t.link == noLink:
				b.WriteString(t.w)
			case t.link >= 0:
				b.WriteString("[[" + w.key(w.pages[t.link].ns, w.pages[t.link].name) + "|" + t.w + "]]")
			default:
				b.WriteString("[[" + w.red[-1-t.link] + "|" + t.w + "]]")
			}
		}
		b.WriteString("\n\n")
	}
	return b.String()
}

// ---- pages ----

func (w *wiki) when(t int64) string { return time.Unix(t, 0).UTC().Format("2006/01/02 15:04") }

func (w *wiki) tabs(d *doc, i, cur int) {
	c := w.c
	var ts []string
	tab := func(act int, label string, href string) {
		if act == cur {
			ts = append(ts, "<strong>"+esc(label)+"</strong>")
		} else if act == actView {
			ts = append(ts, c.a(href, label))
		} else {
			ts = append(ts, c.va(href, label))
		}
	}
	tab(actView, "Page", w.pageURI(i))
	for _, a := range w.acts {
		switch a {
		case actEdit:
			tab(a, map[bool]string{true: "Edit", false: "Show source"}[w.words[a] == "edit"], w.actURI(i, a))
		case actRaw:
			tab(a, "Raw", w.actURI(i, a))
		case actBacklinks:
			tab(a, "What links here", w.actURI(i, a))
		case actInfo:
			tab(a, "Page information", w.actURI(i, a))
		}
	}
	tab(actHistory, "Old revisions", w.actURI(i, actHistory, 1))
	d.printf("<ul class=\"page-tabs\"><li>%s</li></ul>\n", strings.Join(ts, "</li><li>"))
}

func (w *wiki) crumbs(d *doc, i int) {
	c := w.c
	pg := &w.pages[i]
	d.crumbs = []string{c.a("/", "Main page"), c.a(w.nsIndexURI(pg.ns), w.nss[pg.ns].name), c.a(w.pageURI(i), pg.title)}
}

// pageView shows page i at revision k (the current page when k is last).
func (w *wiki) pageView(d *doc, i, k int) {
	c := w.c
	pg := &w.pages[i]
	cur := k == len(pg.revs)-1
	d.title = pg.title
	d.tmpl = "wiki-page"
	w.crumbs(d, i)
	if cur {
		w.tabs(d, i, actView)
	} else {
		d.tmpl = "wiki-revision"
		w.tabs(d, i, actRev)
		nav := []string{c.a(w.pageURI(i), "current version")}
		if k > 0 {
			nav = append(nav, c.va(w.actURI(i, actRev, pg.revs[k-1].id), "← older revision"))
		}
		if k+1 < len(pg.revs)-1 {
			nav = append(nav, c.va(w.actURI(i, actRev, pg.revs[k+1].id), "newer revision →"))
		}
		nav = append(nav, c.va(w.actURI(i, actDiff, pg.revs[k].id), "diff to current"))
		d.printf("<div class=\"notice\">This is an old revision of the document, as edited on %s by %s. (%s)</div>\n",
			w.when(pg.revs[k].t), esc(w.users[pg.revs[k].user]), strings.Join(nav, " | "))
	}
	d.h1(pg.title)
	w.writeText(d, w.text(i, k))
	r := pg.revs[len(pg.revs)-1]
	if !cur {
		r = pg.revs[k]
	}
	d.printf("<p class=\"docInfo\">%s · Last modified: %s by %s</p>\n", esc(w.key(pg.ns, pg.name)), w.when(r.t), esc(w.users[r.user]))
	w.sidebar(d, i)
}

func (w *wiki) historyPage(d *doc, i, page int) {
	c := w.c
	pg := &w.pages[i]
	d.title = pg.title + " – Old revisions"
	d.tmpl = "wiki-history"
	w.crumbs(d, i)
	w.tabs(d, i, actHistory)
	d.h1("Old revisions of " + pg.title)
	n := len(pg.revs)
	var lis []string
	for j := n - 1 - (page-1)*w.histPer; j >= 0 && j > n-1-page*w.histPer; j-- {
		rv := pg.revs[j]
		var parts []string
		if j == n-1 {
			parts = append(parts, w.when(rv.t)+" "+c.a(w.pageURI(i), pg.title)+" (current)")
		} else {
			parts = append(parts, w.when(rv.t)+" "+c.va(w.actURI(i, actRev, rv.id), pg.title),
				c.va(w.actURI(i, actDiff, rv.id), "cur"))
		}
		if j > 0 {
			parts = append(parts, c.va(w.actURI(i, actDiff, pg.revs[j-1].id, rv.id), "prev"))
		}
		parts = append(parts, "– "+esc(w.users[rv.user]))
		if rv.sum != "" {
			parts = append(parts, "<em>"+esc(rv.sum)+"</em>")
		}
		lis = append(lis, strings.Join(parts, " "))
	}
	d.ul("history", lis)
	c.pagerHTML(d, page, pages(n, w.histPer), func(p int) string { return w.actURI(i, actHistory, p) }, true)
	w.sidebar(d, i)
}

func (w *wiki) diffPage(d *doc, i, a, b int) {
	c := w.c
	pg := &w.pages[i]
	d.title = pg.title + " – Differences"
	d.tmpl = "wiki-diff"
	w.crumbs(d, i)
	w.tabs(d, i, actDiff)
	d.h1("Differences of " + pg.title)
	revLink := func(k int) string {
		if k == len(pg.revs)-1 {
			return c.a(w.pageURI(i), "current")
		}
		return c.va(w.actURI(i, actRev, pg.revs[k].id), "revision "+strconv.Itoa(pg.revs[k].id))
	}
	var nav []string
	if a > 0 {
		nav = append(nav, c.va(w.actURI(i, actDiff, pg.revs[a-1].id, pg.revs[a].id), "← Older edit"))
	}
	if b < len(pg.revs)-1 {
		nav = append(nav, c.va(w.actURI(i, actDiff, pg.revs[b].id, pg.revs[b+1].id), "Newer edit →"))
	}
	d.printf("<p class=\"diffnav\">%s</p>\n", strings.Join(nav, " | "))
	d.printf("<table class=\"diff\">\n<tr><th>%s %s (%s)</th><th>%s %s (%s)</th></tr>\n",
		revLink(a), w.when(pg.revs[a].t), esc(w.users[pg.revs[a].user]), revLink(b), w.when(pg.revs[b].t), esc(w.users[pg.revs[b].user]))
	ta, tb := w.texts(i, a, b)
	same := 0
	for pi := range tb {
		pa, pb := ta[pi], tb[pi]
		changed := false
		for ti := range pb.toks {
			if pa.toks[ti].w != pb.toks[ti].w {
				changed = true
			}
		}
		if !changed {
			same++
			continue
		}
		var l, rr []string
		for ti := range pb.toks {
			x, y := w.tokHTML(pa.toks[ti]), w.tokHTML(pb.toks[ti])
			if pa.toks[ti].w != pb.toks[ti].w {
				x, y = "<del>"+x+"</del>", "<ins>"+y+"</ins>"
			}
			l, rr = append(l, x), append(rr, y)
		}
		d.printf("<tr><td class=\"diff-deletedline\">%s</td><td class=\"diff-addedline\">%s</td></tr>\n", strings.Join(l, " "), strings.Join(rr, " "))
	}
	d.printf("</table>\n<p class=\"diff-same\">%d unchanged paragraphs not shown.</p>\n", same)
	w.sidebar(d, i)
}

func (w *wiki) actionPage(d *doc, i, act int) {
	c := w.c
	pg := &w.pages[i]
	w.crumbs(d, i)
	w.tabs(d, i, act)
	cur := len(pg.revs) - 1
	switch act {
	case actEdit:
		d.title = pg.title + " – Source"
		d.tmpl = "wiki-edit"
		d.h1("Source of " + pg.title)
		d.p("This page is read only. You can view the source, but not change it. Log in if you think this is wrong.")
		d.printf("<textarea name=\"wikitext\" rows=\"25\" cols=\"80\" readonly>%s</textarea>\n", esc(w.source(i, w.text(i, cur))))
	case actRaw:
		d.mode = modeBare
		d.title = pg.title
		d.tmpl = "wiki-raw"
		d.printf("<pre>%s</pre>\n", esc(w.source(i, w.text(i, cur))))
	case actBacklinks:
		d.title = pg.title + " – Backlinks"
		d.tmpl = "wiki-backlinks"
		d.h1("Pages that link to " + pg.title)
		var lis []string
		for _, j := range pg.back {
			lis = append(lis, c.a(w.pageURI(j), w.pages[j].title))
		}
		d.ul("backlinks", lis)
		if len(lis) == 0 {
			d.p("No pages link to this page.")
		}
	case actInfo:
		d.title = pg.title + " – Information"
		d.tmpl = "wiki-info"
		d.h1("Information for " + pg.title)
		d.printf("<table class=\"info\"><tr><th>Namespace</th><td>%s</td></tr><tr><th>Revisions</th><td>%d (%s)</td></tr>"+
			"<tr><th>Created</th><td>%s by %s</td></tr><tr><th>Last edited</th><td>%s by %s</td></tr><tr><th>Links</th><td>%d out, %d in</td></tr></table>\n",
			esc(w.nss[pg.ns].name), len(pg.revs), c.va(w.actURI(i, actHistory, 1), "history"), w.when(pg.revs[0].t), esc(w.users[pg.revs[0].user]),
			w.when(pg.revs[cur].t), esc(w.users[pg.revs[cur].user]), len(pg.links), len(pg.back))
	}
	w.sidebar(d, i)
}

func (w *wiki) indexPage(d *doc, ns int) {
	c := w.c
	d.tmpl = "wiki-index"
	if ns < 0 {
		d.title = "Index"
		d.crumbs = []string{c.a("/", "Main page"), "Index"}
		d.h1("Index of all pages")
		for n := range w.nss {
			d.printf("<h2>%s</h2>\n", c.a(w.nsIndexURI(n), w.nss[n].name))
			var lis []string
			for i, p := range w.pages {
				if p.ns == n {
					lis = append(lis, c.a(w.pageURI(i), p.title))
				}
			}
			d.ul("index", lis)
		}
	} else {
		d.title = "Namespace " + w.nss[ns].name
		d.crumbs = []string{c.a("/", "Main page"), c.a(w.indexPath, "Index"), esc(w.nss[ns].name)}
		d.h1("Pages in " + w.nss[ns].name)
		var lis []string
		for i, p := range w.pages {
			if p.ns == ns {
				lis = append(lis, c.a(w.pageURI(i), p.title)+" <small>"+w.when(p.revs[len(p.revs)-1].t)+"</small>")
			}
		}
		d.ul("index", lis)
	}
	w.sidebar(d, -1)
}

func (w *wiki) home(d *doc) {
	c := w.c
	r := c.rng("wikihome")
	d.title = "Main page"
	d.tmpl = "wiki-home"
	d.h1("Welcome to " + c.name)
	d.p(c.v.paragraph(r, c.name))
	d.h2("Namespaces")
	var lis []string
	for n := range w.nss {
		lis = append(lis, c.a(w.nsIndexURI(n), w.nss[n].name))
	}
	d.ul("namespaces", lis)
	d.h2("Featured pages")
	lis = nil
	for k := 0; k < 10; k++ {
		i := (k * 7919) % len(w.pages)
		lis = append(lis, c.a(w.pageURI(i), w.pages[i].title))
	}
	d.ul("featured", lis)
	d.h2("Recent changes")
	lis = nil
	for _, pk := range w.recent {
		i, k := pk[0], pk[1]
		pg := &w.pages[i]
		s := w.when(pg.revs[k].t) + " " + c.a(w.pageURI(i), pg.title)
		if k > 0 {
			s += " (" + c.va(w.actURI(i, actDiff, pg.revs[k-1].id, pg.revs[k].id), "diff") + " | " + c.va(w.actURI(i, actHistory, 1), "hist") + ")"
		}
		lis = append(lis, s+" – "+esc(w.users[pg.revs[k].user]))
	}
	d.ul("recent-changes", lis)
	w.sidebar(d, -1)
}

func (w *wiki) sidebar(d *doc, i int) {
	c := w.c
	for _, b := range w.boxes {
		switch b {
		case "namespaces":
			bx := box{title: "Namespaces", cls: "namespaces"}
			for n := range w.nss {
				bx.items = append(bx.items, c.a(w.nsIndexURI(n), w.nss[n].name))
			}
			d.side = append(d.side, bx)
		case "siblings":
			if i < 0 {
				continue
			}
			bx := box{title: "In this namespace", cls: "siblings"}
			for j := i + 1; j < len(w.pages) && len(bx.items) < 8; j++ {
				if w.pages[j].ns == w.pages[i].ns {
					bx.items = append(bx.items, c.a(w.pageURI(j), w.pages[j].title))
				}
			}
			d.side = append(d.side, bx)
		case "tools":
			if i < 0 {
				continue
			}
			bx := box{title: "Page tools", cls: "tools"}
			for _, a := range w.acts {
				if a == actBacklinks || a == actInfo {
					bx.items = append(bx.items, c.va(w.actURI(i, a), map[int]string{actBacklinks: "What links here", actInfo: "Page information"}[a]))
				}
			}
			bx.items = append(bx.items, c.va(w.actURI(i, actHistory, 1), "Old revisions"))
			d.side = append(d.side, bx)
		}
	}
}

func (w *wiki) describe() string {
	var acts []string
	for _, a := range w.acts {
		acts = append(acts, w.actURI(0, a))
	}
	p := &w.pages[0]
	return fmt.Sprintf("Wiki of %d pages in %d namespaces; pages like %s; index %s and %s; history %s (%d per page, further pages like %s); "+
		"revisions like %s; diffs like %s and %s; actions %s. Real: every page, the index pages, home.",
		len(w.pages), len(w.nss), w.pageURI(0), w.indexPath, w.nsIndexURI(0), w.actURI(0, actHistory, 1), w.histPer,
		w.actURI(0, actHistory, 2), w.actURI(0, actRev, p.revs[0].id), w.actURI(0, actDiff, p.revs[0].id),
		w.actURI(0, actDiff, p.revs[0].id, p.revs[1].id), strings.Join(acts, ", "))
}
