package httpsig

import (
	"crypto"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"strings"
	"testing"
)

// RFC 9421 appendix B.1.4, test-key-ed25519: the private key in PKCS#8 and
// the public key. The same key is the test key of the Web Bot Auth drafts
// and of npm's web-bot-auth.
const (
	rfcEd25519Private = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF
-----END PRIVATE KEY-----
`
	rfcEd25519Public = `-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=
-----END PUBLIC KEY-----
`
)

func rfcKey(t *testing.T) (ed25519.PrivateKey, ed25519.PublicKey) {
	t.Helper()
	priv, err := ParsePrivateKey([]byte(rfcEd25519Private))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode([]byte(rfcEd25519Public))
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pub := k.(ed25519.PublicKey)
	if !pub.Equal(priv.Public()) {
		t.Fatal("B.1.4's public key is not its private key's")
	}
	return priv, pub
}

// TestRFC9421B26 is RFC 9421 appendix B.2.6, "Signing a Request Using
// ed25519": the signature base built from the test-request and the
// Signature-Input field, and the signature, byte for byte (Ed25519 is
// deterministic).
func TestRFC9421B26(t *testing.T) {
	priv, pub := rfcKey(t)
	h := http.Header{}
	h.Set("Date", "Tue, 20 Apr 2021 02:07:55 GMT")
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", "18")
	h.Set("Signature-Input", `sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`)
	h.Set("Signature", `sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:`)
	// The test-request of B.2; only its covered parts count.
	m := &Message{Method: "POST", Scheme: "https", Authority: "example.com", Target: "/foo?param=Value&Pet=dog", Header: h}

	sigs, err := ParseSignatures(h, DefaultLimits)
	if err != nil || len(sigs) != 1 {
		t.Fatalf("ParseSignatures: %v, %d signatures", err, len(sigs))
	}
	s := sigs[0]
	if s.Label != "sig-b26" || s.Created != 1618884473 || s.KeyID != "test-key-ed25519" || s.HasExpires {
		t.Errorf("parameters: %+v", s)
	}
	base, err := Base(m, s.Input)
	if err != nil {
		t.Fatal(err)
	}
	want := `"date": Tue, 20 Apr 2021 02:07:55 GMT
"@method": POST
"@path": /foo
"@authority": example.com
"content-type": application/json
"content-length": 18
"@signature-params": ("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`
	if base != want {
		t.Fatalf("signature base:\n%s\nwant:\n%s", base, want)
	}
	if !VerifyEd25519(pub, base, s.Value) {
		t.Error("B.2.6's signature does not verify")
	}
	sig, err := priv.Sign(nil, []byte(base), crypto.Hash(0))
	if err != nil {
		t.Fatal(err)
	}
	if got := base64.StdEncoding.EncodeToString(sig); got != "wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==" {
		t.Errorf("signature %s, want B.2.6's", got)
	}
	bad := strings.Replace(base, "/foo", "/bar", 1)
	if VerifyEd25519(pub, bad, s.Value) {
		t.Error("a changed base verifies")
	}
}

// The Ed25519 test vectors of the Web Bot Auth protocol draft
// (draft-meunier-webbotauth-httpsig-protocol, appendix "EdDSA Using Curve
// edwards25519"), over the test-request, key B.1.4: the Dictionary form of
// Signature-Agent covered with the key parameter, and the legacy String
// form, as gentlecrawl sends it.
var draftVectors = []struct {
	name, agent, input, signature, base string
}{
	{
		name:      "dictionary",
		agent:     `agent2="https://signature-agent.test"`,
		input:     `sig2=("@authority" "signature-agent";key="agent2");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==";tag="web-bot-auth"`,
		signature: `sig2=:RdNFx5Bj6au3YgAMQL/RzmUlZE8QZLIaXGRpw985hWnwPfMxT228NMk6ehRS1PSl4e8PhbNZACSanGdhEwYCCg==:`,
		base: `"@authority": example.com
"signature-agent";key="agent2": "https://signature-agent.test"
"@signature-params": ("@authority" "signature-agent";key="agent2");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==";tag="web-bot-auth"`,
	},
	{
		name:      "string",
		agent:     `"https://signature-agent.test"`,
		input:     `sig2=("@authority" "signature-agent");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=1735693200;nonce="e8N7S2MFd/qrd6T2R3tdfAuuANngKI7LFtKYI/vowzk4lAZYadIX6wW25MwG7DCT9RUKAJ0qVkU0mEeLElW1qg==";tag="web-bot-auth"`,
		signature: `sig2=:jdq0SqOwHdyHr9+r5jw3iYZH6aNGKijYp/EstF4RQTQdi5N5YYKrD+mCT1HA1nZDsi6nJKuHxUi/5Syp3rLWBA==:`,
		base: `"@authority": example.com
"signature-agent": "https://signature-agent.test"
"@signature-params": ("@authority" "signature-agent");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=1735693200;nonce="e8N7S2MFd/qrd6T2R3tdfAuuANngKI7LFtKYI/vowzk4lAZYadIX6wW25MwG7DCT9RUKAJ0qVkU0mEeLElW1qg==";tag="web-bot-auth"`,
	},
}

func TestDraftVectors(t *testing.T) {
	priv, pub := rfcKey(t)
	if got := Thumbprint(pub); got != "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U" {
		t.Fatalf("thumbprint of B.1.4 %s, want the drafts' poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U", got)
	}
	for _, v := range draftVectors {
		t.Run(v.name, func(t *testing.T) {
			h := http.Header{}
			h.Set("Signature-Agent", v.agent)
			h.Set("Signature-Input", v.input)
			h.Set("Signature", v.signature)
			m := &Message{Method: "POST", Scheme: "https", Authority: "example.com", Target: "/foo?param=Value&Pet=dog", Header: h}
			sigs, err := ParseSignatures(h, DefaultLimits)
			if err != nil || len(sigs) != 1 {
				t.Fatalf("ParseSignatures: %v, %d", err, len(sigs))
			}
			s := sigs[0]
			if s.Tag != Tag || s.Alg != Alg || s.Nonce == "" || !s.HasExpires {
				t.Errorf("parameters %+v", s)
			}
			base, err := Base(m, s.Input)
			if err != nil {
				t.Fatal(err)
			}
			if base != v.base {
				t.Fatalf("base:\n%s\nwant:\n%s", base, v.base)
			}
			if !VerifyEd25519(pub, base, s.Value) {
				t.Error("does not verify")
			}
			sig, _ := priv.Sign(nil, []byte(base), crypto.Hash(0))
			if !strings.Contains(v.signature, base64.StdEncoding.EncodeToString(sig)) {
				t.Error("our signature differs from the draft's")
			}
			agent, err := s.Agent(m)
			if err != nil || agent != "https://signature-agent.test" {
				t.Errorf("Agent: %q, %v", agent, err)
			}
		})
	}
}

// TestSignerMakesDraftStringForm: a request signed here has the shape of
// the draft's String-form vector, and verifies.
func TestSignerMakesDraftStringForm(t *testing.T) {
	priv, pub := rfcKey(t)
	s, err := NewSigner(priv, "https://signature-agent.test/", 0)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	if err := s.Sign(h, "https", "Example.COM:443", mustTime(t, 1735689600)); err != nil {
		t.Fatal(err)
	}
	if got := h.Get("Signature-Agent"); got != `"https://signature-agent.test"` {
		t.Errorf("Signature-Agent %s", got)
	}
	in := h.Get("Signature-Input")
	prefix := `sig1=("@authority" "signature-agent");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=1735689660;nonce="`
	if !strings.HasPrefix(in, prefix) || !strings.HasSuffix(in, `";tag="web-bot-auth"`) {
		t.Errorf("Signature-Input %s", in)
	}
	sigs, err := ParseSignatures(h, DefaultLimits)
	if err != nil || len(sigs) != 1 {
		t.Fatal(err)
	}
	nonce, err := base64.StdEncoding.DecodeString(sigs[0].Nonce)
	if err != nil || len(nonce) != NonceSize {
		t.Errorf("nonce %q: %d bytes, %v", sigs[0].Nonce, len(nonce), err)
	}
	m := &Message{Method: "GET", Scheme: "https", Authority: "example.com", Target: "/", Header: h}
	base, err := Base(m, sigs[0].Input)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(base, "\"@authority\": example.com\n\"signature-agent\": \"https://signature-agent.test\"\n") {
		t.Errorf("base %s", base)
	}
	if !VerifyEd25519(pub, base, sigs[0].Value) {
		t.Error("does not verify")
	}
	h2 := http.Header{}
	s.Sign(h2, "https", "example.com", mustTime(t, 1735689600))
	if h2.Get("Signature-Input") == in {
		t.Error("two signatures with one nonce")
	}
}

func TestNewSignerRefuses(t *testing.T) {
	priv, _ := rfcKey(t)
	for _, agent := range []string{"http://agent.example", "https://agent.example/keys", "https://agent.example/?x", "https://u@agent.example", "agent.example", "https://", "https://agent.example#f"} {
		if _, err := NewSigner(priv, agent, 0); err == nil {
			t.Errorf("NewSigner accepted the agent %q", agent)
		}
	}
	if _, err := NewSigner(nil, "https://agent.example", 0); err == nil {
		t.Error("no key accepted")
	}
	if _, err := NewSigner(priv, "https://agent.example", 10); err == nil {
		t.Error("a validity under a second accepted")
	}
	if o, err := AgentOrigin("https://Agent.Example:443/"); err != nil || o != "https://agent.example" {
		t.Errorf("AgentOrigin: %q, %v", o, err)
	}
}

func TestKeysRoundTrip(t *testing.T) {
	priv, pub := rfcKey(t)
	pemKey, err := MarshalPrivateKeyPEM(priv)
	if err != nil {
		t.Fatal(err)
	}
	if string(pemKey) != rfcEd25519Private {
		t.Errorf("PEM:\n%s\nwant B.1.4's:\n%s", pemKey, rfcEd25519Private)
	}
	j := PrivateJWK(priv)
	// npm's web-bot-auth README gives B.1.4 as this JWK.
	if j.D != "n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU" || j.X != "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs" {
		t.Errorf("JWK %+v", j)
	}
	for _, in := range []string{
		`{"kty":"OKP","crv":"Ed25519","d":"n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}`,
		rfcEd25519Private,
	} {
		k, err := ParsePrivateKey([]byte(in))
		if err != nil || !k.Equal(priv) {
			t.Errorf("ParsePrivateKey: %v", err)
		}
	}
	for _, in := range []string{
		`{"kty":"OKP","crv":"Ed25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}`,
		`{"kty":"RSA"}`,
		`{"kty":"OKP","crv":"Ed25519","d":"AAAA"}`,
		`{"kty":"OKP","crv":"Ed25519","d":"n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU","x":"AAAAj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}`,
		rfcEd25519Public,
		"garbage",
	} {
		if _, err := ParsePrivateKey([]byte(in)); err == nil {
			t.Errorf("ParsePrivateKey accepted %q", in)
		}
	}
	dir := MarshalDirectory(pub)
	keys, skipped, err := ParseDirectory(dir)
	if err != nil || skipped != 0 || !keys[Thumbprint(pub)].Equal(pub) {
		t.Errorf("ParseDirectory(%s): %v %d %v", dir, keys, skipped, err)
	}
	if !strings.Contains(string(dir), `"kid": "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"`) {
		t.Errorf("directory %s", dir)
	}
}

func TestParseDirectoryRefuses(t *testing.T) {
	many := `{"keys":[` + strings.Repeat(`{"kty":"OKP","crv":"Ed25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"},`, MaxDirectoryKeys) + `{}]}`
	for name, in := range map[string]string{
		"html":       "<!doctype html><html><body>keys</body></html>",
		"no keys":    `{"foo":[]}`,
		"rsa only":   `{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"}]}`,
		"short x":    `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"AAAA"}]}`,
		"two values": `{"keys":[]} {"keys":[]}`,
		"too many":   many,
		"array":      `[]`,
	} {
		if _, _, err := ParseDirectory([]byte(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	keys, skipped, err := ParseDirectory([]byte(`{"keys":[{"kty":"RSA"},{"kty":"OKP","crv":"Ed25519","kid":"wrong","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}]}`))
	if err != nil || skipped != 1 || len(keys) != 1 || keys["poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"] == nil {
		t.Errorf("mixed directory: %v %d %v", keys, skipped, err)
	}
}

func TestBaseRefuses(t *testing.T) {
	h := http.Header{}
	h.Set("Dict", `a=1, b=(2 3)`)
	m := &Message{Method: "GET", Scheme: "https", Authority: "example.com", Target: "/p?q=1", Header: h}
	for _, in := range []string{
		`("@authority" "@authority")`,
		`("missing")`,
		`("Dict")`,
		`("@status")`,
		`("@query-param";name="q")`,
		`("@unknown")`,
		`("dict";key="c")`,
		`("dict";sf)`,
		`("dict";bs)`,
		`("@authority";req)`,
		`(authority)`,
	} {
		l := mustList(t, in)
		if b, err := Base(m, l); err == nil {
			t.Errorf("Base(%s) = %q, want an error", in, b)
		}
	}
	l := mustList(t, `("@method" "@target-uri" "@scheme" "@request-target" "@path" "@query" "dict";key="b" "dict")`)
	b, err := Base(m, l)
	if err != nil {
		t.Fatal(err)
	}
	want := `"@method": GET
"@target-uri": https://example.com/p?q=1
"@scheme": https
"@request-target": /p?q=1
"@path": /p
"@query": ?q=1
"dict";key="b": (2 3)
"dict": a=1, b=(2 3)
"@signature-params": ("@method" "@target-uri" "@scheme" "@request-target" "@path" "@query" "dict";key="b" "dict")`
	if b != want {
		t.Errorf("base:\n%s\nwant:\n%s", b, want)
	}
	h.Add("Multi", " one ")
	h.Add("Multi", "two\t")
	if v, _ := FieldValue(h, "multi"); v != "one, two" {
		t.Errorf("combined field %q", v)
	}
	for scheme, cases := range map[string][][2]string{
		"http":  {{"Example.com:80", "example.com"}, {"example.com:443", "example.com:443"}, {"[::1]:80", "[::1]"}, {"a:8080", "a:8080"}},
		"https": {{"example.com:443", "example.com"}, {"example.com:80", "example.com:80"}},
	} {
		for _, c := range cases {
			if got := Authority(scheme, c[0]); got != c[1] {
				t.Errorf("Authority(%s, %s) = %s, want %s", scheme, c[0], got, c[1])
			}
		}
	}
}

func mustList(t *testing.T, s string) InnerList {
	t.Helper()
	d, err := ParseDictionary("x="+s, DefaultLimits)
	if err != nil || d[0].List == nil {
		t.Fatalf("%s: %v", s, err)
	}
	return *d[0].List
}
