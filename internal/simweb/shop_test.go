package simweb

import (
	"bytes"
	"compress/gzip"
	"errors"
	"html"
	"io"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// shopWeb returns a web whose host a.test is the shop s; b.test, if
// hosts > 1, is an ordinary host.
func shopWeb(t *testing.T, seed int64, s Shop, hosts int) (*Web, *Host) {
	t.Helper()
	w := newWeb(t, Config{Seed: seed, Hosts: hosts, PagesPerHost: 10, Profiles: []Profile{ProfileAllow},
		HostOptions: func(i int, _ string) HostOptions {
			if i == 0 {
				return HostOptions{Shop: &s}
			}
			return HostOptions{}
		}})
	return w, w.Hosts()[0]
}

// variantFree removes the shop's session ids and tracking parameters
// from the absolute URL u, by the names the shop drew: the URL as it
// would be written without them.
func variantFree(t *testing.T, s *shopSite, u string) string {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	path := pu.EscapedPath()
	if s.sess.path {
		path = regexp.MustCompile(`(?i);`+regexp.QuoteMeta(s.sess.name)+`=[^/]*`).ReplaceAllString(path, "")
	}
	var kept []string
	for _, kv := range strings.Split(pu.RawQuery, "&") {
		name, _, _ := strings.Cut(kv, "=")
		if kv == "" || name == s.track.name || !s.sess.path && name == s.sess.name {
			continue
		}
		kept = append(kept, kv)
	}
	if len(kept) > 0 {
		path += "?" + strings.Join(kept, "&")
	}
	return path
}

// withoutVariants removes the shop's session ids and tracking parameters
// from the links of doc.
func withoutVariants(s *shopSite, doc []byte) []byte {
	re := regexp.MustCompile(`(?i)[;?&](` + regexp.QuoteMeta(s.sess.name) + `|` + regexp.QuoteMeta(s.track.name) + `)=[0-9a-z]+`)
	return re.ReplaceAll(doc, nil)
}

// h1 returns the text of the page's first <h1>.
func h1(b []byte) string {
	_, rest, _ := bytes.Cut(b, []byte("<h1>"))
	title, _, _ := bytes.Cut(rest, []byte("</h1>"))
	return string(title)
}

// sameHost returns the links of doc (at docURL) that stay on host h.
func sameHost(t *testing.T, h *Host, docURL string, doc []byte) []string {
	t.Helper()
	var out []string
	for _, l := range extractLinks(t, docURL, doc) {
		if strings.HasPrefix(l, h.URL("/")) {
			out = append(out, l)
		}
	}
	return out
}

// TestShopSurfacesVary: every family's surface differs across seeds, so
// that no rule fitted to one seed's names and shapes covers the others.
func TestShopSurfacesVary(t *testing.T) {
	digits := regexp.MustCompile(`[0-9]+`)
	shape := func(u string) string { return digits.ReplaceAllString(u, "#") }
	surfaces := map[string]map[string]bool{}
	add := func(family, v string) {
		if surfaces[family] == nil {
			surfaces[family] = map[string]bool{}
		}
		surfaces[family][v] = true
	}
	const seeds = 20
	for seed := int64(1); seed <= seeds; seed++ {
		_, h := shopWeb(t, seed, Shop{}, 1)
		s := h.shop()
		add("item", shape(s.itemURL(0)))
		add("item words", s.items[0].name)
		add("catalogue", shape(s.catalogueURL(2, 0)))
		add("session", strconv.FormatBool(s.sess.path)+s.sess.name)
		add("session value", strconv.Itoa(s.sess.length)+s.sess.alphabet[10:12]+strconv.FormatBool(s.sess.perLink))
		add("tracking", s.track.name)
		add("tracking value", strconv.Itoa(s.track.shape))
		add("sort", s.sorts.param)
		add("sort values", s.catalogueURL(1, 1))
		add("calendar", shape(s.dayURL(s.today)))
		add("endless", strings.Join(s.path.names, "/")+" "+s.path.help)
		add("counter", shape(s.counterURL(s.counts.start)))
		for _, k := range knownParams {
			if strings.EqualFold(s.track.name, k) {
				t.Errorf("seed %d: tracking parameter %q is a known name", seed, k)
			}
		}
		if seed <= 3 {
			t.Logf("seed %d: %s", seed, h.ShopSummary())
		}
	}
	min := map[string]int{"session value": 4, "tracking value": 3}
	for family, vs := range surfaces {
		want := 6
		if m, ok := min[family]; ok {
			want = m
		}
		if len(vs) < want {
			t.Errorf("%s: %d distinct surfaces in %d seeds, want at least %d: %v", family, len(vs), seeds, want, vs)
		}
	}
}

// crawlShop follows every same-host link from "/" through the handler,
// fetching real pages once per distinct URL (session ids and tracking
// parameters removed) and at most trapLimit pages of each trap family.
// It checks that every link is served, that PageOf and TrapOf agree with
// what is served, and returns the canonical pages and families found.
func crawlShop(t *testing.T, w *Web, h *Host, trapLimit int) (pages, families map[string]bool) {
	t.Helper()
	s := h.shop()
	pages, families = map[string]bool{}, map[string]bool{}
	canonH1 := map[string]string{}      // canonical URL → its h1
	canonItems := map[string][]string{} // catalogue URL → its item links, variant-free
	perFamily := map[string]int{}
	seen := map[string]bool{}
	queue := []string{h.URL("/")}
	reordered := 0
	var sorted []string // sorted catalogue URLs fetched
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		key := variantFree(t, s, u)
		fam, isTrap := h.TrapOf(u)
		c, real := h.PageOf(u)
		if seen[key] {
			continue
		}
		seen[key] = true
		if isTrap {
			families[fam] = true
		}
		if real == (isTrap && (fam == FamilyCalendar || fam == FamilyEndlessPath || fam == FamilyCounter)) {
			t.Fatalf("%s: PageOf %v, TrapOf %q %v", u, real, fam, isTrap)
		}
		if !real {
			if perFamily[fam]++; perFamily[fam] > trapLimit {
				continue
			}
		}
		resp, b := fetch(t, w, u)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d", u, resp.StatusCode)
		}
		links := sameHost(t, h, u, b)
		switch {
		case real && h.URL(key) == c:
			if isTrap && fam != FamilySession && fam != FamilyTracking {
				t.Errorf("%s: the canonical page with TrapOf %q", u, fam)
			}
		case real:
			if fam != FamilySort {
				t.Errorf("%s serves %s, TrapOf %q %v; want sort", u, c, fam, isTrap)
			}
			sorted = append(sorted, u)
		case fam == FamilyCalendar:
			if !bytes.Contains(b, []byte("No events on ")) {
				t.Errorf("%s: not a calendar page:\n%s", u, b)
			}
		case fam == FamilyCounter:
			if !bytes.Contains(b, []byte(s.counts.label)) || !bytes.Contains(b, []byte("Older posts")) {
				t.Errorf("%s: not a news page:\n%s", u, b)
			}
		case fam == FamilyEndlessPath:
			rt, _ := s.route(key)
			if rt.n >= 0 && h1(b) != s.items[rt.n].name || rt.n < 0 && !strings.HasPrefix(key, s.path.help) {
				t.Errorf("%s: h1 %q: not the page of its base", u, h1(b))
			}
		}
		if real {
			pages[c] = true
			if key == strings.TrimPrefix(c, h.URL("")) {
				canonH1[c] = h1(b)
				if strings.HasPrefix(h1(b), s.catLabel) {
					canonItems[c] = itemLinks(t, s, links)
				}
			}
		}
		for _, l := range links {
			if !seen[variantFree(t, s, l)] {
				queue = append(queue, l)
			}
		}
	}
	// Sort variants list the same items as their canonical page, in
	// another order; their h1 is the canonical one's.
	for _, u := range sorted {
		c, _ := h.PageOf(u)
		_, b := fetch(t, w, u)
		if h1(b) != canonH1[c] {
			t.Errorf("%s: h1 %q, %s has %q", u, h1(b), c, canonH1[c])
		}
		got := itemLinks(t, s, sameHost(t, h, u, b))
		if !slices.Equal(got, canonItems[c]) {
			reordered++
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(canonItems[c]))
		if !slices.Equal(got, want) {
			t.Errorf("%s: items %v, %s has %v", u, got, c, want)
		}
	}
	if len(sorted) > 0 && reordered == 0 && s.opt.PerPage > 2 {
		t.Errorf("no sort variant orders its items differently")
	}
	return pages, families
}

// itemLinks returns the variant-free item URLs among links, in order.
func itemLinks(t *testing.T, s *shopSite, links []string) []string {
	var out []string
	for _, l := range links {
		k := variantFree(t, s, l)
		if rt, ok := s.route(k); ok && rt.kind == routeItem && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// TestShopCrawl: for several seeds and switches, every real page is
// reachable from "/", every link is served, PageOf and TrapOf agree with
// what is served, and exactly the families switched on show up.
func TestShopCrawl(t *testing.T) {
	all := []string{FamilySession, FamilyTracking, FamilySort, FamilyCalendar, FamilyEndlessPath, FamilyCounter}
	for _, tc := range []struct {
		seed int64
		shop Shop
	}{
		{1, Shop{}},
		{2, Shop{Catalog: 4, PerPage: 12}},
		{3, Shop{Catalog: 3, PerPage: 7}},
		{4, Shop{Catalog: 40, PerPage: 3}},
		{5, Shop{Catalog: 5, PerPage: 5, NoSessions: true, NoCounter: true}},
		{6, Shop{Catalog: 5, PerPage: 5, NoTracking: true, NoSorts: true, NoEndlessPath: true}},
		{7, Shop{Catalog: 2, PerPage: 5, NoSessions: true, NoTracking: true, NoSorts: true, NoCalendar: true, NoEndlessPath: true, NoCounter: true}},
		{8, Shop{Catalog: 6, PerPage: 4}},
		{9, Shop{Catalog: 6, PerPage: 4}},
	} {
		t.Run(strconv.FormatInt(tc.seed, 10), func(t *testing.T) {
			w, h := shopWeb(t, tc.seed, tc.shop, 2)
			want := h.DistinctPages()
			if n := 1 + tc.shop.Catalog + tc.shop.Catalog*tc.shop.PerPage; tc.shop.Catalog > 0 && len(want) != n {
				t.Fatalf("%d distinct pages, want %d", len(want), n)
			}
			if tc.shop.Catalog == 0 && len(want) != 511 {
				t.Fatalf("%d distinct pages, want 511", len(want))
			}
			pages, families := crawlShop(t, w, h, 15)
			for _, p := range want {
				if !pages[p] {
					t.Errorf("%s not reached from /", p)
				}
			}
			if len(pages) != len(want) {
				t.Errorf("%d pages reached, %d distinct", len(pages), len(want))
			}
			off := map[string]bool{
				FamilySession: tc.shop.NoSessions, FamilyTracking: tc.shop.NoTracking, FamilySort: tc.shop.NoSorts,
				FamilyCalendar: tc.shop.NoCalendar, FamilyEndlessPath: tc.shop.NoEndlessPath, FamilyCounter: tc.shop.NoCounter,
			}
			for _, f := range all {
				if families[f] == off[f] {
					t.Errorf("family %s: seen %v, switched off %v", f, families[f], off[f])
				}
			}
			t.Logf("%d requests; %s", len(w.Requests()), h.ShopSummary())
		})
	}
}

// sessionValues returns the session ids in the links of doc.
func sessionValues(s *shopSite, doc []byte) []string {
	sep := `[?&;]`
	if s.sess.path {
		sep = `;`
	}
	re := regexp.MustCompile(sep + regexp.QuoteMeta(s.sess.name) + `=([0-9A-Za-z]+)`)
	var out []string
	for _, m := range re.FindAllSubmatch(doc, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

// TestShopSessionsFresh: a page fetched twice carries new session ids
// and tracking values, of the drawn length and alphabet, one per
// response or one per link as drawn; the page is the same.
func TestShopSessionsFresh(t *testing.T) {
	perLink, perResponse := 0, 0
	for seed := int64(1); seed <= 12; seed++ {
		w, h := shopWeb(t, seed, Shop{Catalog: 3, PerPage: 20}, 1)
		s := h.shop()
		u := h.URL(s.catalogueURL(2, 0))
		_, a := fetch(t, w, u)
		_, b := fetch(t, w, u)
		va, vb := sessionValues(s, a), sessionValues(s, b)
		links := bytes.Count(a, []byte(`href="`))
		if len(va) != links || len(vb) != links {
			t.Fatalf("seed %d: %d and %d session ids for %d links:\n%s", seed, len(va), len(vb), links, a)
		}
		for _, v := range va {
			if len(v) < 24 || len(v) > 32 || strings.Trim(v, s.sess.alphabet) != "" {
				t.Errorf("seed %d: session id %q", seed, v)
			}
			if slices.Contains(vb, v) {
				t.Errorf("seed %d: session id %s in both responses", seed, v)
			}
		}
		distinct := len(slices.Compact(slices.Sorted(slices.Values(va))))
		switch {
		case s.sess.perLink && distinct == len(va):
			perLink++
		case !s.sess.perLink && distinct == 1:
			perResponse++
		default:
			t.Errorf("seed %d: %d distinct ids in %d links; per link %v", seed, distinct, len(va), s.sess.perLink)
		}
		if h1(a) != h1(b) {
			t.Errorf("seed %d: %q then %q", seed, h1(a), h1(b))
		}
		// Tracking: a drawn share of the links, fresh values.
		re := regexp.MustCompile(`[?&]` + regexp.QuoteMeta(s.track.name) + `=([0-9a-z]+)`)
		ta, tb := re.FindAllSubmatch(a, -1), re.FindAllSubmatch(b, -1)
		if pct := 100 * len(ta) / links; pct < 5 || pct > 80 {
			t.Errorf("seed %d: %d%% of links tracked, drawn %d%%", seed, pct, s.track.percent)
		}
		for _, m := range ta {
			v := string(m[1])
			if s.track.shape == trackMillis && (len(v) != 13 || strings.Trim(v, "0123456789") != "") {
				t.Errorf("seed %d: tracking value %q is not 13 digits", seed, v)
			}
			for _, n := range tb {
				if string(n[1]) == v {
					t.Errorf("seed %d: tracking value %s in both responses", seed, v)
				}
			}
		}
	}
	if perLink == 0 || perResponse == 0 {
		t.Errorf("per link %d, per response %d: both styles should be drawn", perLink, perResponse)
	}
}

// withParams returns the request URI path?query with the parameters
// kvs added, in that order.
func withParams(uri string, kvs ...string) string {
	path, query, _ := strings.Cut(uri, "?")
	ps := kvs
	if query != "" {
		ps = append(strings.Split(query, "&"), kvs...)
	}
	if len(ps) == 0 {
		return path
	}
	return path + "?" + strings.Join(ps, "&")
}

// TestShopPageOf: URLs of real pages in every variant map to the
// canonical URL; unknown values and parameters answer 404.
func TestShopPageOf(t *testing.T) {
	for seed := int64(1); seed <= 10; seed++ {
		w, h := shopWeb(t, seed, Shop{Catalog: 4, PerPage: 5}, 1)
		s := h.shop()
		for _, c := range h.DistinctPages() {
			resp, _ := fetch(t, w, c)
			if resp.StatusCode != 200 {
				t.Fatalf("seed %d: %s: %d", seed, c, resp.StatusCode)
			}
			if got, ok := h.PageOf(c); !ok || got != c {
				t.Errorf("seed %d: PageOf(%s) = %s %v", seed, c, got, ok)
			}
			if f, ok := h.TrapOf(c); ok {
				t.Errorf("seed %d: TrapOf(%s) = %s", seed, c, f)
			}
		}
		sessioned := func(uri, v string) string {
			if s.sess.path {
				path, query, ok := strings.Cut(uri, "?")
				if ok {
					query = "?" + query
				}
				return path + ";" + s.sess.name + "=" + v + query
			}
			return withParams(uri, s.sess.name+"="+v)
		}
		item := s.itemURL(3)
		cat := s.catalogueURL(2, 0)
		sortedCat := s.catalogueURL(2, 2)
		trackedFirst := func(uri string) string {
			path, query, ok := strings.Cut(uri, "?")
			if ok {
				query = "&" + query
			}
			return path + "?" + s.track.name + "=9" + query
		}
		for _, tc := range []struct{ uri, canonical, family string }{
			{sessioned(item, "madeup"), item, FamilySession},
			{withParams(item, s.track.name+"=1"), item, FamilyTracking},
			{withParams(sessioned(item, "x"), s.track.name+"=abc"), item, FamilyTracking},
			{trackedFirst(cat), cat, FamilyTracking},
			{sortedCat, cat, FamilySort},
			{withParams(sessioned(sortedCat, "y"), s.track.name+"=0"), cat, FamilySort},
		} {
			if c, ok := h.PageOf(tc.uri); !ok || c != h.URL(tc.canonical) {
				t.Errorf("seed %d: PageOf(%s) = %s %v, want %s", seed, tc.uri, c, ok, tc.canonical)
			}
			if f, _ := h.TrapOf(tc.uri); f != tc.family {
				t.Errorf("seed %d: TrapOf(%s) = %q, want %q", seed, tc.uri, f, tc.family)
			}
			if resp, _ := fetch(t, w, h.URL(tc.uri)); resp.StatusCode != 200 {
				t.Errorf("seed %d: %s: %d", seed, tc.uri, resp.StatusCode)
			}
		}
		// Parameters in another order.
		if q := strings.SplitN(strings.SplitN(sortedCat, "?", 2)[1], "&", 2); len(q) == 2 {
			uri := strings.SplitN(sortedCat, "?", 2)[0] + "?" + q[1] + "&" + q[0]
			if c, ok := h.PageOf(uri); !ok || c != h.URL(cat) {
				t.Errorf("seed %d: PageOf(%s) = %s %v", seed, uri, c, ok)
			}
		}
		for _, bad := range []string{
			withParams(cat, s.sorts.param+"=nosuchorder"),
			withParams(sortedCat, s.sorts.param+"="+s.sorts.orders[0].value), // two orders
			withParams(item, "x=1"),
			withParams(item, s.sorts.param+"="+s.sorts.orders[0].value),
			"/nosuchpage",
			s.catalogueURL(s.opt.Catalog+1, 0),
			s.catShape.format("0"),
			s.catShape.format("02"),
		} {
			if resp, _ := fetch(t, w, h.URL(bad)); resp.StatusCode != 404 {
				t.Errorf("seed %d: %s: %d, want 404", seed, bad, resp.StatusCode)
			}
			if c, ok := h.PageOf(bad); ok {
				t.Errorf("seed %d: PageOf(%s) = %s", seed, bad, c)
			}
			if f, ok := h.TrapOf(bad); ok {
				t.Errorf("seed %d: TrapOf(%s) = %s", seed, bad, f)
			}
		}
		for _, u := range []string{h.URL(s.dayURL(s.today)), h.URL(s.counterURL(0)), h.URL(s.endlessBase(0) + s.path.names[0] + "/"), "http://b.test/", "mailto:x@a.test"} {
			if c, ok := h.PageOf(u); ok {
				t.Errorf("seed %d: PageOf(%s) = %s", seed, u, c)
			}
		}
	}
}

// TestShopCalendar: one page per day without end, every page the same
// template, from the day of Shop.Today.
func TestShopCalendar(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		today := time.Date(2031, 2, 3, 23, 30, 0, 0, time.FixedZone("east", 5*3600))
		w, h := shopWeb(t, seed, Shop{Catalog: 1, PerPage: 3, Today: today}, 1)
		s := h.shop()
		_, home := fetch(t, w, h.URL("/"))
		u := linkTo(t, h.URL("/"), home, html.EscapeString(s.day.label))
		if variantFree(t, s, u) != s.dayURL(time.Date(2031, 2, 3, 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("seed %d: the entrance is %s", seed, u)
		}
		var first []byte
		for k := range 40 {
			resp, b := fetch(t, w, u)
			if resp.StatusCode != 200 {
				t.Fatalf("seed %d: %s: %d", seed, u, resp.StatusCode)
			}
			if f, _ := h.TrapOf(u); f != FamilyCalendar {
				t.Errorf("seed %d: TrapOf(%s) = %q", seed, u, f)
			}
			day := time.Date(2031, 2, 3+k, 0, 0, 0, 0, time.UTC)
			if want := "No events on " + day.Weekday().String(); !bytes.Contains(b, []byte(want)) {
				t.Fatalf("seed %d: %s lacks %q:\n%s", seed, u, want, b)
			}
			switch d := len(withoutVariants(s, b)) - len(first); {
			case k == 0:
			case first == nil:
				first = withoutVariants(s, b)
			case d < -40 || d > 40:
				t.Errorf("seed %d: %s: %d bytes, the first %d: not the same template", seed, u, len(b), len(first))
			}
			u = linkTo(t, u, b, "Next day »")
		}
		// Beyond any bound a crawler sets, and back.
		for _, d := range []time.Time{time.Date(123456789, 5, 31, 0, 0, 0, 0, time.UTC), time.Date(-44, 3, 15, 0, 0, 0, 0, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)} {
			u := h.URL(s.dayURL(d))
			resp, b := fetch(t, w, u)
			if resp.StatusCode != 200 {
				t.Fatalf("seed %d: %s: %d", seed, u, resp.StatusCode)
			}
			next := variantFree(t, s, linkTo(t, u, b, "Next day »"))
			prev := variantFree(t, s, linkTo(t, u, b, "« Previous day"))
			if next != s.dayURL(d.AddDate(0, 0, 1)) || prev != s.dayURL(d.AddDate(0, 0, -1)) {
				t.Errorf("seed %d: %s links %s and %s", seed, u, prev, next)
			}
		}
		for _, bad := range []string{
			s.day.shape.format(s.day.fmt.format(time.Date(2031, 2, 28, 0, 0, 0, 0, time.UTC))[:4] + "x"),
			s.day.shape.format(strings.Replace(s.day.fmt.format(time.Date(2031, 4, 30, 0, 0, 0, 0, time.UTC)), "30", "31", 1)),
			s.day.shape.format("0" + s.day.fmt.format(time.Date(2031, 2, 28, 0, 0, 0, 0, time.UTC))),
			s.day.shape.format(s.day.fmt.format(time.Date(calendarMaxYear+1, 1, 1, 0, 0, 0, 0, time.UTC))),
		} {
			if resp, _ := fetch(t, w, h.URL(bad)); resp.StatusCode != 404 {
				t.Errorf("seed %d: %s: %d, want 404", seed, bad, resp.StatusCode)
			}
		}
	}
}

// TestShopCounter: the news chain goes on without end, every page the
// same template with another number.
func TestShopCounter(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		w, h := shopWeb(t, seed, Shop{Catalog: 1, PerPage: 3}, 1)
		s := h.shop()
		_, home := fetch(t, w, h.URL("/"))
		u := linkTo(t, h.URL("/"), home, s.counts.label+": the latest posts")
		var first []byte // the second page's: the first may differ (no "Newer posts", a shorter title)
		seen := map[string]bool{}
		for k := range 30 {
			resp, b := fetch(t, w, u)
			if resp.StatusCode != 200 {
				t.Fatalf("seed %d: %s: %d", seed, u, resp.StatusCode)
			}
			if f, _ := h.TrapOf(u); f != FamilyCounter {
				t.Errorf("seed %d: TrapOf(%s) = %q", seed, u, f)
			}
			switch d := len(withoutVariants(s, b)) - len(first); {
			case k == 0:
			case first == nil:
				first = withoutVariants(s, b)
			case d < -100 || d > 100:
				t.Errorf("seed %d: %s: %d bytes, the first %d", seed, u, len(b), len(first))
			}
			seen[variantFree(t, s, u)] = true
			u = linkTo(t, u, b, "Older posts »")
		}
		if len(seen) != 30 {
			t.Errorf("seed %d: %d distinct pages in 30 steps", seed, len(seen))
		}
		far := h.URL(s.counterURL(s.counts.start + 1_000_000*s.counts.step))
		if resp, _ := fetch(t, w, far); resp.StatusCode != 200 {
			t.Errorf("seed %d: %s: %d", seed, far, resp.StatusCode)
		}
		for _, bad := range []int64{s.counts.start - 1, s.counts.start + 1} {
			if bad == 0 || s.counts.step == 1 && bad > s.counts.start {
				continue
			}
			if resp, _ := fetch(t, w, h.URL(s.counterURL(bad))); resp.StatusCode != 404 {
				t.Errorf("seed %d: %s: %d, want 404", seed, s.counterURL(bad), resp.StatusCode)
			}
		}
	}
}

// TestShopEndlessPath: below the entrance, ever longer paths serve the
// same page again.
func TestShopEndlessPath(t *testing.T) {
	places := map[bool]int{}
	for seed := int64(1); seed <= 12; seed++ {
		w, h := shopWeb(t, seed, Shop{Catalog: 2, PerPage: 3}, 1)
		s := h.shop()
		start := h.URL(s.itemURL(4))
		if s.path.help != "" {
			start = h.URL("/")
		}
		_, b := fetch(t, w, start)
		text := capitalize(s.path.names[0])
		if s.path.help != "" {
			text = "Help"
		}
		u := linkTo(t, start, b, text)
		var title string
		prevLen := 0
		for k := range 12 {
			resp, b := fetch(t, w, u)
			if resp.StatusCode != 200 {
				t.Fatalf("seed %d: %s: %d", seed, u, resp.StatusCode)
			}
			if f, _ := h.TrapOf(u); f != FamilyEndlessPath {
				t.Errorf("seed %d: TrapOf(%s) = %q", seed, u, f)
			}
			path := variantFree(t, s, u)
			if k > 0 && (len(path) <= prevLen || h1(b) != title) {
				t.Errorf("seed %d: %s: h1 %q after %q", seed, path, h1(b), title)
			}
			title, prevLen = h1(b), len(path)
			next := s.path.names[(k+boolInt(s.path.help == ""))%len(s.path.names)]
			u = linkTo(t, u, b, capitalize(next))
		}
		places[s.path.help == ""]++
	}
	if places[true] == 0 || places[false] == 0 {
		t.Errorf("endless paths below items %d times, below a help section %d times", places[true], places[false])
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestShopHTTP: gzip, validators, conditional GET, HEAD, the request log
// and robots.txt, as for the other hosts.
func TestShopHTTP(t *testing.T) {
	w := newWeb(t, Config{Seed: 3, Hosts: 2, Profiles: []Profile{ProfileDisallow},
		HostOptions: func(int, string) HostOptions { return HostOptions{Shop: &Shop{Catalog: 2, PerPage: 4}} }})
	h := w.Hosts()[0]
	s := h.shop()
	u := h.URL(s.itemURL(2))
	plain, pb := fetch(t, w, u)
	zipped, zb := fetch(t, w, u, "Accept-Encoding", "gzip")
	if zipped.Header.Get("Content-Encoding") != "gzip" || plain.Header.Get("Content-Encoding") != "" {
		t.Fatalf("Content-Encoding %q and %q", zipped.Header.Get("Content-Encoding"), plain.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(zb))
	if err != nil {
		t.Fatal(err)
	}
	unz, _ := io.ReadAll(zr)
	if h1(unz) != h1(pb) || bytes.Equal(unz, pb) {
		t.Errorf("gzipped: h1 %q, plain %q; equal bytes %v (session ids should differ)", h1(unz), h1(pb), bytes.Equal(unz, pb))
	}
	etag, lm := plain.Header.Get("ETag"), plain.Header.Get("Last-Modified")
	if !strings.HasPrefix(etag, `W/"`) || etag != zipped.Header.Get("ETag") || lm == "" {
		t.Errorf("ETag %q then %q, Last-Modified %q", etag, zipped.Header.Get("ETag"), lm)
	}
	for _, hdr := range [][]string{{"If-None-Match", etag}, {"If-Modified-Since", lm}} {
		if resp := do(w, "GET", u, hdr...); resp.StatusCode != 304 {
			t.Errorf("%s: %d, want 304", hdr[0], resp.StatusCode)
		}
	}
	if resp := do(w, "GET", h.URL(s.itemURL(3)), "If-None-Match", etag); resp.StatusCode != 200 {
		t.Errorf("another item with this ETag: %d", resp.StatusCode)
	}
	if resp := do(w, "HEAD", u); resp.StatusCode != 200 || len(body(t, resp)) != 0 || resp.Header.Get("Content-Length") == "" {
		t.Errorf("HEAD: %d, Content-Length %q", resp.StatusCode, resp.Header.Get("Content-Length"))
	}
	if resp, b := fetch(t, w, h.URL("/robots.txt")); resp.StatusCode != 200 || !strings.Contains(string(b), "Disallow: /private/") {
		t.Errorf("robots.txt: %d\n%s", resp.StatusCode, b)
	}
	reqs := w.Requests()
	if n := len(reqs); n != 7 || reqs[0].Path != strings.TrimPrefix(u, h.URL("")) || reqs[0].Status != 200 || reqs[1].ContentEncoding != "gzip" {
		t.Errorf("%d requests logged: %+v", n, reqs)
	}
	if h.Resources() != nil {
		t.Error("a shop host has Resources")
	}

	// Without session ids and tracking, a page is the same bytes every
	// time, with a strong ETag.
	w2, h2 := shopWeb(t, 3, Shop{Catalog: 2, PerPage: 4, NoSessions: true, NoTracking: true}, 1)
	u2 := h2.URL(h2.shop().itemURL(2))
	a, ab := fetch(t, w2, u2)
	_, bb := fetch(t, w2, u2)
	if !bytes.Equal(ab, bb) || strings.HasPrefix(a.Header.Get("ETag"), "W/") {
		t.Errorf("without sessions: equal bytes %v, ETag %q", bytes.Equal(ab, bb), a.Header.Get("ETag"))
	}
}

// TestShopConcurrent: concurrent requests are all served, each response
// with session ids of its own.
func TestShopConcurrent(t *testing.T) {
	w, h := shopWeb(t, 2, Shop{Catalog: 2, PerPage: 5}, 1)
	s := h.shop()
	pages := h.DistinctPages()
	const n = 8
	ids := make(chan string, n*len(pages))
	errs := make(chan error, n)
	for g := range n {
		go func() {
			for k := range pages {
				u := pages[(g+k)%len(pages)]
				resp := do(w, "GET", u)
				b, err := io.ReadAll(resp.Body)
				if err == nil && resp.StatusCode != 200 {
					err = errors.New(u + ": " + resp.Status)
				}
				if err != nil {
					errs <- err
					return
				}
				ids <- sessionValues(s, b)[0]
			}
			errs <- nil
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		if seen[id] {
			t.Errorf("session id %s in two responses", id)
		}
		seen[id] = true
	}
	if got := len(w.Requests()); got != n*len(pages) {
		t.Errorf("%d requests logged, want %d", got, n*len(pages))
	}
}

// TestShopDeterminism: the same seed draws the same shop and serves the
// same bytes for the same sequence of requests; another seed does not.
func TestShopDeterminism(t *testing.T) {
	run := func(seed int64) string {
		w, h := shopWeb(t, seed, Shop{Catalog: 2, PerPage: 4}, 1)
		var b strings.Builder
		b.WriteString(h.ShopSummary())
		for _, u := range h.DistinctPages() {
			_, body := fetch(t, w, u)
			b.Write(body)
		}
		return b.String()
	}
	if run(5) != run(5) {
		t.Error("the same seed served different bytes")
	}
	if run(5) == run(6) {
		t.Error("two seeds served the same bytes")
	}
}

// TestShopInWeb: ordinary hosts link a shop host only at "/", and a
// shop's DistinctPages are sorted absolute URLs.
func TestShopInWeb(t *testing.T) {
	w := newWeb(t, Config{Seed: 4, Hosts: 6, PagesPerHost: 15,
		HostOptions: func(i int, _ string) HostOptions {
			if i == 2 {
				return HostOptions{Shop: &Shop{}}
			}
			return HostOptions{}
		}})
	shop := w.Hosts()[2]
	links := 0
	for _, h := range w.Hosts() {
		for _, r := range h.Resources() {
			for _, l := range r.Links {
				if strings.HasPrefix(l, shop.URL("/")) {
					links++
					if l != shop.URL("/") {
						t.Errorf("%s%s links %s", h.Name, r.Path, l)
					}
				}
			}
		}
	}
	if links == 0 {
		t.Error("no host links the shop")
	}
	ps := shop.DistinctPages()
	if !sort.StringsAreSorted(ps) || len(ps) != 511 || !strings.HasPrefix(ps[0], "http://c.test/") {
		t.Errorf("%d pages, sorted %v, first %s", len(ps), sort.StringsAreSorted(ps), ps[0])
	}
	if o := shop.Options(); o.Shop == nil || o.Shop.Catalog != 10 || o.Shop.PerPage != 50 || !o.Shop.Today.Equal(defaultShopToday) {
		t.Errorf("Options().Shop = %+v", o.Shop)
	}
	if w.Hosts()[0].ShopSummary() != "" {
		t.Error("an ordinary host has a shop summary")
	}
}

func TestShopOptionsErrors(t *testing.T) {
	for _, o := range []HostOptions{
		{Shop: &Shop{}, Traps: Traps{Calendar: true}},
		{Shop: &Shop{}, Pages: 10},
		{Shop: &Shop{Catalog: -1}},
		{Shop: &Shop{PerPage: -2}},
		{Shop: &Shop{Catalog: 1000, PerPage: 1000}},
	} {
		_, err := New(Config{Hosts: 1, HostOptions: func(int, string) HostOptions { return o }})
		if !errors.Is(err, errConfig) {
			t.Errorf("%+v: %v", o.Shop, err)
		}
	}
}

// TestTrapOfTraps: TrapOf names the families of the ordinary traps too.
func TestTrapOfTraps(t *testing.T) {
	_, h := trapWeb(t, HostOptions{Traps: Traps{SessionIDs: "sid", Calendar: true, Facets: true, DeepPath: true, Soft404: true}})
	real := strings.TrimPrefix(h.DistinctPages()[0], h.URL(""))
	for u, want := range map[string]string{
		"/calendar?month=2030-01":   FamilyCalendar,
		"/deep/x/x/":                FamilyEndlessPath,
		"/pages/1-x.html":           FamilySoft404,
		"/catalog?sort=price&sid=1": FamilySort,
		withParams(real, "sid=ab"):  FamilySession,
		real:                        "",
		"/calendar?month=2030-13":   "",
		"/deep/y/":                  "",
	} {
		if got, _ := h.TrapOf(u); got != want {
			t.Errorf("TrapOf(%s) = %q, want %q", u, got, want)
		}
	}
}
