// Package warc writes and reads WARC 1.1 files (ISO 28500:2017), the archive format in
// which gentlecrawl records what it fetched.
//
// A [Writer] appends one request record and one response (or revisit) record per HTTP
// exchange to files named PREFIX-YYYYMMDDhhmmss-SERIAL.warc.gz. Every record is its own
// gzip member, so a file can be read record by record and, after a crash, cut back to
// the last complete record. A file being written carries the suffix ".open", dropped by
// a rename when the file is closed; [Recover] closes out the .open files a crashed
// writer left behind.
//
// Beside each file it closes, NAME.warc.gz, the Writer writes NAME.cdxj, its index in
// the CDXJ form of pywb: one line per response and revisit record, "KEY TIMESTAMP
// JSON", where KEY is the [SURT] form of the URI, TIMESTAMP the WARC-Date as 14
// digits, and JSON gives url, mime, status, digest (of the payload, base32 without
// its "sha1:" label, as pywb writes it), and the offset and length of the record's
// gzip member in filename. The lines are sorted, so replay tools can use the files
// as they are. The index is written to a temporary file and renamed; a file whose
// index a crash kept from being written gets one from [Recover].
//
// A [Reader] reads records back, from files gzipped per record or plain. It is minimal
// (type, header fields, block) but strict, and it bounds what untrusted input can make
// it allocate.
//
// The record layout follows WARC 1.1: each record is "WARC/1.1" CRLF, header fields
// each ending in CRLF, an empty line, the block of exactly Content-Length bytes, and
// CRLF CRLF. Digests are SHA-1 in base32 ("sha1:..."), the form most WARC tools
// expect; revisit records use the server-not-modified profile (WARC 1.1 §6.7.3).
package warc
