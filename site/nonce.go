package site

import (
	"container/heap"
	"crypto/sha256"
	"sync"
	"time"
)

// nonces remembers the nonces of valid signatures until they expire, so
// that a signature seen twice is known for a replay. Only signatures that
// verified are recorded, so nobody can spend another's nonces. It holds at
// most size nonces, each as a 128-bit hash of agent, key and nonce; when
// full, the one closest to expiring makes room.
type nonces struct {
	mu   sync.Mutex
	size int
	seen map[[16]byte]int64 // hash -> expiry, Unix seconds
	exp  expiryHeap
}

type nonceEntry struct {
	key     [16]byte
	expires int64
}

type expiryHeap []nonceEntry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].expires < h[j].expires }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(nonceEntry)) }
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

func newNonces(size int) *nonces {
	return &nonces{size: size, seen: make(map[[16]byte]int64)}
}

// firstUse records the nonce until expires and reports whether it was new.
func (n *nonces) firstUse(agent, keyID, nonce string, expires, now time.Time) bool {
	sum := sha256.Sum256([]byte(agent + "\x00" + keyID + "\x00" + nonce))
	var k [16]byte
	copy(k[:], sum[:])
	n.mu.Lock()
	defer n.mu.Unlock()
	nowUnix := now.Unix()
	for len(n.exp) > 0 && n.exp[0].expires < nowUnix {
		e := heap.Pop(&n.exp).(nonceEntry)
		if n.seen[e.key] == e.expires {
			delete(n.seen, e.key)
		}
	}
	if exp, ok := n.seen[k]; ok && exp >= nowUnix {
		return false
	}
	for len(n.exp) >= n.size {
		e := heap.Pop(&n.exp).(nonceEntry)
		if n.seen[e.key] == e.expires {
			delete(n.seen, e.key)
		}
	}
	n.seen[k] = expires.Unix()
	heap.Push(&n.exp, nonceEntry{k, expires.Unix()})
	return true
}

// len is the nonces remembered.
func (n *nonces) len() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.seen)
}
