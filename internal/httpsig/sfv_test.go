package httpsig

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

func mustTime(t *testing.T, unix int64) time.Time {
	t.Helper()
	return time.Unix(unix, 0)
}

// Dictionaries of RFC 9651's examples and the conformance corpus's shapes:
// the input and its canonical serialization, or "" for a parse failure.
var dictionaryCases = []struct{ in, out string }{
	{`en="Applepie", da=:w4ZibGV0w6ZydGU=:`, `en="Applepie", da=:w4ZibGV0w6ZydGU=:`},
	{`a=?0, b, c; foo=bar`, `a=?0, b, c;foo=bar`},
	{`rating=1.5, feelings=(joy sadness)`, `rating=1.5, feelings=(joy sadness)`},
	{`a=(1 2), b=3, c=4;aa=bb, d=(5 6);valid`, `a=(1 2), b=3, c=4;aa=bb, d=(5 6);valid`},
	{`a=1 ,  b=2`, `a=1, b=2`},
	{"a=1,\tb=2", `a=1, b=2`},
	{`a=1, a=2`, `a=2`},
	{`a=1, b=2, a=3`, `a=3, b=2`},
	{`  a=1  `, `a=1`},
	{`a=()`, `a=()`},
	{`a=(  1   2  )`, `a=(1 2)`},
	{`a=1.50`, `a=1.5`},
	{`a=-0.0`, `a=0.0`},
	{`a=999999999999999`, `a=999999999999999`},
	{`a=123456789012.123`, `a=123456789012.123`},
	{`a=@1659578233`, `a=@1659578233`},
	{`a=%"f%c3%bc%c3%bc"`, `a=%"f%c3%bc%c3%bc"`},
	{`a="\"\\"`, `a="\"\\"`},
	{`a=*tok/en:x`, `a=*tok/en:x`},
	{`a=:YWJj:`, `a=:YWJj:`},
	{`a=:YWI:`, `a=:YWI=:`}, // padding may be left out
	{`a;p=1;p=2`, `a;p=2`},
	{``, ``},
	{`a=1,`, ""},
	{`a=1,,b=2`, ""},
	{`A=1`, ""},
	{`1a=1`, ""},
	{`a=1;`, ""},
	{`a=1 b=2`, ""},
	{`a=(1 2`, ""},
	{`a=(1,2)`, ""},
	{`a="unterminated`, ""},
	{`a="bad\x"`, ""},
	{"a=\"tab\there\"", ""},
	{`a="é"`, ""},
	{`a=1234567890123456`, ""},
	{`a=1234567890123.1`, ""},
	{`a=1.1234`, ""},
	{`a=1.`, ""},
	{`a=-`, ""},
	{`a=--1`, ""},
	{`a=?2`, ""},
	{`a=:YW*j:`, ""},
	{`a=:YWJj`, ""},
	{`a=@1.5`, ""},
	{`a=%"F%C3"`, ""},
	{`a=%"%c3"`, ""},
	{`a=%"x`, ""},
	{`a=%x`, ""},
	{`a=#`, ""},
	{`a=`, ""},
	{`a=1;P=2`, ""},
	{"a=1\t,b", `a=1, b`},
}

func TestParseDictionary(t *testing.T) {
	for _, c := range dictionaryCases {
		d, err := ParseDictionary(c.in, DefaultLimits)
		if c.out == "" && c.in != "" {
			if err == nil {
				t.Errorf("ParseDictionary(%q) = %v, want an error", c.in, d)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseDictionary(%q): %v", c.in, err)
			continue
		}
		got, err := SerializeDictionary(d)
		if err != nil || got != c.out {
			t.Errorf("ParseDictionary(%q) serializes as %q (%v), want %q", c.in, got, err, c.out)
		}
	}
}

func TestParseItem(t *testing.T) {
	for in, want := range map[string]BareItem{
		`"https://agent.example"`: "https://agent.example",
		`42`:                      int64(42),
		`-1.25`:                   Decimal(-1250),
		`tok`:                     Token("tok"),
		`?1`:                      true,
		`@-5`:                     Date(-5),
	} {
		it, err := ParseItem(in, DefaultLimits)
		if err != nil || !reflect.DeepEqual(it.Value, want) {
			t.Errorf("ParseItem(%q) = %#v, %v; want %#v", in, it.Value, err, want)
		}
	}
	for _, in := range []string{`"a" "b"`, `a=1`, `(1 2)`, ``, `"a",`} {
		if it, err := ParseItem(in, DefaultLimits); err == nil {
			t.Errorf("ParseItem(%q) = %v, want an error", in, it)
		}
	}
}

// TestLimits: every bound of Limits holds, with ErrTooLarge.
func TestLimits(t *testing.T) {
	lim := Limits{MaxLen: 100, MaxMembers: 3, MaxItems: 3, MaxParams: 3}
	for name, in := range map[string]string{
		"length":      `a="` + strings.Repeat("x", 100) + `"`,
		"members":     `a, b, c, d`,
		"items":       `a=(1 2 3 4)`,
		"params":      `a;b;c;d;e`,
		"list params": `a=();b;c;d;e`,
	} {
		_, err := ParseDictionary(in, lim)
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: %v, want ErrTooLarge", name, err)
		}
	}
	if _, err := ParseDictionary(`a, b, c, a`, lim); err != nil {
		t.Errorf("a repeated key is not a new member: %v", err)
	}
	h := http.Header{"Signature-Input": {"sig1=(" + strings.Repeat(`"a" `, 40) + ")"}, "Signature": {"sig1=:AA==:"}}
	if _, err := ParseSignatures(h, DefaultLimits); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ParseSignatures of 40 components: %v, want ErrTooLarge", err)
	}
}

func TestParseSignaturesRefuses(t *testing.T) {
	for name, h := range map[string]http.Header{
		"input alone":       {"Signature-Input": {`sig1=("@authority")`}},
		"signature alone":   {"Signature": {`sig1=:AA==:`}},
		"other label":       {"Signature-Input": {`sig1=("@authority")`}, "Signature": {`sig2=:AA==:`}},
		"not a list":        {"Signature-Input": {`sig1="@authority"`}, "Signature": {`sig1=:AA==:`}},
		"not bytes":         {"Signature-Input": {`sig1=("@authority")`}, "Signature": {`sig1="AA=="`}},
		"created string":    {"Signature-Input": {`sig1=("@authority");created="1"`}, "Signature": {`sig1=:AA==:`}},
		"keyid token":       {"Signature-Input": {`sig1=("@authority");keyid=abc`}, "Signature": {`sig1=:AA==:`}},
		"component token":   {"Signature-Input": {`sig1=(authority)`}, "Signature": {`sig1=:AA==:`}},
		"malformed":         {"Signature-Input": {`sig1=("@authority"`}, "Signature": {`sig1=:AA==:`}},
		"malformed sig":     {"Signature-Input": {`sig1=("@authority")`}, "Signature": {`sig1=:AA==`}},
		"signature is list": {"Signature-Input": {`sig1=("@authority")`}, "Signature": {`sig1=(:AA==:)`}},
	} {
		if s, err := ParseSignatures(h, DefaultLimits); err == nil {
			t.Errorf("%s: %+v, want an error", name, s)
		}
	}
	// Two field lines are one dictionary.
	h := http.Header{"Signature-Input": {`a=("@authority")`, `b=("@path")`}, "Signature": {`b=:AA==:, a=:AQ==:`}}
	s, err := ParseSignatures(h, DefaultLimits)
	if err != nil || len(s) != 2 || s[0].Label != "a" || s[1].Label != "b" || s[0].Value[0] != 1 {
		t.Errorf("two lines: %+v, %v", s, err)
	}
}

func TestAgentForms(t *testing.T) {
	list := func(s string) InnerList { return mustList(t, s) }
	for _, c := range []struct {
		name, field, covered, want string
	}{
		{"string", `"https://a.example"`, `("signature-agent")`, "https://a.example"},
		{"string slash", `"https://a.example/"`, `("signature-agent")`, "https://a.example"},
		{"dict by key", `x="https://x.example", sig1="https://a.example"`, `("signature-agent";key="x")`, "https://x.example"},
		{"dict by label", `x="https://x.example", sig1="https://a.example"`, `("signature-agent")`, "https://a.example"},
		{"dict single", `x="https://x.example"`, `("signature-agent")`, "https://x.example"},
		{"type directory", `sig1="https://a.example";type=directory`, `("signature-agent")`, "https://a.example"},
		{"not covered", `"https://a.example"`, `("@authority")`, ""},
		{"dict ambiguous", `x="https://x.example", y="https://y.example"`, `("signature-agent")`, ""},
		{"missing key", `x="https://x.example"`, `("signature-agent";key="y")`, ""},
		{"jwks_uri", `sig1="https://a.example/jwks.json";type=jwks_uri`, `("signature-agent")`, ""},
		{"http", `"http://a.example"`, `("signature-agent")`, ""},
		{"path", `"https://a.example/bot"`, `("signature-agent")`, ""},
		{"token", `sig1=a`, `("signature-agent")`, ""},
		{"integer", `1`, `("signature-agent")`, ""},
		{"garbage", `"https://a.example`, `("signature-agent")`, ""},
	} {
		h := http.Header{"Signature-Agent": {c.field}}
		s := &Signature{Label: "sig1", Input: list(c.covered)}
		got, err := s.Agent(&Message{Header: h})
		if c.want == "" {
			if err == nil {
				t.Errorf("%s: %q, want an error", c.name, got)
			}
		} else if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

// FuzzSignatureInput: any field value parses or fails without panicking,
// within its limits; what parses serializes, and that serialization parses
// back to the same serialization; signatures and bases never panic either.
func FuzzSignatureInput(f *testing.F) {
	for _, c := range dictionaryCases {
		f.Add(c.in)
	}
	for _, v := range draftVectors {
		f.Add(v.input)
	}
	f.Add(`sig1=("@authority" "signature-agent";key="sig1" "@method" "@path" "@query" "@target-uri");created=1;expires=2;keyid="k";alg="ed25519";nonce="n";tag="web-bot-auth"`)
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDictionary(s, DefaultLimits)
		if err != nil {
			return
		}
		if len(d) > DefaultLimits.MaxMembers {
			t.Fatalf("%d members", len(d))
		}
		out, err := SerializeDictionary(d)
		if err != nil {
			t.Fatalf("parsed %q, cannot serialize: %v", s, err)
		}
		d2, err := ParseDictionary(out, Limits{MaxLen: 4 * len(out), MaxMembers: 16, MaxItems: 32, MaxParams: 16})
		if err != nil {
			t.Fatalf("%q serializes as %q, which does not parse: %v", s, out, err)
		}
		out2, _ := SerializeDictionary(d2)
		if out2 != out {
			t.Fatalf("%q: %q then %q", s, out, out2)
		}
		h := http.Header{"Signature-Input": {s}, "Signature": {"sig1=:AA==:"}, "Signature-Agent": {s}}
		sigs, err := ParseSignatures(h, DefaultLimits)
		if err != nil {
			return
		}
		m := &Message{Method: "GET", Scheme: "https", Authority: "a.example", Target: "/?q", Header: h}
		for i := range sigs {
			Base(m, sigs[i].Input)
			sigs[i].Agent(m)
		}
	})
}
