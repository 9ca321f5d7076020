package gensite

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A forum. Its real pages are the index, every page of every board (in the
// default order, all days), every page of every topic, the profile of
// every member who posted, and the footer pages. Traps: board lists in
// other orders and day ranges, print views, highlighted views, actions
// (reply, quote, new topic), searches, "newest post" links (redirects or
// post addresses), and default or redundant parameters written out.
type forum struct {
	c       *common
	cats    []string
	boards  []board
	members []member
	topics  []topic
	per     int // posts per topic page
	tper    int // topics per board page
	pg      pageStyle
	query   bool // phpBB-like scripts and ids (else paths with slugs)
	boardR  resStyle
	topicR  resStyle
	memberR resStyle

	skP, sdP  string
	keys      []sortOpt // keys[0] (last post) is the default
	dirs      [2]string // descending (default), ascending
	daysP     string
	days      []int // days[0] is 0: all topics
	allDays   string
	sortFull  bool // sort and day links write every parameter out
	printMode int  // 0: topic query param; 1: own script; 2: /print/{id}; 3: topic path + "print"
	printP    string
	printV    string
	printPath string
	hlP       string
	newest    int  // 0: anchor on the last page; 1: post address; 2: "unread" redirect
	permalink bool // each post's title links to its post address
	postP     string
	unreadP   string
	unreadV   string
	actions   bool
	postScr   string
	modeP     string
	searchP   string
	kwP       string
	authorP   string
	// Which links write default values out: index→board, board→topic,
	// pager→page 1; boardParam: board→topic links carry the board id.
	boardExplicit, topicExplicit, pageExplicit, boardParam bool
	boxes                                                  []string
	recent                                                 []int    // the 5 topics with the latest posts
	hot                                                    []string // popular search words
}

type board struct {
	id               int
	name, slug, desc string
	cat              int
	topics           []int
}

type member struct {
	id      int
	name    string
	joined  int64
	posts   int
	started []int
}

type topic struct {
	id         int
	board      int
	title      string
	slug       string
	author     int
	first      int // id of the first post; posts are numbered consecutively
	authors    []int
	times      []int64
	views      int
	titleWords []string
}

// resStyle addresses one kind of item: a script with an id parameter
// (/viewtopic.php?t=12) or a path segment with slug and id
// (/threads/some-title.12/).
type resStyle struct {
	query  bool
	path   string
	param  string
	fixed  qs
	seg    int // path: 0 "{slug}.{id}", 1 "{id}-{slug}", 2 "{slug}-{id}"
	noTail bool
}

func (rs resStyle) uri(id int, sl string) (string, qs) {
	ids := strconv.Itoa(id)
	if rs.query {
		return rs.path, append(slices.Clone(rs.fixed), kv{rs.param, ids})
	}
	var s string
	switch rs.seg {
	case 0:
		s = sl + "." + ids
	case 1:
		s = ids + "-" + sl
	default:
		s = sl + "-" + ids
	}
	if rs.noTail {
		return rs.path + s, nil
	}
	return rs.path + s + "/", nil
}

// decode returns the id of a URL of this style and, for paths, what
// follows the item's segment and its slash.
func (rs resStyle) decode(path string, p *params) (id int, rest string, ok bool) {
	if rs.query {
		if path != rs.path {
			return 0, "", false
		}
		for _, f := range rs.fixed {
			if v, ok := p.get(f.k); !ok || v != f.v {
				return 0, "", false
			}
		}
		v, ok := p.get(rs.param)
		if !ok {
			return 0, "", false
		}
		id, ok = atoi(v)
		return id, "", ok
	}
	tail, ok := strings.CutPrefix(path, rs.path)
	if !ok {
		return 0, "", false
	}
	seg, rest, slash := strings.Cut(tail, "/")
	if !slash && !rs.noTail {
		return 0, "", false
	}
	var ids string
	switch rs.seg {
	case 0:
		i := strings.LastIndex(seg, ".")
		if i < 0 {
			return 0, "", false
		}
		ids = seg[i+1:]
	case 1:
		ids, _, _ = strings.Cut(seg, "-")
	default:
		i := strings.LastIndex(seg, "-")
		if i < 0 {
			return 0, "", false
		}
		ids = seg[i+1:]
	}
	id, ok = atoi(ids)
	return id, rest, ok
}

var forumKeys = []struct {
	names []string
	label string
}{
	{[]string{"t", "lastpost", "last_post", "date"}, "Last post"},
	{[]string{"s", "title", "subject"}, "Subject"},
	{[]string{"r", "replies", "replycount", "posts"}, "Replies"},
	{[]string{"v", "views", "viewcount"}, "Views"},
	{[]string{"a", "author", "starter"}, "Author"},
	{[]string{"c", "created", "start_date"}, "Started"},
}

func newForum(c *common) (*forum, error) {
	for attempt := 0; attempt < 400; attempt++ {
		f := drawForum(c, attempt)
		if k := f.realCount(); k >= 250 && k <= 700 {
			return f, nil
		}
	}
	return nil, errors.New("gensite: could not draw a forum of 250–700 real pages")
}

func drawForum(c *common, attempt int) *forum {
	c.usedParams = map[string]bool{}
	c.usedPaths = map[string]bool{firstSeg(c.footer[0].path): true}
	r := c.rng("forum", attempt)
	v := c.v
	f := &forum{c: c}
	f.query = r.chance(0.55)

	// Boards in 2–3 categories.
	for i := 0; i < r.between(2, 3); i++ {
		f.cats = append(f.cats, titleWords(v.phrase(r, r.between(1, 3))))
	}
	nb := r.between(5, 12)
	bid := r.between(1, 20)
	for i := 0; i < nb; i++ {
		bid += 1 + r.skewed(4, 2)
		name := titleWords(v.phrase(r, r.between(1, 3)))
		sl := slug(name)
		for slices.ContainsFunc(f.boards, func(b board) bool { return b.slug == sl }) {
			sl += "-" + strconv.Itoa(i)
		}
		f.boards = append(f.boards, board{id: bid, name: name, slug: sl, desc: c.v.sentence(r), cat: min(i*len(f.cats)/nb, len(f.cats)-1)})
	}
	// Members.
	nm := r.between(30, 120)
	f.per = r.between(10, 25)
	f.tper = pick(r, []int{15, 20, 25, 30, 40})
	mid := r.between(1, 50)
	start := c.now.Unix() - int64(r.between(3, 8))*365*86400
	for i := 0; i < nm; i++ {
		mid += 1 + r.skewed(20, 3)
		name := v.name(r)
		if r.chance(0.3) {
			name += strconv.Itoa(r.between(1, 99))
		}
		if r.chance(0.3) {
			name = title(name)
		}
		f.members = append(f.members, member{id: mid, name: name, joined: start + int64(r.intn(int(c.now.Unix()-start)))})
	}
	// Topics, each with 1–60 posts.
	nt := r.between(300, 600)
	titles := map[string]bool{}
	now := c.now.Unix()
	span := now - start
	for i := 0; i < nt; i++ {
		t := topic{board: r.skewed(nb, 1.3), views: 0}
		if i < nb {
			t.board = i
		}
		var title string
		for {
			title = v.phrase(r, r.between(3, 8))
			if !titles[title] {
				titles[title] = true
				break
			}
		}
		t.title = title
		t.slug = slug(title)
		t.titleWords = strings.Fields(strings.ToLower(title))
		np := 1 + r.skewed(60, 4)
		last := now - int64(r.skewed(int(span/60), 2.2))*60
		first := last - int64(r.intn(int(min(span/2, int64(np)*6*86400))+1))
		if first < start {
			first = start
		}
		t.times = make([]int64, np)
		for k := range t.times {
			t.times[k] = first + int64(r.intn(int(last-first)+1))
		}
		slices.Sort(t.times)
		t.times[0], t.times[np-1] = first, last
		t.authors = make([]int, np)
		for k := range t.authors {
			t.authors[k] = r.skewed(nm, 2)
		}
		t.author = t.authors[0]
		t.views = np*r.between(3, 40) + r.intn(50)
		f.topics = append(f.topics, t)
	}
	// Keep the longest run of topics whose real pages stay within a drawn
	// size; a forum of fewer than 300 topics is drawn again by the caller.
	size := r.between(400, 700)
	fixed := 1 + len(c.footer)
	perBoard := make([]int, nb)
	boardPages, topicPages, posters := 0, 0, 0
	posted := make([]bool, nm)
	keep := 0
	for i, t := range f.topics {
		b := t.board
		boardPages += pages(perBoard[b]+1, f.tper) - pages(perBoard[b], f.tper)
		if perBoard[b] == 0 {
			boardPages++
		}
		perBoard[b]++
		topicPages += pages(len(t.times), f.per)
		for _, a := range t.authors {
			if !posted[a] {
				posted[a] = true
				posters++
			}
		}
		// The drawn size gives way to the 300 topics a forum has at least.
		if n := fixed + boardPages + topicPages + posters; n > 700 || (n > size && i >= 300) {
			break
		}
		keep = i + 1
	}
	f.topics = f.topics[:keep]
	if keep < 300 {
		return f
	}
	slices.SortStableFunc(f.topics, func(a, b topic) int { return cmp64(a.times[0], b.times[0]) })
	tid := r.between(1, 3000)
	pid := r.between(1, 20000)
	for i := range f.topics {
		t := &f.topics[i]
		tid += 1 + r.skewed(5, 3)
		t.id = tid
		t.first = pid
		pid += len(t.times)
		f.boards[t.board].topics = append(f.boards[t.board].topics, i)
		f.members[t.author].started = append(f.members[t.author].started, i)
		for _, a := range t.authors {
			f.members[a].posts++
		}
	}

	// URL shapes.
	segStyle := r.intn(3)
	if f.query {
		scripts := pick(r, [][3]string{{"/viewforum.php", "/viewtopic.php", "/memberlist.php"},
			{"/forumdisplay.php", "/showthread.php", "/member.php"}, {"/board.php", "/topic.php", "/profile.php"},
			{"/forum.php", "/thread.php", "/user.php"}})
		f.boardR = resStyle{query: true, path: scripts[0], param: c.param(r, "f", "fid", "forum", "b")}
		f.topicR = resStyle{query: true, path: scripts[1], param: c.param(r, "t", "tid", "topic", "thread")}
		f.memberR = resStyle{query: true, path: scripts[2], param: c.param(r, "u", "uid", "userid", "id")}
		if r.chance(0.5) {
			mode := c.param(r, "mode", "do", "action")
			f.memberR.fixed = qs{{mode, pick(r, []string{"viewprofile", "profile", "show"})}}
		}
	} else {
		f.boardR = resStyle{path: "/" + c.segment(r, "forum", "forums", "board", "f", "boards") + "/", seg: segStyle}
		f.topicR = resStyle{path: "/" + c.segment(r, "threads", "topic", "t", "discussion", "thread") + "/", seg: segStyle}
		f.memberR = resStyle{path: "/" + c.segment(r, "members", "u", "user", "profile") + "/", seg: r.intn(3), noTail: r.chance(0.4)}
	}
	f.pg = c.drawPageStyle(r, !f.query)
	if f.query && f.pg.mode == pgNum && r.chance(0.5) {
		// phpBB counts posts, not pages.
		f.pg = pageStyle{mode: pgOffset, name: c.param(r, "start", "offset")}
	}
	sortNames := pick(r, [][2]string{{"sk", "sd"}, {"sort", "order"}, {"order", "direction"}, {"sort_key", "sort_dir"}, {"o", "d"}})
	f.skP = c.param(r, sortNames[0], "sortby")
	f.sdP = c.param(r, sortNames[1], "dir")
	f.keys = []sortOpt{{name: pick(r, forumKeys[0].names), label: forumKeys[0].label, key: 0}}
	for _, k := range sample(r, []int{1, 2, 3, 4, 5}, r.between(1, 4)) {
		f.keys = append(f.keys, sortOpt{name: pick(r, forumKeys[k].names), label: forumKeys[k].label, key: k})
	}
	dirs := pick(r, [][2]string{{"d", "a"}, {"desc", "asc"}, {"DESC", "ASC"}, {"down", "up"}})
	f.dirs = dirs
	f.daysP = c.param(r, "st", "days", "daysprune", "age", "since", "prune")
	f.allDays = pick(r, []string{"0", "-1", "all"})
	f.days = []int{0}
	ds := sample(r, []int{1, 2, 7, 14, 30, 60, 90, 180, 365}, r.between(4, 7))
	slices.Sort(ds)
	f.days = append(f.days, ds...)
	f.sortFull = r.chance(0.5)

	// Print views.
	if f.query {
		f.printMode = pick(r, []int{0, 0, 1, 2})
	} else {
		f.printMode = pick(r, []int{2, 3, 3})
	}
	switch f.printMode {
	case 0:
		f.printP = c.param(r, "view", "print", "printable", "output")
		f.printV = map[string]string{"view": "print", "print": "1", "printable": "1", "output": "print"}[f.printP]
		if f.printV == "" {
			f.printV = "print"
		}
	case 1:
		f.printPath = pick(r, []string{"/printthread.php", "/print.php", "/printtopic.php"})
	case 2:
		f.printPath = "/" + c.segment(r, "print", "printable", "printview") + "/"
	}
	f.hlP = c.param(r, "hilit", "highlight", "hl", "h", "words")
	f.newest = r.intn(3)
	f.actions = r.chance(0.6)
	// Either quote links or permalinks: one link per post.
	f.permalink = !f.actions
	switch {
	case (f.newest == 1 || f.permalink) && f.query:
		f.postP = c.param(r, "p", "post", "pid")
	case f.newest == 1 || f.permalink:
		f.postP = "/" + c.segment(r, "posts", "post", "goto") + "/"
	}
	switch {
	case f.newest == 2 && f.query:
		f.unreadP = c.param(r, "view", "goto", "e", "jump")
		f.unreadV = map[string]string{"view": "unread", "goto": "newpost", "e": "1", "jump": "last"}[f.unreadP]
		if f.unreadV == "" {
			f.unreadV = "unread"
		}
	}
	if f.actions && f.query {
		f.postScr = pick(r, []string{"/posting.php", "/newreply.php", "/post.php"})
		f.modeP = c.param(r, "mode", "do", "action", "a")
	}
	sp := c.segment(r, "search", "find", "search.php", "lookup")
	f.searchP = "/" + sp
	if !strings.Contains(sp, ".") && r.chance(0.5) {
		f.searchP += "/"
	}
	f.kwP = c.param(r, "keywords", "q", "query", "search", "terms")
	f.authorP = c.param(r, "author_id", "user", "u", "member", "by")
	f.boardExplicit = r.chance(0.35)
	f.topicExplicit = r.chance(0.35)
	f.pageExplicit = r.chance(0.4)
	f.boardParam = f.query && r.chance(0.4)
	f.boxes = sample(r, []string{"recent", "searches", "boards"}, r.between(2, 3))
	// Popular searches: words found in several titles.
	cnt := map[string]int{}
	var words []string
	for _, t := range f.topics {
		for _, w := range t.titleWords {
			if cnt[w] == 0 && len(w) > 3 {
				words = append(words, w)
			}
			cnt[w]++
		}
	}
	for _, w := range words {
		if cnt[w] >= 2 && len(f.hot) < 8 && r.chance(0.3) {
			f.hot = append(f.hot, w)
		}
	}
	if len(f.hot) == 0 {
		f.hot = words[:1]
	}
	idx := make([]int, len(f.topics))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(x, y int) int {
		return cmp64(f.topics[y].times[len(f.topics[y].times)-1], f.topics[x].times[len(f.topics[x].times)-1])
	})
	f.recent = idx[:5]
	c.sidebar = f.sidebar
	c.nav = []string{c.a("/", "Board index"), c.a(f.searchP, "Search"), c.a(f.memberURI(f.newestPoster()), "Newest member")}
	return f
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (f *forum) newestPoster() int {
	best := -1
	for i, m := range f.members {
		if m.posts > 0 && (best < 0 || m.joined > f.members[best].joined) {
			best = i
		}
	}
	return best
}

func (f *forum) tpages(t int) int { return pages(len(f.topics[t].times), f.per) }

func (f *forum) realCount() int {
	if len(f.topics) < 300 || f.boardR.path == "" {
		return 0 // an attempt abandoned half-drawn
	}
	return len(f.realPages())
}

func (f *forum) realPages() []string {
	out := []string{"/"}
	out = append(out, f.c.footerPages()...)
	for b := range f.boards {
		n := pages(len(f.boards[b].topics), f.tper)
		for pg := 1; pg <= n; pg++ {
			out = append(out, f.boardURI(b, 0, 0, 0, pg, false, false))
		}
	}
	for t := range f.topics {
		for pg := 1; pg <= f.tpages(t); pg++ {
			out = append(out, f.topicURI(t, pg, "", false, false))
		}
	}
	for m := range f.members {
		if f.members[m].posts > 0 {
			out = append(out, f.memberURI(m))
		}
	}
	return out
}

// boardURI writes a board list: sort key, direction (0 descending), day
// range, page; full writes every sort and day parameter out.
func (f *forum) boardURI(b, key, dir, days, page int, full, explicitPage bool) string {
	bd := &f.boards[b]
	path, q := f.boardR.uri(bd.id, bd.slug)
	if days != 0 || full {
		q = append(q, kv{f.daysP, f.dayValue(days)})
	}
	if key != 0 || dir != 0 || full {
		q = append(q, kv{f.skP, f.keys[key].name}, kv{f.sdP, f.dirs[dir]})
	}
	return f.pg.apply(path, q, page, f.tper, explicitPage)
}

func (f *forum) dayValue(i int) string {
	if i == 0 {
		return f.allDays
	}
	return strconv.Itoa(f.days[i])
}

// topicURI writes page n of a topic, highlighting hl; withBoard adds the
// board id (query style).
func (f *forum) topicURI(t, page int, hl string, withBoard, explicitPage bool) string {
	tp := &f.topics[t]
	path, q := f.topicR.uri(tp.id, tp.slug)
	if withBoard && f.query {
		q = append(qs{{f.boardR.param, strconv.Itoa(f.boards[tp.board].id)}}, q...)
	}
	u := f.pg.apply(path, q, page, f.per, explicitPage)
	if hl != "" {
		u = addParam(u, f.hlP, hl)
	}
	return u
}

func (f *forum) memberURI(m int) string {
	path, q := f.memberR.uri(f.members[m].id, strings.ToLower(f.members[m].name))
	return uri(path, q)
}

func (f *forum) printURI(t int) string {
	tp := &f.topics[t]
	switch f.printMode {
	case 0:
		return addParam(f.topicURI(t, 1, "", false, false), f.printP, f.printV)
	case 1:
		return uri(f.printPath, qs{{f.topicR.param, strconv.Itoa(tp.id)}})
	case 2:
		return f.printPath + strconv.Itoa(tp.id)
	}
	return f.topicURI(t, 1, "", false, false) + "print"
}

// newestURI is the "go to the newest post" link of a topic.
func (f *forum) newestURI(t int) string {
	tp := &f.topics[t]
	last := tp.first + len(tp.times) - 1
	anchor := "#p" + strconv.Itoa(last)
	switch f.newest {
	case 1:
		return f.postURI(last)
	case 2:
		if f.query {
			return addParam(f.topicURI(t, 1, "", false, false), f.unreadP, f.unreadV) + "#unread"
		}
		return f.topicURI(t, 1, "", false, false) + "unread"
	}
	return f.topicURI(t, f.tpages(t), "", false, false) + anchor
}

// postURI is the address of one post: a topic page found by post id, or
// a redirect to it.
func (f *forum) postURI(pid int) string {
	if f.query {
		return uri(f.topicR.path, qs{{f.postP, strconv.Itoa(pid)}}) + "#p" + strconv.Itoa(pid)
	}
	return f.postP + strconv.Itoa(pid) + "/"
}

func (f *forum) replyURI(t int) string {
	tp := &f.topics[t]
	if f.query {
		return uri(f.postScr, qs{{f.modeP, "reply"}, {f.topicR.param, strconv.Itoa(tp.id)}})
	}
	return f.topicURI(t, 1, "", false, false) + "reply"
}

func (f *forum) quoteURI(t, k int) string {
	pid := f.topics[t].first + k
	if f.query {
		return uri(f.postScr, qs{{f.modeP, "quote"}, {"p", strconv.Itoa(pid)}})
	}
	return f.topicURI(t, 1, "", false, false) + "reply?quote=" + strconv.Itoa(pid)
}

func (f *forum) newTopicURI(b int) string {
	if f.query {
		return uri(f.postScr, qs{{f.modeP, "post"}, {f.boardR.param, strconv.Itoa(f.boards[b].id)}})
	}
	return f.boardURI(b, 0, 0, 0, 1, false, false) + "post-thread"
}

func (f *forum) searchURI(kw string, author int) string {
	if author >= 0 {
		return uri(f.searchP, qs{{f.authorP, strconv.Itoa(f.members[author].id)}})
	}
	return uri(f.searchP, qs{{f.kwP, kw}})
}

func (f *forum) topicByID(id int) (int, bool) {
	i, ok := slices.BinarySearchFunc(f.topics, id, func(t topic, id int) int { return t.id - id })
	return i, ok
}

func (f *forum) boardByID(id int) (int, bool) {
	i := slices.IndexFunc(f.boards, func(b board) bool { return b.id == id })
	return i, i >= 0
}

func (f *forum) memberByID(id int) (int, bool) {
	i, ok := slices.BinarySearchFunc(f.members, id, func(m member, id int) int { return m.id - id })
	return i, ok
}

// postByID returns the topic and index of a post id.
func (f *forum) postByID(pid int) (int, int, bool) {
	i, _ := slices.BinarySearchFunc(f.topics, pid, func(t topic, pid int) int {
		switch {
		case pid < t.first:
			return 1
		case pid >= t.first+len(t.times):
			return -1
		}
		return 0
	})
	if i >= len(f.topics) || pid < f.topics[i].first || pid >= f.topics[i].first+len(f.topics[i].times) {
		return 0, 0, false
	}
	return i, pid - f.topics[i].first, true
}

func validWord(s string) bool {
	if len(s) < 2 || len(s) > 30 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

func (f *forum) route(path string, p *params) *resolved {
	c := f.c
	if path == "/" && p.empty() {
		return &resolved{canon: "/", render: f.index}
	}
	if res := c.footerRoute(path); res != nil {
		return res
	}
	if path == f.searchP {
		return f.routeSearch(p)
	}
	if f.actions && f.query && path == f.postScr {
		return f.routePosting(p)
	}
	if f.printMode == 1 && path == f.printPath {
		if v, ok := p.get(f.topicR.param); ok {
			if id, ok := atoi(v); ok {
				if t, ok := f.topicByID(id); ok {
					return f.printRoute(t)
				}
			}
		}
		return nil
	}
	if f.printMode == 2 {
		if v, ok := strings.CutPrefix(path, f.printPath); ok {
			if id, ok := atoi(v); ok {
				if t, ok := f.topicByID(id); ok {
					return f.printRoute(t)
				}
			}
			return nil
		}
	}
	if f.postP != "" && !f.query {
		if v, ok := strings.CutPrefix(path, f.postP); ok {
			if id, ok := atoi(strings.TrimSuffix(v, "/")); ok && strings.HasSuffix(v, "/") {
				if t, k, ok := f.postByID(id); ok {
					return &resolved{status: http.StatusFound, family: FamRedirect, canon: path,
						location: f.topicURI(t, k/f.per+1, "", false, false) + "#p" + strconv.Itoa(id)}
				}
			}
			return nil
		}
	}
	if id, _, ok := f.memberR.decode(path, p); ok {
		if m, ok := f.memberByID(id); ok && (f.query || f.memberURI(m) == path) {
			return &resolved{canon: f.memberURI(m), render: func(d *doc) { f.memberPage(d, m) }}
		}
		return nil
	}
	if f.query && path == f.topicR.path && f.postP != "" && p.has(f.postP) {
		v, _ := p.get(f.postP)
		id, ok := atoi(v)
		if !ok {
			return nil
		}
		t, k, ok := f.postByID(id)
		if !ok {
			return nil
		}
		real := f.topicURI(t, k/f.per+1, "", false, false)
		return &resolved{family: FamPostLink, canon: real, real: real,
			render: func(d *doc) { f.topicPage(d, t, k/f.per+1, "") }}
	}
	if res := f.routeTopic(path, p); res != nil {
		return res
	}
	return f.routeBoard(path, p)
}

func (f *forum) printRoute(t int) *resolved {
	return &resolved{family: FamPrint, canon: f.printURI(t), base: f.topicURI(t, 1, "", false, false),
		render: func(d *doc) { f.printPage(d, t) }}
}

func (f *forum) routeTopic(path string, p *params) *resolved {
	base, page, pathPaged := f.pg.stripPath(path)
	if page == 0 {
		return nil
	}
	// Path style: after the topic's segment may come a page suffix, or
	// "print", "unread" or "reply".
	id, rest, ok := f.topicR.decode(base, p)
	if !ok || (pathPaged && rest != "") {
		return nil
	}
	t, ok := f.topicByID(id)
	if !ok {
		return nil
	}
	explicitPage := pathPaged && page == 1
	if !pathPaged {
		var ex bool
		page, ex = f.pg.fromQuery(p, f.per)
		if page == 0 {
			return nil
		}
		explicitPage = ex && page == 1
	}
	if page > f.tpages(t) {
		return nil
	}
	// The item part must be written exactly as the site writes it.
	bp, _ := f.topicR.uri(f.topics[t].id, f.topics[t].slug)
	if bp+rest != base {
		return nil
	}
	withBoard := false
	if f.query && p.has(f.boardR.param) {
		v, _ := p.get(f.boardR.param)
		if bid, ok := atoi(v); !ok || bid != f.boards[f.topics[t].board].id {
			return nil
		}
		withBoard = true
	}
	hl := ""
	if p.has(f.hlP) {
		hl, _ = p.get(f.hlP)
		if !validWord(hl) {
			return nil
		}
	}
	real := f.topicURI(t, page, "", false, false)
	switch rest {
	case "":
	case "print":
		if f.printMode != 3 || page != 1 || pathPaged || hl != "" {
			return nil
		}
		return f.printRoute(t)
	case "unread":
		if f.newest != 2 || page != 1 || pathPaged || hl != "" {
			return nil
		}
		return f.unreadRoute(t, path)
	case "reply":
		if !f.actions || page != 1 || pathPaged || hl != "" {
			return nil
		}
		k := -1
		if v, ok := p.get("quote"); ok {
			pid, ok := atoi(v)
			if !ok {
				return nil
			}
			t2, kk, ok := f.postByID(pid)
			if !ok || t2 != t {
				return nil
			}
			k = kk
		}
		return f.postingRoute(t, k, -1)
	default:
		return nil
	}
	if f.query && f.printMode == 0 && p.has(f.printP) {
		if v, _ := p.get(f.printP); v != f.printV || page != 1 || explicitPage || hl != "" || withBoard {
			return nil
		}
		return f.printRoute(t)
	}
	if f.query && f.newest == 2 && p.has(f.unreadP) {
		if v, _ := p.get(f.unreadP); v != f.unreadV || page != 1 || explicitPage || hl != "" || withBoard {
			return nil
		}
		return f.unreadRoute(t, f.topicURI(t, 1, "", false, false))
	}
	res := &resolved{canon: f.topicURI(t, page, hl, false, false)}
	switch {
	case hl != "":
		res.family = FamHighlight
		res.base = real
	case withBoard:
		res.family = FamExtraParam
		res.real = real
	case explicitPage:
		res.family = FamDefault
		res.real = real
	}
	res.render = func(d *doc) { f.topicPage(d, t, page, hl) }
	return res
}

func (f *forum) unreadRoute(t int, canon string) *resolved {
	tp := &f.topics[t]
	last := tp.first + len(tp.times) - 1
	return &resolved{status: http.StatusFound, family: FamRedirect, canon: canon,
		location: f.topicURI(t, f.tpages(t), "", false, false) + "#p" + strconv.Itoa(last)}
}

func (f *forum) routeBoard(path string, p *params) *resolved {
	base, page, pathPaged := f.pg.stripPath(path)
	if page == 0 {
		return nil
	}
	id, rest, ok := f.boardR.decode(base, p)
	if !ok || (rest != "" && (pathPaged || rest != "post-thread" || !f.actions)) {
		return nil
	}
	b, ok := f.boardByID(id)
	if !ok {
		return nil
	}
	if bp, _ := f.boardR.uri(f.boards[b].id, f.boards[b].slug); bp+rest != base {
		return nil
	}
	if rest == "post-thread" {
		return f.postingRoute(-1, -1, b)
	}
	explicit := pathPaged && page == 1
	key, dir, days := 0, 0, 0
	if v, ok := p.get(f.skP); ok {
		key = slices.IndexFunc(f.keys, func(o sortOpt) bool { return o.name == v })
		if key < 0 {
			return nil
		}
		explicit = explicit || key == 0
	}
	if v, ok := p.get(f.sdP); ok {
		dir = slices.Index(f.dirs[:], v)
		if dir < 0 {
			return nil
		}
		explicit = explicit || dir == 0
	}
	if v, ok := p.get(f.daysP); ok {
		days = -1
		for i := range f.days {
			if f.dayValue(i) == v {
				days = i
			}
		}
		if days < 0 {
			return nil
		}
		explicit = explicit || days == 0
	}
	if !pathPaged {
		var ex bool
		page, ex = f.pg.fromQuery(p, f.tper)
		if page == 0 {
			return nil
		}
		explicit = explicit || (ex && page == 1)
	}
	items := f.boardItems(b, key, dir, days)
	if page > pages(len(items), f.tper) {
		return nil
	}
	res := &resolved{canon: f.boardURI(b, key, dir, days, page, false, false)}
	switch {
	case key != 0 || dir != 0:
		res.family = FamSort
		res.base = f.boardURI(b, 0, 0, 0, 1, false, false)
	case days != 0:
		res.family = FamDayRange
		res.base = f.boardURI(b, 0, 0, 0, 1, false, false)
	case explicit:
		res.family = FamDefault
		res.real = res.canon
	}
	res.render = func(d *doc) { f.boardPage(d, b, key, dir, days, page, items) }
	return res
}

func (f *forum) routeSearch(p *params) *resolved {
	if v, ok := p.get(f.kwP); ok {
		if !validWord(v) || p.has(f.authorP) {
			return nil
		}
		return &resolved{family: FamSearch, canon: f.searchURI(v, -1), render: func(d *doc) { f.searchPage(d, v, -1) }}
	}
	if v, ok := p.get(f.authorP); ok {
		id, ok := atoi(v)
		if !ok {
			return nil
		}
		m, ok := f.memberByID(id)
		if !ok {
			return nil
		}
		return &resolved{family: FamSearch, canon: f.searchURI("", m), render: func(d *doc) { f.searchPage(d, "", m) }}
	}
	if !p.empty() {
		return nil
	}
	return &resolved{family: FamSearch, canon: f.searchP, render: func(d *doc) { f.searchPage(d, "", -1) }}
}

func (f *forum) routePosting(p *params) *resolved {
	mode, ok := p.get(f.modeP)
	if !ok {
		return nil
	}
	switch mode {
	case "reply":
		v, _ := p.get(f.topicR.param)
		id, ok := atoi(v)
		if !ok {
			return nil
		}
		t, ok := f.topicByID(id)
		if !ok {
			return nil
		}
		return f.postingRoute(t, -1, -1)
	case "quote":
		v, _ := p.get("p")
		id, ok := atoi(v)
		if !ok {
			return nil
		}
		t, k, ok := f.postByID(id)
		if !ok {
			return nil
		}
		return f.postingRoute(t, k, -1)
	case "post":
		v, _ := p.get(f.boardR.param)
		id, ok := atoi(v)
		if !ok {
			return nil
		}
		b, ok := f.boardByID(id)
		if !ok {
			return nil
		}
		return f.postingRoute(-1, -1, b)
	}
	return nil
}

func (f *forum) postingRoute(t, k, b int) *resolved {
	var canon string
	switch {
	case b >= 0:
		canon = f.newTopicURI(b)
	case k >= 0:
		canon = f.quoteURI(t, k)
	default:
		canon = f.replyURI(t)
	}
	return &resolved{family: FamAction, canon: canon, render: func(d *doc) { f.postingPage(d, t, k, b) }}
}

// boardItems lists a board's topics in an order and day range.
func (f *forum) boardItems(b, key, dir, days int) []int {
	cut := int64(0)
	if days > 0 {
		cut = f.c.now.Unix() - int64(f.days[days])*86400
	}
	var out []int
	for _, t := range f.boards[b].topics {
		tp := &f.topics[t]
		if tp.times[len(tp.times)-1] >= cut {
			out = append(out, t)
		}
	}
	k := f.keys[key].key
	slices.SortStableFunc(out, func(x, y int) int {
		a, b := &f.topics[x], &f.topics[y]
		var d int
		switch k {
		case 0:
			d = cmp64(a.times[len(a.times)-1], b.times[len(b.times)-1])
		case 1:
			d = strings.Compare(a.title, b.title)
		case 2:
			d = len(a.times) - len(b.times)
		case 3:
			d = a.views - b.views
		case 4:
			d = strings.Compare(strings.ToLower(f.members[a.author].name), strings.ToLower(f.members[b.author].name))
		case 5:
			d = cmp64(a.times[0], b.times[0])
		}
		if d == 0 {
			d = a.id - b.id
		}
		if dir == 0 {
			d = -d
		}
		return d
	})
	return out
}

func (f *forum) when(t int64) string { return time.Unix(t, 0).UTC().Format("Mon Jan 02, 2006 3:04 pm") }

func (f *forum) index(d *doc) {
	c := f.c
	d.title = "Board index"
	d.tmpl = "index"
	d.h1(c.name)
	d.p(c.tagline)
	for ci, cat := range f.cats {
		d.printf("<table class=\"forums\">\n<caption>%s</caption>\n<tr><th>Forum</th><th>Topics</th><th>Posts</th><th>Last post</th></tr>\n", esc(cat))
		for b := range f.boards {
			bd := &f.boards[b]
			if bd.cat != ci {
				continue
			}
			posts := 0
			last := -1
			for _, t := range bd.topics {
				posts += len(f.topics[t].times)
				if last < 0 || f.topics[t].times[len(f.topics[t].times)-1] > f.topics[last].times[len(f.topics[last].times)-1] {
					last = t
				}
			}
			href := f.boardURI(b, 0, 0, 0, 1, false, f.boardExplicit)
			lp := ""
			if last >= 0 {
				lt := &f.topics[last]
				lp = c.a(f.topicURI(last, 1, "", false, false), lt.title) + " by " + c.a(f.memberURI(lt.authors[len(lt.authors)-1]), f.members[lt.authors[len(lt.authors)-1]].name) +
					" " + c.ac(f.newestURI(last), "»", "last-post", f.newest != 0)
			}
			d.printf("<tr><td>%s<br><small>%s</small></td><td>%d</td><td>%d</td><td>%s</td></tr>\n", c.a(href, bd.name), esc(bd.desc), len(bd.topics), posts, lp)
		}
		d.raw("</table>\n")
	}
	posts := 0
	for _, t := range f.topics {
		posts += len(t.times)
	}
	nm := f.newestPoster()
	d.printf("<p class=\"stats\">Total posts %d • Total topics %d • Total members %d • Our newest member %s</p>\n",
		posts, len(f.topics), len(f.members), c.a(f.memberURI(nm), f.members[nm].name))
	f.sidebar(d)
}

func (f *forum) boardPage(d *doc, b, key, dir, days, page int, items []int) {
	c := f.c
	bd := &f.boards[b]
	d.title = bd.name
	if page > 1 {
		d.title += " - Page " + strconv.Itoa(page)
	}
	d.tmpl = "viewforum"
	d.crumbs = []string{c.a("/", "Board index"), c.a(f.boardURI(b, 0, 0, 0, 1, false, false), bd.name)}
	d.h1(bd.name)
	d.p(bd.desc)
	if f.actions {
		d.printf("<p class=\"actions\">%s</p>\n", c.ac(f.newTopicURI(b), "New Topic", "button", true))
	}
	trap := key != 0 || dir != 0 || days != 0
	// Day range and sort links, as the display options box.
	var dl []string
	for i := range f.days {
		lab := "All topics"
		if i > 0 {
			lab = strconv.Itoa(f.days[i]) + " days"
			if f.days[i] == 1 {
				lab = "1 day"
			}
		}
		if i == days {
			dl = append(dl, "<strong>"+lab+"</strong>")
			continue
		}
		href := f.boardURI(b, key, dir, i, 1, f.sortFull, false)
		if i == 0 && !trap {
			dl = append(dl, c.a(href, lab))
		} else {
			dl = append(dl, c.va(href, lab))
		}
	}
	d.printf("<p class=\"display-options\">Display topics from previous: %s</p>\n", strings.Join(dl, " | "))
	c.pagerHTML(d, page, pages(len(items), f.tper), func(n int) string {
		return f.boardURI(b, key, dir, days, n, false, n == 1 && f.pageExplicit)
	}, trap)
	d.raw("<table class=\"topics\">\n<tr>")
	for ki, k := range f.keys {
		nd := 0
		if ki == key {
			nd = 1 - dir
		}
		href := f.boardURI(b, ki, nd, days, 1, f.sortFull, false)
		if ki == 0 && nd == 0 && days == 0 {
			d.printf("<th>%s</th>", c.a(href, k.label))
		} else {
			d.printf("<th>%s</th>", c.va(href, k.label))
		}
	}
	d.raw("</tr>\n")
	for _, t := range window(items, page, f.tper) {
		tp := &f.topics[t]
		np := f.tpages(t)
		var mini []string
		if np > 1 {
			for pg := 1; pg <= np; pg++ {
				if np <= 5 || pg <= 3 || pg >= np-1 {
					mini = append(mini, c.a(f.topicURI(t, pg, "", false, pg == 1 && f.pageExplicit), strconv.Itoa(pg)))
				} else if pg == 4 {
					mini = append(mini, "…")
				}
			}
		}
		la := tp.authors[len(tp.authors)-1]
		d.printf("<tr><td>%s", c.ac(f.topicURI(t, 1, "", f.boardParam, f.topicExplicit), tp.title, "topictitle", false))
		if len(mini) > 0 {
			d.printf(" <span class=\"pagination\">[ %s ]</span>", strings.Join(mini, " "))
		}
		d.printf("<br><small>by %s » %s</small></td><td>%d</td><td>%d</td><td>by %s %s<br><small>%s</small></td></tr>\n",
			c.a(f.memberURI(tp.author), f.members[tp.author].name), f.when(tp.times[0]), len(tp.times)-1, tp.views,
			c.a(f.memberURI(la), f.members[la].name), c.ac(f.newestURI(t), "»", "last-post", f.newest != 0), f.when(tp.times[len(tp.times)-1]))
	}
	d.raw("</table>\n")
	if len(items) == 0 {
		d.p("There are no topics or posts in this forum for the selected time frame.")
	}
	c.pagerHTML(d, page, pages(len(items), f.tper), func(n int) string {
		return f.boardURI(b, key, dir, days, n, false, n == 1 && f.pageExplicit)
	}, trap)
	f.sidebar(d)
}

// postBody is the text of post k of topic t, with hl highlighted.
func (f *forum) postBody(t, k int, hl string) string {
	r := f.c.rng("post", f.topics[t].first+k)
	paras := f.c.v.prose(r, r.between(1, 4), "")
	if k == 0 {
		paras = f.c.v.prose(r, r.between(1, 4), f.topics[t].title)
	}
	var b strings.Builder
	for _, p := range paras {
		e := esc(p)
		if hl != "" {
			ws := strings.Split(e, " ")
			for i, w := range ws {
				core := strings.TrimRight(w, ".,")
				if strings.EqualFold(core, hl) {
					ws[i] = `<span class="hl">` + core + `</span>` + w[len(core):]
				}
			}
			e = strings.Join(ws, " ")
		}
		b.WriteString("<p>" + e + "</p>\n")
	}
	return b.String()
}

func (f *forum) topicPage(d *doc, t, page int, hl string) {
	c := f.c
	tp := &f.topics[t]
	bd := &f.boards[tp.board]
	d.title = tp.title
	if page > 1 {
		d.title += " - Page " + strconv.Itoa(page)
	}
	d.tmpl = "viewtopic"
	d.crumbs = []string{c.a("/", "Board index"), c.a(f.boardURI(tp.board, 0, 0, 0, 1, false, false), bd.name)}
	d.printf("<h2 class=\"topic-title\">%s</h2>\n", c.a(f.topicURI(t, 1, "", false, false), tp.title))
	var acts []string
	if f.actions {
		acts = append(acts, c.ac(f.replyURI(t), "Post Reply", "button", true))
	}
	acts = append(acts, c.ac(f.printURI(t), "Print view", "print", true))
	d.printf("<p class=\"actions\">%s</p>\n", strings.Join(acts, " "))
	np := f.tpages(t)
	href := func(n int) string { return f.topicURI(t, n, hl, false, n == 1 && f.pageExplicit) }
	c.pagerHTML(d, page, np, href, hl != "")
	lo := (page - 1) * f.per
	for k := lo; k < len(tp.times) && k < lo+f.per; k++ {
		pid := tp.first + k
		a := tp.authors[k]
		subj := "Re: " + tp.title
		if k == 0 {
			subj = tp.title
		}
		d.printf("<div class=\"post\" id=\"p%d\">\n<h3>%s</h3>\n<p class=\"author\">by %s » %s</p>\n<div class=\"content\">\n%s</div>\n",
			pid, f.postTitle(pid, subj), c.a(f.memberURI(a), f.members[a].name), f.when(tp.times[k]), f.postBody(t, k, hl))
		if f.actions {
			d.printf("<p class=\"post-buttons\">%s</p>\n", c.ac(f.quoteURI(t, k), "Quote", "quote", true))
		}
		d.raw("</div>\n")
	}
	c.pagerHTML(d, page, np, href, hl != "")
	d.printf("<p>%s</p>\n", c.a(f.boardURI(tp.board, 0, 0, 0, 1, false, false), "Return to “"+bd.name+"”"))
	f.sidebar(d)
}

func (f *forum) postTitle(pid int, subj string) string {
	if f.permalink {
		return f.c.a(f.postURI(pid), subj)
	}
	return f.c.a("#p"+strconv.Itoa(pid), subj)
}

func (f *forum) printPage(d *doc, t int) {
	tp := &f.topics[t]
	d.mode = modeBare
	d.title = tp.title
	d.tmpl = "print"
	d.printf("<h1>%s</h1>\n<p>%s</p>\n", esc(tp.title), esc(f.boards[tp.board].name))
	for k := range tp.times {
		a := tp.authors[k]
		d.printf("<div class=\"post\">\n<p class=\"author\">Post by %s » %s</p>\n%s</div>\n<hr>\n",
			esc(f.members[a].name), f.when(tp.times[k]), f.postBody(t, k, ""))
	}
	d.printf("<p class=\"print-footer\">Page 1 of 1 — all times are UTC</p>\n")
}

func (f *forum) memberPage(d *doc, m int) {
	c := f.c
	mb := &f.members[m]
	d.title = "Viewing profile - " + mb.name
	d.tmpl = "memberlist"
	d.crumbs = []string{c.a("/", "Board index"), esc(mb.name)}
	d.h1(mb.name)
	d.printf("<dl class=\"profile\"><dt>Joined</dt><dd>%s</dd><dt>Total posts</dt><dd>%d • %s</dd></dl>\n",
		f.when(mb.joined), mb.posts, c.va(f.searchURI("", m), "Search user’s posts"))
	if len(mb.started) > 0 {
		d.h2("Topics started")
		var lis []string
		for _, t := range mb.started[max(0, len(mb.started)-5):] {
			lis = append(lis, c.a(f.topicURI(t, 1, "", false, false), f.topics[t].title))
		}
		d.ul("started", lis)
	}
	f.sidebar(d)
}

func (f *forum) searchPage(d *doc, kw string, m int) {
	c := f.c
	d.title = "Search"
	d.tmpl = "search"
	d.crumbs = []string{c.a("/", "Board index"), "Search"}
	d.printf("<form action=\"%s\" method=\"get\"><input name=\"%s\" value=\"%s\"><button>Search</button></form>\n", esc(f.searchP), f.kwP, esc(kw))
	var hits []int
	switch {
	case kw != "":
		d.h1("Search found matches for: " + kw)
		for t := len(f.topics) - 1; t >= 0 && len(hits) < 25; t-- {
			if slices.Contains(f.topics[t].titleWords, kw) {
				hits = append(hits, t)
			}
		}
	case m >= 0:
		d.h1("Posts by " + f.members[m].name)
		for t := len(f.topics) - 1; t >= 0 && len(hits) < 25; t-- {
			if slices.Contains(f.topics[t].authors, m) {
				hits = append(hits, t)
			}
		}
	default:
		d.h1("Search")
	}
	var lis []string
	for _, t := range hits {
		lis = append(lis, c.va(f.topicURI(t, 1, kw, false, false), f.topics[t].title)+" in "+esc(f.boards[f.topics[t].board].name))
	}
	d.ul("results", lis)
	if (kw != "" || m >= 0) && len(hits) == 0 {
		d.p("No suitable matches were found.")
	}
	f.sidebar(d)
}

func (f *forum) postingPage(d *doc, t, k, b int) {
	c := f.c
	d.tmpl = "posting"
	switch {
	case b >= 0:
		d.title = "Post a new topic"
		d.crumbs = []string{c.a("/", "Board index"), c.a(f.boardURI(b, 0, 0, 0, 1, false, false), f.boards[b].name)}
	default:
		d.title = "Post a reply"
		d.crumbs = []string{c.a("/", "Board index"), c.a(f.topicURI(t, 1, "", false, false), f.topics[t].title)}
	}
	d.h1(d.title)
	d.p("You need to log in before you can post. Please log in or register.")
	text := ""
	if k >= 0 {
		text = "[quote=" + f.members[f.topics[t].authors[k]].name + "]…[/quote]"
	}
	d.printf("<form method=\"post\"><textarea name=\"message\">%s</textarea><input type=\"submit\" value=\"Submit\"></form>\n", esc(text))
	f.sidebar(d)
}

func (f *forum) sidebar(d *doc) {
	c := f.c
	for _, w := range f.boxes {
		switch w {
		case "recent":
			b := box{title: "Recent topics", cls: "recent"}
			for _, t := range f.recent {
				b.items = append(b.items, c.a(f.topicURI(t, 1, "", false, false), f.topics[t].title)+" "+
					c.ac(f.newestURI(t), "»", "last-post", f.newest != 0))
			}
			d.side = append(d.side, b)
		case "searches":
			b := box{title: "Popular searches", cls: "searches", cloud: true}
			for _, w := range f.hot {
				b.items = append(b.items, c.va(f.searchURI(w, -1), w))
			}
			d.side = append(d.side, b)
		case "boards":
			b := box{title: "Forums", cls: "boards"}
			for i := range f.boards {
				b.items = append(b.items, c.a(f.boardURI(i, 0, 0, 0, 1, false, false), f.boards[i].name))
			}
			d.side = append(d.side, b)
		}
	}
}

func (f *forum) describe() string {
	var ks []string
	for _, k := range f.keys {
		ks = append(ks, k.name)
	}
	var ds []string
	for i := range f.days {
		ds = append(ds, f.dayValue(i))
	}
	newest := []string{"an anchor on the last page", "a post address", "an unread redirect"}[f.newest]
	return fmt.Sprintf("Forum of %d boards, %d topics, %d posts per page and %d topics per board page; boards like %s, topics like %s, "+
		"members like %s; pages %s; sort ?%s=(%s)&%s=(%s/%s); day ranges ?%s=(%s); print like %s; highlight ?%s=word; "+
		"newest-post links are %s (%s); post permalinks %v; actions %v; search %s?%s=word. Real: index, every board page and topic page, "+
		"profiles of posters.",
		len(f.boards), len(f.topics), f.per, f.tper, f.boardURI(0, 0, 0, 0, 1, false, false), f.topicURI(0, 1, "", false, false),
		f.memberURI(0), f.pg.describe(f.per), f.skP, strings.Join(ks, "/"), f.sdP, f.dirs[0], f.dirs[1], f.daysP, strings.Join(ds, "/"),
		f.printURI(0), f.hlP, newest, f.newestURI(0), f.permalink, f.actions, f.searchP, f.kwP)
}
