// Package httpsig holds what signing and verifying requests share: HTTP
// Message Signatures (RFC 9421) in the Web Bot Auth profile
// (draft-meunier-web-bot-auth-architecture), Ed25519 only. It parses and
// serializes Structured Field Values (RFC 9651) strictly and within limits,
// builds signature bases, signs (Signer, for internal/fetch), reads
// Signature-Input, Signature and Signature-Agent (for package site), and
// writes and reads Ed25519 keys as PEM, JWK and key directories (JWK Sets)
// named by their JWK thumbprints (RFC 7638).
//
// It does no I/O: fetching key directories, clocks and replay caches are
// the verifier's.
package httpsig
