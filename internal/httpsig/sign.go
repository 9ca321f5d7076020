package httpsig

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultValidity is how long a signature made by a Signer holds:
// expires is created plus this. It is short, since a captured request can
// be replayed to the same authority until then.
const DefaultValidity = time.Minute

// NonceSize is the bytes of randomness in a nonce (standard base64 in the
// nonce parameter), as npm's web-bot-auth makes them.
const NonceSize = 64

// Signer signs requests in the Web Bot Auth profile of HTTP Message
// Signatures: it covers @authority and signature-agent, with created,
// expires, keyid (the key's JWK thumbprint), alg "ed25519", a random nonce
// and tag "web-bot-auth", under the label sig1.
//
// The Signature-Agent field is sent as a String, "https://agent.example"
// — the form of npm's web-bot-auth 0.1.3, the draft's reference
// implementation, whose verifier takes the whole field as the covered
// value. Drafts since October 2025 make the field a Dictionary
// (sig1="https://agent.example", covered as "signature-agent";key="sig1"),
// which that verifier does not check correctly; verifiers of the newer
// drafts may accept the String form as their legacy form.
//
// A Signer is safe for concurrent use.
type Signer struct {
	key      crypto.Signer
	keyID    string
	agent    string // the Signature-Agent field value
	validity time.Duration
	rand     io.Reader
}

// NewSigner returns a Signer for key, an ed25519.PrivateKey or any
// crypto.Signer whose public key is an ed25519.PublicKey, and agent, the
// https origin whose key directory publishes the public key
// (AgentOrigin). validity 0 means DefaultValidity.
func NewSigner(key crypto.Signer, agent string, validity time.Duration) (*Signer, error) {
	if key == nil {
		return nil, errors.New("no signing key")
	}
	pub, ok := key.Public().(ed25519.PublicKey)
	if !ok || len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("the signing key is a %T: want Ed25519", key.Public())
	}
	origin, err := AgentOrigin(agent)
	if err != nil {
		return nil, err
	}
	if validity < 0 {
		return nil, fmt.Errorf("signature validity %v: must not be negative", validity)
	}
	if validity == 0 {
		validity = DefaultValidity
	}
	if validity < time.Second {
		return nil, fmt.Errorf("signature validity %v: at least 1s", validity)
	}
	agentField, err := SerializeItem(Item{Value: origin})
	if err != nil {
		return nil, err
	}
	return &Signer{key: key, keyID: Thumbprint(pub), agent: agentField, validity: validity, rand: rand.Reader}, nil
}

// KeyID is the keyid of the signatures: the key's JWK thumbprint.
func (s *Signer) KeyID() string { return s.keyID }

// AgentOrigin checks a Signature-Agent URL and returns it as an origin,
// "https://host[:port]": https, a host, no user, no path but "/", no query
// or fragment, as the directory type of discovery requires.
func AgentOrigin(agent string) (string, error) {
	u, err := url.Parse(agent)
	if err != nil {
		return "", fmt.Errorf("Signature-Agent %q: %w", agent, err)
	}
	switch {
	case u.Scheme != "https":
		return "", fmt.Errorf("Signature-Agent %q: must be an https:// URL", agent)
	case u.Host == "" || u.Hostname() == "":
		return "", fmt.Errorf("Signature-Agent %q: no host", agent)
	case u.User != nil:
		return "", fmt.Errorf("Signature-Agent %q: no user information allowed", agent)
	case u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "":
		return "", fmt.Errorf("Signature-Agent %q: must be an origin (https://host[:port]), the key directory being at %s there", agent, WellKnownPath)
	}
	host := strings.ToLower(u.Host)
	host = strings.TrimSuffix(host, ":443")
	return "https://" + host, nil
}

// Sign adds the Signature-Agent, Signature-Input and Signature fields to
// h, for a request with that scheme and Host header, created at now.
// Fields of those names already in h are replaced.
func (s *Signer) Sign(h http.Header, scheme, host string, now time.Time) error {
	var nonce [NonceSize]byte
	if _, err := io.ReadFull(s.rand, nonce[:]); err != nil {
		return fmt.Errorf("signing: nonce: %w", err)
	}
	created := now.Unix()
	params := InnerList{
		Items: []Item{{Value: "@authority"}, {Value: "signature-agent"}},
		Params: Params{
			{"created", created},
			{"keyid", s.keyID},
			{"alg", Alg},
			{"expires", created + int64(s.validity/time.Second)},
			{"nonce", base64.StdEncoding.EncodeToString(nonce[:])},
			{"tag", Tag},
		},
	}
	h.Set("Signature-Agent", s.agent)
	m := &Message{Method: http.MethodGet, Scheme: scheme, Authority: host, Header: h}
	base, err := Base(m, params)
	if err != nil {
		return fmt.Errorf("signing: %w", err)
	}
	sig, err := s.key.Sign(s.rand, []byte(base), crypto.Hash(0))
	if err != nil {
		return fmt.Errorf("signing: %w", err)
	}
	input, err := SerializeInnerList(params)
	if err != nil {
		return fmt.Errorf("signing: %w", err)
	}
	h.Set("Signature-Input", Label+"="+input)
	h.Set("Signature", Label+"=:"+base64.StdEncoding.EncodeToString(sig)+":")
	return nil
}
