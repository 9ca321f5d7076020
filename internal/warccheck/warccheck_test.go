package warccheck

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/warc"
)

// writeJob writes a few exchanges of each kind into dir/warc, over several files.
func writeJob(t *testing.T, dir string) []string {
	t.Helper()
	wdir := filepath.Join(dir, "warc")
	if err := os.MkdirAll(wdir, 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := warc.Create(warc.Options{Dir: wdir, MaxFileSize: 2000,
		Now: func() time.Time { return time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 9 {
		body := strings.Repeat(fmt.Sprintf("<p>page %d</p>\n", i), 1+i%4)
		ex := &warc.Exchange{
			TargetURI: fmt.Sprintf("https://example.com/p/%d?b=2&a=1", i),
			IP:        "192.0.2.1",
			Request:   []byte(fmt.Sprintf("GET /p/%d?b=2&a=1 HTTP/1.1\r\nHost: example.com\r\n\r\n", i)),
			Response: []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s",
				len(body), body)),
		}
		switch i {
		case 3:
			ex.Revisit = true
			ex.Response = []byte("HTTP/1.1 304 Not Modified\r\nETag: \"1\"\r\n\r\n")
			ex.RefersToTargetURI = ex.TargetURI
			ex.RefersToPayloadDigest = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"
		case 5:
			ex.Truncated = "length"
			ex.Response = ex.Response[:len(ex.Response)-3]
		case 6:
			ex.Response = []byte("HTTP/1.1 404 Not Found\r\n\r\n")
		}
		if _, err := w.Write(ex); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(w.Files()) < 2 {
		t.Fatalf("want several files, got %q", w.Files())
	}
	return w.Files()
}

// recorder collects the errors Job reports instead of failing the test.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) has(s string) bool {
	for _, e := range r.errs {
		if strings.Contains(e, s) {
			return true
		}
	}
	return false
}

func TestJobClean(t *testing.T) {
	dir := t.TempDir()
	files := writeJob(t, dir)
	Job(t, dir)

	// The readers see what was written.
	for _, f := range files {
		recs, err := readOurs(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) < 3 || recs[0].Type != "warcinfo" {
			t.Errorf("%s: records %v", f, recs)
		}
	}
	if got, err := readWarcio(files); err == nil {
		for _, f := range files {
			if len(got[f]) < 3 {
				t.Errorf("warcio.js read %d records of %s", len(got[f]), f)
			}
		}
	} else {
		t.Logf("warcio.js: %v", err)
	}
}

func TestJobNothing(t *testing.T) {
	r := &recorder{TB: t}
	Job(r, filepath.Join(t.TempDir(), "missing"))
	Job(r, t.TempDir())
	if len(r.errs) > 0 {
		t.Errorf("errors for a job without WARC files: %q", r.errs)
	}
}

func TestJobIndexProblems(t *testing.T) {
	dir := t.TempDir()
	files := writeJob(t, dir)

	// One index gone, another short of a line, a third pointing elsewhere.
	os.Remove(warc.IndexPath(files[0]))
	cut, err := os.ReadFile(warc.IndexPath(files[1]))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(cut), "\n")
	os.WriteFile(warc.IndexPath(files[1]), []byte(strings.Join(lines[1:], "")), 0o644)
	if len(files) > 2 {
		moved, _ := os.ReadFile(warc.IndexPath(files[2]))
		moved = bytes.Replace(moved, []byte(`"offset":"`), []byte(`"offset":"1`), 1)
		os.WriteFile(warc.IndexPath(files[2]), moved, 0o644)
	}

	r := &recorder{TB: t}
	Job(r, dir)
	for _, want := range []string{"has no index", "lines, want"} {
		if !r.has(want) {
			t.Errorf("no error saying %q in %q", want, r.errs)
		}
	}
	if len(files) > 2 && !r.has("is no response or revisit record's gzip member") {
		t.Errorf("no error about the moved offset in %q", r.errs)
	}
}

// TestJobWrongDigest: a response record whose payload digest is not its
// payload's is caught by each reader.
func TestJobWrongDigest(t *testing.T) {
	dir := t.TempDir()
	files := writeJob(t, dir)
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	members, err := gzipMembers(data)
	if err != nil {
		t.Fatal(err)
	}
	// Members: warcinfo, request, response, ...: change the third's digest.
	var out bytes.Buffer
	for i, m := range members {
		member := data[m[0] : m[0]+m[1]]
		if i == 2 {
			zr, err := gzip.NewReader(bytes.NewReader(member))
			if err != nil {
				t.Fatal(err)
			}
			plain, err := io.ReadAll(zr)
			if err != nil {
				t.Fatal(err)
			}
			at := bytes.Index(plain, []byte("WARC-Payload-Digest: sha1:")) + len("WARC-Payload-Digest: sha1:")
			if at < len("WARC-Payload-Digest: sha1:") || !bytes.Contains(plain, []byte("WARC-Type: response")) {
				t.Fatalf("third record is not a response with a payload digest:\n%s", plain)
			}
			plain[at] = 'A' + (plain[at]-'A'+1)%26
			zw := gzip.NewWriter(&out)
			zw.Write(plain)
			zw.Close()
			continue
		}
		out.Write(member)
	}
	if err := os.WriteFile(files[0], out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// An index that matches the file again.
	os.Remove(warc.IndexPath(files[0]))
	if _, err := warc.Recover(filepath.Dir(files[0])); err != nil {
		t.Fatal(err)
	}

	r := &recorder{TB: t}
	Job(r, dir)
	for _, want := range []string{"our reader computes the payload digest", "gowarc: record 3"} {
		if !r.has(want) {
			t.Errorf("no error saying %q in %q", want, r.errs)
		}
	}
	if _, err := readWarcio(files); err == nil && !r.has("warcio.js computes the payload digest") {
		t.Errorf("warcio.js did not catch the digest: %q", r.errs)
	}
}

func TestAtCleanupOnce(t *testing.T) {
	var inner *testing.T
	t.Run("crawl", func(t *testing.T) {
		inner = t
		dir := t.TempDir()
		AtCleanup(t, dir)
		AtCleanup(t, dir)
		writeJob(t, dir)
		registered.Lock()
		n := 0
		for k := range registered.m {
			if k.t == t {
				n++
			}
		}
		registered.Unlock()
		if n != 1 {
			t.Errorf("%d registrations, want 1", n)
		}
	})
	registered.Lock()
	defer registered.Unlock()
	for k := range registered.m {
		if k.t == inner {
			t.Errorf("registration left after the test ended")
		}
	}
}
