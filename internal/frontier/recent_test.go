package frontier

import "testing"

// TestRecentSeen: a hash added is known until two generations have filled
// after it, one used again lives on, and the memory stays bounded.
func TestRecentSeen(t *testing.T) {
	var r recentSeen
	h := func(i int) (k [16]byte) {
		k[0], k[1], k[2] = byte(i), byte(i>>8), byte(i>>16)
		return k
	}
	r.add(h(0))
	r.add(h(1))
	if !r.has(h(0)) || !r.has(h(1)) || r.has(h(2)) {
		t.Fatal("added hashes not known, or an unknown one known")
	}
	for i := 2; i < recentGeneration+10; i++ {
		r.add(h(i))
		if i%1000 == 0 {
			r.has(h(1)) // in use
		}
	}
	if !r.has(h(1)) {
		t.Error("a hash in use was dropped at the first turnover")
	}
	for i := recentGeneration + 10; i < 3*recentGeneration; i++ {
		r.add(h(i))
	}
	if r.has(h(0)) {
		t.Error("a hash unused for two generations is still known")
	}
	if n := len(r.cur) + len(r.old); n > 2*recentGeneration {
		t.Errorf("%d hashes held, want at most %d", n, 2*recentGeneration)
	}
}
