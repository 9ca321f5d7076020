package inflate

import (
	"encoding/binary"
	"hash/adler32"
	"hash/crc32"
)

// Gunzip appends to dst the decoding of the gzip file src (RFC 1952): one or
// more members, each a header, a DEFLATE stream and a trailer, whose
// decodings are concatenated. At most max bytes are appended in all, with
// the same meaning as for [Append], including on error; used is how far
// into src decoding got (all of it, on success).
//
// Headers are checked as compress/gzip checks them: the magic number and
// compression method (ErrHeader), the header CRC-16 when FHCRC is set
// (ErrHeader), and FNAME and FCOMMENT strings of at most 511 bytes
// (ErrHeader beyond, as compress/gzip's buffer allows no more). Unlike
// compress/gzip, reserved flag bits also make ErrHeader, as RFC 1952
// requires, since a file using them may mean something this decoder does
// not know. Each member's CRC-32 and size (ISIZE) are verified
// (ErrChecksum), and each member is an independent stream: back-references
// cannot reach into earlier members.
//
// As with compress/gzip, anything after a member must be another member:
// fewer than 10 bytes more is ErrTruncated, 10 or more that do not start
// with a gzip header are ErrHeader, so trailing garbage, even zero padding,
// is an error. Empty src is ErrTruncated (compress/gzip reports io.EOF).
func Gunzip(dst, src []byte, max int) (out []byte, used int, err error) {
	d := getDecoder()
	defer putDecoder(d)
	d.init(dst, max)
	off := 0 // where the current member starts in src
	for first := true; first || off < len(src); first = false {
		h, err := gzipHeader(src[off:])
		if err != nil {
			return d.out[:d.n], off, err
		}
		d.reset(src[off+h:])
		if err := d.inflate(); err != nil {
			return d.out[:d.n], off + h + d.used(), err
		}
		off += h + d.used()
		if len(src)-off < 8 {
			return d.out[:d.n], len(src), ErrTruncated
		}
		data := d.out[d.start:d.n]
		if binary.LittleEndian.Uint32(src[off:]) != crc32.ChecksumIEEE(data) ||
			binary.LittleEndian.Uint32(src[off+4:]) != uint32(len(data)) {
			return d.out[:d.n], off + 8, ErrChecksum
		}
		off += 8
	}
	return d.out[:d.n], off, nil
}

// gzip header flags (RFC 1952 section 2.3.1).
const (
	flagHCRC     = 1 << 1
	flagExtra    = 1 << 2
	flagName     = 1 << 3
	flagComment  = 1 << 4
	flagReserved = 0xe0
)

// gzipHeader returns the length of the gzip member header at the start of
// src.
func gzipHeader(src []byte) (int, error) {
	if len(src) < 10 {
		return 0, ErrTruncated
	}
	if src[0] != 0x1f || src[1] != 0x8b || src[2] != 8 || src[3]&flagReserved != 0 {
		return 0, ErrHeader
	}
	flags := src[3]
	p := 10
	if flags&flagExtra != 0 {
		if len(src)-p < 2 {
			return 0, ErrTruncated
		}
		n := int(binary.LittleEndian.Uint16(src[p:]))
		p += 2
		if len(src)-p < n {
			return 0, ErrTruncated
		}
		p += n
	}
	for _, f := range [2]byte{flagName, flagComment} {
		if flags&f == 0 {
			continue
		}
		for i := 0; ; i++ {
			if i == 512 {
				return 0, ErrHeader
			}
			if p+i == len(src) {
				return 0, ErrTruncated
			}
			if src[p+i] == 0 {
				p += i + 1
				break
			}
		}
	}
	if flags&flagHCRC != 0 {
		if len(src)-p < 2 {
			return 0, ErrTruncated
		}
		if binary.LittleEndian.Uint16(src[p:]) != uint16(crc32.ChecksumIEEE(src[:p])) {
			return 0, ErrHeader
		}
		p += 2
	}
	return p, nil
}

// Zlib appends to dst the decoding of the zlib stream src (RFC 1950). At
// most max bytes are appended, with the same meaning as for [Append].
//
// used is how far into src decoding got: through the Adler-32 trailer on
// success, which a caller may use to find what follows.
//
// The header must name deflate with a window of at most 32 KiB and pass its
// FCHECK test (ErrHeader). A preset dictionary (FDICT) is ErrHeader too, as
// none is known here; compress/zlib, given none, instead accepts a
// dictionary ID equal to the Adler-32 of no bytes and reports its
// ErrDictionary otherwise. The Adler-32 trailer is verified (ErrChecksum).
// Bytes after the trailer are ignored, as compress/zlib ignores them.
func Zlib(dst, src []byte, max int) (out []byte, used int, err error) {
	d := getDecoder()
	defer putDecoder(d)
	d.init(dst, max)
	if len(src) < 2 {
		return dst, 0, ErrTruncated
	}
	cmf, flg := src[0], src[1]
	if cmf&15 != 8 || cmf>>4 > 7 || (uint(cmf)<<8|uint(flg))%31 != 0 || flg&0x20 != 0 {
		return dst, 0, ErrHeader
	}
	d.reset(src[2:])
	if err := d.inflate(); err != nil {
		return d.out[:d.n], 2 + d.used(), err
	}
	end := 2 + d.used()
	if len(src)-end < 4 {
		return d.out[:d.n], len(src), ErrTruncated
	}
	if binary.BigEndian.Uint32(src[end:]) != adler32.Checksum(d.out[d.start:d.n]) {
		return d.out[:d.n], end + 4, ErrChecksum
	}
	return d.out[:d.n], end + 4, nil
}

// GzipSize returns the ISIZE field of the last gzip member in src, its last
// four bytes: the decoded size, modulo 2^32, of a single-member file. It
// returns false when src is shorter than the smallest possible member (a
// 10-byte header, a 2-byte empty stream and an 8-byte trailer). The field is
// unverified until decoding, so use it only as a capacity hint, bounded by
// the caller's own limit.
func GzipSize(src []byte) (uint32, bool) {
	if len(src) < 20 {
		return 0, false
	}
	return binary.LittleEndian.Uint32(src[len(src)-4:]), true
}
