package report

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/reqlog"
)

// chromium returns Debian's Chromium, or skips the test without it (but
// not in CI, where scripts/test installs it).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is needed in CI (scripts/test installs it: apt-get install -y chromium)")
	}
	t.Skip("chromium is not installed (apt-get install -y chromium)")
	return ""
}

// render loads a page in headless Chromium and returns its screenshot and
// the console messages Chromium logged.
func render(t *testing.T, bin, page string) (image.Image, []string) {
	t.Helper()
	dir := t.TempDir()
	shot := filepath.Join(dir, "shot.png")
	cmd := exec.CommandContext(t.Context(), bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--enable-logging=stderr", "--v=0",
		"--window-size=1000,2600", "--screenshot="+shot, "file://"+page)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chromium: %v\n%s", err, stderr.String())
		}
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("chromium did not finish in 2 minutes\n%s", stderr.String())
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, stderr.String())
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	var console []string
	re := regexp.MustCompile(`:CONSOLE[:(]`)
	for _, line := range strings.Split(stderr.String(), "\n") {
		if re.MatchString(line) {
			console = append(console, line)
		}
	}
	return img, console
}

// inked returns the share of pixels that are not white, and how many
// distinct colours the image has (coarsely).
func inked(img image.Image) (float64, int) {
	b := img.Bounds()
	ink, all := 0, 0
	colours := map[[3]uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			all++
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				ink++
			}
			colours[[3]uint32{r >> 12, g >> 12, bl >> 12}] = true
		}
	}
	return float64(ink) / float64(all), len(colours)
}

// TestHTMLInChromium renders the HTML report of a two-run job in headless
// Chromium: the page is drawn (not blank, in colour: the charts) and the
// console shows no error — not even a blocked load, which the page's
// Content-Security-Policy would report. A page that loads from the
// network is rendered first, to prove the console is read.
func TestHTMLInChromium(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()

	// The control: an image from elsewhere, blocked by the same policy.
	bad := filepath.Join(dir, "bad.html")
	os.WriteFile(bad, []byte(`<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="default-src 'none'"><p>x</p><img src="http://127.0.0.1:9/x.png">`), 0o644)
	if _, console := render(t, bin, bad); len(console) == 0 {
		t.Fatal("a blocked load left no console message: the console is not being read")
	}

	job := filepath.Join(dir, "job")
	t0 := time.Now().Add(-2 * time.Hour)
	var recs []reqlog.Record
	for i := range 400 {
		st, typ := 200, reqlog.TypeHTML
		switch i % 10 {
		case 3:
			st = 304
		case 7:
			typ = reqlog.TypeImage
		case 9:
			st = 503
		}
		recs = append(recs, reqlog.Record{Start: t0.Add(time.Duration(i) * 9 * time.Second), TTFB: time.Duration(i%17+1) * time.Millisecond,
			Duration: time.Duration(i%23+2) * time.Millisecond, Kind: reqlog.KindPage, Purpose: "discovery", Status: st, Type: typ,
			Wire: int64(1000 + i), Body: int64(3000 + i), Compressed: true, Host: []string{"a.test", "b.test", "c.test"}[i%3], URL: "http://a.test/x"})
	}
	recs = append(recs, reqlog.Record{Start: t0, Duration: time.Second, Kind: reqlog.KindRobots, Error: "dns", Host: "d.test", URL: "http://d.test/robots.txt"})
	os.MkdirAll(job, 0o755)
	writeRun(t, job, t0, recs, map[string]time.Duration{"a.test": 10 * time.Second}, map[string]int{"a.test": 5000},
		`"stopped":"finished","slowed":{"a.test":"503 answers <b>&amp; more</b>"}`)
	r, err := Read(job, Options{})
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(buf.Bytes(), []byte("<b>&amp; more</b>")) {
		t.Error("text from the job is not escaped")
	}
	for _, banned := range []string{"<script", "http://", "https://"} {
		for _, line := range strings.Split(buf.String(), "\n") {
			if strings.Contains(line, banned) && !strings.Contains(line, `xmlns="http://www.w3.org/2000/svg"`) && !strings.Contains(line, "http://a.test") && !strings.Contains(line, "http://d.test") {
				t.Errorf("the page has %q: %.200s", banned, line)
			}
		}
	}
	os.WriteFile(page, buf.Bytes(), 0o644)
	img, console := render(t, bin, page)
	if len(console) > 0 {
		t.Errorf("the console shows:\n%s", strings.Join(console, "\n"))
	}
	share, colours := inked(img)
	t.Logf("screenshot %v: %.1f %% inked, %d colours", img.Bounds().Size(), 100*share, colours)
	if share < 0.02 || colours < 8 {
		t.Errorf("the screenshot looks blank: %.2f %% of pixels inked, %d colours", 100*share, colours)
	}
}
