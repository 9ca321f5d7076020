package urlspace

// FIFOMap is a map of at most a fixed number of keys that forgets the key
// put first when a new one comes and it is full; putting a key it holds
// changes its value, not its place. Its zero value is not usable: make
// one with NewFIFOMap. It is not safe for concurrent use.
type FIFOMap[K comparable, V any] struct {
	m     map[K]V
	order []K // keys, in the order they came, once around the ring
	next  int // slot of order to reuse next, once full
	max   int
}

// NewFIFOMap returns an empty FIFOMap of at most n keys (at least 1).
func NewFIFOMap[K comparable, V any](n int) *FIFOMap[K, V] {
	return &FIFOMap[K, V]{m: make(map[K]V), max: max(n, 1)}
}

// Get returns the value of k, and whether the map holds it. A nil map
// holds nothing.
func (f *FIFOMap[K, V]) Get(k K) (V, bool) {
	if f == nil {
		var zero V
		return zero, false
	}
	v, ok := f.m[k]
	return v, ok
}

// Put sets the value of k, forgetting the oldest key when k is new and the
// map is full.
func (f *FIFOMap[K, V]) Put(k K, v V) {
	if _, ok := f.m[k]; !ok {
		if len(f.order) < f.max {
			f.order = append(f.order, k)
		} else {
			delete(f.m, f.order[f.next])
			f.order[f.next] = k
			f.next = (f.next + 1) % f.max
		}
	}
	f.m[k] = v
}

// Len returns the number of keys held.
func (f *FIFOMap[K, V]) Len() int { return len(f.m) }
