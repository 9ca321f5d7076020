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
// A [Reader] reads records back, from files gzipped per record or plain. It is minimal
// (type, header fields, block) but strict, and it bounds what untrusted input can make
// it allocate.
//
// The record layout follows WARC 1.1: each record is "WARC/1.1" CRLF, header fields
// each ending in CRLF, an empty line, the block of exactly Content-Length bytes, and
// CRLF CRLF. Digests are SHA-1 in base32 ("sha1:..."), the form most WARC tools
// expect; revisit records use the server-not-modified profile (WARC 1.1 §6.7.3).
package warc
