package gensite

// rng is a small deterministic generator (splitmix64). The package uses
// its own generator rather than math/rand so that a site's bytes depend on
// nothing but the kind and seed, whatever the Go release.
type rng struct{ s uint64 }

// mix folds values into one well-spread 64-bit hash.
func mix(parts ...uint64) uint64 {
	h := uint64(0x6a09e667f3bcc909)
	for _, p := range parts {
		h ^= p + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2)
		h = fmix(h)
	}
	return h
}

func fmix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// strHash is FNV-1a of s.
func strHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func newRNG(seed uint64) *rng { return &rng{s: seed} }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return fmix(r.s)
}

// intn returns a number in [0, n); n must be positive.
func (r *rng) intn(n int) int {
	if n <= 1 {
		return 0
	}
	return int(r.next() % uint64(n))
}

// between returns a number in [lo, hi].
func (r *rng) between(lo, hi int) int {
	if hi <= lo {
		return lo
	}
	return lo + r.intn(hi-lo+1)
}

func (r *rng) float() float64 { return float64(r.next()>>11) / (1 << 53) }

func (r *rng) chance(p float64) bool { return r.float() < p }

// skewed returns a number in [0, n) biased towards 0, for popularity-like
// draws (a few items are common, most are rare).
func (r *rng) skewed(n int, power float64) int {
	f := r.float()
	x := 1.0
	for i := 0; i < int(power); i++ {
		x *= f
	}
	if frac := power - float64(int(power)); frac > 0 {
		x *= 1 - frac*(1-f)
	}
	i := int(x * float64(n))
	if i >= n {
		i = n - 1
	}
	return i
}

func pick[T any](r *rng, xs []T) T { return xs[r.intn(len(xs))] }

func shuffle[T any](r *rng, xs []T) {
	for i := len(xs) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		xs[i], xs[j] = xs[j], xs[i]
	}
}

// sample returns k distinct values from xs in random order (all of xs,
// shuffled, when k >= len(xs)).
func sample[T any](r *rng, xs []T, k int) []T {
	c := append([]T(nil), xs...)
	shuffle(r, c)
	if k < len(c) {
		c = c[:k]
	}
	return c
}
