package httpsig

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Signature is one signature of a message: its Signature-Input member and
// its Signature member, under the same label.
type Signature struct {
	Label string
	// Input is the Signature-Input member: the covered components and the
	// signature parameters.
	Input InnerList
	// Value is the signature's bytes.
	Value []byte

	// The signature parameters this package reads (RFC 9421 §2.3), zero
	// when absent. HasCreated and HasExpires tell a zero time from none.
	Created, Expires       int64
	HasCreated, HasExpires bool
	KeyID, Alg, Nonce, Tag string
}

// Covers reports whether the signature covers the component name, with
// any parameters.
func (s *Signature) Covers(name string) bool {
	_, ok := s.component(name)
	return ok
}

func (s *Signature) component(name string) (Item, bool) {
	for _, it := range s.Input.Items {
		if v, ok := it.Value.(string); ok && v == name {
			return it, true
		}
	}
	return Item{}, false
}

// ParseSignatures reads the Signature-Input and Signature fields of h (each
// field's lines joined with ", ") and returns the signatures in the order
// of Signature-Input. A label in Signature-Input without a Signature
// member, or whose parameters have the wrong types, is an error; so is
// either field alone.
func ParseSignatures(h http.Header, lim Limits) ([]Signature, error) {
	inputField, hasInput := FieldValue(h, "signature-input")
	sigField, hasSig := FieldValue(h, "signature")
	switch {
	case !hasInput && !hasSig:
		return nil, nil
	case !hasInput:
		return nil, errors.New("a Signature field without Signature-Input")
	case !hasSig:
		return nil, errors.New("a Signature-Input field without Signature")
	}
	inputs, err := ParseDictionary(inputField, lim)
	if err != nil {
		return nil, fmt.Errorf("Signature-Input: %w", err)
	}
	sigs, err := ParseDictionary(sigField, lim)
	if err != nil {
		return nil, fmt.Errorf("Signature: %w", err)
	}
	out := make([]Signature, 0, len(inputs))
	for _, in := range inputs {
		if in.List == nil {
			return nil, fmt.Errorf("Signature-Input %s: not an inner list of components", in.Key)
		}
		sm, ok := sigs.Get(in.Key)
		if !ok {
			return nil, fmt.Errorf("Signature-Input %s: no Signature of that label", in.Key)
		}
		if sm.Item == nil {
			return nil, fmt.Errorf("Signature %s: not a byte sequence", in.Key)
		}
		val, ok := sm.Item.Value.([]byte)
		if !ok {
			return nil, fmt.Errorf("Signature %s: not a byte sequence", in.Key)
		}
		s := Signature{Label: in.Key, Input: *in.List, Value: val}
		for _, p := range in.List.Params {
			var ok bool
			switch p.Key {
			case "created":
				s.Created, ok = p.Value.(int64)
				s.HasCreated = ok
			case "expires":
				s.Expires, ok = p.Value.(int64)
				s.HasExpires = ok
			case "keyid":
				s.KeyID, ok = p.Value.(string)
			case "alg":
				s.Alg, ok = p.Value.(string)
			case "nonce":
				s.Nonce, ok = p.Value.(string)
			case "tag":
				s.Tag, ok = p.Value.(string)
			default:
				ok = true // other parameters are covered, not read
			}
			if !ok {
				return nil, fmt.Errorf("Signature-Input %s: parameter %s is a %s", in.Key, p.Key, typeName(p.Value))
			}
		}
		for _, it := range in.List.Items {
			if _, ok := it.Value.(string); !ok {
				return nil, fmt.Errorf("Signature-Input %s: a component identifier is a %s, not a string", in.Key, typeName(it.Value))
			}
		}
		out = append(out, s)
	}
	return out, nil
}

func typeName(v BareItem) string {
	switch v.(type) {
	case int64:
		return "integer"
	case Decimal:
		return "decimal"
	case string:
		return "string"
	case Token:
		return "token"
	case []byte:
		return "byte sequence"
	case bool:
		return "boolean"
	case Date:
		return "date"
	case DisplayString:
		return "display string"
	}
	return fmt.Sprintf("%T", v)
}

// Agent returns the Signature-Agent origin the signature covers, from m's
// Signature-Agent field: the String form ("https://agent.example", of the
// drafts before October 2025 and npm's web-bot-auth 0.1.3) or the
// Dictionary form (sig1="https://agent.example"): with the key parameter
// the member it names; covered whole, the member keyed by the signature's
// label, or the only member. A member's type parameter, when given, must be
// directory (the only kind of discovery supported here).
func (s *Signature) Agent(m *Message) (string, error) {
	it, ok := s.component("signature-agent")
	if !ok {
		return "", errors.New("the signature does not cover Signature-Agent")
	}
	field, ok := FieldValue(m.Header, "signature-agent")
	if !ok {
		return "", errors.New("no Signature-Agent field")
	}
	var member Item
	keyParam, hasKey := it.Params.Get("key")
	switch {
	case hasKey:
		keyName, ok := keyParam.(string)
		if !ok {
			return "", errors.New("the key parameter of signature-agent is not a string")
		}
		d, err := ParseDictionary(field, DefaultLimits)
		if err != nil {
			return "", fmt.Errorf("Signature-Agent: %w", err)
		}
		mem, ok := d.Get(keyName)
		if !ok || mem.Item == nil {
			return "", fmt.Errorf("Signature-Agent has no member %q", keyName)
		}
		member = *mem.Item
	case strings.HasPrefix(field, `"`):
		var err error
		if member, err = ParseItem(field, DefaultLimits); err != nil {
			return "", fmt.Errorf("Signature-Agent: %w", err)
		}
	default:
		d, err := ParseDictionary(field, DefaultLimits)
		if err != nil {
			return "", fmt.Errorf("Signature-Agent: %w", err)
		}
		mem, ok := d.Get(s.Label)
		if !ok && len(d) == 1 {
			mem, ok = d[0], true
		}
		if !ok || mem.Item == nil {
			return "", fmt.Errorf("Signature-Agent has no member for the label %q", s.Label)
		}
		member = *mem.Item
	}
	u, ok := member.Value.(string)
	if !ok {
		return "", fmt.Errorf("Signature-Agent is a %s, not a string", typeName(member.Value))
	}
	if t, ok := member.Params.Get("type"); ok && t != Token("directory") {
		return "", fmt.Errorf("Signature-Agent type %v: %w (only directory)", t, ErrUnsupported)
	}
	return AgentOrigin(u)
}

// VerifyEd25519 reports whether sig is pub's Ed25519 signature of base.
func VerifyEd25519(pub ed25519.PublicKey, base string, sig []byte) bool {
	return len(pub) == ed25519.PublicKeySize && len(sig) == ed25519.SignatureSize && ed25519.Verify(pub, []byte(base), sig)
}
