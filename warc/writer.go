package warc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/flate"
)

// OpenSuffix is appended to the name of a file while it is being written.
const OpenSuffix = ".open"

// Defaults of [Options].
const (
	DefaultPrefix      = "gentlecrawl"
	DefaultMaxFileSize = 1 << 30 // 1 GiB, the size WARC 1.1 Annex C recommends
	DefaultSoftware    = "gentlecrawl"
)

// Errors returned by [Writer].
var (
	// ErrClosed is returned by Write, Flush and Sync after Close.
	ErrClosed = errors.New("warc: writer closed")
	// ErrInvalidExchange wraps every reason an [Exchange] cannot be written.
	ErrInvalidExchange = errors.New("warc: invalid exchange")
)

// Options configures a [Writer]. The zero value works except for Dir.
type Options struct {
	// Dir is the directory the files are written to. It must exist.
	Dir string
	// Prefix starts every file name. The default is "gentlecrawl".
	Prefix string
	// MaxFileSize is the size in bytes (compressed, on disk) after which a file is
	// closed and the next exchange starts a new one. A file can exceed it by one
	// exchange, because the two records of an exchange are never split. The default
	// is 1 GiB.
	MaxFileSize int64
	// Software is the "software" field of each warcinfo record, e.g.
	// "gentlecrawl/0.1.0". The default is "gentlecrawl".
	Software string
	// Info holds further warcinfo fields (WARC 1.1 Annex B), e.g. "robots",
	// "operator", "http-header-user-agent", written in sorted key order after
	// "software", "format" and "conformsTo", which it may not redefine.
	Info map[string]string
	// Now is the clock for WARC-Date defaults, warcinfo dates and file names. The
	// default is time.Now.
	Now func() time.Time
}

// Exchange is one HTTP request and its response, as they crossed the wire.
type Exchange struct {
	// TargetURI is the URI that was requested (WARC-Target-URI). Required.
	TargetURI string
	// Date is when the exchange began (WARC-Date). The zero value means now.
	Date time.Time
	// IP is the address of the server (WARC-IP-Address). Optional.
	IP string
	// Request is the HTTP request message as sent: request line, header fields,
	// the empty line, and the body if there was one. Required.
	Request []byte
	// Response is the HTTP response message: status line, header fields, the empty
	// line, then the body as received (content-encoded, not transfer-encoded).
	// For a revisit it holds the 304 status line and header fields. Required.
	Response []byte
	// ResponseBody, when not nil, is the body of the response, and Response
	// holds only what comes before it (status line, header fields and the
	// empty line): the record is the same as with the two joined in
	// Response, without the caller joining them. Ignored for a revisit.
	ResponseBody []byte
	// Truncated is the WARC-Truncated value when the body was cut short: "length",
	// "time", "disconnect" or "unspecified" (WARC 1.1 §5.13); "" if whole.
	Truncated string

	// Revisit makes the second record a revisit record with the server-not-modified
	// profile (WARC 1.1 §6.7.3) instead of a response record.
	Revisit bool
	// RefersTo is the WARC-Record-ID of the earlier capture (WARC-Refers-To), as
	// returned by [Writer.Write]. Revisit only; optional.
	RefersTo string
	// RefersToTargetURI is the earlier capture's URI (WARC-Refers-To-Target-URI).
	// Revisit only; optional.
	RefersToTargetURI string
	// RefersToDate is the earlier capture's date (WARC-Refers-To-Date). Revisit
	// only; zero if unknown.
	RefersToDate time.Time
	// RefersToPayloadDigest is the earlier capture's WARC-Payload-Digest, written as
	// the revisit record's WARC-Payload-Digest. Revisit only; optional.
	RefersToPayloadDigest string
}

// Writer writes WARC 1.1 records, each its own gzip member, into
// PREFIX-YYYYMMDDhhmmss-SERIAL.warc.gz files in one directory. A file being written
// is named with the suffix ".open", which is dropped by a rename when the file is
// closed (on rotation or Close); every file starts with a warcinfo record.
//
// When it closes a file, the Writer writes its CDXJ index beside it, named as
// [IndexPath] says: one line per response and revisit record, in the form pywb
// reads (a [SURT] key, a 14-digit timestamp and a JSON object with url, mime,
// status, digest, length, offset and filename), sorted. Up to 65,536 entries are
// kept in memory, about 200 bytes each plus the URL; past that they are sorted and
// spilled to temporary run files beside the index, merged when the file closes, so
// the memory an index costs is bounded whatever the number of exchanges.
//
// A Writer is created with [Create], opens its first file on the first Write, and
// must be closed with Close. It is safe for concurrent use: records are compressed
// outside the lock, so writers on several goroutines compress in parallel.
//
// Every Write hands its bytes to the operating system before it returns, so a crash
// of the process loses nothing already written; a crash of the machine may lose what
// was not Synced. [Recover] closes out the files either leaves behind.
type Writer struct {
	dir      string
	prefix   string
	maxSize  int64
	now      func() time.Time
	infoBody []byte // warcinfo block, the same for every file

	mu struct {
		sync.Mutex
		closed bool
		err    error // sticky: the current file holds a partial exchange
		// rotateErr is a failure to close a full file after the exchange that
		// filled it was written; the next Write or Close reports it, so that an
		// error from Write always means the exchange was not written.
		rotateErr error
		f         *os.File // nil between files
		path      string   // path of f, ending in OpenSuffix
		size      int64    // bytes in f
		// infoID is the warcinfo record ID of the current file or, when no file is
		// open, of the next one, so Write can encode records before it knows
		// whether a file must be opened.
		infoID string
		files  []string
		// index holds the index entries of the records in f, written beside the
		// file when it is closed; past maxIndexEntries they are spilled, sorted,
		// to the run files indexRuns. indexErr is a failure to spill: the file
		// then gets no index from the Writer, and Recover makes it.
		index     []indexEntry
		indexRuns []string
		indexErr  error
		// written counts the successful writes, over all files;
		// fresh says the current file was created since the last
		// SyncWritten, whose directory entry must be synced too.
		written uint64
		fresh   bool
	}

	// syncMu serialises SyncWritten; synced is the value of mu.written
	// its last fsync covered.
	syncMu sync.Mutex
	synced uint64
}

// Create returns a Writer that writes into opts.Dir. It checks that the directory
// exists and is writable; the first file is created by the first Write.
func Create(opts Options) (*Writer, error) {
	if opts.Dir == "" {
		return nil, errors.New("warc: Options.Dir is empty")
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if strings.ContainsAny(opts.Prefix, `/\`) || !validValue(opts.Prefix) {
		return nil, fmt.Errorf("warc: invalid file name prefix %q", opts.Prefix)
	}
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = DefaultMaxFileSize
	}
	if opts.Software == "" {
		opts.Software = DefaultSoftware
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	info, err := warcinfoBody(opts.Software, opts.Info)
	if err != nil {
		return nil, err
	}

	st, err := os.Stat(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("warc: directory for WARC files: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("warc: directory for WARC files: %s is not a directory", opts.Dir)
	}
	probe, err := os.CreateTemp(opts.Dir, ".warc-probe-*")
	if err != nil {
		return nil, fmt.Errorf("warc: directory for WARC files is not writable: %w", err)
	}
	probe.Close()
	os.Remove(probe.Name())

	w := &Writer{
		dir:      opts.Dir,
		prefix:   opts.Prefix,
		maxSize:  opts.MaxFileSize,
		now:      opts.Now,
		infoBody: info,
	}
	w.mu.infoID = newRecordID()
	return w, nil
}

// warcinfoBody renders the application/warc-fields block of the warcinfo records.
func warcinfoBody(software string, extra map[string]string) ([]byte, error) {
	fields := []field{
		{"software", software},
		{"format", "WARC File Format 1.1"},
		{"conformsTo", "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"},
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !validToken(k) {
			return nil, fmt.Errorf("warc: invalid warcinfo field name %q", k)
		}
		if slices.ContainsFunc(fields[:3], func(f field) bool { return strings.EqualFold(f.name, k) }) {
			return nil, fmt.Errorf("warc: warcinfo field %q is set by the writer", k)
		}
		fields = append(fields, field{k, extra[k]})
	}
	var b bytes.Buffer
	for _, f := range fields {
		if !validValue(f.value) {
			return nil, fmt.Errorf("warc: warcinfo field %q: value contains a control character", f.name)
		}
		b.WriteString(f.name + ": " + f.value + crlf)
	}
	return b.Bytes(), nil
}

// validate checks ex before anything is written.
func (ex *Exchange) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidExchange, fmt.Sprintf(format, args...))
	}
	switch {
	case ex.TargetURI == "":
		return bad("TargetURI is empty")
	case !validValue(ex.TargetURI):
		return bad("TargetURI contains a control character")
	case len(ex.TargetURI)+len(ex.RefersTo)+len(ex.RefersToTargetURI)+len(ex.RefersToPayloadDigest) > MaxHeaderSize/2:
		// Keep every record header readable by our own Reader.
		return bad("URIs longer than %d bytes together", MaxHeaderSize/2)
	case len(ex.Request) == 0:
		return bad("Request is empty")
	case len(ex.Response) == 0:
		return bad("Response is empty")
	}
	if ex.IP != "" {
		if _, err := netip.ParseAddr(ex.IP); err != nil {
			return bad("IP: %v", err)
		}
	}
	switch ex.Truncated {
	case "", "length", "time", "disconnect", "unspecified":
	default:
		return bad("Truncated is %q, want length, time, disconnect or unspecified", ex.Truncated)
	}
	if ex.Revisit {
		for _, v := range []string{ex.RefersTo, ex.RefersToTargetURI, ex.RefersToPayloadDigest} {
			if !validValue(v) {
				return bad("revisit reference %q contains a control character", v)
			}
		}
	}
	return nil
}

// Write appends a request record and a response (or revisit) record for one
// exchange, linked both ways with WARC-Concurrent-To, and returns the WARC-Record-ID
// of the response (or revisit) record. The two records are written contiguously in
// the same file. If the file then holds MaxFileSize bytes or more, it is closed.
//
// An error means the exchange was not written. A failure to close a full file is
// reported by the next call to Write or Close.
func (w *Writer) Write(ex *Exchange) (recordID string, err error) {
	if err := ex.validate(); err != nil {
		return "", err
	}
	date := ex.Date
	if date.IsZero() {
		date = w.now()
	}
	reqID, respID := newRecordID(), newRecordID()

	buf := getBuffer()
	defer putBuffer(buf)
	for {
		w.mu.Lock()
		infoID, err := w.mu.infoID, w.usableLocked()
		w.mu.Unlock()
		if err != nil {
			return "", err
		}

		buf.Reset()
		reqLen, entry := encodeExchange(buf, ex, date, reqID, respID, infoID)

		w.mu.Lock()
		if err := w.usableLocked(); err != nil {
			w.mu.Unlock()
			return "", err
		}
		if infoID != w.mu.infoID {
			// Another Write rotated the file while we were encoding: the records
			// name the wrong warcinfo record. Rare (once per file); encode again.
			w.mu.Unlock()
			continue
		}
		if err := w.mu.rotateErr; err != nil {
			w.mu.rotateErr = nil
			w.mu.Unlock()
			return "", err
		}
		err = w.appendLocked(buf.Bytes(), reqLen, entry)
		w.mu.Unlock()
		if err != nil {
			return "", err
		}
		return respID, nil
	}
}

func (w *Writer) usableLocked() error {
	if w.mu.closed {
		return ErrClosed
	}
	return w.mu.err
}

// appendLocked writes one encoded exchange to the current file, opening one if none
// is open and closing it when it has reached the maximum size. The exchange's
// request record is the first reqLen bytes of p, its response or revisit record the
// rest, described by entry for the index.
func (w *Writer) appendLocked(p []byte, reqLen int, entry indexEntry) error {
	if w.mu.f == nil {
		if err := w.openLocked(); err != nil {
			return err
		}
	}
	start := w.mu.size
	if err := w.writeLocked(p); err != nil {
		return err
	}
	entry.offset = start + int64(reqLen)
	entry.length = int64(len(p) - reqLen)
	if w.mu.indexErr == nil {
		w.mu.index = append(w.mu.index, entry)
		if len(w.mu.index) >= maxIndexEntries {
			run, err := spillIndex(strings.TrimSuffix(w.mu.path, OpenSuffix), w.mu.index)
			w.mu.index = w.mu.index[:0]
			if err != nil {
				w.mu.indexErr = err
			} else {
				w.mu.indexRuns = append(w.mu.indexRuns, run)
			}
		}
	}
	if w.mu.size >= w.maxSize {
		w.mu.rotateErr = w.closeFileLocked()
	}
	return nil
}

// writeLocked appends p to the current file. A short write is cut off again, so
// the file never ends in part of a record while the writer is alive.
func (w *Writer) writeLocked(p []byte) error {
	n, err := w.mu.f.Write(p)
	if err == nil {
		w.mu.size += int64(n)
		w.mu.written++
		return nil
	}
	err = fmt.Errorf("warc: write %s: %w", w.mu.path, err)
	if n > 0 {
		// The file is opened O_APPEND, so after the truncation the next write
		// lands at the old end.
		if terr := w.mu.f.Truncate(w.mu.size); terr != nil {
			w.mu.err = errors.Join(err, fmt.Errorf("warc: could not cut back the partial record: %w", terr))
			return w.mu.err
		}
	}
	return err
}

// fileNameRE matches the names this package gives its files, whatever the prefix;
// the second group is the serial.
var fileNameRE = regexp.MustCompile(`-(\d{14})-(\d{5,})\.warc\.gz(` + regexp.QuoteMeta(OpenSuffix) + `)?$`)

// nextSerial returns one more than the highest serial of a WARC file in dir, so a
// resumed crawl continues the numbering instead of overwriting.
func nextSerial(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	next := 0
	for _, e := range entries {
		m := fileNameRE.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		if n, err := strconv.Atoi(m[2]); err == nil && n >= next {
			next = n + 1
		}
	}
	return next, nil
}

// openLocked creates the next file and writes its warcinfo record.
func (w *Writer) openLocked() error {
	serial, err := nextSerial(w.dir)
	if err != nil {
		return fmt.Errorf("warc: scan for existing files: %w", err)
	}
	now := w.now()
	var f *os.File
	var name, path string
	for tries := 0; ; tries++ {
		name = fmt.Sprintf("%s-%s-%05d.warc.gz", w.prefix, now.UTC().Format("20060102150405"), serial)
		path = filepath.Join(w.dir, name+OpenSuffix)
		_, err := os.Lstat(filepath.Join(w.dir, name))
		if err == nil {
			err = fs.ErrExist
		} else if errors.Is(err, fs.ErrNotExist) {
			f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
		}
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || tries == 100 {
			return fmt.Errorf("warc: create file: %w", err)
		}
		serial++ // someone else took this name since the scan
	}

	w.mu.f, w.mu.path, w.mu.size = f, path, 0
	w.mu.fresh = true
	w.mu.files = append(w.mu.files, path)

	var buf bytes.Buffer
	e := getEncoder()
	e.writeRecord(&buf, []field{
		{"WARC-Type", typeWarcinfo},
		{"WARC-Record-ID", w.mu.infoID},
		{"WARC-Date", formatDate(now)},
		{"WARC-Filename", name},
		{"WARC-Block-Digest", sha1Digest(w.infoBody)},
		{"Content-Type", contentTypeFields},
	}, w.infoBody, nil, 0)
	putEncoder(e)
	if err := w.writeLocked(buf.Bytes()); err != nil {
		f.Close()
		os.Remove(path)
		w.mu.f = nil
		w.mu.files = w.mu.files[:len(w.mu.files)-1]
		if w.mu.err != nil {
			w.mu.err = nil // the damaged file is gone
		}
		return err
	}
	return nil
}

// closeFileLocked fsyncs, closes and renames the current file, and writes its
// index. The next file gets a new warcinfo record ID.
func (w *Writer) closeFileLocked() error {
	f, path, index, runs, indexErr := w.mu.f, w.mu.path, w.mu.index, w.mu.indexRuns, w.mu.indexErr
	w.mu.f, w.mu.index, w.mu.indexRuns, w.mu.indexErr = nil, nil, nil, nil
	w.mu.infoID = newRecordID()

	// fsync before the rename, so a crash never leaves a final name on a file
	// whose data did not reach the disk.
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("warc: close %s: %w", path, err)
	}
	final := strings.TrimSuffix(path, OpenSuffix)
	if err := os.Rename(path, final); err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	w.mu.files[len(w.mu.files)-1] = final
	// After the rename: a crash in between leaves a closed file without an
	// index, which Recover makes. Failing here leaves the same.
	if indexErr != nil {
		for _, r := range runs {
			os.Remove(r)
		}
		return errors.Join(indexErr, syncDir(w.dir))
	}
	err = writeIndex(final, index, runs...)
	return errors.Join(err, syncDir(w.dir))
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	err = d.Sync()
	d.Close()
	if err != nil {
		return fmt.Errorf("warc: sync directory %s: %w", dir, err)
	}
	return nil
}

// Flush makes the data written so far reach the operating system. Write already
// hands every exchange to the operating system before it returns, so Flush only
// reports whether the writer is usable; it exists so callers need not rely on that.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.usableLocked()
}

// Sync flushes and fsyncs the current file.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usableLocked(); err != nil {
		return err
	}
	if w.mu.f == nil {
		return nil
	}
	if err := w.mu.f.Sync(); err != nil {
		return fmt.Errorf("warc: sync %s: %w", w.mu.path, err)
	}
	return nil
}

// fileSync fsyncs a file; tests count the calls.
var fileSync = (*os.File).Sync

// SyncWritten makes every exchange whose Write returned before the call
// durable: it fsyncs the current file if anything was written since the
// last SyncWritten, and the directory when the file is new since then
// (files closed by rotation were fsynced as they were closed). Concurrent
// callers share fsyncs: one whose writes an fsync already covered returns
// without another. A crawler calls it before telling its frontier that the
// pages are done, so that a power loss cannot leave a page done without its
// record.
func (w *Writer) SyncWritten() error {
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	w.mu.Lock()
	if err := w.usableLocked(); err != nil {
		w.mu.Unlock()
		return err
	}
	f, path, written, fresh := w.mu.f, w.mu.path, w.mu.written, w.mu.fresh
	w.mu.fresh = false
	w.mu.Unlock()
	if f == nil {
		// Between files: every one written to was fsynced as it closed.
		w.synced = written
		return nil
	}
	if written == w.synced {
		return nil
	}
	// Outside mu: Write goes on meanwhile.
	err := fileSync(f)
	if errors.Is(err, os.ErrClosed) {
		// Rotated meanwhile: closing it fsynced it, or says why not.
		w.mu.Lock()
		err = w.mu.rotateErr
		w.mu.Unlock()
	} else if err == nil && fresh {
		err = syncDir(w.dir)
	}
	if err != nil {
		if fresh {
			w.mu.Lock()
			if w.mu.f == f {
				w.mu.fresh = true // still to be synced
			}
			w.mu.Unlock()
		}
		return fmt.Errorf("warc: sync %s: %w", path, err)
	}
	w.synced = written
	return nil
}

// Close closes the current file and renames it to drop ".open". Calling it again
// does nothing. If a failed write left a partial record that could not be cut off,
// Close leaves the file under its .open name for [Recover] and returns that error.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.closed {
		return nil
	}
	w.mu.closed = true
	rotateErr := w.mu.rotateErr
	w.mu.rotateErr = nil
	if w.mu.f == nil {
		return rotateErr
	}
	if w.mu.err != nil {
		w.mu.f.Close()
		for _, r := range w.mu.indexRuns {
			os.Remove(r)
		}
		w.mu.f, w.mu.index, w.mu.indexRuns = nil, nil, nil
		return errors.Join(rotateErr, w.mu.err)
	}
	return errors.Join(rotateErr, w.closeFileLocked())
}

// Files returns the paths (Dir joined with the name) of the files this Writer has
// created so far, in order: final names for closed files, the .open name for the
// file being written.
func (w *Writer) Files() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.mu.files)
}

// encodeExchange appends the request record and the response or revisit record of
// ex to dst, each as its own gzip member. It returns the length of the request
// record's member and the index entry of the other, without offset and length.
func encodeExchange(dst *bytes.Buffer, ex *Exchange, date time.Time, reqID, respID, infoID string) (reqLen int, entry indexEntry) {
	common := func(typ, id, concurrent string) []field {
		fs := []field{
			{"WARC-Type", typ},
			{"WARC-Record-ID", id},
			{"WARC-Warcinfo-ID", infoID},
			{"WARC-Concurrent-To", concurrent},
			{"WARC-Target-URI", ex.TargetURI},
			{"WARC-Date", formatDate(date)},
		}
		if ex.IP != "" {
			fs = append(fs, field{"WARC-IP-Address", ex.IP})
		}
		return fs
	}

	req := common(typeRequest, reqID, respID)
	req = append(req,
		field{"WARC-Block-Digest", sha1Digest(ex.Request)},
		field{"Content-Type", contentTypeRequest})
	e := getEncoder()
	defer putEncoder(e)
	before := dst.Len()
	e.writeRecord(dst, req, ex.Request, nil, 0)
	reqLen = dst.Len() - before

	var resp []field
	typ, payloadDigest, stored := typeResponse, "", 0
	if ex.Revisit {
		resp = common(typeRevisit, respID, reqID)
		resp = append(resp, field{"WARC-Profile", ProfileServerNotModified})
		if ex.RefersTo != "" {
			resp = append(resp, field{"WARC-Refers-To", ex.RefersTo})
		}
		if ex.RefersToTargetURI != "" {
			resp = append(resp, field{"WARC-Refers-To-Target-URI", ex.RefersToTargetURI})
		}
		if !ex.RefersToDate.IsZero() {
			resp = append(resp, field{"WARC-Refers-To-Date", formatDate(ex.RefersToDate)})
		}
	} else {
		resp = common(typeResponse, respID, reqID)
	}
	if ex.Truncated != "" {
		resp = append(resp, field{"WARC-Truncated", ex.Truncated})
	}
	// The block is msg followed by more.
	msg, more := ex.Response, []byte(nil)
	if !ex.Revisit && ex.ResponseBody != nil {
		if _, rest, ok := SplitHTTP(msg); ok && len(rest) == 0 {
			more = ex.ResponseBody
		} else {
			// Response does not end where the HTTP head does: the record is
			// that of the two joined, whatever they hold.
			msg = append(append(make([]byte, 0, len(msg)+len(ex.ResponseBody)), msg...), ex.ResponseBody...)
		}
	}
	resp = append(resp, field{"WARC-Block-Digest", sha1Digest2(msg, more)})
	head, body := msg, more
	if ex.Revisit {
		typ, payloadDigest = typeRevisit, ex.RefersToPayloadDigest
	} else if more != nil {
		payloadDigest = sha1Digest(more)
	} else if h, b, ok := SplitHTTP(msg); ok {
		payloadDigest = sha1Digest(b)
		head, body = h, b
	}
	if !ex.Revisit && len(body) > 0 && compressedBody(head) {
		stored = len(body)
	}
	if payloadDigest != "" {
		resp = append(resp, field{"WARC-Payload-Digest", payloadDigest})
	}
	resp = append(resp, field{"Content-Type", contentTypeResponse})
	e.writeRecord(dst, resp, head, body, stored)
	return reqLen, newIndexEntry(typ, ex.TargetURI, formatDate(date), head, payloadDigest)
}

// encoder compresses records. It holds a deflate compressor of several
// hundred KB of state, reused through Reset, and a buffer for record headers.
type encoder struct {
	fw   *flate.Writer // the default level, for records with a body to compress
	fast *flate.Writer // Huffman only, for records of headers alone (maxHeadOnly) that headCode cannot code; made when first needed
	hdr  []byte
}

// encoderFree keeps encoders for reuse. A sync.Pool is emptied by every
// garbage collection, and a crawl collects often, so the compressors were
// being built again for nearly every record, and they were most of what a
// crawl allocated. A bounded free list keeps them across collections.
//
// It is a stack, last in first out: the encoder given back last is the one
// whose tables are still in the processor's caches. (A queue handed out the
// one used longest ago, every time, from up to 64 of some hundred KiB each.)
var encoderFree struct {
	sync.Mutex
	list []*encoder
}

const maxFreeEncoders = 64

func getEncoder() *encoder {
	encoderFree.Lock()
	if n := len(encoderFree.list); n > 0 {
		e := encoderFree.list[n-1]
		encoderFree.list = encoderFree.list[:n-1]
		encoderFree.Unlock()
		return e
	}
	encoderFree.Unlock()
	fw, _ := flate.NewWriter(nil, flate.DefaultCompression) // the level is valid
	return &encoder{fw: fw}
}

func putEncoder(e *encoder) {
	if cap(e.hdr) > 64<<10 {
		e.hdr = nil
	}
	encoderFree.Lock()
	if len(encoderFree.list) < maxFreeEncoders {
		encoderFree.list = append(encoderFree.list, e)
	}
	encoderFree.Unlock()
}

// gzipHeader starts every gzip member written: no name, comment or
// modification time, extra flags 0 and OS 255 (unknown): what a gzip writer
// at the default level writes (RFC 1952 §2.3).
var gzipHeader = [10]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255}

// maxHeadOnly is the largest compressed part of a record, its headers,
// that writeRecord Huffman-codes without looking for matches.
const maxHeadOnly = 16 << 10

// maxStored is the largest block a stored deflate block holds (RFC 1951
// §3.2.4).
const maxStored = 1<<16 - 1

// writeRecord appends one record, whose block is head followed by body, to
// dst as a complete gzip member. When stored > 0, the last stored bytes of
// body (at most all of it) are already compressed (a content-encoded HTTP
// body, an image) and are written in stored deflate blocks instead of being
// run through the compressor, which would spend as long on them as on text
// for nothing: the member holds the same record, in about as many bytes
// (5 more per 64 KiB and a few for the switch, and the compressor would
// have added some too).
func (e *encoder) writeRecord(dst *bytes.Buffer, fields []field, head, body []byte, stored int) {
	e.hdr = appendHeader(e.hdr[:0], fields, len(head)+len(body))
	dst.Write(gzipHeader[:])
	crc := crc32.ChecksumIEEE(e.hdr)
	crc = crc32.Update(crc, crc32.IEEETable, head)
	crc = crc32.Update(crc, crc32.IEEETable, body)
	crc = crc32.Update(crc, crc32.IEEETable, []byte(crlf+crlf))
	headOnly := len(body) == stored && len(e.hdr)+len(head) <= maxHeadOnly
	// Only headers to compress, the WARC header and an HTTP head (a request
	// record, or a response whose body is stored), and they are header
	// text: one block coded with headCode, made once for such text, with
	// the body in stored blocks after it. A compressor would build a
	// Huffman code for each record, which costs more than the rest of
	// writing it (see headCode).
	// A record whose body ends in stored bytes has its closing CRLFs in the
	// last stored block; any other ends its compressed part with them.
	final := stored == 0
	var tail []byte
	if final {
		tail = []byte(crlf + crlf)
	}
	if !headOnly || !headCode.encode(dst, final, e.hdr, head, tail) {
		e.compress(dst, head, body[:len(body)-stored], tail, headOnly)
	}
	if !final {
		dst.Grow(stored + stored/maxStored*5 + 32)
		appendStored(dst, body[len(body)-stored:], crlf+crlf)
	}
	var t [8]byte
	binary.LittleEndian.PutUint32(t[:4], crc)
	binary.LittleEndian.PutUint32(t[4:], uint32(len(e.hdr)+len(head)+len(body)+len(crlf+crlf)))
	dst.Write(t[:])
}

// compress appends the compressed part of a record: e.hdr, head and
// body, then tail. An empty tail means stored blocks follow: the part then
// ends on a byte boundary with an empty stored block, not the last (a
// flush); otherwise it ends the deflate stream. headOnly says that only
// headers are compressed.
func (e *encoder) compress(dst *bytes.Buffer, head, body, tail []byte, headOnly bool) {
	fw := e.fw
	if headOnly {
		// Headers with a byte headCode has no code for: Huffman-coded
		// without looking for matches, a few hundred bytes.
		if e.fast == nil {
			e.fast, _ = flate.NewWriter(nil, flate.HuffmanOnly) // the level is valid
		}
		fw = e.fast
	}
	// Writes to a bytes.Buffer cannot fail.
	fw.Reset(dst)
	fw.Write(e.hdr)
	fw.Write(head)
	fw.Write(body)
	if len(tail) == 0 {
		fw.Flush()
		return
	}
	fw.Write(tail)
	fw.Close()
}

// gzipMagic begins every gzip member (RFC 1952 §2.3.1).
var gzipMagic = []byte{0x1f, 0x8b, 8}

// appendStored appends p and then tail to dst in stored deflate blocks, the
// last one final; dst must end on a byte boundary of a deflate stream.
//
// Readers that split a file between workers (internal/export) look for
// members where the gzip magic is, which in compressed data is rare; in a
// stored block it is not (every gzipped body begins with it). So no block
// holds the whole magic: a block ends after the 1f of one, and no block
// header makes one with the bytes around it.
func appendStored(dst *bytes.Buffer, p []byte, tail string) {
	for {
		n := min(len(p), maxStored)
		if i := bytes.Index(p[:min(len(p), n+len(gzipMagic)-1)], gzipMagic); i >= 0 {
			n = i + 1
		}
		final := n == len(p) && n+len(tail) <= maxStored
		// The header, between the two bytes before it and the first two of
		// its block.
		var w [9]byte
		b := dst.Bytes()
		copy(w[:2], b[max(len(b)-2, 0):])
		for {
			size := n
			if final {
				size += len(tail)
			}
			w[2] = 0
			if final {
				w[2] = 1 // BFINAL
			}
			binary.LittleEndian.PutUint16(w[3:], uint16(size))
			binary.LittleEndian.PutUint16(w[5:], ^uint16(size))
			next := copy(w[7:], p[:n])
			if final && next < 2 {
				next += copy(w[7+next:], tail)
			}
			if n == 0 || !bytes.Contains(w[:7+next], gzipMagic) {
				break
			}
			// Rare: a shorter block has another header.
			n--
			final = false
		}
		dst.Write(w[2:7])
		dst.Write(p[:n])
		p = p[n:]
		if final {
			dst.WriteString(tail)
			return
		}
	}
}

// compressedBody reports whether the body of an HTTP response whose head is
// head is already compressed: it has a content coding, or its media type is
// a compressed format. Compressing such a body again saves nothing.
func compressedBody(head []byte) bool {
	if len(head) > maxHTTPHead {
		head = head[:maxHTTPHead]
	}
	_, head, _ = bytes.Cut(head, []byte("\n")) // the status line
	for len(head) > 0 {
		line := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		value = bytes.Trim(value, " \t\r")
		switch {
		case strings.EqualFold(string(name), "Content-Encoding"):
			if len(value) > 0 && !strings.EqualFold(string(value), "identity") {
				return true
			}
		case strings.EqualFold(string(name), "Content-Type"):
			mt, _, _ := bytes.Cut(value, []byte(";"))
			if compressedTypes[strings.ToLower(string(bytes.TrimRight(mt, " \t")))] {
				return true
			}
		}
	}
	return false
}

// compressedTypes are media types whose bytes are compressed already.
var compressedTypes = map[string]bool{
	"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true, "image/avif": true,
	"font/woff": true, "font/woff2": true,
	"video/mp4": true, "video/webm": true, "audio/mpeg": true, "audio/ogg": true, "audio/mp4": true,
	"application/zip": true, "application/gzip": true, "application/x-gzip": true,
	"application/zstd": true, "application/x-xz": true, "application/x-bzip2": true,
	"application/x-7z-compressed": true,
}

var bufferPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuffer() *bytes.Buffer { return bufferPool.Get().(*bytes.Buffer) }

func putBuffer(b *bytes.Buffer) {
	if b.Cap() > 4<<20 {
		return // let the collector have an outsized buffer
	}
	bufferPool.Put(b)
}
