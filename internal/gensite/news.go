package gensite

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A news site. Its real pages are the home page, every article, every page
// of every section list, page 1 of every tag, author and monthly archive
// list, and the footer pages (all under the default, newest-first order).
// Traps: the filter list (every combination of its filters), tag
// intersections, other sort orders, AMP copies of articles, further pages
// of tag, author and archive lists, and default values written out.
type news struct {
	c                     *common
	secs, tags, authors   []ent
	types                 []ent
	years                 []int
	arts                  []article
	order                 [][]int // article indexes in each sort's order
	bySlug                map[string]int
	byID                  map[int]int
	months                []int // yyyymm with articles, newest first
	monthSet              map[int]bool
	per                   int
	pg                    pageStyle
	trail                 bool // path lists end in "/"
	artStyle              int
	artSeg, artParam      string
	secStyle              int
	secSeg                string
	tagStyle              int
	tagSeg, tagP, tagSep  string
	authStyle             int
	authSeg, authP        string
	archStyle             int
	archSeg, archP        string
	filtBase              string
	filts                 []nfilter
	sortP                 string
	sorts                 []sortOpt
	sortExplicit          bool
	pageExplicit          bool
	amp                   int // 0: none; 1: path suffix; 2: query; 3: path prefix
	ampP, ampV, ampSuffix string
	ampVisible            bool
	boxes                 []string
	mostRead, cloud       []int // sidebar: most read of the latest 60; the 20 commonest tags
}

type ent struct{ slug, name string }

type article struct {
	id               int
	title, slug      string
	sec, author, typ int
	tags             []int
	t                time.Time
	pop, comments    int
}

const (
	nfSection = iota
	nfTag
	nfAuthor
	nfYear
	nfType
)

type nfilter struct {
	kind int
	name string
}

const (
	lkSection = iota
	lkTag
	lkAuthor
	lkArchive
	lkFilter
)

// nlist is one list view.
type nlist struct {
	kind int
	key  int   // section, author or month (yyyymm)
	tags []int // lkTag, as written
	fv   []int // lkFilter: one value index per filter, -1 for none
	sort int
	page int
}

var sectionPool = []string{"world", "politics", "business", "sport", "culture", "science", "tech", "health", "opinion",
	"travel", "local", "arts", "money", "style", "food", "climate", "education", "books", "film", "music"}

func newNews(c *common) (*news, error) {
	for attempt := 0; attempt < 400; attempt++ {
		n := drawNews(c, attempt)
		if k := len(n.realPages()); k >= 250 && k <= 700 {
			return n, nil
		}
	}
	return nil, errors.New("gensite: could not draw a news site of 250–700 real pages")
}

func drawNews(c *common, attempt int) *news {
	c.usedParams = map[string]bool{}
	c.usedPaths = map[string]bool{firstSeg(c.footer[0].path): true}
	r := c.rng("news", attempt)
	v := c.v
	n := &news{c: c, bySlug: map[string]int{}, byID: map[int]int{}, monthSet: map[int]bool{}}
	ents := func(k int, pool []string) []ent {
		var out []ent
		for _, w := range sample(r, pool, k) {
			v.claim(w)
			out = append(out, ent{slug: w, name: title(w)})
		}
		for len(out) < k {
			w := v.name(r)
			out = append(out, ent{slug: w, name: title(w)})
		}
		return out
	}
	ns := r.between(5, 10)
	mixed := sample(r, sectionPool, ns-r.intn(3))
	n.secs = ents(ns, mixed)
	for i := 0; i < r.between(20, 60); i++ {
		w := v.name(r)
		if r.chance(0.25) {
			w2 := v.name(r)
			n.tags = append(n.tags, ent{slug: w + "-" + w2, name: title(w) + " " + title(w2)})
		} else {
			n.tags = append(n.tags, ent{slug: w, name: title(w)})
		}
	}
	for i := 0; i < r.between(5, 20); i++ {
		f, l := v.name(r), v.name(r)
		n.authors = append(n.authors, ent{slug: f + "-" + l, name: title(f) + " " + title(l)})
	}
	n.types = ents(r.between(3, 6), []string{"report", "analysis", "interview", "opinion", "review", "explainer", "feature", "live"})

	// Articles over 2–4 years before now, oldest first.
	na := r.between(300, 600)
	span := r.between(2, 4) * 365
	times := make([]time.Time, na)
	for i := range times {
		times[i] = c.now.Add(-time.Duration(r.intn(span*24*60)) * time.Minute)
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	id := r.between(1000, 200000)
	for i := 0; i < na; i++ {
		id += 1 + r.skewed(30, 3)
		var t string
		for {
			t = v.phrase(r, r.between(4, 9))
			if _, dup := n.bySlug[slug(t)]; !dup {
				break
			}
		}
		a := article{id: id, title: t, slug: slug(t), t: times[i], sec: r.skewed(ns, 1.4), author: r.skewed(len(n.authors), 1.5),
			typ: r.skewed(len(n.types), 1.5), pop: r.skewed(100000, 3), comments: r.skewed(300, 3)}
		// Every tag and author is used at least once.
		if i < len(n.tags) {
			a.tags = append(a.tags, i)
		}
		if i < len(n.authors) {
			a.author = i
		}
		for k := r.between(2, 5); len(a.tags) < k; {
			tg := r.skewed(len(n.tags), 1.8)
			if !slices.Contains(a.tags, tg) {
				a.tags = append(a.tags, tg)
			}
		}
		n.bySlug[a.slug] = i
		n.byID[a.id] = i
		n.arts = append(n.arts, a)
		ym := a.t.Year()*100 + int(a.t.Month())
		if !n.monthSet[ym] {
			n.monthSet[ym] = true
			n.months = append(n.months, ym)
		}
		if !slices.Contains(n.years, a.t.Year()) {
			n.years = append(n.years, a.t.Year())
		}
	}
	slices.Reverse(n.months)

	// URL shapes.
	n.trail = r.chance(0.6)
	n.artStyle = r.intn(5)
	switch n.artStyle {
	case 2:
		n.artSeg = c.segment(r, "article", "story", "a", "read")
	case 3:
		n.artSeg = c.segment(r, "news", "stories", "articles")
	case 4:
		n.artSeg = pick(r, []string{"story.php", "article.php", "read.php", "item.php"})
		c.usedPaths[n.artSeg] = true
		n.artParam = c.param(r, "id", "sid", "aid", "story")
	}
	n.secStyle = r.intn(2)
	if n.secStyle == 1 || n.artStyle == 3 {
		n.secStyle = 1
		n.secSeg = c.segment(r, "section", "category", "sections", "cat")
	} else {
		for _, s := range n.secs {
			c.usedPaths[s.slug] = true
		}
	}
	n.tagStyle = r.intn(4)
	switch n.tagStyle {
	case 0, 1:
		n.tagSeg = c.segment(r, "tag", "topic", "t", "subject")
		n.tagSep = []string{"+", ","}[n.tagStyle]
	case 2:
		n.tagSeg = c.segment(r, "tags", "topics", "themes")
	case 3:
		n.tagSeg = c.segment(r, "tagged", "topics", "keywords")
		n.tagP = c.param(r, "tags", "tag", "t", "kw")
	}
	n.authStyle = r.intn(3)
	switch n.authStyle {
	case 0, 1:
		n.authSeg = c.segment(r, "author", "authors", "by", "writers", "people")
	case 2:
		n.authSeg = pick(r, []string{"profile.php", "author.php", "writer"})
		c.usedPaths[n.authSeg] = true
		n.authP = c.param(r, "u", "uid", "author_id", "who")
	}
	n.archStyle = r.intn(4)
	switch n.archStyle {
	case 1, 3:
		n.archSeg = c.segment(r, "archive", "archives", "date", "history")
	case 2:
		n.archSeg = c.segment(r, "archive", "archives", "calendar")
		n.archP = c.param(r, "m", "month", "ym", "d")
	}
	fb := c.segment(r, "news", "articles", "browse", "stories", "search", "all")
	n.filtBase = "/" + fb
	if n.trail {
		n.filtBase += "/"
	}
	// Filters: section and tag always, then 1–3 of author, year, type.
	n.filts = []nfilter{{nfSection, c.param(r, "section", "sec", "cat", "category", "s")}, {nfTag, c.param(r, "tag", "topic", "kw", "t")}}
	for _, k := range sample(r, []int{nfAuthor, nfYear, nfType}, r.between(1, 3)) {
		var nm string
		switch k {
		case nfAuthor:
			nm = c.param(r, "author", "by", "writer", "a")
		case nfYear:
			nm = c.param(r, "year", "y", "yr")
		case nfType:
			nm = c.param(r, "type", "format", "kind")
		}
		n.filts = append(n.filts, nfilter{k, nm})
	}
	shuffle(r, n.filts[1:])
	pathOK := n.trail && n.tagStyle != 3 && n.authStyle != 2 && n.archStyle != 2
	n.pg = c.drawPageStyle(r, pathOK)
	n.per = pick(r, []int{10, 12, 15, 20, 24, 25, 30})
	n.sortP = c.param(r, "sort", "order", "orderby", "sort_by", "o")
	n.sorts = []sortOpt{{name: pick(r, []string{"newest", "date", "recent", "latest"}), label: "Newest", key: 0}}
	others := []sortOpt{{name: pick(r, []string{"oldest", "date_asc", "asc"}), label: "Oldest", key: 1},
		{name: pick(r, []string{"popular", "most-read", "views"}), label: "Most read", key: 2},
		{name: pick(r, []string{"comments", "discussed", "most-commented"}), label: "Most discussed", key: 3},
		{name: pick(r, []string{"title", "az", "alpha"}), label: "A–Z", key: 4}}
	n.sorts = append(n.sorts, sample(r, others, r.between(1, 3))...)
	n.sortExplicit = r.chance(0.5)
	n.pageExplicit = r.chance(0.4)
	n.order = make([][]int, len(n.sorts))
	for si, so := range n.sorts {
		idx := make([]int, na)
		for i := range idx {
			idx[i] = i
		}
		as := n.arts
		slices.SortStableFunc(idx, func(x, y int) int {
			a, b := &as[x], &as[y]
			var d int
			switch so.key {
			case 0:
				d = b.t.Compare(a.t)
			case 1:
				d = a.t.Compare(b.t)
			case 2:
				d = b.pop - a.pop
			case 3:
				d = b.comments - a.comments
			case 4:
				d = strings.Compare(a.title, b.title)
			}
			if d == 0 {
				d = a.id - b.id
			}
			return d
		})
		n.order[si] = idx
	}
	if r.chance(0.65) {
		n.amp = 1 + r.intn(3)
		if n.artStyle == 4 && n.amp == 1 {
			n.amp = 2 // a query URL takes no path suffix
		}
		switch n.amp {
		case 1:
			n.ampSuffix = pick(r, []string{"amp", "amp/"})
			if !strings.HasSuffix(n.artURI(0), "/") {
				n.ampSuffix = "/amp"
			}
		case 2:
			n.ampP = c.param(r, "amp", "output", "outputType", "format")
			n.ampV = map[string]string{"amp": "1", "output": "amp", "outputType": "amp", "format": "amp"}[n.ampP]
			if n.ampV == "" {
				n.ampV = "amp"
			}
		case 3:
			c.usedPaths["amp"] = true
		}
		n.ampVisible = r.chance(0.5)
	}
	n.boxes = sample(r, []string{"latest", "popular", "tags", "archive"}, r.between(2, 4))
	pop := slices.Clone(n.order[0][:min(60, na)])
	slices.SortStableFunc(pop, func(x, y int) int { return n.arts[y].pop - n.arts[x].pop })
	n.mostRead = pop[:5]
	cnt := make([]int, len(n.tags))
	for _, a := range n.arts {
		for _, t := range a.tags {
			cnt[t]++
		}
	}
	n.cloud = topN(cnt, 20)
	nav := []string{c.a("/", "Home")}
	for i := range n.secs {
		nav = append(nav, c.a(n.listURI(nlist{kind: lkSection, key: i, page: 1}, false, false), n.secs[i].name))
	}
	c.nav = nav
	c.sidebar = func(d *doc) { n.sidebar(d, -1) }
	return n
}

func (n *news) ym(a *article) int { return a.t.Year()*100 + int(a.t.Month()) }

func (n *news) artURI(i int) string {
	a := &n.arts[i]
	y, m, d := a.t.Date()
	ids := strconv.Itoa(a.id)
	switch n.artStyle {
	case 0:
		return fmt.Sprintf("/%s/%04d/%02d/%02d/%s/", n.secs[a.sec].slug, y, m, d, a.slug)
	case 1:
		return fmt.Sprintf("/%04d/%02d/%s.html", y, m, a.slug)
	case 2:
		return "/" + n.artSeg + "/" + ids + "/" + a.slug
	case 3:
		return "/" + n.artSeg + "/" + n.secs[a.sec].slug + "/" + a.slug + "-" + ids
	}
	return uri("/"+n.artSeg, qs{{n.artParam, ids}})
}

// routeArticle finds the article of a path (and query), checking that
// the URL is exactly the article's.
func (n *news) routeArticle(path string, p *params) (int, bool) {
	i := -1
	switch n.artStyle {
	case 0:
		sg := strings.Split(strings.Trim(path, "/"), "/")
		if len(sg) == 5 {
			if j, ok := n.bySlug[sg[4]]; ok {
				i = j
			}
		}
	case 1:
		sg := strings.Split(strings.TrimPrefix(path, "/"), "/")
		if len(sg) == 3 {
			if j, ok := n.bySlug[strings.TrimSuffix(sg[2], ".html")]; ok {
				i = j
			}
		}
	case 2:
		sg := strings.Split(strings.TrimPrefix(path, "/"), "/")
		if len(sg) == 3 && sg[0] == n.artSeg {
			if id, ok := atoi(sg[1]); ok {
				if j, ok := n.byID[id]; ok {
					i = j
				}
			}
		}
	case 3:
		sg := strings.Split(strings.TrimPrefix(path, "/"), "/")
		if len(sg) == 3 && sg[0] == n.artSeg {
			if k := strings.LastIndex(sg[2], "-"); k >= 0 {
				if id, ok := atoi(sg[2][k+1:]); ok {
					if j, ok := n.byID[id]; ok {
						i = j
					}
				}
			}
		}
	case 4:
		if path == "/"+n.artSeg {
			if v, ok := p.get(n.artParam); ok {
				if id, ok := atoi(v); ok {
					if j, ok := n.byID[id]; ok {
						i = j
					}
				}
			}
		}
	}
	if i < 0 {
		return 0, false
	}
	if n.artStyle == 4 {
		return i, true
	}
	return i, n.artURI(i) == path
}

func (n *news) ampURI(i int) string {
	a := n.artURI(i)
	switch n.amp {
	case 1:
		return a + n.ampSuffix
	case 2:
		return addParam(a, n.ampP, n.ampV)
	}
	return "/amp" + a
}

func (n *news) tr(p string) string {
	if n.trail {
		return p + "/"
	}
	return p
}

// listURI writes a list view; explicit writes the default sort or page 1.
func (n *news) listURI(l nlist, explicitSort, explicitPage bool) string {
	var path string
	var q qs
	switch l.kind {
	case lkSection:
		if n.secStyle == 0 {
			path = "/" + n.secs[l.key].slug + "/"
		} else {
			path = n.tr("/" + n.secSeg + "/" + n.secs[l.key].slug)
		}
	case lkTag:
		sl := make([]string, len(l.tags))
		for i, t := range l.tags {
			sl[i] = n.tags[t].slug
		}
		switch n.tagStyle {
		case 0, 1:
			path = n.tr("/" + n.tagSeg + "/" + strings.Join(sl, n.tagSep))
		case 2:
			path = n.tr("/" + n.tagSeg + "/" + strings.Join(sl, "/"))
		case 3:
			path = "/" + n.tagSeg
			q = qs{{n.tagP, strings.Join(sl, ",")}}
		}
	case lkAuthor:
		if n.authStyle < 2 {
			path = n.tr("/" + n.authSeg + "/" + n.authors[l.key].slug)
		} else {
			path = "/" + n.authSeg
			q = qs{{n.authP, strconv.Itoa(l.key + 1)}}
		}
	case lkArchive:
		y, m := l.key/100, l.key%100
		switch n.archStyle {
		case 0:
			path = n.tr(fmt.Sprintf("/%04d/%02d", y, m))
		case 1:
			path = n.tr(fmt.Sprintf("/%s/%04d-%02d", n.archSeg, y, m))
		case 2:
			path = "/" + n.archSeg
			q = qs{{n.archP, fmt.Sprintf("%04d%02d", y, m)}}
		case 3:
			path = n.tr(fmt.Sprintf("/%s/%04d/%02d", n.archSeg, y, m))
		}
	case lkFilter:
		path = n.filtBase
		for fi, f := range n.filts {
			if l.fv[fi] >= 0 {
				q = append(q, kv{f.name, n.filterValue(f.kind, l.fv[fi])})
			}
		}
	}
	if l.sort != 0 || explicitSort {
		q = append(q, kv{n.sortP, n.sorts[l.sort].name})
	}
	return n.pg.apply(path, q, l.page, n.per, explicitPage)
}

func (n *news) filterValues(kind int) int {
	switch kind {
	case nfSection:
		return len(n.secs)
	case nfTag:
		return len(n.tags)
	case nfAuthor:
		return len(n.authors)
	case nfYear:
		return len(n.years)
	}
	return len(n.types)
}

func (n *news) filterValue(kind, i int) string {
	switch kind {
	case nfSection:
		return n.secs[i].slug
	case nfTag:
		return n.tags[i].slug
	case nfAuthor:
		return n.authors[i].slug
	case nfYear:
		return strconv.Itoa(n.years[i])
	}
	return n.types[i].slug
}

func (n *news) filterLabel(kind, i int) string {
	if kind == nfYear {
		return strconv.Itoa(n.years[i])
	}
	switch kind {
	case nfSection:
		return n.secs[i].name
	case nfTag:
		return n.tags[i].name
	case nfAuthor:
		return n.authors[i].name
	}
	return n.types[i].name
}

func (n *news) artValue(a *article, kind int) []int {
	switch kind {
	case nfSection:
		return []int{a.sec}
	case nfTag:
		return a.tags
	case nfAuthor:
		return []int{a.author}
	case nfYear:
		return []int{slices.Index(n.years, a.t.Year())}
	}
	return []int{a.typ}
}

func (n *news) matches(a *article, l nlist) bool {
	switch l.kind {
	case lkSection:
		return a.sec == l.key
	case lkTag:
		for _, t := range l.tags {
			if !slices.Contains(a.tags, t) {
				return false
			}
		}
		return true
	case lkAuthor:
		return a.author == l.key
	case lkArchive:
		return n.ym(a) == l.key
	}
	for fi, f := range n.filts {
		if l.fv[fi] >= 0 && !slices.Contains(n.artValue(a, f.kind), l.fv[fi]) {
			return false
		}
	}
	return true
}

func (n *news) items(l nlist) []int {
	var out []int
	for _, i := range n.order[l.sort] {
		if n.matches(&n.arts[i], l) {
			out = append(out, i)
		}
	}
	return out
}

func (n *news) realPages() []string {
	c := n.c
	out := []string{"/"}
	out = append(out, c.footerPages()...)
	for i := range n.arts {
		out = append(out, n.artURI(i))
	}
	for s := range n.secs {
		l := nlist{kind: lkSection, key: s, page: 1}
		np := pages(len(n.items(l)), n.per)
		for pg := 1; pg <= np; pg++ {
			l.page = pg
			out = append(out, n.listURI(l, false, false))
		}
	}
	for t := range n.tags {
		out = append(out, n.listURI(nlist{kind: lkTag, tags: []int{t}, page: 1}, false, false))
	}
	for a := range n.authors {
		out = append(out, n.listURI(nlist{kind: lkAuthor, key: a, page: 1}, false, false))
	}
	for _, m := range n.months {
		out = append(out, n.listURI(nlist{kind: lkArchive, key: m, page: 1}, false, false))
	}
	return out
}

func (n *news) route(path string, p *params) *resolved {
	c := n.c
	if path == "/" && p.empty() {
		return &resolved{canon: "/", render: n.home}
	}
	if res := c.footerRoute(path); res != nil {
		return res
	}
	// AMP copies first: their URL contains the article's.
	switch n.amp {
	case 1:
		if a, ok := strings.CutSuffix(path, n.ampSuffix); ok {
			if i, ok := n.routeArticle(a, p); ok {
				return n.ampRoute(i)
			}
		}
	case 2:
		if v, ok := p.get(n.ampP); ok {
			if i, ok := n.routeArticle(path, p); ok && v == n.ampV {
				return n.ampRoute(i)
			}
			return nil
		}
	case 3:
		if a, ok := strings.CutPrefix(path, "/amp/"); ok {
			if i, ok := n.routeArticle("/"+a, p); ok {
				return n.ampRoute(i)
			}
		}
	}
	if i, ok := n.routeArticle(path, p); ok {
		return &resolved{canon: n.artURI(i), render: func(d *doc) { n.articlePage(d, i) }}
	}
	return n.routeList(path, p)
}

func (n *news) ampRoute(i int) *resolved {
	return &resolved{family: FamAMP, canon: n.ampURI(i), base: n.artURI(i), render: func(d *doc) { n.ampPage(d, i) }}
}

// decodeList reads the list a base path (page suffix removed) and query
// name, or reports false.
func (n *news) decodeList(base string, p *params) (nlist, bool) {
	l := nlist{page: 1}
	sg := strings.Split(strings.Trim(base, "/"), "/")
	tryEnt := func(es []ent, s string) int {
		return slices.IndexFunc(es, func(e ent) bool { return e.slug == s })
	}
	// Section.
	if n.secStyle == 0 && len(sg) == 1 {
		if k := tryEnt(n.secs, sg[0]); k >= 0 {
			return nlist{kind: lkSection, key: k, page: 1}, true
		}
	}
	if n.secStyle == 1 && len(sg) == 2 && sg[0] == n.secSeg {
		if k := tryEnt(n.secs, sg[1]); k >= 0 {
			return nlist{kind: lkSection, key: k, page: 1}, true
		}
	}
	// Tags.
	if len(sg) >= 2 && sg[0] == n.tagSeg && n.tagStyle <= 2 {
		var parts []string
		if n.tagStyle == 2 {
			parts = sg[1:]
		} else if len(sg) == 2 {
			parts = strings.Split(sg[1], n.tagSep)
		}
		if ts, ok := n.tagList(parts); ok {
			return nlist{kind: lkTag, tags: ts, page: 1}, true
		}
	}
	if n.tagStyle == 3 && base == "/"+n.tagSeg {
		if v, ok := p.get(n.tagP); ok {
			if ts, ok := n.tagList(strings.Split(v, ",")); ok {
				return nlist{kind: lkTag, tags: ts, page: 1}, true
			}
		}
		return l, false
	}
	// Authors.
	if n.authStyle < 2 && len(sg) == 2 && sg[0] == n.authSeg {
		if k := tryEnt(n.authors, sg[1]); k >= 0 {
			return nlist{kind: lkAuthor, key: k, page: 1}, true
		}
	}
	if n.authStyle == 2 && base == "/"+n.authSeg {
		if v, ok := p.get(n.authP); ok {
			if k, ok := atoi(v); ok && k >= 1 && k <= len(n.authors) {
				return nlist{kind: lkAuthor, key: k - 1, page: 1}, true
			}
		}
		return l, false
	}
	// Monthly archives.
	month := func(y, m string) (int, bool) {
		yy, ok1 := atoi(y)
		mm, ok2 := strconv.Atoi(m)
		if !ok1 || ok2 != nil || len(m) != 2 || len(y) != 4 || !n.monthSet[yy*100+mm] {
			return 0, false
		}
		return yy*100 + mm, true
	}
	switch {
	case n.archStyle == 0 && len(sg) == 2:
		if k, ok := month(sg[0], sg[1]); ok {
			return nlist{kind: lkArchive, key: k, page: 1}, true
		}
	case n.archStyle == 1 && len(sg) == 2 && sg[0] == n.archSeg:
		if y, m, ok := strings.Cut(sg[1], "-"); ok {
			if k, ok := month(y, m); ok {
				return nlist{kind: lkArchive, key: k, page: 1}, true
			}
		}
	case n.archStyle == 3 && len(sg) == 3 && sg[0] == n.archSeg:
		if k, ok := month(sg[1], sg[2]); ok {
			return nlist{kind: lkArchive, key: k, page: 1}, true
		}
	case n.archStyle == 2 && base == "/"+n.archSeg:
		if v, ok := p.get(n.archP); ok && len(v) == 6 {
			if k, ok := month(v[:4], v[4:]); ok {
				return nlist{kind: lkArchive, key: k, page: 1}, true
			}
		}
		return l, false
	}
	// The filter list.
	if base == n.filtBase {
		l = nlist{kind: lkFilter, fv: make([]int, len(n.filts)), page: 1}
		for fi, f := range n.filts {
			l.fv[fi] = -1
			if v, ok := p.get(f.name); ok {
				k := -1
				for j := 0; j < n.filterValues(f.kind); j++ {
					if n.filterValue(f.kind, j) == v {
						k = j
					}
				}
				if k < 0 {
					return l, false
				}
				l.fv[fi] = k
			}
		}
		return l, true
	}
	return l, false
}

func (n *news) tagList(parts []string) ([]int, bool) {
	if len(parts) == 0 {
		return nil, false
	}
	var ts []int
	for _, s := range parts {
		k := slices.IndexFunc(n.tags, func(e ent) bool { return e.slug == s })
		if k < 0 || slices.Contains(ts, k) {
			return nil, false
		}
		ts = append(ts, k)
	}
	return ts, true
}

func (n *news) routeList(path string, p *params) *resolved {
	base, page, pathPaged := n.pg.stripPath(path)
	if page == 0 {
		return nil
	}
	l, ok := n.decodeList(base, p)
	if !ok {
		return nil
	}
	explicitPage := pathPaged && page == 1
	explicitSort := false
	if v, ok := p.get(n.sortP); ok {
		l.sort = slices.IndexFunc(n.sorts, func(o sortOpt) bool { return o.name == v })
		if l.sort < 0 {
			return nil
		}
		explicitSort = l.sort == 0
	}
	if !pathPaged {
		var ex bool
		page, ex = n.pg.fromQuery(p, n.per)
		if page == 0 {
			return nil
		}
		explicitPage = ex && page == 1
	}
	l.page = page
	items := n.items(l)
	if page > pages(len(items), n.per) {
		return nil
	}
	// The path form must be exactly the one the site writes.
	canon := n.listURI(l, false, false)
	if cp, _, _ := strings.Cut(n.listURI(l, explicitSort, explicitPage), "?"); cp != path {
		return nil
	}
	res := &resolved{canon: canon}
	def := l
	def.sort = 0
	switch {
	case l.kind == lkFilter:
		res.family = FamFilter
	case l.kind == lkTag && len(l.tags) > 1:
		res.family = FamTagX
	case l.sort != 0:
		res.family = FamSort
		if l.kind == lkSection || l.page == 1 {
			res.base = n.listURI(def, false, false)
		}
	case l.page > 1 && l.kind != lkSection:
		res.family = FamExtraPage
	case explicitSort || explicitPage:
		res.family = FamDefault
		res.real = canon
	}
	res.render = func(d *doc) { n.listPage(d, l, items) }
	return res
}

func (n *news) listTitle(l nlist) string {
	switch l.kind {
	case lkSection:
		return n.secs[l.key].name
	case lkTag:
		var ns []string
		for _, t := range l.tags {
			ns = append(ns, n.tags[t].name)
		}
		return "Tagged: " + strings.Join(ns, " + ")
	case lkAuthor:
		return "Articles by " + n.authors[l.key].name
	case lkArchive:
		return time.Month(l.key%100).String() + " " + strconv.Itoa(l.key/100)
	}
	var ps []string
	for fi, f := range n.filts {
		if l.fv[fi] >= 0 {
			ps = append(ps, n.filterLabel(f.kind, l.fv[fi]))
		}
	}
	if len(ps) == 0 {
		return "All articles"
	}
	return "Articles: " + strings.Join(ps, ", ")
}

func (n *news) teaser(i int, place string) string {
	c := n.c
	a := &n.arts[i]
	href := n.artURI(i)
	if place != "" {
		href = c.trackLink(href, place)
	}
	return `<article class="teaser"><h3>` + c.a(href, a.title) + `</h3><p class="meta">` + a.t.Format("2 January 2006") +
		`</p><p>` + esc(c.v.snippet(c.rng("asnip", a.id))) + `</p></article>`
}

// asFilter returns the filter view equal to a list's constraint, if the
// filter can express it.
func (n *news) asFilter(l nlist) (nlist, bool) {
	f := nlist{kind: lkFilter, fv: make([]int, len(n.filts)), page: 1}
	for i := range f.fv {
		f.fv[i] = -1
	}
	set := func(kind, v int) bool {
		for fi, fl := range n.filts {
			if fl.kind == kind {
				f.fv[fi] = v
				return true
			}
		}
		return false
	}
	switch l.kind {
	case lkFilter:
		copy(f.fv, l.fv)
		return f, true
	case lkSection:
		return f, set(nfSection, l.key)
	case lkTag:
		return f, len(l.tags) == 1 && set(nfTag, l.tags[0])
	case lkAuthor:
		return f, set(nfAuthor, l.key)
	}
	return f, false
}

func (n *news) listPage(d *doc, l nlist, items []int) {
	c := n.c
	t := n.listTitle(l)
	d.title = t
	if l.page > 1 {
		d.title += " – Page " + strconv.Itoa(l.page)
	}
	d.tmpl = []string{"section", "tag", "author", "archive", "filter"}[l.kind]
	d.crumbs = []string{c.a("/", "Home"), esc(t)}
	d.h1(t)
	if l.kind == lkAuthor {
		r := c.rng("bio", l.key)
		d.printf("<p class=\"bio\">%s</p>\n", esc(c.v.paragraph(r, n.authors[l.key].name)))
	}
	trap := l.kind == lkFilter || (l.kind == lkTag && len(l.tags) > 1) || l.sort != 0
	var sb []string
	for oi, o := range n.sorts {
		if oi == l.sort {
			sb = append(sb, "<strong>"+esc(o.label)+"</strong>")
			continue
		}
		m := l
		m.sort, m.page = oi, 1
		href := n.listURI(m, n.sortExplicit, false)
		if oi == 0 && !trap {
			sb = append(sb, c.a(href, o.label))
		} else {
			sb = append(sb, c.va(href, o.label))
		}
	}
	d.printf("<p class=\"sort\">Order: %s</p>\n", strings.Join(sb, " · "))
	for _, i := range window(items, l.page, n.per) {
		d.raw(n.teaser(i, "") + "\n")
	}
	if len(items) == 0 {
		d.p("No articles found.")
	}
	c.pagerHTML(d, l.page, pages(len(items), n.per), func(pg int) string {
		m := l
		m.page = pg
		return n.listURI(m, false, pg == 1 && n.pageExplicit)
	}, trap || l.kind != lkSection)

	// Related tags: those that co-occur with the current ones.
	if l.kind == lkTag {
		cnt := make([]int, len(n.tags))
		for _, i := range items {
			for _, t := range n.arts[i].tags {
				if !slices.Contains(l.tags, t) {
					cnt[t]++
				}
			}
		}
		var lis []string
		for _, t := range topN(cnt, 8) {
			m := nlist{kind: lkTag, tags: append(slices.Clone(l.tags), t), page: 1}
			lis = append(lis, c.va(n.listURI(m, false, false), "+ "+n.tags[t].name))
		}
		if len(lis) > 0 {
			d.h2("Related tags")
			d.ul("related-tags", lis)
		}
	}
	if f, ok := n.asFilter(l); ok {
		n.narrowBox(d, f, items)
	}
	n.sidebar(d, -1)
}

// topN returns the indexes of the n largest positive counts, largest
// first, ties by index.
func topN(cnt []int, n int) []int {
	var idx []int
	for i, k := range cnt {
		if k > 0 {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cnt[b] - cnt[a] })
	if len(idx) > n {
		idx = idx[:n]
	}
	return idx
}

// narrowBox links the filter list narrowed by one more value, or widened
// by removing one.
func (n *news) narrowBox(d *doc, f nlist, items []int) {
	c := n.c
	d.raw("<div class=\"narrow\">\n<h2>Narrow by</h2>\n")
	for fi, fl := range n.filts {
		var lis []string
		if f.fv[fi] >= 0 {
			m := f
			m.fv = slices.Clone(f.fv)
			m.fv[fi] = -1
			lis = append(lis, esc(n.filterLabel(fl.kind, f.fv[fi]))+" "+c.ac(n.listURI(m, false, false), "✕", "remove", true))
		} else {
			cnt := make([]int, n.filterValues(fl.kind))
			for _, i := range items {
				for _, v := range n.artValue(&n.arts[i], fl.kind) {
					cnt[v]++
				}
			}
			for _, v := range topN(cnt, 6) {
				m := f
				m.fv = slices.Clone(f.fv)
				m.fv[fi] = v
				lis = append(lis, c.va(n.listURI(m, false, false), n.filterLabel(fl.kind, v))+fmt.Sprintf(" (%d)", cnt[v]))
			}
		}
		if len(lis) > 0 {
			d.printf("<h4>%s</h4>\n", esc(title(fl.name)))
			d.ul("narrow-"+fl.name, lis)
		}
	}
	d.raw("</div>\n")
}

func (n *news) byline(i int) string {
	c := n.c
	a := &n.arts[i]
	return "By " + c.a(n.listURI(nlist{kind: lkAuthor, key: a.author, page: 1}, false, false), n.authors[a.author].name) +
		" · " + c.a(n.listURI(nlist{kind: lkArchive, key: n.ym(a), page: 1}, false, false), a.t.Format("2 January 2006")) +
		" · " + esc(n.types[a.typ].name)
}

func (n *news) body(i int) []string {
	a := &n.arts[i]
	r := n.c.rng("article", a.id)
	return n.c.v.prose(r, r.between(2, 8), a.title)
}

func (n *news) articlePage(d *doc, i int) {
	c := n.c
	a := &n.arts[i]
	d.title = a.title
	d.tmpl = "article"
	sec := nlist{kind: lkSection, key: a.sec, page: 1}
	d.crumbs = []string{c.a("/", "Home"), c.a(n.listURI(sec, false, false), n.secs[a.sec].name)}
	if n.amp != 0 {
		d.head = append(d.head, `<link rel="amphtml" href="`+esc(n.ampURI(i))+`">`)
	}
	d.raw("<article class=\"story\">\n")
	d.h1(a.title)
	d.printf("<p class=\"byline\">%s</p>\n", n.byline(i))
	for _, para := range n.body(i) {
		d.p(para)
	}
	var tl []string
	for _, t := range a.tags {
		tl = append(tl, c.a(n.listURI(nlist{kind: lkTag, tags: []int{t}, page: 1}, false, false), n.tags[t].name))
	}
	d.printf("<p class=\"tags\">Tags: %s</p>\n", strings.Join(tl, ", "))
	if c.hint.everywhere {
		m := nlist{kind: lkTag, tags: a.tags[:2], page: 1}
		d.printf("<p class=\"more\">%s</p>\n", c.va(n.listURI(m, false, false), "More on "+n.tags[a.tags[0]].name+" and "+n.tags[a.tags[1]].name))
	}
	if n.ampVisible {
		d.printf("<p class=\"amp-link\">%s</p>\n", c.va(n.ampURI(i), "Mobile (AMP) version"))
	}
	d.raw("</article>\n")
	// Previous and next in the section, then related articles.
	sitems := n.items(sec)
	k := slices.Index(sitems, i)
	var pn []string
	if k+1 < len(sitems) {
		pn = append(pn, "« "+c.a(n.artURI(sitems[k+1]), n.arts[sitems[k+1]].title))
	}
	if k > 0 {
		pn = append(pn, c.a(n.artURI(sitems[k-1]), n.arts[sitems[k-1]].title)+" »")
	}
	d.printf("<nav class=\"prev-next\">%s</nav>\n", strings.Join(pn, " | "))
	d.h2("Related")
	var rel []string
	for j := k + 2; j < len(sitems) && len(rel) < 4; j += 3 {
		rel = append(rel, c.a(c.trackLink(n.artURI(sitems[j]), "related"), n.arts[sitems[j]].title))
	}
	d.ul("related", rel)
	n.sidebar(d, i)
}

func (n *news) ampPage(d *doc, i int) {
	c := n.c
	a := &n.arts[i]
	d.mode = modeAMP
	d.title = a.title
	d.tmpl = "amp-article"
	d.h1(a.title)
	d.printf("<p class=\"byline\">By %s · %s</p>\n", esc(n.authors[a.author].name), a.t.Format("2 January 2006"))
	for _, para := range n.body(i) {
		d.p(para)
	}
	d.printf("<p>%s</p>\n", c.a(n.artURI(i), "View the full article"))
}

func (n *news) home(d *doc) {
	c := n.c
	d.title = "Latest news"
	d.tmpl = "home"
	d.h1(c.name)
	latest := n.order[0]
	d.raw("<section class=\"lead\">\n" + n.teaser(latest[0], "home") + "\n</section>\n")
	d.h2("Latest")
	for _, i := range latest[1:11] {
		d.raw(n.teaser(i, "") + "\n")
	}
	for s := range n.secs {
		l := nlist{kind: lkSection, key: s, page: 1}
		its := n.items(l)
		d.h2(n.secs[s].name)
		var lis []string
		for _, i := range its[:min(3, len(its))] {
			lis = append(lis, c.a(n.artURI(i), n.arts[i].title))
		}
		d.ul("section-block", lis)
		d.printf("<p>%s</p>\n", c.a(n.listURI(l, false, false), "More "+n.secs[s].name+" »"))
	}
	n.sidebar(d, -1)
}

func (n *news) sidebar(d *doc, art int) {
	c := n.c
	for _, w := range n.boxes {
		switch w {
		case "latest":
			b := box{title: "Latest", cls: "recent"}
			for _, i := range n.order[0][:5] {
				b.items = append(b.items, c.a(n.artURI(i), n.arts[i].title))
			}
			d.side = append(d.side, b)
		case "popular":
			b := box{title: "Most read", cls: "popular"}
			for _, i := range n.mostRead {
				b.items = append(b.items, c.a(c.trackLink(n.artURI(i), "mostread"), n.arts[i].title))
			}
			d.side = append(d.side, b)
		case "tags":
			b := box{title: "Topics", cls: "tag-cloud", cloud: true}
			for _, t := range n.cloud {
				b.items = append(b.items, c.a(n.listURI(nlist{kind: lkTag, tags: []int{t}, page: 1}, false, false), n.tags[t].name))
			}
			d.side = append(d.side, b)
		case "archive":
			b := box{title: "Archives", cls: "archive"}
			for _, m := range n.months {
				b.items = append(b.items, c.a(n.listURI(nlist{kind: lkArchive, key: m, page: 1}, false, false),
					time.Month(m%100).String()+" "+strconv.Itoa(m/100)))
			}
			d.side = append(d.side, b)
		}
	}
	if c.hint.everywhere && art >= 0 {
		a := &n.arts[art]
		f, _ := n.asFilter(nlist{kind: lkSection, key: a.sec})
		for fi, fl := range n.filts {
			if fl.kind == nfTag {
				f.fv[fi] = a.tags[0]
			}
		}
		d.side = append(d.side, box{title: "Explore", cls: "explore",
			items: []string{c.va(n.listURI(f, false, false), n.secs[a.sec].name+": "+n.tags[a.tags[0]].name)}})
	}
}

func (n *news) describe() string {
	ex := nlist{kind: lkFilter, fv: make([]int, len(n.filts)), page: 1}
	var fn []string
	for fi, f := range n.filts {
		ex.fv[fi] = -1
		if fi < 2 {
			ex.fv[fi] = 0
		}
		fn = append(fn, f.name)
	}
	var so []string
	for _, o := range n.sorts {
		so = append(so, o.name)
	}
	amp := "no AMP"
	if n.amp != 0 {
		amp = "AMP copies like " + n.ampURI(0)
	}
	return fmt.Sprintf("News site of %d articles in %d sections, %d tags, %d authors; articles like %s; sections like %s; "+
		"tags like %s, intersections like %s; authors like %s; archives like %s; filter list %s with ?%s (e.g. %s); "+
		"sort ?%s= (%s); pages %s with %d per page; %s. Real: home, articles, every page of every section, page 1 of each tag, "+
		"author and month.",
		len(n.arts), len(n.secs), len(n.tags), len(n.authors), n.artURI(0), n.listURI(nlist{kind: lkSection, page: 1}, false, false),
		n.listURI(nlist{kind: lkTag, tags: []int{0}, page: 1}, false, false), n.listURI(nlist{kind: lkTag, tags: []int{0, 1}, page: 1}, false, false),
		n.listURI(nlist{kind: lkAuthor, page: 1}, false, false), n.listURI(nlist{kind: lkArchive, key: n.months[0], page: 1}, false, false),
		n.filtBase, strings.Join(fn, "/"), n.listURI(ex, false, false), n.sortP, strings.Join(so, ", "), n.pg.describe(n.per), n.per, amp)
}
