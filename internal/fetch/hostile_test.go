package fetch

// The hostile server: the ways a server can hurt a crawler, each with the
// reaction the fetcher must have. Servers that must break HTTP itself (bad
// chunk sizes, lying lengths, resets, giant heads) write raw bytes on a TCP
// connection of their own. Each test runs on http:// and https://
// (eachScheme): the two stacks of Client.Do must react alike; where
// https:// cannot be the same, the test says why.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// encode applies one content coding. "deflate" is zlib (RFC 9110);
// "rawdeflate" is what some servers send under the name "deflate".
// DEFLATE's default level makes bombs as dense as its best (128 MiB of
// zeros in 132,660 bytes of gzip against 130,104), in a tenth of the time
// under -race: 1.4 s against 10 s for each bomb.
func encode(t testing.TB, coding string, p []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	var w io.WriteCloser
	var err error
	switch coding {
	case "gzip", "x-gzip":
		w, err = gzip.NewWriterLevel(&b, gzip.DefaultCompression)
	case "deflate":
		w, err = zlib.NewWriterLevel(&b, zlib.DefaultCompression)
	case "rawdeflate":
		w, err = flate.NewWriter(&b, flate.DefaultCompression)
	case "br":
		// lgwin 24: the largest window a brotli stream may make us
		// allocate without the large-window extension.
		w = brotli.NewWriterOptions(&b, brotli.WriterOptions{Quality: 5, LGWin: 24})
	case "zstd":
		w, err = zstd.NewWriter(&b, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithWindowSize(zstdMaxWindow), zstd.WithEncoderConcurrency(1))
	default:
		t.Fatalf("unknown coding %q", coding)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(p); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// rawServer accepts TCP connections on 127.0.0.1, reads each request head
// and hands the connection to handle, which may write anything. It returns
// the base URL. Connections are closed when handle returns and at cleanup.
func rawServer(t *testing.T, handle func(conn net.Conn, requestHead string)) string {
	t.Helper()
	return rawServerOn(t, "http", handle)
}

// rawServerOn is rawServer for scheme "http" or "https". On https, handle
// writes HTTP/1.1 over TLS, the only protocol the server offers: what these
// servers break (chunking, Content-Length, the size of the head) is
// HTTP/1.1's framing, which HTTP/2 replaces with its own frames.
func rawServerOn(t *testing.T, scheme string, handle func(conn net.Conn, requestHead string)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if scheme == "https" {
		l = tls.NewListener(l, serverTLS("http/1.1"))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	done := make(chan struct{})
	wg.Go(func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			select {
			case <-done:
				mu.Unlock()
				conn.Close()
				return
			default:
			}
			conns[conn] = true
			mu.Unlock()
			wg.Go(func() {
				defer func() {
					mu.Lock()
					delete(conns, conn)
					mu.Unlock()
					conn.Close()
				}()
				br := bufio.NewReader(conn)
				var head strings.Builder
				for {
					line, err := br.ReadString('\n')
					head.WriteString(line)
					if err != nil {
						return
					}
					if line == "\r\n" {
						break
					}
				}
				handle(conn, head.String())
			})
		}
	})
	t.Cleanup(func() {
		mu.Lock()
		close(done)
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		l.Close()
		wg.Wait()
	})
	return scheme + "://" + l.Addr().String()
}

func wantStat(t *testing.T, c *Client, name string, want int64) {
	t.Helper()
	st := c.Stats()
	got, ok := st[name]
	if !ok {
		t.Fatalf("Stats has no counter %q", name)
	}
	if got != want {
		t.Errorf("Stats()[%q] = %d, want %d", name, got, want)
	}
}

var (
	bombOnce sync.Once
	bombs    map[string][]byte // Content-Encoding value → body
)

const bombSize = 128 << 20 // what each bomb decodes to

// bombBodies returns, per Content-Encoding value, a body that decodes to
// 128 MiB of zeros. They are built once, before any memory is measured.
func bombBodies(t *testing.T) map[string][]byte {
	bombOnce.Do(func() {
		zeros := make([]byte, bombSize)
		bombs = map[string][]byte{}
		for _, c := range []string{"gzip", "deflate", "rawdeflate", "br", "zstd"} {
			bombs[c] = encode(t, c, zeros)
		}
		// Two codings, applied in order: gzip then br. The inner gzip
		// stream is itself a bomb.
		bombs["gzip, br"] = encode(t, "br", bombs["gzip"])
	})
	return bombs
}

// TestHostileBombs: a body of each content coding that decodes to 128 MiB.
// The fetcher must cut it off early and never hold more than a bounded
// amount of memory: with the ratio check on, at ErrDecompressionBomb (1 MiB
// decoded at 100:1); with it off, at exactly MaxBodySize (ErrBodyTooLarge).
// Either way Truncated is "length", what was decoded is kept, and the bytes
// allocated during Do stay far below what the bomb decodes to.
func TestHostileBombs(t *testing.T) { eachScheme(t, hostileBombs) }

func hostileBombs(t *testing.T, scheme string) {
	const maxBody = 4 << 20
	// Allocation bound for one Do: the body buffer grown by doubling to
	// maxBody (< 2*maxBody in all), the raw bytes read, a brotli window of
	// at most 16 MiB or a zstd window of at most 8 MiB, and slack.
	const bound = 2*maxBody + 16<<20 + 8<<20
	bodies := bombBodies(t)
	s := newServerOn(t, scheme, func(w http.ResponseWriter, r *http.Request) {
		enc := r.URL.Query().Get("enc")
		header := enc
		if enc == "rawdeflate" {
			header = "deflate"
		}
		w.Header().Set("Content-Encoding", header)
		w.Header().Set("Content-Type", "text/html")
		w.Write(bodies[enc])
	})
	for _, ratio := range []int64{0, -1} {
		c := newClientOn(t, Config{AllowPrivateNetworks: true, MaxBodySize: maxBody, MaxDecodeRatio: ratio})
		for _, enc := range []string{"gzip", "deflate", "rawdeflate", "br", "zstd", "gzip, br"} {
			name := fmt.Sprintf("%s/ratio=%d", enc, ratio)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			res := do(t, c, Request{URL: mustURL(t, s.URL+"/?enc="+strings.ReplaceAll(enc, " ", "%20"))})
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc

			want := ErrDecompressionBomb
			if ratio < 0 {
				want = ErrBodyTooLarge
			}
			if !errors.Is(res.Cause, want) || res.Truncated != TruncatedLength {
				t.Errorf("%s: Cause %v, Truncated %q; want %v, length", name, res.Cause, res.Truncated, want)
			}
			if ratio < 0 && len(res.Body) != maxBody {
				t.Errorf("%s: Body is %d bytes, want exactly MaxBodySize %d", name, len(res.Body), maxBody)
			}
			if len(res.Body) == 0 || len(res.Body) > maxBody || bytes.ContainsFunc(res.Body, func(r rune) bool { return r != 0 }) {
				t.Errorf("%s: Body is %d bytes (want 1..%d zero bytes)", name, len(res.Body), maxBody)
			}
			if !bytes.HasPrefix(bodies[enc], res.RawBody) {
				t.Errorf("%s: RawBody is not a prefix of what was sent", name)
			}
			if alloc > bound {
				t.Errorf("%s: Do allocated %d MiB for a %d MiB bomb, want at most %d MiB", name, alloc>>20, bombSize>>20, bound>>20)
			}
			t.Logf("%s: %d bytes sent, %d decoded kept, %.1f MiB allocated", name, len(bodies[enc]), len(res.Body), float64(alloc)/(1<<20))
		}
		if ratio == 0 {
			wantStat(t, c, "decompression_bomb", 6)
		} else {
			wantStat(t, c, "body_too_large", 6)
		}
	}
}

// TestHostileEveryEncodingDecodes: each coding the client asks for decodes,
// raw bytes are kept as sent, and bytes on the wire and decoded are
// accounted separately. "deflate" comes both as zlib (the standard) and raw
// deflate (what some servers send): both decode.
func TestHostileEveryEncodingDecodes(t *testing.T) { eachScheme(t, hostileEveryEncodingDecodes) }

func hostileEveryEncodingDecodes(t *testing.T, scheme string) {
	plain := bytes.Repeat([]byte("<p>a polite crawler asks for compression</p>\n"), 400)
	type body struct {
		header string
		data   []byte
	}
	bodies := map[string]body{
		"gzip":       {"gzip", encode(t, "gzip", plain)},
		"x-gzip":     {"x-gzip", encode(t, "gzip", plain)},
		"zlib":       {"deflate", encode(t, "deflate", plain)},
		"rawdeflate": {"deflate", encode(t, "rawdeflate", plain)},
		"br":         {"br", encode(t, "br", plain)},
		"zstd":       {"zstd", encode(t, "zstd", plain)},
		"gzip, br":   {"gzip, br", encode(t, "br", encode(t, "gzip", plain))},
		"br, zstd":   {"br, zstd", encode(t, "zstd", encode(t, "br", plain))},
	}
	s := newServerOn(t, scheme, func(w http.ResponseWriter, r *http.Request) {
		b := bodies[r.URL.Query().Get("c")]
		w.Header().Set("Content-Encoding", b.header)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(b.data)
	})
	c := newClientOn(t, Config{AllowPrivateNetworks: true})
	for name, b := range bodies {
		res := do(t, c, Request{URL: mustURL(t, s.URL+"/?c="+strings.ReplaceAll(name, " ", "%20"))})
		if !bytes.Equal(res.Body, plain) || !bytes.Equal(res.RawBody, b.data) {
			t.Errorf("%s: Body %d bytes, RawBody %d bytes; want %d decoded and the %d sent", name, len(res.Body), len(res.RawBody), len(plain), len(b.data))
		}
		if !res.Complete() || res.Cause != nil || res.MediaType != "text/html" {
			t.Errorf("%s: Complete %v Cause %v MediaType %q", name, res.Complete(), res.Cause, res.MediaType)
		}
		if res.WireBytes >= int64(len(plain)) {
			t.Errorf("%s: WireBytes %d not below the %d decoded bytes", name, res.WireBytes, len(plain))
		}
		// https:// is HTTP/2 here (the httptest servers offer it).
		if proto := map[string]string{"http": "HTTP/1.1 ", "https": "HTTP/2.0 "}[scheme]; !bytes.HasPrefix(res.ResponseHead, []byte(proto)) {
			t.Errorf("%s: response head %.20q, want %s", name, res.ResponseHead, proto)
		}
	}
}

// TestHostileWrongEncoding: the body is not what Content-Encoding says. The
// raw bytes are kept for the WARC record, the body decodes as far as it can,
// and the fault is a DecodeErr (counted), not a truncation: the wire
// delivered everything.
func TestHostileWrongEncoding(t *testing.T) { eachScheme(t, hostileWrongEncoding) }

func hostileWrongEncoding(t *testing.T, scheme string) {
	plain := bytes.Repeat([]byte("abcdefghij"), 2000)
	gz := encode(t, "gzip", plain)
	cases := map[string]struct {
		header string
		body   []byte
	}{
		"plain text labelled gzip":   {"gzip", []byte("<html>not compressed at all</html>")},
		"truncated gzip":             {"gzip", gz[:len(gz)/2]},
		"gzip labelled br":           {"br", gz},
		"garbage labelled zstd":      {"zstd", []byte("\x28\xb5\x2f\xfdgarbage after a zstd magic")},
		"garbage labelled deflate":   {"deflate", []byte("\xff\xff\xff\xff not deflate")},
		"gzip with trailing garbage": {"gzip", append(append([]byte(nil), gz...), "trailing junk"...)},
	}
	s := newServerOn(t, scheme, func(w http.ResponseWriter, r *http.Request) {
		cs := cases[r.URL.Query().Get("c")]
		w.Header().Set("Content-Encoding", cs.header)
		w.Header().Set("Content-Length", strconv.Itoa(len(cs.body)))
		w.Write(cs.body)
	})
	c := newClientOn(t, Config{AllowPrivateNetworks: true})
	for name, cs := range cases {
		res := do(t, c, Request{URL: mustURL(t, s.URL+"/?c="+strings.ReplaceAll(name, " ", "+"))})
		if res.DecodeErr == nil || res.Truncated != "" || res.Complete() {
			t.Errorf("%s: DecodeErr %v Truncated %q Complete %v; want an error, \"\", false", name, res.DecodeErr, res.Truncated, res.Complete())
		}
		if !bytes.Equal(res.RawBody, cs.body) {
			t.Errorf("%s: RawBody is %d bytes, want the %d sent", name, len(res.RawBody), len(cs.body))
		}
		if res.PayloadDigest() != "" {
			t.Errorf("%s: PayloadDigest of a body that did not decode: %q", name, res.PayloadDigest())
		}
	}
	wantStat(t, c, "decode_error", int64(len(cases)))
}

// TestHostileTooManyEncodings: three codings in a row. The body is kept raw
// and not decoded at all (a crawler has no business unwrapping a
// matryoshka), with DecodeErr wrapping ErrTooManyEncodings.
func TestHostileTooManyEncodings(t *testing.T) { eachScheme(t, hostileTooManyEncodings) }

func hostileTooManyEncodings(t *testing.T, scheme string) {
	plain := []byte("three times wrapped")
	body := encode(t, "gzip", encode(t, "gzip", encode(t, "gzip", plain)))
	s := newServerOn(t, scheme, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip, gzip, gzip")
		w.Write(body)
	})
	c := newClientOn(t, Config{AllowPrivateNetworks: true})
	res := do(t, c, Request{URL: mustURL(t, s.URL)})
	if !errors.Is(res.DecodeErr, ErrTooManyEncodings) || res.Body != nil || res.Undecoded == "" || !bytes.Equal(res.RawBody, body) {
		t.Errorf("DecodeErr %v Body %q Undecoded %q RawBody %d bytes", res.DecodeErr, res.Body, res.Undecoded, len(res.RawBody))
	}
	wantStat(t, c, "too_many_encodings", 1)

	// Allowed when configured.
	c = newClientOn(t, Config{AllowPrivateNetworks: true, MaxEncodings: 3})
	if res := do(t, c, Request{URL: mustURL(t, s.URL)}); string(res.Body) != string(plain) {
		t.Errorf("MaxEncodings 3: Body %q", res.Body)
	}
}

// TestHostileContentLengthLies: a Content-Length larger than the body (the
// server then closes) is a truncation, "disconnect", with what arrived kept
// and Cause ErrContentLengthMismatch. A Content-Length smaller than the
// body: the client takes Content-Length bytes, and the excess must not
// poison the next exchange on that connection.
func TestHostileContentLengthLies(t *testing.T) { eachScheme(t, hostileContentLengthLies) }

func hostileContentLengthLies(t *testing.T, scheme string) {
	base := rawServerOn(t, scheme, func(conn net.Conn, head string) {
		switch {
		case strings.HasPrefix(head, "GET /long"):
			io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nContent-Type: text/plain\r\n\r\n0123456789")
		case strings.HasPrefix(head, "GET /short"):
			io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\n0123456789HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nevil")
			// Keep the connection open: a client that reused it would read
			// the planted response as the answer to its next request.
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			io.Copy(io.Discard, conn)
		default:
			io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ngood")
		}
	})
	c := newClientOn(t, Config{AllowPrivateNetworks: true})
	res := do(t, c, Request{URL: mustURL(t, base+"/long")})
	if res.Truncated != TruncatedDisconnect || !errors.Is(res.Cause, ErrContentLengthMismatch) || string(res.Body) != "0123456789" {
		t.Errorf("long: Truncated %q Cause %v Body %q; want disconnect, ErrContentLengthMismatch, the 10 bytes", res.Truncated, res.Cause, res.Body)
	}
	wantStat(t, c, "content_length_mismatch", 1)

	res = do(t, c, Request{URL: mustURL(t, base+"/short")})
	if string(res.Body) != "01234" || res.Truncated != "" {
		t.Errorf("short: Body %q Truncated %q; want the 5 bytes Content-Length announced", res.Body, res.Truncated)
	}
	// A connection on which bytes arrive unasked is dropped: h1 sees them
	// when it takes the connection, net/http's Transport when its reader
	// does (it logs "Unsolicited response"), which may be after it handed
	// the connection to the next request; then that request reads the
	// planted response, or fails on the bytes left before it
	// ("56789HTTP/1.1", depending on when they arrived). Either way the
	// server can only lie about itself: the exchange after that one
	// completes.
	res, err := c.Do(context.Background(), Request{URL: mustURL(t, base+"/next")})
	if err != nil {
		t.Logf("the request after the lie failed on the poisoned connection: %v", err)
		res, err = c.Do(context.Background(), Request{URL: mustURL(t, base+"/next")})
	}
	if err != nil || string(res.Body) != "good" && string(res.Body) != "evil" {
		t.Errorf("next request after the lie: %v, Body %q", err, bodyOf(res))
	}
}

func bodyOf(res *Result) []byte {
	if res == nil {
		return nil
	}
	return res.Body
}

// TestHostileBadChunking: chunk sizes that are not hex, absurdly large, or a
// connection that ends mid-chunk. What was de-chunked so far is kept, the
// record is "disconnect", and Cause says which.
func TestHostileBadChunking(t *testing.T) { eachScheme(t, hostileBadChunking) }

func hostileBadChunking(t *testing.T, scheme string) {
	bodies := map[string]string{
		"/nothex":   "5\r\nhello\r\nzz\r\nworld\r\n0\r\n\r\n",
		"/toolarge": "5\r\nhello\r\nffffffffffffffffffff\r\nworld\r\n0\r\n\r\n",
		"/cut":      "5\r\nhello\r\n100\r\nonly a little",
	}
	base := rawServerOn(t, scheme, func(conn net.Conn, head string) {
		path := strings.Fields(head)[1]
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n"+bodies[path])
	})
	c := newClientOn(t, Config{AllowPrivateNetworks: true})
	for path, want := range map[string]error{"/nothex": ErrBadChunking, "/toolarge": ErrBadChunking, "/cut": ErrDisconnected} {
		res := do(t, c, Request{URL: mustURL(t, base+path)})
		if res.Truncated != TruncatedDisconnect || !errors.Is(res.Cause, want) || !strings.HasPrefix(string(res.Body), "hello") {
			t.Errorf("%s: Truncated %q Cause %v Body %q; want disconnect, %v, starting \"hello\"", path, res.Truncated, res.Cause, res.Body, want)
		}
	}
	wantStat(t, c, "bad_chunking", 2)
	wantStat(t, c, "disconnected", 1)
}

// TestHostileResetMidBody: the server resets the connection (RST) in the
// middle of the body. Recorded as "disconnect" with what arrived (possibly
// nothing: a reset discards unread data) kept.
func TestHostileResetMidBody(t *testing.T) { eachScheme(t, hostileResetMidBody) }

func hostileResetMidBody(t *testing.T, scheme string) {
	const sent = "the first part of the body"
	base := rawServerOn(t, scheme, func(conn net.Conn, head string) {
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"+fmt.Sprintf("%x\r\n%s\r\n", len(sent), sent))
		time.Sleep(100 * time.Millisecond) // let the client start on the body
		tcpConn(conn).SetLinger(0)         // Close sends RST (on https after a close_notify)
	})
	c := newClientOn(t, Config{AllowPrivateNetworks: true})
	res := do(t, c, Request{URL: mustURL(t, base)})
	if res.Truncated != TruncatedDisconnect || !errors.Is(res.Cause, ErrDisconnected) || !strings.HasPrefix(sent, string(res.Body)) {
		t.Errorf("Truncated %q Cause %v Body %q; want disconnect, ErrDisconnected, a prefix of what was sent", res.Truncated, res.Cause, res.Body)
	}
}

// TestHostileTrickle: one byte per second. The minimum transfer rate (here 10
// bytes per 500 ms window) cuts it off: Truncated "time", Cause ErrTooSlow,
// the bytes that trickled in kept. Without the check only Timeout (30 s
// here) would end it.
func TestHostileTrickle(t *testing.T) { eachScheme(t, hostileTrickle) }

func hostileTrickle(t *testing.T, scheme string) {
	base := rawServerOn(t, scheme, func(conn net.Conn, head string) {
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nContent-Type: text/html\r\n\r\n")
		for range 100 {
			if _, err := conn.Write([]byte("x")); err != nil {
				return
			}
			time.Sleep(time.Second)
		}
	})
	c := newClientOn(t, Config{AllowPrivateNetworks: true, MinTransferBytes: 10, MinTransferWindow: 500 * time.Millisecond})
	res := do(t, c, Request{URL: mustURL(t, base)})
	if res.Truncated != TruncatedTime || !errors.Is(res.Cause, ErrTooSlow) || strings.Trim(string(res.Body), "x") != "" || len(res.Body) >= 100 {
		t.Errorf("Truncated %q Cause %v Body %q; want time, ErrTooSlow, a few x", res.Truncated, res.Cause, res.Body)
	}
	wantStat(t, c, "too_slow", 1)
}

// TestHostileEndlessBody: a body that never ends, fast. It is cut at exactly
// MaxBodySize (the cap has no overshoot), Truncated "length", Cause
// ErrBodyTooLarge.
func TestHostileEndlessBody(t *testing.T) { eachScheme(t, hostileEndlessBody) }

func hostileEndlessBody(t *testing.T, scheme string) {
	const max = 1 << 20
	chunk := bytes.Repeat([]byte("endless "), 4096)
	s := newServerOn(t, scheme, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	c := newClientOn(t, Config{AllowPrivateNetworks: true, MaxBodySize: max})
	res := do(t, c, Request{URL: mustURL(t, s.URL)})
	if len(res.Body) != max || res.Truncated != TruncatedLength || !errors.Is(res.Cause, ErrBodyTooLarge) {
		t.Errorf("Body %d bytes, Truncated %q, Cause %v; want %d, length, ErrBodyTooLarge", len(res.Body), res.Truncated, res.Cause, max)
	}
	if cap(res.Body) > max {
		t.Errorf("Body capacity %d exceeds MaxBodySize", cap(res.Body))
	}
	wantStat(t, c, "body_too_large", 1)
}

// TestHostileHugeHeaders: 1 MiB of header fields (and more). Do fails with an
// *Error wrapping ErrHeaderTooLarge once MaxHeaderBytes (1 MiB by default)
// is passed; nothing is recorded.
func TestHostileHugeHeaders(t *testing.T) { eachScheme(t, hostileHugeHeaders) }

func hostileHugeHeaders(t *testing.T, scheme string) {
	base := rawServerOn(t, scheme, func(conn net.Conn, head string) {
		w := bufio.NewWriter(conn)
		w.WriteString("HTTP/1.1 200 OK\r\n")
		line := "X-Padding: " + strings.Repeat("p", 1000) + "\r\n"
		for range (1<<20)/len(line) + 100 {
			if _, err := w.WriteString(line); err != nil {
				return
			}
		}
		w.WriteString("Content-Length: 2\r\n\r\nok")
		w.Flush()
	})
	c := newClientOn(t, Config{AllowPrivateNetworks: true})
	res, err := c.Do(context.Background(), Request{URL: mustURL(t, base)})
	var fe *Error
	if res != nil || !errors.Is(err, ErrHeaderTooLarge) || !errors.As(err, &fe) || fe.Op != "get" {
		t.Fatalf("Do = %v, %v; want an *Error{Op: get} wrapping ErrHeaderTooLarge", res, err)
	}
	wantStat(t, c, "header_too_large", 1)
}

// TestHostileTimeLimits: each phase has its own limit and its own error, and
// each error still reads as a timeout (context.DeadlineExceeded) to callers
// that only ask that. The servers never answer, so no limit can be hit by a
// slow machine instead of the server.
func TestHostileTimeLimits(t *testing.T) { eachScheme(t, hostileTimeLimits) }

func hostileTimeLimits(t *testing.T, scheme string) {
	silent := rawServerOn(t, scheme, func(conn net.Conn, head string) {
		conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		io.Copy(io.Discard, conn) // read the request, never answer
	})
	// A TCP server that never speaks TLS: the handshake hangs.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held sync.WaitGroup
	t.Cleanup(func() { l.Close(); held.Wait() })
	held.Go(func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			held.Go(func() {
				conn.SetReadDeadline(time.Now().Add(20 * time.Second))
				io.Copy(io.Discard, conn)
				conn.Close()
			})
		}
	})

	t.Run("first byte", func(t *testing.T) {
		c := newClientOn(t, Config{AllowPrivateNetworks: true, FirstByteTimeout: 500 * time.Millisecond})
		_, err := c.Do(context.Background(), Request{URL: mustURL(t, silent)})
		if !errors.Is(err, ErrFirstByteTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Do error %v; want ErrFirstByteTimeout (and DeadlineExceeded)", err)
		}
		wantStat(t, c, "first_byte_timeout", 1)
	})
	t.Run("total", func(t *testing.T) {
		c := newClientOn(t, Config{AllowPrivateNetworks: true, Timeout: 500 * time.Millisecond})
		_, err := c.Do(context.Background(), Request{URL: mustURL(t, silent)})
		if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Do error %v; want ErrTimeout (and DeadlineExceeded)", err)
		}
		wantStat(t, c, "timeout", 1)
	})
	t.Run("tls", func(t *testing.T) {
		if scheme != "https" {
			t.Skip("http:// has no TLS handshake")
		}
		c := newClientOn(t, Config{AllowPrivateNetworks: true, TLSTimeout: 500 * time.Millisecond})
		_, err := c.Do(context.Background(), Request{URL: mustURL(t, "https://"+l.Addr().String()+"/")})
		if !errors.Is(err, ErrTLSTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Do error %v; want ErrTLSTimeout (and DeadlineExceeded)", err)
		}
		wantStat(t, c, "tls_timeout", 1)
	})
	t.Run("connect", func(t *testing.T) {
		// A connect that never completes cannot be made on loopback
		// without root, so the dial itself is faked: it blocks until its
		// context ends, as a SYN into a black hole does.
		c := newClientOn(t, Config{AllowPrivateNetworks: true, ConnectTimeout: 500 * time.Millisecond})
		c.dial.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			<-ctx.Done()
			return nil, &net.OpError{Op: "dial", Net: network, Err: ctx.Err()}
		}
		_, err := c.Do(context.Background(), Request{URL: mustURL(t, scheme+"://192.0.2.1:81/")})
		var fe *Error
		if !errors.Is(err, ErrConnectTimeout) || !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &fe) || fe.Op != "dial" {
			t.Errorf("Do error %v; want an *Error{Op: dial} wrapping ErrConnectTimeout", err)
		}
		wantStat(t, c, "connect_timeout", 1)
	})
}

// TestHostileNotModifiedWithoutValidatorsSent: a server that answers 304 to
// everything, even to a request with no validators and Cache-Control:
// no-cache. The fetcher asks once more, unconditionally, and no more: the
// site sees two requests; the Result is that 304 with Refetched set and
// NotModified false, so the crawler does not take it for "unchanged".
func TestHostileNotModifiedWithoutValidatorsSent(t *testing.T) {
	eachScheme(t, hostileNotModifiedWithoutValidatorsSent)
}

func hostileNotModifiedWithoutValidatorsSent(t *testing.T, scheme string) {
	s := newServerOn(t, scheme, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotModified)
	})
	c := newClientOn(t, Config{AllowPrivateNetworks: true})
	res := do(t, c, Request{URL: mustURL(t, s.URL)})
	if res.Status != 304 || !res.Refetched || res.NotModified || res.Conditional {
		t.Errorf("status %d Refetched %v NotModified %v Conditional %v; want 304 true false false", res.Status, res.Refetched, res.NotModified, res.Conditional)
	}
	reqs := s.requests()
	if len(reqs) != 2 || reqs[1].Header.Get("Cache-Control") != "no-cache" || reqs[0].Header.Get("If-None-Match") != "" || reqs[0].Header.Get("If-Modified-Since") != "" {
		t.Errorf("server saw %d requests; want 2, the second with Cache-Control: no-cache", len(reqs))
	}
	wantStat(t, c, "refetched_304", 1)
}

// TestHostileLastModifiedForms: a Last-Modified in the future is never sent
// back as If-Modified-Since (the server's clock is wrong), whichever of the
// three RFC 9110 §5.6.7 forms it comes in; a past one in any form is sent
// verbatim; a malformed one is not sent.
func TestHostileLastModifiedForms(t *testing.T) { eachScheme(t, hostileLastModifiedForms) }

func hostileLastModifiedForms(t *testing.T, scheme string) {
	s := newServerOn(t, scheme, func(w http.ResponseWriter, r *http.Request) {})
	c := newClientOn(t, Config{AllowPrivateNetworks: true})
	future := time.Now().Add(72 * time.Hour).UTC()
	for _, tt := range []struct {
		name, value string
		sent        bool
	}{
		{"IMF-fixdate past", "Sun, 06 Nov 1994 08:49:37 GMT", true},
		{"RFC 850 past", "Sunday, 06-Nov-94 08:49:37 GMT", true},
		{"asctime past", "Sun Nov  6 08:49:37 1994", true},
		{"IMF-fixdate future", future.Format("Mon, 02 Jan 2006 15:04:05 GMT"), false},
		{"RFC 850 future", future.Format("Monday, 02-Jan-06 15:04:05 GMT"), false},
		{"asctime future", future.Format("Mon Jan _2 15:04:05 2006"), false},
		{"malformed", "06/11/1994 08:49", false},
		{"numeric zone", "Sun, 06 Nov 1994 08:49:37 +0000", false},
	} {
		n := len(s.requests())
		do(t, c, Request{URL: mustURL(t, s.URL), LastModified: tt.value})
		got := s.requests()[n].Header.Get("If-Modified-Since")
		if tt.sent && got != tt.value || !tt.sent && got != "" {
			t.Errorf("%s (%q): If-Modified-Since %q, want sent=%v", tt.name, tt.value, got, tt.sent)
		}
	}
}

// TestHostileContentTypeLies: the Content-Type does not say what the bytes
// are. The seed's case first: /page1.LOL111 is HTML served as
// application/octet-stream; the extension policy lets it through (unknown
// extension), the bytes say text/html, and it is fetched whole. Then the
// other way round: bytes of a zip or an MP3 labelled text/html, or with no
// label, are recognised and not downloaded further (Skipped, Cause
// ErrUnwantedType). A declared unwanted type is skipped after the head.
func TestHostileContentTypeLies(t *testing.T) { eachScheme(t, hostileContentTypeLies) }

func hostileContentTypeLies(t *testing.T, scheme string) {
	html := []byte("\n\n  <!DOCTYPE html><html><head><title>LOL</title></head><body><a href=/x>x</a></body></html>")
	zip := append([]byte("PK\x03\x04\x14\x00\x00\x00\x08\x00"), bytes.Repeat([]byte{0x9c, 0x01, 0xff}, 300_000)...)
	mp3 := append([]byte("ID3\x04\x00\x00\x00\x00\x00\x00"), bytes.Repeat([]byte{0xff, 0xfb, 0x90, 0x44}, 200_000)...)
	type page struct {
		ct   string
		body []byte
	}
	pages := map[string]page{
		"/page1.LOL111": {"application/octet-stream", html},
		"/nolabel":      {"", html},
		"/zip-as-html":  {"text/html; charset=utf-8", zip},
		"/mp3-unlabel":  {"", mp3},
		"/video":        {"video/mp4", mp3},
		"/text":         {"text/plain", []byte("just text, <b>not</b> promoted to HTML")},
	}
	s := newServerOn(t, scheme, func(w http.ResponseWriter, r *http.Request) {
		p := pages[r.URL.Path]
		w.Header()["Content-Type"] = []string{p.ct} // "" sends an empty field; net/http would sniff otherwise
		if p.ct == "" {
			w.Header()["Content-Type"] = nil
		}
		w.Write(p.body)
	})
	c := newClientOn(t, Config{AllowPrivateNetworks: true, Types: DefaultTypePolicy()})
	ext := DefaultExtensionPolicy()
	for _, tt := range []struct {
		path      string
		mediaType string
		sniffed   bool
		skipped   bool
	}{
		{"/page1.LOL111", "text/html", true, false},
		{"/nolabel", "text/html", true, false},
		{"/zip-as-html", "application/zip", true, true},
		{"/mp3-unlabel", "audio/mpeg", true, true},
		{"/video", "video/mp4", false, true},
		{"/text", "text/plain", false, false},
	} {
		u := mustURL(t, s.URL+tt.path)
		if skip, why := ext.Skip(u); skip {
			t.Errorf("%s: extension policy skipped it (%s)", tt.path, why)
		}
		res := do(t, c, Request{URL: u})
		if res.MediaType != tt.mediaType || res.Sniffed != tt.sniffed || res.Skipped != tt.skipped {
			t.Errorf("%s: MediaType %q Sniffed %v Skipped %v; want %q %v %v", tt.path, res.MediaType, res.Sniffed, res.Skipped, tt.mediaType, tt.sniffed, tt.skipped)
		}
		sent := pages[tt.path].body
		if tt.skipped {
			if !errors.Is(res.Cause, ErrUnwantedType) || res.Truncated != TruncatedUnspecified || len(res.RawBody) >= len(sent) {
				t.Errorf("%s: Cause %v Truncated %q RawBody %d of %d bytes; want ErrUnwantedType, unspecified, the body not downloaded", tt.path, res.Cause, res.Truncated, len(res.RawBody), len(sent))
			}
			continue
		}
		if !bytes.Equal(res.Body, sent) || !res.Complete() {
			t.Errorf("%s: Body %d bytes Complete %v; want all %d", tt.path, len(res.Body), res.Complete(), len(sent))
		}
	}
	wantStat(t, c, "skipped_type", 3)

	// robots.txt and sitemaps: every type.
	res := do(t, c, Request{URL: mustURL(t, s.URL+"/zip-as-html"), AllTypes: true})
	if res.Skipped || len(res.Body) != len(zip) {
		t.Errorf("AllTypes: Skipped %v Body %d bytes", res.Skipped, len(res.Body))
	}
}

// fakeResolver answers from a map and counts lookups. A name it does not
// know is NXDOMAIN. No real DNS is ever asked.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][]netip.Addr
	calls   map[string]int
	block   chan struct{} // when non-nil, lookups wait for it to close
}

func (f *fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[host]++
	if a, ok := f.answers[host]; ok {
		return append([]netip.Addr(nil), a...), nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func (f *fakeResolver) count(host string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[host]
}

// TestHostileRedirectToPrivate: a public page redirects to 127.0.0.1, to the
// cloud metadata address 169.254.169.254, to [::1], to IPv4-mapped
// loopback, and to names whose DNS answer is such an address. The crawler
// resolves the Location (ResolveLocation) and fetches the target like any
// URL; Do refuses it at dial time with ErrPrivateNetwork, and nothing
// connects to the target. The "public" origin is the test server on
// 127.0.0.1, allowed by exact address and port through a test hook; every
// other loopback address and port stays refused, as in a real crawl.
func TestHostileRedirectToPrivate(t *testing.T) { eachScheme(t, hostileRedirectToPrivate) }

func hostileRedirectToPrivate(t *testing.T, scheme string) {
	victim := newServerOn(t, scheme, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "secret") })
	vport := victim.port()
	targets := map[string]string{
		"loopback":        fmt.Sprintf("%s://127.0.0.1:%d/admin", scheme, vport),
		"metadata":        scheme + "://169.254.169.254/latest/meta-data/",
		"ipv6 loopback":   fmt.Sprintf("%s://[::1]:%d/admin", scheme, vport),
		"ipv4-mapped":     fmt.Sprintf("%s://[::ffff:127.0.0.1]:%d/admin", scheme, vport),
		"name→127.0.0.1":  fmt.Sprintf("%s://internal.example:%d/admin", scheme, vport),
		"name→metadata":   scheme + "://metadata.example/latest/meta-data/",
		"name→::1":        fmt.Sprintf("%s://v6.example:%d/admin", scheme, vport),
		"name→mapped":     fmt.Sprintf("%s://mapped.example:%d/admin", scheme, vport),
		"name→10.0.0.1":   scheme + "://intranet.example/",
		"name→mixed":      fmt.Sprintf("%s://mixed.example:%d/admin", scheme, vport),
		"sloppy location": fmt.Sprintf(` \\127.0.0.1:%d\admin`, vport),
	}
	origin := newServerOn(t, scheme, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", targets[r.URL.Query().Get("to")])
		w.WriteHeader(http.StatusFound)
	})
	res := &fakeResolver{answers: map[string][]netip.Addr{
		"public.example":   addrs("127.0.0.1"), // the origin, let through by the hook below
		"internal.example": addrs("127.0.0.1"),
		"metadata.example": addrs("169.254.169.254"),
		"v6.example":       addrs("::1"),
		"mapped.example":   addrs("::ffff:127.0.0.1"),
		"intranet.example": addrs("10.0.0.1"),
		"mixed.example":    addrs("192.168.1.1", "127.0.0.1", "::ffff:169.254.169.254"),
	}}
	c := newClientOn(t, Config{Resolver: res}) // private networks refused
	originAddr := netip.MustParseAddrPort(origin.Listener.Addr().String())
	var dialed []string
	var mu sync.Mutex
	c.dial.allow = func(ap netip.AddrPort) bool { return ap == originAddr }
	c.dial.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dialed = append(dialed, addr)
		mu.Unlock()
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}

	for name := range targets {
		from := mustURL(t, fmt.Sprintf("%s://public.example:%d/?to=%s", scheme, origin.port(), strings.ReplaceAll(name, " ", "+")))
		first := do(t, c, Request{URL: from})
		if first.Status != http.StatusFound {
			t.Fatalf("%s: origin answered %d", name, first.Status)
		}
		next, err := ResolveLocation(from, first.Header.Get("Location"))
		if err != nil {
			t.Errorf("%s: ResolveLocation: %v", name, err)
			continue
		}
		if err := CheckRedirect([]string{from.String()}, next.String(), 0); err != nil {
			t.Errorf("%s: CheckRedirect: %v", name, err)
		}
		got, err := c.Do(context.Background(), Request{URL: next})
		var fe *Error
		if got != nil || !errors.Is(err, ErrPrivateNetwork) || !errors.As(err, &fe) || fe.Op != "dial" {
			t.Errorf("%s: Do(%s) = %v, %v; want an *Error{Op: dial} wrapping ErrPrivateNetwork", name, next, got, err)
		}
	}
	if n := victim.conns.Load(); n != 0 {
		t.Errorf("the private server accepted %d connections", n)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range dialed {
		if a != originAddr.String() {
			t.Errorf("dialed %s; only the origin %s may be dialed", a, originAddr)
		}
	}
	wantStat(t, c, "private_network", int64(len(targets)))
}

// TestHostileRedirectChainAndLoop: a chain of 11 redirects and a loop,
// followed the way the crawler follows them: one Do per hop, the Location
// resolved with ResolveLocation, and CheckRedirect before each hop. The
// chain stops at the 11th hop with ErrTooManyRedirects (10 are followed);
// the loop stops when it comes back to a URL already fetched, with
// ErrRedirectLoop. The client itself never follows anything: one request per
// Do.
func TestHostileRedirectChainAndLoop(t *testing.T) { eachScheme(t, hostileRedirectChainAndLoop) }

func hostileRedirectChainAndLoop(t *testing.T, scheme string) {
	s := newServerOn(t, scheme, func(w http.ResponseWriter, r *http.Request) {
		var next string
		switch p := r.URL.Path; {
		case strings.HasPrefix(p, "/chain/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(p, "/chain/"))
			if n == 11 {
				fmt.Fprint(w, "the end")
				return
			}
			next = fmt.Sprintf("%d", n+1) // relative
		case p == "/loop/a":
			next = `\loop\b` // sloppy: backslashes
		case p == "/loop/b":
			next = scheme + ":/loop/c" // sloppy: missing slashes, same scheme
		case p == "/loop/c":
			next = " /loop/a " // sloppy: spaces
		}
		w.Header().Set("Location", next)
		w.WriteHeader(http.StatusMovedPermanently)
	})
	c := newClientOn(t, Config{AllowPrivateNetworks: true})
	follow := func(start string) (fetched int, err error) {
		u := mustURL(t, start)
		chain := []string{}
		for {
			res := do(t, c, Request{URL: u})
			fetched++
			chain = append(chain, u.String())
			if res.Status < 300 || res.Status > 399 {
				return fetched, nil
			}
			next, err := ResolveLocation(u, res.Header.Get("Location"))
			if err != nil {
				return fetched, err
			}
			if err := CheckRedirect(chain, next.String(), MaxRedirects); err != nil {
				return fetched, err
			}
			u = next
		}
	}
	n, err := follow(s.URL + "/chain/0")
	if !errors.Is(err, ErrTooManyRedirects) || n != 11 {
		t.Errorf("chain of 11: %d fetched, %v; want 11 fetched (the start and 10 hops), ErrTooManyRedirects", n, err)
	}
	n, err = follow(s.URL + "/chain/1")
	if err != nil || n != 11 {
		t.Errorf("chain of 10: %d fetched, %v; want 11 and the end reached", n, err)
	}
	n, err = follow(s.URL + "/loop/a")
	if !errors.Is(err, ErrRedirectLoop) || n != 3 {
		t.Errorf("loop: %d fetched, %v; want 3, ErrRedirectLoop", n, err)
	}
	if got := len(s.requests()); got != 25 {
		t.Errorf("server saw %d requests, want 25 (one per Do)", got)
	}
}
