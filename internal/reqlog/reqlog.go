// Package reqlog keeps a job's request log: one line for every HTTP
// request a crawl sends, robots.txt and sitemaps included, written when the
// answer is in. It is what `gentlecrawl report` and the metrics read, and
// what a site owner can set beside the server's own access log.
//
// Each run writes its own file, requests/NNNNNN.tsv in the job directory
// (NNNNNN is the run number). A file is text, one record a line, fields
// separated by tabs, the first field naming the kind of line:
//
//	#	format version ("gentlecrawl-requests/1"), run number, start (RFC 3339)
//	R	a request: start (Unix µs), time to first byte (µs), duration (µs),
//		kind, purpose, status (0: no answer), error kind, file type,
//		bytes on the wire, bytes decoded, bytes a 304 saved, flags (c:
//		conditional, z: compressed, r: sent twice; "-": none), host, URL
//	D	a host's Crawl-delay as its robots.txt gives it: host, delay (ms)
//	Q	at the end of a run, a host's queue: host, URLs waiting
//
// A request sent twice (flag r) is one line: a kept-alive connection failed
// before any byte of the answer and the request went once more on a new
// connection (fetch.Result.Retried), so the server may have logged it
// twice. Readers ignore flags they do not know.
//
// Every line is written with one write(2) on a file opened O_APPEND, so a
// crawl killed with SIGKILL loses at most the line being written, and a
// reader skips a last line without its newline.
package reqlog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Format is the first field of a request log's header line.
const Format = "gentlecrawl-requests/1"

// Dir is the directory of a job that holds its request logs.
const Dir = "requests"

// Kinds of request.
const (
	KindPage    = "page"
	KindRobots  = "robots"
	KindSitemap = "sitemap"
)

// File types, from the Content-Type of the answer.
const (
	TypeHTML  = "html"
	TypeImage = "image"
	TypeCSS   = "css"
	TypeJS    = "javascript"
	TypePDF   = "pdf"
	TypeOther = "other"
)

// Types lists the file types in the order a report shows them.
var Types = []string{TypeHTML, TypeImage, TypeCSS, TypeJS, TypePDF, TypeOther}

// Record is one request.
type Record struct {
	Start    time.Time
	TTFB     time.Duration // to the first byte of the answer; 0 without one
	Duration time.Duration // to the last byte, or the failure
	Kind     string        // KindPage, KindRobots or KindSitemap
	Purpose  string        // "discovery" or "refresh" for a page; "" otherwise
	Status   int           // 0: no answer (see Error)
	Error    string        // without an answer: dns, refused, timeout, tls, …
	Type     string        // one of Types; "" without an answer
	Wire     int64         // bytes received: header and body as sent
	Body     int64         // the body decoded
	Saved    int64         // a 304: the bytes of the last full answer it spared

	Conditional bool // the request carried If-None-Match or If-Modified-Since
	Compressed  bool // the answer had a Content-Encoding
	Retried     bool // sent a second time, on a new connection (flag r)

	Host string // the politeness key: scheme://host[:port]
	URL  string
}

// FileType returns the file type of a Content-Type.
func FileType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.Split(contentType, ";")[0]))
	}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		return TypeHTML
	case strings.HasPrefix(mt, "image/"):
		return TypeImage
	case mt == "text/css":
		return TypeCSS
	case mt == "application/javascript" || mt == "text/javascript" || mt == "application/x-javascript" ||
		mt == "application/ecmascript" || mt == "text/ecmascript":
		return TypeJS
	case mt == "application/pdf":
		return TypePDF
	}
	return TypeOther
}

// Writer appends to one run's request log. It is safe for concurrent use.
type Writer struct {
	mu   sync.Mutex
	f    *os.File
	buf  []byte
	Run  int
	Path string
	err  error
}

// Create starts the request log of a new run in jobDir: its number is one
// more than the highest of the logs already there.
func Create(jobDir string, start time.Time) (*Writer, error) {
	dir := filepath.Join(jobDir, Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	runs, err := Runs(jobDir)
	if err != nil {
		return nil, err
	}
	run := 1
	if len(runs) > 0 {
		run = runs[len(runs)-1] + 1
	}
	path := filepath.Join(dir, fileName(run))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	w := &Writer{f: f, Run: run, Path: path}
	w.line(func(b []byte) []byte {
		b = append(b, "#\t"+Format+"\t"...)
		b = strconv.AppendInt(b, int64(run), 10)
		b = append(b, '\t')
		return start.UTC().AppendFormat(b, time.RFC3339Nano)
	})
	if w.err != nil {
		f.Close()
		return nil, w.err
	}
	return w, nil
}

func fileName(run int) string { return fmt.Sprintf("%06d.tsv", run) }

// Runs returns the run numbers of the request logs of jobDir, in order.
func Runs(jobDir string) ([]int, error) {
	entries, err := os.ReadDir(filepath.Join(jobDir, Dir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var runs []int
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".tsv")
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(name); err == nil && n > 0 {
			runs = append(runs, n)
		}
	}
	slices.Sort(runs)
	return runs, nil
}

// Path returns the file of run's request log in jobDir.
func Path(jobDir string, run int) string { return filepath.Join(jobDir, Dir, fileName(run)) }

// line writes one line built by fill; the first error is kept (Err).
func (w *Writer) line(fill func([]byte) []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	w.buf = append(fill(w.buf[:0]), '\n')
	if _, err := w.f.Write(w.buf); err != nil {
		w.err = fmt.Errorf("request log: %w", err)
	}
}

// clean replaces the characters that would break a line: tabs and line
// ends (a URL or host never has them, but the log must not depend on it).
func clean(b []byte, s string) []byte {
	if !strings.ContainsAny(s, "\t\r\n") {
		return append(b, s...)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\t', '\r', '\n':
			b = append(b, ' ')
		default:
			b = append(b, c)
		}
	}
	return b
}

func field(b []byte, s string) []byte {
	if s == "" {
		s = "-"
	}
	return append(clean(b, s), '\t')
}

// Request logs one request.
func (w *Writer) Request(r *Record) {
	w.line(func(b []byte) []byte {
		b = append(b, "R\t"...)
		b = strconv.AppendInt(b, r.Start.UnixMicro(), 10)
		b = append(b, '\t')
		b = strconv.AppendInt(b, r.TTFB.Microseconds(), 10)
		b = append(b, '\t')
		b = strconv.AppendInt(b, r.Duration.Microseconds(), 10)
		b = append(b, '\t')
		b = field(b, r.Kind)
		b = field(b, r.Purpose)
		b = strconv.AppendInt(b, int64(r.Status), 10)
		b = append(b, '\t')
		b = field(b, r.Error)
		b = field(b, r.Type)
		b = strconv.AppendInt(b, r.Wire, 10)
		b = append(b, '\t')
		b = strconv.AppendInt(b, r.Body, 10)
		b = append(b, '\t')
		b = strconv.AppendInt(b, r.Saved, 10)
		b = append(b, '\t')
		flags := len(b)
		if r.Conditional {
			b = append(b, 'c')
		}
		if r.Compressed {
			b = append(b, 'z')
		}
		if r.Retried {
			b = append(b, 'r')
		}
		if len(b) == flags {
			b = append(b, '-')
		}
		b = append(b, '\t')
		b = field(b, r.Host)
		return clean(b, r.URL)
	})
}

// CrawlDelay logs the Crawl-delay a host's robots.txt gives.
func (w *Writer) CrawlDelay(host string, d time.Duration) {
	w.line(func(b []byte) []byte {
		b = append(b, "D\t"...)
		b = field(b, host)
		return strconv.AppendInt(b, d.Milliseconds(), 10)
	})
}

// Queued logs how many URLs of a host wait at the end of the run.
func (w *Writer) Queued(host string, n int) {
	w.line(func(b []byte) []byte {
		b = append(b, "Q\t"...)
		b = field(b, host)
		return strconv.AppendInt(b, int64(n), 10)
	})
}

// Err returns the first error writing the log.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close closes the file; it returns the first error writing or closing.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = err
	}
	return w.err
}

// Visitor receives the lines of a request log as a Reader reads them.
// Record and strings passed are valid until the call returns, but for
// Record.Host, which stays valid.
type Visitor struct {
	Header     func(run int, start time.Time) error
	Request    func(r *Record) error
	CrawlDelay func(host string, d time.Duration) error
	Queued     func(host string, n int) error
}

// MaxLine is the longest line a reader accepts: a URL of the crawl is at
// most 8 KiB, so a longer line is damage.
const MaxLine = 64 << 10

// Read reads a request log from r, calling v for each line. A malformed
// line is an error that names it; a last line without its newline (a crawl
// killed while writing it) is skipped.
func Read(r io.Reader, v Visitor) error {
	br := bufio.NewReaderSize(r, 256<<10)
	hosts := make(map[string]string)
	intern := func(b []byte) string {
		if s, ok := hosts[string(b)]; ok {
			return s
		}
		s := string(b)
		hosts[s] = s
		return s
	}
	var rec Record
	var fields [15][]byte
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return fmt.Errorf("request log line %d: longer than %d bytes", n, br.Size())
		}
		if err == io.EOF {
			return nil // a partial last line, or none
		}
		if err != nil {
			return err
		}
		if len(line) > MaxLine {
			return fmt.Errorf("request log line %d: longer than %d bytes", n, MaxLine)
		}
		line = line[:len(line)-1]
		k := split(line, fields[:])
		bad := func(why string) error { return fmt.Errorf("request log line %d: %s", n, why) }
		if k == 0 || len(fields[0]) != 1 {
			return bad("no record type")
		}
		switch fields[0][0] {
		case '#':
			if k != 4 || string(fields[1]) != Format {
				return bad("not a request log of this format (want " + Format + ")")
			}
			run, err := strconv.Atoi(string(fields[2]))
			if err != nil {
				return bad("bad run number")
			}
			t, err := time.Parse(time.RFC3339Nano, string(fields[3]))
			if err != nil {
				return bad("bad start time")
			}
			if v.Header != nil {
				if err := v.Header(run, t); err != nil {
					return err
				}
			}
		case 'R':
			if k != 15 {
				return bad(fmt.Sprintf("a request has 15 fields, this line %d", k))
			}
			var nums [7]int64
			for i, j := range [7]int{1, 2, 3, 6, 9, 10, 11} {
				x, ok := number(fields[j])
				if !ok {
					return bad(fmt.Sprintf("field %d is not a number", j+1))
				}
				nums[i] = x
			}
			rec = Record{
				Start: time.UnixMicro(nums[0]), TTFB: time.Duration(nums[1]) * time.Microsecond,
				Duration: time.Duration(nums[2]) * time.Microsecond,
				Kind:     word(fields[4]), Purpose: word(fields[5]), Status: int(nums[3]),
				Error: text(fields[7]), Type: word(fields[8]),
				Wire: nums[4], Body: nums[5], Saved: nums[6],
				Conditional: bytes.IndexByte(fields[12], 'c') >= 0,
				Compressed:  bytes.IndexByte(fields[12], 'z') >= 0,
				Retried:     bytes.IndexByte(fields[12], 'r') >= 0,
				Host:        intern(fields[13]),
			}
			if v.Request != nil {
				rec.URL = string(fields[14])
				if err := v.Request(&rec); err != nil {
					return err
				}
			}
		case 'D', 'Q':
			if k != 3 {
				return bad("a host line has 3 fields")
			}
			x, ok := number(fields[2])
			if !ok {
				return bad("field 3 is not a number")
			}
			host := intern(fields[1])
			if fields[0][0] == 'D' && v.CrawlDelay != nil {
				err = v.CrawlDelay(host, time.Duration(x)*time.Millisecond)
			} else if fields[0][0] == 'Q' && v.Queued != nil {
				err = v.Queued(host, int(x))
			}
			if err != nil {
				return err
			}
		default:
			return bad(fmt.Sprintf("unknown record type %q", fields[0]))
		}
	}
}

// split cuts line at tabs into fields; it returns how many there are, or
// len(fields)+1 when there are more.
func split(line []byte, fields [][]byte) int {
	k := 0
	for {
		i := bytes.IndexByte(line, '\t')
		if k == len(fields) {
			return k + 1
		}
		if i < 0 {
			fields[k] = line
			return k + 1
		}
		fields[k] = line[:i]
		line = line[i+1:]
		k++
	}
}

// number parses a non-negative decimal of at most 18 digits.
func number(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var x int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		x = x*10 + int64(c-'0')
	}
	return x, true
}

// word returns the constant a field names, without allocating for the
// ones a log holds on every line.
func word(b []byte) string {
	switch string(b) {
	case "-":
		return ""
	case KindPage:
		return KindPage
	case KindRobots:
		return KindRobots
	case KindSitemap:
		return KindSitemap
	case "discovery":
		return "discovery"
	case "refresh":
		return "refresh"
	case TypeHTML:
		return TypeHTML
	case TypeImage:
		return TypeImage
	case TypeCSS:
		return TypeCSS
	case TypeJS:
		return TypeJS
	case TypePDF:
		return TypePDF
	case TypeOther:
		return TypeOther
	}
	return string(b)
}

func text(b []byte) string {
	if string(b) == "-" {
		return ""
	}
	return string(b)
}
