package simhash

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func words(r *rand.Rand, n int) []string {
	vocab := strings.Fields("the crawler fetches pages politely from every host and records what it saw in warc files " +
		"while robots rules sitemaps canonical links session ids calendars facets traps and budgets shape the frontier " +
		"alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon")
	w := make([]string, n)
	for i := range w {
		w[i] = vocab[r.IntN(len(vocab))] + fmt.Sprint(r.IntN(50))
	}
	return w
}

func TestNearDuplicates(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		w := words(r, 2000)
		a := Sum([]byte(strings.Join(w, " ")))
		w[r.IntN(len(w))] = "changed"
		b := Sum([]byte(strings.Join(w, " ")))
		if d := Distance(a, b); d > 3 {
			t.Errorf("trial %d: one word changed: distance %d, want ≤ 3", trial, d)
		}
		other := Sum([]byte(strings.Join(words(r, 2000), " ")))
		if d := Distance(a, other); d < 12 {
			t.Errorf("trial %d: unrelated pages: distance %d, want far apart", trial, d)
		}
	}
}

func TestSumNormalizes(t *testing.T) {
	a := Sum([]byte("Hello, World! The quick brown fox."))
	b := Sum([]byte("hello world\n the QUICK   brown fox"))
	if a != b {
		t.Errorf("case and punctuation changed the sum: %x %x", a, b)
	}
	if Sum(nil) != 0 || Sum([]byte(" ,. ")) != 0 {
		t.Error("no words: want 0")
	}
	if Sum([]byte("one")) == Sum([]byte("two")) {
		t.Error("short texts collide")
	}
	if Sum([]byte("Größe café naïve")) != Sum([]byte("GRÖSSE CAFÉ NAÏVE")) && Sum([]byte("café")) != Sum([]byte("CAFÉ")) {
		t.Error("non-ASCII case folding")
	}
}

func TestDistance(t *testing.T) {
	if Distance(0, 0) != 0 || Distance(0, ^uint64(0)) != 64 || Distance(0b1011, 0b0001) != 2 {
		t.Error("Distance")
	}
}

func TestIndexExact(t *testing.T) {
	for k := 0; k <= MaxK; k++ {
		r := rand.New(rand.NewPCG(uint64(k), 9))
		ix := NewIndex[int](k, 1<<20)
		var all []uint64
		for i := range 5000 {
			fp := r.Uint64()
			if i%5 == 0 && len(all) > 0 {
				// A near neighbour of an earlier one, at 0..k+2 bits.
				fp = all[r.IntN(len(all))]
				for range r.IntN(k + 3) {
					fp ^= 1 << r.IntN(64)
				}
			}
			all = append(all, fp)
			ix.Add(fp, i)
		}
		for q := range 300 {
			fp := all[r.IntN(len(all))]
			if q%2 == 0 {
				fp ^= 1 << r.IntN(64)
			}
			want := map[int]bool{}
			for i, c := range all {
				if Distance(c, fp) <= k {
					want[i] = true
				}
			}
			got := map[int]bool{}
			for _, m := range ix.Near(fp) {
				if got[m.Value] {
					t.Fatalf("k=%d: entry %d reported twice", k, m.Value)
				}
				if m.Distance != Distance(m.Fingerprint, fp) || all[m.Value] != m.Fingerprint {
					t.Fatalf("k=%d: bad match %+v", k, m)
				}
				got[m.Value] = true
			}
			if len(got) != len(want) {
				t.Fatalf("k=%d: query %x: got %d matches, want %d", k, fp, len(got), len(want))
			}
			for i := range want {
				if !got[i] {
					t.Fatalf("k=%d: missed entry %d", k, i)
				}
			}
		}
	}
}

func TestIndexEvictsOldest(t *testing.T) {
	ix := NewIndex[string](3, 3)
	ix.Add(0x1, "a")
	ix.Add(0x3, "b")
	ix.Add(0xff00, "c")
	ix.Add(0x7, "d") // evicts a
	if ix.Len() != 3 {
		t.Fatalf("Len = %d", ix.Len())
	}
	var got []string
	for _, m := range ix.Near(0x1) {
		got = append(got, m.Value)
	}
	if strings.Join(got, ",") != "b,d" {
		t.Errorf("Near(1) = %v, want b,d", got)
	}
	for range 10 {
		ix.Add(0xff00, "x")
	}
	if m := ix.Near(0x1); len(m) != 0 {
		t.Errorf("after churn: %v", m)
	}
	if m := ix.Near(0xff00); len(m) != 3 {
		t.Errorf("after churn: %d matches of 0xff00, want 3", len(m))
	}
}

func TestNewIndexPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("k=4: no panic")
		}
	}()
	NewIndex[int](4, 10)
}

func BenchmarkSum(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	var sb strings.Builder
	for sb.Len() < 50<<10 {
		sb.WriteString(strings.Join(words(r, 100), " "))
		sb.WriteString(". ")
	}
	text := []byte(sb.String()[:50<<10])
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Sum(text)
	}
}

func BenchmarkNear(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	const n = 1_000_000
	ix := NewIndex[int32](3, n)
	fps := make([]uint64, n)
	for i := range fps {
		fps[i] = r.Uint64()
		ix.Add(fps[i], int32(i))
	}
	var dst []Match[int32]
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		q := fps[i%n] ^ 0b101
		dst = ix.AppendNear(dst[:0], q)
		if len(dst) == 0 {
			b.Fatal("no match")
		}
		i += 7919
	}
}

// sumReference is Sum as it was written before its bytes were classified
// by table (a comparison per kind of byte): Sum must give the same
// fingerprints, which the crawl compares across its pages.
func sumReference(text []byte) uint64 {
	isWordASCII := func(c byte) bool {
		return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	var (
		acc    accumulator
		window [Shingle]uint64
		words  int
	)
	for i := 0; i < len(text); {
		for i < len(text) {
			c := text[i]
			if c < utf8.RuneSelf {
				if isWordASCII(c) {
					break
				}
				i++
				continue
			}
			r, n := utf8.DecodeRune(text[i:])
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				break
			}
			i += n
		}
		if i >= len(text) {
			break
		}
		h := uint64(fnvOffset)
		for i < len(text) {
			c := text[i]
			if c < utf8.RuneSelf {
				if !isWordASCII(c) {
					break
				}
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				h = (h ^ uint64(c)) * fnvPrime
				i++
				continue
			}
			r, n := utf8.DecodeRune(text[i:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				break
			}
			r = unicode.ToLower(r)
			for r > 0 {
				h = (h ^ uint64(r&0xff)) * fnvPrime
				r >>= 8
			}
			i += n
		}
		copy(window[:], window[1:])
		window[Shingle-1] = h
		words++
		if words >= Shingle {
			acc.add(shingle(window[:]))
		}
	}
	if words == 0 {
		return 0
	}
	if words < Shingle {
		acc.add(shingle(window[Shingle-words:]))
	}
	return acc.sum()
}

// Sum gives the reference's fingerprints on text of every kind of byte:
// letters of both cases, digits, punctuation, control bytes, multi-byte
// letters and symbols, and invalid UTF-8.
func TestSumMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	pieces := []string{"a", "Z", "q", "7", "0", " ", "\t", "\n", ".", ",", "-", "_", "<", "\x00", "\x7f",
		"é", "É", "ß", "Ж", "ж", "漢", "٣", "€", "—", "\u00a0", "\xff", "\xc3", "\xe2\x82", "Ǆ", "İ"}
	for n := range 3000 {
		var b strings.Builder
		for range r.IntN(200) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		text := []byte(b.String())
		if got, want := Sum(text), sumReference(text); got != want {
			t.Fatalf("text %d %q: Sum = %x, reference %x", n, text, got, want)
		}
	}
	for c := range 256 {
		text := []byte{'a', 'b', byte(c), 'c', ' ', 'd', 'e', 'f', byte(c)}
		if got, want := Sum(text), sumReference(text); got != want {
			t.Fatalf("byte %#x: Sum = %x, reference %x", c, got, want)
		}
	}
}
