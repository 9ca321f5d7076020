package frontier

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"reflect"
	"testing"
	"time"
)

func TestHashIsFNV128a(t *testing.T) {
	for _, s := range []string{"", "a", "https://example.com/path?q=1", string(make([]byte, 300))} {
		h := fnv.New128a()
		h.Write([]byte(s))
		want := h.Sum(nil)
		got := Hash(s)
		if string(got[:]) != string(want) {
			t.Errorf("Hash(%q) = %x, want %x", s, got, want)
		}
	}
}

func TestEntryCodec(t *testing.T) {
	for _, tc := range []struct {
		host string
		e    Entry
	}{
		{"a.test", Entry{URL: "https://a.test/x?y=1", Depth: 3, Attempts: 2, Hops: 1, Kind: "sitemap", Recrawl: true, AsIs: true}},
		{"a.test", Entry{URL: "http://a.test"}},
		{"a.test", Entry{URL: "http://a.test/cal?d=2", Depth: 4, Parent: 0x0123456789abcdef}},
		{"a.test", Entry{URL: "http://a.test:8080/p"}},
		{"a.test", Entry{URL: "https://a.test.evil/p"}},
		{"a.test", Entry{URL: "https://other.test/p"}},
	} {
		b := appendEntry(nil, tc.host, &tc.e)
		var got Entry
		if err := decodeEntry(b, tc.host, &got); err != nil || got != tc.e {
			t.Errorf("round trip of %+v = %+v, %v", tc.e, got, err)
		}
	}
	// Truncated or garbled records are errors, never panics.
	b := appendEntry(nil, "a.test", &Entry{URL: "https://a.test/p", Kind: "sitemap", Depth: 300})
	for i := range len(b) - len("/p") {
		var e Entry
		if err := decodeEntry(b[:i], "a.test", &e); err == nil {
			t.Errorf("decode of %d of %d bytes succeeded", i, len(b))
		}
	}
	if err := decodeEntry([]byte{0, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, "a.test", new(Entry)); err == nil {
		t.Error("a depth of 2^41 decoded")
	}
	r := hostRecord{next: time.Unix(1700000000, 5), queued: 9, overBudget: 1}
	var got hostRecord
	if err := decodeHostRecord(appendHostRecord(nil, &r), &got); err != nil || got != r {
		t.Errorf("host record round trip = %+v, %v", got, err)
	}
	if err := decodeHostRecord([]byte{1, 2}, &got); err == nil {
		t.Error("a short host record decoded")
	}
	huge := appendHostRecord(nil, &hostRecord{queued: 1 << 41})
	if err := decodeHostRecord(huge, &got); err == nil {
		t.Error("a host record counting 2^41 URLs decoded")
	}
}

func TestSeenFilter(t *testing.T) {
	f := newSeenFilter(10_000)
	if f.bytes() < 10_000*bitsPerURL/8 {
		t.Fatalf("filter of %d bytes for 10,000 URLs", f.bytes())
	}
	checkSeenFilter(t, f, 10_000)
	if len(f.layers) != 1 {
		t.Errorf("%d layers for the keys the first was sized for", len(f.layers))
	}
}

// The filter grows past the count it was made for, and its false
// positives stay bounded over many layers.
func TestSeenFilterGrows(t *testing.T) {
	f := newSeenFilter(1024)
	small := f.bytes()
	checkSeenFilter(t, f, 300_000)
	if len(f.layers) < 8 {
		t.Errorf("%d layers after 300,000 keys from 1,024", len(f.layers))
	}
	// At least 10 bits for each key, and not wildly more (the last layer,
	// for 262,144 keys at 20 bits, holds 38,880).
	if b := f.bytes(); b < 300_000*bitsPerURL/8 || b > 300_000*5 {
		t.Errorf("filter of %d bytes (from %d) for 300,000 keys", b, small)
	}
}

func checkSeenFilter(t *testing.T, f *seenFilter, n int) {
	t.Helper()
	for i := range n {
		h := Hash(fmt.Sprintf("u%d", i))
		f.add(h[:])
		if !f.mayContain(h[:]) {
			t.Fatal("an added key is not found")
		}
	}
	for i := range n {
		h := Hash(fmt.Sprintf("u%d", i))
		if !f.mayContain(h[:]) {
			t.Fatalf("key %d is not found after the others were added", i)
		}
	}
	fp := 0
	for i := range 20_000 {
		h := Hash(fmt.Sprintf("other%d", i))
		if f.mayContain(h[:]) {
			fp++
		}
	}
	if fp > 600 { // about 1-2% expected; 3% would mean a broken filter
		t.Errorf("%d false positives in 20,000 (%d layers)", fp, len(f.layers))
	}
	t.Logf("%d keys, %d layers, %d bytes: %d false positives in 20,000", n, len(f.layers), f.bytes(), fp)
}

func TestHistoryCodec(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 5, time.UTC)
	for _, h := range []History{
		{},
		{URL: "https://a.test/p", Status: 200, Outcome: "fetched", ETag: `"x"`, LastModified: "Mon, 30 Nov 2026 12:00:00 GMT",
			ContentType: "text/html", Digest: "sha1:ABC", Size: 48213, Fetched: at, Captured: at.Add(-time.Hour), Visits: 3, Changes: 1, Pending: true},
		{URL: "https://a.test/q", Outcome: "failed", Error: "connection refused"},
		{URL: "https://a.test/r/10", Status: 302, Outcome: "fetched", Hops: 10},
		{URL: "https://a.test/s", Status: 200, Outcome: "unchanged", Visits: 4, DatesUnreliable: true, Observed: []Observation{
			{Interval: 90 * 24 * time.Hour, Before: true},
			{Interval: time.Hour, NotModified: true},
			{Interval: 1500 * time.Millisecond, Changed: true, Dated: true, Age: 0},
			{Interval: 3 * time.Hour, Changed: true, Dated: true, Age: 47 * time.Minute},
		}},
	} {
		b := appendHistory(nil, &h)
		var got History
		if err := decodeHistory(b, &got); err != nil || !reflect.DeepEqual(got, h) {
			t.Errorf("round trip of %+v = %+v, %v", h, got, err)
		}
		// Every truncation, and a byte too many, is an error, never a panic.
		for i := range len(b) {
			if err := decodeHistory(b[:i], new(History)); err == nil {
				t.Errorf("decode of %d of %d bytes succeeded", i, len(b))
			}
		}
		if err := decodeHistory(append(b, 0), new(History)); err == nil {
			t.Error("a record with a trailing byte decoded")
		}
	}
	// A string length beyond the record's end, even a huge one.
	long := append([]byte{0, 0, 0, 0, 0, 0, 0}, binary.AppendUvarint(nil, 1<<63)...)
	if err := decodeHistory(long, new(History)); err == nil {
		t.Error("a string longer than its record decoded")
	}
	if err := decodeHistory([]byte{16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, new(History)); err == nil {
		t.Error("unknown flags decoded")
	}
	// Observations: more than MaxObserved, none, or unknown flags.
	base := appendHistory(nil, &History{URL: "u"})
	base[0] |= historyObserved
	for _, tail := range [][]byte{{0}, {MaxObserved + 1, 0, 1}, {1, 32, 1}} {
		if err := decodeHistory(append(append([]byte(nil), base...), tail...), new(History)); err == nil {
			t.Errorf("observations %v decoded", tail)
		}
	}
}

func TestHistoryObserveKeepsTheLatest(t *testing.T) {
	var h History
	for i := range MaxObserved + 5 {
		h.Observe(Observation{Interval: time.Duration(i)})
	}
	if len(h.Observed) != MaxObserved || h.Observed[0].Interval != 5 || h.Observed[MaxObserved-1].Interval != MaxObserved+4 {
		t.Errorf("kept %d observations, from %v to %v", len(h.Observed), h.Observed[0].Interval, h.Observed[len(h.Observed)-1].Interval)
	}
}
