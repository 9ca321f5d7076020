package warc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// IndexSuffix ends the name of the CDXJ index written beside each WARC file:
// NAME.cdxj beside NAME.warc.gz.
const IndexSuffix = ".cdxj"

// indexTempMarker is part of the name of an index being written; such a file is
// renamed to its final name once complete, and [Recover] removes one left over.
const indexTempMarker = IndexSuffix + ".tmp-"

// IndexPath returns the path of the CDXJ index of the WARC file at warcPath.
func IndexPath(warcPath string) string {
	return strings.TrimSuffix(warcPath, ".warc.gz") + IndexSuffix
}

// indexEntry is one line of a CDXJ index, without the file name, which the line
// gets when its file is closed.
type indexEntry struct {
	urlkey    string
	timestamp string
	url       string
	mime      string
	status    string
	digest    string
	offset    int64 // of the record's gzip member in the file
	length    int64 // of that member
}

// cdxjFields is the JSON object of a line, in the order pywb writes its fields.
// Numbers are strings, as pywb and warcio write them.
type cdxjFields struct {
	URL      string `json:"url"`
	Mime     string `json:"mime"`
	Status   string `json:"status"`
	Digest   string `json:"digest"`
	Length   string `json:"length"`
	Offset   string `json:"offset"`
	Filename string `json:"filename"`
}

// newIndexEntry describes a response or revisit record for the index: typ is the
// record type, uri its WARC-Target-URI, date its WARC-Date as written, msg the
// record block (an HTTP response message, of which only the head is looked at),
// payloadDigest its WARC-Payload-Digest ("" if none). Offset and length are left
// to the caller.
func newIndexEntry(typ, uri, date string, msg []byte, payloadDigest string) indexEntry {
	status, mime := httpStatusAndType(msg)
	if typ == typeRevisit {
		mime = "warc/revisit"
	}
	// pywb's and warcio's indexers write the digest without its "sha1:" label,
	// and replay tools compare digests across indexes.
	digest := "-"
	if payloadDigest != "" {
		digest = payloadDigest
		if _, v, ok := strings.Cut(digest, ":"); ok {
			digest = v
		}
	}
	return indexEntry{
		urlkey:    SURT(uri),
		timestamp: cdxTimestamp(date),
		url:       uri,
		mime:      mime,
		status:    status,
		digest:    digest,
	}
}

// line renders e as one CDXJ line, without the line end.
func (e *indexEntry) line(filename string) string {
	var b strings.Builder
	b.WriteString(e.urlkey)
	b.WriteByte(' ')
	b.WriteString(e.timestamp)
	b.WriteByte(' ')
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	// Encoding strings cannot fail.
	_ = enc.Encode(cdxjFields{
		URL:      e.url,
		Mime:     e.mime,
		Status:   e.status,
		Digest:   e.digest,
		Length:   strconv.FormatInt(e.length, 10),
		Offset:   strconv.FormatInt(e.offset, 10),
		Filename: filename,
	})
	return strings.TrimSuffix(b.String(), "\n")
}

// cdxTimestamp turns a WARC-Date into the 14 digits of a CDX timestamp
// (YYYYMMDDhhmmss, UTC). A date that does not parse gives its first 14 digits.
func cdxTimestamp(date string) string {
	if t, err := time.Parse(time.RFC3339Nano, date); err == nil {
		return t.UTC().Format("20060102150405")
	}
	var b strings.Builder
	for i := 0; i < len(date) && b.Len() < 14; i++ {
		if c := date[i]; c >= '0' && c <= '9' {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// maxHTTPHead bounds how much of an HTTP message is searched for its status and
// Content-Type, the same whether the index is made while writing or by reading a
// file back.
const maxHTTPHead = 64 << 10

// httpStatusAndType returns the status code of an HTTP response message ("-" if
// its status line has none) and the media type of its Content-Type, lowercased and
// without parameters ("unk" if it has none, as pywb writes).
func httpStatusAndType(msg []byte) (status, mime string) {
	if len(msg) > maxHTTPHead {
		msg = msg[:maxHTTPHead]
	}
	status, mime = "-", "unk"
	first := true
	for len(msg) > 0 {
		line := msg
		if i := bytes.IndexByte(msg, '\n'); i >= 0 {
			line, msg = msg[:i], msg[i+1:]
		} else {
			msg = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if first {
			first = false
			// HTTP/1.1 200 OK
			if _, rest, ok := bytes.Cut(line, []byte(" ")); ok && bytes.HasPrefix(line, []byte("HTTP/")) {
				code, _, _ := bytes.Cut(rest, []byte(" "))
				if len(code) == 3 && allDigits(code) {
					status = string(code)
				}
			}
			continue
		}
		if len(line) == 0 {
			break // end of the header section
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok || !strings.EqualFold(string(name), "Content-Type") {
			continue
		}
		value, _, _ = bytes.Cut(value, []byte(";"))
		if v := strings.ToLower(string(bytes.Trim(value, " \t"))); v != "" {
			mime = v
		}
		break
	}
	return status, mime
}

func allDigits(p []byte) bool {
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// SURT returns the key under which a URI is sorted in a CDXJ index, as pywb and
// warcio form it: the scheme, user information, fragment and a leading "www."
// (or "www2." and the like) dropped, the host's labels reversed and joined with
// commas, the port kept unless it is the scheme's default, then ")" and the path
// and query, with the query's arguments sorted. The whole key is lowercased, as
// those tools lowercase the URL they look up. Percent-encoding and
// internationalized host names are left as they are (no decoding, no punycode);
// a space or tab, which would end the key, is percent-encoded.
//
// https://www.Example.com:443/A?c=2&b=1 has the key com,example)/a?b=1&c=2.
// A URI without "://" is only lowercased.
func SURT(uri string) string {
	uri, _, _ = strings.Cut(uri, "#")
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok {
		return surtEscape(strings.ToLower(uri))
	}
	scheme = strings.ToLower(scheme)
	authority, pathQuery := rest, ""
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		authority, pathQuery = rest[:i], rest[i:]
	}
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		authority = authority[i+1:]
	}
	host, port := authority, ""
	if strings.HasPrefix(host, "[") {
		// An IPv6 literal: its colons are not the port's.
		if i := strings.IndexByte(host, ']'); i >= 0 {
			host, port = host[:i+1], strings.TrimPrefix(host[i+1:], ":")
		}
	} else if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host, port = host[:i], host[i+1:]
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if port == defaultPort[scheme] {
		port = ""
	}

	var b strings.Builder
	if strings.HasPrefix(host, "[") {
		b.WriteString(host)
	} else {
		labels := strings.Split(dropWWW(host), ".")
		slices.Reverse(labels)
		b.WriteString(strings.Join(labels, ","))
	}
	if port != "" {
		b.WriteString(":" + port)
	}
	b.WriteByte(')')

	path, query, hasQuery := strings.Cut(pathQuery, "?")
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	b.WriteString(path)
	if hasQuery && query != "" {
		args := strings.Split(query, "&")
		slices.Sort(args)
		b.WriteByte('?')
		b.WriteString(strings.Join(args, "&"))
	}
	return surtEscape(strings.ToLower(b.String()))
}

var defaultPort = map[string]string{"http": "80", "https": "443"}

// dropWWW removes a leading "www." or "wwwN." label from a host that has more.
func dropWWW(host string) string {
	if !strings.HasPrefix(host, "www") {
		return host
	}
	i := 3
	for i < len(host) && host[i] >= '0' && host[i] <= '9' {
		i++
	}
	if i < len(host)-1 && host[i] == '.' {
		return host[i+1:]
	}
	return host
}

// surtEscape percent-encodes the characters that would break a CDXJ line.
func surtEscape(key string) string {
	if !strings.ContainsAny(key, " \t") {
		return key
	}
	return strings.NewReplacer(" ", "%20", "\t", "%09").Replace(key)
}

// maxIndexEntries bounds the index entries a Writer keeps in memory for its
// current file (about 300 bytes each); past it they are sorted and spilled to a
// run file beside the index, and the runs are merged when the file closes. A file
// of small revisit records can hold millions of exchanges.
var maxIndexEntries = 1 << 16

// sortedLines renders entries as CDXJ lines of the file named name, sorted.
func sortedLines(name string, entries []indexEntry) []string {
	lines := make([]string, len(entries))
	for i := range entries {
		lines[i] = entries[i].line(name)
	}
	// CDXJ is sorted by byte order of the whole line (LC_ALL=C sort).
	slices.Sort(lines)
	return lines
}

// createTemp creates a temporary file beside the index of warcPath, named so
// that Recover removes it when a crash leaves it behind.
func createTemp(warcPath string) (*os.File, error) {
	final := IndexPath(warcPath)
	return os.CreateTemp(filepath.Dir(final), "."+filepath.Base(final)+".tmp-*")
}

// spillIndex writes entries, sorted, to a run file for a later writeIndex and
// returns its path.
func spillIndex(warcPath string, entries []indexEntry) (string, error) {
	f, err := createTemp(warcPath)
	if err != nil {
		return "", fmt.Errorf("warc: index: %w", err)
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	for _, l := range sortedLines(filepath.Base(warcPath), entries) {
		bw.WriteString(l)
		bw.WriteByte('\n')
	}
	err = bw.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("warc: index: %w", err)
	}
	return f.Name(), nil
}

// writeIndex writes the CDXJ index of the WARC file warcPath from its entries and
// the sorted runs spilled before (removed once read): sorted lines into a
// temporary file in the same directory, fsynced, then renamed, so that a reader
// never sees part of an index. The caller syncs the directory.
func writeIndex(warcPath string, entries []indexEntry, runs ...string) (err error) {
	defer func() {
		for _, r := range runs {
			os.Remove(r)
		}
	}()
	final := IndexPath(warcPath)
	tmp, err := createTemp(warcPath)
	if err != nil {
		return fmt.Errorf("warc: index: %w", err)
	}
	bw := bufio.NewWriterSize(tmp, 64<<10)
	lines := sortedLines(filepath.Base(warcPath), entries)
	if len(runs) == 0 {
		for _, l := range lines {
			bw.WriteString(l)
			bw.WriteByte('\n')
		}
	} else {
		err = mergeRuns(bw, lines, runs)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), final)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("warc: index %s: %w", final, err)
	}
	return nil
}

// mergeRuns writes the sorted lines and the sorted run files merged, in order.
func mergeRuns(w *bufio.Writer, lines []string, runs []string) error {
	type source struct {
		sc   *bufio.Scanner
		line string
		mem  []string // the lines in memory, for the source that has no scanner
	}
	var srcs []*source
	next := func(s *source) bool {
		if s.sc == nil {
			if len(s.mem) == 0 {
				return false
			}
			s.line, s.mem = s.mem[0], s.mem[1:]
			return true
		}
		if !s.sc.Scan() {
			return false
		}
		s.line = s.sc.Text()
		return true
	}
	for _, r := range runs {
		f, err := os.Open(r)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		srcs = append(srcs, &source{sc: sc})
	}
	srcs = append(srcs, &source{mem: lines})
	live := srcs[:0]
	for _, s := range srcs {
		if next(s) {
			live = append(live, s)
		}
	}
	// A handful of runs: a linear scan for the least line is as good as a heap.
	for len(live) > 0 {
		least := 0
		for i := 1; i < len(live); i++ {
			if live[i].line < live[least].line {
				least = i
			}
		}
		s := live[least]
		w.WriteString(s.line)
		w.WriteByte('\n')
		if !next(s) {
			if s.sc != nil && s.sc.Err() != nil {
				return s.sc.Err()
			}
			live = append(live[:least], live[least+1:]...)
		}
	}
	return nil
}

// indexFile reads the WARC file at path and writes its index. It indexes the
// records in whole gzip members up to the first member that is incomplete or
// damaged (a file cut short by a crash), and returns how many lines it wrote,
// how many bytes it read as whole members and the file's size.
func indexFile(path string) (lines int, good, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("warc: index: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, 0, 0, fmt.Errorf("warc: index: %w", err)
	}
	var entries []indexEntry
	var readErr error
	good, _ = scanMembers(&errReader{r: f, err: &readErr}, maxHTTPHead, func(rec *Record, offset, length int64) {
		if rec.Type != typeResponse && rec.Type != typeRevisit {
			return
		}
		e := newIndexEntry(rec.Type, rec.Get("WARC-Target-URI"), rec.Get("WARC-Date"), rec.Block, rec.Get("WARC-Payload-Digest"))
		e.offset, e.length = offset, length
		entries = append(entries, e)
	})
	if readErr != nil {
		// An I/O error is not the end of the file: do not write a short index.
		return 0, good, st.Size(), fmt.Errorf("warc: index: read %s: %w", path, readErr)
	}
	if err := writeIndex(path, entries); err != nil {
		return 0, good, st.Size(), err
	}
	return len(entries), good, st.Size(), nil
}

// errReader remembers the first error of r other than the end of input.
type errReader struct {
	r   io.Reader
	err *error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && *e.err == nil {
		*e.err = err
	}
	return n, err
}
