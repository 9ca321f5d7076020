package apachetest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Entry is one line of the access log: one request as Apache saw it. The
// Apache format directive of each field is in parentheses.
type Entry struct {
	// Time is when the request ended (%{end:usec}t, microsecond
	// resolution); it began Duration earlier.
	Time time.Time
	// Site is the Name of the site that answered (%v, its ServerName).
	Site string
	// Method, URI and Proto are the three words of the request line as
	// sent (%r): "GET", "/a/b?c=d", "HTTP/1.1". URI is the request target,
	// path and query, not decoded.
	Method, URI, Proto string
	// Status is the final status (%>s).
	Status int
	// Bytes is the size of the body sent, after compression (%B): 0 for
	// a 304.
	Bytes int64
	// Duration is the time from the request's first byte to the end of
	// its logging (%D, microsecond resolution).
	Duration time.Duration
	// Remote and RemotePort are the client's address and port (%a,
	// %{remote}p). Requests with the same port came on the same
	// connection (unless it was closed and the port used again).
	Remote     string
	RemotePort int
	// ConnRequest is the request's number on its connection, from 1 (%k,
	// the keep-alive requests before it, plus one).
	ConnRequest int
	// Host, UserAgent, AcceptEncoding, IfNoneMatch and IfModifiedSince are
	// the request's headers of those names (%{Host}i, …), "" when absent.
	Host            string
	UserAgent       string
	AcceptEncoding  string
	IfNoneMatch     string
	IfModifiedSince string
	// ETag and ContentEncoding are the response's headers (%{ETag}o,
	// %{Content-Encoding}o) as sent: an ETag that mod_deflate changed
	// ends in -gzip".
	ETag            string
	ContentEncoding string
}

// Start is when Apache began reading the request: Time less Duration.
func (e Entry) Start() time.Time { return e.Time.Add(-e.Duration) }

// Path is the path of URI, without the query.
func (e Entry) Path() string {
	p, _, _ := strings.Cut(e.URI, "?")
	return p
}

// Entries reads the access log. Apache writes each line, unbuffered, when
// its request ends, which is after the response has been sent: a client
// that has just read a response may not find it yet (WaitEntries waits).
func (s *Server) Entries() ([]Entry, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, "access.log"))
	if os.IsNotExist(err) {
		return nil, nil // Apache creates it at startup; not yet
	}
	if err != nil {
		return nil, fmt.Errorf("apachetest: %w", err)
	}
	return parseLog(b)
}

// WaitEntries waits until the access log has at least n lines, or ctx is
// done, and returns its entries. A line that is being written is not
// read.
func (s *Server) WaitEntries(ctx context.Context, n int) ([]Entry, error) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		es, err := s.Entries()
		if err != nil || len(es) >= n {
			return es, err
		}
		select {
		case <-ctx.Done():
			return es, fmt.Errorf("apachetest: %d access log entries, waiting for %d: %w", len(es), n, ctx.Err())
		case <-tick.C:
		}
	}
}

// parseLog parses an access log in logFormat. A last line without its
// newline is still being written, and left out.
func parseLog(b []byte) ([]Entry, error) {
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	} else {
		b = nil
	}
	var out []Entry
	for n := 1; len(b) > 0; n++ {
		line, rest, _ := bytes.Cut(b, []byte("\n"))
		b = rest
		e, err := parseLine(string(line))
		if err != nil {
			return out, fmt.Errorf("apachetest: access.log line %d: %w: %q", n, err, line)
		}
		out = append(out, e)
	}
	return out, nil
}

func parseLine(line string) (Entry, error) {
	f := strings.Split(line, "\t")
	if len(f) != logFields {
		return Entry{}, fmt.Errorf("%d fields, want %d", len(f), logFields)
	}
	for i := range f {
		f[i] = unescape(f[i])
	}
	var (
		e    Entry
		errs []error
	)
	num := func(s string, set func(int64)) {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			errs = append(errs, err)
		}
		set(v)
	}
	num(f[0], func(v int64) { e.Time = time.UnixMicro(v) })
	e.Site = f[1]
	num(f[2], func(v int64) { e.Status = int(v) })
	// The request line: at most three words. One Apache refused may have
	// fewer, or none.
	e.Method, e.URI = f[3], ""
	if m, rest, ok := strings.Cut(f[3], " "); ok {
		e.Method = m
		e.URI, e.Proto, _ = strings.Cut(rest, " ")
	}
	num(f[4], func(v int64) { e.Bytes = v })
	num(f[5], func(v int64) { e.Duration = time.Duration(v) * time.Microsecond })
	e.Remote = f[6]
	num(f[7], func(v int64) { e.RemotePort = int(v) })
	num(f[8], func(v int64) { e.ConnRequest = int(v) + 1 })
	e.Host, e.UserAgent, e.AcceptEncoding = f[9], f[10], f[11]
	e.IfNoneMatch, e.IfModifiedSince = f[12], f[13]
	e.ETag, e.ContentEncoding = f[14], f[15]
	if len(errs) > 0 {
		return e, errs[0]
	}
	return e, nil
}

// unescape undoes Apache's log escaping (ap_escape_logitem): "-" for an
// absent value; \" and \\ for '"' and '\'; \b, \n, \r, \t, \v for those
// control characters; \xHH for other bytes outside printable ASCII.
func unescape(s string) string {
	if s == "-" {
		return ""
	}
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch c := s[i+1]; c {
		case '"', '\\':
			b.WriteByte(c)
		case 'b':
			b.WriteByte('\b')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'x':
			if i+3 < len(s) {
				if v, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
					b.WriteByte(byte(v))
					i += 3
					continue
				}
			}
			b.WriteByte(s[i])
			continue
		default:
			b.WriteByte(s[i])
			continue
		}
		i++
	}
	return b.String()
}
