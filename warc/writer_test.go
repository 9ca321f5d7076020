package warc

import (
	"bytes"
	"crypto/sha1"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var testTime = time.Date(2025, 3, 1, 12, 30, 45, 0, time.UTC)

func fixedClock() time.Time { return testTime }

func testExchange(i int) *Exchange {
	uri := fmt.Sprintf("https://example.com/page/%d", i)
	body := strings.Repeat(fmt.Sprintf("<p>page %d</p>\n", i), 1+i%7)
	return &Exchange{
		TargetURI: uri,
		Date:      testTime.Add(time.Duration(i) * time.Second),
		IP:        "192.0.2.7",
		Request: []byte(fmt.Sprintf("GET /page/%d HTTP/1.1\r\nHost: example.com\r\n"+
			"User-Agent: gentlecrawl/0.1\r\nAccept-Encoding: gzip\r\n\r\n", i)),
		Response: []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"+
			"Content-Length: %d\r\n\r\n%s", len(body), body)),
	}
}

func digest(p []byte) string {
	s := sha1.Sum(p)
	return "sha1:" + base32.StdEncoding.EncodeToString(s[:])
}

func readFile(t *testing.T, path string) []*Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var recs []*Record
	for {
		rec, err := r.Next()
		if err != nil {
			if err == io.EOF {
				return recs
			}
			t.Fatalf("%s: %v", path, err)
		}
		recs = append(recs, rec)
	}
}

func newWriter(t *testing.T, opts Options) *Writer {
	t.Helper()
	if opts.Now == nil {
		opts.Now = fixedClock
	}
	w, err := Create(opts)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

var recordIDRE = regexp.MustCompile(`^<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}>$`)

// checkRecord checks the fields every record of ours carries.
func checkRecord(t *testing.T, rec *Record) {
	t.Helper()
	if !recordIDRE.MatchString(rec.Header["WARC-Record-ID"]) {
		t.Errorf("WARC-Record-ID %q is not a v4 urn:uuid", rec.Header["WARC-Record-ID"])
	}
	if got, want := rec.Header["Content-Length"], fmt.Sprint(len(rec.Block)); got != want {
		t.Errorf("Content-Length %s, block has %s bytes", got, want)
	}
	if got, want := rec.Header["WARC-Block-Digest"], digest(rec.Block); got != want {
		t.Errorf("%s record: WARC-Block-Digest %s, recomputed %s", rec.Type, got, want)
	}
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	w := newWriter(t, Options{
		Dir:      dir,
		Software: "gentlecrawl/0.1.0",
		Info:     map[string]string{"robots": "obey", "operator": "ops@example.com", "http-header-user-agent": "gentlecrawl/0.1.0 (+https://example.com/bot)"},
	})
	exs := []*Exchange{testExchange(1), testExchange(2), testExchange(3)}
	exs[1].IP = ""
	exs[1].Date = testTime.Add(1500 * time.Millisecond)
	exs[2].Truncated = "length"
	exs[2].Response = append(exs[2].Response[:len(exs[2].Response)-5:len(exs[2].Response)-5], 0x00, 0xff, '\r', '\n')
	var ids []string
	for _, ex := range exs {
		id, err := w.Write(ex)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	files := w.Files()
	if len(files) != 1 {
		t.Fatalf("Files() = %q, want one file", files)
	}
	name := filepath.Base(files[0])
	if want := "gentlecrawl-20250301123045-00000.warc.gz"; name != want {
		t.Errorf("file name %q, want %q", name, want)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("dir holds %d entries, want just the WARC file and its index", len(entries))
	}

	recs := readFile(t, files[0])
	if len(recs) != 1+2*len(exs) {
		t.Fatalf("read %d records, want %d", len(recs), 1+2*len(exs))
	}
	info := recs[0]
	checkRecord(t, info)
	if info.Type != "warcinfo" || info.Header["WARC-Filename"] != name ||
		info.Header["Content-Type"] != "application/warc-fields" || info.Header["WARC-Date"] != "2025-03-01T12:30:45Z" {
		t.Errorf("warcinfo header %q", info.Header)
	}
	wantInfo := "software: gentlecrawl/0.1.0\r\nformat: WARC File Format 1.1\r\n" +
		"conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n" +
		"http-header-user-agent: gentlecrawl/0.1.0 (+https://example.com/bot)\r\noperator: ops@example.com\r\nrobots: obey\r\n"
	if string(info.Block) != wantInfo {
		t.Errorf("warcinfo block\n%q\nwant\n%q", info.Block, wantInfo)
	}
	infoID := info.Header["WARC-Record-ID"]

	for i, ex := range exs {
		req, resp := recs[1+2*i], recs[2+2*i]
		checkRecord(t, req)
		checkRecord(t, resp)
		if req.Type != "request" || resp.Type != "response" {
			t.Fatalf("exchange %d: types %s, %s", i, req.Type, resp.Type)
		}
		if resp.Header["WARC-Record-ID"] != ids[i] {
			t.Errorf("exchange %d: Write returned %s, response record is %s", i, ids[i], resp.Header["WARC-Record-ID"])
		}
		if req.Header["WARC-Concurrent-To"] != resp.Header["WARC-Record-ID"] ||
			resp.Header["WARC-Concurrent-To"] != req.Header["WARC-Record-ID"] {
			t.Errorf("exchange %d: records not linked by WARC-Concurrent-To", i)
		}
		wantDate := ex.Date.UTC().Format(time.RFC3339Nano)
		for _, rec := range []*Record{req, resp} {
			h := rec.Header
			if h["WARC-Warcinfo-ID"] != infoID || h["WARC-Target-URI"] != ex.TargetURI || h["WARC-Date"] != wantDate {
				t.Errorf("exchange %d %s: header %q", i, rec.Type, h)
			}
			if ip, ok := h["WARC-IP-Address"]; ip != ex.IP || ok != (ex.IP != "") {
				t.Errorf("exchange %d %s: WARC-IP-Address %q, want %q", i, rec.Type, ip, ex.IP)
			}
			want := ex.Truncated
			if rec.Type == "request" {
				want = ""
			}
			if tr := h["WARC-Truncated"]; tr != want {
				t.Errorf("exchange %d %s: WARC-Truncated %q, want %q", i, rec.Type, tr, want)
			}
		}
		if req.Header["Content-Type"] != "application/http;msgtype=request" ||
			resp.Header["Content-Type"] != "application/http;msgtype=response" {
			t.Errorf("exchange %d: Content-Types %q, %q", i, req.Header["Content-Type"], resp.Header["Content-Type"])
		}
		if !bytes.Equal(req.Block, ex.Request) || !bytes.Equal(resp.Block, ex.Response) {
			t.Errorf("exchange %d: blocks differ from what was written", i)
		}
		_, body, _ := bytes.Cut(ex.Response, []byte("\r\n\r\n"))
		if got, want := resp.Header["WARC-Payload-Digest"], digest(body); got != want {
			t.Errorf("exchange %d: WARC-Payload-Digest %s, recomputed %s", i, got, want)
		}
		if _, ok := req.Header["WARC-Payload-Digest"]; ok {
			t.Errorf("exchange %d: request record has a WARC-Payload-Digest", i)
		}
	}
	if got := recs[3].Header["WARC-Date"]; got != "2025-03-01T12:30:46.5Z" {
		t.Errorf("sub-second WARC-Date %q", got)
	}
}

func TestRevisit(t *testing.T) {
	dir := t.TempDir()
	w := newWriter(t, Options{Dir: dir})
	first := testExchange(1)
	firstID, err := w.Write(first)
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := bytes.Cut(first.Response, []byte("\r\n\r\n"))
	rv := &Exchange{
		TargetURI:             first.TargetURI,
		Date:                  testTime.Add(24 * time.Hour),
		Request:               []byte("GET /page/1 HTTP/1.1\r\nHost: example.com\r\nIf-None-Match: \"abc\"\r\n\r\n"),
		Response:              []byte("HTTP/1.1 304 Not Modified\r\nETag: \"abc\"\r\n\r\n"),
		Revisit:               true,
		RefersTo:              firstID,
		RefersToTargetURI:     first.TargetURI,
		RefersToDate:          first.Date,
		RefersToPayloadDigest: digest(body),
	}
	rvID, err := w.Write(rv)
	if err != nil {
		t.Fatal(err)
	}
	// A revisit whose earlier capture is unknown carries no references.
	bare := *rv
	bare.RefersTo, bare.RefersToTargetURI, bare.RefersToDate, bare.RefersToPayloadDigest = "", "", time.Time{}, ""
	if _, err := w.Write(&bare); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs := readFile(t, w.Files()[0])
	if len(recs) != 7 {
		t.Fatalf("read %d records, want 7", len(recs))
	}
	got := recs[4]
	checkRecord(t, got)
	want := map[string]string{
		"WARC-Type":                 "revisit",
		"WARC-Record-ID":            rvID,
		"WARC-Profile":              "http://netpreserve.org/warc/1.1/revisit/server-not-modified",
		"WARC-Refers-To":            firstID,
		"WARC-Refers-To-Target-URI": first.TargetURI,
		"WARC-Refers-To-Date":       "2025-03-01T12:30:46Z",
		"WARC-Payload-Digest":       recs[2].Header["WARC-Payload-Digest"],
		"WARC-Concurrent-To":        recs[3].Header["WARC-Record-ID"],
		"Content-Type":              "application/http;msgtype=response",
		"WARC-Date":                 "2025-03-02T12:30:45Z",
	}
	for k, v := range want {
		if got.Header[k] != v {
			t.Errorf("revisit %s = %q, want %q", k, got.Header[k], v)
		}
	}
	if !bytes.Equal(got.Block, rv.Response) {
		t.Errorf("revisit block %q, want %q", got.Block, rv.Response)
	}
	for _, k := range []string{"WARC-Refers-To", "WARC-Refers-To-Target-URI", "WARC-Refers-To-Date", "WARC-Payload-Digest"} {
		if _, ok := recs[6].Header[k]; ok {
			t.Errorf("revisit without references has %s", k)
		}
	}
}

var serialRE = regexp.MustCompile(`-(\d{5})\.warc\.gz$`)

func serialOf(t *testing.T, path string) string {
	t.Helper()
	m := serialRE.FindStringSubmatch(path)
	if m == nil {
		t.Fatalf("%s: no serial", path)
	}
	return m[1]
}

// checkFile checks the structure of one of our files: a warcinfo record, then pairs
// of request and response records linked to each other and to the warcinfo record.
// It returns the response record IDs.
func checkFile(t *testing.T, path string) []string {
	t.Helper()
	recs := readFile(t, path)
	if len(recs) == 0 || recs[0].Type != "warcinfo" {
		t.Fatalf("%s does not start with a warcinfo record", path)
	}
	if recs[0].Header["WARC-Filename"] != strings.TrimSuffix(filepath.Base(path), OpenSuffix) {
		t.Errorf("%s: WARC-Filename %q", path, recs[0].Header["WARC-Filename"])
	}
	if len(recs)%2 != 1 {
		t.Fatalf("%s: %d records, an exchange was split", path, len(recs))
	}
	var ids []string
	for i := 1; i < len(recs); i += 2 {
		req, resp := recs[i], recs[i+1]
		if req.Type != "request" || resp.Type != "response" ||
			req.Header["WARC-Concurrent-To"] != resp.Header["WARC-Record-ID"] ||
			resp.Header["WARC-Concurrent-To"] != req.Header["WARC-Record-ID"] ||
			req.Header["WARC-Target-URI"] != resp.Header["WARC-Target-URI"] {
			t.Fatalf("%s: records %d and %d are not one exchange", path, i, i+1)
		}
		for _, rec := range []*Record{req, resp} {
			if rec.Header["WARC-Warcinfo-ID"] != recs[0].Header["WARC-Record-ID"] {
				t.Fatalf("%s: record %d names warcinfo %s, file has %s", path, i, rec.Header["WARC-Warcinfo-ID"], recs[0].Header["WARC-Record-ID"])
			}
			checkRecord(t, rec)
		}
		ids = append(ids, resp.Header["WARC-Record-ID"])
	}
	return ids
}

func TestRotation(t *testing.T) {
	dir := t.TempDir()
	// Each exchange compresses to a few hundred bytes, so files hold a few each.
	w := newWriter(t, Options{Dir: dir, Prefix: "job", MaxFileSize: 1500})
	var ids []string
	for i := range 20 {
		id, err := w.Write(testExchange(i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		for _, f := range w.Files()[:len(w.Files())-1] {
			if strings.HasSuffix(f, OpenSuffix) {
				t.Fatalf("after rotation, %s still open", f)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := w.Files()
	if len(files) < 3 {
		t.Fatalf("only %d files for 20 exchanges with a 1500-byte limit", len(files))
	}
	var got []string
	for i, f := range files {
		if strings.HasSuffix(f, OpenSuffix) {
			t.Errorf("%s not renamed", f)
		}
		if want := fmt.Sprintf("%05d", i); serialOf(t, f) != want {
			t.Errorf("file %d has serial %s, want %s", i, serialOf(t, f), want)
		}
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		fileIDs := checkFile(t, f)
		if len(fileIDs) == 0 {
			t.Errorf("%s holds no exchange", f)
		}
		// Rotation happens after the file passes the limit, so every file but the
		// last is over it, and under it before its last exchange.
		if i < len(files)-1 && st.Size() < 1500 {
			t.Errorf("%s closed at %d bytes, below the limit", f, st.Size())
		}
		got = append(got, fileIDs...)
	}
	if !slices.Equal(got, ids) {
		t.Errorf("records in files do not match the IDs Write returned, in order")
	}

	// A resumed crawl, in the same second, with a file the crash left open:
	// numbering continues after the highest serial and nothing is overwritten.
	before := dirSnapshot(t, dir)
	stale := filepath.Join(dir, "job-20250301123045-00042.warc.gz"+OpenSuffix)
	if err := os.WriteFile(stale, []byte("left by a crash"), 0o644); err != nil {
		t.Fatal(err)
	}
	w2 := newWriter(t, Options{Dir: dir, Prefix: "job", MaxFileSize: 1})
	for i := range 2 {
		if _, err := w2.Write(testExchange(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
	if f := w2.Files(); len(f) != 2 || serialOf(t, f[0]) != "00043" || serialOf(t, f[1]) != "00044" {
		t.Errorf("resumed writer files %q, want serials 00043 and 00044", f)
	}
	after := dirSnapshot(t, dir)
	for name, data := range before {
		if !bytes.Equal(after[name], data) {
			t.Errorf("%s changed by the resumed writer", name)
		}
	}
	if b, _ := os.ReadFile(stale); string(b) != "left by a crash" {
		t.Errorf("stale .open file touched")
	}
}

func dirSnapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = b
	}
	return m
}

func TestConcurrentWrites(t *testing.T) {
	dir := t.TempDir()
	w := newWriter(t, Options{Dir: dir, MaxFileSize: 4 << 10})
	const goroutines, each = 8, 40
	var (
		mu  sync.Mutex
		ids = map[string]bool{}
		wg  sync.WaitGroup
	)
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				id, err := w.Write(testExchange(g*each + i))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				ids[id] = true
				mu.Unlock()
				if i%10 == 0 {
					if err := w.Sync(); err != nil {
						t.Error(err)
					}
					_ = w.Files()
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(ids) != goroutines*each {
		t.Fatalf("%d distinct record IDs for %d writes", len(ids), goroutines*each)
	}
	n := 0
	for _, f := range w.Files() {
		for _, id := range checkFile(t, f) {
			if !ids[id] {
				t.Errorf("%s: response %s was not returned by Write", f, id)
			}
			n++
		}
	}
	if n != goroutines*each {
		t.Errorf("files hold %d exchanges, want %d", n, goroutines*each)
	}
}

func TestCreateErrors(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"empty dir", Options{}, "Options.Dir is empty"},
		{"missing dir", Options{Dir: filepath.Join(dir, "missing")}, "no such file or directory"},
		{"not a dir", Options{Dir: notDir}, "is not a directory"},
		{"prefix with slash", Options{Dir: dir, Prefix: "a/b"}, "invalid file name prefix"},
		{"bad info name", Options{Dir: dir, Info: map[string]string{"a b": "x"}}, "invalid warcinfo field name"},
		{"reserved info name", Options{Dir: dir, Info: map[string]string{"Software": "x"}}, "set by the writer"},
		{"info value with newline", Options{Dir: dir, Info: map[string]string{"operator": "a\r\nb: c"}}, "control character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := Create(tt.opts)
			if err == nil {
				w.Close()
				t.Fatal("Create succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "warc: ") {
				t.Errorf("error %q, want one containing %q", err, tt.want)
			}
		})
	}
	t.Run("missing dir unwraps", func(t *testing.T) {
		_, err := Create(Options{Dir: filepath.Join(dir, "missing")})
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("error %v does not wrap fs.ErrNotExist", err)
		}
	})
	t.Run("unwritable dir", func(t *testing.T) {
		ro := filepath.Join(dir, "ro")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		if f, err := os.CreateTemp(ro, "x"); err == nil {
			f.Close()
			t.Skip("running with privileges that ignore directory permissions")
		}
		_, err := Create(Options{Dir: ro})
		if err == nil || !strings.Contains(err.Error(), "not writable") || !errors.Is(err, fs.ErrPermission) {
			t.Errorf("error %v, want a 'not writable' permission error", err)
		}
	})
}

func TestWriteErrors(t *testing.T) {
	w := newWriter(t, Options{Dir: t.TempDir()})
	bad := []func(*Exchange){
		func(ex *Exchange) { ex.TargetURI = "" },
		func(ex *Exchange) { ex.TargetURI = "https://example.com/\r\nWARC-Type: resource" },
		func(ex *Exchange) { ex.TargetURI = "https://example.com/" + strings.Repeat("a", MaxHeaderSize) },
		func(ex *Exchange) { ex.Request = nil },
		func(ex *Exchange) { ex.Response = nil },
		func(ex *Exchange) { ex.IP = "example.com" },
		func(ex *Exchange) { ex.Truncated = "yes" },
		func(ex *Exchange) { ex.Revisit, ex.RefersToTargetURI = true, "a\nb" },
	}
	for i, mutate := range bad {
		ex := testExchange(i)
		mutate(ex)
		if _, err := w.Write(ex); !errors.Is(err, ErrInvalidExchange) {
			t.Errorf("case %d: Write error %v, want ErrInvalidExchange", i, err)
		}
	}
	if len(w.Files()) != 0 {
		t.Errorf("invalid exchanges created files %q", w.Files())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := w.Write(testExchange(0)); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close: %v, want ErrClosed", err)
	}
	if err := w.Flush(); !errors.Is(err, ErrClosed) {
		t.Errorf("Flush after Close: %v, want ErrClosed", err)
	}
	if err := w.Sync(); !errors.Is(err, ErrClosed) {
		t.Errorf("Sync after Close: %v, want ErrClosed", err)
	}
}

func TestOpenFileIsReadable(t *testing.T) {
	// Every Write reaches the OS: a reader sees complete records in the .open file
	// while the writer is still running.
	w := newWriter(t, Options{Dir: t.TempDir()})
	defer w.Close()
	for i := range 3 {
		if _, err := w.Write(testExchange(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	files := w.Files()
	if len(files) != 1 || !strings.HasSuffix(files[0], ".warc.gz"+OpenSuffix) {
		t.Fatalf("Files() = %q, want one .open file", files)
	}
	if got := len(checkFile(t, files[0])); got != 3 {
		t.Errorf("open file holds %d exchanges, want 3", got)
	}
}

func TestRecordID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := newRecordID()
		if !recordIDRE.MatchString(id) || seen[id] {
			t.Fatalf("bad or repeated record ID %q", id)
		}
		seen[id] = true
	}
}

func TestPayloadDigestEdges(t *testing.T) {
	tests := []struct {
		name, response string
		body           string // "" with noDigest means no WARC-Payload-Digest
		noDigest       bool
	}{
		{"empty body", "HTTP/1.1 204 No Content\r\nServer: x\r\n\r\n", "", false},
		{"bare LF header", "HTTP/1.1 200 OK\nContent-Type: text/plain\n\nbody\r\n\r\nmore", "body\r\n\r\nmore", false},
		{"cut inside the header", "HTTP/1.1 200 OK\r\nContent-Type: te", "", true},
	}
	w := newWriter(t, Options{Dir: t.TempDir()})
	for _, tt := range tests {
		ex := testExchange(0)
		ex.Response = []byte(tt.response)
		ex.Truncated = "disconnect"
		if _, err := w.Write(ex); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs := readFile(t, w.Files()[0])
	for i, tt := range tests {
		resp := recs[2+2*i]
		got, ok := resp.Header["WARC-Payload-Digest"]
		switch {
		case tt.noDigest && ok:
			t.Errorf("%s: WARC-Payload-Digest %s on a response without a complete header", tt.name, got)
		case !tt.noDigest && got != digest([]byte(tt.body)):
			t.Errorf("%s: WARC-Payload-Digest %s, want digest of %q", tt.name, got, tt.body)
		}
		checkRecord(t, resp)
	}
}
