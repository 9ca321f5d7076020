package cmstest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// The sites' content is drawn from the seed in Go, so that it is the same
// for a seed whatever PHP does with randomness, and handed to the CMS's
// own PHP as JSON.

// words is the vocabulary of the generated text.
var words = strings.Fields(`
the a an of to in for on with at by from about into over after before between through during without under
and or but so because while although when where which that who
is was are were be been has had have will would can could should may might must
make take find give tell work call try ask need feel become leave put mean keep let begin seem help show hear
play run move live believe bring happen write provide sit stand lose pay meet include continue set learn change
lead understand watch follow stop create speak read allow add spend grow open walk win offer remember love
consider appear buy wait serve die send expect build stay fall cut reach kill remain suggest raise pass sell
time year people way day man thing woman life child world school state family student group country problem
hand part place case week company system program question work government number night point home water room
mother area money story fact month lot right study book eye job word business issue side kind head house
service friend father power hour game line end member law car city community name president team minute idea
kid body information back parent face others level office door health person art war history party result
change morning reason research girl guy moment air teacher force education garden river mountain bridge
kitchen window market street coffee bread winter summer autumn spring morning evening letter journey harbour
new good high old great big small large local social important national young different long little
political public bad same able early private late real best certain free full special clear whole strong
quiet bright simple careful quick slow warm cold green blue yellow heavy light short wide deep fresh
very also just only then now even still well here back there often never always really almost however
`)

// titleWords are the nouns and adjectives titles are made of.
var titleWords = strings.Fields(`
garden river mountain bridge kitchen window market street coffee bread winter summer autumn spring morning
evening letter journey harbour lighthouse forest meadow village station library museum bicycle island valley
orchard workshop recipe notebook compass lantern harvest festival weekend holiday neighbour travel walk
quiet bright simple careful quick slow warm cold green blue yellow heavy light short wide deep fresh old new
first last little long small great hidden open early late lost found
`)

var categoryNames = []string{
	"Travel", "Food", "Gardening", "Books", "Photography", "Music", "Cycling", "Cooking", "History",
	"Technology", "Family", "Hiking", "Film", "Crafts", "Science", "Local News", "Recipes", "Weekend Trips",
	"Reviews", "Notes",
}

var tagNames = strings.Fields(`
apples autumn baking beach berries birds bread bridges cake camping castles cheese city coast coffee
cycling dogs dusk festival fishing flowers forest gardens harbour herbs hills islands jam kayaking lakes
lanterns maps markets meadows mountains museums night orchards picnic rain recipes rivers roads sailing
snow soup spring stars streets summer sunrise tea trains tulips valleys villages walking winter woods
`)

var firstNames = []string{"Alice", "Bruno", "Chiara", "Dmitri", "Elena", "Farid", "Greta", "Hiro", "Ines", "Jonas", "Katya", "Liam"}
var lastNames = []string{"Moreau", "Lindqvist", "Okafor", "Varga", "Tanaka", "Rossi", "Novak", "Haddad", "Keller", "Silva"}

var pageTitles = []string{
	"About", "Contact", "Team", "History", "Press", "Newsletter", "Archive Guide", "Privacy Notes", "Partners",
	"Events", "Volunteers", "Frequently Asked Questions", "Colophon", "Links", "Gallery", "Shop", "Recipes Index",
	"Maps", "Reading List", "Workshops", "Sponsors", "Jobs", "Location", "Opening Hours",
}

// gen draws text from a seeded source.
type gen struct{ r *rand.Rand }

func newGen(seed int64, stream uint64) *gen {
	return &gen{rand.New(rand.NewPCG(uint64(seed), stream))}
}

// between returns a number in [lo, hi].
func (g *gen) between(lo, hi int) int { return lo + g.r.IntN(hi-lo+1) }

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func (g *gen) pick(list []string) string { return list[g.r.IntN(len(list))] }

// sample returns n distinct elements of list (n ≤ len(list)).
func (g *gen) sample(list []string, n int) []string {
	idx := g.r.Perm(len(list))[:n]
	out := make([]string, n)
	for i, j := range idx {
		out[i] = list[j]
	}
	return out
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// sentence returns a sentence of 6 to 16 words.
func (g *gen) sentence() string {
	n := g.between(6, 16)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = g.pick(words)
	}
	end := "."
	if g.chance(0.08) {
		end = "?"
	}
	return capitalize(strings.Join(ws, " ")) + end
}

// paragraph returns 2 to 6 sentences.
func (g *gen) paragraph() string {
	n := g.between(2, 6)
	ss := make([]string, n)
	for i := range ss {
		ss[i] = g.sentence()
	}
	return strings.Join(ss, " ")
}

// title returns 2 to 6 title words, capitalized.
func (g *gen) title() string {
	n := g.between(2, 6)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = capitalize(g.pick(titleWords))
	}
	return strings.Join(ws, " ")
}

// WordPress content.

type wpSpec struct {
	Title        string    `json:"title"`
	Tagline      string    `json:"tagline"`
	PostsPerPage int       `json:"posts_per_page"`
	Users        []wpUser  `json:"users"`
	Categories   []wpTerm  `json:"categories"`
	Tags         []string  `json:"tags"`
	Pages        []wpPage  `json:"pages"`
	Posts        []wpPost  `json:"posts"`
	Comments     int       `json:"comments"` // their number, for the log
	Span         [2]string `json:"span"`     // the first and last post dates
}

type wpUser struct {
	Login string `json:"login"`
	Name  string `json:"name"`
	Email string `json:"email"`
	Bio   string `json:"bio"`
}

type wpTerm struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Parent      int    `json:"parent"` // index of the parent category, or -1
}

type wpPage struct {
	Title   string `json:"title"`
	Content string `json:"content"`
	Date    string `json:"date"`
	Parent  int    `json:"parent"` // index of the parent page, or -1
	Order   int    `json:"order"`
	Author  int    `json:"author"`
}

type wpPost struct {
	Title    string      `json:"title"`
	Content  string      `json:"content"`
	Date     string      `json:"date"`
	Author   int         `json:"author"`
	Cats     []int       `json:"cats"`
	Tags     []int       `json:"tags"`
	Comments []wpComment `json:"comments"`
}

type wpComment struct {
	Author  string `json:"author"`
	Email   string `json:"email"`
	Content string `json:"content"`
	Date    string `json:"date"`
	Parent  int    `json:"parent"` // index of the comment replied to, or -1
}

const wpDate = "2006-01-02 15:04:05"

// wordpressContent draws a blog: 250–400 posts over two to three years
// from 2021 on by 3–6 authors, 8–15 categories (some nested), 30–60 tags,
// 10–20 pages (some nested), and threaded comments on about two posts in
// three.
func wordpressContent(seed int64) wpSpec {
	g := newGen(seed, 1)
	s := wpSpec{
		Title:        g.title(),
		Tagline:      capitalize(strings.TrimSuffix(g.sentence(), ".")),
		PostsPerPage: 10,
	}
	first := g.sample(firstNames, g.between(3, 6))
	for _, fn := range first {
		ln := g.pick(lastNames)
		u := wpUser{
			Login: strings.ToLower(fn),
			Name:  fn + " " + ln,
			Email: strings.ToLower(fn) + "@cms.test",
		}
		if g.chance(0.5) {
			u.Bio = g.paragraph()
		}
		s.Users = append(s.Users, u)
	}
	for i, name := range g.sample(categoryNames, g.between(8, 15)) {
		t := wpTerm{Name: name, Description: g.sentence(), Parent: -1}
		// About one category in four is the child of an earlier top-level
		// one.
		if i >= 3 && g.chance(0.25) {
			var roots []int
			for j, c := range s.Categories {
				if c.Parent < 0 {
					roots = append(roots, j)
				}
			}
			t.Parent = roots[g.r.IntN(len(roots))]
		}
		s.Categories = append(s.Categories, t)
	}
	s.Tags = g.sample(tagNames, g.between(30, 60))

	start := time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)
	span := time.Duration(g.between(730, 1095)) * 24 * time.Hour
	end := start.Add(span)
	at := func(lo, hi time.Time) time.Time {
		d := hi.Sub(lo)
		if d <= 0 {
			return lo
		}
		return lo.Add(time.Duration(g.r.Int64N(int64(d/time.Second))) * time.Second)
	}

	for i, title := range g.sample(pageTitles, g.between(10, 20)) {
		p := wpPage{Title: title, Parent: -1, Order: i, Author: g.r.IntN(len(s.Users))}
		if i >= 3 && g.chance(0.35) {
			// Nested under an earlier page, at most two levels deep.
			j := g.r.IntN(i)
			if s.Pages[j].Parent < 0 || s.Pages[s.Pages[j].Parent].Parent < 0 {
				p.Parent = j
			}
		}
		p.Content = g.blocks(g.between(2, 5), false)
		p.Date = at(start, start.Add(30*24*time.Hour)).Format(wpDate)
		s.Pages = append(s.Pages, p)
	}

	n := g.between(250, 400)
	dates := make([]time.Time, n)
	for i := range dates {
		dates[i] = at(start, end)
	}
	slices.SortFunc(dates, func(a, b time.Time) int { return a.Compare(b) })
	s.Span = [2]string{dates[0].Format(wpDate), dates[n-1].Format(wpDate)}
	for i := range n {
		p := wpPost{
			Title:   g.title(),
			Content: g.blocks(g.between(3, 8), g.chance(0.4)),
			Date:    dates[i].Format(wpDate),
			Author:  g.r.IntN(len(s.Users)),
		}
		for range g.between(1, 2) {
			c := g.r.IntN(len(s.Categories))
			if !slices.Contains(p.Cats, c) {
				p.Cats = append(p.Cats, c)
			}
		}
		for range g.between(0, 5) {
			// Tags by a skewed draw, so that their counts differ, as on a
			// real blog: the tag cloud sizes them.
			t := int(float64(len(s.Tags)) * g.r.Float64() * g.r.Float64())
			if !slices.Contains(p.Tags, t) {
				p.Tags = append(p.Tags, t)
			}
		}
		if g.chance(0.65) {
			for k := range g.between(1, 9) {
				fn, ln := g.pick(firstNames), g.pick(lastNames)
				c := wpComment{
					Author:  fn + " " + ln[:1] + ".",
					Email:   strings.ToLower(fn+"."+ln) + "@mail.test",
					Content: g.sentence() + " " + g.sentence(),
					Parent:  -1,
				}
				if k > 0 && g.chance(0.4) {
					c.Parent = g.r.IntN(k)
				}
				lo := dates[i]
				if c.Parent >= 0 {
					lo, _ = time.Parse(wpDate, p.Comments[c.Parent].Date)
				}
				c.Date = at(lo, lo.Add(20*24*time.Hour)).Format(wpDate)
				p.Comments = append(p.Comments, c)
				s.Comments++
			}
		}
		s.Posts = append(s.Posts, p)
	}
	return s
}

// blocks returns n paragraphs as block editor markup, with now and then a
// heading or a list, and a "more" tag after the first paragraph when more
// is set (the home page then shows the post up to it, with a "Continue
// reading" link).
func (g *gen) blocks(n int, more bool) string {
	var b strings.Builder
	for i := range n {
		switch {
		case i > 0 && g.chance(0.15):
			fmt.Fprintf(&b, "<!-- wp:heading -->\n<h2>%s</h2>\n<!-- /wp:heading -->\n\n", g.title())
		case i > 0 && g.chance(0.1):
			b.WriteString("<!-- wp:list -->\n<ul>")
			for range g.between(3, 6) {
				fmt.Fprintf(&b, "<li>%s</li>", strings.TrimSuffix(g.sentence(), "."))
			}
			b.WriteString("</ul>\n<!-- /wp:list -->\n\n")
		}
		fmt.Fprintf(&b, "<!-- wp:paragraph -->\n<p>%s</p>\n<!-- /wp:paragraph -->\n\n", g.paragraph())
		if i == 0 && more {
			b.WriteString("<!-- wp:more -->\n<!--more-->\n<!-- /wp:more -->\n\n")
		}
	}
	return b.String()
}

// DokuWiki content.

type dwSpec struct {
	Title string   `json:"title"`
	Saves []dwSave `json:"saves"`
	Pages int      `json:"pages"`
	// Namespaces are the namespaces that hold pages, nested ones after
	// their parents.
	Namespaces []string `json:"namespaces"`
}

// dwSave is one revision: saveWikiText of Text as User at Time.
type dwSave struct {
	ID      string `json:"id"`
	Time    int64  `json:"time"`
	User    string `json:"user"`
	Summary string `json:"summary"`
	Minor   bool   `json:"minor"`
	Text    string `json:"text"`
}

var wikiNamespaces = []string{"docs", "howto", "projects", "team", "notes", "reference", "meetings", "recipes", "travel"}

// dwPage is a page being drawn: its sections, added one revision at a time.
type dwPage struct {
	id, title string
	parts     []string
}

// dokuwikiContent draws a wiki: 200–400 pages in 4–6 namespaces, one or
// two of them with a nested namespace, each namespace with a start page
// that lists its pages, the pages linked to each other with wiki links
// (and now and then to a page that does not exist), each page with 2–8
// revisions by the wiki's users from 2022 on, applied in the order of
// their dates.
func dokuwikiContent(seed int64, users []string) dwSpec {
	g := newGen(seed, 2)
	s := dwSpec{Title: g.title() + " Wiki"}
	top := g.sample(wikiNamespaces, g.between(4, 6))
	s.Namespaces = append(s.Namespaces, top...)
	for range g.between(1, 2) {
		parent := g.pick(top)
		child := parent + ":" + strings.ToLower(g.pick(titleWords))
		if !slices.Contains(s.Namespaces, child) {
			s.Namespaces = append(s.Namespaces, child)
		}
	}
	total := g.between(200, 400)
	s.Pages = total

	// The pages of each namespace, its start page first.
	byNS := map[string][]*dwPage{}
	var all []*dwPage
	ids := map[string]bool{}
	add := func(id, title string) *dwPage {
		p := &dwPage{id: id, title: title}
		ids[id] = true
		all = append(all, p)
		return p
	}
	root := add("start", s.Title)
	for _, ns := range s.Namespaces {
		byNS[ns] = append(byNS[ns], add(ns+":start", capitalize(strings.ReplaceAll(ns, ":", " / "))))
	}
	for len(all) < total {
		ns := s.Namespaces[g.r.IntN(len(s.Namespaces))]
		title := g.title()
		id := ns + ":" + strings.ToLower(strings.ReplaceAll(title, " ", "_"))
		if ids[id] {
			continue
		}
		byNS[ns] = append(byNS[ns], add(id, title))
	}

	// Sections: the start pages list what they hold; every page has
	// paragraphs and links to a few others.
	link := func(p *dwPage) string { return "[[" + p.id + "|" + p.title + "]]" }
	var rootList strings.Builder
	for _, ns := range s.Namespaces {
		if !strings.Contains(ns, ":") {
			fmt.Fprintf(&rootList, "  * %s\n", link(byNS[ns][0]))
		}
	}
	root.parts = append(root.parts, "====== "+root.title+" ======\n\n"+g.paragraph()+"\n", "===== Namespaces =====\n\n"+rootList.String())
	for _, ns := range s.Namespaces {
		st := byNS[ns][0]
		var list strings.Builder
		for _, p := range byNS[ns][1:] {
			fmt.Fprintf(&list, "  * %s\n", link(p))
		}
		for _, sub := range s.Namespaces {
			if strings.HasPrefix(sub, ns+":") {
				fmt.Fprintf(&list, "  * %s (namespace)\n", link(byNS[sub][0]))
			}
		}
		st.parts = append(st.parts, "====== "+st.title+" ======\n\n"+g.paragraph()+"\n", "===== Pages =====\n\n"+list.String())
	}
	for _, p := range all {
		if len(p.parts) == 0 {
			p.parts = append(p.parts, "====== "+p.title+" ======\n\n"+g.paragraph()+"\n")
		}
		for range g.between(1, 5) {
			var b strings.Builder
			fmt.Fprintf(&b, "===== %s =====\n\n%s", g.title(), g.paragraph())
			for range g.between(0, 3) {
				fmt.Fprintf(&b, " See %s.", link(all[g.r.IntN(len(all))]))
			}
			if g.chance(0.3) {
				b.WriteString("\n\n")
				for range g.between(2, 5) {
					fmt.Fprintf(&b, "  * %s\n", strings.TrimSuffix(g.sentence(), "."))
				}
			}
			if g.chance(0.04) {
				// A link to a page nobody has written yet.
				fmt.Fprintf(&b, " Someone should write [[%s:%s]].", p.id[:max(0, strings.LastIndexByte(p.id, ':'))], strings.ToLower(g.pick(titleWords))+"_"+strings.ToLower(g.pick(titleWords)))
			}
			b.WriteString("\n")
			p.parts = append(p.parts, b.String())
		}
	}

	// Revisions: each page's first has its first part, and each later one
	// adds a part or rewrites a sentence; the last has all parts.
	start := time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	span := int64(g.between(365, 900)) * 86400
	summaries := []string{"", "typo", "fixed links", "more detail", "cleanup", "rewording", "added a section", "updated", "formatting", "clarified"}
	for _, p := range all {
		nrev := g.between(2, 8)
		t := start + g.r.Int64N(span*2/3)
		shown := 1
		for r := range nrev {
			left := len(p.parts) - shown
			revsLeft := nrev - r - 1
			text := strings.Join(p.parts[:shown], "\n")
			sum := "created"
			if r > 0 {
				sum = summaries[g.r.IntN(len(summaries))]
				// Make sure the text changes: DokuWiki saves nothing for
				// an unchanged page.
				text += fmt.Sprintf("\n//Revision %d: %s//\n", r+1, strings.TrimSuffix(g.sentence(), "."))
			}
			if r == nrev-1 {
				text = strings.Join(p.parts, "\n")
			}
			s.Saves = append(s.Saves, dwSave{
				ID: p.id, Time: t, User: users[g.r.IntN(len(users))], Summary: sum,
				Minor: r > 0 && g.chance(0.15), Text: text,
			})
			if left > 0 && (revsLeft <= left || g.chance(0.6)) {
				shown++
			}
			t += 3600 + g.r.Int64N(60*86400)
		}
	}
	slices.SortStableFunc(s.Saves, func(a, b dwSave) int { return int(a.Time - b.Time) })
	return s
}
