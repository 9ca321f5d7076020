package reqlog

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	w, err := Create(dir, start)
	if err != nil {
		t.Fatal(err)
	}
	if w.Run != 1 {
		t.Errorf("first run numbered %d", w.Run)
	}
	recs := []Record{
		{Start: start.Add(time.Second), TTFB: 3 * time.Millisecond, Duration: 5 * time.Millisecond, Kind: KindRobots,
			Status: 200, Type: TypeOther, Wire: 300, Body: 120, Host: "http://a.test", URL: "http://a.test/robots.txt"},
		{Start: start.Add(2 * time.Second), TTFB: time.Millisecond, Duration: 2 * time.Millisecond, Kind: KindPage, Purpose: "refresh",
			Status: 304, Wire: 180, Saved: 5000, Conditional: true, Host: "http://a.test", URL: "http://a.test/p?q=1"},
		{Start: start.Add(3 * time.Second), Duration: time.Second, Kind: KindPage, Purpose: "discovery",
			Error: "dns", Host: "http://b.test", URL: "http://b.test/\tx"},
		{Start: start.Add(4 * time.Second), Duration: time.Second, Kind: KindSitemap, Purpose: "discovery", Status: 200,
			Type: TypeOther, Wire: 10, Body: 100, Compressed: true, Host: "http://b.test", URL: "http://b.test/s.xml"},
		{Start: start.Add(5 * time.Second), TTFB: time.Millisecond, Duration: 3 * time.Millisecond, Kind: KindPage, Purpose: "refresh",
			Status: 200, Type: TypeHTML, Wire: 50, Body: 400, Conditional: true, Compressed: true, Retried: true,
			Host: "http://a.test", URL: "http://a.test/again"},
		{Start: start.Add(6 * time.Second), Duration: time.Second, Kind: KindPage, Purpose: "discovery",
			Error: "reset", Retried: true, Host: "http://a.test", URL: "http://a.test/dropped"},
	}
	for i := range recs {
		w.Request(&recs[i])
	}
	w.CrawlDelay("http://a.test", 10*time.Second)
	w.Queued("http://b.test", 52000)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w2, err := Create(dir, start)
	if err != nil {
		t.Fatal(err)
	}
	w2.Close()
	if runs, _ := Runs(dir); !cmp.Equal(runs, []int{1, 2}) {
		t.Errorf("runs %v", runs)
	}

	f, err := os.Open(Path(dir, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []Record
	var delays, queued []string
	var run int
	err = Read(f, Visitor{
		Header:     func(r int, s time.Time) error { run = r; return nil },
		Request:    func(r *Record) error { got = append(got, *r); return nil },
		CrawlDelay: func(h string, d time.Duration) error { delays = append(delays, h+" "+d.String()); return nil },
		Queued:     func(h string, n int) error { queued = append(queued, h+" "+time.Duration(n).String()); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	recs[2].URL = "http://b.test/ x" // a tab cannot split the line
	if run != 1 || !cmp.Equal(got, recs) {
		t.Errorf("run %d, read back %s", run, cmp.Diff(recs, got))
	}
	if !cmp.Equal(delays, []string{"http://a.test 10s"}) || !cmp.Equal(queued, []string{"http://b.test 52µs"}) {
		t.Errorf("delays %v, queued %v", delays, queued)
	}
}

func TestReadDamage(t *testing.T) {
	head := "#\t" + Format + "\t1\t2026-12-01T10:00:00Z\n"
	good := "R\t1\t2\t3\tpage\tdiscovery\t200\t-\thtml\t10\t20\t0\t-\thttp://a.test\thttp://a.test/\n"
	for _, c := range []struct{ name, log, want string }{
		{"partial last line", head + good + "R\t1\t2", ""},
		{"other format", "#\tgentlecrawl-requests/9\t1\t2026-12-01T10:00:00Z\n", "not a request log of this format"},
		{"few fields", head + "R\t1\t2\n", "15 fields"},
		{"many fields", head + strings.TrimSuffix(good, "\n") + "\textra\n", "15 fields"},
		{"negative", head + strings.Replace(good, "\t10\t", "\t-10\t", 1), "field 10 is not a number"},
		{"huge number", head + strings.Replace(good, "\t10\t", "\t1234567890123456789\t", 1), "field 10 is not a number"},
		{"unknown type", head + "X\ta\n", "unknown record type"},
		{"long line", head + "R\t" + strings.Repeat("x", MaxLine) + "\n", "longer than"},
		{"bad host line", head + "D\thttp://a.test\tsoon\n", "not a number"},
	} {
		n := 0
		err := Read(strings.NewReader(c.log), Visitor{Request: func(*Record) error { n++; return nil }})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
		if c.want == "" && n != 1 {
			t.Errorf("%s: %d records", c.name, n)
		}
	}
}

func TestFileType(t *testing.T) {
	for ct, want := range map[string]string{
		"text/html; charset=utf-8": TypeHTML, "application/xhtml+xml": TypeHTML, "image/png": TypeImage,
		"text/css": TypeCSS, "text/javascript": TypeJS, "application/javascript": TypeJS, "application/pdf": TypePDF,
		"application/xml": TypeOther, "": TypeOther, "TEXT/HTML;;;": TypeHTML,
	} {
		if got := FileType(ct); got != want {
			t.Errorf("FileType(%q) = %q, want %q", ct, got, want)
		}
	}
}

// The flags field: c, z and r in that order, "-" for none; a letter this
// reader does not know is ignored.
func TestFlags(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []Record{
		{Kind: KindPage, Status: 200, Conditional: true, Compressed: true, Retried: true, Host: "h", URL: "u1"},
		{Kind: KindPage, Retried: true, Error: "reset", Host: "h", URL: "u2"},
		{Kind: KindPage, Status: 200, Host: "h", URL: "u3"},
	} {
		w.Request(&r)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(Path(dir, 1))
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		flags = append(flags, strings.Split(line, "\t")[12])
	}
	if !cmp.Equal(flags, []string{"czr", "r", "-"}) {
		t.Errorf("flags %q, want czr, r, -", flags)
	}

	log := "#\t" + Format + "\t1\t2026-12-01T10:00:00Z\n" +
		"R\t1\t2\t3\tpage\tdiscovery\t200\t-\thtml\t10\t20\t0\trxz\thttp://a.test\thttp://a.test/\n"
	var got Record
	if err := Read(strings.NewReader(log), Visitor{Request: func(r *Record) error { got = *r; return nil }}); err != nil {
		t.Fatal(err)
	}
	if !got.Retried || !got.Compressed || got.Conditional {
		t.Errorf("flags rxz read as %+v; want Retried and Compressed", got)
	}
}
