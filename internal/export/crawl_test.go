package export_test

import (
	"bytes"
	"crypto/sha1"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/export"
)

// page is what the test site serves at a path.
type page struct {
	status   int
	location string   // for a 3xx
	ctype    string   // Content-Type
	gzip     bool     // sent with Content-Encoding: gzip
	title    string   // for HTML
	links    []string // paths linked to, in document order (HTML)
	body     []byte   // the body; built from title and links when nil
	etag     bool     // sends an ETag, and 304 to If-None-Match
}

// site serves pages and logs every request: "PATH STATUS".
type site struct {
	srv   *httptest.Server
	pages map[string]*page
	sent  map[string][]byte // the body as sent, per path
	mu    sync.Mutex
	log   []string
}

// newSite starts a site without pages; add them with add.
func newSite(t *testing.T) *site {
	s := &site{pages: map[string]*page{}, sent: map[string][]byte{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// add serves p at path. An HTML page without a body gets one made of its
// title and its links, each twice.
func (s *site) add(path string, p *page) {
	body := p.body
	if body == nil && p.title != "" {
		var b bytes.Buffer
		fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><title>%s</title></head><body>\n", p.title)
		for _, l := range p.links {
			fmt.Fprintf(&b, "<p><a href=\"%s\">to %s</a></p>\n", l, l)
		}
		for _, l := range p.links {
			fmt.Fprintf(&b, "<a href=\"%s#again\">again</a>\n", l)
		}
		b.WriteString("</body></html>\n")
		body = b.Bytes()
	}
	if p.gzip {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(body)
		zw.Close()
		body = z.Bytes()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[path], s.sent[path] = p, body
}

func (s *site) serve(w http.ResponseWriter, r *http.Request) {
	status := http.StatusNotFound
	defer func() {
		s.mu.Lock()
		s.log = append(s.log, fmt.Sprintf("%s %d", r.URL.Path, status))
		s.mu.Unlock()
	}()
	s.mu.Lock()
	p, sent := s.pages[r.URL.Path], s.sent[r.URL.Path]
	s.mu.Unlock()
	if p == nil {
		http.NotFound(w, r)
		return
	}
	etag := fmt.Sprintf(`"%x"`, sha1.Sum(sent))
	if p.etag {
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			status = http.StatusNotModified
			w.WriteHeader(status)
			return
		}
	}
	if p.location != "" {
		w.Header().Set("Location", p.location)
	}
	if p.ctype != "" {
		w.Header().Set("Content-Type", p.ctype)
	}
	if p.gzip {
		w.Header().Set("Content-Encoding", "gzip")
	}
	status = p.status
	w.WriteHeader(status)
	w.Write(sent)
}

func (s *site) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

// TestExportCrawl crawls a test site, then crawls it again with Recrawl
// (its pages answer 304 to their ETags), and exports the job: one line per
// request the server answered, robots.txt aside, each with the status,
// title, links and payload digest of what the server sent.
func TestExportCrawl(t *testing.T) {
	const html = "text/html; charset=utf-8"
	pages := map[string]*page{
		"/robots.txt":  {status: 200, ctype: "text/plain"}, // bodies that need the server's address: below
		"/sitemap.xml": {status: 200, ctype: "application/xml", etag: true},
		"/":            {status: 200, ctype: html, gzip: true, etag: true, title: "Home", links: []string{"/a", "/old", "/missing", "b"}},
		"/a":           {status: 200, ctype: html, etag: true, title: "Page A &amp; more", links: []string{"/", "/b"}},
		"/b":           {status: 200, ctype: html, gzip: true, etag: true, title: "Page B"},
		"/old":         {status: 301, location: "/new", ctype: html, body: []byte("<a href=\"/new\">moved</a>")},
		"/new":         {status: 200, ctype: html, etag: true, title: "New", links: []string{"/a"}},
		"/missing":     {status: 404, ctype: html, title: "Not found here"},
		"/listed":      {status: 200, ctype: html, etag: true, title: "Only in the sitemap"},
	}
	s := newSite(t)
	base := s.srv.URL
	pages["/robots.txt"].body = fmt.Appendf(nil, "User-agent: *\nAllow: /\nSitemap: %s/sitemap.xml\n", base)
	pages["/sitemap.xml"].body = fmt.Appendf(nil, `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/listed</loc></url></urlset>`, base)
	for path, p := range pages {
		s.add(path, p)
	}

	job := t.TempDir()
	cfg := gentlecrawl.Config{JobDir: job, Seeds: []string{base + "/"}, Delay: time.Millisecond, AllowPrivateNetworks: true}
	for _, recrawl := range []bool{false, true} {
		cfg.Recrawl = recrawl
		c, err := gentlecrawl.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
	}

	files, open, err := export.Files(job)
	if err != nil || len(files) == 0 || len(open) != 0 {
		t.Fatalf("files %q, open %q, %v", files, open, err)
	}
	var out bytes.Buffer
	e := export.New(&out, export.Options{})
	for _, f := range files {
		if err := e.File(t.Context(), f); err != nil {
			t.Fatal(err)
		}
	}
	e.Flush()
	var lines []export.Page
	dec := json.NewDecoder(&out)
	for dec.More() {
		var p export.Page
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, p)
	}

	// One line per answer, in the order the server gave them.
	var want []string
	for _, r := range s.requests() {
		if !strings.HasPrefix(r, "/robots.txt ") {
			want = append(want, r)
		}
	}
	var got []string
	for _, p := range lines {
		got = append(got, fmt.Sprintf("%s %d", strings.TrimPrefix(p.URL, base), p.Status))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lines:\n%s\nthe server's answers (robots.txt aside):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	n304 := 0
	for _, w := range want {
		if strings.HasSuffix(w, " 304") {
			n304++
		}
	}
	t.Logf("%d lines for the server's %d answers (robots.txt aside), %d of them 304", len(lines), len(want), n304)
	if n304 < 5 {
		t.Errorf("only %d answers 304 in the recrawl: %q", n304, want)
	}

	for _, l := range lines {
		path := strings.TrimPrefix(l.URL, base)
		p := pages[path]
		if l.Status == 304 {
			if l.Title != "" || len(l.Links) != 0 || l.Length != 0 || l.FinalURL != l.URL || l.Error != "" {
				t.Errorf("%s 304: %+v", path, l)
			}
			continue
		}
		wantTitle := strings.ReplaceAll(p.title, "&amp;", "&")
		var wantLinks []string
		for _, h := range p.links {
			wantLinks = append(wantLinks, base+"/"+strings.TrimPrefix(h, "/"))
		}
		if path == "/old" {
			wantLinks = []string{base + "/new"}
		}
		if l.Title != wantTitle || strings.Join(l.Links, " ") != strings.Join(wantLinks, " ") || l.Error != "" {
			t.Errorf("%s: title %q links %q error %q; want %q, %q", path, l.Title, l.Links, l.Error, wantTitle, wantLinks)
		}
		sum := sha1.Sum(s.sent[path])
		if wantDigest := "sha1:" + base32.StdEncoding.EncodeToString(sum[:]); l.Digest != wantDigest {
			t.Errorf("%s: digest %s, want %s (of the body as sent)", path, l.Digest, wantDigest)
		}
		if l.ContentType != p.ctype {
			t.Errorf("%s: content_type %q, want %q", path, l.ContentType, p.ctype)
		}
		wantFinal := l.URL
		if path == "/old" {
			wantFinal = base + "/new"
		}
		if l.FinalURL != wantFinal {
			t.Errorf("%s: final_url %s, want %s", path, l.FinalURL, wantFinal)
		}
		if fetched, err := time.Parse(time.RFC3339Nano, l.Fetched); err != nil || time.Since(fetched) > time.Minute {
			t.Errorf("%s: fetched %q", path, l.Fetched)
		}
		if !p.gzip && p.body != nil && l.Length != len(p.body) {
			t.Errorf("%s: length %d, want %d", path, l.Length, len(p.body))
		}
	}
}
