package check_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/check"
)

// site is a small web site for the tests, served by httptest, with one
// fault or none. Its zero value (with Pages set) is a clean site: pages
// over 1 KiB with ETag and Last-Modified, conditional GET, gzip with
// Vary, 404 for unknown paths, a robots.txt that allows everything. It
// logs every request, as a server's access log would.
type site struct {
	Pages int    // HTML pages: "/" and /p/1 … /p/(Pages-1)
	Seed  uint64 // the link structure and the page texts

	Robots       string // robots.txt; "" allows everything
	RobotsStatus int    // 0 means 200

	NoGzip            bool // never compress
	NoVary            bool // compress without Vary: Accept-Encoding
	NoValidators      bool // neither ETag nor Last-Modified
	IgnoreConditional bool // send validators, never answer 304
	GzipSuffixETag    bool // Apache's mod_deflate: "…-gzip" on compressed answers, only the plain ETag matches
	ETagUnknown       bool // If-None-Match never matches; If-Modified-Since alone works
	Soft404           bool // unknown paths answer 200 with a "not found" page
	Dynamic           bool // every answer differs (a time in the page) under the same validators
	Session           string
	SessionKnown      bool // Session is a well-known name (PHPSESSID) rather than an invented one
	Slow              func(path string) time.Duration
	Handle            map[string]http.HandlerFunc // answers for these paths, before anything else

	srv *httptest.Server
	mu  sync.Mutex
	log []hit
}

// hit is one line of the site's access log.
type hit struct {
	Start, End time.Time
	Path       string // path and query
	UA         string
	Status     int
}

var modTime = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// start serves the site until the test ends and returns its base URL.
func (s *site) start(t *testing.T) string {
	t.Helper()
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s.srv.URL
}

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (s *site) serve(w http.ResponseWriter, r *http.Request) {
	h := hit{Start: time.Now(), Path: r.URL.RequestURI(), UA: r.UserAgent()}
	sw := &statusWriter{ResponseWriter: w}
	s.answer(sw, r)
	h.End, h.Status = time.Now(), sw.status
	s.mu.Lock()
	s.log = append(s.log, h)
	s.mu.Unlock()
}

// hits returns the log so far.
func (s *site) hits() []hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

func (s *site) answer(w http.ResponseWriter, r *http.Request) {
	if s.Slow != nil {
		time.Sleep(s.Slow(r.URL.Path))
	}
	if h := s.Handle[r.URL.Path]; h != nil {
		h(w, r)
		return
	}
	if r.URL.Path == "/robots.txt" {
		body := s.Robots
		if body == "" {
			body = "User-agent: *\nAllow: /\n"
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if s.RobotsStatus != 0 {
			w.WriteHeader(s.RobotsStatus)
		}
		w.Write([]byte(body))
		return
	}
	i, ok := s.pageIndex(r.URL.Path)
	if !ok {
		if s.Soft404 {
			s.write(w, r, []byte(notFoundPage), false)
			return
		}
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	s.write(w, r, s.page(i, r.URL.Query()), true)
}

const notFoundPage = "<!doctype html><html><head><title>Sorry, not found</title></head><body><p>We could not find that page. " +
	"Try the home page, the search box or the site map; the page you asked for may have moved.</p></body></html>\n"

func (s *site) pageIndex(path string) (int, bool) {
	if path == "/" {
		return 0, true
	}
	n, err := strconv.Atoi(strings.TrimPrefix(path, "/p/"))
	if err != nil || !strings.HasPrefix(path, "/p/") || n <= 0 || n >= s.Pages {
		return 0, false
	}
	return n, true
}

// links returns the pages page i links to: the next one and a few drawn
// from the seed.
func (s *site) links(i int) []int {
	rng := rand.New(rand.NewPCG(s.Seed, uint64(i)))
	out := []int{(i + 1) % s.Pages}
	for range 2 + rng.IntN(4) {
		out = append(out, rng.IntN(s.Pages))
	}
	return out
}

// page renders page i; a session id in the request's query is ignored,
// but the links carry one of their own, as a site without cookies does.
func (s *site) page(i int, _ map[string][]string) []byte {
	rng := rand.New(rand.NewPCG(s.Seed^0x9e3779b97f4a7c15, uint64(i)))
	var b bytes.Buffer
	fmt.Fprintf(&b, "<!doctype html>\n<html><head><title>Page %d</title></head><body>\n<h1>Page %d</h1>\n", i, i)
	words := strings.Fields("crawler site owner request answer page link robots delay cache gzip validator server log minute")
	for p := range 4 + rng.IntN(6) {
		b.WriteString("<p>")
		for w := range 30 + rng.IntN(30) {
			if w > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		fmt.Fprintf(&b, " (%d.%d)</p>\n", i, p)
	}
	sess := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(i)))
	for k, l := range s.links(i) {
		href := "/"
		if l > 0 {
			href = "/p/" + strconv.Itoa(l)
		}
		if s.Session != "" {
			// Hex digits with a letter in them: a value of digits alone
			// could be an id, and is not taken for a session.
			href += fmt.Sprintf("?%s=%016xf%07x", s.Session, sess.Uint64(), k)
		}
		fmt.Fprintf(&b, "<p><a href=\"%s\">page %d</a></p>\n", href, l)
	}
	if s.Dynamic {
		fmt.Fprintf(&b, "<!-- served at %d -->\n", time.Now().UnixNano())
	}
	b.WriteString("</body></html>\n")
	return b.Bytes()
}

// write answers with body, with the site's validators, conditional GET
// and compression.
func (s *site) write(w http.ResponseWriter, r *http.Request, body []byte, found bool) {
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	gz := !s.NoGzip && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip")
	etag := fmt.Sprintf(`"%x-%x"`, len(body), modTime.Unix())
	if found && !s.NoValidators {
		sent := etag
		if gz && s.GzipSuffixETag {
			sent = etag[:len(etag)-1] + `-gzip"`
		}
		hdr.Set("ETag", sent)
		hdr.Set("Last-Modified", modTime.Format(http.TimeFormat))
		if !s.IgnoreConditional && notModified(r, etag, s.ETagUnknown) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	if gz {
		if !s.NoVary {
			hdr.Set("Vary", "Accept-Encoding")
		}
		hdr.Set("Content-Encoding", "gzip")
		var zb bytes.Buffer
		zw := gzip.NewWriter(&zb)
		zw.Write(body)
		zw.Close()
		body = zb.Bytes()
	}
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// notModified evaluates If-None-Match (which decides alone when present,
// RFC 9110 §13.2.2) and If-Modified-Since.
func notModified(r *http.Request, etag string, etagUnknown bool) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		if etagUnknown {
			return false
		}
		for _, e := range strings.Split(inm, ",") {
			if strings.TrimPrefix(strings.TrimSpace(e), "W/") == etag {
				return true
			}
		}
		return false
	}
	t, err := http.ParseTime(r.Header.Get("If-Modified-Since"))
	return err == nil && !modTime.After(t)
}

// run checks url with a short delay and the test's options.
func run(t *testing.T, url string, opt func(*check.Config)) *check.Report {
	t.Helper()
	cfg := check.Config{
		UserAgent:            "gentlecrawl/test (check)",
		Delay:                20 * time.Millisecond,
		Time:                 20 * time.Second,
		AllowPrivateNetworks: true,
	}
	if opt != nil {
		opt(&cfg)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	rep, err := check.Run(ctx, cfg, url)
	if err != nil {
		t.Fatalf("check.Run(%s): %v", url, err)
	}
	if testing.Verbose() {
		var b strings.Builder
		rep.WriteText(&b)
		t.Log("\n" + b.String())
	}
	return rep
}

// problems returns the ids of the findings that are fail or warn, sorted.
func problems(rep *check.Report) []string {
	var ids []string
	for _, f := range rep.Findings {
		if f.Severity != check.Info {
			ids = append(ids, f.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// expect fails the test unless the report's fail and warn findings are
// exactly want (no false alarm beside the fault), each with the severity
// of the contract.
func expect(t *testing.T, rep *check.Report, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := problems(rep); !slices.Equal(got, want) {
		var b strings.Builder
		rep.WriteText(&b)
		t.Fatalf("problems %q, want %q\n%s", got, want, b.String())
	}
	for _, f := range rep.Findings {
		if sev, ok := severities[f.ID]; ok && f.Severity != sev {
			t.Errorf("%s: severity %s, want %s", f.ID, f.Severity, sev)
		}
		if f.Severity != check.Info && len(f.Evidence) == 0 {
			t.Errorf("%s: no evidence", f.ID)
		}
	}
}

var severities = map[string]check.Severity{
	check.IDRobotsUnavailable: check.Fail, check.IDRobotsRedirects: check.Fail,
	check.IDRobotsHTML: check.Warn, check.IDRobotsTooLarge: check.Warn, check.IDRobotsDisallowAll: check.Warn,
	check.IDCrawlDelay: check.Warn, check.IDNoValidators: check.Warn, check.IDConditionalIgnored: check.Warn,
	check.IDNoCompression: check.Warn, check.IDSessionIDs: check.Warn, check.IDSoft404: check.Warn,
	check.IDSlowResponse: check.Warn, check.IDRetryAfterMissing: check.Warn, check.IDSitemapErrors: check.Warn,
	check.IDVaryMissing: check.Info, check.IDETagGzipSuffix: check.Info, check.IDETagIgnored: check.Info,
}

// finding returns the finding with the id, failing the test without one.
func finding(t *testing.T, rep *check.Report, id string) check.Finding {
	t.Helper()
	for _, f := range rep.Findings {
		if f.ID == id {
			return f
		}
	}
	var b strings.Builder
	rep.WriteText(&b)
	t.Fatalf("no finding %s\n%s", id, b.String())
	return check.Finding{}
}

// politeness checks a server's log of one check: robots.txt first, one
// request at a time, at least gap between the end of one and the start
// of the next (less slack for the log's resolution), at most
// check.MaxRequests requests, the check's User-Agent, and no URL that
// disallowed reports true for.
func politeness(t *testing.T, log []hit, gap, slack time.Duration, disallowed func(path string) bool) {
	t.Helper()
	if len(log) == 0 {
		t.Fatal("the server saw no request")
	}
	if len(log) > check.MaxRequests {
		t.Errorf("%d requests, more than %d", len(log), check.MaxRequests)
	}
	slices.SortFunc(log, func(a, b hit) int { return a.Start.Compare(b.Start) })
	if log[0].Path != "/robots.txt" {
		t.Errorf("first request %s, want /robots.txt", log[0].Path)
	}
	for i, h := range log {
		if !strings.Contains(h.UA, "check") {
			t.Errorf("request %d (%s): User-Agent %q without \"check\"", i, h.Path, h.UA)
		}
		if disallowed != nil && disallowed(h.Path) {
			t.Errorf("request %d: %s is disallowed by robots.txt", i, h.Path)
		}
		if i == 0 {
			continue
		}
		prev := log[i-1]
		if h.Start.Before(prev.End) {
			t.Errorf("request %d (%s) started %v before request %d (%s) ended: two at a time", i, h.Path, prev.End.Sub(h.Start), i-1, prev.Path)
		} else if d := h.Start.Sub(prev.End); d < gap-slack {
			t.Errorf("request %d (%s) started %v after the end of the one before, want at least %v", i, h.Path, d, gap)
		}
	}
}
