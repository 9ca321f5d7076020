package warc

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// cdxjLine is one parsed line of an index.
type cdxjLine struct {
	key, timestamp string
	fields         map[string]string
}

// readIndex reads the index of the WARC file at warcPath and checks its form: each
// line a key, a 14-digit timestamp and a JSON object whose fields come in pywb's
// order; the lines sorted.
func readIndex(t *testing.T, warcPath string) []cdxjLine {
	t.Helper()
	data, err := os.ReadFile(IndexPath(warcPath))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) == 0 {
		return nil
	}
	if !bytes.HasSuffix(data, []byte("\n")) {
		t.Errorf("%s does not end in a line end", IndexPath(warcPath))
	}
	raw := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if !slices.IsSorted(raw) {
		t.Errorf("%s: lines not sorted:\n%s", IndexPath(warcPath), data)
	}
	var lines []cdxjLine
	for _, l := range raw {
		key, rest, _ := strings.Cut(l, " ")
		ts, js, _ := strings.Cut(rest, " ")
		if len(ts) != 14 || strings.Trim(ts, "0123456789") != "" {
			t.Errorf("line %q: timestamp %q", l, ts)
		}
		if !strings.HasPrefix(js, `{"url":`) || !strings.Contains(js, `,"filename":`) {
			t.Errorf("line %q: JSON fields not in pywb's order", l)
		}
		var fields map[string]string
		if err := json.Unmarshal([]byte(js), &fields); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		for _, f := range []string{"url", "mime", "status", "digest", "length", "offset", "filename"} {
			if _, ok := fields[f]; !ok {
				t.Errorf("line %q has no %s", l, f)
			}
		}
		lines = append(lines, cdxjLine{key, ts, fields})
	}
	return lines
}

// checkIndex checks the index of the WARC file at path against the file: one line
// per response and revisit record, each pointing at the gzip member that holds its
// record, with that record's URI, date, digest, type and HTTP status and type. It
// returns the lines.
func checkIndex(t *testing.T, path string) []cdxjLine {
	t.Helper()
	lines := readIndex(t, path)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	good, _ := completeMembers(bytes.NewReader(data))
	for _, rec := range readAllBytes(t, data[:good]) {
		if rec.Type == typeResponse || rec.Type == typeRevisit {
			want++
		}
	}
	if len(lines) != want {
		t.Errorf("%s: %d index lines, want %d (response and revisit records)", path, len(lines), want)
	}
	seen := map[int64]bool{}
	for _, l := range lines {
		f := l.fields
		off, err1 := strconv.ParseInt(f["offset"], 10, 64)
		n, err2 := strconv.ParseInt(f["length"], 10, 64)
		if err1 != nil || err2 != nil || off < 0 || n <= 0 || off+n > int64(len(data)) {
			t.Errorf("%s: line %v: offset and length outside the file (%d bytes)", path, f, len(data))
			continue
		}
		if seen[off] {
			t.Errorf("%s: two lines for offset %d", path, off)
		}
		seen[off] = true
		if f["filename"] != filepath.Base(path) {
			t.Errorf("filename %q, want %q", f["filename"], filepath.Base(path))
		}
		// Exactly one gzip member, read with the standard library.
		member := bytes.NewReader(data[off : off+n])
		zr, err := gzip.NewReader(member)
		if err != nil {
			t.Errorf("%s: offset %d: %v", path, off, err)
			continue
		}
		zr.Multistream(false)
		plain, err := io.ReadAll(zr)
		if err != nil || member.Len() != 0 {
			t.Errorf("%s: offset %d length %d is not one whole gzip member (%v, %d bytes left)", path, off, n, err, member.Len())
			continue
		}
		recs := readAllBytes(t, plain)
		if len(recs) != 1 {
			t.Errorf("%s: offset %d: %d records in the member", path, off, len(recs))
			continue
		}
		rec := recs[0]
		uri := rec.Get("WARC-Target-URI")
		wantMime, wantStatus := httpStatusAndTypeForTest(rec.Block)
		switch rec.Type {
		case typeResponse:
		case typeRevisit:
			wantMime = "warc/revisit"
		default:
			t.Errorf("%s: offset %d: a %s record indexed", path, off, rec.Type)
		}
		wantDigest := strings.TrimPrefix(rec.Get("WARC-Payload-Digest"), "sha1:")
		if wantDigest == "" {
			wantDigest = "-"
		}
		if f["url"] != uri || l.key != SURT(uri) || l.timestamp != cdxTimestamp(rec.Get("WARC-Date")) ||
			f["digest"] != wantDigest || f["mime"] != wantMime || f["status"] != wantStatus {
			t.Errorf("%s: line %s %s %v\ndoes not describe the record at %d: %s %s %s digest %q, mime %q, status %q",
				path, l.key, l.timestamp, f, off, rec.Type, uri, rec.Get("WARC-Date"), wantDigest, wantMime, wantStatus)
		}
	}
	return lines
}

// httpStatusAndTypeForTest finds the status and media type of a response the way
// a reader of the index would expect, independently of httpStatusAndType.
func httpStatusAndTypeForTest(msg []byte) (mime, status string) {
	head, _, _ := strings.Cut(strings.ReplaceAll(string(msg), "\r\n", "\n"), "\n\n")
	lines := strings.Split(head, "\n")
	status, mime = "-", "unk"
	if f := strings.Fields(lines[0]); len(f) >= 2 && strings.HasPrefix(f[0], "HTTP/") && len(f[1]) == 3 {
		if _, err := strconv.Atoi(f[1]); err == nil {
			status = f[1]
		}
	}
	for _, l := range lines[1:] {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.ToLower(k) == "content-type" {
			v, _, _ = strings.Cut(v, ";")
			if v = strings.ToLower(strings.TrimSpace(v)); v != "" {
				mime = v
			}
			break
		}
	}
	return mime, status
}

// indexTestExchanges are exchanges of every kind an index line distinguishes.
func indexTestExchanges() []*Exchange {
	var exs []*Exchange
	for i := range 12 {
		ex := testExchange(i)
		switch i {
		case 1:
			ex.TargetURI = "https://WWW.Example.com:443/Search?q=b&a=1"
		case 2:
			ex.Revisit = true
			ex.Response = []byte("HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n")
			ex.RefersToTargetURI = ex.TargetURI
			ex.RefersToPayloadDigest = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"
		case 3:
			ex.Response = []byte("HTTP/1.1 404 Not Found\r\nContent-Type: Text/Plain; charset=UTF-8\r\n\r\ngone\n")
		case 4:
			ex.Response = []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi") // no Content-Type
		case 5:
			ex.Truncated = "length"
			ex.Response = ex.Response[:len(ex.Response)-4]
		case 6:
			ex.Response = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n") // no end of header
		case 7:
			ex.Revisit = true // without the earlier capture's digest
			ex.Response = []byte("HTTP/1.1 304 Not Modified\r\n\r\n")
		case 8:
			ex.TargetURI = "http://example.com/zz" // twice, at another time; sorts after the next
			exs[0].TargetURI = "http://example.com/zz"
		case 9:
			ex.Response = []byte("HTTP/1.0 301 Moved Permanently\nLocation: /\nContent-Type: text/html\n\n<a href=/>/</a>")
		}
		exs = append(exs, ex)
	}
	return exs
}

// TestIndexMatchesRecords: every file the writer closes, at rotation and at Close,
// gets a sorted index with one line per response and revisit record that points at
// the record's gzip member; request and warcinfo records are not indexed.
func TestIndexMatchesRecords(t *testing.T) {
	dir := t.TempDir()
	w := newWriter(t, Options{Dir: dir, MaxFileSize: 1500})
	exs := indexTestExchanges()
	for _, ex := range exs {
		if _, err := w.Write(ex); err != nil {
			t.Fatal(err)
		}
		// A file closed at rotation has its index at once.
		for _, f := range w.Files()[:len(w.Files())-1] {
			if _, err := os.Stat(IndexPath(f)); err != nil {
				t.Fatalf("rotated file without an index: %v", err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(w.Files()) < 3 {
		t.Fatalf("want several files, got %q", w.Files())
	}
	byURL := map[string][]cdxjLine{}
	total := 0
	for _, f := range w.Files() {
		for _, l := range checkIndex(t, f) {
			byURL[l.fields["url"]] = append(byURL[l.fields["url"]], l)
			total++
		}
	}
	if total != len(exs) {
		t.Errorf("%d index lines in all, want %d (one per exchange)", total, len(exs))
	}
	if entries, _ := filepath.Glob(filepath.Join(dir, ".*")); len(entries) > 0 {
		t.Errorf("temporary files left: %q", entries)
	}

	// The values of a few lines, spelled out.
	one := func(uri string) map[string]string {
		t.Helper()
		if len(byURL[uri]) != 1 {
			t.Fatalf("%d lines for %s, want 1", len(byURL[uri]), uri)
		}
		return byURL[uri][0].fields
	}
	body := func(ex *Exchange) []byte { b, _ := httpBody(ex.Response); return b }
	checks := []struct {
		uri, key, mime, status, digest string
	}{
		{exs[1].TargetURI, "com,example)/search?a=1&q=b", "text/html", "200", strings.TrimPrefix(digest(body(exs[1])), "sha1:")},
		{exs[2].TargetURI, "com,example)/page/2", "warc/revisit", "304", "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"},
		{exs[3].TargetURI, "com,example)/page/3", "text/plain", "404", strings.TrimPrefix(digest([]byte("gone\n")), "sha1:")},
		{exs[4].TargetURI, "com,example)/page/4", "unk", "200", strings.TrimPrefix(digest([]byte("hi")), "sha1:")},
		{exs[6].TargetURI, "com,example)/page/6", "text/html", "200", "-"},
		{exs[7].TargetURI, "com,example)/page/7", "warc/revisit", "304", "-"},
		{exs[9].TargetURI, "com,example)/page/9", "text/html", "301", strings.TrimPrefix(digest([]byte("<a href=/>/</a>")), "sha1:")},
	}
	for _, c := range checks {
		f := one(c.uri)
		if SURT(c.uri) != c.key || f["mime"] != c.mime || f["status"] != c.status || f["digest"] != c.digest {
			t.Errorf("%s: key %s, fields %v; want key %s, mime %s, status %s, digest %s",
				c.uri, SURT(c.uri), f, c.key, c.mime, c.status, c.digest)
		}
	}
	if got := byURL["http://example.com/zz"]; len(got) != 2 || got[0].timestamp == got[1].timestamp {
		t.Errorf("a URI fetched twice: lines %v, want two at different times", got)
	}
}

// TestIndexRebuiltByRecover: an index made by reading a file back is the one the
// writer wrote, byte for byte.
func TestIndexRebuiltByRecover(t *testing.T) {
	dir := t.TempDir()
	w := newWriter(t, Options{Dir: dir, MaxFileSize: 2000})
	for _, ex := range indexTestExchanges() {
		if _, err := w.Write(ex); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	written := map[string][]byte{}
	for _, f := range w.Files() {
		b, err := os.ReadFile(IndexPath(f))
		if err != nil {
			t.Fatal(err)
		}
		written[f] = b
		os.Remove(IndexPath(f))
	}
	// And a temporary file of an index a crash interrupted.
	stale := filepath.Join(dir, "."+filepath.Base(IndexPath(w.Files()[0]))+".tmp-123")
	if err := os.WriteFile(stale, []byte("com,example)/ 2025"), 0o644); err != nil {
		t.Fatal(err)
	}
	done, err := Recover(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != len(w.Files()) {
		t.Errorf("Recover reported %q, want one line per file", done)
	}
	for f, want := range written {
		got, err := os.ReadFile(IndexPath(f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: index made by Recover differs from the writer's:\n%s\nwant\n%s", f, got, want)
		}
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("temporary index file left: %v", err)
	}
	// Files with an index are left alone.
	if done, err := Recover(dir); err != nil || len(done) != 0 {
		t.Errorf("second Recover: %q, %v", done, err)
	}
}

// TestIndexAfterKill: a crawl killed with SIGKILL leaves its last file open,
// without an index, and cut inside a record. When the job is opened again,
// Recover closes it out and indexes its complete records.
func TestIndexAfterKill(t *testing.T) {
	const n = 5
	data, name := crashedFile(t, n)
	ends := memberEnds(t, data)
	// Inside the last response record: the last exchange's request is whole.
	cut := ends[len(ends)-2] + (ends[len(ends)-1]-ends[len(ends)-2])/2
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), data[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	done, err := Recover(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 1 || !strings.Contains(done[0], "indexed: 4 lines") {
		t.Errorf("Recover reported %q, want one file closed out and indexed with 4 lines", done)
	}
	final := filepath.Join(dir, strings.TrimSuffix(name, OpenSuffix))
	if lines := checkIndex(t, final); len(lines) != n-1 {
		t.Errorf("%d lines, want %d: the last response was cut", len(lines), n-1)
	}

	// A closed file with a cut tail and no index (copied from elsewhere, say):
	// indexed up to the cut, and not changed.
	dir = t.TempDir()
	closed := filepath.Join(dir, strings.TrimSuffix(name, OpenSuffix))
	if err := os.WriteFile(closed, data[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	done, err = Recover(dir)
	if err != nil {
		t.Fatal(err)
	}
	wantMsg := fmt.Sprintf("the last %d of %d bytes not indexed", cut-ends[len(ends)-2], cut)
	if len(done) != 1 || !strings.Contains(done[0], wantMsg) {
		t.Errorf("Recover reported %q, want a line saying %q", done, wantMsg)
	}
	if got, _ := os.ReadFile(closed); !bytes.Equal(got, data[:cut]) {
		t.Errorf("indexing changed the WARC file")
	}
	if lines := checkIndex(t, closed); len(lines) != n-1 {
		t.Errorf("%d lines, want %d", len(lines), n-1)
	}
}

// TestIndexNoResponses: a file without response or revisit records gets an empty
// index, so that it is not read again at every start.
func TestIndexNoResponses(t *testing.T) {
	data, name := crashedFile(t, 1)
	ends := memberEnds(t, data)
	dir := t.TempDir()
	// warcinfo and request records, the response cut off by the crash.
	if err := os.WriteFile(filepath.Join(dir, name), data[:ends[1]+10], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Recover(dir); err != nil {
		t.Fatal(err)
	}
	final := filepath.Join(dir, strings.TrimSuffix(name, OpenSuffix))
	if recs := readFile(t, final); len(recs) != 2 {
		t.Fatalf("%d records recovered, want 2", len(recs))
	}
	st, err := os.Stat(IndexPath(final))
	if err != nil || st.Size() != 0 {
		t.Errorf("index of a file without responses: %v, %v; want an empty file", st, err)
	}
	checkIndex(t, final)
}

// TestIndexCloseWithoutWrites: a writer that wrote nothing leaves nothing.
func TestIndexCloseWithoutWrites(t *testing.T) {
	dir := t.TempDir()
	w := newWriter(t, Options{Dir: dir})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("dir holds %d entries", len(entries))
	}
}

func TestSURT(t *testing.T) {
	tests := []struct{ uri, want string }{
		{"http://example.com/", "com,example)/"},
		{"http://example.com", "com,example)/"},
		{"https://example.com/a?b=1&c=2", "com,example)/a?b=1&c=2"},
		// Query arguments sorted in byte order, whole "name=value".
		{"https://example.com/a?c=2&b=1", "com,example)/a?b=1&c=2"},
		{"http://example.com/?b=1&a=2&a=1&A=0", "com,example)/?a=0&a=1&a=2&b=1"},
		{"http://example.com?b=2&a=1", "com,example)/?a=1&b=2"},
		{"http://example.com/p?", "com,example)/p"},
		// Case: all of it, as pywb and warcio look keys up.
		{"HTTP://WWW.EXAMPLE.COM/Path/To?Q=V", "com,example)/path/to?q=v"},
		// www. and wwwN. dropped, but not a host that only starts with www.
		{"http://www.example.com/", "com,example)/"},
		{"http://www2.example.com/", "com,example)/"},
		{"http://wwwexample.com/", "com,wwwexample)/"},
		{"http://www/", "www)/"},
		{"http://sub.www.example.com/", "com,example,www,sub)/"},
		// Ports: the scheme's default dropped, others kept.
		{"http://example.com:80/x", "com,example)/x"},
		{"https://example.com:443/", "com,example)/"},
		{"http://example.com:443/", "com,example:443)/"},
		{"https://example.com:80/", "com,example:80)/"},
		{"http://www.example.com:8080/", "com,example:8080)/"},
		{"http://example.com:/", "com,example)/"},
		// Addresses.
		{"http://127.0.0.1:8080/a", "1,0,0,127:8080)/a"},
		{"http://[2001:DB8::1]:8080/x", "[2001:db8::1]:8080)/x"},
		{"http://[::1]/", "[::1])/"},
		// User information and fragment dropped; a final dot on the host too.
		{"http://user:pw@Example.com:8080/p#frag", "com,example:8080)/p"},
		{"http://example.com./", "com,example)/"},
		// Percent-encoding and IDNs left as they are (lowercased).
		{"http://example.com/caf%C3%A9?q=%E2%82%AC", "com,example)/caf%c3%a9?q=%e2%82%ac"},
		{"http://Bücher.example/", "example,bücher)/"},
		{"http://xn--bcher-kva.example/", "example,xn--bcher-kva)/"},
		// A space would end the key.
		{"http://example.com/a b?x=1 2", "com,example)/a%20b?x=1%202"},
		// Not a URL with an authority: only lowercased.
		{"urn:X-Foo:bar", "urn:x-foo:bar"},
	}
	for _, tt := range tests {
		if got := SURT(tt.uri); got != tt.want {
			t.Errorf("SURT(%q) = %q, want %q", tt.uri, got, tt.want)
		}
	}
}

func TestHTTPStatusAndType(t *testing.T) {
	tests := []struct{ msg, status, mime string }{
		{"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n", "200", "text/html"},
		{"HTTP/1.1 404 Not Found\r\ncontent-type:  Application/JSON ; charset=utf-8\r\n\r\n{}", "404", "application/json"},
		{"HTTP/1.0 302\nLocation: /\n\n", "302", "unk"},
		{"HTTP/1.1 200 OK\r\n\r\nContent-Type: text/html\r\n", "200", "unk"}, // in the body
		{"HTTP/1.1 2000 OK\r\nContent-Type: ;x\r\n\r\n", "-", "unk"},
		{"garbage", "-", "unk"},
		{"", "-", "unk"},
	}
	for _, tt := range tests {
		status, mime := httpStatusAndType([]byte(tt.msg))
		if status != tt.status || mime != tt.mime {
			t.Errorf("%q: status %q, mime %q; want %q, %q", tt.msg, status, mime, tt.status, tt.mime)
		}
	}
	for date, want := range map[string]string{
		"2025-03-01T12:30:45Z":        "20250301123045",
		"2025-03-01T12:30:45.123456Z": "20250301123045",
		"2025-03-01T13:30:45+01:00":   "20250301123045",
		"2025-03-01":                  "20250301",
	} {
		if got := cdxTimestamp(date); got != want {
			t.Errorf("cdxTimestamp(%q) = %q, want %q", date, got, want)
		}
	}
}

// TestIndexSpilled: past maxIndexEntries the writer spills sorted runs and
// merges them when the file closes. The index is the same as one made in
// memory (by Recover), and no run file is left.
func TestIndexSpilled(t *testing.T) {
	defer func(n int) { maxIndexEntries = n }(maxIndexEntries)
	maxIndexEntries = 3
	dir := t.TempDir()
	w := newWriter(t, Options{Dir: dir})
	exs := indexTestExchanges()
	for range 4 {
		for _, ex := range exs {
			if _, err := w.Write(ex); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(w.Files()) != 1 {
		t.Fatalf("%d files", len(w.Files()))
	}
	f := w.Files()[0]
	spilled, err := os.ReadFile(IndexPath(f))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(spilled, []byte("\n")); n < 2*maxIndexEntries {
		t.Fatalf("%d index lines: the test does not spill", n)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), indexTempMarker) {
			t.Errorf("run file left: %s", e.Name())
		}
	}
	checkIndex(t, f)
	os.Remove(IndexPath(f))
	maxIndexEntries = 1 << 16
	if _, err := Recover(dir); err != nil {
		t.Fatal(err)
	}
	inMemory, _ := os.ReadFile(IndexPath(f))
	if !bytes.Equal(spilled, inMemory) {
		t.Errorf("spilled and merged index differs from the one made in memory:\n%s\nwant\n%s", spilled, inMemory)
	}
}
