package inflate

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
)

var levels = []int{flate.HuffmanOnly, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9}

func sortedNames(m map[string][]byte) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// TestAppendFlateLevels decodes the standard compressor's output at every
// level, into nil, into a sized buffer and after existing bytes, and checks
// that used ends exactly at the stream even with junk after it.
func TestAppendFlateLevels(t *testing.T) {
	inputs := testInputs()
	junk := []byte("\xff\x00junk after the stream\x07")
	for _, name := range sortedNames(inputs) {
		data := inputs[name]
		for _, level := range levels {
			t.Run(fmt.Sprintf("%s/%d", name, level), func(t *testing.T) {
				c := deflateBytes(t, data, level)
				out, used, err := Append(nil, c, len(data))
				if err != nil || !bytes.Equal(out, data) || used != len(c) {
					t.Fatalf("nil dst: err %v, equal %v, used %d of %d", err, bytes.Equal(out, data), used, len(c))
				}
				sized := make([]byte, 0, len(data))
				out, _, err = Append(sized, c, len(data))
				if err != nil || !bytes.Equal(out, data) {
					t.Fatalf("sized dst: err %v", err)
				}
				if len(data) > 0 && &out[0] != &sized[:1][0] {
					t.Errorf("sized dst was reallocated")
				}
				prefix := []byte("existing bytes")
				out, _, err = Append(prefix, c, len(data))
				if err != nil || !bytes.Equal(out, append([]byte("existing bytes"), data...)) {
					t.Fatalf("prefixed dst: err %v", err)
				}
				out, used, err = Append(nil, append(slices.Clip(c), junk...), len(data))
				if err != nil || !bytes.Equal(out, data) || used != len(c) {
					t.Fatalf("junk after: err %v, used %d of %d", err, used, len(c))
				}
			})
		}
	}
}

// TestHTML checks real pages through all three framings against the
// standard library.
func TestHTML(t *testing.T) {
	step := 3 // a third of the sample keeps the test quick
	if testing.Short() {
		step = 10
	}
	for i, p := range htmlPages(t) {
		if i%step != 0 {
			continue
		}
		for _, level := range []int{1, 6, 9} {
			z := gzipBytes(t, p, level)
			out, _, err := Gunzip(make([]byte, 0, len(p)), z, len(p))
			if err != nil || !bytes.Equal(out, p) {
				t.Fatalf("page %d level %d: gunzip err %v", i, level, err)
			}
			std, serr, _ := stdGunzip(z, len(p))
			if serr != nil || !bytes.Equal(std, out) {
				t.Fatalf("page %d level %d: stdlib disagrees: %v", i, level, serr)
			}
			c := deflateBytes(t, p, level)
			if out, used, err := Append(nil, c, len(p)); err != nil || !bytes.Equal(out, p) || used != len(c) {
				t.Fatalf("page %d level %d: append err %v", i, level, err)
			}
			zl := zlibBytes(t, p, level)
			if out, _, err := Zlib(nil, zl, len(p)); err != nil || !bytes.Equal(out, p) {
				t.Fatalf("page %d level %d: zlib err %v", i, level, err)
			}
		}
	}
}

// applyTokens is the reference LZ77 decoder for hand-written blocks.
func applyTokens(out []byte, ts ...token) []byte {
	for _, t := range ts {
		if t.dist == 0 {
			out = append(out, byte(t.lit))
			continue
		}
		for range t.length {
			out = append(out, out[len(out)-t.dist])
		}
	}
	return out
}

// checkStream decodes a hand-written stream, expecting want, and checks
// that compress/flate agrees.
func checkStream(t *testing.T, c, want []byte) {
	t.Helper()
	out, used, err := Append(nil, c, 1<<30)
	if err != nil || !bytes.Equal(out, want) || used != len(c) {
		t.Fatalf("err %v, equal %v (%d vs %d bytes), used %d of %d", err, bytes.Equal(out, want), len(out), len(want), used, len(c))
	}
	std, _, serr := stdInflate(c, 1<<30)
	if serr != nil || !bytes.Equal(std, want) {
		t.Fatalf("compress/flate disagrees: %v", serr)
	}
}

func TestFixedHuffman(t *testing.T) {
	t.Run("compress/flate", func(t *testing.T) {
		// compress/flate picks fixed codes for short inputs at levels 2-9
		// (level 1 stores them).
		data := []byte("a short page, a short page")
		c := deflateBytes(t, data, 6)
		if c[0]>>1&3 != 1 {
			t.Fatalf("compress/flate did not write a fixed block (first byte %#x)", c[0])
		}
		checkStream(t, c, data)
	})
	t.Run("extremes", func(t *testing.T) {
		// Every literal, the farthest distance, the longest length, and
		// overlapping copies of each short period.
		r := rand.New(rand.NewPCG(3, 4))
		var ts []token
		for i := range 32768 {
			if i < 256 {
				ts = append(ts, lit(byte(i)))
			} else {
				ts = append(ts, lit(byte(r.Uint32())))
			}
		}
		ts = append(ts, match(258, 32768), match(258, 32768), match(3, 32768), match(258, 1))
		for d := 1; d <= 20; d++ {
			ts = append(ts, match(3+d*7, d), match(258, d))
		}
		for l := 3; l <= 258; l++ {
			ts = append(ts, match(l, 100+l))
		}
		var w bitWriter
		fixedBlock(&w, true, ts...).sym(256)
		checkStream(t, w.bytes(), applyTokens(nil, ts...))
	})
	t.Run("multiple blocks", func(t *testing.T) {
		var w bitWriter
		a := []token{lit('a'), lit('b'), match(10, 2)}
		fixedBlock(&w, false, a...).sym(256)
		// A stored block in the middle, then a match reaching across both.
		w.bits(0, 3)
		w.bytes()
		w.buf = append(w.buf, 3, 0, 0xfc, 0xff, 'x', 'y', 'z')
		b := []token{match(15, 15)}
		fixedBlock(&w, true, b...).sym(256)
		want := applyTokens(applyTokens(nil, a...), lit('x'), lit('y'), lit('z'))
		checkStream(t, w.bytes(), applyTokens(want, b...))
	})
	t.Run("empty", func(t *testing.T) {
		var w bitWriter
		fixedBlock(&w, true).sym(256)
		checkStream(t, w.bytes(), []byte{})
	})
}

// randomCode returns code lengths for a random complete prefix code over n
// symbols with lengths of at most 15, made by splitting random leaves of a
// tree. Skewed trees reach 15 bits and exercise sub-tables of every width.
func randomCode(r *rand.Rand, n int) []uint8 {
	depths := []uint8{0}
	for len(depths) < n {
		i := r.IntN(len(depths))
		if r.IntN(3) == 0 {
			i = len(depths) - 1 // grow one branch deep
		}
		if depths[i] == 15 {
			continue
		}
		depths[i]++
		depths = append(depths, depths[i])
	}
	r.Shuffle(len(depths), func(i, j int) { depths[i], depths[j] = depths[j], depths[i] })
	return depths
}

// TestDynamicCodes writes dynamic blocks with random complete codes, which
// the standard compressor would rarely produce, to test the table builder
// against canonical codes computed independently.
func TestDynamicCodes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for iter := range 300 {
		nlit := 257 + r.IntN(30)
		ndist := 1 + r.IntN(30)
		// Use a random subset of the alphabets, always with end-of-block.
		litSyms := r.Perm(nlit)[:2+r.IntN(nlit-1)]
		if !slices.Contains(litSyms, 256) {
			litSyms[0] = 256
		}
		distSyms := r.Perm(ndist)[:1+r.IntN(ndist)]
		if len(distSyms) == 1 {
			// A lone symbol must have length 1 (the one incomplete code
			// deflate allows); add another to keep the code complete.
			distSyms = append(distSyms, (distSyms[0]+1)%30)
			ndist = max(ndist, distSyms[1]+1)
		}
		litLens := make([]uint8, nlit)
		for i, l := range randomCode(r, len(litSyms)) {
			litLens[litSyms[i]] = l
		}
		distLens := make([]uint8, ndist)
		for i, l := range randomCode(r, len(distSyms)) {
			distLens[distSyms[i]] = l
		}

		var ts []token
		produced := 0
		for range 2000 {
			s := litSyms[r.IntN(len(litSyms))]
			switch {
			case s < 256:
				ts = append(ts, lit(byte(s)))
				produced++
				continue
			case s == 256 || s > 285:
				continue
			}
			// Pick a length within symbol s's range and a distance
			// with one of the code's distance symbols that fits.
			i := s - 257
			length := lenBase[i]
			if lenExtra[i] > 0 {
				// 284's range would include 258, which is 285's.
				length += r.IntN(1<<lenExtra[i] - int(b2u(s == 284)))
			}
			j := distSyms[r.IntN(len(distSyms))]
			dist := distBase[j]
			if distExtra[j] > 0 {
				dist += r.IntN(1 << distExtra[j])
			}
			if dist > produced {
				continue
			}
			ts = append(ts, match(length, dist))
			produced += length
		}
		var w bitWriter
		bw := dynamicBlock(&w, true, litLens, distLens)
		bw.tokens(ts...)
		bw.sym(256)
		t.Run(fmt.Sprint(iter), func(t *testing.T) {
			checkStream(t, w.bytes(), applyTokens(nil, ts...))
		})
	}
}

// TestAccepted covers unusual codes that compress/flate accepts.
func TestAccepted(t *testing.T) {
	t.Run("lone end-of-block code of length 1", func(t *testing.T) {
		var w bitWriter
		dynamicBlock(&w, true, litLens(map[int]uint8{256: 1}), []uint8{0}).sym(256)
		checkStream(t, w.bytes(), []byte{})
	})
	t.Run("no distance codes, literals only", func(t *testing.T) {
		var w bitWriter
		bw := dynamicBlock(&w, true, litLens(map[int]uint8{'a': 1, 256: 1}), []uint8{0})
		bw.tokens(lit('a'), lit('a'), lit('a'))
		bw.sym(256)
		checkStream(t, w.bytes(), []byte("aaa"))
	})
	t.Run("lone distance code of length 1", func(t *testing.T) {
		var w bitWriter
		lits := make([]uint8, 258)
		lits['a'], lits[256], lits[257] = 1, 2, 2
		bw := dynamicBlock(&w, true, lits, []uint8{1})
		ts := []token{lit('a'), match(3, 1)}
		bw.tokens(ts...)
		bw.sym(256)
		checkStream(t, w.bytes(), applyTokens(nil, ts...))
	})
	t.Run("repeat across the literal/distance boundary", func(t *testing.T) {
		// Lengths: 'a' 1, 255 and 256 2, distances 0-3 2, with one repeat
		// covering 256 and the first two distances.
		lits := make([]uint8, 257)
		lits['a'], lits[255], lits[256] = 1, 2, 2
		var items []clItem
		for _, l := range lits[:256] {
			items = append(items, clItem{sym: int(l)})
		}
		items = append(items, clItem{sym: 16, extra: 0}, clItem{sym: 2}, clItem{sym: 2})
		var w bitWriter
		dynamicHeader(&w, true, 257, 4, clenLens, items)
		bw := &blockWriter{&w, lits, nil, canonical(lits), nil}
		bw.tokens(lit('a'), lit(255))
		bw.sym(256)
		checkStream(t, w.bytes(), []byte("a\xff"))
	})
	t.Run("stored blocks of length 0 and 65535", func(t *testing.T) {
		big := bytes.Repeat([]byte("0123456789abcdef"), 4096)[:65535]
		c := []byte{0, 0, 0, 0xff, 0xff, 1, 0xff, 0xff, 0, 0}
		c = append(c, big...)
		checkStream(t, c, big)
	})
}

// TestLimits checks that output stops at exactly max bytes.
func TestLimits(t *testing.T) {
	inputs := testInputs()
	for _, name := range []string{"text", "random", "run300k", "periods"} {
		data := inputs[name]
		for _, level := range []int{1, 6, flate.HuffmanOnly, 0} {
			c := deflateBytes(t, data, level)
			for _, m := range []int{-1, 0, 1, 2, 7, 100, 257, 258, 4095, 4096, 9999, len(data) - 1, len(data), len(data) + 1} {
				if m > len(data)+1 {
					continue
				}
				out, _, err := Append(nil, c, m)
				switch {
				case m >= len(data):
					if err != nil || !bytes.Equal(out, data) {
						t.Fatalf("%s/%d max %d: err %v", name, level, m, err)
					}
				default:
					if !errors.Is(err, ErrTooLarge) || !bytes.Equal(out, data[:max(m, 0)]) {
						t.Fatalf("%s/%d max %d: err %v, got %d bytes", name, level, m, err, len(out))
					}
				}
				// Spare capacity past len(dst)+max is never written.
				dst := make([]byte, 5, 5+len(data)+64)
				for i := range dst[:cap(dst)] {
					dst[:cap(dst)][i] = 0xaa
				}
				out, _, _ = Append(dst, c, m)
				if len(out) > 5+max(m, 0) {
					t.Fatalf("%s/%d max %d: %d bytes out", name, level, m, len(out))
				}
				for i, v := range dst[5+max(m, 0) : cap(dst)] {
					if v != 0xaa {
						t.Fatalf("%s/%d max %d: wrote at %d past the limit", name, level, m, i)
					}
				}
			}
		}
	}
	t.Run("empty stream with max 0", func(t *testing.T) {
		c := deflateBytes(t, nil, 6)
		if out, _, err := Append(nil, c, 0); err != nil || len(out) != 0 {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("bomb", func(t *testing.T) {
		zeros := make([]byte, 10<<20)
		for _, level := range []int{1, 9} {
			c := deflateBytes(t, zeros, level)
			const m = 1 << 16
			out, _, err := Append(nil, c, m)
			if !errors.Is(err, ErrTooLarge) || len(out) != m || cap(out) > 4*m {
				t.Fatalf("level %d: err %v, len %d cap %d", level, err, len(out), cap(out))
			}
			z := gzipBytes(t, zeros, level)
			out, _, err = Gunzip(nil, z, m)
			if !errors.Is(err, ErrTooLarge) || len(out) != m || cap(out) > 4*m {
				t.Fatalf("gzip level %d: err %v, len %d cap %d", level, err, len(out), cap(out))
			}
		}
	})
}

// TestTruncation decodes every prefix of some streams: each must fail as
// truncated with correct partial output, exactly as compress/flate's.
func TestTruncation(t *testing.T) {
	inputs := testInputs()
	var lone bitWriter
	fixedBlock(&lone, true, lit('a'), match(5, 1), lit('b')).sym(256)
	streams := map[string][]byte{
		"dynamic": deflateBytes(t, inputs["text"][:6000], 6),
		"stored":  deflateBytes(t, inputs["random"][:3000], 0),
		"fixed":   lone.bytes(),
		"huffman": deflateBytes(t, inputs["text"][:3000], flate.HuffmanOnly),
		"periods": deflateBytes(t, inputs["periods"], 9),
	}
	// Several small blocks of different kinds.
	var multi bytes.Buffer
	fw, _ := flate.NewWriter(&multi, 5)
	fw.Write(inputs["text"][:500])
	fw.Flush()
	fw.Write(inputs["random"][:300])
	fw.Flush()
	fw.Write([]byte("abc"))
	fw.Close()
	streams["multi"] = multi.Bytes()

	for _, name := range sortedNames(streams) {
		c := streams[name]
		full, _, err := Append(nil, c, 1<<30)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := range len(c) {
			out, _, err := Append(nil, c[:i], 1<<30)
			if !errors.Is(err, io.ErrUnexpectedEOF) || !errors.Is(err, ErrTruncated) {
				t.Fatalf("%s[:%d]: err %v", name, i, err)
			}
			if !bytes.HasPrefix(full, out) {
				t.Fatalf("%s[:%d]: output not a prefix", name, i)
			}
			std, _, serr := stdInflate(c[:i], 1<<30)
			if !isTruncation(serr) || !bytes.Equal(std, out) {
				t.Fatalf("%s[:%d]: compress/flate gives %d bytes and %v, we %d bytes", name, i, len(std), serr, len(out))
			}
		}
	}
}

// corrupt returns a hand-written stream via f.
func corrupt(f func(w *bitWriter)) []byte {
	var w bitWriter
	f(&w)
	// Padding, so that no case fails for want of input.
	return append(w.bytes(), make([]byte, 64)...)
}

// TestCorrupt checks each validation rule with a stream that breaks it.
func TestCorrupt(t *testing.T) {
	// A complete lit/len code with a length symbol: 'a', 256 and 257.
	abc := litLens(map[int]uint8{'a': 1, 256: 2})
	abc = append(abc, 2) // symbol 257, length 3
	zeros := func(n int) []clItem { return slices.Repeat([]clItem{{sym: 0}}, n) }
	cases := []struct {
		name, why string
		stream    []byte
	}{
		{"block type 3", "invalid block type", []byte{0x07, 0, 0}},
		{"HLIT 30", "too many literal/length codes", corrupt(func(w *bitWriter) { dynamicHeader(w, true, 287, 1, clenLens, nil) })},
		{"HLIT 31", "too many literal/length codes", corrupt(func(w *bitWriter) { dynamicHeader(w, true, 288, 1, clenLens, nil) })},
		{"HDIST 30", "too many distance codes", corrupt(func(w *bitWriter) { dynamicHeader(w, true, 257, 31, clenLens, nil) })},
		{"HDIST 31", "too many distance codes", corrupt(func(w *bitWriter) { dynamicHeader(w, true, 257, 32, clenLens, nil) })},
		{"repeat first", "repeat of no previous code length", corrupt(func(w *bitWriter) {
			dynamicHeader(w, true, 257, 1, clenLens, []clItem{{sym: 16}})
		})},
		{"repeat 16 past end", "code length repeat past the end", corrupt(func(w *bitWriter) {
			dynamicHeader(w, true, 257, 1, clenLens, append(zeros(256), clItem{sym: 16, extra: 0}))
		})},
		{"repeat 17 past end", "code length repeat past the end", corrupt(func(w *bitWriter) {
			dynamicHeader(w, true, 257, 1, clenLens, append(zeros(256), clItem{sym: 17, extra: 1}))
		})},
		{"repeat 18 past end", "code length repeat past the end", corrupt(func(w *bitWriter) {
			dynamicHeader(w, true, 257, 1, clenLens, []clItem{{18, 127}, {18, 127}})
		})},
		{"code-length code over-subscribed", "bad code lengths code", corrupt(func(w *bitWriter) {
			var cl [19]uint8
			cl[0], cl[1], cl[2] = 1, 1, 1
			dynamicHeader(w, true, 257, 1, cl, nil)
		})},
		{"code-length code incomplete", "bad code lengths code", corrupt(func(w *bitWriter) {
			var cl [19]uint8
			cl[0], cl[1] = 1, 2
			dynamicHeader(w, true, 257, 1, cl, nil)
		})},
		{"code-length code empty", "invalid code length code", corrupt(func(w *bitWriter) {
			dynamicHeader(w, true, 257, 1, [19]uint8{}, nil)
		})},
		{"lit/len over-subscribed", "bad literal/length code lengths", corrupt(func(w *bitWriter) {
			dynamicBlock(w, true, slices.Repeat([]uint8{8}, 257), []uint8{1, 1})
		})},
		{"lit/len incomplete", "bad literal/length code lengths", corrupt(func(w *bitWriter) {
			dynamicBlock(w, true, litLens(map[int]uint8{'a': 2, 256: 2}), []uint8{1, 1})
		})},
		{"lit/len single code of length 2", "bad literal/length code lengths", corrupt(func(w *bitWriter) {
			dynamicBlock(w, true, litLens(map[int]uint8{256: 2}), []uint8{1, 1})
		})},
		{"lit/len over-subscribed at 15 bits", "bad literal/length code lengths", corrupt(func(w *bitWriter) {
			// Lengths 1-14 and three of 15: one 15-bit code too many.
			l := make([]uint8, 257)
			for i := range 14 {
				l[i] = uint8(i + 1)
			}
			l[14], l[15], l[256] = 15, 15, 15
			dynamicBlock(w, true, l, []uint8{1, 1})
		})},
		{"distance over-subscribed", "bad distance code lengths", corrupt(func(w *bitWriter) {
			dynamicBlock(w, true, abc, []uint8{1, 1, 1})
		})},
		{"distance incomplete", "bad distance code lengths", corrupt(func(w *bitWriter) {
			dynamicBlock(w, true, abc, []uint8{2, 2, 2})
		})},
		{"lit/len empty", "invalid literal/length code", corrupt(func(w *bitWriter) {
			dynamicBlock(w, true, make([]uint8, 257), []uint8{1, 1})
		})},
		{"unused half of lone lit/len code", "invalid literal/length code", corrupt(func(w *bitWriter) {
			dynamicBlock(w, true, litLens(map[int]uint8{256: 1}), []uint8{0})
			w.bits(1, 1)
		})},
		{"unused half of lone distance code", "invalid distance code", corrupt(func(w *bitWriter) {
			bw := dynamicBlock(w, true, abc, []uint8{1})
			bw.tokens(lit('a'))
			bw.sym(257)
			w.bits(1, 1)
		})},
		{"distance code used but empty", "invalid distance code", corrupt(func(w *bitWriter) {
			bw := dynamicBlock(w, true, abc, []uint8{0})
			bw.tokens(lit('a'))
			bw.sym(257)
		})},
		{"fixed lit/len 286", "invalid literal/length code", corrupt(func(w *bitWriter) { fixedBlock(w, true).sym(286) })},
		{"fixed lit/len 287", "invalid literal/length code", corrupt(func(w *bitWriter) { fixedBlock(w, true).sym(287) })},
		{"fixed lit/len 286 after output", "invalid literal/length code", corrupt(func(w *bitWriter) {
			fixedBlock(w, true, lit('a'), match(20, 1)).sym(286)
		})},
		{"fixed distance 30", "invalid distance code", corrupt(func(w *bitWriter) {
			bw := fixedBlock(w, true, lit('a'))
			bw.sym(257)
			w.code(30, 5)
		})},
		{"fixed distance 31", "invalid distance code", corrupt(func(w *bitWriter) {
			bw := fixedBlock(w, true, lit('a'))
			bw.sym(257)
			w.code(31, 5)
		})},
		{"distance too far", "distance too far back", corrupt(func(w *bitWriter) {
			fixedBlock(w, true, lit('a'), match(3, 2)).sym(256)
		})},
		{"distance too far in later block", "distance too far back", corrupt(func(w *bitWriter) {
			fixedBlock(w, false, lit('a'), match(20, 1)).sym(256)
			fixedBlock(w, true, match(3, 22)).sym(256)
		})},
		{"stored length check", "stored block length check", []byte{1, 5, 0, 0xfb, 0xff, 'a', 'b', 'c', 'd', 'e'}},
		{"stored length check after block", "stored block length check", corrupt(func(w *bitWriter) {
			fixedBlock(w, false, lit('a')).sym(256)
			w.bits(1, 3)
			w.bytes()
			w.buf = append(w.buf, 1, 0, 0xff, 0xff, 'x')
		})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			std, _, serr := stdInflate(c.stream, 1<<20)
			var ce flate.CorruptInputError
			if !errors.As(serr, &ce) {
				t.Fatalf("compress/flate: %v", serr)
			}
			// Without room in dst the first symbol takes the careful
			// path; with room, every symbol takes the fast one.
			for _, dst := range [][]byte{nil, make([]byte, 0, 1<<16)} {
				out, _, err := Append(dst, c.stream, 1<<20)
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.why) {
					t.Fatalf("cap %d: got %v, want ErrCorrupt for %q", cap(dst), err, c.why)
				}
				if !bytes.Equal(out, std) {
					t.Fatalf("cap %d: output %q, compress/flate's %q", cap(dst), out, std)
				}
			}
		})
	}
	t.Run("no reaching into dst", func(t *testing.T) {
		var w bitWriter
		fixedBlock(&w, true, match(3, 1)).sym(256)
		out, _, err := Append([]byte("abc"), w.bytes(), 100)
		if !errors.Is(err, ErrCorrupt) || string(out) != "abc" {
			t.Fatalf("got %q, %v", out, err)
		}
	})
	t.Run("no end-of-block code", func(t *testing.T) {
		// A valid code without symbol 256 can only run out of input.
		var w bitWriter
		bw := dynamicBlock(&w, true, litLens(map[int]uint8{'a': 1, 'b': 1}), []uint8{0})
		bw.tokens(lit('a'), lit('b'), lit('a'))
		c := w.bytes()
		out, _, err := Append(nil, c, 100)
		std, _, serr := stdInflate(c, 100)
		if !errors.Is(err, ErrTruncated) || !isTruncation(serr) || !bytes.Equal(out, std) {
			t.Fatalf("got %q, %v; compress/flate %q, %v", out, err, std, serr)
		}
	})
}

// TestBuild checks decoding tables directly: for random complete codes
// over both alphabets, every symbol's code must look up to that symbol and
// length, through a sub-table where the code is longer than the root.
func TestBuild(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var tab tables
	for iter := range 3000 {
		lit := iter%2 == 0
		n, t0, root, syms := 30, tab.dist[:], uint(distBits), distEntries[:30]
		if lit {
			n, t0, root, syms = 286, tab.lit[:], uint(litBits), litEntries[:286]
		}
		k := 2 + r.IntN(n-1)
		lens := make([]uint8, n)
		code := randomCode(r, k)
		for i, s := range r.Perm(n)[:k] {
			lens[s] = code[i]
		}
		minLen, ok := build(t0, root, lens, syms)
		if !ok {
			t.Fatalf("complete code %v rejected", lens)
		}
		codes := canonical(lens)
		wantMin := uint8(15)
		groupMax := map[uint]uint{} // longest code under each linked slot
		for s, l := range lens {
			if l == 0 {
				continue
			}
			wantMin = min(wantMin, l)
			rev := uint(bits.Reverse16(codes[s]) >> (16 - l))
			if uint(l) > root {
				groupMax[rev&(1<<root-1)] = max(groupMax[rev&(1<<root-1)], uint(l))
			}
			e := t0[rev&(1<<root-1)]
			if e&entLink != 0 {
				e = t0[e>>16+uint32(rev>>root)&(1<<(e>>4&15)-1)]
			}
			if e&15 != uint32(l) || e&^15 != syms[s] {
				t.Fatalf("symbol %d, length %d: entry %#x", s, l, e)
			}
		}
		if minLen != uint(wantMin) {
			t.Fatalf("min length %d, want %d", minLen, wantMin)
		}
		// Sub-tables no wider than their longest code needs keep the
		// tables within the worst-case sizes they are allocated with.
		for p, m := range groupMax {
			if w := uint(t0[p] >> 4 & 15); w != m-root {
				t.Fatalf("slot %d: sub-table width %d, longest code %d", p, w, m)
			}
		}
	}
}

// litLens returns the code lengths of a literal/length alphabet of 257
// symbols, zero but for lens.
func litLens(lens map[int]uint8) []uint8 {
	l := make([]uint8, 257)
	for s, n := range lens {
		l[s] = n
	}
	return l
}
