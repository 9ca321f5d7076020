package fetch

import (
	"crypto"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/url"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/gentlecrawl/gentlecrawl/internal/httpsig"
)

// Defaults used for the zero values of Config fields.
const (
	DefaultAccept         = "*/*"
	DefaultAcceptEncoding = "gzip, deflate, br, zstd"
	DefaultMaxBodySize    = 15 << 20 // 15 MiB
	DefaultMaxHeaderBytes = 1 << 20  // 1 MiB
	DefaultMaxDecodeRatio = 100
	DefaultMaxEncodings   = 2
	DefaultTimeout        = 30 * time.Second
	DefaultConnectTimeout = 10 * time.Second
	DefaultTLSTimeout     = 10 * time.Second
	DefaultFirstByte      = 20 * time.Second

	DefaultMinTransferBytes  = 1 << 10          // 1 KiB ...
	DefaultMinTransferWindow = 10 * time.Second // ... in any 10 s after the first byte

	DefaultDNSTTL         = 5 * time.Minute
	DefaultDNSNegativeTTL = time.Minute
	DefaultDNSCacheSize   = 10000
)

// maxLimit keeps size limits far from overflow when one is added to them.
const maxLimit = math.MaxInt64 / 4

// Config configures a Client. Apart from UserAgent, the zero value of every
// field selects its documented default.
type Config struct {
	// UserAgent is the full User-Agent header value. It is required.
	UserAgent string

	// From, when non-empty, is sent as the From header (RFC 9110 §10.1.2):
	// a mailbox where the crawler's operator can be reached.
	From string

	// Accept is the Accept header value. The default is "*/*".
	Accept string

	// AcceptEncoding is the Accept-Encoding header value. The default is
	// "gzip, deflate, br, zstd", every coding the Client decodes. A
	// Content-Encoding it cannot decode is kept raw and reported in
	// Result.Undecoded.
	AcceptEncoding string

	// MaxBodySize caps the decoded body. The default is 15 MiB. A larger
	// body is cut at exactly MaxBodySize bytes (no overshoot), Result.Cause
	// is ErrBodyTooLarge and Result.Truncated "length"; that is not an
	// error.
	MaxBodySize int64

	// MaxRawSize caps the bytes read from the wire for one body (guarding
	// against bodies that do not decode, or decode slowly). The default is
	// 2*MaxBodySize. Exceeding it yields Truncated "length" and Cause
	// ErrRawTooLarge.
	MaxRawSize int64

	// MaxDecodeRatio caps decoded bytes per byte received, once more than
	// 1 MiB has been decoded: a decompression bomb is cut there with Cause
	// ErrDecompressionBomb, Truncated "length", before it reaches
	// MaxBodySize. The default is 100; a negative value disables the check.
	MaxDecodeRatio int64

	// MaxEncodings caps the number of content codings applied one after
	// the other ("gzip, br"). The default is 2; a response with more is kept
	// raw, with DecodeErr wrapping ErrTooManyEncodings.
	MaxEncodings int

	// MaxHeaderBytes caps the response header block. The default is 1 MiB.
	// A larger head fails Do with an *Error wrapping ErrHeaderTooLarge.
	MaxHeaderBytes int64

	// Timeout bounds the whole exchange, from dialing to the last body
	// byte. The default is 30s. When it expires before the response head
	// arrives, Do returns an error wrapping ErrTimeout; when it expires
	// during the body, what arrived is kept, Result.Truncated is "time" and
	// Cause ErrTimeout.
	Timeout time.Duration

	// ConnectTimeout bounds name resolution plus TCP connect (ErrConnectTimeout).
	// The default is 10s.
	ConnectTimeout time.Duration

	// TLSTimeout bounds the TLS handshake (ErrTLSTimeout). The default is
	// 10s.
	TLSTimeout time.Duration

	// FirstByteTimeout bounds the time from the request being sent to the
	// first byte of the response (ErrFirstByteTimeout). The default is 20s.
	FirstByteTimeout time.Duration

	// MinTransferBytes and MinTransferWindow set the slowest transfer
	// tolerated: after the response head, a body that delivers fewer than
	// MinTransferBytes in any MinTransferWindow (checked window by window)
	// is cut off, with Truncated "time" and Cause ErrTooSlow. The defaults
	// are 1 KiB and 10s; a negative MinTransferBytes disables the check.
	MinTransferBytes  int64
	MinTransferWindow time.Duration

	// Types says which media types are downloaded (see TypePolicy). Nil,
	// the default, downloads everything; DefaultTypePolicy is the policy of
	// a web crawl. Request.AllTypes overrides it for one request.
	Types *TypePolicy

	// Resolver looks up host names. The default is net.DefaultResolver.
	// Answers are cached for DNSTTL (default 5 minutes; negative: not
	// cached) and failures for DNSNegativeTTL (default 1 minute; negative:
	// not cached), at most DNSCacheSize names (default 10000). Concurrent
	// lookups of one name are merged into one either way.
	Resolver       Resolver
	DNSTTL         time.Duration
	DNSNegativeTTL time.Duration
	DNSCacheSize   int

	// AllowPrivateNetworks permits connections to loopback, private,
	// link-local and other non-public addresses (see IsPublic). Without it
	// such connections are refused with ErrPrivateNetwork.
	AllowPrivateNetworks bool

	// Resolve pins host names and ports to addresses, like curl --resolve.
	// Later entries override earlier ones; an entry for a host beats a "*"
	// entry.
	Resolve []Resolve

	// ConnectTo redirects connections for a host and port to another, like
	// curl --connect-to. The first matching entry is used.
	ConnectTo []ConnectTo

	// Proxy, when set, sends requests through HTTP proxies (see Proxy).
	// Nil: every request goes straight to its server.
	Proxy *Proxy

	// SignKey, when set, signs every request with HTTP Message Signatures
	// (RFC 9421) in the Web Bot Auth profile, so that a site can tell the
	// crawler by its key: an ed25519.PrivateKey, or any crypto.Signer whose
	// public key is an ed25519.PublicKey. Each exchange (the second of a
	// 304 refetch too) gets a new signature for its own authority, covering
	// @authority and Signature-Agent, valid for SignatureValidity (default
	// one minute), with a random nonce; a request sent again because its
	// connection failed before any answer (Result.Retried) goes with the
	// same one. The fields are in Result.RequestRaw like every other.
	// SignatureAgent is then required:
	// the https:// origin whose
	// /.well-known/http-message-signatures-directory publishes the public
	// key (see package internal/httpsig). Nil: nothing is signed.
	SignKey           crypto.Signer
	SignatureAgent    string
	SignatureValidity time.Duration

	// Logger receives debug records of each exchange. Nil means silent.
	Logger *slog.Logger
}

// CheckSigning reports what is wrong with SignKey, SignatureAgent and
// SignatureValidity, so that a crawl that could not sign is refused before
// it starts; nil when nothing is to be signed.
func (cfg Config) CheckSigning() error {
	_, err := cfg.signer()
	return err
}

// signer is the Signer of cfg's signing fields, nil when there is none.
func (cfg Config) signer() (*httpsig.Signer, error) {
	switch {
	case cfg.SignKey == nil && cfg.SignatureAgent == "":
		return nil, nil
	case cfg.SignKey == nil:
		return nil, errors.New("fetch: a Signature-Agent without a signing key (--sign-key)")
	case cfg.SignatureAgent == "":
		return nil, errors.New("fetch: a signing key without a Signature-Agent (--signature-agent): the https:// origin that publishes its public key")
	}
	s, err := httpsig.NewSigner(cfg.SignKey, cfg.SignatureAgent, cfg.SignatureValidity)
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	return s, nil
}

// withDefaults returns cfg with defaults filled in, or an error naming the
// first invalid field.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.UserAgent == "" {
		return cfg, errors.New("fetch: Config.UserAgent is required")
	}
	if cfg.Accept == "" {
		cfg.Accept = DefaultAccept
	}
	if cfg.AcceptEncoding == "" {
		cfg.AcceptEncoding = DefaultAcceptEncoding
	}
	for _, f := range []struct{ name, v string }{
		{"UserAgent", cfg.UserAgent},
		{"From", cfg.From},
		{"Accept", cfg.Accept},
		{"AcceptEncoding", cfg.AcceptEncoding},
	} {
		if !httpguts.ValidHeaderFieldValue(f.v) {
			return cfg, fmt.Errorf("fetch: Config.%s %q is not a valid header value", f.name, f.v)
		}
	}
	if cfg.MaxBodySize <= 0 {
		cfg.MaxBodySize = DefaultMaxBodySize
	}
	cfg.MaxBodySize = min(cfg.MaxBodySize, maxLimit)
	if cfg.MaxRawSize <= 0 {
		cfg.MaxRawSize = 2 * cfg.MaxBodySize
	}
	cfg.MaxRawSize = min(cfg.MaxRawSize, maxLimit)
	if cfg.MaxHeaderBytes <= 0 {
		cfg.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	switch {
	case cfg.MaxDecodeRatio == 0:
		cfg.MaxDecodeRatio = DefaultMaxDecodeRatio
	case cfg.MaxDecodeRatio < 0:
		cfg.MaxDecodeRatio = 0 // disabled
	}
	if cfg.MaxEncodings <= 0 {
		cfg.MaxEncodings = DefaultMaxEncodings
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.TLSTimeout <= 0 {
		cfg.TLSTimeout = DefaultTLSTimeout
	}
	if cfg.FirstByteTimeout <= 0 {
		cfg.FirstByteTimeout = DefaultFirstByte
	}
	if cfg.MinTransferBytes == 0 {
		cfg.MinTransferBytes = DefaultMinTransferBytes
	}
	if cfg.MinTransferWindow <= 0 {
		cfg.MinTransferWindow = DefaultMinTransferWindow
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.DNSTTL == 0 {
		cfg.DNSTTL = DefaultDNSTTL
	}
	if cfg.DNSNegativeTTL == 0 {
		cfg.DNSNegativeTTL = DefaultDNSNegativeTTL
	}
	if cfg.DNSCacheSize <= 0 {
		cfg.DNSCacheSize = DefaultDNSCacheSize
	}
	for _, r := range cfg.Resolve {
		if err := r.validate(); err != nil {
			return cfg, err
		}
	}
	for _, ct := range cfg.ConnectTo {
		if err := ct.validate(); err != nil {
			return cfg, err
		}
	}
	if cfg.Proxy != nil {
		p := *cfg.Proxy
		for _, u := range []*url.URL{p.HTTP, p.HTTPS} {
			if u != nil && (u.Scheme != "http" || u.Hostname() == "") {
				return cfg, fmt.Errorf("fetch: Config.Proxy: %s is not an http:// proxy", u.Redacted())
			}
		}
		p.compile()
		cfg.Proxy = &p
	}
	return cfg, nil
}

// CheckTargets reports an error when AllowPrivateNetworks is false and a
// --resolve or --connect-to rule points at a non-public address, so that a
// crawl that could never connect is refused before it starts. The error
// names the rule and wraps ErrPrivateNetwork, whose text names
// --allow-private-networks.
//
// Connect-to targets given as names are checked only when they are
// "localhost" or end in ".localhost" (RFC 6761 §6.3) or are pinned by a
// --resolve rule; other names are checked when dialed.
func (cfg Config) CheckTargets() error {
	if cfg.AllowPrivateNetworks {
		return nil
	}
	for _, r := range cfg.Resolve {
		for _, a := range r.Addrs {
			if !IsPublic(a) {
				return fmt.Errorf("--resolve %s: address %s: %w", r, a, ErrPrivateNetwork)
			}
		}
	}
	for _, ct := range cfg.ConnectTo {
		if ct.ToHost == "" {
			continue
		}
		if a, err := parseAddr(ct.ToHost); err == nil {
			if !IsPublic(a) {
				return fmt.Errorf("--connect-to %s: address %s: %w", ct, a, ErrPrivateNetwork)
			}
			continue
		}
		if isLocalhostName(ct.ToHost) {
			return fmt.Errorf("--connect-to %s: host %s: %w", ct, ct.ToHost, ErrPrivateNetwork)
		}
	}
	return nil
}
