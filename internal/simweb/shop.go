package simweb

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Shop makes a host an online shop (HostOptions.Shop) whose URL-space
// traps are the same kinds as those of Traps, but whose surface — the
// names of parameters, the shapes of paths, the words on the pages — is
// drawn from Config.Seed and the host's index, so that a crawler's rules
// cannot be fitted to one shape. Tests run several seeds.
//
// The real pages (Host.DistinctPages) are the home page "/", Catalog
// catalogue pages of PerPage items each, and the Catalog×PerPage item
// pages: 511 by default. The home page links the first catalogue page;
// catalogue pages link each other (a numbered bar of all pages, or only
// previous and next: drawn) and their items; an item page links home, its
// catalogue page and 2–4 related items. Item URLs look like /item/123,
// /product/blue-oak-chair-123, /p/123.html or /shop/item?id=123, catalogue
// URLs like /catalog?page=3, /c/all/3 or /shop?p=3: drawn.
//
// The trap families, each on in the zero value and switched off by its
// No… field, are named by Host.TrapOf:
//
//   - FamilySession: every same-host link carries a session id that is
//     fresh on every response (a per-host response counter feeds a hash),
//     so a page fetched twice links under new URLs. Drawn: a query
//     parameter (sid, PHPSESSID, zenid, an invented name …) or a path
//     parameter (;jsessionid=, ;sid=, an invented name); 24–32 hex or
//     base36 characters; one value per response or one per link. The
//     server ignores it.
//   - FamilyTracking: a drawn 20–60 % of the links carry a parameter of an
//     invented name ("vqk", "_ka_mo") with a fresh value: a hex or base36
//     token, or a 13-digit number like a time in milliseconds. The server
//     ignores it.
//   - FamilySort: every catalogue page links 3–5 sort orders (parameter
//     name and values drawn), each listing the same items in another
//     order, with or without a "Sorted by" label (drawn). Pagination keeps
//     the sort; unknown sort values answer 404.
//   - FamilyCalendar: every real page links, in its navigation, the events
//     page of the day Today, which links the previous and next days (and,
//     drawn, weeks and months) without end; every day the same template
//     saying there are no events, for years from −1,000,000,000 to
//     1,000,000,000. URL shapes like /events/2026/12/01,
//     /calendar?date=2026-12-01 or /agenda/day/20261201: drawn. Drawn too:
//     whether every item page also links a day of its own (Today plus the
//     item's index mod 90 days): a calendar with hundreds of entrances.
//   - FamilyEndlessPath: a relative link ("reviews/", "./more/"; drawn,
//     possibly two names alternating) under which ever longer paths serve
//     the same page again: below every item page (/p/12.html/reviews/
//     reviews/…) or below a help section (/help/more/more/…): drawn.
//   - FamilyCounter: the home page links a "news" chain whose pages link
//     older ones without end (/news?offset=10, 20 … or /blog/page/2, 3 …;
//     drawn), each the same template with another number.
//
// Real pages reached through a session id, a tracking parameter, a sort
// order or parameters in another order are still real pages: Host.PageOf
// maps them to their canonical URL. Calendar, endless-path and counter
// pages are not real pages. Unknown paths, parameters and values answer
// 404.
//
// A shop host answers robots.txt by its Profile as any other host, and
// serves its pages with gzip, validators and conditional GET. When
// session ids or tracking parameters make every response's bytes
// different, the ETag is weak and names the page, not the bytes.
// Host.ShopSummary describes the drawn surface.
type Shop struct {
	// Catalog is the number of catalogue pages. The default (0) is 10.
	Catalog int
	// PerPage is the number of items on a catalogue page. The default (0)
	// is 50. Catalog×PerPage is at most MaxPagesPerHost.
	PerPage int
	// Today is the day that the calendar's entrance shows (its date in
	// its own location). The default (the zero Time) is 2025-06-01, so no
	// wall clock is read; a test may pass time.Now().
	Today time.Time

	// NoSessions leaves out the session ids (FamilySession).
	NoSessions bool
	// NoTracking leaves out the tracking parameter (FamilyTracking).
	NoTracking bool
	// NoSorts leaves out the sort orders (FamilySort).
	NoSorts bool
	// NoCalendar leaves out the calendar (FamilyCalendar).
	NoCalendar bool
	// NoEndlessPath leaves out the endless path (FamilyEndlessPath).
	NoEndlessPath bool
	// NoCounter leaves out the news chain (FamilyCounter).
	NoCounter bool
}

// The trap families of a Shop, as Host.TrapOf names them. FamilySoft404
// is named for hosts with Traps.Soft404.
const (
	FamilySession     = "session"
	FamilyTracking    = "tracking"
	FamilySort        = "sort"
	FamilyCalendar    = "calendar"
	FamilyEndlessPath = "endless-path"
	FamilyCounter     = "counter"
	FamilySoft404     = "soft404"
)

// Defaults of Shop.
const (
	defaultShopCatalog = 10
	defaultShopPerPage = 50
)

// defaultShopToday is the default Shop.Today.
var defaultShopToday = calendarHome

// withDefaults returns s with its defaults filled in, or an error wrapping
// errConfig.
func (s Shop) withDefaults() (Shop, error) {
	if s.Catalog == 0 {
		s.Catalog = defaultShopCatalog
	}
	if s.PerPage == 0 {
		s.PerPage = defaultShopPerPage
	}
	if s.Catalog < 0 || s.PerPage < 0 || s.Catalog > MaxPagesPerHost || s.PerPage > MaxPagesPerHost || s.Catalog*s.PerPage > MaxPagesPerHost {
		return s, fmt.Errorf("%w: Shop.Catalog %d × Shop.PerPage %d not in 1..%d items", errConfig, s.Catalog, s.PerPage, MaxPagesPerHost)
	}
	if s.Today.IsZero() {
		s.Today = defaultShopToday
	}
	return s, nil
}

// shopSite is the drawn surface of a Shop host and its response counter.
// Everything but the counter is fixed once drawn.
type shopSite struct {
	host  *Host
	opt   Shop
	key   uint64    // seeds the per-response values
	today time.Time // midnight UTC of Shop.Today's date
	name  string    // the shop's name

	items       []shopItem
	itemShape   urlShape
	itemByValue map[string]int

	catShape urlShape // bare: page 1
	catLabel string
	numbered bool // a bar of all pages; else only previous and next

	sess   sessionStyle
	track  trackingStyle
	sorts  sortStyle
	day    dayStyle
	path   endlessStyle
	counts counterStyle

	responses atomic.Uint64
}

// shopItem is one item of a shop. Its description is drawn when the page
// is rendered, from seed.
type shopItem struct {
	id         int
	name, slug string
	value      string // the variable part of its URL
	cents      int
	rating     int // tenths of a star, 10..50
	added      int // days before lastModifiedEpoch
	popularity int
	related    []int
	seed       uint64
}

// sessionStyle is how a shop writes session ids.
type sessionStyle struct {
	name     string
	path     bool // a ;name=value path parameter, else a query parameter
	alphabet string
	length   int
	perLink  bool // a value per link, else one per response
}

// trackingStyle is how a shop writes its tracking parameter.
type trackingStyle struct {
	name    string
	shape   int // trackHex, trackBase36 or trackMillis
	length  int // of the tokens
	percent int // of the links that carry it
}

// The shapes of tracking values.
const (
	trackHex = iota
	trackBase36
	trackMillis
)

// sortStyle is a shop's sort parameter and its orders.
type sortStyle struct {
	param   string
	orders  []shopSort
	label   bool   // a sorted page says "Sorted by …"
	deflt   string // the name of the unsorted order, e.g. "Featured"
	byValue map[string]int
}

// shopSort is one sort order of a shop.
type shopSort struct {
	order sortOrder
	value string
}

// sortOrder is a way of ordering items.
type sortOrder uint8

const (
	sortPriceUp sortOrder = iota
	sortPriceDown
	sortNameUp
	sortNameDown
	sortNewest
	sortRating
	sortPopular
)

// sortOrders are the labels and the spellings of each sortOrder.
var sortOrders = [...]struct {
	label  string
	values []string
}{
	sortPriceUp:   {"Price: low to high", []string{"price", "price_asc", "price-asc", "cheapest", "lowprice"}},
	sortPriceDown: {"Price: high to low", []string{"-price", "price_desc", "price-desc", "pricedown", "highprice"}},
	sortNameUp:    {"Name: A to Z", []string{"name", "az", "alpha", "title", "name_asc"}},
	sortNameDown:  {"Name: Z to A", []string{"za", "-name", "name_desc", "title_desc"}},
	sortNewest:    {"Newest first", []string{"newest", "new", "latest", "date", "recent"}},
	sortRating:    {"Best rated", []string{"rating", "top", "stars", "best", "toprated"}},
	sortPopular:   {"Most popular", []string{"popular", "popularity", "bestselling", "trending", "hot"}},
}

// dayStyle is a shop's calendar.
type dayStyle struct {
	shape urlShape
	fmt   dayFormat
	jumps int    // 0: days; 1: and weeks; 2: and weeks and months
	label string // e.g. "Events"
	// fromItems: every item page links a day of its own too (a calendar
	// with hundreds of entrances, not only the navigation's today).
	fromItems bool
}

// dayFormat is how a date is written in a calendar URL.
type dayFormat uint8

const (
	daySlash   dayFormat = iota // 2026/12/01
	dayDash                     // 2026-12-01
	dayCompact                  // 20261201
)

// endlessStyle is a shop's endless path.
type endlessStyle struct {
	names []string // one name, or two that alternate
	dot   bool     // written "./name/" rather than "name/"
	help  string   // the help section it hangs below, or "" for below items
}

// counterStyle is a shop's news chain: its first page is shape.bare, the
// next ones carry start, start+step, …
type counterStyle struct {
	shape       urlShape
	start, step int64
	label       string // e.g. "News"
	offsets     bool   // the numbers count posts, not pages
	teasers     []int  // items every page of the chain links
}

// counterMax bounds the numbers of the news chain: beyond any crawler's
// patience, and far from overflow.
const counterMax = 1_000_000_000_000_000

// urlShape is a URL pattern of a shop with one variable part: the path
// prefix+value+suffix, or, when param is set, the path prefix with the
// value in query parameter param. bare, if set, is the URL (a path without
// query) of the first member of the family: the first catalogue page, the
// first page of the news chain.
type urlShape struct {
	prefix, suffix, param, bare string
}

// format returns the URL of value v.
func (u urlShape) format(v string) string {
	if u.param != "" {
		return u.prefix + "?" + u.param + "=" + v
	}
	return u.prefix + v + u.suffix
}

// match returns the value that path and params (the query's parameters)
// hold if they have the shape.
func (u urlShape) match(path string, params []shopParam) (string, bool) {
	if u.param != "" {
		if path != u.prefix || len(params) != 1 || params[0].name != u.param {
			return "", false
		}
		return params[0].value, params[0].value != ""
	}
	if len(params) != 0 || len(path) <= len(u.prefix)+len(u.suffix) ||
		!strings.HasPrefix(path, u.prefix) || !strings.HasSuffix(path, u.suffix) {
		return "", false
	}
	return path[len(u.prefix) : len(path)-len(u.suffix)], true
}

// shopParam is one name=value of a query, as written (not unescaped).
type shopParam struct{ name, value string }

// shop returns the host's shop, drawing it on first use, or nil when the
// host is not a shop.
func (h *Host) shop() *shopSite {
	if h.opts.Shop == nil {
		return nil
	}
	h.shopOnce.Do(func() { h.shopSite = drawShop(h) })
	return h.shopSite
}

// Word lists of the shops. The vocabularies of the URL families are
// disjoint, so that no URL of one family has the shape of another's.
var (
	shopAdjectives = strings.Fields(`rustic modern classic compact deluxe vintage sturdy slim folding
		handmade nordic cozy bright quiet portable elegant simple premium tiny grand
		soft round square woven polished hammered`)
	shopMaterials = strings.Fields(`oak walnut birch pine steel brass copper linen wool cotton leather
		ceramic glass bamboo marble slate amber ivory olive navy crimson teal
		rattan cork felt stoneware`)
	shopNouns = strings.Fields(`chair table lamp kettle mug bowl vase shelf stool bench rug blanket
		pillow clock mirror basket teapot jar candle planter desk cabinet tray
		frame skillet ladle apron tote lantern`)
	shopSuffixes = strings.Fields(`Goods Store Emporium Supply Market Shop Outfitters Workshop Trading`)

	shopItemWords   = strings.Fields(`item items product p goods article detail buy`)
	shopItemQueries = []string{"/shop/item", "/product.php", "/item", "/view", "/detail.asp", "/goods/show"}
	shopItemParams  = strings.Fields(`id pid item product_id itemid sku`)
	shopCatWords    = strings.Fields(`catalog catalogue shop store products collections/all browse c/all category/all`)
	shopCatParams   = strings.Fields(`page p pg pageno pagenum pagina seite`)
	shopDayWords    = strings.Fields(`events calendar agenda diary whats-on happenings`)
	shopDayParams   = strings.Fields(`date d day on when`)
	shopNewsWords   = strings.Fields(`news blog journal stories updates press`)
	shopHelpRoots   = []string{"/help/", "/faq/", "/support/", "/customer-service/", "/info/", "/help/shipping/"}
	shopEndless     = strings.Fields(`reviews more comments details photos questions specs next view all`)
	shopSessionQ    = strings.Fields(`sid PHPSESSID sessionid SID zenid sess session_id ASPSESSIONID`)
	shopSessionP    = strings.Fields(`jsessionid sid JSESSIONID`)
	shopSortParams  = strings.Fields(`sort order orderby sort_by sortBy`)

	// knownParams are parameter names that lists of session and tracking
	// parameters hold; invented names avoid them.
	knownParams = strings.Fields(`sid sessionid session phpsessid jsessionid zenid utm gclid fbclid
		msclkid ref src source campaign cid uid id tok token ts t v s p q`)
)

// Alphabets of session ids and tracking tokens.
const (
	hexLower    = "0123456789abcdef"
	hexUpper    = "0123456789ABCDEF"
	base36Lower = "0123456789abcdefghijklmnopqrstuvwxyz"
	base36Upper = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
)

// pick returns a random element of xs.
func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// capitalize returns s with its first letter in upper case.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// shopNames hands out parameter names that no other parameter of the
// same shop has.
type shopNames struct{ used map[string]bool }

// take returns the first result of gen not yet used, and uses it.
func (n *shopNames) take(gen func() string) string {
	for {
		s := gen()
		if k := strings.ToLower(s); !n.used[k] {
			n.used[k] = true
			return s
		}
	}
}

// syllable returns a consonant, a vowel and sometimes a final consonant.
func syllable(rng *rand.Rand) string {
	const cons, vows = "bcdfghjklmnprstvwxz", "aeiou"
	s := string(cons[rng.IntN(len(cons))]) + string(vows[rng.IntN(len(vows))])
	if rng.IntN(3) == 0 {
		s += string(cons[rng.IntN(len(cons))])
	}
	return s
}

// invented returns a parameter name that no list of known parameters
// holds: "vqk", "_ka_mo", "tebo", "xo7" …
func invented(rng *rand.Rand) string {
	for {
		var s string
		switch rng.IntN(4) {
		case 0:
			const cons = "bcdfghjklmnpqrstvwxz"
			for range 3 {
				s += string(cons[rng.IntN(len(cons))])
			}
		case 1:
			s = "_" + syllable(rng) + "_" + syllable(rng)
		case 2:
			s = syllable(rng) + syllable(rng)
		default:
			s = syllable(rng) + strconv.Itoa(rng.IntN(10))
		}
		known := false
		for _, k := range knownParams {
			known = known || strings.Contains(strings.ToLower(s), k) && len(k) > 2 || strings.EqualFold(s, k)
		}
		if !known {
			return s
		}
	}
}

// drawShop draws the surface of host h's shop from the seed and the
// host's index. The surface does not depend on which families are on.
func drawShop(h *Host) *shopSite {
	cfg := &h.web.cfg
	rng := hostRand(cfg.Seed, h.index, 11)
	y, m, d := h.opts.Shop.Today.Date()
	s := &shopSite{
		host:  h,
		opt:   *h.opts.Shop,
		key:   rng.Uint64(),
		today: time.Date(y, m, d, 0, 0, 0, 0, time.UTC),
		name:  capitalize(pick(rng, words)) + " " + capitalize(pick(rng, words)) + " " + pick(rng, shopSuffixes),
	}
	names := &shopNames{used: map[string]bool{}}
	s.drawItemShape(rng, names)
	s.drawCatalogue(rng, names)
	s.drawSessions(rng, names)
	s.drawSorts(rng, names)
	s.drawCalendar(rng, names)
	s.drawEndless(rng)
	s.drawCounter(rng, names)
	s.track = trackingStyle{
		name:    names.take(func() string { return invented(rng) }),
		shape:   rng.IntN(3),
		length:  12 + rng.IntN(21),
		percent: 20 + rng.IntN(41),
	}
	s.drawItems()
	for len(s.counts.teasers) < min(3, len(s.items)) {
		if i := rng.IntN(len(s.items)); !containsInt(s.counts.teasers, i) {
			s.counts.teasers = append(s.counts.teasers, i)
		}
	}
	return s
}

// drawItemShape draws the shape of the item URLs; the items' values
// follow it (drawItems).
func (s *shopSite) drawItemShape(rng *rand.Rand, names *shopNames) {
	if rng.IntN(4) == 0 {
		s.itemShape = urlShape{prefix: pick(rng, shopItemQueries), param: names.take(func() string { return pick(rng, shopItemParams) })}
		return
	}
	w := pick(rng, shopItemWords)
	s.itemShape = urlShape{prefix: "/" + w + "/", suffix: pick(rng, []string{"", "", "/", ".html", ".htm"})}
}

// itemValue returns the variable part of the URL of item it in the shop's
// item shape: "123", "blue-oak-chair-123", "123/blue-oak-chair" …
func (s *shopSite) itemValue(it *shopItem, form int) string {
	id := strconv.Itoa(it.id)
	switch form {
	case 1:
		return it.slug + "-" + id
	case 2:
		return id + "-" + it.slug
	case 3:
		return it.slug + "-p" + id
	case 4:
		return id + "/" + it.slug
	}
	return id
}

// drawCatalogue draws the catalogue's URLs and pagination.
func (s *shopSite) drawCatalogue(rng *rand.Rand, names *shopNames) {
	w := pick(rng, shopCatWords)
	s.catLabel = pick(rng, []string{"All products", "Catalogue", "Shop all", "Everything", "Our range"})
	s.numbered = rng.IntN(2) == 0
	if rng.IntN(2) == 0 {
		s.catShape = urlShape{prefix: "/" + w, param: names.take(func() string {
			if rng.IntN(4) == 0 {
				return invented(rng)
			}
			return pick(rng, shopCatParams)
		})}
		if rng.IntN(4) > 0 {
			s.catShape.bare = "/" + w
		}
		return
	}
	mid := pick(rng, []string{"page/", "p/", "", "page-"})
	suffix := pick(rng, []string{"", "/", ".html"})
	if mid == "" && suffix == "" {
		suffix = "/"
	}
	s.catShape = urlShape{prefix: "/" + w + "/" + mid, suffix: suffix}
	if rng.IntN(2) == 0 {
		s.catShape.bare = "/" + w + "/"
	}
}

// drawSessions draws the session ids' parameter and values.
func (s *shopSite) drawSessions(rng *rand.Rand, names *shopNames) {
	st := &s.sess
	st.path = rng.IntN(3) == 0
	st.name = names.take(func() string {
		if rng.IntN(3) == 0 {
			return syllable(rng) + pick(rng, []string{"sid", "sess", "_s", "session", "_sid"})
		}
		if st.path {
			return pick(rng, shopSessionP)
		}
		return pick(rng, shopSessionQ)
	})
	st.alphabet = pick(rng, []string{hexLower, hexUpper, base36Lower, base36Upper})
	st.length = 24 + rng.IntN(9)
	st.perLink = rng.IntN(2) == 0
}

// drawSorts draws the sort parameter and 3–5 orders.
func (s *shopSite) drawSorts(rng *rand.Rand, names *shopNames) {
	st := &s.sorts
	st.param = names.take(func() string {
		if rng.IntN(4) == 0 {
			return invented(rng)
		}
		return pick(rng, shopSortParams)
	})
	st.label = rng.IntN(2) == 0
	st.deflt = pick(rng, []string{"Featured", "Relevance", "Recommended", "Our picks"})
	numeric := rng.IntN(4) == 0
	codes := rng.Perm(9)
	st.byValue = map[string]int{}
	for k, o := range rng.Perm(len(sortOrders))[:3+rng.IntN(3)] {
		v := pick(rng, sortOrders[o].values)
		if numeric {
			v = strconv.Itoa(1 + codes[k])
		}
		st.byValue[v] = len(st.orders)
		st.orders = append(st.orders, shopSort{order: sortOrder(o), value: v})
	}
}

// drawCalendar draws the calendar's URLs and links.
func (s *shopSite) drawCalendar(rng *rand.Rand, names *shopNames) {
	w := pick(rng, shopDayWords)
	d := &s.day
	d.label = pick(rng, []string{"Events", "What's on", "Agenda", "Calendar", "Diary"})
	d.jumps = rng.IntN(3)
	d.fromItems = rng.IntN(2) == 0
	if rng.IntN(3) == 0 {
		d.fmt = pick(rng, []dayFormat{dayDash, dayCompact})
		d.shape = urlShape{prefix: "/" + w, param: names.take(func() string { return pick(rng, shopDayParams) })}
		return
	}
	d.fmt = dayFormat(rng.IntN(3))
	mid := pick(rng, []string{"", "", "day/", "date/"})
	d.shape = urlShape{prefix: "/" + w + "/" + mid, suffix: pick(rng, []string{"", "/", ".html"})}
}

// drawEndless draws the endless path's names and place.
func (s *shopSite) drawEndless(rng *rand.Rand) {
	e := &s.path
	perm := rng.Perm(len(shopEndless))
	e.names = []string{shopEndless[perm[0]]}
	if rng.IntN(3) == 0 {
		e.names = append(e.names, shopEndless[perm[1]])
	}
	e.dot = rng.IntN(3) == 0
	if s.itemShape.param != "" || rng.IntN(3) == 0 {
		e.help = pick(rng, shopHelpRoots)
	}
}

// drawCounter draws the news chain's URLs.
func (s *shopSite) drawCounter(rng *rand.Rand, names *shopNames) {
	w := pick(rng, shopNewsWords)
	c := &s.counts
	c.label = capitalize(w)
	c.offsets = rng.IntN(2) == 0
	c.start, c.step = 2, 1
	if c.offsets {
		c.step = pick(rng, []int64{5, 10, 12, 20, 25})
		c.start = c.step
	}
	if rng.IntN(2) == 0 {
		params := []string{"page", "p", "pg"}
		if c.offsets {
			params = []string{"offset", "start", "from", "skip", "o"}
		}
		c.shape = urlShape{prefix: "/" + w, param: names.take(func() string { return pick(rng, params) }), bare: "/" + w}
		return
	}
	mid := pick(rng, []string{"page/", "older/", "p/", "archive/"})
	suffix := pick(rng, []string{"", "/"})
	c.shape = urlShape{prefix: "/" + w + "/" + mid, suffix: suffix, bare: "/" + w + suffix}
}

// drawItems draws the items: names, prices and the rest, and their URL
// values.
func (s *shopSite) drawItems() {
	rng := hostRand(s.host.web.cfg.Seed, s.host.index, 12)
	n := s.opt.Catalog * s.opt.PerPage
	adj := subset(rng, shopAdjectives)
	mat := subset(rng, shopMaterials)
	noun := subset(rng, shopNouns)
	form := 0
	if s.itemShape.param == "" {
		form = rng.IntN(5)
	}
	first, stride := 1+rng.IntN(5000), 1+rng.IntN(7)
	s.items = make([]shopItem, n)
	s.itemByValue = make(map[string]int, n)
	seen := make(map[string]bool, n)
	for i := range s.items {
		it := &s.items[i]
		var ws []string
		for try := 0; try < 10 && (ws == nil || seen[strings.Join(ws, " ")]); try++ {
			ws = []string{pick(rng, mat), pick(rng, noun)}
			if rng.IntN(3) > 0 {
				ws = append([]string{pick(rng, adj)}, ws...)
			}
			if rng.IntN(5) == 0 {
				ws = append(ws, pick(rng, []string{"set", "mini", "large", "duo", "kit"}))
			}
		}
		seen[strings.Join(ws, " ")] = true
		for k := range ws {
			ws[k] = capitalize(ws[k])
		}
		*it = shopItem{
			id:         first + i*stride,
			name:       strings.Join(ws, " "),
			slug:       strings.ToLower(strings.Join(ws, "-")),
			cents:      199 + rng.IntN(99800),
			rating:     10 + rng.IntN(41),
			added:      rng.IntN(3 * 365),
			popularity: rng.IntN(100000),
			seed:       rng.Uint64(),
		}
		it.value = s.itemValue(it, form)
		s.itemByValue[it.value] = i
		for want := min(n-1, 2+rng.IntN(3)); len(it.related) < want; {
			j := rng.IntN(n - 1)
			if j >= i {
				j++
			}
			if !containsInt(it.related, j) {
				it.related = append(it.related, j)
			}
		}
	}
}

// subset returns about two thirds of xs, at least three.
func subset(rng *rand.Rand, xs []string) []string {
	var out []string
	for _, i := range rng.Perm(len(xs)) {
		if len(out) < 3 || rng.IntN(3) > 0 {
			out = append(out, xs[i])
		}
	}
	return out
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
