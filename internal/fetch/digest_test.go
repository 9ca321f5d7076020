package fetch

import (
	"crypto/sha1"
	"encoding/base32"
	"strings"
	"testing"
)

// The history digest is XXH64 of the decoded body; a digest a job kept in
// the SHA-1 form before is still compared rightly, so an upgrade does not
// make every page look changed.
func TestPayloadDigest(t *testing.T) {
	body := []byte("<p>the same page</p>")
	r := &Result{Body: body}
	d := r.PayloadDigest()
	// XXH64 of the body, as the reference implementation gives it.
	if d != "xxh64:"+xxh64Reference(body) {
		t.Errorf("PayloadDigest = %q", d)
	}
	if !r.SamePayload(d) {
		t.Error("a body is not the same payload as itself")
	}
	other := &Result{Body: []byte("<p>another page</p>")}
	if other.SamePayload(d) || other.PayloadDigest() == d {
		t.Error("two bodies share a digest")
	}
	sum := sha1.Sum(body)
	old := "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
	if !r.SamePayload(old) {
		t.Error("the SHA-1 digest of the same body is not the same payload")
	}
	if other.SamePayload(old) {
		t.Error("the SHA-1 digest of another body is the same payload")
	}
	if r.SamePayload("") || r.SamePayload("sha1:") || r.SamePayload("md5:"+strings.Repeat("A", 26)) {
		t.Error("an empty or unknown digest is the same payload")
	}
	// Every path of the hash: short tails, 4- and 8-byte steps, 32-byte
	// stripes.
	for _, n := range []int{0, 1, 3, 4, 7, 8, 31, 32, 33, 63, 64, 100, 1000} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*7 + 3)
		}
		if got, want := (&Result{Body: b}).PayloadDigest(), "xxh64:"+xxh64Reference(b); got != want {
			t.Errorf("%d bytes: PayloadDigest = %q, want %q", n, got, want)
		}
	}
	cut := &Result{Body: body, Truncated: TruncatedLength}
	if cut.PayloadDigest() != "" || cut.SamePayload(d) || cut.SamePayload(old) {
		t.Error("a truncated body has a digest")
	}
}

// xxh64Reference is XXH64 with seed 0, written from the specification
// (github.com/Cyan4973/xxHash, doc/xxhash_spec.md) for the test, so the
// digest does not depend only on the library's word for it.
func xxh64Reference(b []byte) string {
	var (
		p1 uint64 = 11400714785074694791
		p2 uint64 = 14029467366897019727
		p3 uint64 = 1609587929392839161
		p4 uint64 = 9650029242287828579
		p5 uint64 = 2870177450012600261
	)
	rotl := func(x uint64, r uint) uint64 { return x<<r | x>>(64-r) }
	u64 := func(p []byte) uint64 {
		var x uint64
		for i := 7; i >= 0; i-- {
			x = x<<8 | uint64(p[i])
		}
		return x
	}
	round := func(acc, in uint64) uint64 { return rotl(acc+in*p2, 31) * p1 }
	merge := func(acc, v uint64) uint64 { return (acc^round(0, v))*p1 + p4 }
	n := uint64(len(b))
	var h uint64
	if len(b) >= 32 {
		v1, v2, v3, v4 := p1+p2, p2, uint64(0), -p1
		for ; len(b) >= 32; b = b[32:] {
			v1, v2, v3, v4 = round(v1, u64(b)), round(v2, u64(b[8:])), round(v3, u64(b[16:])), round(v4, u64(b[24:]))
		}
		h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)
		h = merge(merge(merge(merge(h, v1), v2), v3), v4)
	} else {
		h = p5
	}
	h += n
	for ; len(b) >= 8; b = b[8:] {
		h = rotl(h^round(0, u64(b)), 27)*p1 + p4
	}
	if len(b) >= 4 {
		x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24
		h = rotl(h^(x*p1), 23)*p2 + p3
		b = b[4:]
	}
	for _, c := range b {
		h = rotl(h^(uint64(c)*p5), 11) * p1
	}
	h ^= h >> 33
	h *= p2
	h ^= h >> 29
	h *= p3
	h ^= h >> 32
	const hex = "0123456789abcdef"
	var out [16]byte
	for i := 15; i >= 0; i-- {
		out[i] = hex[h&15]
		h >>= 4
	}
	return string(out[:])
}
