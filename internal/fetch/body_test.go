package fetch

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// raceEnabled is set under the race detector, which makes sync.Pool drop
// items at random: allocation counts mean nothing then.
var raceEnabled bool

// bodyCase is a response to read with readBody, without a network: the
// work of recording and decoding a body alone.
type bodyCase struct {
	name   string
	page   []byte // decoded
	wire   []byte // as sent
	gzip   bool
	length bool // Content-Length is sent (else the body is chunked)
}

func bodyCases(tb testing.TB) []bodyCase {
	var cases []bodyCase
	for _, size := range []int{5_000, 50_000, 500_000} {
		page := benchPage(size)
		gz := encode(tb, "gzip", page)
		for _, length := range []bool{false, true} {
			suffix := "-chunked"
			if length {
				suffix = "-length"
			}
			name := fmt.Sprintf("%dKB", size/1000)
			cases = append(cases,
				bodyCase{name + suffix, page, page, false, length},
				bodyCase{name + "-gzip" + suffix, page, gz, true, length})
		}
	}
	return cases
}

func (bc *bodyCase) response() *http.Response {
	resp := &http.Response{
		StatusCode:    200,
		Header:        http.Header{"Content-Type": {"text/html; charset=utf-8"}},
		Body:          io.NopCloser(bytes.NewReader(bc.wire)),
		ContentLength: -1,
	}
	if bc.gzip {
		resp.Header.Set("Content-Encoding", "gzip")
	}
	if bc.length {
		resp.ContentLength = int64(len(bc.wire))
	} else {
		resp.TransferEncoding = []string{"chunked"}
	}
	return resp
}

// BenchmarkReadBody measures readBody alone: recording the raw body,
// decoding it, the limits and sniffing, for bodies with and without gzip
// and Content-Length. Run:
//
//	go test -tags pebblegozstd ./internal/fetch/ -run XXX -bench ReadBody -benchmem
func BenchmarkReadBody(b *testing.B) {
	c, err := New(Config{UserAgent: testUA})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for _, bc := range bodyCases(b) {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.page)))
			for b.Loop() {
				var res Result
				if err := c.readBody(context.Background(), bc.response(), &res, nil, nil); err != nil || len(res.Body) != len(bc.page) {
					b.Fatalf("%v, %d bytes", err, len(res.Body))
				}
			}
		})
	}
}

// TestReadBodyAllocs checks that a body costs about one allocation of its
// own size (plus one of the raw body's when it is encoded), not the
// doubling of a growing buffer, and that Body and RawBody are exactly as
// long as their content.
func TestReadBodyAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	c, err := New(Config{UserAgent: testUA})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, bc := range bodyCases(t) {
		t.Run(bc.name, func(t *testing.T) {
			read := func() *Result {
				var res Result
				if err := c.readBody(context.Background(), bc.response(), &res, nil, nil); err != nil {
					t.Fatal(err)
				}
				return &res
			}
			res := read()
			if !bytes.Equal(res.Body, bc.page) || !bytes.Equal(res.RawBody, bc.wire) {
				t.Fatalf("Body %d bytes, RawBody %d bytes; want %d, %d", len(res.Body), len(res.RawBody), len(bc.page), len(bc.wire))
			}
			if cap(res.Body) != len(res.Body) || cap(res.RawBody) != len(res.RawBody) {
				t.Errorf("cap(Body) %d for %d bytes, cap(RawBody) %d for %d bytes; want exact", cap(res.Body), len(res.Body), cap(res.RawBody), len(res.RawBody))
			}
			if !bc.gzip && &res.Body[0] != &res.RawBody[0] {
				t.Error("an unencoded Body does not share RawBody's bytes")
			}

			want := int64(len(bc.page))
			if bc.gzip {
				want += int64(len(bc.wire))
			}
			const runs = 50
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range runs {
				read()
			}
			runtime.ReadMemStats(&after)
			perRun := int64(after.TotalAlloc-before.TotalAlloc) / runs
			// The fixed cost (recorders, decoder, header lookups) is a few
			// KB; a growing buffer would add about as much as the body.
			if limit := want + want/4 + 8<<10; perRun > limit {
				t.Errorf("%d bytes allocated per body of %d (raw %d), want at most %d", perRun, len(bc.page), len(bc.wire), limit)
			}
		})
	}
}

// pieces reads p in pieces of varying size, the way a network does.
type pieces struct {
	p []byte
	i int
}

func (r *pieces) Read(b []byte) (int, error) {
	if len(r.p) == 0 {
		return 0, io.EOF
	}
	r.i++
	n := min(len(b), len(r.p), 1+(r.i*7919)%70_000)
	copy(b, r.p[:n])
	r.p = r.p[n:]
	return n, nil
}

// TestRecorderChunked checks the chunked recorder against the plain one:
// the same bytes, the same cut at the limit, whether filled or read through
// (as a decoder's source), across chunk boundaries.
func TestRecorderChunked(t *testing.T) {
	src := benchPage(3 << 20)
	for _, size := range []int{0, 1, 4095, chunkMin, chunkMin + 1, 200_000, 3 << 20} {
		for _, limit := range []int64{int64(size), int64(size) + 1, int64(size) - 1, 100_000} {
			if limit < 0 {
				continue
			}
			for _, through := range []bool{false, true} {
				rec := func(chunked bool) (*recorder, []byte) {
					rc := &recorder{r: &pieces{p: src[:size]}, limit: limit, limitErr: ErrBodyTooLarge}
					if chunked {
						rc.chunked()
					}
					rc.fill(sniffLen, false)
					if through {
						io.Copy(io.Discard, rc)
					} else {
						rc.fill(0, true)
					}
					b := rc.take()
					rc.release()
					return rc, b
				}
				plain, want := rec(false)
				chunked, got := rec(true)
				if !bytes.Equal(got, want) || len(got) != len(want) || chunked.over != plain.over || chunked.err != plain.err {
					t.Errorf("size %d limit %d through %v: %d bytes over %v err %v; plain recorder %d bytes over %v err %v",
						size, limit, through, len(got), chunked.over, chunked.err, len(want), plain.over, plain.err)
				}
				if cap(got) != len(got) {
					t.Errorf("size %d limit %d: cap %d for %d bytes", size, limit, cap(got), len(got))
				}
			}
		}
	}
}

// TestDeflateReuse decodes zlib and raw deflate bodies in turn, with a
// broken one between, so the pooled deflate decoders are reused in every
// order.
func TestDeflateReuse(t *testing.T) {
	page := benchPage(20_000)
	zlibBody, rawBody := encode(t, "deflate", page), encode(t, "rawdeflate", page)
	h := http.Header{"Content-Encoding": {"deflate"}}
	for i, raw := range [][]byte{zlibBody, rawBody, zlibBody, zlibBody[:10], rawBody, rawBody, {0x78}, zlibBody, {0x78, 0x9c, 0xff, 0xff}, rawBody, zlibBody} {
		got, err := DecodeBody(nil, h, raw, 0)
		whole := len(raw) == len(zlibBody) || len(raw) == len(rawBody)
		if whole && (err != nil || !bytes.Equal(got, page)) {
			t.Errorf("body %d: %v, %d bytes", i, err, len(got))
		}
		if !whole && err == nil {
			t.Errorf("body %d (%d bytes, broken): no error", i, len(raw))
		}
	}
}

// BenchmarkDecodeBody decodes a 50 KB page in each content coding, through
// the pooled decoders. Run:
//
//	go test -tags pebblegozstd ./internal/fetch/ -run XXX -bench DecodeBody -benchmem
func BenchmarkDecodeBody(b *testing.B) {
	page := benchPage(50_000)
	for _, coding := range []string{"gzip", "deflate", "rawdeflate", "br", "zstd"} {
		raw := encode(b, coding, page)
		h := http.Header{"Content-Encoding": {strings.TrimPrefix(coding, "raw")}}
		b.Run(coding, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(page)))
			var dst []byte
			for b.Loop() {
				var err error
				if dst, err = DecodeBody(dst, h, raw, 0); err != nil || len(dst) != len(page) {
					b.Fatalf("%v, %d bytes", err, len(dst))
				}
			}
		})
	}
}

// TestRelease: bodies given back with Release serve later responses, and
// every response still reads its own bytes, by several goroutines at once
// (under -race too); a released Result holds no body.
func TestRelease(t *testing.T) {
	c, err := New(Config{UserAgent: testUA})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cases := bodyCases(t)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				bc := cases[(g*7+i)%len(cases)]
				res := Result{pool: true}
				if err := c.readBody(context.Background(), bc.response(), &res, nil, nil); err != nil {
					t.Error(err)
					return
				}
				if !bytes.Equal(res.Body, bc.page) || !bytes.Equal(res.RawBody, bc.wire) {
					t.Errorf("%s: the body read is not the page's", bc.name)
					return
				}
				res.Release()
				if res.Body != nil || res.RawBody != nil || res.pooled != [2]*[]byte{} {
					t.Errorf("%s: a released result keeps its bodies", bc.name)
					return
				}
				res.Release() // twice: nothing more
			}
		})
	}
	wg.Wait()
	if !raceEnabled {
		// Given back, a page's body costs no allocation of its size.
		bc := cases[len(cases)-1]
		allocs := testing.AllocsPerRun(50, func() {
			res := Result{pool: true}
			c.readBody(context.Background(), bc.response(), &res, nil, nil)
			res.Release()
		})
		res := Result{pool: true}
		c.readBody(context.Background(), bc.response(), &res, nil, nil)
		t.Logf("%s: %.0f allocations a body given back", bc.name, allocs)
		if res.pooled == [2]*[]byte{} && !bc.length {
			t.Errorf("%s: a body read in chunks was not copied into the pool", bc.name)
		}
	}
}

// TestReleaseLargeBody: a body past the largest pooled size is not copied
// into the pool, but into a slice of its own, which Release lets go.
func TestReleaseLargeBody(t *testing.T) {
	c, err := New(Config{UserAgent: testUA, MaxBodySize: 2 * maxPooledBody, MaxRawSize: 2 * maxPooledBody})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	page := benchPage(maxPooledBody + 1)
	bc := bodyCase{"large-gzip-chunked", page, encode(t, "gzip", page), true, false}
	res := Result{pool: true}
	if err := c.readBody(context.Background(), bc.response(), &res, nil, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(res.Body, page) || !bytes.Equal(res.RawBody, bc.wire) {
		t.Fatalf("the body read is not the page (%d bytes, want %d)", len(res.Body), len(page))
	}
	if res.pooled[1] != nil || cap(res.Body) != len(res.Body) {
		t.Errorf("a body of %d bytes took a pooled buffer (cap %d)", len(res.Body), cap(res.Body))
	}
	if res.pooled[0] == nil {
		t.Errorf("the %d raw bytes did not take a pooled buffer", len(res.RawBody))
	}
	res.Release()
	if res.Body != nil || res.RawBody != nil {
		t.Error("a released result keeps its bodies")
	}
}
