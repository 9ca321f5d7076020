package httpsig

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

// The names of the Web Bot Auth profile (draft-meunier-web-bot-auth-
// architecture) and its key directory (draft-meunier-http-message-
// signatures-directory).
const (
	// WellKnownPath is where an agent's origin publishes its keys.
	WellKnownPath = "/.well-known/http-message-signatures-directory"
	// MediaType is the media type of that key directory.
	MediaType = "application/http-message-signatures-directory+json"
	// Tag is the tag parameter of a Web Bot Auth signature.
	Tag = "web-bot-auth"
	// Alg is the one algorithm signed and verified here.
	Alg = "ed25519"
	// Label is the label of the signatures made here.
	Label = "sig1"
)

// JWK is an Ed25519 key as a JSON Web Key (RFC 8037): OKP, Ed25519, x the
// public key, d the private seed (private keys only), all base64url without
// padding.
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	Kid string `json:"kid,omitempty"`
	X   string `json:"x"`
	D   string `json:"d,omitempty"`
}

var b64url = base64.RawURLEncoding

// Thumbprint is the JWK thumbprint of pub (RFC 7638, for OKP keys RFC
// 8037 appendix A.3): base64url of the SHA-256 of its canonical JSON,
// {"crv":"Ed25519","kty":"OKP","x":"..."}. Web Bot Auth signatures name
// their key by it (keyid).
func Thumbprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + b64url.EncodeToString(pub) + `"}`))
	return b64url.EncodeToString(sum[:])
}

// PublicJWK is pub as a JWK whose kid is its thumbprint.
func PublicJWK(pub ed25519.PublicKey) JWK {
	return JWK{Kty: "OKP", Crv: "Ed25519", Kid: Thumbprint(pub), X: b64url.EncodeToString(pub)}
}

// PrivateJWK is priv as a JWK, d included.
func PrivateJWK(priv ed25519.PrivateKey) JWK {
	j := PublicJWK(priv.Public().(ed25519.PublicKey))
	j.D = b64url.EncodeToString(priv.Seed())
	return j
}

// MarshalDirectory is the key directory of the public keys: a JWK Set,
// {"keys":[...]}, each key with its thumbprint as kid, indented, ending
// in a newline.
func MarshalDirectory(pubs ...ed25519.PublicKey) []byte {
	dir := struct {
		Keys []JWK `json:"keys"`
	}{Keys: []JWK{}}
	for _, p := range pubs {
		dir.Keys = append(dir.Keys, PublicJWK(p))
	}
	out, _ := json.MarshalIndent(dir, "", "  ")
	return append(out, '\n')
}

// MaxDirectoryKeys bounds the keys read from a directory.
const MaxDirectoryKeys = 64

// ParseDirectory reads a key directory (a JWK Set) and returns its Ed25519
// keys by thumbprint. Keys of other types are skipped (counted in
// skipped); a kid, when given, is not trusted: keys are found by the
// thumbprint computed here. A document that is not a JWK Set, one with more
// than MaxDirectoryKeys keys, or one without an Ed25519 key is an error.
func ParseDirectory(data []byte) (keys map[string]ed25519.PublicKey, skipped int, err error) {
	var dir struct {
		Keys []json.RawMessage `json:"keys"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&dir); err != nil {
		return nil, 0, fmt.Errorf("not a JWK Set: %w", err)
	}
	if dec.More() {
		return nil, 0, errors.New("not a JWK Set: data after the JSON object")
	}
	if dir.Keys == nil {
		return nil, 0, errors.New(`not a JWK Set: no "keys" array`)
	}
	if len(dir.Keys) > MaxDirectoryKeys {
		return nil, 0, fmt.Errorf("%d keys, at most %d are read", len(dir.Keys), MaxDirectoryKeys)
	}
	keys = make(map[string]ed25519.PublicKey)
	for _, raw := range dir.Keys {
		var j JWK
		if json.Unmarshal(raw, &j) != nil || j.Kty != "OKP" || j.Crv != "Ed25519" {
			skipped++
			continue
		}
		pub, err := decodeKeyBytes(j.X, ed25519.PublicKeySize)
		if err != nil {
			skipped++
			continue
		}
		keys[Thumbprint(pub)] = pub
	}
	if len(keys) == 0 {
		return nil, skipped, fmt.Errorf("no Ed25519 key (%d other keys)", skipped)
	}
	return keys, skipped, nil
}

func decodeKeyBytes(s string, size int) ([]byte, error) {
	b, err := b64url.DecodeString(s)
	if err != nil {
		b, err = base64.URLEncoding.DecodeString(s)
	}
	if err != nil {
		return nil, errors.New("not base64url")
	}
	if len(b) != size {
		return nil, fmt.Errorf("%d bytes, want %d", len(b), size)
	}
	return b, nil
}

// MarshalPrivateKeyPEM is priv in PEM, PKCS#8 ("PRIVATE KEY"), as openssl
// writes Ed25519 keys.
func MarshalPrivateKeyPEM(priv ed25519.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// ParsePrivateKey reads an Ed25519 private key in PEM (PKCS#8, "PRIVATE
// KEY", as MarshalPrivateKeyPEM and `openssl genpkey -algorithm ed25519`
// write it) or as a JWK with its d member.
func ParsePrivateKey(data []byte) (ed25519.PrivateKey, error) {
	trimmed := bytes.TrimSpace(data)
	if bytes.HasPrefix(trimmed, []byte("{")) {
		var j struct {
			JWK
			Keys json.RawMessage `json:"keys"`
		}
		if err := json.Unmarshal(trimmed, &j); err != nil {
			return nil, fmt.Errorf("not a JWK: %w", err)
		}
		if j.Keys != nil {
			return nil, errors.New("a key directory (JWK Set) of public keys, not a private key")
		}
		if j.Kty != "OKP" || j.Crv != "Ed25519" {
			return nil, fmt.Errorf("a JWK of kty %q, crv %q: want an Ed25519 key (OKP, Ed25519)", j.Kty, j.Crv)
		}
		if j.D == "" {
			return nil, errors.New("a public JWK: the private key (d) is missing")
		}
		seed, err := decodeKeyBytes(j.D, ed25519.SeedSize)
		if err != nil {
			return nil, fmt.Errorf("JWK d: %w", err)
		}
		priv := ed25519.NewKeyFromSeed(seed)
		if j.X != "" && j.X != b64url.EncodeToString(priv.Public().(ed25519.PublicKey)) {
			return nil, errors.New("JWK: x is not the public key of d")
		}
		return priv, nil
	}
	block, _ := pem.Decode(trimmed)
	if block == nil {
		return nil, errors.New("neither PEM nor a JWK")
	}
	if block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("a PEM %q block: want an Ed25519 \"PRIVATE KEY\" (PKCS#8)", block.Type)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("PKCS#8: %w", err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("a %s key: want Ed25519", strings.TrimPrefix(fmt.Sprintf("%T", k), "*"))
	}
	return priv, nil
}
