package export

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/gentlecrawl/gentlecrawl/warc"
)

// result is all an export of some files gives: the output, byte for byte,
// each file's error, its ReadErrors, and the stats.
type result struct {
	out   []byte
	errs  []string
	reads []string // File, Offset, Record of each ReadError
	stats Stats
}

func exportFiles(t *testing.T, files []string, opts Options) result {
	t.Helper()
	var out bytes.Buffer
	e := New(&out, opts)
	var r result
	for _, f := range files {
		err := e.File(t.Context(), f)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		r.errs = append(r.errs, msg)
		for _, re := range readErrors(err) {
			r.reads = append(r.reads, fmt.Sprintf("%s %d %d", filepath.Base(re.File), re.Offset, re.Record))
		}
		if e.free != nil && len(e.free) != 2*e.opts.Workers {
			t.Fatalf("%s: %d batches back after File, want %d", f, len(e.free), 2*e.opts.Workers)
		}
	}
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	r.out, r.stats = out.Bytes(), e.Stats()
	return r
}

// readErrors returns the ReadErrors in err, a joined error.
func readErrors(err error) []*ReadError {
	var re *ReadError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &re) && re == err:
		return []*ReadError{re}
	}
	var all []*ReadError
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			all = append(all, readErrors(e)...)
		}
	}
	return all
}

// randomText is n bytes that do not compress.
func randomText(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[r.IntN(len(letters))]
	}
	return b
}

// splitMembers returns the decompressed content of each gzip member of a
// file.
func splitMembers(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := bytes.NewReader(data)
	var zr gzip.Reader
	var parts [][]byte
	for {
		if err := zr.Reset(r); err == io.EOF {
			return parts
		} else if err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false)
		p, err := io.ReadAll(&zr)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
}

// gzipParts writes a file of gzip members at the level, one per group of
// per parts (all of them in one when per is 0).
func gzipParts(t *testing.T, path string, level, per int, parts [][]byte) {
	t.Helper()
	if per == 0 {
		per = len(parts)
	}
	var b bytes.Buffer
	for chunk := range slices.Chunk(parts, per) {
		zw, err := gzip.NewWriterLevel(&b, level)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range chunk {
			zw.Write(p)
		}
		zw.Close()
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// mixedFiles writes WARC files of every shape the export meets, whole and
// damaged, and returns them. maxRecord is the Options.MaxRecordSize to
// read them with.
func mixedFiles(t *testing.T) (files []string, maxRecord int64) {
	t.Helper()
	maxRecord = 400 << 10
	var exs []*warc.Exchange
	for i := range 150 {
		exs = append(exs, sitePage(t, i))
		switch i % 25 {
		case 7: // larger than a batch, even compressed
			body := append([]byte("<title>big</title><!--"), randomText(uint64(i), 300<<10)...)
			exs = append(exs, exchange(fmt.Sprintf("http://site.test/big/%d", i), "200 OK", []string{"Content-Type: text/html"}, body))
		case 13: // above MaxRecordSize, and larger than a batch compressed
			exs = append(exs, exchange(fmt.Sprintf("http://site.test/huge/%d", i), "200 OK", []string{"Content-Type: text/plain"}, randomText(uint64(i), 420<<10)))
		case 17: // above MaxRecordSize, but small compressed
			exs = append(exs, exchange(fmt.Sprintf("http://site.test/zeros/%d", i), "200 OK", []string{"Content-Type: text/plain"}, make([]byte, 420<<10)))
		case 23: // a body that is itself a WARC file, gzip-encoded
			exs = append(exs, exchange(fmt.Sprintf("http://site.test/w/%d.warc.gz", i), "200 OK", []string{"Content-Type: application/warc", "Content-Encoding: gzip"},
				encode(t, "gzip", []byte("WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://inner.test/\r\nContent-Length: 19\r\n\r\nHTTP/1.1 200 OK\r\n\r\n\r\n\r\n"))))
		case 24:
			exs = append(exs, exchange("http://site.test/robots.txt", "200 OK", []string{"Content-Type: text/plain"}, []byte("User-agent: *\n")))
			rv := exchange(fmt.Sprintf("http://site.test/p/%d", i), "304 Not Modified", nil, nil)
			rv.Revisit = true
			exs = append(exs, rv)
		}
	}
	_, crawled := writeJob(t, 0, exs...)
	_, rotated := writeJob(t, 128<<10, exs[:80]...)
	_, short := writeJob(t, 0, exs[:70]...) // to damage
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	files = append(files, crawled[0])
	files = append(files, rotated...)

	// The same records, compressed otherwise: stored (the gzip magic of
	// the encoded bodies, and the inner WARC file, appear as they are), in
	// one member for the file, or four records a member.
	parts := splitMembers(t, crawled[0])
	gzipParts(t, path("stored.warc.gz"), gzip.NoCompression, 1, parts)
	gzipParts(t, path("whole.warc.gz"), gzip.DefaultCompression, 0, parts)
	gzipParts(t, path("fours.warc.gz"), gzip.BestSpeed, 4, parts)
	files = append(files, path("stored.warc.gz"), path("whole.warc.gz"), path("fours.warc.gz"))

	// Damaged: cut, a byte changed, at places throughout the file; bytes
	// after the last member; the start of a member only; not gzip; empty.
	data, err := os.ReadFile(short[0])
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 6; i++ {
		at := len(data) * i / 7
		cut := path(fmt.Sprintf("cut%d.warc.gz", i))
		os.WriteFile(cut, data[:at], 0o644)
		changed := bytes.Clone(data)
		changed[at] ^= 0x55
		flipped := path(fmt.Sprintf("flip%d.warc.gz", i))
		os.WriteFile(flipped, changed, 0o644)
		files = append(files, cut, flipped)
	}
	offsets := memberOffsets(t, data)
	for i, at := range []int{offsets[9] + 20, offsets[9] + 45, offsets[10] + 70, offsets[12] - 3} {
		changed := bytes.Clone(data)
		changed[at] ^= 0xff
		flipped := path(fmt.Sprintf("member-flip%d.warc.gz", i))
		os.WriteFile(flipped, changed, 0o644)
		files = append(files, flipped)
	}
	stored, err := os.ReadFile(path("stored.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	changed := bytes.Clone(stored)
	changed[len(stored)/2] = '!' // inside a stored block: only the CRC tells
	os.WriteFile(path("stored-flip.warc.gz"), changed, 0o644)
	os.WriteFile(path("trailing.warc.gz"), append(bytes.Clone(data), "\n\x00junk"...), 0o644)
	os.WriteFile(path("half-member.warc.gz"), append(bytes.Clone(data), data[:5]...), 0o644)
	os.WriteFile(path("not-gzip.warc.gz"), []byte("WARC/1.1\r\n"), 0o644)
	os.WriteFile(path("empty.warc.gz"), nil, 0o644)
	files = append(files, path("stored-flip.warc.gz"), path("trailing.warc.gz"), path("half-member.warc.gz"),
		path("not-gzip.warc.gz"), path("empty.warc.gz"))
	return files, maxRecord
}

// TestWorkersSameOutput: the export of files of every shape, whole and
// damaged, is the same with workers as with one, byte for byte, error for
// error, with batches of the real size and with small ones (where most
// members straddle two batches).
func TestWorkersSameOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("writes some MiB of WARC files")
	}
	files, maxRecord := mixedFiles(t)
	want := map[bool]result{}
	for _, text := range []bool{false, true} {
		want[text] = exportFiles(t, files, Options{Text: text, MaxRecordSize: maxRecord, Workers: 1})
		if w := want[text]; w.stats.Pages < 500 || len(w.reads) < 20 || w.stats.Robots == 0 {
			t.Fatalf("the files are not what the test needs: %+v, %d read errors", w.stats, len(w.reads))
		}
	}
	for _, tc := range []struct {
		text               bool
		size, max, workers int
		race               bool // run under -race too
	}{
		{false, batchSize, batchMax, 2, false},
		{false, batchSize, batchMax, 4, true},
		{false, batchSize, batchMax, 7, false},
		{false, 2 << 10, 8 << 10, 4, false},
		{false, 1, 1, 3, true}, // a batch a member, or less
		{true, batchSize, batchMax, 4, false},
		{true, 2 << 10, 8 << 10, 4, true},
	} {
		if raceEnabled && !tc.race {
			// Every case hands batches between the same goroutines, which
			// the race detector watches in the three cases marked: both
			// modes, batches of the real size and small ones, and the
			// smallest. The others vary the numbers, whose effect on the
			// output it only makes ten times slower to check: scripts/test
			// runs them all without -race.
			continue
		}
		t.Run(fmt.Sprintf("text=%v/batch=%d-%d/workers=%d", tc.text, tc.size, tc.max, tc.workers), func(t *testing.T) {
			defer func(s, m int) { batchSize, batchMax = s, m }(batchSize, batchMax)
			batchSize, batchMax = tc.size, tc.max
			want := want[tc.text]
			got := exportFiles(t, files, Options{Text: tc.text, MaxRecordSize: maxRecord, Workers: tc.workers})
			if !bytes.Equal(got.out, want.out) {
				i := 0
				for i < min(len(got.out), len(want.out)) && got.out[i] == want.out[i] {
					i++
				}
				t.Errorf("output differs from byte %d of %d (%d with workers): %.200q", i, len(want.out), len(got.out), got.out[max(0, i-100):min(len(got.out), i+100)])
			}
			for i := range files {
				if got.errs[i] != want.errs[i] {
					t.Errorf("%s:\n got error %s\nwant error %s", filepath.Base(files[i]), got.errs[i], want.errs[i])
				}
			}
			if !slices.Equal(got.reads, want.reads) {
				t.Errorf("read errors\n%q\nwant\n%q", got.reads, want.reads)
			}
			if got.stats != want.stats {
				t.Errorf("stats %+v, want %+v", got.stats, want.stats)
			}
		})
	}
}

// waitGoroutines waits a little for the goroutines to be as many as
// before, and fails when they do not get there.
func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// cancelWriter cancels a context at its first write.
type cancelWriter struct{ cancel context.CancelFunc }

func (c cancelWriter) Write(p []byte) (int, error) {
	c.cancel()
	return len(p), nil
}

// failWriter fails every write.
type failWriter struct{}

var errWrite = errors.New("disk full")

func (failWriter) Write([]byte) (int, error) { return 0, errWrite }

// TestWorkersStop: File returns soon when its context is done, with the
// context's error, whether that happens before or during the export, and
// at a writer's error or damage; it leaves no goroutine behind, and the
// Exporter has all its batches back for the next file.
func TestWorkersStop(t *testing.T) {
	_, files := writeJob(t, 0, func() []*warc.Exchange {
		exs := make([]*warc.Exchange, 1500)
		for i := range exs {
			exs[i] = sitePage(t, i)
		}
		return exs
	}()...)
	check := func(t *testing.T, e *Exporter, before int) {
		t.Helper()
		waitGoroutines(t, before)
		if len(e.free) != 2*e.opts.Workers {
			t.Errorf("%d batches back, want %d", len(e.free), 2*e.opts.Workers)
		}
		// The next file is read whole.
		pages := e.Stats().Pages
		if err := e.File(t.Context(), files[0]); err != nil {
			t.Errorf("the next File: %v", err)
		}
		if n := e.Stats().Pages - pages; n != 1500 {
			t.Errorf("the next File: %d pages, want 1500", n)
		}
	}

	t.Run("cancelled before", func(t *testing.T) {
		before := runtime.NumGoroutine()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		var out bytes.Buffer
		e := New(&out, Options{Workers: 4})
		if err := e.File(ctx, files[0]); !errors.Is(err, context.Canceled) {
			t.Errorf("File: %v", err)
		}
		if e.Flush(); out.Len() != 0 {
			t.Errorf("output %.100q", out.String())
		}
		check(t, e, before)
	})
	t.Run("cancelled during", func(t *testing.T) {
		before := runtime.NumGoroutine()
		ctx, cancel := context.WithCancel(t.Context())
		e := New(cancelWriter{cancel}, Options{Workers: 4})
		start := time.Now()
		err := e.File(ctx, files[0])
		if !errors.Is(err, context.Canceled) {
			t.Errorf("File: %v", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("File took %v to stop", d)
		}
		if st := e.Stats(); st.Pages >= 1500 {
			t.Errorf("stats %+v: read to the end", st)
		}
		check(t, e, before)
	})
	t.Run("writer fails", func(t *testing.T) {
		before := runtime.NumGoroutine()
		e := New(failWriter{}, Options{Workers: 4})
		if err := e.File(t.Context(), files[0]); !errors.Is(err, errWrite) {
			t.Errorf("File: %v", err)
		}
		waitGoroutines(t, before)
	})
	t.Run("damaged", func(t *testing.T) {
		before := runtime.NumGoroutine()
		data, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		data[len(data)/3] ^= 0xff
		path := filepath.Join(t.TempDir(), "damaged.warc.gz")
		os.WriteFile(path, data, 0o644)
		e := New(io.Discard, Options{Workers: 4})
		var re *ReadError
		if err := e.File(t.Context(), path); !errors.As(err, &re) {
			t.Errorf("File: %v", err)
		}
		check(t, e, before)
	})
}

// TestWorkersShare: in files the crawler writes, the workers read the
// members, not the goroutine that calls File. The default is GOMAXPROCS
// workers.
func TestWorkersShare(t *testing.T) {
	if e := New(io.Discard, Options{}); e.opts.Workers != runtime.GOMAXPROCS(0) {
		t.Errorf("Workers %d, want GOMAXPROCS %d", e.opts.Workers, runtime.GOMAXPROCS(0))
	}
	job, size := siteJob(t, 2000)
	files, _, err := Files(job)
	if err != nil {
		t.Fatal(err)
	}
	e := New(io.Discard, Options{Workers: 3})
	for _, f := range files {
		if err := e.File(t.Context(), f); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d files, %d bytes: %d read by File's goroutine", len(files), size, e.self)
	if st := e.Stats(); st.Pages != 2000 || st.Bytes != size || e.self > size/20 {
		t.Errorf("stats %+v; %d bytes of %d read by File's goroutine", st, e.self, size)
	}
}
