package fetch

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"golang.org/x/net/http/httpguts"
)

// Defaults used for the zero values of Config fields.
const (
	DefaultAccept         = "*/*"
	DefaultAcceptEncoding = "gzip"
	DefaultMaxBodySize    = 15 << 20 // 15 MiB
	DefaultMaxHeaderBytes = 1 << 20  // 1 MiB
	DefaultTimeout        = 30 * time.Second
	DefaultConnectTimeout = 10 * time.Second
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
	// "gzip". The Client decodes responses itself; a Content-Encoding it
	// cannot decode is kept raw and reported in Result.Undecoded.
	AcceptEncoding string

	// MaxBodySize caps the decoded body. The default is 15 MiB. A larger
	// body is cut at exactly MaxBodySize bytes and Result.Truncated is
	// "length"; that is not an error.
	MaxBodySize int64

	// MaxRawSize caps the bytes read from the wire for one body (guarding
	// against bodies that do not decode, or decode slowly). The default is
	// 2*MaxBodySize. Exceeding it also yields Truncated "length".
	MaxRawSize int64

	// MaxHeaderBytes caps the response header block. The default is 1 MiB.
	MaxHeaderBytes int64

	// Timeout bounds the whole exchange, from dialing to the last body
	// byte. The default is 30s. When it expires before the response head
	// arrives, Do returns an error; when it expires during the body, what
	// arrived is kept and Result.Truncated is "time".
	Timeout time.Duration

	// ConnectTimeout bounds name resolution plus TCP connect, and separately
	// the TLS handshake. The default is 10s.
	ConnectTimeout time.Duration

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

	// Logger receives debug records of each exchange. Nil means silent.
	Logger *slog.Logger
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
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
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
