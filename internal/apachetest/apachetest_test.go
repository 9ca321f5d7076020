package apachetest

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// modTime is the modification time of the test pages: long before the
// requests, so that Apache's ETags are strong (it makes the ETag of a
// file modified within the second of the request weak, W/"…").
var modTime = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

// writePages writes the HTML pages into dir, each over 1 KB and of
// varied text (so that gzip does not make them tiny), with modTime as
// their modification time.
func writePages(t *testing.T, dir string, pages map[string]int) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for name, paras := range pages {
		var b bytes.Buffer
		fmt.Fprintf(&b, "<!doctype html>\n<html><head><title>%s</title></head><body>\n", name)
		for i := range paras {
			fmt.Fprintf(&b, "<p>Paragraph %d of %s: the crawler fetched %d pages at %d requests a minute, and %x came back unchanged.</p>\n",
				i, name, i*37%101, i*13%17+1, i*2654435761)
		}
		b.WriteString("</body></html>\n")
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, modTime, modTime); err != nil {
			t.Fatal(err)
		}
		out[name] = b.Bytes()
	}
	return out
}

// TestConditionalGzip records how Apache 2.4's mod_deflate, as Debian
// configures it, answers conditional GETs for a page it compresses: the
// ground truth for the crawler's handling of validators (validators.go).
// Apache adds "-gzip" to the ETag of a compressed answer
// (DeflateAlterETag AddSuffix, the default) and then does not recognise
// that ETag in If-None-Match (bug 45023): it compares it with the file's.
func TestConditionalGzip(t *testing.T) {
	root := t.TempDir()
	pages := writePages(t, root, map[string]int{"index.html": 60, "page.html": 25})
	srv := Start(t, Site{Name: "a.test", Addr: "127.0.0.3:0", Root: root, Deflate: true})
	client := newClient()
	u := srv.URL("a.test") + "/page.html"
	want := pages["page.html"]
	if len(want) <= 1024 {
		t.Fatalf("page.html is %d bytes, want over 1 KB", len(want))
	}
	gz := func(h ...string) http.Header {
		hdr := http.Header{"Accept-Encoding": {"gzip"}}
		for i := 0; i < len(h); i += 2 {
			hdr.Set(h[i], h[i+1])
		}
		return hdr
	}

	// (1) GET, Accept-Encoding: gzip: 200, gzipped, ETag "mtime-size" in
	// hex with -gzip inside the quotes, Vary: Accept-Encoding.
	resp, body := get(t, client, u, gz())
	etag, lm := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	plain := fmt.Sprintf(`"%x-%x"`, len(want), modTime.UnixMicro()) // FileETag MTime Size
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "gzip" ||
		resp.Header.Get("Vary") != "Accept-Encoding" || etag != plain[:len(plain)-1]+`-gzip"` ||
		lm != modTime.Format(http.TimeFormat) {
		t.Fatalf("(1) gzip: %d %v; want 200, Content-Encoding gzip, Vary Accept-Encoding, ETag %s, Last-Modified %s",
			resp.StatusCode, resp.Header, plain[:len(plain)-1]+`-gzip"`, modTime.Format(http.TimeFormat))
	}
	if got := gunzip(t, body); !bytes.Equal(got, want) {
		t.Errorf("(1) the gzipped body is %d bytes unzipped, want the %d of page.html", len(got), len(want))
	}
	t.Logf("(1) Accept-Encoding: gzip → %d, ETag %s, Last-Modified %s, %d bytes", resp.StatusCode, etag, lm, len(body))

	for _, tc := range []struct {
		name string
		hdr  http.Header
		// What Apache answers: the status, and the ETag and
		// Content-Encoding of the answer.
		status       int
		etag, coding string
	}{
		// (2) The ETag it just sent is not recognised: a full 200, body
		// and all (bug 45023).
		{"(2) If-None-Match: the -gzip ETag", gz("If-None-Match", etag), http.StatusOK, etag, "gzip"},
		// (3) The date is: 304. The 304 carries the file's own ETag,
		// without -gzip, and no Vary.
		{"(3) If-Modified-Since: Last-Modified", gz("If-Modified-Since", lm), http.StatusNotModified, plain, ""},
		// (4) The file's ETag, without the suffix, is recognised, though
		// the client asks for gzip: 304, with that ETag.
		{"(4) If-None-Match: the ETag without -gzip", gz("If-None-Match", plain), http.StatusNotModified, plain, ""},
		// (5) Both, as RFC 9110 asks a client to send them: If-None-Match
		// decides and If-Modified-Since is ignored (RFC 9110 13.2.2), so
		// the date that alone gets a 304 is lost: a full 200.
		{"(5) If-None-Match: the -gzip ETag, and If-Modified-Since", gz("If-None-Match", etag, "If-Modified-Since", lm), http.StatusOK, etag, "gzip"},
		// (5') The stripped ETag with the date: 304.
		{"(5') If-None-Match: the ETag without -gzip, and If-Modified-Since", gz("If-None-Match", plain, "If-Modified-Since", lm), http.StatusNotModified, plain, ""},
		// (6) Uncompressed, the ETag is the file's, and recognised: 304.
		{"(6) no Accept-Encoding, If-None-Match: the plain ETag", http.Header{"If-None-Match": {plain}}, http.StatusNotModified, plain, ""},
		// (6') An uncompressed client sending the -gzip ETag: 200.
		{"(6') no Accept-Encoding, If-None-Match: the -gzip ETag", http.Header{"If-None-Match": {etag}}, http.StatusOK, plain, ""},
	} {
		resp, body := get(t, client, u, tc.hdr)
		t.Logf("%s → %d, ETag %s, Content-Encoding %q, Vary %q, %d bytes", tc.name, resp.StatusCode,
			resp.Header.Get("ETag"), resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"), len(body))
		if resp.StatusCode != tc.status || resp.Header.Get("ETag") != tc.etag || resp.Header.Get("Content-Encoding") != tc.coding {
			t.Errorf("%s: %d, ETag %s, Content-Encoding %q; want %d, %s, %q", tc.name, resp.StatusCode,
				resp.Header.Get("ETag"), resp.Header.Get("Content-Encoding"), tc.status, tc.etag, tc.coding)
		}
		switch {
		case resp.StatusCode == http.StatusNotModified && (len(body) != 0 || resp.Header.Get("Vary") != ""):
			t.Errorf("%s: a 304 with %d bytes, Vary %q; want none", tc.name, len(body), resp.Header.Get("Vary"))
		case resp.StatusCode == http.StatusOK && tc.coding == "gzip" && !bytes.Equal(gunzip(t, body), want):
			t.Errorf("%s: the gzipped body is not page.html", tc.name)
		case resp.StatusCode == http.StatusOK && tc.coding == "" && !bytes.Equal(body, want):
			t.Errorf("%s: the body is not page.html", tc.name)
		}
		if lm := resp.Header.Get("Last-Modified"); lm != modTime.Format(http.TimeFormat) {
			t.Errorf("%s: Last-Modified %q", tc.name, lm)
		}
	}

	// The access log has the request headers and the ETag as sent.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	entries, err := srv.WaitEntries(ctx, 8)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 8 {
		t.Fatalf("%d entries, want 8: %+v", len(entries), entries)
	}
	slices.SortStableFunc(entries, func(a, b Entry) int { return a.Start().Compare(b.Start()) })
	type logged struct {
		ae, inm, ims, etag, ce string
		status                 int
	}
	wantLog := []logged{
		{"gzip", "", "", etag, "gzip", 200},
		{"gzip", etag, "", etag, "gzip", 200},
		{"gzip", "", lm, plain, "", 304},
		{"gzip", plain, "", plain, "", 304},
		{"gzip", etag, lm, etag, "gzip", 200},
		{"gzip", plain, lm, plain, "", 304},
		{"", plain, "", plain, "", 304},
		{"", etag, "", plain, "", 200},
	}
	for i, e := range entries {
		got := logged{e.AcceptEncoding, e.IfNoneMatch, e.IfModifiedSince, e.ETag, e.ContentEncoding, e.Status}
		if got != wantLog[i] || e.Site != "a.test" || e.Method != "GET" || e.URI != "/page.html" || e.Path() != "/page.html" ||
			e.Proto != "HTTP/1.1" || e.Remote != "127.0.0.1" || e.Host != srv.Addr("a.test") || e.UserAgent != "apachetest" {
			t.Errorf("entry %d: %+v, want %+v", i, e, wantLog[i])
		}
		switch {
		case e.Status == 304 && e.Bytes != 0, e.Status == 200 && e.ContentEncoding == "gzip" && (e.Bytes == 0 || e.Bytes >= int64(len(want))),
			e.Status == 200 && e.ContentEncoding == "" && e.Bytes != int64(len(want)):
			t.Errorf("entry %d: %d bytes sent for a %d (%q)", i, e.Bytes, e.Status, e.ContentEncoding)
		}
		if d := time.Since(e.Time); d < 0 || d > time.Minute || e.Duration <= 0 || e.Duration > 10*time.Second || e.Start().After(e.Time) {
			t.Errorf("entry %d: Time %v ago, Duration %v", i, d, e.Duration)
		}
		if e.ConnRequest < 1 || e.RemotePort <= 0 {
			t.Errorf("entry %d: ConnRequest %d, RemotePort %d", i, e.ConnRequest, e.RemotePort)
		}
	}
	// Keep-alive: one connection for the eight requests, numbered 1 to 8.
	for i, e := range entries {
		if e.RemotePort != entries[0].RemotePort || e.ConnRequest != i+1 {
			t.Errorf("entry %d: port %d, request %d on its connection; want %d, %d", i, e.RemotePort, e.ConnRequest, entries[0].RemotePort, i+1)
		}
	}
}

// TestFreshFile: Apache makes the ETag of a file modified within a second
// of the request weak (W/"…"); here the modification time is in the
// future, which it treats alike. A weak ETag matches in If-None-Match
// (weak comparison), with or without gzip's suffix the same way.
func TestFreshFile(t *testing.T) {
	root := t.TempDir()
	writePages(t, root, map[string]int{"new.html": 30})
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(root, "new.html"), future, future); err != nil {
		t.Fatal(err)
	}
	srv := Start(t, Site{Name: "a.test", Addr: "127.0.0.3:0", Root: root, Deflate: true})
	client := newClient()
	u := srv.URL("a.test") + "/new.html"
	resp, _ := get(t, client, u, http.Header{"Accept-Encoding": {"gzip"}})
	etag := resp.Header.Get("ETag")
	plain := strings.Replace(etag, "-gzip", "", 1)
	if !strings.HasPrefix(etag, `W/"`) || !strings.HasSuffix(etag, `-gzip"`) {
		t.Fatalf("ETag %s, want a weak one with -gzip", etag)
	}
	for _, tc := range []struct {
		hdr    http.Header
		status int
	}{
		{http.Header{"Accept-Encoding": {"gzip"}, "If-None-Match": {etag}}, http.StatusOK},
		{http.Header{"Accept-Encoding": {"gzip"}, "If-None-Match": {plain}}, http.StatusNotModified},
		{http.Header{"If-None-Match": {plain}}, http.StatusNotModified},
	} {
		if resp, _ := get(t, client, u, tc.hdr); resp.StatusCode != tc.status {
			t.Errorf("%v: status %d, want %d", tc.hdr, resp.StatusCode, tc.status)
		}
	}
}

// TestVirtualHosts serves two name-based sites on one address and a third
// on another, with a Header, and checks the answers to unknown names and
// paths and the access log's Site.
func TestVirtualHosts(t *testing.T) {
	rootA, rootB := t.TempDir(), t.TempDir()
	pagesA := writePages(t, rootA, map[string]int{"index.html": 20})
	pagesB := writePages(t, rootB, map[string]int{"index.html": 21, "style.css": 0})
	if err := os.Mkdir(filepath.Join(rootB, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	writePages(t, filepath.Join(rootB, "dir"), map[string]int{"index.html": 1})
	srv := Start(t,
		Site{Name: "a.test", Addr: "127.0.0.3:0", Root: rootA, Deflate: true},
		Site{Name: "b.test", Addr: "127.0.0.3:0", Root: rootB, Headers: []string{`set Cache-Control "max-age=60"`}},
		Site{Name: "c.test", Addr: "[::1]:0", Root: rootB},
	)
	if srv.Addr("a.test") != srv.Addr("b.test") || srv.Addr("a.test") == srv.Addr("c.test") || srv.Addr("x.test") != "" {
		t.Fatalf("addresses %v", srv.Sites())
	}
	client := newClient()
	for _, tc := range []struct {
		host, url, path string
		status          int
		body            []byte
		coding, cc, ct  string
	}{
		{"a.test", srv.URL("a.test"), "/", 200, pagesA["index.html"], "gzip", "", "text/html"},
		{"b.test", srv.URL("b.test"), "/", 200, pagesB["index.html"], "", "max-age=60", "text/html"},
		{"B.TEST", srv.URL("b.test"), "/", 200, pagesB["index.html"], "", "max-age=60", "text/html"},
		// An unknown name gets the address's first site.
		{"x.test", srv.URL("a.test"), "/", 200, pagesA["index.html"], "gzip", "", "text/html"},
		{"c.test", srv.URL("c.test"), "/", 200, pagesB["index.html"], "", "", "text/html"},
		{"b.test", srv.URL("b.test"), "/no/such/page", 404, nil, "", "", ""},
		{"b.test", srv.URL("b.test"), "/dir", 301, nil, "", "", ""},
		{"b.test", srv.URL("b.test"), "/dir/", 200, nil, "", "max-age=60", "text/html"},
		{"b.test", srv.URL("b.test"), "/style.css", 200, pagesB["style.css"], "", "max-age=60", "text/css"},
	} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, tc.url+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = tc.host
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if tc.coding == "gzip" {
			body = gunzip(t, body)
		}
		if resp.StatusCode != tc.status || tc.body != nil && !bytes.Equal(body, tc.body) || resp.Header.Get("Content-Encoding") != tc.coding ||
			resp.Header.Get("Cache-Control") != tc.cc || tc.ct != "" && resp.Header.Get("Content-Type") != tc.ct {
			t.Errorf("Host %s %s: %d %v; want %d, Content-Encoding %q, Cache-Control %q, Content-Type %q", tc.host, tc.path,
				resp.StatusCode, resp.Header, tc.status, tc.coding, tc.cc, tc.ct)
		}
		if tc.status == 301 && resp.Header.Get("Location") != "http://"+tc.host+tc.path+"/" {
			t.Errorf("Host %s %s: Location %q", tc.host, tc.path, resp.Header.Get("Location"))
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	entries, err := srv.WaitEntries(ctx, 9)
	if err != nil {
		t.Fatal(err)
	}
	// Apache's children write their lines when they are done, not in the
	// order of the requests: put them in the order the requests started
	// (they were sent one after another).
	slices.SortStableFunc(entries, func(a, b Entry) int { return a.Start().Compare(b.Start()) })
	var sites []string
	for _, e := range entries {
		sites = append(sites, e.Site)
	}
	if got := strings.Join(sites, " "); got != "a.test b.test b.test a.test c.test b.test b.test b.test b.test" {
		t.Errorf("sites in the access log: %s", got)
	}
	if e := entries[4]; e.Remote != "::1" || e.Host != "c.test" {
		t.Errorf("the request on [::1]: Remote %q, Host %q", e.Remote, e.Host)
	}
}

// TestParseLine parses lines Apache 2.4.71 wrote in logFormat.
func TestParseLine(t *testing.T) {
	const (
		gz  = "1796134488341437\ta.test\t200\tGET /page.html?a=1 HTTP/1.1\t1138\t187\t127.0.0.1\t53808\t2\t127.0.0.3:36421\tGo-http-client/1.1\tgzip\tW/\\\"177d-6619326252b62-gzip\\\"\t-\tW/\\\"177d-6619326252b62-gzip\\\"\tgzip"
		nm  = "1796134488341832\ta.test\t304\tGET / HTTP/1.1\t0\t51\t::1\t53812\t0\tc.test\t-\t-\t-\tTue, 01 Dec 2026 14:14:48 GMT\t\\\"177d-6619326252b62\\\"\t-"
		esc = "1796134488342302\tb.test\t404\tGET /x\\\\y HTTP/1.0\t196\t1000001\t127.0.0.1\t40000\t0\t-\ttab\\there \\\"q\\\" \\\\ \\xc3\\xa9\\x01\t-\t-\t-\t-\t-"
	)
	for _, tc := range []struct {
		line string
		want Entry
	}{
		{gz, Entry{Time: time.UnixMicro(1796134488341437), Site: "a.test", Method: "GET", URI: "/page.html?a=1", Proto: "HTTP/1.1",
			Status: 200, Bytes: 1138, Duration: 187 * time.Microsecond, Remote: "127.0.0.1", RemotePort: 53808, ConnRequest: 3,
			Host: "127.0.0.3:36421", UserAgent: "Go-http-client/1.1", AcceptEncoding: "gzip",
			IfNoneMatch: `W/"177d-6619326252b62-gzip"`, ETag: `W/"177d-6619326252b62-gzip"`, ContentEncoding: "gzip"}},
		{nm, Entry{Time: time.UnixMicro(1796134488341832), Site: "a.test", Method: "GET", URI: "/", Proto: "HTTP/1.1",
			Status: 304, Duration: 51 * time.Microsecond, Remote: "::1", RemotePort: 53812, ConnRequest: 1, Host: "c.test",
			IfModifiedSince: "Tue, 01 Dec 2026 14:14:48 GMT", ETag: `"177d-6619326252b62"`}},
		{esc, Entry{Time: time.UnixMicro(1796134488342302), Site: "b.test", Method: "GET", URI: `/x\y`, Proto: "HTTP/1.0",
			Status: 404, Bytes: 196, Duration: 1000001 * time.Microsecond, Remote: "127.0.0.1", RemotePort: 40000, ConnRequest: 1,
			UserAgent: "tab\there \"q\" \\ é\x01"}},
	} {
		got, err := parseLine(tc.line)
		if err != nil || got != tc.want {
			t.Errorf("parseLine(%q):\n%+v, %v\nwant %+v", tc.line, got, err, tc.want)
		}
	}
	if _, err := parseLine(gz[:strings.LastIndexByte(gz, '\t')]); err == nil {
		t.Errorf("parseLine accepted a line with a field missing")
	}
	if _, err := parseLine(strings.Replace(nm, "\t0\t51\t", "\t-\t51\t", 1)); err == nil {
		t.Errorf("parseLine accepted bytes %q", "-")
	}
	es, err := parseLog([]byte(gz + "\n" + nm + "\n" + esc[:40]))
	if err != nil || len(es) != 2 {
		t.Errorf("parseLog with a line being written: %d entries, %v; want the 2 whole ones", len(es), err)
	}
}

// TestLogEscapes sends Apache a request whose headers need escaping and
// reads them back from the access log.
func TestLogEscapes(t *testing.T) {
	root := t.TempDir()
	writePages(t, root, map[string]int{"index.html": 1})
	srv := Start(t, Site{Name: "a.test", Addr: "127.0.0.3:0", Root: root})
	ua := "tab\there \"quoted\" \\ back é"
	inm := `"a", W/"b-gzip"`
	resp, _ := get(t, newClient(), srv.URL("a.test")+"/index.html?q=%22x%22", http.Header{"User-Agent": {ua}, "If-None-Match": {inm}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	es, err := srv.WaitEntries(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if e := es[0]; e.UserAgent != ua || e.IfNoneMatch != inm || e.URI != "/index.html?q=%22x%22" || e.AcceptEncoding != "" {
		t.Errorf("entry %+v: want User-Agent %q, If-None-Match %q", e, ua, inm)
	}
	raw, _ := os.ReadFile(filepath.Join(srv.Dir(), "access.log"))
	t.Logf("access.log: %q", raw)
}

// TestStop checks that Stop leaves no Apache process and frees the port,
// and that a second Stop returns the first one's result.
func TestStop(t *testing.T) {
	Require(t)
	root := t.TempDir()
	writePages(t, root, map[string]int{"index.html": 1})
	srv, err := Launch(t.Context(), t.TempDir(), Site{Name: "a.test", Addr: "127.0.0.3:0", Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if resp, _ := get(t, newClient(), srv.URL("a.test")+"/", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("status %d", resp.StatusCode)
	}
	pgid := srv.Pid()
	if n := groupSize(pgid); n < 2 {
		t.Errorf("%d processes in Apache's group, want its parent and children", n)
	}
	start := time.Now()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Stop took %v", time.Since(start))
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("after Stop, kill(-%d, 0): %v, want ESRCH", pgid, err)
	}
	if n := groupSize(pgid); n != 0 {
		t.Errorf("after Stop, %d processes in group %d", n, pgid)
	}
	if c, err := net.DialTimeout("tcp", srv.Addr("a.test"), time.Second); err == nil {
		c.Close()
		t.Errorf("after Stop, %s accepts connections", srv.Addr("a.test"))
	}
	if err := srv.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// groupSize counts the processes of process group pgid in /proc.
func groupSize(pgid int) int {
	ds, _ := os.ReadDir("/proc")
	n := 0
	for _, d := range ds {
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces.
		_, rest, _ := bytes.Cut(b, []byte(") "))
		var state string
		var ppid, pgrp int
		if _, err := fmt.Sscan(string(rest), &state, &ppid, &pgrp); err == nil && pgrp == pgid {
			n++
		}
	}
	return n
}

// TestLaunchRefuses checks that sites are checked before Apache runs: it
// needs no Apache.
func TestLaunchRefuses(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		site Site
		want string
	}{
		{Site{Name: "a.test", Addr: "10.1.2.3:8080", Root: root}, "loopback"},
		{Site{Name: "a.test", Addr: "0.0.0.0:8080", Root: root}, "loopback"},
		{Site{Name: "a.test", Addr: "[::]:8080", Root: root}, "loopback"},
		{Site{Name: "a.test", Addr: "localhost:8080", Root: root}, "loopback"},
		{Site{Name: "a.test", Addr: ":8080", Root: root}, "loopback"},
		{Site{Name: "a.test", Addr: "127.0.0.1", Root: root}, "address"},
		{Site{Name: "a test", Addr: "127.0.0.1:0", Root: root}, "name"},
		{Site{Name: "a.test", Addr: "127.0.0.1:0"}, "Root"},
		{Site{Name: "a.test", Addr: "127.0.0.1:0", Root: filepath.Join(root, "none")}, "directory"},
		{Site{Name: "a.test", Addr: "127.0.0.1:0", Root: root + `/"x`}, "quote"},
		{Site{Name: "a.test", Addr: "127.0.0.1:0", Root: root, Headers: []string{"set A 1\nLoadModule x y"}}, "line"},
	} {
		_, err := Launch(t.Context(), t.TempDir(), tc.site)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Launch(%+v): error %v, want one about %q", tc.site, err, tc.want)
		}
	}
	_, err := Launch(t.Context(), t.TempDir(),
		Site{Name: "a.test", Addr: "127.0.0.1:0", Root: root},
		Site{Name: "A.test", Addr: "127.0.0.1:0", Root: root})
	if err == nil {
		t.Error("Launch accepted two sites called a.test")
	}
}

// newClient returns a client that reuses connections, neither asks for
// nor undoes compression (the requests say what they accept), and does
// not follow redirects.
func newClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{DisableCompression: true},
		Timeout:   10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// get sends a GET with the header hdr, User-Agent apachetest unless hdr
// has one, and reads the whole answer.
func get(t *testing.T, client *http.Client, u string, hdr http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "apachetest")
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// gunzip returns b unzipped, or fails the test.
func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	return out
}

// Example serves a directory with mod_deflate on, as a crawler meets a
// Debian Apache. Start does the same in a test, with the configuration in
// t.TempDir() and a Cleanup.
func Example() {
	dir, err := os.MkdirTemp("", "apachetest")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	root := filepath.Join(dir, "site")
	if err := os.Mkdir(root, 0o755); err != nil {
		panic(err)
	}
	if err := os.WriteFile(filepath.Join(root, "index.html"), []byte("<!doctype html><title>a</title>"), 0o644); err != nil {
		panic(err)
	}
	srv, err := Launch(context.Background(), dir, Site{Name: "a.test", Addr: "127.0.0.3:0", Root: root, Deflate: true})
	if err != nil {
		panic(err)
	}
	defer srv.Stop()
	fmt.Println("gentlecrawl --allow-private-networks --connect-to a.test:80:" + srv.Addr("a.test") + " http://a.test/")
	// Then read what Apache saw.
	entries, _ := srv.Entries()
	fmt.Println(len(entries), "requests")
}

// TestDirectives adds a directive to a site with mod_deflate: with
// DeflateAlterETag Remove a compressed answer carries no ETag, and the
// date alone gets a 304. A directive over two lines is refused.
func TestDirectives(t *testing.T) {
	root := t.TempDir()
	pages := writePages(t, root, map[string]int{"page.html": 25})
	srv := Start(t, Site{Name: "a.test", Addr: "127.0.0.3:0", Root: root, Deflate: true, Directives: []string{"DeflateAlterETag Remove"}})
	client := newClient()
	u := srv.URL("a.test") + "/page.html"
	resp, body := get(t, client, u, http.Header{"Accept-Encoding": {"gzip"}})
	lm := resp.Header.Get("Last-Modified")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("ETag") != "" || lm == "" {
		t.Fatalf("DeflateAlterETag Remove: %d %v; want 200, gzip, Last-Modified and no ETag", resp.StatusCode, resp.Header)
	}
	if !bytes.Equal(gunzip(t, body), pages["page.html"]) {
		t.Error("the gzipped body is not page.html")
	}
	if resp, _ := get(t, client, u, http.Header{"Accept-Encoding": {"gzip"}, "If-Modified-Since": {lm}}); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-Modified-Since: %d, want 304", resp.StatusCode)
	}
	if _, err := Launch(t.Context(), t.TempDir(), Site{Name: "a.test", Addr: "127.0.0.3:0", Root: root, Directives: []string{"FileETag None\nListen 80"}}); err == nil {
		t.Error("Launch accepted a directive of two lines")
	}
}
