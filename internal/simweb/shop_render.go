package simweb

import (
	"bytes"
	"cmp"
	"fmt"
	"html"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// shopPage writes one page of a shop. Its same-host links carry the
// session ids and tracking parameters of response resp.
type shopPage struct {
	s    *shopSite
	resp uint64
	n    int // links written
	buf  bytes.Buffer
}

// newPage starts a page: head, navigation (home, the catalogue, the
// calendar's entrance, the help section) and heading.
func (s *shopSite) newPage(resp uint64, title string) *shopPage {
	p := &shopPage{s: s, resp: resp}
	fmt.Fprintf(&p.buf, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s — %s</title>\n</head>\n<body>\n<header><p class=\"brand\">%s</p>\n<nav>",
		html.EscapeString(title), html.EscapeString(s.name), html.EscapeString(s.name))
	p.link("/", "Home")
	p.buf.WriteString(" | ")
	p.link(s.catalogueURL(1, 0), s.catLabel)
	if !s.opt.NoCalendar {
		p.buf.WriteString(" | ")
		p.link(s.dayURL(s.today), s.day.label)
	}
	if !s.opt.NoEndlessPath && s.path.help != "" {
		p.buf.WriteString(" | ")
		p.link(s.path.help, "Help")
	}
	fmt.Fprintf(&p.buf, "</nav></header>\n<main>\n<h1>%s</h1>\n", html.EscapeString(title))
	return p
}

// link writes an <a> to ref (an escaped absolute path or a relative
// reference) with the response's session id and tracking parameter.
func (p *shopPage) link(ref, text string) {
	ref = p.s.decorate(ref, p.resp, p.n)
	p.n++
	fmt.Fprintf(&p.buf, "<a href=\"%s\">%s</a>", html.EscapeString(ref), html.EscapeString(text))
}

// para writes a paragraph of text.
func (p *shopPage) para(text string) {
	fmt.Fprintf(&p.buf, "<p>%s</p>\n", html.EscapeString(text))
}

func (p *shopPage) done() []byte {
	fmt.Fprintf(&p.buf, "</main>\n<footer><p>© %s</p></footer>\n</body>\n</html>\n", html.EscapeString(p.s.name))
	return p.buf.Bytes()
}

// render returns the body of the page rt for response resp.
func (s *shopSite) render(rt shopRoute, resp uint64) []byte {
	switch rt.kind {
	case routeCatalogue:
		return s.cataloguePage(rt.n, rt.sort, resp)
	case routeItem:
		return s.itemPage(rt.n, 0, resp)
	case routeDay:
		return s.dayPage(rt.day, resp)
	case routeCounter:
		return s.counterPage(rt.count, resp)
	case routeEndless:
		if rt.n >= 0 {
			return s.itemPage(rt.n, rt.depth, resp)
		}
		return s.helpPage(rt.depth, resp)
	}
	return s.homePage(resp)
}

// filler returns a sentence of n words drawn from seed: the same every
// time.
func filler(seed uint64, n int) string { return capitalize(someWords(seed, n)) + "." }

// someWords returns n words drawn from seed, lower case.
func someWords(seed uint64, n int) string {
	rng := rand.New(rand.NewPCG(seed, 0x5409))
	ws := make([]string, n)
	for i := range ws {
		ws[i] = pick(rng, words)
	}
	return strings.Join(ws, " ")
}

func (s *shopSite) homePage(resp uint64) []byte {
	p := s.newPage(resp, "Welcome to "+s.name)
	p.para(filler(s.key^1, 30))
	p.buf.WriteString("<p>")
	p.link(s.catalogueURL(1, 0), s.catLabel+" »")
	p.buf.WriteString("</p>\n<h2>Featured</h2>\n<ul>\n")
	for _, i := range s.counts.teasers {
		p.buf.WriteString("<li>")
		p.link(s.itemURL(i), s.items[i].name)
		p.buf.WriteString("</li>\n")
	}
	p.buf.WriteString("</ul>\n")
	if !s.opt.NoCounter {
		p.buf.WriteString("<p>")
		p.link(s.counterURL(0), s.counts.label+": the latest posts")
		p.buf.WriteString("</p>\n")
	}
	return p.done()
}

// cataloguePage renders catalogue page n in sort order sort.
func (s *shopSite) cataloguePage(n, sort int, resp uint64) []byte {
	last := s.opt.Catalog
	p := s.newPage(resp, fmt.Sprintf("%s — page %d of %d", s.catLabel, n, last))
	if !s.opt.NoSorts {
		p.buf.WriteString("<p>Sort by: ")
		if sort == 0 {
			fmt.Fprintf(&p.buf, "<b>%s</b>", s.sorts.deflt)
		} else {
			p.link(s.catalogueURL(n, 0), s.sorts.deflt)
		}
		for k, o := range s.sorts.orders {
			p.buf.WriteString(" | ")
			if k+1 == sort {
				fmt.Fprintf(&p.buf, "<b>%s</b>", sortOrders[o.order].label)
				continue
			}
			p.link(s.catalogueURL(n, k+1), sortOrders[o.order].label)
		}
		p.buf.WriteString("</p>\n")
		if sort > 0 && s.sorts.label {
			p.para("Sorted by: " + sortOrders[s.sorts.orders[sort-1].order].label)
		}
	}
	p.buf.WriteString("<ul>\n")
	for _, i := range s.onPage(n, sort) {
		it := &s.items[i]
		p.buf.WriteString("<li>")
		p.link(s.itemURL(i), it.name)
		fmt.Fprintf(&p.buf, " — %s</li>\n", price(it.cents))
	}
	p.buf.WriteString("</ul>\n<p>")
	if n > 1 {
		p.link(s.catalogueURL(n-1, sort), "« Previous")
		p.buf.WriteByte(' ')
	}
	if s.numbered {
		for _, k := range pageBar(n, last) {
			switch {
			case k == 0:
				p.buf.WriteString("… ")
			case k == n:
				fmt.Fprintf(&p.buf, "<b>%d</b> ", k)
			default:
				p.link(s.catalogueURL(k, sort), strconv.Itoa(k))
				p.buf.WriteByte(' ')
			}
		}
	} else {
		fmt.Fprintf(&p.buf, "Page %d of %d ", n, last)
	}
	if n < last {
		p.link(s.catalogueURL(n+1, sort), "Next »")
	}
	p.buf.WriteString("</p>\n")
	return p.done()
}

// pageBar returns the page numbers of a numbered bar on page n of last:
// all of them, or for many pages the first, the last and those near n,
// with 0 for a gap.
func pageBar(n, last int) []int {
	var out []int
	for k := 1; k <= last; k++ {
		if last <= 30 || k == 1 || k == last || k >= n-5 && k <= n+5 {
			out = append(out, k)
		} else if len(out) > 0 && out[len(out)-1] != 0 {
			out = append(out, 0)
		}
	}
	return out
}

// onPage returns the items of catalogue page n in sort order sort: the
// same items whatever the order.
func (s *shopSite) onPage(n, sort int) []int {
	lo := (n - 1) * s.opt.PerPage
	out := make([]int, s.opt.PerPage)
	for k := range out {
		out[k] = lo + k
	}
	if sort == 0 {
		return out
	}
	by := func(f func(*shopItem) int) func(a, b int) int {
		return func(a, b int) int { return cmp.Or(cmp.Compare(f(&s.items[a]), f(&s.items[b])), cmp.Compare(a, b)) }
	}
	var less func(a, b int) int
	switch s.sorts.orders[sort-1].order {
	case sortPriceUp:
		less = by(func(it *shopItem) int { return it.cents })
	case sortPriceDown:
		less = by(func(it *shopItem) int { return -it.cents })
	case sortNameUp:
		less = func(a, b int) int {
			return cmp.Or(strings.Compare(s.items[a].name, s.items[b].name), cmp.Compare(a, b))
		}
	case sortNameDown:
		less = func(a, b int) int {
			return cmp.Or(strings.Compare(s.items[b].name, s.items[a].name), cmp.Compare(a, b))
		}
	case sortNewest:
		less = by(func(it *shopItem) int { return it.added })
	case sortRating:
		less = by(func(it *shopItem) int { return -it.rating })
	default:
		less = by(func(it *shopItem) int { return -it.popularity })
	}
	slices.SortFunc(out, less)
	return out
}

// price writes cents as dollars.
func price(cents int) string { return fmt.Sprintf("$%d.%02d", cents/100, cents%100) }

// itemPage renders item i; below it, at depth ≥ 1, the same page serves
// the endless path.
func (s *shopSite) itemPage(i, depth int, resp uint64) []byte {
	it := &s.items[i]
	p := s.newPage(resp, it.name)
	fmt.Fprintf(&p.buf, "<p>Item no. %d — %s — rated %d.%d of 5</p>\n", it.id, price(it.cents), it.rating/10, it.rating%10)
	rng := rand.New(rand.NewPCG(it.seed, 0x17e))
	for range 2 + rng.IntN(3) {
		p.para(fmt.Sprintf("The %s: %s.", strings.ToLower(it.name), someWords(rng.Uint64(), 8+rng.IntN(16))))
	}
	page := i/s.opt.PerPage + 1
	p.buf.WriteString("<p>")
	p.link(s.catalogueURL(page, 0), fmt.Sprintf("Back to %s, page %d", strings.ToLower(s.catLabel), page))
	p.buf.WriteString("</p>\n")
	if len(it.related) > 0 {
		p.buf.WriteString("<h2>Related items</h2>\n<ul>\n")
		for _, j := range it.related {
			p.buf.WriteString("<li>")
			p.link(s.itemURL(j), s.items[j].name)
			p.buf.WriteString("</li>\n")
		}
		p.buf.WriteString("</ul>\n")
	}
	if !s.opt.NoCalendar && s.day.fromItems {
		d := s.today.AddDate(0, 0, i%90)
		p.buf.WriteString("<p>Next demonstration: ")
		p.link(s.dayURL(d), fmt.Sprintf("%d %s %d", d.Day(), d.Month(), d.Year()))
		p.buf.WriteString("</p>\n")
	}
	if !s.opt.NoEndlessPath && s.path.help == "" {
		p.buf.WriteString("<p>")
		p.endlessLink(s.itemURL(i), depth)
		p.buf.WriteString("</p>\n")
	}
	return p.done()
}

// endlessLink writes the link of the endless path on a page at depth
// below the base page at canonical URL base: relative, but for the
// base page itself when its URL does not end in "/".
func (p *shopPage) endlessLink(base string, depth int) {
	e := &p.s.path
	next := e.names[depth%len(e.names)]
	ref := next + "/"
	switch {
	case depth == 0 && !strings.HasSuffix(base, "/"):
		ref = base + "/" + ref
	case e.dot:
		ref = "./" + ref
	}
	p.link(ref, capitalize(next))
}

// helpPage renders the help section, the same page at every depth.
func (s *shopSite) helpPage(depth int, resp uint64) []byte {
	p := s.newPage(resp, "Help and frequently asked questions")
	for k := range 3 {
		fmt.Fprintf(&p.buf, "<h2>%s?</h2>\n", capitalize(someWords(s.key^uint64(10+k), 5)))
		p.para(filler(s.key^uint64(20+k), 25))
	}
	p.buf.WriteString("<p>")
	p.endlessLink(s.path.help, depth)
	p.buf.WriteString("</p>\n")
	return p.done()
}

// dayPage renders the calendar's day t: every day the same template.
func (s *shopSite) dayPage(t time.Time, resp uint64) []byte {
	long := fmt.Sprintf("%s %d %s %d", t.Weekday(), t.Day(), t.Month(), t.Year())
	p := s.newPage(resp, s.day.label+": "+long)
	p.para("No events on " + long + ".")
	fmt.Fprintf(&p.buf, "<p>Date: %s</p>\n<p>", s.day.fmt.format(t))
	jumps := []struct {
		days, months int
		prev, next   string
	}{
		{1, 0, "« Previous day", "Next day »"},
		{7, 0, "« Previous week", "Next week »"},
		{0, 1, "« Previous month", "Next month »"},
	}
	for k, j := range jumps[:1+s.day.jumps] {
		if k > 0 {
			p.buf.WriteString(" | ")
		}
		if d := t.AddDate(0, -j.months, -j.days); d.Year() >= -calendarMaxYear {
			p.link(s.dayURL(d), j.prev)
			p.buf.WriteByte(' ')
		}
		if d := t.AddDate(0, j.months, j.days); d.Year() <= calendarMaxYear {
			p.link(s.dayURL(d), j.next)
		}
	}
	p.buf.WriteString("</p>\n")
	p.para(filler(s.key^2, 24))
	return p.done()
}

// counterPage renders page n of the news chain (0: the first): every page
// the same template and the same teasers.
func (s *shopSite) counterPage(n int64, resp uint64) []byte {
	c := &s.counts
	title := c.label
	switch {
	case n > 0 && c.offsets:
		title += fmt.Sprintf(" — older posts from %d", n)
	case n > 0:
		title += fmt.Sprintf(" — page %d", n)
	}
	p := s.newPage(resp, title)
	p.buf.WriteString("<ul>\n")
	for _, i := range c.teasers {
		p.buf.WriteString("<li>New in: ")
		p.link(s.itemURL(i), s.items[i].name)
		p.buf.WriteString("</li>\n")
	}
	p.buf.WriteString("</ul>\n")
	p.para(filler(s.key^3, 20))
	p.buf.WriteString("<p>")
	if n > 0 {
		prev := n - c.step
		if prev < c.start {
			prev = 0
		}
		p.link(s.counterURL(prev), "« Newer posts")
		p.buf.WriteByte(' ')
	}
	next := c.start
	if n > 0 {
		next = n + c.step
	}
	if next <= counterMax {
		p.link(s.counterURL(next), "Older posts »")
	}
	p.buf.WriteString("</p>\n")
	return p.done()
}
