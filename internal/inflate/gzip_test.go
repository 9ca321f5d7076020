package inflate

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"slices"
	"testing"
)

// gzipMember builds a gzip member by hand around a raw deflate stream, so
// that tests control every header field.
func gzipMember(flags byte, extra []byte, name, comment string, stream, data []byte) []byte {
	h := []byte{0x1f, 0x8b, 8, flags, 0, 0, 0, 0, 0, 255}
	if flags&flagExtra != 0 {
		h = binary.LittleEndian.AppendUint16(h, uint16(len(extra)))
		h = append(h, extra...)
	}
	if flags&flagName != 0 {
		h = append(append(h, name...), 0)
	}
	if flags&flagComment != 0 {
		h = append(append(h, comment...), 0)
	}
	if flags&flagHCRC != 0 {
		h = binary.LittleEndian.AppendUint16(h, uint16(crc32.ChecksumIEEE(h)))
	}
	h = append(h, stream...)
	h = binary.LittleEndian.AppendUint32(h, crc32.ChecksumIEEE(data))
	return binary.LittleEndian.AppendUint32(h, uint32(len(data)))
}

// checkGunzip decodes z expecting want and err (nil for success), and
// checks that compress/gzip agrees unless ours rejects reserved flags.
func checkGunzip(t *testing.T, z, want []byte, wantErr error) {
	t.Helper()
	out, _, err := Gunzip(nil, z, 1<<20)
	if !errors.Is(err, wantErr) || wantErr == nil && err != nil || !bytes.Equal(out, want) {
		t.Fatalf("got %d bytes, %v; want %d bytes, %v", len(out), err, len(want), wantErr)
	}
	std, serr, reserved := stdGunzip(z, 1<<20)
	if reserved {
		return
	}
	if !bytes.Equal(std, out) || !sameClass(err, serr) {
		t.Fatalf("compress/gzip gives %d bytes, %v; we %d bytes, %v", len(std), serr, len(out), err)
	}
}

// sameClass reports whether our error and the standard library's describe
// the same kind of failure.
func sameClass(ours, std error) bool {
	var ce flate.CorruptInputError
	switch {
	case ours == nil || std == nil:
		return ours == nil && std == nil
	case errors.Is(ours, ErrTruncated):
		return errors.Is(std, io.ErrUnexpectedEOF)
	case errors.Is(ours, ErrCorrupt):
		return errors.As(std, &ce)
	case errors.Is(ours, ErrChecksum):
		return errors.Is(std, gzip.ErrChecksum) || errors.Is(std, zlib.ErrChecksum)
	case errors.Is(ours, ErrHeader):
		return errors.Is(std, gzip.ErrHeader) || errors.Is(std, zlib.ErrHeader)
	}
	return false
}

func TestGunzip(t *testing.T) {
	inputs := testInputs()
	a, b := inputs["text"], inputs["short"]
	za, zb := gzipBytes(t, a, 6), gzipBytes(t, b, 9)
	ab := append(slices.Clone(a), b...)
	sa := deflateBytes(t, a, 6)

	t.Run("levels", func(t *testing.T) {
		for _, name := range sortedNames(inputs) {
			for _, level := range levels {
				data := inputs[name]
				if len(data) > 1<<20 {
					continue
				}
				checkGunzip(t, gzipBytes(t, data, level), data, nil)
			}
		}
	})
	t.Run("two members", func(t *testing.T) {
		checkGunzip(t, slices.Concat(za, zb), ab, nil)
	})
	t.Run("empty member between", func(t *testing.T) {
		checkGunzip(t, slices.Concat(za, gzipBytes(t, nil, 6), zb), ab, nil)
	})
	t.Run("header fields", func(t *testing.T) {
		for _, flags := range []byte{0, 1, flagExtra, flagName, flagComment, flagHCRC, 0x1f} {
			z := gzipMember(flags, []byte("xtra"), "page.html", "a comment", sa, a)
			checkGunzip(t, z, a, nil)
		}
	})
	t.Run("name of 511 bytes", func(t *testing.T) {
		name := string(bytes.Repeat([]byte{'n'}, 511))
		checkGunzip(t, gzipMember(flagName, nil, name, "", sa, a), a, nil)
	})
	t.Run("name of 512 bytes", func(t *testing.T) {
		name := string(bytes.Repeat([]byte{'n'}, 512))
		checkGunzip(t, gzipMember(flagName, nil, name, "", sa, a), nil, ErrHeader)
	})
	t.Run("header CRC mismatch", func(t *testing.T) {
		z := gzipMember(flagHCRC|flagName, nil, "x", "", sa, a)
		z[13] ^= 1
		checkGunzip(t, z, nil, ErrHeader)
	})
	t.Run("bad magic", func(t *testing.T) {
		z := slices.Clone(za)
		z[1] = 0x8c
		checkGunzip(t, z, nil, ErrHeader)
	})
	t.Run("method 7", func(t *testing.T) {
		z := slices.Clone(za)
		z[2] = 7
		checkGunzip(t, z, nil, ErrHeader)
	})
	t.Run("reserved flags", func(t *testing.T) {
		// compress/gzip ignores these bits; RFC 1952 says to reject them.
		for _, f := range []byte{0x20, 0x40, 0x80} {
			z := slices.Clone(za)
			z[3] |= f
			checkGunzip(t, z, nil, ErrHeader)
			checkGunzip(t, slices.Concat(zb, z), b, ErrHeader)
		}
	})
	t.Run("CRC mismatch", func(t *testing.T) {
		z := slices.Clone(za)
		z[len(z)-8] ^= 0x40
		checkGunzip(t, z, a, ErrChecksum)
	})
	t.Run("size mismatch", func(t *testing.T) {
		z := slices.Clone(za)
		z[len(z)-1] ^= 1
		checkGunzip(t, z, a, ErrChecksum)
	})
	t.Run("corrupt data", func(t *testing.T) {
		z := slices.Clone(zb)
		z[10] |= 6 // block type 3
		checkGunzip(t, z, nil, ErrCorrupt)
	})
	t.Run("empty", func(t *testing.T) {
		if out, _, err := Gunzip(nil, nil, 100); !errors.Is(err, ErrTruncated) || len(out) != 0 {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("trailing data", func(t *testing.T) {
		// Whatever follows a member must be another member, as in
		// compress/gzip: short tails are truncated headers, longer ones
		// bad headers.
		for _, tail := range [][]byte{
			{0}, make([]byte, 9), {0x1f, 0x8b, 8}, []byte("garbage"),
		} {
			checkGunzip(t, slices.Concat(za, tail), a, ErrTruncated)
		}
		for _, tail := range [][]byte{
			make([]byte, 10), make([]byte, 512), []byte("\n<html>garbage</html>\n"),
		} {
			checkGunzip(t, slices.Concat(za, tail), a, ErrHeader)
		}
	})
	t.Run("members are independent", func(t *testing.T) {
		// The second member starts with a match that could only refer to
		// the first member's output.
		var w bitWriter
		fixedBlock(&w, true, match(4, 1)).sym(256)
		second := gzipMember(0, nil, "", "", w.bytes(), []byte("xxxx"))
		checkGunzip(t, slices.Concat(gzipBytes(t, []byte("x"), 6), second), []byte("x"), ErrCorrupt)
	})
	t.Run("limit across members", func(t *testing.T) {
		z := slices.Concat(za, za)
		m := len(a) + 1000
		out, _, err := Gunzip([]byte("dst"), z, m)
		if !errors.Is(err, ErrTooLarge) || !bytes.Equal(out, slices.Concat([]byte("dst"), a, a[:1000])) {
			t.Fatalf("got %d bytes, %v", len(out), err)
		}
		if out, _, err := Gunzip(nil, z, 2*len(a)); err != nil || len(out) != 2*len(a) {
			t.Fatalf("exact limit: %v", err)
		}
	})
	t.Run("truncation", func(t *testing.T) {
		// Every prefix of two members with all header fields: truncated,
		// except the one ending right after the first member.
		first := gzipMember(0x1f, []byte("xtra"), "n", "c", deflateBytes(t, b, 6), b)
		z := slices.Concat(first, zb)
		for i := range len(z) {
			out, _, err := Gunzip(nil, z[:i], 1<<20)
			if i == len(first) {
				if err != nil || !bytes.Equal(out, b) {
					t.Fatalf("[:%d]: %v", i, err)
				}
				continue
			}
			if !errors.Is(err, io.ErrUnexpectedEOF) || !bytes.HasPrefix(bb(b, b), out) {
				t.Fatalf("[:%d]: %d bytes, %v", i, len(out), err)
			}
			std, serr, _ := stdGunzip(z[:i], 1<<20)
			if i > 0 && !isTruncation(serr) || !bytes.Equal(std, out) {
				t.Fatalf("[:%d]: compress/gzip gives %d bytes, %v; we %d", i, len(std), serr, len(out))
			}
		}
	})
}

func bb(a, b []byte) []byte { return slices.Concat(a, b) }

func TestGzipSize(t *testing.T) {
	for _, n := range []int{0, 1, 1000, 70000} {
		z := gzipBytes(t, make([]byte, n), 6)
		if size, ok := GzipSize(z); !ok || size != uint32(n) {
			t.Errorf("%d bytes: got %d, %v", n, size, ok)
		}
	}
	if _, ok := GzipSize(make([]byte, 19)); ok {
		t.Errorf("19 bytes hold a member")
	}
}

func TestZlib(t *testing.T) {
	inputs := testInputs()
	data := inputs["text"]
	z := zlibBytes(t, data, 6)
	check := func(t *testing.T, z, want []byte, wantErr error) {
		t.Helper()
		out, _, err := Zlib(nil, z, 1<<20)
		if !errors.Is(err, wantErr) || wantErr == nil && err != nil || !bytes.Equal(out, want) {
			t.Fatalf("got %d bytes, %v; want %d bytes, %v", len(out), err, len(want), wantErr)
		}
		var std []byte
		r, serr := zlib.NewReader(bytes.NewReader(z))
		if serr == nil {
			std, serr = io.ReadAll(r)
		}
		if !bytes.Equal(std, out) || !sameClass(err, serr) {
			t.Fatalf("compress/zlib gives %d bytes, %v", len(std), serr)
		}
	}
	t.Run("levels", func(t *testing.T) {
		for _, name := range sortedNames(inputs) {
			for _, level := range levels {
				if d := inputs[name]; len(d) <= 1<<20 {
					check(t, zlibBytes(t, d, level), d, nil)
				}
			}
		}
	})
	t.Run("trailing bytes ignored", func(t *testing.T) {
		check(t, slices.Concat(z, []byte("trailing")), data, nil)
	})
	t.Run("adler mismatch", func(t *testing.T) {
		bad := slices.Clone(z)
		bad[len(bad)-1] ^= 1
		check(t, bad, data, ErrChecksum)
	})
	t.Run("truncated trailer", func(t *testing.T) {
		check(t, z[:len(z)-1], data, ErrTruncated)
	})
	t.Run("truncated header", func(t *testing.T) {
		check(t, z[:1], nil, ErrTruncated)
	})
	// fcheck returns cmf and flg with flg's check bits set to pass.
	fcheck := func(cmf, flg byte) [2]byte {
		flg &^= 31
		return [2]byte{cmf, flg + byte(31-(uint(cmf)<<8|uint(flg))%31)%31}
	}
	for name, hdr := range map[string][2]byte{
		"method 7":    fcheck(0x77, 0x80),
		"window 64K":  fcheck(0x88, 0x80),
		"fcheck":      {0x78, 0x9d},
		"fdict":       fcheck(0x78, 0xa0),
		"fdict level": fcheck(0x78, 0xe0),
	} {
		t.Run(name, func(t *testing.T) {
			bad := slices.Clone(z)
			bad[0], bad[1] = hdr[0], hdr[1]
			out, _, err := Zlib(nil, bad, 1<<20)
			if !errors.Is(err, ErrHeader) || len(out) != 0 {
				t.Fatalf("got %v", err)
			}
			_, serr := zlib.NewReader(bytes.NewReader(bad))
			want := zlib.ErrHeader
			if hdr[1]&0x20 != 0 {
				// compress/zlib, given no dictionary, wants the ID of
				// an empty one: see Zlib's doc.
				want = zlib.ErrDictionary
			}
			if !errors.Is(serr, want) {
				t.Fatalf("compress/zlib: %v", serr)
			}
		})
	}
}

// TestUsed: Gunzip and Zlib say how far into src they got: all of it for
// a gzip file, through the trailer for zlib (bytes after it ignored), and
// no further than the input a bomb's first max bytes took.
func TestUsed(t *testing.T) {
	data := bytes.Repeat([]byte("<p>the crawler reads the page once</p>\n"), 2000)
	z := gzipBytes(t, data, 6)
	two := slices.Concat(z, z)
	if out, used, err := Gunzip(nil, two, 1<<20); err != nil || used != len(two) || len(out) != 2*len(data) {
		t.Errorf("Gunzip of two members: %d bytes, used %d of %d, %v", len(out), used, len(two), err)
	}
	zl := zlibBytes(t, data, 6)
	if out, used, err := Zlib(nil, slices.Concat(zl, []byte("junk after")), 1<<20); err != nil || used != len(zl) || !bytes.Equal(out, data) {
		t.Errorf("Zlib with junk after: used %d, want %d; %v", used, len(zl), err)
	}
	bomb := gzipBytes(t, make([]byte, 8<<20), 9)
	out, used, err := Gunzip(nil, bomb, 1<<20)
	if !errors.Is(err, ErrTooLarge) || len(out) != 1<<20 || used <= 10 || used >= len(bomb)/2 {
		t.Errorf("bomb: %d bytes, used %d of %d, %v", len(out), used, len(bomb), err)
	}
	if _, used, err := Gunzip(nil, z[:len(z)/2], 1<<20); !errors.Is(err, ErrTruncated) || used > len(z)/2 {
		t.Errorf("cut in half: used %d of %d, %v", used, len(z)/2, err)
	}
}
