package site

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The server's clock in TestConditionalPrecedence.
var (
	testNow = time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC)
	testLM  = time.Date(2025, 3, 1, 12, 0, 0, 700_000_000, time.UTC) // sent as 12:00:00
)

func TestConditionalPrecedence(t *testing.T) {
	strong := Validators{ETag: "v1", LastModified: testLM}
	weak := Validators{ETag: "v1", Weak: true, LastModified: testLM}
	onlyTag := Validators{ETag: "v1"}
	onlyDate := Validators{LastModified: testLM}
	date := func(t time.Time) string { return t.UTC().Format(http.TimeFormat) }
	lm := testLM.Truncate(time.Second)

	tests := []struct {
		name   string
		method string
		header []string // name, value, name, value…
		v      Validators
		want   int // 200: Conditional left the answer to the handler
	}{
		{"no preconditions", "GET", nil, strong, 200},

		// If-None-Match, weak comparison for GET and HEAD.
		{"INM same tag", "GET", []string{"If-None-Match", `"v1"`}, strong, 304},
		{"INM weak tag, strong current", "GET", []string{"If-None-Match", `W/"v1"`}, strong, 304},
		{"INM strong tag, weak current", "GET", []string{"If-None-Match", `"v1"`}, weak, 304},
		{"INM both weak", "GET", []string{"If-None-Match", `W/"v1"`}, weak, 304},
		{"INM other tag", "GET", []string{"If-None-Match", `"v2"`}, strong, 200},
		{"INM tag differs in case", "GET", []string{"If-None-Match", `"V1"`}, strong, 200},
		{"INM list", "GET", []string{"If-None-Match", `"a", "v1"`}, strong, 304},
		{"INM list with spaces and empty elements", "GET", []string{"If-None-Match", ` , "a" ,,	W/"v1" , `}, strong, 304},
		{"INM list without match", "GET", []string{"If-None-Match", `"a", W/"b", "v1x"`}, strong, 200},
		{"INM tag with a comma inside", "GET", []string{"If-None-Match", `"a,v1"`}, Validators{ETag: "a,v1"}, 304},
		{"INM over two lines", "GET", []string{"If-None-Match", `"a"`, "If-None-Match", `"v1"`}, strong, 304},
		{"INM star", "GET", []string{"If-None-Match", "*"}, strong, 304},
		{"INM star without validators", "GET", []string{"If-None-Match", "*"}, Validators{}, 304},
		{"INM tag without current tag", "GET", []string{"If-None-Match", `"v1"`}, onlyDate, 200},
		{"INM unquoted is malformed, ignored", "GET", []string{"If-None-Match", `v1`}, strong, 200},
		{"INM unterminated is malformed, ignored", "GET", []string{"If-None-Match", `"v1`}, strong, 200},
		{"INM star in a list is malformed, ignored", "GET", []string{"If-None-Match", `*, "v2"`}, strong, 200},
		{"INM empty is malformed, ignored", "GET", []string{"If-None-Match", ``}, strong, 200},
		{"malformed INM leaves IMS to decide", "GET", []string{"If-None-Match", `v1`, "If-Modified-Since", date(lm)}, strong, 304},

		// If-None-Match before If-Modified-Since.
		{"INM mismatch beats IMS match", "GET", []string{"If-None-Match", `"v2"`, "If-Modified-Since", date(lm)}, strong, 200},
		{"INM match beats IMS mismatch", "GET", []string{"If-None-Match", `"v1"`, "If-Modified-Since", date(lm.Add(-time.Hour))}, strong, 304},

		// If-Modified-Since, at the second.
		{"IMS equal", "GET", []string{"If-Modified-Since", date(lm)}, strong, 304},
		{"IMS equal, date only", "GET", []string{"If-Modified-Since", date(lm)}, onlyDate, 304},
		{"IMS later", "GET", []string{"If-Modified-Since", date(lm.Add(time.Hour))}, strong, 304},
		{"IMS a second earlier", "GET", []string{"If-Modified-Since", date(lm.Add(-time.Second))}, strong, 200},
		{"IMS RFC 850 form", "GET", []string{"If-Modified-Since", "Saturday, 01-Mar-25 12:00:00 GMT"}, strong, 304},
		{"IMS asctime form", "GET", []string{"If-Modified-Since", "Sat Mar  1 12:00:00 2025"}, strong, 304},
		{"IMS in the future is ignored", "GET", []string{"If-Modified-Since", date(testNow.Add(time.Hour))}, strong, 200},
		{"IMS invalid is ignored", "GET", []string{"If-Modified-Since", "yesterday"}, strong, 200},
		{"IMS twice is ignored", "GET", []string{"If-Modified-Since", date(lm), "If-Modified-Since", date(lm)}, strong, 200},
		{"IMS without a current date", "GET", []string{"If-Modified-Since", date(lm)}, onlyTag, 200},

		// HEAD is GET.
		{"HEAD INM", "HEAD", []string{"If-None-Match", `"v1"`}, strong, 304},
		{"HEAD IMS", "HEAD", []string{"If-Modified-Since", date(lm)}, strong, 304},
		{"HEAD INM mismatch", "HEAD", []string{"If-None-Match", `"v2"`}, strong, 200},

		// Other methods never get 304.
		{"POST INM match fails", "POST", []string{"If-None-Match", `"v1"`}, strong, 412},
		{"POST INM weak match fails", "POST", []string{"If-None-Match", `W/"v1"`}, strong, 412},
		{"PUT INM star fails", "PUT", []string{"If-None-Match", "*"}, strong, 412},
		{"DELETE INM mismatch passes", "DELETE", []string{"If-None-Match", `"v2"`}, strong, 200},
		{"POST IMS is ignored", "POST", []string{"If-Modified-Since", date(lm)}, strong, 200},

		// If-Match, strong comparison, for every method.
		{"If-Match same", "PUT", []string{"If-Match", `"v1"`}, strong, 200},
		{"If-Match other", "PUT", []string{"If-Match", `"v2"`}, strong, 412},
		{"If-Match list", "PUT", []string{"If-Match", `"a", "v1"`}, strong, 200},
		{"If-Match weak tag never matches", "PUT", []string{"If-Match", `W/"v1"`}, strong, 412},
		{"If-Match against a weak current tag", "PUT", []string{"If-Match", `"v1"`}, weak, 412},
		{"If-Match star", "PUT", []string{"If-Match", "*"}, strong, 200},
		{"If-Match star without validators", "PUT", []string{"If-Match", "*"}, Validators{}, 200},
		{"If-Match without a current tag", "PUT", []string{"If-Match", `"v1"`}, onlyDate, 412},
		{"If-Match malformed fails", "PUT", []string{"If-Match", `v1`}, strong, 412},
		{"GET If-Match fails", "GET", []string{"If-Match", `"v2"`}, strong, 412},
		{"GET If-Match passes, INM decides", "GET", []string{"If-Match", `"v1"`, "If-None-Match", `"v1"`}, strong, 304},
		{"If-Match before INM", "GET", []string{"If-Match", `"v2"`, "If-None-Match", `"v1"`}, strong, 412},

		// If-Unmodified-Since, only without If-Match.
		{"IUS earlier fails", "PUT", []string{"If-Unmodified-Since", date(lm.Add(-time.Second))}, strong, 412},
		{"IUS equal passes", "PUT", []string{"If-Unmodified-Since", date(lm)}, strong, 200},
		{"IUS ignored under If-Match", "PUT", []string{"If-Match", `"v1"`, "If-Unmodified-Since", date(lm.Add(-time.Hour))}, strong, 200},
		{"IUS invalid is ignored", "PUT", []string{"If-Unmodified-Since", "soon"}, strong, 200},
		{"IUS without a current date", "PUT", []string{"If-Unmodified-Since", date(lm.Add(-time.Hour))}, onlyTag, 200},
		{"GET IUS earlier fails", "GET", []string{"If-Unmodified-Since", date(lm.Add(-time.Hour))}, strong, 412},
		{"IUS passes, INM decides", "POST", []string{"If-Unmodified-Since", date(lm), "If-None-Match", `"v1"`}, strong, 412},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/page", nil)
			for i := 0; i+1 < len(tt.header); i += 2 {
				r.Header.Add(tt.header[i], tt.header[i+1])
			}
			w := httptest.NewRecorder()
			h := w.Header()
			// What a handler sets before it calls Conditional.
			h.Set("Cache-Control", "max-age=60")
			h.Set("Vary", "Accept-Encoding")
			h.Set("Expires", "Mon, 10 Mar 2025 00:01:00 GMT")
			h.Set("Content-Location", "/page.en")
			h.Set("Content-Type", "text/html; charset=utf-8")
			h.Set("Content-Language", "en")
			h.Set("Content-Encoding", "gzip")
			h.Set("Content-Length", "1234")
			done := conditional(w, r, tt.v, testNow)
			if !done {
				w.WriteHeader(200)
				w.WriteString("the page")
			}
			if w.Code != tt.want {
				t.Fatalf("status %d, want %d", w.Code, tt.want)
			}
			if done != (tt.want != 200) {
				t.Errorf("done = %v with status %d", done, w.Code)
			}
			safe := tt.method == "GET" || tt.method == "HEAD"
			switch w.Code {
			case 200:
				wantETag, wantLM := "", ""
				if safe {
					wantETag = tt.v.header()
					if !tt.v.LastModified.IsZero() {
						wantLM = date(lm)
					}
				}
				if got := h.Get("Etag"); got != wantETag {
					t.Errorf("ETag %q, want %q", got, wantETag)
				}
				if got := h.Get("Last-Modified"); got != wantLM {
					t.Errorf("Last-Modified %q, want %q", got, wantLM)
				}
			case 304:
				if w.Body.Len() != 0 {
					t.Errorf("304 with a body: %q", w.Body)
				}
				// RFC 9110 §15.4.5: what a 200 would have had.
				for _, k := range []string{"Cache-Control", "Vary", "Expires", "Content-Location"} {
					if h.Get(k) == "" {
						t.Errorf("304 without %s", k)
					}
				}
				if got, want := h.Get("Etag"), tt.v.header(); got != want {
					t.Errorf("304 ETag %q, want %q", got, want)
				}
				// Last-Modified only when there is no ETag.
				wantLM := ""
				if tt.v.header() == "" && !tt.v.LastModified.IsZero() {
					wantLM = date(lm)
				}
				if got := h.Get("Last-Modified"); got != wantLM {
					t.Errorf("304 Last-Modified %q, want %q", got, wantLM)
				}
				for _, k := range []string{"Content-Type", "Content-Length", "Content-Encoding", "Content-Language"} {
					if v := h.Get(k); v != "" {
						t.Errorf("304 with %s: %s", k, v)
					}
				}
			case 412:
				if h.Get("Etag") != "" || h.Get("Content-Encoding") != "" || h.Get("Content-Length") != "" {
					t.Errorf("412 with the 200's fields: %v", h)
				}
			}
		})
	}
}

func TestValidatorsHeader(t *testing.T) {
	for _, tt := range []struct {
		v    Validators
		want string
	}{
		{Validators{}, ""},
		{Validators{ETag: "v1"}, `"v1"`},
		{Validators{ETag: `"v1"`}, `"v1"`},
		{Validators{ETag: `W/"v1"`}, `W/"v1"`},
		{Validators{ETag: `W/v1`}, `W/"v1"`},
		{Validators{ETag: "v1", Weak: true}, `W/"v1"`},
		{Validators{ETag: `""`}, ""},
		{Validators{ETag: "a b"}, ETagOf("a b")},
		{Validators{ETag: `a"b`, Weak: true}, "W/" + ETagOf(`a"b`)},
	} {
		if got := tt.v.header(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.v, got, tt.want)
		}
	}
}

// A Last-Modified later than the server's clock is sent as the clock's
// reading, and compared as such (RFC 9110 §8.8.2.1).
func TestConditionalFutureLastModified(t *testing.T) {
	v := Validators{LastModified: testNow.Add(48 * time.Hour)}
	w := httptest.NewRecorder()
	if conditional(w, httptest.NewRequest("GET", "/", nil), v, testNow) {
		t.Fatal("answered an unconditional request")
	}
	if got, want := w.Header().Get("Last-Modified"), testNow.Format(http.TimeFormat); got != want {
		t.Errorf("Last-Modified %q, want %q", got, want)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("If-Modified-Since", testNow.Format(http.TimeFormat))
	w = httptest.NewRecorder()
	if !conditional(w, r, v, testNow) || w.Code != 304 {
		t.Errorf("If-Modified-Since of the clamped date: %d, want 304", w.Code)
	}
}

func TestParseTags(t *testing.T) {
	for _, tt := range []struct {
		in   string
		ok   bool
		tags string // joined by |
	}{
		{`"a"`, true, `"a"`},
		{`W/"a"`, true, `W/"a"`},
		{`"a",W/"b" , "c"`, true, `"a"|W/"b"|"c"`},
		{`,,"a",,`, true, `"a"`},
		{`""`, true, `""`},
		{`"a" "b"`, false, ""},
		{`w/"a"`, false, ""},
		{`"a b"`, false, ""},
		{`"a`, false, ""},
		{`a`, false, ""},
		{` `, false, ""},
		{`,`, false, ""},
	} {
		l, ok := parseTags(tt.in)
		if ok != tt.ok || strings.Join(l.tags, "|") != tt.tags {
			t.Errorf("parseTags(%q) = %q, %v; want %q, %v", tt.in, l.tags, ok, tt.tags, tt.ok)
		}
	}
}
