package gensite

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A shop is a faceted catalogue. Its real pages are the home page, every
// product, every page of the whole catalogue and every page of each
// single-facet-value list (all under the default sort), and the footer
// pages. Every list of two or more facet values at once, every other sort
// order, and every default value written out are traps.
type shop struct {
	c        *common
	facets   []facet
	products []product
	order    [][]int // product indexes in each sort's order
	byValue  map[string][2]int
	byID     map[int]int
	bySlug   map[string]int
	listBase string
	fstyle   int
	nsep     string
	pg       pageStyle
	per      int
	sortP    string
	sorts    []sortOpt // sorts[0] is the default
	// sortExplicit: the sort bar's link to the default order writes it
	// out; pageExplicit: the pager's link to page 1 writes page 1 out.
	sortExplicit, pageExplicit bool
	perP                       string
	perVals                    []int // page sizes; perVals[0] is the default
	modeP                      string
	modes                      []string // display modes; modes[0] is the default
	cartStyle                  int      // 0: /cart/add/ID; 1: /cart?add=ID; 2: ?add-to-cart=ID on any page
	cartSeg, cartP, wishSeg    string
	prodStyle                  int
	prodSeg, prodParam         string
	gone                       []int // ids of discontinued products still linked (404)
	combos                     [][]int
	count                      [][]int // products per facet value
	newest8, best5             []int
	boxes                      []string
}

const (
	fsQuery  = iota // /shop?color=red&size=9
	fsNamed         // /shop/color-red/size-9/
	fsValues        // /c/red/9/
)

type facet struct {
	name, label string
	values      []fval
}

type fval struct{ slug, label string }

type product struct {
	id                int
	name, slug        string
	vals              []int
	price, added, pop int
	rating, reviews   int
	feat              uint64
}

var facetConcepts = []struct {
	names  []string
	label  string
	values [][]string
}{
	{[]string{"color", "colour", "c", "col", "f_color"}, "Colour", [][]string{{"red", "blue", "green", "black", "white", "navy", "olive", "beige", "grey", "teal", "pink", "ochre"}}},
	{[]string{"size", "f_size", "sz", "s_size"}, "Size", [][]string{{"xs", "s", "m", "l", "xl", "xxl"}, {"36", "37", "38", "39", "40", "41", "42", "43", "44", "45"}, {"6", "7", "8", "9", "10", "11", "12"}}},
	{[]string{"fabric", "material", "mat", "f_material"}, "Material", [][]string{{"cotton", "wool", "linen", "silk", "denim", "leather", "polyester", "bamboo", "cashmere"}}},
	{[]string{"style", "fit", "cut"}, "Fit", [][]string{{"slim", "regular", "relaxed", "classic", "loose", "tapered", "oversized"}}},
	{[]string{"pattern", "motif"}, "Pattern", [][]string{{"plain", "striped", "checked", "dotted", "floral", "paisley", "camo"}}},
	{[]string{"brand", "b", "maker", "mfr"}, "Brand", nil},
	{nil, "", nil},
	{nil, "", nil},
}

var shopSorts = []struct {
	names []string
	label string
}{
	{[]string{"featured", "relevance", "recommended", "default"}, "Featured"},
	{[]string{"newest", "new", "latest", "date"}, "Newest"},
	{[]string{"price_asc", "price-asc", "price", "low"}, "Price: low to high"},
	{[]string{"price_desc", "price-desc", "-price", "high"}, "Price: high to low"},
	{[]string{"name", "title", "az", "alpha"}, "Name A–Z"},
	{[]string{"popular", "popularity", "bestselling", "top"}, "Best selling"},
	{[]string{"rating", "rated", "stars", "reviews"}, "Top rated"},
}

func newShop(c *common) (*shop, error) {
	for attempt := 0; attempt < 400; attempt++ {
		s := drawShop(c, attempt)
		if n := s.realCount(); n >= 250 && n <= 700 {
			return s, nil
		}
	}
	return nil, errors.New("gensite: could not draw a shop of 250–700 real pages")
}

func drawShop(c *common, attempt int) *shop {
	// Names claimed by a failed attempt are released again.
	c.usedParams = map[string]bool{}
	c.usedPaths = map[string]bool{firstSeg(c.footer[0].path): true}
	r := c.rng("shop", attempt)
	v := c.v
	s := &shop{c: c, byValue: map[string][2]int{}, byID: map[int]int{}, bySlug: map[string]int{}}
	s.fstyle = r.intn(3)
	s.nsep = pick(r, []string{"-", "_", "~", ":"})

	// Facets: 3–5 concepts, each with 3–8 values unique across facets.
	nf := r.between(3, 5)
	concepts := sample(r, []int{0, 1, 2, 3, 4, 5, 6, 7}, nf)
	slices.Sort(concepts)
	for _, ci := range concepts {
		fc := facetConcepts[ci]
		f := facet{}
		if fc.names != nil {
			f.name = c.param(r, fc.names...)
			f.label = fc.label
		} else {
			w := v.name(r)
			f.label = title(w)
			f.name = c.param(r, pick(r, []string{"", "f_", "attr_", "pa_"})+w)
		}
		nv := r.between(3, 8)
		var pool []string
		if fc.values != nil {
			pool = pick(r, fc.values)
		}
		for len(f.values) < nv {
			var val string
			if len(pool) > 0 {
				val, pool = pool[0], pool[1:]
				if r.chance(0.3) && len(pool) > 0 {
					continue // skip some so the values differ per seed
				}
			} else {
				val = v.name(r)
			}
			if _, dup := s.byValue[val]; dup || val == s.nsep {
				continue
			}
			s.byValue[val] = [2]int{len(s.facets), len(f.values)}
			lab := title(val)
			if fc.label == "Size" {
				lab = strings.ToUpper(val)
			}
			f.values = append(f.values, fval{slug: val, label: lab})
		}
		s.facets = append(s.facets, f)
	}
	if s.fstyle == fsNamed {
		for _, f := range s.facets {
			if strings.Contains(f.name, s.nsep) {
				s.nsep = "-"
			}
		}
		for _, f := range s.facets {
			if strings.Contains(f.name, s.nsep) {
				s.fstyle = fsValues
			}
		}
	}

	// Where lists live and how they page.
	if s.fstyle == fsQuery {
		s.listBase = pick(r, []string{"/shop", "/catalog", "/products", "/search", "/catalog.php", "/shop/", "/store/", "/collections/all"})
	} else {
		s.listBase = pick(r, []string{"/shop/", "/catalog/", "/products/", "/c/", "/store/", "/browse/", "/collections/all/", "/all/"})
	}
	c.usedPaths[firstSeg(s.listBase)] = true
	s.pg = c.drawPageStyle(r, strings.HasSuffix(s.listBase, "/"))
	s.per = pick(r, []int{20, 24, 30, 36, 40})
	s.sortP = c.param(r, "sort", "order", "orderby", "sort_by", "sortby", "o", "dir")
	for _, i := range sample(r, []int{0, 1, 2, 3, 4, 5, 6}, r.between(2, 4)) {
		s.sorts = append(s.sorts, sortOpt{name: pick(r, shopSorts[i].names), label: shopSorts[i].label, key: i})
	}
	s.sortExplicit = r.chance(0.5)
	s.pageExplicit = r.chance(0.4)
	s.perP = c.param(r, "limit", "per_page", "show", "n", "ipp", "count", "product_list_limit")
	s.perVals = []int{s.per}
	for _, m := range sample(r, []int{2, 3, 4}, r.between(1, 2)) {
		s.perVals = append(s.perVals, s.per*m)
	}
	s.modes = []string{"grid"}
	if r.chance(0.5) {
		s.modeP = c.param(r, "mode", "view", "display", "layout", "product_list_mode")
		s.modes = pick(r, [][]string{{"grid", "list"}, {"gallery", "list"}, {"grid", "list", "compact"}})
	}
	s.cartStyle = r.intn(3)
	s.cartSeg = c.segment(r, "cart", "basket", "bag")
	if s.cartStyle != 0 {
		s.cartP = c.param(r, "add", "add-to-cart", "add_to_cart", "buy", "product_id")
	}
	if r.chance(0.5) {
		s.wishSeg = c.segment(r, "wishlist", "favorites", "saved")
	}

	// Products.
	s.prodStyle = r.intn(5)
	switch s.prodStyle {
	case 0, 1, 2:
		s.prodSeg = c.segment(r, "product", "item", "p", "dp", "products", "article")
	case 3:
		s.prodSeg = pick(r, []string{"item.php", "product.php", "p", "view"})
		c.usedPaths[s.prodSeg] = true
		s.prodParam = c.param(r, "id", "pid", "product_id", "sku")
	}
	np := r.between(200, 600)
	id := r.between(100, 90000)
	for i := 0; i < np; i++ {
		id += 1 + r.skewed(12, 3)
		words := r.between(2, 4)
		var name string
		for {
			name = v.phrase(r, words)
			if _, dup := s.bySlug[slug(name)]; !dup {
				break
			}
		}
		p := product{id: id, name: titleWords(name), slug: slug(name), price: 500 + r.skewed(40000, 2), added: r.intn(1000),
			pop: r.skewed(5000, 3), rating: 20 + r.intn(31), reviews: r.skewed(400, 2), feat: r.next()}
		for _, f := range s.facets {
			p.vals = append(p.vals, r.skewed(len(f.values), 1.3))
		}
		s.byID[p.id] = i
		s.bySlug[p.slug] = i
		s.products = append(s.products, p)
	}
	for i := 0; i < r.between(0, 4); i++ {
		s.gone = append(s.gone, id+1+r.intn(500))
	}
	s.order = make([][]int, len(s.sorts))
	for si, so := range s.sorts {
		idx := make([]int, np)
		for i := range idx {
			idx[i] = i
		}
		ps := s.products
		slices.SortStableFunc(idx, func(a, b int) int {
			pa, pb := &ps[a], &ps[b]
			var d int
			switch so.key {
			case 0:
				d = cmpU(pa.feat, pb.feat)
			case 1:
				d = pb.added - pa.added
			case 2:
				d = pa.price - pb.price
			case 3:
				d = pb.price - pa.price
			case 4:
				d = strings.Compare(pa.name, pb.name)
			case 5:
				d = pb.pop - pa.pop
			case 6:
				d = pb.rating - pa.rating
			}
			if d == 0 {
				d = pa.id - pb.id
			}
			return d
		})
		s.order[si] = idx
	}

	s.count = make([][]int, nf)
	for fi := range s.facets {
		s.count[fi] = make([]int, len(s.facets[fi].values))
		for _, p := range s.products {
			s.count[fi][p.vals[fi]]++
		}
	}
	s.newest8 = s.newest(8)
	s.best5 = s.best(5)
	// Sidebar widgets and the "popular combinations" drawn once.
	s.boxes = sample(r, []string{"categories", "facet2", "new", "best"}, r.between(2, 4))
	if !slices.Contains(s.boxes, "categories") {
		s.boxes[0] = "categories"
	}
	for len(s.combos) < 6 {
		p := s.products[r.intn(np)]
		fa, fb := r.intn(nf), r.intn(nf)
		if fa == fb {
			continue
		}
		sel := s.none()
		sel[fa], sel[fb] = p.vals[fa], p.vals[fb]
		s.combos = append(s.combos, sel)
	}
	nav := []string{c.a("/", "Home"), c.a(s.plain(s.none()), "All products"), c.a("/"+s.cartSeg, "Cart")}
	for vi, fv := range s.facets[0].values {
		if vi < 6 {
			sel := s.none()
			sel[0] = vi
			nav = append(nav, c.a(s.plain(sel), fv.label))
		}
	}
	c.nav = nav
	c.sidebar = func(d *doc) { s.sidebar(d, -1, false) }
	return s
}

func cmpU(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (s *shop) none() []int {
	sel := make([]int, len(s.facets))
	for i := range sel {
		sel[i] = -1
	}
	return sel
}

// items returns the products of a selection in sort order si.
func (s *shop) items(sel []int, si int) []int {
	var out []int
	for _, i := range s.order[si] {
		if s.matches(i, sel) {
			out = append(out, i)
		}
	}
	return out
}

func (s *shop) matches(i int, sel []int) bool {
	p := &s.products[i]
	for fi, v := range sel {
		if v >= 0 && p.vals[fi] != v {
			return false
		}
	}
	return true
}

func (s *shop) realCount() int { return len(s.realPages()) }

func (s *shop) realPages() []string {
	out := []string{"/"}
	out = append(out, s.c.footerPages()...)
	for i := range s.products {
		out = append(out, s.productURI(i))
	}
	add := func(sel []int) {
		n := pages(len(s.items(sel, 0)), s.per)
		for pg := 1; pg <= n; pg++ {
			out = append(out, s.listURI(slist{sel: sel, pg: pg}, 0))
		}
	}
	add(s.none())
	for fi, f := range s.facets {
		for vi := range f.values {
			sel := s.none()
			sel[fi] = vi
			if s.count[fi][vi] > 0 {
				add(sel)
			}
		}
	}
	return out
}

// slist is one list view: a selection (a value index per facet, -1 for
// none), a sort, a page size, a display mode and a page.
type slist struct {
	sel            []int
	si, pi, mi, pg int
}

func (s *shop) list(sel []int) slist { return slist{sel: sel, pg: 1} }

// Which defaults a link writes out.
const (
	exSort = 1 << iota
	exPer
	exMode
	exPage
)

// listURI writes a list view; ex names the default values written out.
func (s *shop) listURI(l slist, ex int) string {
	path := s.listBase
	var q qs
	for fi, vi := range l.sel {
		if vi < 0 {
			continue
		}
		f := s.facets[fi]
		switch s.fstyle {
		case fsQuery:
			q = append(q, kv{f.name, f.values[vi].slug})
		case fsNamed:
			path += f.name + s.nsep + f.values[vi].slug + "/"
		case fsValues:
			path += f.values[vi].slug + "/"
		}
	}
	if l.si != 0 || ex&exSort != 0 {
		q = append(q, kv{s.sortP, s.sorts[l.si].name})
	}
	if l.pi != 0 || ex&exPer != 0 {
		q = append(q, kv{s.perP, strconv.Itoa(s.perVals[l.pi])})
	}
	if s.modeP != "" && (l.mi != 0 || ex&exMode != 0) {
		q = append(q, kv{s.modeP, s.modes[l.mi]})
	}
	return s.pg.apply(path, q, l.pg, s.perVals[l.pi], ex&exPage != 0)
}

// plain is the list of one selection under every default, page 1.
func (s *shop) plain(sel []int) string { return s.listURI(s.list(sel), 0) }

func (s *shop) productURI(i int) string {
	p := &s.products[i]
	return s.productURIOf(p.id, p.slug)
}

func (s *shop) productURIOf(id int, sl string) string {
	ids := strconv.Itoa(id)
	switch s.prodStyle {
	case 0:
		return "/" + s.prodSeg + "/" + sl + "-" + ids
	case 1:
		return "/" + s.prodSeg + "/" + ids + "/" + sl
	case 2:
		return "/" + s.prodSeg + "/" + sl + ".html"
	case 3:
		return uri("/"+s.prodSeg, qs{{s.prodParam, ids}})
	}
	return "/" + sl + "-p" + ids + ".html"
}

// routeProduct decodes a product URL.
func (s *shop) routeProduct(path string, p *params) (int, bool) {
	byID := func(ids, sl string) (int, bool) {
		id, ok := atoi(ids)
		if !ok {
			return 0, false
		}
		i, ok := s.byID[id]
		if !ok || (sl != "" && s.products[i].slug != sl) {
			return 0, false
		}
		return i, true
	}
	switch s.prodStyle {
	case 0, 1, 2:
		rest, ok := strings.CutPrefix(path, "/"+s.prodSeg+"/")
		if !ok {
			return 0, false
		}
		switch s.prodStyle {
		case 0:
			j := strings.LastIndex(rest, "-")
			if j < 0 {
				return 0, false
			}
			return byID(rest[j+1:], rest[:j])
		case 1:
			ids, sl, ok := strings.Cut(rest, "/")
			if !ok {
				return 0, false
			}
			return byID(ids, sl)
		}
		sl, ok := strings.CutSuffix(rest, ".html")
		if !ok {
			return 0, false
		}
		i, ok := s.bySlug[sl]
		return i, ok
	case 3:
		if path != "/"+s.prodSeg {
			return 0, false
		}
		ids, ok := p.get(s.prodParam)
		if !ok {
			return 0, false
		}
		return byID(ids, "")
	}
	rest, ok := strings.CutSuffix(strings.TrimPrefix(path, "/"), ".html")
	if !ok {
		return 0, false
	}
	j := strings.LastIndex(rest, "-p")
	if j < 0 {
		return 0, false
	}
	return byID(rest[j+2:], rest[:j])
}

func (s *shop) route(path string, p *params) *resolved {
	if path == "/"+s.cartSeg || (s.wishSeg != "" && path == "/"+s.wishSeg) {
		return s.routeCart(path, p)
	}
	if s.cartStyle == 0 || s.wishSeg != "" {
		for _, seg := range []string{s.cartSeg, s.wishSeg} {
			if v, ok := strings.CutPrefix(path, "/"+seg+"/add/"); ok && seg != "" && (seg != s.cartSeg || s.cartStyle == 0) {
				return s.cartAdd(seg, v, path)
			}
		}
	}
	if s.cartStyle == 2 && p.has(s.cartP) {
		// Add-to-cart on any page: the page itself with a notice.
		v, _ := p.get(s.cartP)
		id, ok := atoi(v)
		if _, known := s.byID[id]; !ok || !known {
			return nil
		}
		res := s.route0(path, p)
		if res == nil {
			return nil
		}
		inner := res.render
		base := res.canon
		if res.family != "" && res.real == "" {
			base = res.base
		}
		return &resolved{family: FamAction, canon: addParam(res.canon, s.cartP, v), base: base, render: func(d *doc) {
			inner(d)
			d.b.WriteString("<div class=\"notice\">Please log in to add items to your cart.</div>\n")
		}}
	}
	return s.route0(path, p)
}

func (s *shop) routeCart(path string, p *params) *resolved {
	if path == "/"+s.cartSeg && s.cartStyle == 1 && p.has(s.cartP) {
		v, _ := p.get(s.cartP)
		return s.cartAdd(s.cartSeg, v, path)
	}
	if !p.empty() {
		return nil
	}
	return &resolved{family: FamAction, canon: path, render: func(d *doc) { s.cartPage(d, path, -1) }}
}

func (s *shop) cartAdd(seg, v, path string) *resolved {
	id, ok := atoi(v)
	if !ok {
		return nil
	}
	i, ok := s.byID[id]
	if !ok {
		return nil
	}
	canon := "/" + seg + "/add/" + v
	if seg == s.cartSeg && s.cartStyle == 1 {
		canon = uri("/"+seg, qs{{s.cartP, v}})
	}
	return &resolved{family: FamAction, canon: canon, render: func(d *doc) { s.cartPage(d, "/"+seg, i) }}
}

func (s *shop) cartPage(d *doc, path string, i int) {
	c := s.c
	name := "Shopping cart"
	if path == "/"+s.wishSeg {
		name = "Wishlist"
	}
	d.title = name
	d.tmpl = "cart"
	d.crumbs = []string{c.a("/", "Home"), esc(name)}
	d.h1(name)
	if i >= 0 {
		d.printf("<p class=\"notice\">Please log in to add %s to your %s.</p>\n", c.a(s.productURI(i), s.products[i].name), strings.ToLower(name))
	} else {
		d.p("Your " + strings.ToLower(name) + " is empty.")
	}
	d.printf("<p>%s</p>\n", c.a(s.plain(s.none()), "Continue shopping"))
	s.sidebar(d, -1, false)
}

func (s *shop) route0(path string, p *params) *resolved {
	c := s.c
	if path == "/" && p.empty() {
		return &resolved{canon: "/", render: s.home}
	}
	if res := c.footerRoute(path); res != nil {
		return res
	}
	if i, ok := s.routeProduct(path, p); ok {
		return &resolved{canon: s.productURI(i), render: func(d *doc) { s.productPage(d, i) }}
	}
	return s.routeList(path, p)
}

func (s *shop) routeList(path string, p *params) *resolved {
	base, page, pathPaged := s.pg.stripPath(path)
	if page == 0 {
		return nil
	}
	ex := 0
	if pathPaged && page == 1 {
		ex |= exPage
	}
	l := s.list(s.none())
	switch s.fstyle {
	case fsQuery:
		if base != s.listBase {
			return nil
		}
		for fi, f := range s.facets {
			if v, ok := p.get(f.name); ok {
				fv, ok := s.byValue[v]
				if !ok || fv[0] != fi {
					return nil
				}
				l.sel[fi] = fv[1]
			}
		}
	default:
		rest, ok := strings.CutPrefix(base, s.listBase)
		if !ok {
			return nil
		}
		if rest != "" {
			seg, ok := strings.CutSuffix(rest, "/")
			if !ok {
				return nil
			}
			for _, sg := range strings.Split(seg, "/") {
				fi, vi := -1, -1
				if s.fstyle == fsValues {
					if fv, ok := s.byValue[sg]; ok {
						fi, vi = fv[0], fv[1]
					}
				} else {
					for j, f := range s.facets {
						if v, ok := strings.CutPrefix(sg, f.name+s.nsep); ok {
							if fv, ok := s.byValue[v]; ok && fv[0] == j {
								fi, vi = j, fv[1]
							}
						}
					}
				}
				if fi < 0 || l.sel[fi] >= 0 {
					return nil
				}
				l.sel[fi] = vi
			}
		}
	}
	if v, ok := p.get(s.sortP); ok {
		l.si = slices.IndexFunc(s.sorts, func(o sortOpt) bool { return o.name == v })
		if l.si < 0 {
			return nil
		}
		if l.si == 0 {
			ex |= exSort
		}
	}
	if v, ok := p.get(s.perP); ok {
		n, _ := atoi(v)
		l.pi = slices.Index(s.perVals, n)
		if l.pi < 0 {
			return nil
		}
		if l.pi == 0 {
			ex |= exPer
		}
	}
	if v, ok := p.get(s.modeP); ok {
		l.mi = slices.Index(s.modes, v)
		if l.mi < 0 {
			return nil
		}
		if l.mi == 0 {
			ex |= exMode
		}
	}
	per := s.perVals[l.pi]
	if !pathPaged {
		var explicit bool
		page, explicit = s.pg.fromQuery(p, per)
		if page == 0 {
			return nil
		}
		if explicit && page == 1 {
			ex |= exPage
		}
	}
	l.pg = page
	items := s.items(l.sel, l.si)
	if page > pages(len(items), per) {
		return nil
	}
	k := s.selected(l.sel)
	res := &resolved{canon: s.listURI(l, 0)}
	def := slist{sel: l.sel, pg: 1}
	switch {
	case k >= 2:
		res.family = FamFacet
	case k == 1 && len(items) == 0:
		return nil // a value with no products is never listed alone
	case l.si != 0:
		res.family = FamSort
		res.base = s.listURI(def, 0)
	case l.pi != 0:
		res.family = FamPerPage
		res.base = s.listURI(def, 0)
	case l.mi != 0:
		res.family = FamViewMode
		res.base = s.listURI(def, 0)
	case ex != 0:
		res.family = FamDefault
		res.real = res.canon
	}
	res.render = func(d *doc) { s.listPage(d, l, items) }
	return res
}

func (s *shop) selected(sel []int) int {
	k := 0
	for _, v := range sel {
		if v >= 0 {
			k++
		}
	}
	return k
}

func (s *shop) price(p *product) string {
	return fmt.Sprintf("$%d.%02d", p.price/100, p.price%100)
}

func (s *shop) selLabel(sel []int) string {
	var parts []string
	for fi, vi := range sel {
		if vi >= 0 {
			parts = append(parts, s.facets[fi].values[vi].label)
		}
	}
	if len(parts) == 0 {
		return "All products"
	}
	return strings.Join(parts, ", ")
}

// card is a product teaser; here is the canonical URI of the page it is
// on (where a WooCommerce-like add-to-cart link points).
func (s *shop) card(i int, place, here string) string {
	p := &s.products[i]
	href := s.productURI(i)
	if place != "" {
		href = s.c.trackLink(href, place)
	}
	snip := s.c.v.snippet(s.c.rng("psnip", p.id))
	buttons := ""
	if s.cartStyle != 2 {
		// A cart that adds through the page's own URL does so on product
		// pages only.
		buttons = " " + s.buttons(i, here)
	}
	return `<article class="product-card"><h3>` + s.c.a(href, p.name) + `</h3><p>` + esc(snip) +
		`</p><span class="price">` + s.price(p) + `</span>` + buttons + `</article>`
}

// buttons are the cart and wishlist links of product i on page here.
func (s *shop) buttons(i int, here string) string {
	c := s.c
	id := strconv.Itoa(s.products[i].id)
	var cart string
	switch s.cartStyle {
	case 0:
		cart = "/" + s.cartSeg + "/add/" + id
	case 1:
		cart = uri("/"+s.cartSeg, qs{{s.cartP, id}})
	default:
		cart = addParam(here, s.cartP, id)
	}
	out := c.ac(cart, "Add to cart", "add-to-cart", true)
	if s.wishSeg != "" {
		out += " " + c.ac("/"+s.wishSeg+"/add/"+id, "♡ Wishlist", "wishlist", true)
	}
	return out
}

func (s *shop) listPage(d *doc, l slist, items []int) {
	c := s.c
	lab := s.selLabel(l.sel)
	d.title = lab
	if l.pg > 1 {
		d.title += " – Page " + strconv.Itoa(l.pg)
	}
	d.tmpl = "catalog"
	d.crumbs = []string{c.a("/", "Home"), c.a(s.plain(s.none()), "All products")}
	if lab != "All products" {
		d.crumbs = append(d.crumbs, esc(lab))
	}
	d.h1(lab)
	d.printf("<p class=\"count\">%d products</p>\n", len(items))
	here := s.listURI(l, 0)

	// The filter panel: refine by one more value, or remove a value. The
	// view's sort, page size and mode are kept.
	d.raw("<div class=\"filters\">\n")
	k := s.selected(l.sel)
	other := l.si != 0 || l.pi != 0 || l.mi != 0
	for fi, f := range s.facets {
		d.printf("<h4>%s</h4>\n", esc(f.label))
		var lis []string
		if l.sel[fi] >= 0 {
			m := l
			m.sel = slices.Clone(l.sel)
			m.sel[fi] = -1
			m.pg = 1
			lis = append(lis, esc(f.values[l.sel[fi]].label)+" "+c.ac(s.listURI(m, 0), "✕ remove", "remove", k-1 >= 2 || other))
		} else {
			counts := make([]int, len(f.values))
			for _, i := range items {
				counts[s.products[i].vals[fi]]++
			}
			for vi, fv := range f.values {
				if counts[vi] == 0 {
					continue
				}
				m := l
				m.sel = slices.Clone(l.sel)
				m.sel[fi] = vi
				m.pg = 1
				lis = append(lis, c.ac(s.listURI(m, 0), fv.label, "refine", k+1 >= 2 || other)+
					fmt.Sprintf(" <span>(%d)</span>", counts[vi]))
			}
		}
		d.ul("facet", lis)
	}
	d.raw("</div>\n")

	// The toolbar: sort, page size, display mode.
	bar := func(label string, names []string, cur int, set func(m *slist, i int), flag int) {
		var sb []string
		for i, nm := range names {
			if i == cur {
				sb = append(sb, "<strong>"+esc(nm)+"</strong>")
				continue
			}
			m := l
			m.pg = 1
			set(&m, i)
			ex := 0
			if i == 0 && s.sortExplicit {
				ex = flag
			}
			if k < 2 && m.si == 0 && m.pi == 0 && m.mi == 0 {
				sb = append(sb, c.a(s.listURI(m, ex), nm))
			} else {
				sb = append(sb, c.va(s.listURI(m, ex), nm))
			}
		}
		d.printf("<p class=\"toolbar\">%s %s</p>\n", label, strings.Join(sb, " · "))
	}
	var names []string
	for _, o := range s.sorts {
		names = append(names, o.label)
	}
	bar("Sort by:", names, l.si, func(m *slist, i int) { m.si = i }, exSort)
	names = nil
	for _, n := range s.perVals {
		names = append(names, strconv.Itoa(n))
	}
	bar("Show:", names, l.pi, func(m *slist, i int) { m.pi = i }, exPer)
	if s.modeP != "" {
		bar("View:", s.modes, l.mi, func(m *slist, i int) { m.mi = i }, exMode)
	}

	per := s.perVals[l.pi]
	d.printf("<div class=\"%s\">\n", s.modes[l.mi])
	for _, i := range window(items, l.pg, per) {
		d.raw(s.card(i, "", here) + "\n")
	}
	if len(items) == 0 {
		d.p("No products match your selection.")
	}
	d.raw("</div>\n")
	c.pagerHTML(d, l.pg, pages(len(items), per), func(n int) string {
		m := l
		m.pg = n
		ex := 0
		if n == 1 && s.pageExplicit {
			ex = exPage
		}
		return s.listURI(m, ex)
	}, k >= 2 || other)
	s.sidebar(d, -1, true)
}

func (s *shop) productPage(d *doc, i int) {
	c := s.c
	p := &s.products[i]
	r := c.rng("product", p.id)
	here := s.productURI(i)
	d.title = p.name
	d.tmpl = "product"
	first := s.none()
	first[0] = p.vals[0]
	d.crumbs = []string{c.a("/", "Home"), c.a(s.plain(s.none()), "All products"),
		c.a(s.plain(first), s.facets[0].values[p.vals[0]].label), esc(p.name)}
	d.h1(p.name)
	d.printf("<p class=\"price\">%s</p>\n<p class=\"rating\">★ %d.%d (%d reviews)</p>\n", s.price(p), p.rating/10, p.rating%10, p.reviews)
	d.printf("<p class=\"buy\">%s</p>\n", s.buttons(i, here))
	d.raw("<table class=\"attributes\">\n")
	for fi, f := range s.facets {
		sel := s.none()
		sel[fi] = p.vals[fi]
		d.printf("<tr><th>%s</th><td>%s</td></tr>\n", esc(f.label), c.a(s.plain(sel), f.values[p.vals[fi]].label))
	}
	d.raw("</table>\n<h2>Description</h2>\n")
	for _, para := range c.v.prose(r, r.between(2, 8), p.name) {
		d.p(para)
	}
	// Related: products sharing a value, and now and then one that is gone.
	d.h2("You may also like")
	var rel []string
	n := r.between(2, 4)
	for tries := 0; len(rel) < n && tries < 50; tries++ {
		j := r.intn(len(s.products))
		fi := r.intn(len(s.facets))
		if j == i || s.products[j].vals[fi] != p.vals[fi] {
			continue
		}
		rel = append(rel, s.card(j, "related", here))
	}
	if len(s.gone) > 0 && r.chance(0.03) {
		// A product taken off the shop, still linked under its old name.
		g := pick(r, s.gone)
		old := c.v.phrase(c.rng("gone", g), 2)
		rel = append(rel, `<article class="product-card"><h3>`+c.a(s.productURIOf(g, slug(old)), titleWords(old))+`</h3></article>`)
	}
	d.raw("<div class=\"related\">\n" + strings.Join(rel, "\n") + "\n</div>\n")
	d.printf("<p>%s</p>\n", c.a(s.plain(s.none()), "« Back to all products"))
	s.sidebar(d, i, false)
}

func (s *shop) home(d *doc) {
	c := s.c
	r := c.rng("home")
	d.title = "Home"
	d.tmpl = "home"
	d.h1("Welcome to " + c.name)
	d.p(c.v.paragraph(r, c.name))
	d.h2("Featured")
	d.raw("<div class=\"grid\">\n")
	for _, i := range s.order[0][:8] {
		d.raw(s.card(i, "home", "/") + "\n")
	}
	d.raw("</div>\n")
	d.h2("New arrivals")
	d.raw("<div class=\"grid\">\n")
	for _, i := range s.newest8 {
		d.raw(s.card(i, "", "/") + "\n")
	}
	d.raw("</div>\n")
	for fi := 0; fi < 2; fi++ {
		f := s.facets[fi]
		d.h2("Shop by " + strings.ToLower(f.label))
		var lis []string
		for vi, fv := range f.values {
			sel := s.none()
			sel[fi] = vi
			if s.count[fi][vi] > 0 {
				lis = append(lis, c.a(s.plain(sel), fv.label))
			}
		}
		d.ul("categories", lis)
	}
	d.printf("<p>%s</p>\n", c.a(s.plain(s.none()), "Browse all products »"))
	s.sidebar(d, -1, false)
}

func (s *shop) newest(n int) []int {
	idx := make([]int, len(s.products))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if d := s.products[b].added - s.products[a].added; d != 0 {
			return d
		}
		return s.products[a].id - s.products[b].id
	})
	return idx[:n]
}

func (s *shop) best(n int) []int {
	idx := make([]int, len(s.products))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if d := s.products[b].pop - s.products[a].pop; d != 0 {
			return d
		}
		return s.products[a].id - s.products[b].id
	})
	return idx[:n]
}

// sidebar adds the shop's widgets; prod is the product shown (or -1).
func (s *shop) sidebar(d *doc, prod int, list bool) {
	c := s.c
	valueBox := func(fi int, t string) box {
		b := box{title: t, cls: "facet-links"}
		for vi, fv := range s.facets[fi].values {
			sel := s.none()
			sel[fi] = vi
			if s.count[fi][vi] > 0 {
				b.items = append(b.items, c.a(s.plain(sel), fv.label))
			}
		}
		return b
	}
	for _, w := range s.boxes {
		switch w {
		case "categories":
			d.side = append(d.side, valueBox(0, "Categories"))
		case "facet2":
			d.side = append(d.side, valueBox(1, "Shop by "+strings.ToLower(s.facets[1].label)))
		case "new":
			b := box{title: "New arrivals", cls: "recent"}
			for _, i := range s.newest8[:5] {
				b.items = append(b.items, c.a(s.productURI(i), s.products[i].name))
			}
			d.side = append(d.side, b)
		case "best":
			b := box{title: "Best sellers", cls: "popular"}
			for _, i := range s.best5 {
				b.items = append(b.items, c.a(s.productURI(i), s.products[i].name))
			}
			d.side = append(d.side, b)
		}
	}
	if !s.c.hint.everywhere || list {
		return
	}
	b := box{title: "Popular combinations", cls: "combos"}
	for _, sel := range s.combos {
		b.items = append(b.items, c.va(s.plain(sel), s.selLabel(sel)))
	}
	if prod >= 0 {
		p := &s.products[prod]
		for fi := 1; fi < len(s.facets) && fi < 3; fi++ {
			sel := s.none()
			sel[0], sel[fi] = p.vals[0], p.vals[fi]
			b.items = append(b.items, c.va(s.plain(sel), "More "+s.selLabel(sel)))
		}
	}
	d.side = append(d.side, b)
}

func (s *shop) describe() string {
	var fs []string
	ex := s.none()
	for fi, f := range s.facets {
		vals := make([]string, 0, len(f.values))
		for _, v := range f.values {
			vals = append(vals, v.slug)
		}
		fs = append(fs, f.name+" ("+strings.Join(vals, "/")+")")
		if fi < 2 {
			ex[fi] = 0
		}
	}
	var so []string
	for _, o := range s.sorts {
		so = append(so, o.name)
	}
	style := []string{"query", "named path segments", "value path segments"}[s.fstyle]
	one := s.none()
	one[0] = 0
	return fmt.Sprintf("Faceted shop of %d products at %s; facets as %s: %s; a one-value list is %s, a combination %s; "+
		"sort ?%s= (%s, default %s); pages %s with %d per page; products like %s. "+
		"Real: home, products, every catalogue page and every page of each single-value list (default sort); "+
		"traps: facet combinations, sorts, default values written out.",
		len(s.products), s.listBase, style, strings.Join(fs, ", "), s.plain(one), s.plain(ex),
		s.sortP, strings.Join(so, ", "), s.sorts[0].name, s.pg.describe(s.per), s.per, s.productURI(0))
}
