package simweb

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The catalog of Traps.Facets: catalogProducts products, product i in
// color i%4 and size (i/4)%4, so that every color and size combination
// holds three products and no filter is empty.
var (
	catalogColors = []string{"red", "green", "blue", "black"}
	catalogSizes  = []string{"s", "m", "l", "xl"}
	catalogSorts  = []string{"price", "name", "newest"} // "" is relevance
)

const (
	catalogProducts = 48
	catalogPerPage  = 10
	// CatalogPages is the number of distinct pages of the catalog of
	// Traps.Facets: 5 for all products, 2 for each color alone, 2 for each
	// size alone, 1 for each color and size.
	CatalogPages = 5 + 4*2 + 4*2 + 16*1
)

// catalogQuery is a catalog URL: empty strings are "any" (and
// relevance).
type catalogQuery struct {
	color, size, sort string
	page              int
}

// parseCatalog reads a catalog query (session id removed). Every
// parameter is optional and appears at most once; unknown parameters and
// values fail.
func parseCatalog(rawQuery string) (catalogQuery, bool) {
	q := catalogQuery{page: 1}
	if rawQuery == "" {
		return q, true
	}
	vals, err := url.ParseQuery(rawQuery)
	if err != nil {
		return q, false
	}
	for k, v := range vals {
		if len(v) != 1 {
			return q, false
		}
		switch k {
		case "color":
			q.color = v[0]
			if !slices.Contains(catalogColors, q.color) {
				return q, false
			}
		case "size":
			q.size = v[0]
			if !slices.Contains(catalogSizes, q.size) {
				return q, false
			}
		case "sort":
			q.sort = v[0]
			if !slices.Contains(catalogSorts, q.sort) {
				return q, false
			}
		case "page":
			n, err := strconv.Atoi(v[0])
			if err != nil || n < 1 || n > 1_000_000_000 || strconv.Itoa(n) != v[0] {
				return q, false
			}
			q.page = n
		default:
			return q, false
		}
	}
	return q, true
}

// products returns the indexes of the products that q's filters select,
// in relevance order.
func (q catalogQuery) products() []int {
	var out []int
	for i := range catalogProducts {
		if (q.color == "" || q.color == catalogColors[i%4]) && (q.size == "" || q.size == catalogSizes[(i/4)%4]) {
			out = append(out, i)
		}
	}
	return out
}

// lastPage is the last page with products (1 for an empty selection).
func (q catalogQuery) lastPage() int {
	return max(1, (len(q.products())+catalogPerPage-1)/catalogPerPage)
}

// clamped returns q with its page limited to the last page: pages beyond
// it serve the last page.
func (q catalogQuery) clamped() catalogQuery {
	q.page = min(q.page, q.lastPage())
	return q
}

// canonical returns the canonical path of the distinct page q serves:
// parameters in name order, no sort, no page=1.
func (q catalogQuery) canonical() string {
	q = q.clamped()
	var ps []string
	if q.color != "" {
		ps = append(ps, "color="+q.color)
	}
	if q.page > 1 {
		ps = append(ps, "page="+strconv.Itoa(q.page))
	}
	if q.size != "" {
		ps = append(ps, "size="+q.size)
	}
	if len(ps) == 0 {
		return catalogPath
	}
	return catalogPath + "?" + strings.Join(ps, "&")
}

// catalogDistinct returns one query for each distinct catalog page.
func catalogDistinct() []catalogQuery {
	var out []catalogQuery
	for _, c := range append([]string{""}, catalogColors...) {
		for _, s := range append([]string{""}, catalogSizes...) {
			q := catalogQuery{color: c, size: s}
			for p := 1; p <= q.lastPage(); p++ {
				q.page = p
				out = append(out, q)
			}
		}
	}
	return out
}

// product is one item of a host's catalog.
type product struct {
	name  string
	cents int
}

// catalogProductsOf returns the host's products, a function of the seed
// and host index alone.
func (h *Host) catalogProductsOf() []product {
	rng := hostRand(h.web.cfg.Seed, h.index, 7)
	ps := make([]product, catalogProducts)
	for i := range ps {
		w1, w2 := words[rng.IntN(len(words))], words[rng.IntN(len(words))]
		ps[i] = product{name: strings.ToUpper(w1[:1]) + w1[1:] + " " + w2, cents: 500 + rng.IntN(20000)}
	}
	return ps
}

// catalogPage renders page q (clamped) of the catalog. Its bytes are a
// function of q: the same whatever parameter order or session id the
// request used.
func (h *Host) catalogPage(q catalogQuery) []byte {
	sel, all := q.products(), h.catalogProductsOf()
	last := q.lastPage()
	label := "All products"
	if q.color != "" || q.size != "" {
		var f []string
		if q.color != "" {
			f = append(f, q.color)
		}
		if q.size != "" {
			f = append(f, "size "+strings.ToUpper(q.size))
		}
		label = "Products: " + strings.Join(f, ", ")
	}
	key := fmt.Sprintf("catalog/%s/%s/%s/%d", q.color, q.size, q.sort, q.page)
	p := h.newTrapPage(key, fmt.Sprintf("%s — page %d of %d", label, q.page, last))
	link := func(to catalogQuery, text string) { p.link(catalogRef(key, p.n, to), text) }

	facet := func(name string, values []string, cur string, set func(*catalogQuery, string)) {
		fmt.Fprintf(&p.buf, "<p>%s: ", name)
		for _, v := range append([]string{""}, values...) {
			text := v
			switch {
			case v == "" && name == "Sort by":
				text = "relevance"
			case v == "":
				text = "any"
			}
			if v == cur {
				fmt.Fprintf(&p.buf, "<b>%s</b> ", text)
				continue
			}
			to := q
			set(&to, v)
			if name != "Sort by" {
				to.page = 1 // a new filter starts at its first page
			}
			link(to, text)
			p.buf.WriteByte(' ')
		}
		p.buf.WriteString("</p>\n")
	}
	facet("Color", catalogColors, q.color, func(c *catalogQuery, v string) { c.color = v })
	facet("Size", catalogSizes, q.size, func(c *catalogQuery, v string) { c.size = v })
	facet("Sort by", catalogSorts, q.sort, func(c *catalogQuery, v string) { c.sort = v })

	// The products of the page, reordered by the sort.
	lo := min(len(sel), (q.page-1)*catalogPerPage)
	onPage := append([]int(nil), sel[lo:min(len(sel), lo+catalogPerPage)]...)
	switch q.sort {
	case "price":
		slices.SortStableFunc(onPage, func(a, b int) int { return cmp.Compare(all[a].cents, all[b].cents) })
	case "name":
		slices.SortStableFunc(onPage, func(a, b int) int { return strings.Compare(all[a].name, all[b].name) })
	case "newest":
		slices.Reverse(onPage)
	}
	p.buf.WriteString("<ul>\n")
	for _, i := range onPage {
		fmt.Fprintf(&p.buf, "<li>%s — %s, size %s — $%d.%02d</li>\n",
			all[i].name, catalogColors[i%4], strings.ToUpper(catalogSizes[(i/4)%4]), all[i].cents/100, all[i].cents%100)
	}
	p.buf.WriteString("</ul>\n<p>")
	if q.page > 1 {
		to := q
		to.page--
		link(to, "« Previous")
		p.buf.WriteByte(' ')
	}
	for n := 1; n <= last; n++ {
		if n == q.page {
			fmt.Fprintf(&p.buf, "<b>%d</b> ", n)
			continue
		}
		to := q
		to.page = n
		link(to, strconv.Itoa(n))
		p.buf.WriteByte(' ')
	}
	// The next link is there on the last page too, as on many real
	// sites; it leads to a copy of the last page.
	to := q
	to.page++
	link(to, "Next »")
	p.buf.WriteString("</p>\n")
	return p.done()
}

// catalogRef returns a reference to catalog page q as link n of the page
// named where writes it: its parameters in an order that varies from
// link to link, page=1 written out on some links.
func catalogRef(where string, n int, q catalogQuery) string {
	f := fnv.New64a()
	fmt.Fprintf(f, "%s/%d", where, n)
	rng := rand.New(rand.NewPCG(f.Sum64(), 0xca7))
	var ps []string
	if q.color != "" {
		ps = append(ps, "color="+q.color)
	}
	if q.size != "" {
		ps = append(ps, "size="+q.size)
	}
	if q.sort != "" {
		ps = append(ps, "sort="+q.sort)
	}
	if q.page > 1 || rng.IntN(3) == 0 {
		ps = append(ps, "page="+strconv.Itoa(q.page))
	}
	rng.Shuffle(len(ps), func(a, b int) { ps[a], ps[b] = ps[b], ps[a] })
	if len(ps) == 0 {
		return catalogPath
	}
	return catalogPath + "?" + strings.Join(ps, "&")
}
