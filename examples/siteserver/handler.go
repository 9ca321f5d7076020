package main

import (
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"html/template"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gentlecrawl/gentlecrawl/site"
)

// layoutVersion and layoutModified change when the templates do, which
// changes every page; they are constants, not the start time, so that a
// restart does not make every page look new to crawlers.
const layoutVersion = "layout-2025-06-01"

var layoutModified = date("2025-01-15 08:00:00")

// newShedder returns the load shedder of the site: crawlers and other bots
// are asked to come back later when 64 requests are in progress or the
// slowest tenth of the answers of the last ten seconds take over half a
// second.
func newShedder() *site.LoadShedder {
	return &site.LoadShedder{
		MaxInFlight: 64,
		MaxLatency:  500 * time.Millisecond,
		Who:         site.ShedBots,
	}
}

// newHandler returns the site: its pages behind shedder (newShedder's if
// nil), and robots.txt beside it.
func newHandler(st *store, shedder *site.LoadShedder) http.Handler {
	s := &server{store: st}
	pages := http.NewServeMux()
	pages.HandleFunc("GET /{$}", s.home)
	pages.HandleFunc("GET /posts/{slug}", s.post)
	pages.HandleFunc("GET /tags/{tag}", s.tag)
	pages.HandleFunc("GET /about", s.about)
	pages.HandleFunc("GET /sitemap.xml", s.sitemap)
	pages.HandleFunc("GET /", s.notFound)

	if shedder == nil {
		shedder = newShedder()
	}
	mux := http.NewServeMux()
	// robots.txt is served even under load: it costs nothing, and a 5xx
	// for it makes a crawler treat the whole site as disallowed (RFC 9309
	// §2.3.1.4), which is more than "come back later".
	mux.HandleFunc("GET /robots.txt", s.robots)
	mux.Handle("/", shedder.Handler(pages))
	return mux
}

type server struct {
	store *store
}

// base returns the site's URL as the request reached it, for the absolute
// URLs robots.txt, the sitemap and canonical links need.
func base(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// pageValidators are the validators of an HTML page showing posts. The
// tag is weak because one tag covers the gzipped and the plain forms of
// the page, which differ in bytes, not in meaning; If-None-Match compares
// weakly, so crawlers get their 304s all the same. The host is in it
// because the page's canonical link is.
func pageValidators(r *http.Request, name string, posts ...post) site.Validators {
	parts := []any{layoutVersion, r.Host, name}
	times := []time.Time{layoutModified}
	for _, p := range posts {
		parts = append(parts, p.Slug, p.Version)
		times = append(times, p.Updated)
	}
	return site.Validators{ETag: site.ETagOf(parts...), Weak: true, LastModified: site.Newest(times...)}
}

func (s *server) home(w http.ResponseWriter, r *http.Request) {
	posts := s.store.list("")
	s.page(w, r, http.StatusOK, pageValidators(r, "home", posts...), "home", pageData{
		Title: "Field notes on polite crawling", Canonical: "/", Posts: posts, Tags: s.store.tags(),
	})
}

func (s *server) post(w http.ResponseWriter, r *http.Request) {
	p, ok := s.store.get(r.PathValue("slug"))
	if !ok {
		s.notFound(w, r)
		return
	}
	s.page(w, r, http.StatusOK, pageValidators(r, "post", p), "post", pageData{
		Title: p.Title, Canonical: "/posts/" + p.Slug, Post: p,
	})
}

func (s *server) tag(w http.ResponseWriter, r *http.Request) {
	tag := r.PathValue("tag")
	posts := s.store.list(tag)
	if len(posts) == 0 {
		s.notFound(w, r)
		return
	}
	s.page(w, r, http.StatusOK, pageValidators(r, "tag "+tag, posts...), "tag", pageData{
		Title: "Posts about " + tag, Canonical: "/tags/" + tag, Tag: tag, Posts: posts,
	})
}

func (s *server) about(w http.ResponseWriter, r *http.Request) {
	s.page(w, r, http.StatusOK, pageValidators(r, "about"), "about", pageData{
		Title: "About", Canonical: "/about",
	})
}

// notFound is a real 404, never a soft one: a crawler drops the URL.
func (s *server) notFound(w http.ResponseWriter, r *http.Request) {
	s.page(w, r, http.StatusNotFound, site.Validators{}, "notfound", pageData{Title: "Not found"})
}

func (s *server) robots(w http.ResponseWriter, r *http.Request) {
	body := "# Everything here may be crawled, one request a second at most\n" +
		"# (for the crawlers that read Crawl-delay; Google does not).\n" +
		"User-agent: *\n" +
		"Allow: /\n" +
		"Crawl-delay: 1\n" +
		"\n" +
		"Sitemap: " + base(r) + "/sitemap.xml\n"
	v := site.Validators{ETag: site.ETagOf(body), Weak: true, LastModified: layoutModified}
	s.respond(w, r, http.StatusOK, v, "text/plain; charset=utf-8", func(w io.Writer) error {
		_, err := io.WriteString(w, body)
		return err
	})
}

func (s *server) sitemap(w http.ResponseWriter, r *http.Request) {
	posts := s.store.list("")
	type url struct {
		Loc     string `xml:"loc"`
		LastMod string `xml:"lastmod"`
	}
	lastmod := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	newest := site.Newest(layoutModified)
	for _, p := range posts {
		newest = site.Newest(newest, p.Updated)
	}
	b := base(r)
	urls := []url{{b + "/", lastmod(newest)}, {b + "/about", lastmod(layoutModified)}}
	for _, t := range s.store.tags() {
		tagNewest := layoutModified
		for _, p := range s.store.list(t) {
			tagNewest = site.Newest(tagNewest, p.Updated)
		}
		urls = append(urls, url{b + "/tags/" + t, lastmod(tagNewest)})
	}
	for _, p := range posts {
		urls = append(urls, url{b + "/posts/" + p.Slug, lastmod(site.Newest(layoutModified, p.Updated))})
	}
	v := pageValidators(r, "sitemap", posts...)
	s.respond(w, r, http.StatusOK, v, "application/xml; charset=utf-8", func(w io.Writer) error {
		io.WriteString(w, xml.Header)
		enc := xml.NewEncoder(w)
		enc.Indent("", " ")
		err := enc.Encode(struct {
			XMLName xml.Name `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 urlset"`
			URLs    []url    `xml:"url"`
		}{URLs: urls})
		io.WriteString(w, "\n")
		return err
	})
}

type pageData struct {
	Title, Canonical string
	Base             string
	Post             post
	Posts            []post
	Tag              string
	Tags             []string
}

func (s *server) page(w http.ResponseWriter, r *http.Request, status int, v site.Validators, name string, d pageData) {
	d.Base = base(r)
	s.respond(w, r, status, v, "text/html; charset=utf-8", func(w io.Writer) error {
		return templates.ExecuteTemplate(w, name, d)
	})
}

// respond answers with status and the body render writes: 304 when the
// request's validators match v, else the body, gzipped when the client
// accepts gzip. A zero v means no validators (the 404 page).
func (s *server) respond(w http.ResponseWriter, r *http.Request, status int, v site.Validators, contentType string, render func(io.Writer) error) {
	h := w.Header()
	// The 304 repeats these (RFC 9110 §15.4.5), so they go first.
	h.Set("Vary", "Accept-Encoding")
	h.Set("Cache-Control", "no-cache") // caches may keep it, and revalidate
	if status == http.StatusOK && site.Conditional(w, r, v) {
		return
	}
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		http.Error(w, "500 internal server error", http.StatusInternalServerError)
		return
	}
	body := buf.Bytes()
	if acceptsGzip(r.Header.Values("Accept-Encoding")) {
		var zbuf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&zbuf, gzip.BestSpeed)
		zw.Write(body)
		zw.Close()
		body = zbuf.Bytes()
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(body)
}

// acceptsGzip reports whether Accept-Encoding accepts gzip (RFC 9110
// §12.5.3): named with a q above 0, or covered by "*" with one.
func acceptsGzip(fields []string) bool {
	gz, star := -1.0, -1.0
	for _, f := range fields {
		for _, item := range strings.Split(f, ",") {
			name, params, _ := strings.Cut(item, ";")
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				k, v, _ := strings.Cut(p, "=")
				if strings.EqualFold(strings.TrimSpace(k), "q") {
					var err error
					if q, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil || q < 0 || q > 1 {
						q = 0
					}
				}
			}
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "gzip", "x-gzip":
				gz = max(gz, q)
			case "*":
				star = max(star, q)
			}
		}
	}
	if gz >= 0 {
		return gz > 0
	}
	return star > 0
}

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"date": func(t time.Time) string { return t.UTC().Format("2 January 2006") },
}).Parse(`
{{define "head"}}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
{{if .Canonical}}<link rel="canonical" href="{{.Base}}{{.Canonical}}">
{{end}}</head>
<body>
<nav><a href="/">Home</a> · <a href="/about">About</a></nav>
<main>
<h1>{{.Title}}</h1>
{{end}}

{{define "foot"}}</main>
<footer><a href="/sitemap.xml">Sitemap</a></footer>
</body>
</html>
{{end}}

{{define "list"}}<ul>
{{range .}}<li><a href="/posts/{{.Slug}}">{{.Title}}</a> <small>{{date .Updated}}</small></li>
{{end}}</ul>
{{end}}

{{define "home"}}{{template "head" .}}<p>Short notes for people who run web sites that crawlers visit.</p>
{{template "list" .Posts}}<p>Topics: {{range $i, $t := .Tags}}{{if $i}}, {{end}}<a href="/tags/{{$t}}">{{$t}}</a>{{end}}</p>
{{template "foot" .}}{{end}}

{{define "post"}}{{template "head" .}}<p><small>Updated {{date .Post.Updated}} · {{range $i, $t := .Post.Tags}}{{if $i}}, {{end}}<a href="/tags/{{$t}}">{{$t}}</a>{{end}}</small></p>
{{range .Post.Body}}<p>{{.}}</p>
{{end}}{{template "foot" .}}{{end}}

{{define "tag"}}{{template "head" .}}{{template "list" .Posts}}{{template "foot" .}}{{end}}

{{define "about"}}{{template "head" .}}<p>This site is the example server of gentlecrawl's package site: conditional GET on every page, gzip, a sitemap, real 404s, and load shedding that asks crawlers, not people, to come back later.</p>
{{template "foot" .}}{{end}}

{{define "notfound"}}{{template "head" .}}<p>There is no page at this address. The <a href="/">home page</a> lists them all.</p>
{{template "foot" .}}{{end}}
`))
