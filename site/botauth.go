package site

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/httpsig"
)

// Verdict is what BotAuth concludes of who sent a request.
type Verdict uint8

const (
	// Unverified: nothing the request claims could be confirmed, or it
	// claims nothing. Most requests, people's included, are unverified.
	Unverified Verdict = iota
	// VerifiedBySignature: a Web Bot Auth signature verified with a key
	// its Signature-Agent publishes. Identity.Agent names the agent: the
	// signature proves who sent the request, not that you should trust
	// them.
	VerifiedBySignature
	// VerifiedByDNS: the User-Agent claims a known crawler (Googlebot,
	// Bingbot, …) and the address is that crawler's, by reverse DNS
	// confirmed forward or by its published IP ranges (Identity.Claim.By
	// says which).
	VerifiedByDNS
	// Spoofed: a claim was refuted. The User-Agent names a known crawler
	// whose address this is not, or the signature does not verify with
	// the key its agent publishes, or it replays a signature already seen.
	Spoofed
)

func (v Verdict) String() string {
	switch v {
	case VerifiedBySignature:
		return "signature"
	case VerifiedByDNS:
		return "dns"
	case Spoofed:
		return "spoofed"
	}
	return "unverified"
}

// SignatureStatus is what the check of a request's Web Bot Auth signature
// found.
type SignatureStatus uint8

const (
	// SignatureNone: the request carries no Web Bot Auth signature.
	SignatureNone SignatureStatus = iota
	// SignatureValid: it verified.
	SignatureValid
	// SignatureInvalid: it could not be accepted: malformed, expired or
	// not yet valid, an algorithm or component not supported, a key the
	// agent does not publish, a key directory that could not be had.
	SignatureInvalid
	// SignatureForged: it does not verify with the key its agent
	// publishes (a tampered or forged request), or it was seen before (a
	// replay).
	SignatureForged
)

func (s SignatureStatus) String() string {
	switch s {
	case SignatureValid:
		return "valid"
	case SignatureInvalid:
		return "invalid"
	case SignatureForged:
		return "forged"
	}
	return "none"
}

// Errors of signature checks, for errors.Is on Identity.SignatureErr.
// A key directory that could not be had is a *DirectoryError.
var (
	ErrSignatureMalformed = errors.New("malformed signature fields")
	ErrSignatureExpired   = errors.New("signature expired")
	ErrSignatureEarly     = errors.New("signature created in the future")
	ErrSignatureTooLong   = errors.New("signature valid for too long")
	ErrUnsupported        = errors.New("not supported")
	ErrUnknownKey         = errors.New("the agent does not publish this key")
	ErrBadSignature       = errors.New("the signature does not verify")
	ErrReplay             = errors.New("the signature was seen before (a replay)")
)

// Identity is BotAuth's answer for one request.
type Identity struct {
	// Verdict is the conclusion, and Why says in a line how it was
	// reached.
	Verdict Verdict
	Why     string

	// Signature is what the signature check found, and SignatureErr why
	// a signature was not valid. Agent is the Signature-Agent origin
	// ("https://crawler.example") and KeyID the thumbprint of the key, of
	// a valid or forged signature.
	Signature    SignatureStatus
	SignatureErr error
	Agent, KeyID string
	// Expires is when a valid signature stops being valid.
	Expires time.Time

	// Claim is the check of the crawler the User-Agent names, by address
	// (Verifier): zero when it names none. ClaimErr is a lookup that
	// failed, which refutes nothing.
	Claim    Result
	ClaimErr error
}

// Message is a request as BotAuth reads it, for servers not built on
// net/http: fill it from the request and call BotAuth.Verify.
type Message struct {
	Method string // "GET"
	Scheme string // "https" or "http", as the client sent it
	// Authority is the Host header (HTTP/2's :authority).
	Authority string
	// Target is the request target, "/path?query".
	Target string
	// Header holds the header fields; the field names' case does not
	// matter when they are in canonical form (http.Header.Set).
	Header http.Header
	// ClientIP is the client's address, for the check of a crawler named
	// by the User-Agent; the zero Addr if unknown.
	ClientIP netip.Addr
}

// DefaultDirectoryUserAgent is the User-Agent of key directory fetches.
const DefaultDirectoryUserAgent = "gentlecrawl-site (+https://github.com/gentlecrawl/gentlecrawl)"

// BotAuth tells who sent a request, from two kinds of evidence:
//
//   - A Web Bot Auth signature: HTTP Message Signatures (RFC 9421) in the
//     profile of draft-meunier-web-bot-auth-architecture, as gentlecrawl
//     and other signing crawlers send them. The signature must be tagged
//     web-bot-auth, use Ed25519, cover @authority (or @target-uri) and
//     Signature-Agent, carry created, expires (within MaxValidity, with
//     Skew for the clocks), keyid and a nonce not seen before. The key is
//     the one whose JWK thumbprint is keyid in the key directory the
//     Signature-Agent origin publishes at
//     /.well-known/http-message-signatures-directory, fetched politely
//     (see the Directory fields) and cached. Signature-Agent may be a
//     String ("https://agent.example") or a Dictionary
//     (sig1="https://agent.example").
//   - A User-Agent that names a known crawler, checked by Verifier
//     against the crawler's IP ranges or reverse DNS.
//
// Each is a claim; the verdict is as good as the weakest: any claim
// refuted makes the request Spoofed, else a valid signature makes it
// VerifiedBySignature, else a confirmed crawler VerifiedByDNS, else it is
// Unverified.
//
// Handler puts the Identity in the request's context (IdentityFrom);
// VerifyRequest and Verify return it. Set the fields before the first
// request; the zero BotAuth is ready to use. A BotAuth is safe for
// concurrent use.
type BotAuth struct {
	// Verifier checks the crawler a User-Agent names; nil means a zero
	// Verifier (DNS through net.DefaultResolver).
	Verifier *Verifier

	// AllowPrivateNetworks lets key directories be fetched from
	// loopback, private and link-local addresses, which are refused by
	// default: a request must not steer the server into its own network.
	AllowPrivateNetworks bool
	// TLSConfig, when set, is the TLS configuration of directory fetches
	// (RootCAs for a private certificate authority, in tests).
	TLSConfig *tls.Config
	// DirectoryTimeout bounds one directory fetch, connection to last
	// byte. The default is 5 seconds.
	DirectoryTimeout time.Duration
	// MaxDirectorySize caps a directory's body. The default is 64 KiB.
	MaxDirectorySize int64
	// MinDirectoryTTL and MaxDirectoryTTL bound how long a directory is
	// kept: its Cache-Control max-age, or the minimum when it gives none.
	// The defaults are 5 minutes and 24 hours. A key not in a directory
	// older than the minimum has it fetched again. DirectoryErrorTTL is
	// how long a failed fetch is remembered, 1 minute by default.
	MinDirectoryTTL, MaxDirectoryTTL, DirectoryErrorTTL time.Duration
	// MaxDirectories bounds the directories kept. The default is 1000.
	MaxDirectories int
	// UserAgent is sent when fetching directories. The default is
	// DefaultDirectoryUserAgent.
	UserAgent string

	// Skew is the clock difference allowed with a signer. The default is
	// 10 seconds.
	Skew time.Duration
	// MaxValidity is the longest span from created to expires accepted.
	// The default is 24 hours, the drafts' recommended ceiling; a shorter
	// one narrows what a replay of a captured request can do.
	MaxValidity time.Duration
	// NonceCacheSize bounds the nonces remembered, each until its
	// signature expires; when full, the one closest to expiring is
	// forgotten first. The default is 100000: size it to the signed
	// requests of one validity window.
	NonceCacheSize int

	// Now returns the current time; nil means time.Now.
	Now func() time.Time

	once     sync.Once
	dirs     *directories
	nonces   *nonces
	verifier *Verifier
}

type identityKey struct{}

// IdentityFrom returns the Identity BotAuth.Handler put in ctx.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// Handler verifies each request and passes it on to next with its
// Identity in the context (IdentityFrom). It turns nothing away: what to
// do with a spoofed or unverified request is the handler's choice.
func (b *BotAuth) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := b.VerifyRequest(r)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), identityKey{}, id)))
	})
}

// VerifyRequest is Verify for a net/http request: scheme https when it came
// over TLS, the client address as the Verifier's ClientIP says.
func (b *BotAuth) VerifyRequest(r *http.Request) Identity {
	b.init()
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	target := r.RequestURI
	if !strings.HasPrefix(target, "/") {
		target = r.URL.RequestURI()
	}
	return b.Verify(r.Context(), Message{
		Method:    r.Method,
		Scheme:    scheme,
		Authority: r.Host,
		Target:    target,
		Header:    r.Header,
		ClientIP:  b.verifier.clientIP(r),
	})
}

func (b *BotAuth) init() {
	b.once.Do(func() {
		b.dirs = newDirectories(b)
		b.nonces = newNonces(orDefault(b.NonceCacheSize, 100000))
		b.verifier = b.Verifier
		if b.verifier == nil {
			b.verifier = &Verifier{}
		}
	})
}

func (b *BotAuth) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// maxSignatures bounds the Web Bot Auth signatures of one request that are
// checked.
const maxSignatures = 3

// Verify checks m and returns its Identity. It may wait for a key
// directory (at most DirectoryTimeout) and for DNS (the Verifier's
// Timeout), or until ctx ends.
func (b *BotAuth) Verify(ctx context.Context, m Message) Identity {
	b.init()
	var id Identity
	b.checkSignatures(ctx, &m, &id)
	id.Claim, id.ClaimErr = b.verifier.Verify(ctx, m.ClientIP, m.Header.Get("User-Agent"))

	claim := id.Claim.Crawler
	switch {
	case id.Signature == SignatureForged:
		id.Verdict = Spoofed
		id.Why = fmt.Sprintf("signature of %s forged: %v", id.Agent, id.SignatureErr)
	case id.Claim.Spoofed:
		id.Verdict = Spoofed
		id.Why = fmt.Sprintf("the User-Agent claims %s, but %s is not %s's address", claim, m.ClientIP, claim)
	case id.Signature == SignatureValid:
		id.Verdict = VerifiedBySignature
		id.Why = fmt.Sprintf("signed by %s with the key %s it publishes", id.Agent, id.KeyID)
		if id.Claim.Verified {
			id.Why += fmt.Sprintf("; and %s confirmed by %s", claim, id.Claim.By)
		}
	case id.Claim.Verified:
		id.Verdict = VerifiedByDNS
		switch id.Claim.By {
		case ByIPRange:
			id.Why = fmt.Sprintf("%s: %s is in its published IP ranges", claim, m.ClientIP)
		default:
			id.Why = fmt.Sprintf("%s: %s is %s, confirmed forward", claim, m.ClientIP, id.Claim.Host)
		}
	default:
		var why []string
		switch id.Signature {
		case SignatureNone:
			why = append(why, "no Web Bot Auth signature")
		default:
			why = append(why, fmt.Sprintf("signature not accepted: %v", id.SignatureErr))
		}
		switch {
		case claim == "":
			why = append(why, "the User-Agent names no known crawler")
		case id.ClaimErr != nil:
			why = append(why, fmt.Sprintf("the User-Agent claims %s, which could not be checked: %v", claim, id.ClaimErr))
		}
		id.Why = strings.Join(why, "; ")
	}
	return id
}

// checkSignatures checks the Web Bot Auth signatures of m, the first few,
// until one is valid.
func (b *BotAuth) checkSignatures(ctx context.Context, m *Message, id *Identity) {
	sigs, err := httpsig.ParseSignatures(m.Header, httpsig.DefaultLimits)
	if err != nil {
		id.Signature, id.SignatureErr = SignatureInvalid, fmt.Errorf("%w: %w", ErrSignatureMalformed, err)
		return
	}
	msg := &httpsig.Message{Method: m.Method, Scheme: m.Scheme, Authority: m.Authority, Target: m.Target, Header: m.Header}
	checked := 0
	for i := range sigs {
		s := &sigs[i]
		if s.Tag != httpsig.Tag {
			continue
		}
		if checked++; checked > maxSignatures {
			break
		}
		status, agent, err := b.checkOne(ctx, msg, s)
		switch {
		case status == SignatureValid:
			id.Signature, id.SignatureErr = status, nil
			id.Agent, id.KeyID, id.Expires = agent, s.KeyID, time.Unix(s.Expires, 0)
			return
		case status == SignatureForged && id.Signature != SignatureForged:
			id.Signature, id.SignatureErr = status, err
			id.Agent, id.KeyID = agent, s.KeyID
		case id.Signature == SignatureNone:
			id.Signature, id.SignatureErr = status, err
		}
	}
}

// checkOne checks one signature, cheapest checks first: nothing is fetched
// for a signature that is malformed, expired or of another algorithm, and
// its nonce is recorded only once it verified, so that no one can spend
// another's nonces.
func (b *BotAuth) checkOne(ctx context.Context, m *httpsig.Message, s *httpsig.Signature) (SignatureStatus, string, error) {
	now := b.now()
	skew := orDefault(b.Skew, 10*time.Second)
	invalid := func(err error) (SignatureStatus, string, error) { return SignatureInvalid, "", err }
	switch {
	case s.Alg != "" && s.Alg != httpsig.Alg:
		return invalid(fmt.Errorf("algorithm %q: %w (only ed25519)", s.Alg, ErrUnsupported))
	case s.KeyID == "":
		return invalid(fmt.Errorf("%w: no keyid", ErrSignatureMalformed))
	case !s.HasCreated || !s.HasExpires:
		return invalid(fmt.Errorf("%w: created and expires are required", ErrSignatureMalformed))
	case s.Nonce == "" || len(s.Nonce) > 512:
		return invalid(fmt.Errorf("%w: a nonce (of at most 512 characters) is required", ErrSignatureMalformed))
	}
	created, expires := time.Unix(s.Created, 0), time.Unix(s.Expires, 0)
	switch {
	case expires.Before(created):
		return invalid(fmt.Errorf("%w: expires before it is created", ErrSignatureMalformed))
	case created.After(now.Add(skew)):
		return invalid(fmt.Errorf("%w: created %s, %v ahead of this clock", ErrSignatureEarly, created.UTC().Format(time.RFC3339), created.Sub(now).Round(time.Second)))
	case expires.Before(now.Add(-skew)):
		return invalid(fmt.Errorf("%w at %s, %v ago", ErrSignatureExpired, expires.UTC().Format(time.RFC3339), now.Sub(expires).Round(time.Second)))
	case expires.Sub(created) > orDefault(b.MaxValidity, 24*time.Hour):
		return invalid(fmt.Errorf("%w: %v from created to expires, more than the %v accepted", ErrSignatureTooLong, expires.Sub(created), orDefault(b.MaxValidity, 24*time.Hour)))
	case !s.Covers("@authority") && !s.Covers("@target-uri"):
		return invalid(fmt.Errorf("%w: it covers neither @authority nor @target-uri", ErrSignatureMalformed))
	case len(s.Value) != 64:
		return invalid(fmt.Errorf("%w: a signature of %d bytes is not Ed25519's", ErrSignatureMalformed, len(s.Value)))
	}
	agent, err := s.Agent(m)
	if err != nil {
		if errors.Is(err, httpsig.ErrUnsupported) {
			err = fmt.Errorf("%w: %w", ErrUnsupported, err)
		}
		return invalid(err)
	}
	base, err := httpsig.Base(m, s.Input)
	if err != nil {
		if errors.Is(err, httpsig.ErrUnsupported) {
			err = fmt.Errorf("%w: %w", ErrUnsupported, err)
		}
		return invalid(err)
	}
	keys, err := b.dirs.keys(ctx, agent, false)
	if err != nil {
		return invalid(err)
	}
	pub := keys[s.KeyID]
	if pub == nil {
		// Maybe a key added since the directory was fetched.
		if keys, err = b.dirs.keys(ctx, agent, true); err != nil {
			return invalid(err)
		}
		if pub = keys[s.KeyID]; pub == nil {
			return invalid(fmt.Errorf("%w: %s does not list %s", ErrUnknownKey, agent+httpsig.WellKnownPath, s.KeyID))
		}
	}
	if !httpsig.VerifyEd25519(pub, base, s.Value) {
		return SignatureForged, agent, ErrBadSignature
	}
	if !b.nonces.firstUse(agent, s.KeyID, s.Nonce, expires.Add(skew), now) {
		return SignatureForged, agent, ErrReplay
	}
	return SignatureValid, agent, nil
}
