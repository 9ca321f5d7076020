package simweb

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"time"
)

// LogEntry is one request as the web saw it. In JSON the field names are
// snake_case and times are RFC 3339 with nanoseconds.
type LogEntry struct {
	// Start is taken when the handler begins, End just before the last
	// bytes of the answer are flushed to the connection (no client can
	// have read the whole answer earlier).
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`

	Method string `json:"method"`
	Host   string `json:"host"` // the Host header as sent
	Path   string `json:"path"` // r.URL.RequestURI()
	// Status is the response status, or 0 when the client went away
	// before the answer (during the latency, or while waiting for or
	// holding a worker of a Capacity). Refusals of a RateLimit, a Capacity or an
	// Outage are logged with their status (503, 429 …).
	Status int    `json:"status"`
	Bytes  int64  `json:"bytes"` // body bytes written, after compression
	Remote string `json:"remote"`
	// Local is the server address that took the request, "" when unknown
	// (as under httptest.NewRecorder).
	Local string `json:"local"`

	UserAgent       string `json:"user_agent"`
	From            string `json:"from"`
	Accept          string `json:"accept"`
	AcceptEncoding  string `json:"accept_encoding"`
	ContentEncoding string `json:"content_encoding"` // of the response
	IfNoneMatch     string `json:"if_none_match"`
	IfModifiedSince string `json:"if_modified_since"`
	Cookie          string `json:"cookie"` // a polite crawler sends none

	// Wait is the time the request waited for a worker of a Capacity
	// (host and address), in nanoseconds in JSON; 0 without one.
	Wait time.Duration `json:"wait_ns,omitempty"`
}

// Requests returns a copy of the request log, in order of completion.
//
// A request is logged when its handler has flushed the body, which can be
// a moment after the client has read the response: call Drain (or
// Server.Close, which waits for handlers) before reading a log that must
// be complete.
func (w *Web) Requests() []LogEntry {
	w.log.Lock()
	defer w.log.Unlock()
	return append([]LogEntry(nil), w.log.entries...)
}

// ResetLog empties the in-memory request log.
func (w *Web) ResetLog() {
	w.log.Lock()
	defer w.log.Unlock()
	w.log.entries = nil
}

// Drain waits until no request is in flight, or ctx is done.
func (w *Web) Drain(ctx context.Context) error {
	for {
		w.log.Lock()
		if w.log.inflight == 0 {
			w.log.Unlock()
			return nil
		}
		if w.log.idle == nil {
			w.log.idle = make(chan struct{})
		}
		idle := w.log.idle
		w.log.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// begin counts a request in flight until record is called for it.
func (w *Web) begin() {
	w.log.Lock()
	defer w.log.Unlock()
	w.log.inflight++
}

// record appends e to the log, writes it to Config.Log and ends the
// request begun with begin.
func (w *Web) record(e LogEntry) {
	w.log.Lock()
	defer w.log.Unlock()
	w.log.entries = append(w.log.entries, e)
	w.log.inflight--
	if w.log.inflight == 0 && w.log.idle != nil {
		close(w.log.idle)
		w.log.idle = nil
	}
	if w.cfg.Log != nil {
		line, err := json.Marshal(e)
		if err == nil {
			line = append(line, '\n')
			w.cfg.Log.Write(line) // a failing log must not fail the web
		}
	}
}

// newLogEntry fills in what the request tells.
func newLogEntry(r *http.Request, start time.Time) LogEntry {
	e := LogEntry{
		Start:           start,
		Method:          r.Method,
		Host:            r.Host,
		Path:            r.URL.RequestURI(),
		Remote:          r.RemoteAddr,
		UserAgent:       r.Header.Get("User-Agent"),
		From:            r.Header.Get("From"),
		Accept:          r.Header.Get("Accept"),
		AcceptEncoding:  r.Header.Get("Accept-Encoding"),
		IfNoneMatch:     r.Header.Get("If-None-Match"),
		IfModifiedSince: r.Header.Get("If-Modified-Since"),
		Cookie:          r.Header.Get("Cookie"),
	}
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		e.Local = a.String()
	}
	return e
}

// countingWriter remembers the status and counts the body bytes of a
// response.
type countingWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	last   byte // the last byte written, held back until flush while held
	held   bool
}

func (c *countingWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

// Write passes b on but for its last byte, which waits for the next Write
// or for flush. The log's End is stamped before flush, so the client cannot
// have the whole answer before End: net/http's buffers pass a large write
// straight to the connection, and a handler descheduled between its last
// write and the stamp made a polite client look impolite (two requests to
// an address seemed to overlap, by microseconds, in TestPerAddressLimit).
func (c *countingWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	if len(b) == 0 {
		return 0, nil
	}
	if err := c.release(); err != nil {
		return 0, err
	}
	n, err := c.ResponseWriter.Write(b[:len(b)-1])
	c.bytes += int64(n)
	if err != nil {
		return n, err
	}
	c.last, c.held = b[len(b)-1], true
	return len(b), nil
}

// release writes the byte held back, if any.
func (c *countingWriter) release() error {
	if !c.held {
		return nil
	}
	c.held = false
	n, err := c.ResponseWriter.Write([]byte{c.last})
	c.bytes += int64(n)
	return err
}

func (c *countingWriter) flush() {
	c.release()
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
