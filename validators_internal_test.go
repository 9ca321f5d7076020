package gentlecrawl

import (
	"context"
	"fmt"
	"testing"

	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
)

func TestStripCoding(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{`"5f3a-6a1b-gzip"`, `"5f3a-6a1b"`, true},
		{`W/"5f3a-br"`, `W/"5f3a"`, true},
		{`"abc-zstd"`, `"abc"`, true},
		{`"abc"`, `"abc"`, false},
		{`"-gzip"`, `"-gzip"`, false},
		{`"abc-gzipped"`, `"abc-gzipped"`, false},
		{`abc-gzip`, `abc-gzip`, false},
		{``, ``, false},
	} {
		if got, ok := fetch.StripETagCoding(c.in); got != c.want || ok != c.ok {
			t.Errorf("fetch.StripETagCoding(%s) = %s, %v; want %s, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestValidatorBookBounded: past maxValidatorHosts origins, new ones are
// not learned (they are sent both validators), and nothing breaks.
func TestValidatorBookBounded(t *testing.T) {
	var b validatorBook
	for i := range maxValidatorHosts + 10 {
		b.observe(fmt.Sprint(i, ".test"), sendBoth, false, true, `"x-gzip"`, "")
	}
	if len(b.hosts) != maxValidatorHosts {
		t.Errorf("%d origins kept, want %d", len(b.hosts), maxValidatorHosts)
	}
	if _, _, mode := b.request(fmt.Sprint(maxValidatorHosts+5, ".test"), `"x-gzip"`, ""); mode != sendBoth {
		t.Errorf("an origin past the bound is sent %v", mode)
	}
	if e, _, mode := b.request(fmt.Sprint(3, ".test"), `"x-gzip"`, ""); mode != sendStripped || e != `"x"` {
		t.Errorf("a learned origin is sent %s (%v)", e, mode)
	}
}

// metaStore is the part of a frontier the validator book writes to.
type metaStore map[string]string

func (m metaStore) Meta(_ context.Context, name string) (string, error) { return m[name], nil }
func (m metaStore) SetMeta(_ context.Context, name, v string) error {
	m[name] = v
	return nil
}

// TestValidatorBookSaved: what an origin taught survives in the job, a
// damaged record is an error, not a silent restart.
func TestValidatorBookSaved(t *testing.T) {
	ctx := context.Background()
	var b validatorBook
	b.observe("http://apache.test", sendBoth, false, true, `"5f-6a1b-gzip"`, "Mon, 30 Nov 2026 12:00:00 GMT")
	b.lied("http://liar.test", "http://liar.test/a")
	b.lied("http://liar.test", "http://liar.test/b")
	store := metaStore{}
	if err := b.save(ctx, store); err != nil {
		t.Fatal(err)
	}
	var again validatorBook
	if err := again.load(ctx, store); err != nil {
		t.Fatal(err)
	}
	if _, _, mode := again.request("http://apache.test", `"5f-6a1b-gzip"`, ""); mode != sendStripped {
		t.Errorf("after loading, apache.test is sent in mode %v, want the stripped ETag", mode)
	}
	if !again.lying("http://liar.test") {
		t.Error("after loading, liar.test is not known to lie")
	}
	if fmt.Sprint(again.report()) != fmt.Sprint(b.report()) {
		t.Errorf("report after loading %v, before %v", again.report(), b.report())
	}
	for _, bad := range []string{`{"x":`, `{"http://a.test":{"mode":9}}`} {
		if err := new(validatorBook).load(ctx, metaStore{metaValidators: bad}); err == nil {
			t.Errorf("record %s loaded", bad)
		}
	}
}
