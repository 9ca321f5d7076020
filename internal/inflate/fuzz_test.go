package inflate

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	kflate "github.com/klauspost/compress/flate"
	kzlib "github.com/klauspost/compress/zlib"
)

// fuzzLimit bounds the output of both decoders in the fuzz tests.
const fuzzLimit = 1 << 20

// fuzzSeeds returns small valid and hand-broken streams to start from.
func fuzzSeeds(tb testing.TB) [][]byte {
	inputs := testInputs()
	var seeds [][]byte
	for _, name := range []string{"empty", "one", "run1", "short", "periods"} {
		for _, level := range []int{flate.HuffmanOnly, 0, 1, 6, 9} {
			seeds = append(seeds, deflateBytes(tb, inputs[name], level))
		}
	}
	seeds = append(seeds, deflateBytes(tb, inputs["text"][:3000], 6), deflateBytes(tb, inputs["random"][:500], 6))
	var w bitWriter
	fixedBlock(&w, false, lit('a'), match(258, 1), match(3, 259)).sym(256)
	w.bits(1, 3)
	w.bytes()
	w.buf = append(w.buf, 2, 0, 0xfd, 0xff, 'x', 'y')
	seeds = append(seeds, w.bytes())
	var d bitWriter
	lits := make([]uint8, 258)
	lits['a'], lits[256], lits[257] = 1, 2, 2
	bw := dynamicBlock(&d, true, lits, []uint8{1})
	bw.tokens(lit('a'), match(3, 1))
	bw.sym(256)
	return append(seeds, d.bytes())
}

// FuzzAppend compares Append with compress/flate on arbitrary input: both
// must accept the same streams with the same output and length, reject the
// same streams for the same kind of reason after the same partial output,
// and agree on where the output limit cuts.
func FuzzAppend(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, used, err := Append(nil, data, fuzzLimit)
		std, stdUsed, serr := stdInflate(data, fuzzLimit)
		switch {
		case len(std) > fuzzLimit:
			if !errors.Is(err, ErrTooLarge) || !bytes.Equal(out, std[:fuzzLimit]) {
				t.Fatalf("past the limit: got %d bytes, %v", len(out), err)
			}
		case serr == nil:
			if err != nil || !bytes.Equal(out, std) || used != stdUsed {
				t.Fatalf("compress/flate decodes %d bytes from %d; we %d bytes from %d, %v", len(std), stdUsed, len(out), used, err)
			}
		default:
			if !sameClass(err, serr) || !bytes.Equal(out, std) {
				t.Fatalf("compress/flate: %d bytes, %v; we %d bytes, %v", len(std), serr, len(out), err)
			}
		}

		// Bytes already in dst change nothing but the prefix, and neither
		// does room in dst, which lets every symbol take the fast path.
		pre, _, perr := Append(append(make([]byte, 0, 1<<16), "prefix"...), data, fuzzLimit)
		if !bytes.Equal(pre, append([]byte("prefix"), out...)) || fmt.Sprint(perr) != fmt.Sprint(err) {
			t.Fatalf("with prefix: %d bytes, %v; without %d bytes, %v", len(pre), perr, len(out), err)
		}
	})
}

// FuzzGunzip compares Gunzip with compress/gzip the same way, allowing for
// the one intended difference: reserved header flags are rejected here.
func FuzzGunzip(f *testing.F) {
	inputs := testInputs()
	a := gzipBytes(f, inputs["short"], 6)
	f.Add(a)
	f.Add(gzipBytes(f, nil, 6))
	f.Add(gzipBytes(f, inputs["periods"], 1))
	f.Add(slices.Concat(a, gzipBytes(f, inputs["run1"], 9)))
	f.Add(slices.Concat(a, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}))
	s := deflateBytes(f, inputs["short"], 6)
	f.Add(gzipMember(0x1f, []byte("ex"), "name", "comment", s, inputs["short"]))
	f.Add(gzipMember(flagHCRC, nil, "", "", s, inputs["short"]))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, _, err := Gunzip(nil, data, fuzzLimit)
		std, serr, reserved := stdGunzip(data, fuzzLimit)
		switch {
		case len(std) > fuzzLimit:
			if !errors.Is(err, ErrTooLarge) || !bytes.Equal(out, std[:fuzzLimit]) {
				t.Fatalf("past the limit: got %d bytes, %v", len(out), err)
			}
		case reserved:
			if !errors.Is(err, ErrHeader) || !bytes.Equal(out, std) {
				t.Fatalf("reserved flags: got %d bytes, %v", len(out), err)
			}
		case len(data) == 0:
			// compress/gzip reports io.EOF for no input at all.
			if serr != io.EOF || !errors.Is(err, ErrTruncated) {
				t.Fatalf("empty: %v, %v", err, serr)
			}
		case serr == nil:
			if err != nil || !bytes.Equal(out, std) {
				t.Fatalf("compress/gzip decodes %d bytes; we %d bytes, %v", len(std), len(out), err)
			}
		default:
			if !sameClass(err, serr) || !bytes.Equal(out, std) {
				t.Fatalf("compress/gzip: %d bytes, %v; we %d bytes, %v", len(std), serr, len(out), err)
			}
		}
	})
}

// klausInflate decodes src with klauspost's flate, the decoder the
// fetcher hands bodies over its own limit and chained codings to.
func klausInflate(src []byte, limit int) ([]byte, error) {
	return io.ReadAll(io.LimitReader(kflate.NewReader(bytes.NewReader(src)), int64(limit)+1))
}

// FuzzKlauspostFlate: every stream compress/flate accepts, klauspost's
// flate decodes to the same bytes — the fetcher trusts both.
func FuzzKlauspostFlate(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		std, _, serr := stdInflate(data, fuzzLimit)
		if serr != nil || len(std) > fuzzLimit {
			return
		}
		kl, kerr := klausInflate(data, fuzzLimit)
		if kerr != nil || !bytes.Equal(kl, std) {
			t.Fatalf("compress/flate decodes %d bytes; klauspost %d bytes, %v", len(std), len(kl), kerr)
		}
	})
}

// FuzzZlib compares Zlib with compress/zlib, and klauspost's zlib on what
// both accept, allowing for the one intended difference: a preset
// dictionary (FDICT) is rejected here.
func FuzzZlib(f *testing.F) {
	inputs := testInputs()
	for _, name := range []string{"empty", "short", "periods", "run1"} {
		for _, level := range []int{0, 1, 9} {
			f.Add(zlibBytes(f, inputs[name], level))
		}
	}
	z := zlibBytes(f, inputs["short"], 6)
	f.Add(z[:len(z)-2])                                      // a torn trailer
	f.Add(append(slices.Clone(z[:len(z)-1]), z[len(z)-1]^1)) // a wrong checksum
	f.Add([]byte{0x78, 0xbb, 0, 0, 0, 1})                    // FDICT
	f.Fuzz(func(t *testing.T, data []byte) {
		out, _, err := Zlib(nil, data, fuzzLimit)
		std, serr := stdZlib(data, fuzzLimit)
		switch {
		case len(data) >= 2 && data[1]&0x20 != 0 && data[0]&15 == 8 && data[0]>>4 <= 7 && (uint(data[0])<<8|uint(data[1]))%31 == 0:
			if !errors.Is(err, ErrHeader) {
				t.Fatalf("FDICT: %d bytes, %v", len(out), err)
			}
		case len(std) > fuzzLimit:
			if !errors.Is(err, ErrTooLarge) || !bytes.Equal(out, std[:fuzzLimit]) {
				t.Fatalf("past the limit: got %d bytes, %v", len(out), err)
			}
		case serr == nil:
			if err != nil || !bytes.Equal(out, std) {
				t.Fatalf("compress/zlib decodes %d bytes; we %d bytes, %v", len(std), len(out), err)
			}
			kr, kerr := kzlib.NewReader(bytes.NewReader(data))
			if kerr != nil {
				t.Fatalf("klauspost's zlib refuses a stream compress/zlib accepts: %v", kerr)
			}
			kl, kerr := io.ReadAll(io.LimitReader(kr, fuzzLimit+1))
			if kerr != nil || !bytes.Equal(kl, std) {
				t.Fatalf("compress/zlib decodes %d bytes; klauspost %d bytes, %v", len(std), len(kl), kerr)
			}
		default:
			if !sameClass(err, serr) || !bytes.Equal(out, std) {
				t.Fatalf("compress/zlib: %d bytes, %v; we %d bytes, %v", len(std), serr, len(out), err)
			}
		}
	})
}

// stdZlib decodes src with compress/zlib, up to limit+1 bytes.
func stdZlib(src []byte, limit int) ([]byte, error) {
	r, err := zlib.NewReader(bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(r, int64(limit)+1))
}
