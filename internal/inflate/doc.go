// Package inflate decodes DEFLATE (RFC 1951) streams held entirely in
// memory, with gzip (RFC 1952) and zlib (RFC 1950) framing.
//
// The crawler receives compressed pages whole, so the streaming readers of
// compress/flate and its relatives do work it does not need: they keep a
// 32 KiB sliding window, copy every byte out of it again, and pull input
// through an io.ByteReader a byte at a time. Here the input is a []byte and
// the output is appended to a []byte, which doubles as the window:
// back-references copy straight from earlier output, input is loaded eight
// bytes at a time, and nothing is copied twice.
//
// Input is untrusted. Every function bounds its output by a caller-given
// maximum, never reads or writes outside its slices whatever the input, and
// reports every malformed stream as an error. What counts as malformed
// mirrors compress/flate, compress/gzip and compress/zlib, so that switching
// decoders changes speed, not which responses are accepted; the few
// deliberate differences are noted on the functions concerned.
//
// Errors are classified so callers can tell a damaged response from a
// cut-off one: [ErrCorrupt] (wrapped with detail), [ErrTruncated] (which
// matches io.ErrUnexpectedEOF under errors.Is), [ErrTooLarge], [ErrChecksum]
// and [ErrHeader]. On error the functions still return the output decoded
// before the fault, all of it correct; for gzip and zlib it is unverified
// by the checksum.
package inflate
