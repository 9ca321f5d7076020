// Package export reads a job's WARC files back and turns every page the
// crawler fetched into one JSON object on a line of its own: its URL and
// where it leads, the status, when it was fetched, its type, size and
// payload digest, and for HTML its title, its links and, when asked for,
// its visible text.
//
// A page is a response or revisit record of an HTTP exchange (WARC 1.1
// §6.3, §6.7). The lines come in file order and record order. A file is
// read in batches of gzip members that Options.Workers goroutines read at
// once, each its records and their lines; a batch's lines are written
// when those of the batches before it have been. At most two batches per
// worker are in memory, and they are reused, so memory does not grow with
// the size of the job: what one record needs is bounded by
// Options.MaxBodySize and Options.MaxRecordSize.
//
// The crawler records its robots.txt fetches like any other exchange; they
// are told apart by their path alone: a record whose URL's path is
// /robots.txt is not a page. Sitemaps, fetched as ordinary URLs, are pages.
package export

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
	"github.com/gentlecrawl/gentlecrawl/warc"
)

// Options configures an [Exporter]. The zero value is ready to use.
type Options struct {
	// Text adds the visible text of each HTML page (Page.Text).
	Text bool
	// MaxBodySize bounds the decoded bytes of one body; a body that decodes
	// to more is cut there and its line says so. The default is the
	// crawler's, fetch.DefaultMaxBodySize (15 MiB).
	MaxBodySize int64
	// MaxRecordSize bounds the block of one WARC record. A record above it
	// is not read (its file's error says so) and reading goes on with the
	// next record. The default is what the crawler can write with
	// MaxBodySize: twice it (fetch.Config.MaxRawSize) plus a response head
	// of fetch.DefaultMaxHeaderBytes.
	MaxRecordSize int64
	// Workers is the number of goroutines that read records and make
	// their lines. The default is runtime.GOMAXPROCS(0); 1 reads
	// everything on the goroutine that calls File.
	Workers int
}

// Page is one line of the export.
type Page struct {
	// URL is the URL fetched (WARC-Target-URI).
	URL string `json:"url"`
	// FinalURL is where a 3xx answer leads (its Location resolved against
	// URL); otherwise URL. The crawler queues a redirect's target as a URL
	// of its own, so that target has its own line.
	FinalURL string `json:"final_url"`
	// Status is the HTTP status; 0 when the record holds no readable
	// status line (Error says why).
	Status int `json:"status"`
	// Fetched is when the exchange began (WARC-Date), in RFC 3339.
	Fetched string `json:"fetched"`
	// ContentType is the Content-Type header as the server sent it.
	ContentType string `json:"content_type"`
	// Length is the number of bytes of the decoded body: 0 for a revisit.
	Length int `json:"length"`
	// Digest is the record's WARC-Payload-Digest ("sha1:BASE32", of the body
	// as received); "" when the record has none.
	Digest string `json:"digest"`
	// Truncated is the record's WARC-Truncated: the crawler kept only the
	// start of the body ("length", "time", "disconnect", "unspecified").
	Truncated string `json:"truncated,omitempty"`
	// Title is the text of the HTML page's <title>, white space collapsed.
	Title string `json:"title"`
	// Links are the page links of an HTML page (<a>, <area>, <frame>,
	// <iframe>, <link rel=alternate hreflang>): absolute, each once, in
	// document order. Never null.
	Links []string `json:"links"`
	// Text is the visible text of an HTML page, with Options.Text only:
	// one line for each block (paragraph, heading, list item, cell), runs
	// of white space within a block made one space.
	Text *string `json:"text,omitempty"`
	// Error says what could not be read of the body: decoding, or
	// extraction cut short. What was read is still reported.
	Error string `json:"error,omitempty"`
}

// Stats counts what an Exporter has read.
type Stats struct {
	Files   int   // files read, whole or in part
	Bytes   int64 // bytes of WARC files read (compressed, as on disk)
	Records int   // WARC records read
	Pages   int   // lines written
	Robots  int   // robots.txt records skipped
}

// ReadError is a WARC file, or a record of one, that could not be read.
type ReadError struct {
	File   string // path of the WARC file
	Offset int64  // byte offset in the file of the gzip member that holds the record
	Record int    // number of the record in the file, from 1; 0 when the file could not be opened
	Err    error
}

func (e *ReadError) Error() string {
	if e.Record == 0 {
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("%s: record %d, at byte %d: %v", e.File, e.Record, e.Offset, e.Err)
}

func (e *ReadError) Unwrap() error { return e.Err }

// Exporter writes the pages of WARC files as JSON lines. It is not safe for
// concurrent use.
type Exporter struct {
	opts  Options
	out   *bufio.Writer
	stats Stats

	scan *scanner      // reads what the workers do not
	self int64         // bytes of members scan read, for tests
	file offsetReader  // the file being read, from where scan reads it
	fbr  *bufio.Reader // buffers file for scan

	// For Options.Workers > 1 (parallel.go), made by the first File.
	workers []*scanner
	free    chan *batch // the batches not in use: 2 per worker
	carry   []byte      // read past the end of a batch, for the next one
}

// New returns an Exporter that writes to w, buffered: call Flush when done.
func New(w io.Writer, opts Options) *Exporter {
	if opts.MaxBodySize <= 0 {
		opts.MaxBodySize = fetch.DefaultMaxBodySize
	}
	if opts.MaxRecordSize <= 0 {
		opts.MaxRecordSize = 2*opts.MaxBodySize + fetch.DefaultMaxHeaderBytes
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	e := &Exporter{opts: opts, out: bufio.NewWriterSize(w, 64<<10)}
	e.scan = newScanner(&e.opts)
	e.fbr = bufio.NewReaderSize(nil, 64<<10)
	return e
}

// Flush writes what is buffered to the underlying writer.
func (e *Exporter) Flush() error { return e.out.Flush() }

// Stats returns the counts so far.
func (e *Exporter) Stats() Stats { return e.stats }

// File writes a line for each page in the WARC file at path, a file of gzip
// members (one per record, as the crawler writes, or one for the whole
// file). A record that cannot be read gives a *ReadError; the records
// before it have their lines. Reading goes on past a record that is only
// too large (Options.MaxRecordSize), and stops at one that is damaged, for
// what follows it cannot be trusted. The errors come back joined. Any
// other error is the writer's, or ctx's when it is done, and stops at once.
//
// The lines and the errors are the same whatever Options.Workers: only the
// time they take differs.
func (e *Exporter) File(ctx context.Context, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return &ReadError{File: path, Err: err}
	}
	defer f.Close()
	e.stats.Files++
	fs := &fileState{path: path, f: f}
	defer func() { e.stats.Bytes += fs.pos }()
	if e.opts.Workers > 1 {
		err = e.parallel(ctx, fs)
	} else {
		_, err = e.readFile(ctx, fs, math.MaxInt64)
	}
	if err != nil {
		return err
	}
	return errors.Join(fs.errs...)
}

// fileState is where the reading of a file stands.
type fileState struct {
	path   string
	f      *os.File
	pos    int64   // where the next gzip member starts: the bytes read so far
	record int     // records read, or that failed, so far (ReadError.Record)
	errs   []error // the ReadErrors so far
}

// readFile reads the gzip members of a file, from fs.pos on, and writes
// the lines of their pages until a member ends at or past limit, or the
// file ends. done is true at the end of the file and at damage: nothing
// more is to be read. err is the writer's, or ctx's.
func (e *Exporter) readFile(ctx context.Context, fs *fileState, limit int64) (done bool, err error) {
	e.file = offsetReader{r: fs.f, off: fs.pos}
	e.fbr.Reset(&e.file)
	at := func() int64 { return e.file.off - int64(e.fbr.Buffered()) }
	s := e.scan
	s.into(e.out, &e.stats)
	for fs.pos < limit {
		start := fs.pos
		m, err := s.member(ctx, e.fbr, at, start)
		if err != nil {
			return true, err
		}
		if m.eof {
			return true, nil // the end, between members
		}
		if m.err != nil {
			fs.errs = append(fs.errs, &ReadError{File: fs.path, Offset: start, Record: fs.record + m.records, Err: m.err})
		}
		fs.record += m.records
		e.self += m.end - fs.pos
		fs.pos = m.end
		if m.fatal {
			return true, nil
		}
	}
	return false, nil
}

// offsetReader reads a file from an offset on, with ReadAt, so that the
// file's own offset stays the workers' (parallel.go).
type offsetReader struct {
	r   io.ReaderAt
	off int64
}

func (o *offsetReader) Read(p []byte) (int, error) {
	n, err := o.r.ReadAt(p, o.off)
	o.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil // ReadAt says EOF with the last bytes; Read says it after
	}
	return n, err
}

// cause is what a ReadError says of err. It drops the record number
// warc.Reader puts in front of its errors (a Reader reads one gzip member
// here, so its count is not the file's), and says so when the file ends
// inside the record.
func cause(err error) error {
	if inner := errors.Unwrap(err); inner != nil && strings.HasPrefix(err.Error(), "record ") {
		err = inner
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("the file ends inside this record (cut short?): %w", err)
	}
	return err
}

// fileName matches the names the crawler gives its WARC files; the group is
// the serial, which orders them as they were written.
var fileName = regexp.MustCompile(`-\d{14}-(\d{5,})\.warc\.gz$`)

// Files returns the WARC files of a job directory (its warc/ directory) in
// the order they were written: by serial number, then by name. open lists
// the files still being written, or left by a crash (".open"), which are
// not in files. A job directory that does not exist, or is not a
// directory, is an error; one without a warc/ directory has no files.
func Files(jobDir string) (files, open []string, err error) {
	st, err := os.Stat(jobDir)
	if err != nil {
		return nil, nil, fmt.Errorf("job directory: %w", err)
	}
	if !st.IsDir() {
		return nil, nil, fmt.Errorf("job directory %s is not a directory", jobDir)
	}
	dir := filepath.Join(jobDir, "warc")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("WARC directory: %w", err)
	}
	type named struct {
		path   string
		serial int64 // -1: a name the crawler does not give
	}
	var found []named
	for _, ent := range entries {
		name := ent.Name()
		switch {
		case !ent.Type().IsRegular():
		case strings.HasSuffix(name, ".warc.gz"+warc.OpenSuffix):
			open = append(open, filepath.Join(dir, name))
		case strings.HasSuffix(name, ".warc.gz"):
			n := int64(-1)
			if m := fileName.FindStringSubmatch(name); m != nil {
				if v, err := strconv.ParseInt(m[1], 10, 64); err == nil {
					n = v
				}
			}
			found = append(found, named{filepath.Join(dir, name), n})
		}
	}
	slices.SortStableFunc(found, func(a, b named) int {
		switch {
		case a.serial != b.serial && a.serial >= 0 && b.serial >= 0:
			return int(min(max(a.serial-b.serial, -1), 1))
		case (a.serial < 0) != (b.serial < 0):
			if a.serial < 0 {
				return 1 // names of the crawler's first
			}
			return -1
		}
		return strings.Compare(a.path, b.path)
	})
	for _, f := range found {
		files = append(files, f.path)
	}
	return files, open, nil
}
