package site

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
)

// Limits on an IP range list. Google's googlebot.json has a few hundred
// prefixes in about 20 KB; these leave room for lists a hundred times
// larger and stop a runaway download.
const (
	// MaxIPRangesSize is the most bytes ParseIPRanges reads.
	MaxIPRangesSize = 4 << 20
	// MaxIPRangesPrefixes is the most prefixes a list may hold.
	MaxIPRangesPrefixes = 65536
)

var (
	// ErrIPRangesTooLarge is returned for a list longer than MaxIPRangesSize.
	ErrIPRangesTooLarge = errors.New("site: IP range list larger than 4 MiB")
	// ErrTooManyPrefixes is returned for a list with more than
	// MaxIPRangesPrefixes prefixes.
	ErrTooManyPrefixes = errors.New("site: IP range list has more than 65536 prefixes")
)

// IPRangesError reports a malformed IP range list.
type IPRangesError struct {
	Index int    // of the prefix in "prefixes"; -1 for the list itself
	Err   string // what is wrong
}

func (e *IPRangesError) Error() string {
	if e.Index < 0 {
		return "site: IP range list: " + e.Err
	}
	return fmt.Sprintf("site: IP range list: prefixes[%d]: %s", e.Index, e.Err)
}

// IPRanges is a set of IP prefixes, such as the addresses a search engine
// says its crawler uses. Lookups cost a binary search over the merged
// ranges. An IPRanges is immutable and safe for concurrent use; its zero
// value is empty.
type IPRanges struct {
	// CreationTime is the list's "creationTime", as written.
	CreationTime string
	v4, v6       []addrRange // sorted, disjoint, not adjacent
	prefixes     int
}

// addrRange is the addresses from lo to hi, inclusive.
type addrRange struct{ lo, hi netip.Addr }

// ParseIPRanges reads a list in the format of Google's googlebot.json and
// Bing's bingbot.json:
//
//	{"creationTime": "2025-01-02T03:04:05.000000",
//	 "prefixes": [{"ipv4Prefix": "66.249.64.0/27"}, {"ipv6Prefix": "2001:4860:4801:10::/64"}]}
//
// Each prefix has exactly one of ipv4Prefix and ipv6Prefix, of the family
// its name says; bits set past the prefix length are ignored. Other fields
// are ignored. A list that is not that JSON, has no prefixes, or exceeds
// MaxIPRangesSize or MaxIPRangesPrefixes is an error.
func ParseIPRanges(r io.Reader) (*IPRanges, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxIPRangesSize+1))
	if err != nil {
		return nil, fmt.Errorf("site: reading IP range list: %w", err)
	}
	if len(data) > MaxIPRangesSize {
		return nil, ErrIPRangesTooLarge
	}
	var doc struct {
		CreationTime string            `json:"creationTime"`
		Prefixes     []json.RawMessage `json:"prefixes"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, &IPRangesError{Index: -1, Err: err.Error()}
	}
	if doc.Prefixes == nil {
		return nil, &IPRangesError{Index: -1, Err: `no "prefixes" array`}
	}
	if len(doc.Prefixes) == 0 {
		return nil, &IPRangesError{Index: -1, Err: "no prefixes"}
	}
	if len(doc.Prefixes) > MaxIPRangesPrefixes {
		return nil, ErrTooManyPrefixes
	}
	ranges := &IPRanges{CreationTime: doc.CreationTime, prefixes: len(doc.Prefixes)}
	for i, raw := range doc.Prefixes {
		var p struct {
			V4 *string `json:"ipv4Prefix"`
			V6 *string `json:"ipv6Prefix"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, &IPRangesError{Index: i, Err: err.Error()}
		}
		var s string
		switch {
		case p.V4 != nil && p.V6 != nil:
			return nil, &IPRangesError{Index: i, Err: "both ipv4Prefix and ipv6Prefix"}
		case p.V4 != nil:
			s = *p.V4
		case p.V6 != nil:
			s = *p.V6
		default:
			return nil, &IPRangesError{Index: i, Err: "neither ipv4Prefix nor ipv6Prefix"}
		}
		pfx, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, &IPRangesError{Index: i, Err: err.Error()}
		}
		switch {
		case p.V4 != nil && !pfx.Addr().Is4():
			return nil, &IPRangesError{Index: i, Err: fmt.Sprintf("ipv4Prefix %q is not IPv4", s)}
		case p.V6 != nil && (!pfx.Addr().Is6() || pfx.Addr().Is4In6()):
			return nil, &IPRangesError{Index: i, Err: fmt.Sprintf("ipv6Prefix %q is not IPv6", s)}
		}
		pfx = pfx.Masked()
		rg := addrRange{pfx.Addr(), lastAddr(pfx)}
		if pfx.Addr().Is4() {
			ranges.v4 = append(ranges.v4, rg)
		} else {
			ranges.v6 = append(ranges.v6, rg)
		}
	}
	ranges.v4 = merge(ranges.v4)
	ranges.v6 = merge(ranges.v6)
	return ranges, nil
}

// LoadIPRanges reads the list in file with ParseIPRanges.
func LoadIPRanges(file string) (*IPRanges, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := ParseIPRanges(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return r, nil
}

// Contains reports whether ip is in one of the prefixes. An IPv4 address
// in IPv6 form (::ffff:1.2.3.4) counts as IPv4.
func (r *IPRanges) Contains(ip netip.Addr) bool {
	if r == nil || !ip.IsValid() {
		return false
	}
	ip = ip.Unmap().WithZone("")
	rs := r.v6
	if ip.Is4() {
		rs = r.v4
	}
	// The first range starting after ip; the one before it is the only
	// one that can hold it.
	i, _ := slices.BinarySearchFunc(rs, ip, func(rg addrRange, ip netip.Addr) int {
		if rg.lo.Compare(ip) <= 0 {
			return -1
		}
		return 1
	})
	return i > 0 && rs[i-1].hi.Compare(ip) >= 0
}

// Len returns the number of prefixes the list had.
func (r *IPRanges) Len() int {
	if r == nil {
		return 0
	}
	return r.prefixes
}

// lastAddr returns the last address of the masked prefix p.
func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Addr().As16()
	bits := p.Bits()
	if p.Addr().Is4() {
		bits += 96
	}
	for i := bits; i < 128; i++ {
		a[i/8] |= 1 << (7 - i%8)
	}
	last := netip.AddrFrom16(a)
	if p.Addr().Is4() {
		return last.Unmap()
	}
	return last
}

// merge sorts rs and merges ranges that overlap or touch.
func merge(rs []addrRange) []addrRange {
	slices.SortFunc(rs, func(a, b addrRange) int { return a.lo.Compare(b.lo) })
	out := rs[:0]
	for _, rg := range rs {
		if n := len(out); n > 0 {
			last := &out[n-1]
			if next := last.hi.Next(); rg.lo.Compare(last.hi) <= 0 || (next.IsValid() && rg.lo == next) {
				if rg.hi.Compare(last.hi) > 0 {
					last.hi = rg.hi
				}
				continue
			}
		}
		out = append(out, rg)
	}
	return slices.Clip(out)
}
