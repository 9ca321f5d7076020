package frontier

// recentSeen remembers the seen-set hashes that the store confirmed most
// recently, so that a URL met again soon is known without a read of the
// store. Pages link to the same URLs again and again (a menu, a sidebar,
// the pages of a list), and without it each of those would be a Get under
// the store's lock, for every page.
//
// It holds two generations of at most recentGeneration hashes: when the
// newer fills, it becomes the older and the older is dropped. The memory
// is bounded whatever the crawl's size; a hash found in either is seen,
// since nothing is ever removed from the seen-set.
type recentSeen struct {
	cur, old map[[16]byte]struct{}
}

// recentGeneration is the size of a generation: about 1.5 MB each.
const recentGeneration = 1 << 15

func (r *recentSeen) has(h [16]byte) bool {
	if _, ok := r.cur[h]; ok {
		return true
	}
	if _, ok := r.old[h]; ok {
		r.add(h) // still in use: keep it past the next turnover
		return true
	}
	return false
}

func (r *recentSeen) add(h [16]byte) {
	if r.cur == nil {
		r.cur = make(map[[16]byte]struct{})
	}
	if len(r.cur) >= recentGeneration {
		r.old, r.cur = r.cur, make(map[[16]byte]struct{}, recentGeneration)
	}
	r.cur[h] = struct{}{}
}
