package cli

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// exportSite serves a home page (gzip-encoded), two pages, a redirect and
// a 404; pages have ETags and answer 304 to them. It logs "PATH STATUS".
type exportSite struct {
	srv *httptest.Server
	mu  sync.Mutex
	log []string
}

func newExportSite(t *testing.T) *exportSite {
	s := &exportSite{}
	var home bytes.Buffer
	zw := gzip.NewWriter(&home)
	zw.Write([]byte(`<html><head><title>Home</title></head><body><a href="/one">one</a> <a href="two">two</a> <a href="/moved">moved</a> <a href="/gone">gone</a> <a href="/one#top">one again</a></body></html>`))
	zw.Close()
	pages := map[string]string{
		"/one": `<html><head><title>Page one</title></head><body><p>First <b>page</b>.</p><a href="/">home</a></body></html>`,
		"/two": `<html><head><title>Page two</title></head><body><p>Second page.</p></body></html>`,
	}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := http.StatusOK
		defer func() {
			s.mu.Lock()
			s.log = append(s.log, fmt.Sprintf("%s %d", r.URL.Path, status))
			s.mu.Unlock()
		}()
		etag := `"` + strings.Trim(r.URL.Path, "/") + `-v1"`
		switch p := r.URL.Path; {
		case p == "/moved":
			status = http.StatusMovedPermanently
			http.Redirect(w, r, "/two", status)
			return
		case p == "/" || pages[p] != "":
			w.Header().Set("ETag", etag)
			if r.Header.Get("If-None-Match") == etag {
				status = http.StatusNotModified
				w.WriteHeader(status)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			if p == "/" {
				w.Header().Set("Content-Encoding", "gzip")
				w.Write(home.Bytes())
				return
			}
			w.Write([]byte(pages[p]))
		default:
			status = http.StatusNotFound
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *exportSite) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

type exportLine struct {
	URL         string   `json:"url"`
	FinalURL    string   `json:"final_url"`
	Status      int      `json:"status"`
	Fetched     string   `json:"fetched"`
	ContentType string   `json:"content_type"`
	Length      int      `json:"length"`
	Digest      string   `json:"digest"`
	Title       string   `json:"title"`
	Links       []string `json:"links"`
	Text        *string  `json:"text"`
	Error       string   `json:"error"`
}

func exportLines(t *testing.T, out string) []exportLine {
	t.Helper()
	var lines []exportLine
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var l exportLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	return lines
}

// crawlForExport crawls the site into a new job, then again with
// --recrawl, and returns the job directory.
func crawlForExport(t *testing.T, s *exportSite) string {
	job := filepath.Join(t.TempDir(), "job")
	for _, extra := range [][]string{{s.srv.URL + "/"}, {"--recrawl"}} {
		args := append([]string{"crawl", "-q", "--delay", "1ms", "--job", job, "--allow-private-networks"}, extra...)
		if code, _, errs := run(t, args...); code != 0 {
			t.Fatalf("crawl %q: exit %d, stderr %q", extra, code, errs)
		}
	}
	return job
}

// TestExport: after a crawl and a recrawl, one line per answer the server
// gave (robots.txt aside), in order, with the titles, links and redirect
// targets the server sent, and the 304s of the recrawl; --text adds the
// visible text.
func TestExport(t *testing.T) {
	s := newExportSite(t)
	job := crawlForExport(t, s)

	code, out, errs := run(t, "export", "--job", job)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	lines := exportLines(t, out)
	var got, want []string
	for _, l := range lines {
		got = append(got, fmt.Sprintf("%s %d", strings.TrimPrefix(l.URL, s.srv.URL), l.Status))
	}
	for _, r := range s.requests() {
		if !strings.HasPrefix(r, "/robots.txt ") {
			want = append(want, r)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lines:\n%s\nserver's answers (robots.txt aside):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	u := func(p string) string { return s.srv.URL + p }
	type expect struct {
		title, final string
		links        []string
	}
	wants := map[string]expect{
		"/":      {"Home", u("/"), []string{u("/one"), u("/two"), u("/moved"), u("/gone")}},
		"/one":   {"Page one", u("/one"), []string{u("/")}},
		"/two":   {"Page two", u("/two"), nil},
		"/moved": {"", u("/two"), []string{u("/two")}}, // http.Redirect's body links to the target
		"/gone":  {"", u("/gone"), nil},
	}
	seen304 := 0
	for _, l := range lines {
		path := strings.TrimPrefix(l.URL, s.srv.URL)
		if l.Status == 304 {
			seen304++
			if l.Title != "" || len(l.Links) != 0 || l.Length != 0 || l.FinalURL != l.URL {
				t.Errorf("%s 304: %+v", path, l)
			}
			continue
		}
		w := wants[path]
		if l.Title != w.title || l.FinalURL != w.final || strings.Join(l.Links, " ") != strings.Join(w.links, " ") ||
			l.Links == nil || l.Text != nil || l.Error != "" || !strings.HasPrefix(l.Digest, "sha1:") || l.Fetched == "" {
			t.Errorf("%s: %+v\nwant title %q, final_url %s, links %q", path, l, w.title, w.final, w.links)
		}
	}
	if seen304 != 3 {
		t.Errorf("%d lines with status 304, want 3 (/, /one, /two)", seen304)
	}

	code, out, _ = run(t, "export", "--job", job, "--text")
	if code != 0 {
		t.Fatalf("--text: exit %d", code)
	}
	for _, l := range exportLines(t, out) {
		if l.Text == nil {
			t.Errorf("--text: %s %d has no text field", l.URL, l.Status)
		} else if l.URL == u("/one") && l.Status == 200 && *l.Text != "Page one\nFirst page.\nhome" {
			t.Errorf("--text: /one: %q", *l.Text)
		}
	}
}

// TestExportBadInput: a missing job directory or --job is an error (exit
// 2); a job without WARC files prints nothing, says so on stderr and exits
// 0; a damaged WARC file gives the lines of the records before the damage,
// then an error naming the file and the offset, with exit 1.
func TestExportBadInput(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-job")
	code, out, errs := run(t, "export", "--job", missing)
	if code != 2 || out != "" || !strings.Contains(errs, "no-such-job") || strings.Count(errs, "\n") != 1 {
		t.Errorf("missing job directory: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, _, errs = run(t, "export")
	if code != 2 || !strings.Contains(errs, "--job") {
		t.Errorf("no --job: exit %d, stderr %q", code, errs)
	}
	code, _, errs = run(t, "export", "--job", t.TempDir(), "stray")
	if code == 0 {
		t.Errorf("an argument: exit 0, stderr %q", errs)
	}

	empty := t.TempDir()
	os.Mkdir(filepath.Join(empty, "warc"), 0o755)
	for _, job := range []string{empty, t.TempDir()} {
		code, out, errs = run(t, "export", "--job", job)
		if code != 0 || out != "" || !strings.Contains(errs, "no WARC files") {
			t.Errorf("job without WARC files: exit %d, stdout %q, stderr %q", code, out, errs)
		}
	}

	// A damaged job: the last WARC file cut in the middle of its last
	// record, and a file left .open by a crash.
	s := newExportSite(t)
	job := crawlForExport(t, s)
	_, whole, _ := run(t, "export", "--job", job)
	wholeLines := strings.Split(strings.TrimSuffix(whole, "\n"), "\n")
	files, _ := filepath.Glob(filepath.Join(job, "warc", "*.warc.gz"))
	if len(files) != 2 {
		t.Fatalf("WARC files %q, want one per run", files)
	}
	last := files[len(files)-1]
	data, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(last, data[:len(data)-20], 0o644)
	os.WriteFile(filepath.Join(job, "warc", "gentlecrawl-20260101000000-00099.warc.gz.open"), data[:100], 0o644)

	code, out, errs = run(t, "export", "--job", job)
	if code != 1 {
		t.Errorf("damaged file: exit %d, want 1", code)
	}
	if want := strings.Join(wholeLines[:len(wholeLines)-1], "\n") + "\n"; out != want {
		t.Errorf("damaged file: stdout\n%s\nwant every line but the last:\n%s", out, want)
	}
	if !strings.Contains(errs, last) || !strings.Contains(errs, "at byte ") || !strings.Contains(errs, "ends inside this record") {
		t.Errorf("damaged file: stderr %q does not name the file and the offset", errs)
	}
	if !strings.Contains(errs, "00099.warc.gz.open: still being written") {
		t.Errorf("stderr %q does not mention the .open file", errs)
	}
	t.Logf("stderr:\n%s", errs)
}
