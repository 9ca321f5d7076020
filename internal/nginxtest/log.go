package nginxtest

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

// Entry is one line of the access log: one request as nginx saw it.
type Entry struct {
	// Time is when the request ended ($msec, millisecond resolution);
	// it began Duration earlier.
	Time time.Time
	// Site is the Name of the site that answered ($server_name).
	Site   string
	Method string
	// URI is the request target as sent, path and query ($request_uri).
	URI    string
	Status int
	// Bytes is the size of the body sent, after compression
	// ($body_bytes_sent).
	Bytes int64
	// Duration is the time from the first byte read from the client to
	// the last byte sent ($request_time, millisecond resolution).
	Duration time.Duration
	// Remote is the client's address ($remote_addr).
	Remote string
	// Host is the Host header as sent ($http_host), "" without one.
	Host      string
	UserAgent string
	// Conn is the connection's serial number ($connection): requests
	// with the same one came on the same connection.
	Conn uint64
	// ConnRequest is the request's number on its connection, from 1
	// ($connection_requests).
	ConnRequest int
	// Limit is $limit_req_status: "PASSED" or "REJECTED" on a site with
	// a Limit ("DELAYED" cannot happen: the limit is nodelay), "" on
	// others.
	Limit string
}

// Start is when nginx began reading the request: Time less Duration.
func (e Entry) Start() time.Time { return e.Time.Add(-e.Duration) }

// Entries reads the access log. nginx writes each line, unbuffered, when
// its request ends, which is after the response has been sent: a client
// that has just read a response may not find it yet (WaitEntries waits).
func (s *Server) Entries() ([]Entry, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, "access.log"))
	if err != nil {
		return nil, fmt.Errorf("nginxtest: %w", err)
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
			return es, fmt.Errorf("nginxtest: %d access log entries, waiting for %d: %w", len(es), n, ctx.Err())
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
			return out, fmt.Errorf("nginxtest: access.log line %d: %w: %q", n, err, line)
		}
		out = append(out, e)
	}
	return out, nil
}

func parseLine(line string) (Entry, error) {
	f := strings.Split(line, "\t")
	if len(f) != strings.Count(logFormat, "\t")+1 {
		return Entry{}, fmt.Errorf("%d fields", len(f))
	}
	for i := range f {
		f[i] = unescape(f[i])
	}
	var (
		e    Entry
		errs []error
	)
	num := func(s string, parse func(string) error) {
		if err := parse(s); err != nil {
			errs = append(errs, err)
		}
	}
	num(f[0], func(s string) error {
		sec, ms, err := seconds(s)
		e.Time = time.Unix(sec, ms*int64(time.Millisecond))
		return err
	})
	e.Site, e.Method, e.URI = f[1], f[3], f[4]
	num(f[2], func(s string) (err error) { e.Status, err = strconv.Atoi(s); return })
	num(f[5], func(s string) (err error) { e.Bytes, err = strconv.ParseInt(s, 10, 64); return })
	num(f[6], func(s string) error {
		sec, ms, err := seconds(s)
		e.Duration = time.Duration(sec)*time.Second + time.Duration(ms)*time.Millisecond
		return err
	})
	e.Remote, e.Host, e.UserAgent = f[7], f[8], f[9]
	num(f[10], func(s string) (err error) { e.Conn, err = strconv.ParseUint(s, 10, 64); return })
	num(f[11], func(s string) (err error) { e.ConnRequest, err = strconv.Atoi(s); return })
	e.Limit = f[12]
	if len(errs) > 0 {
		return e, errs[0]
	}
	return e, nil
}

// seconds parses nginx's "1764585850.123" into seconds and milliseconds.
func seconds(s string) (sec, ms int64, err error) {
	whole, frac, ok := strings.Cut(s, ".")
	if !ok || len(frac) != 3 {
		return 0, 0, fmt.Errorf("bad seconds %q", s)
	}
	if sec, err = strconv.ParseInt(whole, 10, 64); err != nil {
		return 0, 0, err
	}
	if ms, err = strconv.ParseInt(frac, 10, 64); err != nil {
		return 0, 0, err
	}
	return sec, ms, nil
}

// unescape undoes nginx's log escaping: "-" for an empty value, \xHH for
// '"', '\' and bytes outside printable ASCII.
func unescape(s string) string {
	if s == "-" {
		return ""
	}
	if !strings.Contains(s, `\x`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			if v, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
