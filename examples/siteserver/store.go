package main

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// post is what a database row would hold. Version goes up with every
// edit; together with Updated it is all a page's validators need, so a
// revisit answered 304 costs one lookup and no rendering.
type post struct {
	Slug    string
	Title   string
	Tags    []string
	Body    []string // paragraphs
	Version int
	Updated time.Time
}

// store holds the posts. It is safe for concurrent use.
type store struct {
	mu    sync.RWMutex
	posts map[string]post
}

func date(s string) time.Time {
	t, err := time.Parse(time.DateTime, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func newStore() *store {
	s := &store{posts: make(map[string]post)}
	for _, p := range []post{
		{Slug: "conditional-get", Title: "Why 304 is the kindest answer", Tags: []string{"http", "crawlers"},
			Updated: date("2025-04-02 09:15:00"), Body: []string{
				"A crawler that has seen a page sends back its validators. When nothing changed, a 304 answer costs a header and no rendering.",
				"Validators must be cheap: a version column and an update time are enough.",
			}},
		{Slug: "gzip", Title: "Compress text, not JPEGs", Tags: []string{"http"},
			Updated: date("2025-03-11 17:40:00"), Body: []string{
				"HTML, CSS and XML shrink to a fifth with gzip. Images and PDFs are compressed already.",
				"Say Vary: Accept-Encoding, so that caches keep the two forms apart.",
			}},
		{Slug: "crawl-rate", Title: "Slowing crawlers down without losing them", Tags: []string{"crawlers", "operations"},
			Updated: date("2025-05-20 06:05:00"), Body: []string{
				"A 503 with Retry-After tells a crawler to come back later. A robots.txt that suddenly disallows everything tells it to forget the site.",
				"Keep the 503s short: pages that fail for days drop out of the index.",
			}},
		{Slug: "soft-404", Title: "A missing page is a 404", Tags: []string{"http"},
			Updated: date("2025-02-27 12:00:00"), Body: []string{
				"A page that says \"not found\" with a 200 status is a soft 404: crawlers keep it, and keep coming back for it.",
			}},
	} {
		p.Version = 1
		s.posts[p.Slug] = p
	}
	return s
}

// get returns the post with slug.
func (s *store) get(slug string) (post, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, ok := s.posts[slug]
	return p, ok
}

// list returns the posts with tag (all posts if tag is ""), newest first.
func (s *store) list(tag string) []post {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []post
	for _, p := range s.posts {
		if tag == "" || slices.Contains(p.Tags, tag) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b post) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return cmp.Compare(a.Slug, b.Slug)
	})
	return out
}

// tags returns every tag, sorted.
func (s *store) tags() []string {
	var tags []string
	for _, p := range s.list("") {
		for _, t := range p.Tags {
			if !slices.Contains(tags, t) {
				tags = append(tags, t)
			}
		}
	}
	slices.Sort(tags)
	return tags
}

// edit replaces a post's body, as an author would.
func (s *store) edit(slug string, body []string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.posts[slug]
	p.Body, p.Version, p.Updated = body, p.Version+1, at.UTC()
	s.posts[slug] = p
}
