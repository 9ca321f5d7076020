package frontier

import (
	"encoding/binary"
	"errors"
	"strings"
	"time"
)

// The embedded store's keys. Every key starts with one byte naming its space.
const (
	prefixMeta    = 'm' // m NAME → value
	prefixSeen    = 's' // s HASH16 → "" (the seen-set)
	prefixQueue   = 'q' // q HOST 0x00 DUE8 SEQ8 → entry (per-host queues, in due order)
	prefixHost    = 'H' // H HOST → host record
	prefixHistory = 'h' // h HASH16 → History (JSON)
	prefixRobots  = 'r' // r ORIGIN → RobotsRecord (JSON)
)

var errCorrupt = errors.New("frontier: corrupt record in the job's store")

// Entry flags.
const (
	flagRecrawl = 1 << iota
	flagAsIs
	flagHTTPS  // the URL starts with "https://" + host, which is not stored
	flagHTTP   // the URL starts with "http://" + host, which is not stored
	flagParent // 8 bytes of Entry.Parent follow the flags
)

// appendEntry encodes e, a URL of host, in a few bytes more than its URL:
// flags, depth, attempts, hops, kind, and the URL without its scheme and
// host when they are the queue's own (the key holds the host).
func appendEntry(b []byte, host string, e *Entry) []byte {
	var flags byte
	if e.Recrawl {
		flags |= flagRecrawl
	}
	if e.AsIs {
		flags |= flagAsIs
	}
	rest := e.URL
	switch {
	case hasSchemeHost(rest, "https://", host):
		flags |= flagHTTPS
		rest = rest[len("https://")+len(host):]
	case hasSchemeHost(rest, "http://", host):
		flags |= flagHTTP
		rest = rest[len("http://")+len(host):]
	}
	if e.Parent != 0 {
		flags |= flagParent
	}
	b = append(b, flags)
	if e.Parent != 0 {
		b = binary.BigEndian.AppendUint64(b, e.Parent)
	}
	b = binary.AppendUvarint(b, uint64(e.Depth))
	b = binary.AppendUvarint(b, uint64(e.Attempts))
	b = binary.AppendUvarint(b, uint64(e.Hops))
	b = binary.AppendUvarint(b, uint64(len(e.Kind)))
	b = append(b, e.Kind...)
	return append(b, rest...)
}

// hasSchemeHost reports whether u starts with scheme+host followed by the
// end of the authority (so that "a.test" does not match "a.test.evil").
func hasSchemeHost(u, scheme, host string) bool {
	n := len(scheme) + len(host)
	if len(u) < n || u[:len(scheme)] != scheme || u[len(scheme):n] != host {
		return false
	}
	return len(u) == n || strings.IndexByte("/?#", u[n]) >= 0
}

func decodeEntry(v []byte, host string, e *Entry) error {
	if len(v) < 1 {
		return errCorrupt
	}
	flags := v[0]
	v = v[1:]
	var parent uint64
	if flags&flagParent != 0 {
		if len(v) < 8 {
			return errCorrupt
		}
		parent, v = binary.BigEndian.Uint64(v), v[8:]
	}
	var nums [4]uint64
	v, ok := uvarints(v, nums[:], 1<<31)
	if !ok || uint64(len(v)) < nums[3] {
		return errCorrupt
	}
	*e = Entry{
		Depth:    int(nums[0]),
		Attempts: int(nums[1]),
		Hops:     int(nums[2]),
		Kind:     string(v[:nums[3]]),
		Recrawl:  flags&flagRecrawl != 0,
		AsIs:     flags&flagAsIs != 0,
		Parent:   parent,
	}
	rest := string(v[nums[3]:])
	switch {
	case flags&flagHTTPS != 0:
		e.URL = "https://" + host + rest
	case flags&flagHTTP != 0:
		e.URL = "http://" + host + rest
	default:
		e.URL = rest
	}
	return nil
}

// hostRecord is what the store keeps per host beside its queue. The number
// of entries in the queue is counted when the store is opened, not stored:
// an admission then writes nothing per host unless a budget needs its count.
type hostRecord struct {
	next       time.Time // next allowed time
	pending    int       // entries in its queue (in memory only)
	queued     int       // entries ever queued
	overBudget int       // new URLs refused by a budget
}

func appendHostRecord(b []byte, r *hostRecord) []byte {
	b = binary.AppendUvarint(b, timeNanos(r.next))
	b = binary.AppendUvarint(b, uint64(r.queued))
	return binary.AppendUvarint(b, uint64(r.overBudget))
}

func decodeHostRecord(v []byte, r *hostRecord) error {
	var nums [3]uint64
	if _, ok := uvarints(v, nums[:], 1<<63); !ok || nums[1] > 1<<40 || nums[2] > 1<<40 {
		return errCorrupt
	}
	*r = hostRecord{next: nanosTime(nums[0]), queued: int(nums[1]), overBudget: int(nums[2])}
	return nil
}

// timeNanos encodes a time for a key or record: nanoseconds since 1970, and
// 0 for the zero time (or anything before 1970, which means "at once").
func timeNanos(t time.Time) uint64 {
	if t.IsZero() || t.Unix() < 0 {
		return 0
	}
	return uint64(t.UnixNano())
}

func nanosTime(n uint64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(n))
}

func metaKey(name string) []byte { return append([]byte{prefixMeta}, name...) }

func robotsKey(origin string) []byte { return append([]byte{prefixRobots}, origin...) }

func hostKey(host string) []byte { return append([]byte{prefixHost}, host...) }

func queuePrefix(host string) []byte {
	k := make([]byte, 0, len(host)+18)
	k = append(k, prefixQueue)
	k = append(k, host...)
	return append(k, 0)
}

func queueKey(host string, due time.Time, seq uint64) []byte {
	k := binary.BigEndian.AppendUint64(queuePrefix(host), timeNanos(due))
	return binary.BigEndian.AppendUint64(k, seq)
}

// queueKeyHost returns the host of a queue key.
func queueKeyHost(k []byte) ([]byte, bool) {
	if len(k) < 1+1+16 || k[len(k)-17] != 0 {
		return nil, false
	}
	return k[1 : len(k)-17], true
}

// queueKeyDue returns the due time in a queue key.
func queueKeyDue(k []byte) time.Time {
	if len(k) < 16 {
		return time.Time{}
	}
	return nanosTime(binary.BigEndian.Uint64(k[len(k)-16:]))
}

// History records are binary: a flags byte, the numbers as uvarints, then
// the strings, each a uvarint length and its bytes. Times are nanoseconds
// since 1970 (0: none), read back in UTC.
// History flags. historyHops marks a record that ends with its redirect
// hops (a uvarint); records written before it was added end without.
// historyObserved marks one that then holds its observations (a uvarint
// count, then for each a flags byte, the interval in milliseconds and, when
// dated, the age in milliseconds); historyDatesBad is DatesUnreliable.
const (
	historyPending  = 1
	historyHops     = 2
	historyObserved = 4
	historyDatesBad = 8
	historyFlags    = historyPending | historyHops | historyObserved | historyDatesBad
)

// Observation flags.
const (
	obsChanged = 1 << iota
	obsDated
	obsNotModified
	obsBefore
	obsFlags = obsChanged | obsDated | obsNotModified | obsBefore
)

func appendHistory(b []byte, h *History) []byte {
	var flags byte
	if h.Pending {
		flags |= historyPending
	}
	if h.Hops > 0 {
		flags |= historyHops
	}
	if len(h.Observed) > 0 {
		flags |= historyObserved
	}
	if h.DatesUnreliable {
		flags |= historyDatesBad
	}
	b = append(b, flags)
	for _, n := range [...]uint64{uint64(max(h.Status, 0)), uint64(max(h.Size, 0)), uint64(max(h.Visits, 0)), uint64(max(h.Changes, 0)), timeNanos(h.Fetched), timeNanos(h.Captured)} {
		b = binary.AppendUvarint(b, n)
	}
	for _, s := range [...]string{h.URL, h.Outcome, h.Error, h.ETag, h.LastModified, h.ContentType, h.Digest} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	if h.Hops > 0 {
		b = binary.AppendUvarint(b, uint64(h.Hops))
	}
	if len(h.Observed) > 0 {
		b = binary.AppendUvarint(b, uint64(len(h.Observed)))
		for _, o := range h.Observed {
			var f byte
			if o.Changed {
				f |= obsChanged
			}
			if o.Dated {
				f |= obsDated
			}
			if o.NotModified {
				f |= obsNotModified
			}
			if o.Before {
				f |= obsBefore
			}
			b = append(b, f)
			b = binary.AppendUvarint(b, uint64(max(o.Interval.Milliseconds(), 0)))
			if o.Dated {
				b = binary.AppendUvarint(b, uint64(max(o.Age.Milliseconds(), 0)))
			}
		}
	}
	return b
}

// maxObservedMillis bounds a decoded interval or age: about 300 years.
const maxObservedMillis = 1 << 53

func decodeObserved(v []byte) ([]Observation, []byte, error) {
	n, k := binary.Uvarint(v)
	if k <= 0 || n == 0 || n > MaxObserved {
		return nil, nil, errCorrupt
	}
	v = v[k:]
	obs := make([]Observation, n)
	for i := range obs {
		if len(v) < 1 || v[0]&^obsFlags != 0 {
			return nil, nil, errCorrupt
		}
		f := v[0]
		var ms [2]uint64
		count := 1
		if f&obsDated != 0 {
			count = 2
		}
		rest, ok := uvarints(v[1:], ms[:count], maxObservedMillis)
		if !ok {
			return nil, nil, errCorrupt
		}
		v = rest
		obs[i] = Observation{
			Interval: time.Duration(ms[0]) * time.Millisecond, Changed: f&obsChanged != 0,
			Dated: f&obsDated != 0, Age: time.Duration(ms[1]) * time.Millisecond,
			NotModified: f&obsNotModified != 0, Before: f&obsBefore != 0,
		}
	}
	return obs, v, nil
}

func decodeHistory(v []byte, h *History) error {
	if len(v) < 1 || v[0]&^historyFlags != 0 {
		return errCorrupt
	}
	pending, hasHops := v[0]&historyPending != 0, v[0]&historyHops != 0
	hasObserved, datesBad := v[0]&historyObserved != 0, v[0]&historyDatesBad != 0
	var nums [6]uint64
	v, ok := uvarints(v[1:], nums[:], 1<<62)
	if !ok {
		return errCorrupt
	}
	var strs [7]string
	for i := range strs {
		x, n := binary.Uvarint(v)
		if n <= 0 || uint64(len(v)-n) < x {
			return errCorrupt
		}
		strs[i], v = string(v[n:n+int(x)]), v[n+int(x):]
	}
	var hops uint64
	if hasHops {
		var n int
		if hops, n = binary.Uvarint(v); n <= 0 || hops > 1<<31 {
			return errCorrupt
		}
		v = v[n:]
	}
	var observed []Observation
	if hasObserved {
		var err error
		if observed, v, err = decodeObserved(v); err != nil {
			return err
		}
	}
	if len(v) != 0 || nums[0] > 999 || nums[2] > 1<<31 || nums[3] > 1<<31 {
		return errCorrupt
	}
	*h = History{
		URL: strs[0], Outcome: strs[1], Error: strs[2], ETag: strs[3], LastModified: strs[4], ContentType: strs[5], Digest: strs[6],
		Status: int(nums[0]), Size: int64(nums[1]), Visits: int(nums[2]), Changes: int(nums[3]),
		Fetched: utcTime(nums[4]), Captured: utcTime(nums[5]), Pending: pending, Hops: int(hops),
		Observed: observed, DatesUnreliable: datesBad,
	}
	return nil
}

func utcTime(n uint64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(n)).UTC()
}

// uvarints reads len(nums) uvarints from v, each at most limit, and returns
// the rest of v; ok is false when one is missing, malformed or too large.
func uvarints(v []byte, nums []uint64, limit uint64) (rest []byte, ok bool) {
	for i := range nums {
		x, n := binary.Uvarint(v)
		if n <= 0 || x > limit {
			return nil, false
		}
		nums[i], v = x, v[n:]
	}
	return v, true
}
