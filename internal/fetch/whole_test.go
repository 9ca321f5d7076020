package fetch

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"testing"
)

// TestWholeBodies: gzip (one member and two), x-gzip, zlib and raw
// deflate decode whole, empty or small or large, announced by
// Content-Length or chunked, into pooled buffers or not; a body whose raw
// bytes pass wholeMax is decoded as it streams in, from its first byte.
// Every one decodes to what was sent.
func TestWholeBodies(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	noise := make([]byte, wholeMax+wholeMax/2) // incompressible: more raw bytes than wholeMax
	for i := range noise {
		noise[i] = byte(r.Uint32())
	}
	plains := map[string][]byte{
		"empty": nil,
		"small": []byte("<p>small</p>"),
		"page":  bytes.Repeat([]byte("<li><a href=\"/std/x.html\">a link</a> and some text</li>\n"), 6000),
		"noise": noise,
	}
	type body struct {
		header string
		data   []byte
		plain  []byte
	}
	bodies := map[string]body{}
	for pn, p := range plains {
		for _, c := range []string{"gzip", "x-gzip", "deflate", "rawdeflate"} {
			header, coding := c, c
			switch c {
			case "rawdeflate":
				header = "deflate"
			case "x-gzip":
				coding = "gzip"
			}
			data := encode(t, coding, p)
			if pn == "empty" && c == "gzip" {
				bodies["none/"+c] = body{header, nil, nil} // a body naming a coding, with nothing in it
			}
			bodies[pn+"/"+c] = body{header, data, p}
		}
		two := encode(t, "gzip", p)
		bodies[pn+"/gzip-two-members"] = body{"gzip", slices.Concat(two, two), slices.Concat(p, p)}
	}
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		b := bodies[r.URL.Query().Get("b")]
		w.Header().Set("Content-Encoding", b.header)
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Query().Get("cl") != "" {
			w.Header().Set("Content-Length", strconv.Itoa(len(b.data)))
		}
		w.Write(b.data)
	})
	c := newClient(t, Config{AllowPrivateNetworks: true})
	for name, b := range bodies {
		for _, cl := range []string{"", "1"} {
			for _, pooled := range []bool{false, true} {
				res := do(t, c, Request{URL: mustURL(t, s.URL+"/?b="+name+"&cl="+cl), Pooled: pooled})
				what := fmt.Sprintf("%s (Content-Length %v, pooled %v)", name, cl != "", pooled)
				if !bytes.Equal(res.Body, b.plain) || !bytes.Equal(res.RawBody, b.data) {
					t.Errorf("%s: Body %d bytes, RawBody %d; want %d and %d", what, len(res.Body), len(res.RawBody), len(b.plain), len(b.data))
				}
				if !res.Complete() || res.Cause != nil || res.DecodeErr != nil {
					t.Errorf("%s: Complete %v, Cause %v, DecodeErr %v", what, res.Complete(), res.Cause, res.DecodeErr)
				}
				res.Release()
			}
		}
	}
}

// TestWholeSniffReadsLittle: a gzip body whose first bytes are a zip
// file is skipped (application/zip is not wanted). Declared generic
// (application/octet-stream), it is sniffed from the raw bytes that
// decode to its head, and little more is read; declared HTML, from the
// body decoded whole, and no more than wholeMax raw bytes are read.
func TestWholeSniffReadsLittle(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	plain := []byte("PK\x03\x04")
	for len(plain) < 4<<20 {
		plain = append(plain, byte(r.Uint32()))
	}
	data := encode(t, "gzip", plain)
	small := encode(t, "gzip", plain[:100<<10])
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", r.URL.Query().Get("t"))
		if r.URL.Query().Get("small") != "" {
			w.Write(small)
			return
		}
		w.Write(data)
	})
	c := newClient(t, Config{AllowPrivateNetworks: true, Types: DefaultTypePolicy()})
	// A small one, declared HTML, decodes whole before it is skipped.
	res := do(t, c, Request{URL: mustURL(t, s.URL+"/?t=text/html&small=1")})
	if !res.Skipped || res.MediaType != "application/zip" || !bytes.Equal(res.RawBody, small) || !bytes.Equal(res.Body, plain[:100<<10]) {
		t.Errorf("small: Skipped %v, MediaType %q, RawBody %d bytes, Body %d", res.Skipped, res.MediaType, len(res.RawBody), len(res.Body))
	}
	for declared, most := range map[string]int{"application/octet-stream": 256 << 10, "text/html": wholeMax + chunkMax} {
		res := do(t, c, Request{URL: mustURL(t, s.URL+"/?t="+declared)})
		if !res.Skipped || !errors.Is(res.Cause, ErrUnwantedType) || res.MediaType != "application/zip" {
			t.Fatalf("%s: Skipped %v, Cause %v, MediaType %q", declared, res.Skipped, res.Cause, res.MediaType)
		}
		if len(res.RawBody) > most || !bytes.HasPrefix(data, res.RawBody) || !bytes.HasPrefix(plain, res.Body) || len(res.Body) < sniffLen {
			t.Errorf("%s: RawBody %d of %d bytes (at most %d), Body %d bytes", declared, len(res.RawBody), len(data), most, len(res.Body))
		}
	}
}

// TestWholeCutShort: a gzip body that stops half way (the connection
// closes before Content-Length) is a disconnect, with what decoded of it.
func TestWholeCutShort(t *testing.T) {
	plain := bytes.Repeat([]byte("<p>a page that does not arrive whole</p>\n"), 5000)
	data := encode(t, "gzip", plain)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data[:len(data)/2])
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	c := newClient(t, Config{AllowPrivateNetworks: true})
	res := do(t, c, Request{URL: mustURL(t, s.URL)})
	if res.Truncated != TruncatedDisconnect || len(res.Body) == 0 || !bytes.HasPrefix(plain, res.Body) {
		t.Errorf("Truncated %q, Cause %v, Body %d bytes (a prefix: %v)", res.Truncated, res.Cause, len(res.Body), bytes.HasPrefix(plain, res.Body))
	}
}

// TestWholeBombUnderMaxBody: with a MaxBodySize above the ratio's bound, a
// gzip bomb decoded whole stops at MaxDecodeRatio times its raw bytes.
func TestWholeBombUnderMaxBody(t *testing.T) {
	data := encode(t, "gzip", make([]byte, 256<<20))
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(data)
	})
	c := newClient(t, Config{AllowPrivateNetworks: true, MaxBodySize: 200 << 20})
	res := do(t, c, Request{URL: mustURL(t, s.URL)})
	if !errors.Is(res.Cause, ErrDecompressionBomb) || res.Truncated != TruncatedLength || int64(len(res.Body)) != DefaultMaxDecodeRatio*int64(len(data)) {
		t.Errorf("Cause %v, Truncated %q, Body %d bytes; want ErrDecompressionBomb, length, %d", res.Cause, res.Truncated, len(res.Body), DefaultMaxDecodeRatio*int64(len(data)))
	}
}

// TestWholeBombTrailerNotTrusted: a bomb's gzip trailer states its size
// honestly (64 MiB, under MaxBodySize); the buffer it is decoded into is
// held to the ratio's bound instead, so Do allocates a fraction of it.
func TestWholeBombTrailerNotTrusted(t *testing.T) {
	data := encode(t, "gzip", make([]byte, 64<<20))
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(data)
	})
	c := newClient(t, Config{AllowPrivateNetworks: true, MaxBodySize: 200 << 20})
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res := do(t, c, Request{URL: mustURL(t, s.URL), Pooled: true})
	runtime.ReadMemStats(&after)
	bound := DefaultMaxDecodeRatio * int64(len(data))
	if !errors.Is(res.Cause, ErrDecompressionBomb) || int64(len(res.Body)) != bound {
		t.Errorf("Cause %v, Body %d bytes; want ErrDecompressionBomb and %d", res.Cause, len(res.Body), bound)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 24<<20 {
		t.Errorf("Do allocated %d MiB for a body bounded at %d MiB", alloc>>20, bound>>20)
	}
}

// TestBombStoppedEarly: a gzip bomb of more than a megabyte (members of
// 128 MiB of zeros each) is cut once its decoded output passes the ratio,
// having read no more than wholeMax and a chunk of it: a bomb costs the
// site at most that much of its transfer, however long it is.
func TestBombStoppedEarly(t *testing.T) {
	member := bombBodies(t)["gzip"]
	var data []byte
	for len(data) <= 2*wholeMax {
		data = append(data, member...)
	}
	if len(data) < 2*wholeMax {
		t.Fatalf("the bomb is %d bytes, want more than %d", len(data), 2*wholeMax)
	}
	for _, ratio := range []int64{0, -1} {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Type", "text/html")
			w.Write(data)
		})
		c := newClient(t, Config{AllowPrivateNetworks: true, MaxBodySize: 4 << 20, MaxDecodeRatio: ratio})
		res := do(t, c, Request{URL: mustURL(t, s.URL)})
		if res.Truncated != TruncatedLength || len(res.Body) == 0 {
			t.Errorf("ratio %d: Truncated %q, Cause %v, Body %d bytes", ratio, res.Truncated, res.Cause, len(res.Body))
		}
		if len(res.RawBody) > wholeMax+chunkMax {
			t.Errorf("ratio %d: read %d raw bytes of a %d-byte bomb, want at most %d", ratio, len(res.RawBody), len(data), wholeMax+chunkMax)
		}
		t.Logf("ratio %d: %d of %d bytes read; %d decoded kept (%v)", ratio, len(res.RawBody), len(data), len(res.Body), res.Cause)
	}
}
