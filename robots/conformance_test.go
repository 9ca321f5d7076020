package robots

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
)

// googleCase is one allowance check of Google's robots_test.cc.
type googleCase struct {
	Name           string `json:"name"`
	Robots         string `json:"robots"`
	Agent          string `json:"agent"`
	URL            string `json:"url"`
	Allowed        bool   `json:"allowed"`
	GoogleSpecific bool   `json:"google_specific"`
	SourceLine     int    `json:"source_line"`
}

// departures lists the cases of robots_test.cc where Google's parser and
// RFC 9309 disagree. The RFC wins; the value is the answer it gives and why.
var departures = map[int]struct {
	allowed bool
	reason  string
}{
	// ID_Encoding: "Allow: /foo/bar/ツ" is matched as /foo/bar/%E3%83%84.
	// Google compares the raw URL /foo/bar/ツ byte for byte against that
	// and finds no match; we percent-encode the URL's non-ASCII bytes
	// first, since a URL sent on the wire has them encoded (RFC 9309
	// §2.2.2: "octets in the URI and robots.txt paths outside the range of
	// the US-ASCII coded character set ... MUST be percent-encoded ... prior
	// to comparison").
	419: {true, "RFC 9309 §2.2.2: non-ASCII URL bytes are percent-encoded before matching"},
	430: {true, "RFC 9309 §2.2.2: non-ASCII URL bytes are percent-encoded before matching"},
	// ID_Encoding: "Allow: /foo/bar/%62%61%7A" encodes the unreserved
	// characters "baz"; RFC 9309 §2.2.2 compares pattern and path after
	// decoding them (RFC 3986 §6.2.2.2), so /foo/bar/baz matches. Google
	// compares the escapes literally.
	441: {true, "RFC 9309 §2.2.2: percent-encoded unreserved characters are decoded before matching"},
}

func TestGoogleConformance(t *testing.T) {
	data, err := os.ReadFile("testdata/google_robots_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []googleCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) != 145 {
		t.Errorf("read %d cases, want 145", len(cases))
	}
	pass, departed := 0, 0
	for _, c := range cases {
		want := c.Allowed
		if d, ok := departures[c.SourceLine]; ok {
			if d.allowed == c.Allowed {
				t.Errorf("line %d: departure recorded but Google agrees with the RFC", c.SourceLine)
			}
			want = d.allowed
			departed++
		}
		got := AllowedURL([]byte(c.Robots), c.Agent, c.URL)
		if got != want {
			t.Errorf("%s (robots_test.cc:%d): agent %q url %.80q: allowed = %v, want %v\nrobots.txt:\n%.300s",
				c.Name, c.SourceLine, c.Agent, c.URL, got, want, c.Robots)
			continue
		}
		pass++
	}
	t.Logf("%d of %d cases pass (%d of them RFC 9309 departures from Google)", pass, len(cases), departed)
}

// otherCase is a check of Google's tests other than an allowance check.
type otherCase struct {
	Name       string          `json:"name"`
	SourceFile string          `json:"source_file"`
	SourceLine int             `json:"source_line"`
	Expression string          `json:"expression"`
	Input      *string         `json:"input"`
	Robots     *string         `json:"robots"`
	RobotsHex  string          `json:"robots_hex"`
	Expected   json.RawMessage `json:"expected"`
}

func loadOther(t *testing.T) []otherCase {
	t.Helper()
	data, err := os.ReadFile("testdata/google_other_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []otherCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

func (c otherCase) body(t *testing.T) []byte {
	if c.RobotsHex != "" {
		b, err := hex.DecodeString(c.RobotsHex)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if c.Robots != nil {
		return []byte(*c.Robots)
	}
	return nil
}

// TestGoogleOther runs the checks of google_other_cases.json that apply to
// this package: valid product tokens, path extraction, pattern escaping,
// and the valid/unknown directive counts of robots_test.cc (the byte order
// mark and line ending cases). The line-by-line metadata of Google's
// reporting_robots_test.cc describes Google's reporting API, which this
// package does not have.
func TestGoogleOther(t *testing.T) {
	ran := 0
	for _, c := range loadOther(t) {
		input := ""
		if c.Input != nil {
			input = *c.Input
		}
		switch c.Name {
		case "ID_VerifyValidUserAgentsToObey", "GoogleOnly_AcceptUserAgentUpToFirstSpace":
			var want bool
			mustUnmarshal(t, c.Expected, &want)
			if got := ValidAgent(input); got != want {
				t.Errorf("line %d: ValidAgent(%q) = %v, want %v", c.SourceLine, input, got, want)
			}
		case "TestGetPathParamsQuery":
			var want string
			mustUnmarshal(t, c.Expected, &want)
			if got := PathQuery(input); got != want {
				t.Errorf("line %d: PathQuery(%q) = %q, want %q", c.SourceLine, input, got, want)
			}
		case "TestMaybeEscapePattern":
			var want string
			mustUnmarshal(t, c.Expected, &want)
			if got := normalize(nil, input); got != want {
				t.Errorf("line %d: normalize(%q) = %q, want %q", c.SourceLine, input, got, want)
			}
		case "ID_NonStandardLineExample_Sitemap":
			var want string
			mustUnmarshal(t, c.Expected, &want)
			if got := Parse(c.body(t)).Sitemaps(); len(got) != 1 || got[0] != want {
				t.Errorf("line %d: Sitemaps() = %q, want [%q]", c.SourceLine, got, want)
			}
		case "ID_LinesNumbersAreCountedCorrectly", "ID_UTF8ByteOrderMarkIsSkipped":
			var want int
			mustUnmarshal(t, c.Expected, &want)
			valid, unknown, last := countDirectives(c.body(t))
			var got int
			switch c.Expression {
			case "report.valid_directives()":
				got = valid
			case "report.unknown_directives()":
				got = unknown
			case "report.last_line_seen()":
				got = last
			default:
				t.Fatalf("line %d: unexpected expression %q", c.SourceLine, c.Expression)
			}
			if got != want {
				t.Errorf("line %d: %s = %d, want %d", c.SourceLine, c.Expression, got, want)
			}
		default:
			continue
		}
		ran++
	}
	t.Logf("ran %d checks", ran)
}

// countDirectives parses body and counts, as Google's test handler does,
// the recognized directives, the lines with an unrecognized key, and the
// number of the last line holding a directive.
func countDirectives(body []byte) (valid, unknown, last int) {
	p := parser{report: func(line int, d directive, typo bool) {
		if d == dirUnknown {
			unknown++
		} else {
			valid++
		}
		last = line
	}}
	p.parse(body)
	return
}

func mustUnmarshal(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}
