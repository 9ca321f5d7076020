package check_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/check"
)

// TestSiteServer checks the example server of package site
// (examples/siteserver), built and run as its documentation says: a site
// made to answer crawlers well passes clean. Its robots.txt asks for a
// Crawl-delay of 1 s, so the check takes about 15 s.
func TestSiteServer(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build examples/siteserver")
	}
	bin := filepath.Join(t.TempDir(), "siteserver")
	build := exec.Command(goTool, "build", "-o", bin, "./examples/siteserver")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/siteserver: %v\n%s", err, out)
	}
	srv := exec.Command(bin, "-addr", "127.0.0.1:0")
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- srv.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			srv.Process.Kill()
			<-done
		}
	})
	// "siteserver: serving http://127.0.0.1:PORT/"
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("siteserver said %q: %v", line, err)
	}
	_, url, ok := strings.Cut(strings.TrimSpace(line), "serving ")
	if !ok || !strings.HasPrefix(url, "http://") {
		t.Fatalf("siteserver said %q, want its URL", line)
	}
	rep := run(t, url, func(c *check.Config) { c.Time = 40 * time.Second })
	expect(t, rep)
	for _, id := range []string{check.IDValidators, check.IDCompression, check.IDNotFound, check.IDSitemaps} {
		finding(t, rep, id)
	}
	if rep.Cut != "" {
		t.Errorf("the sample was cut: %s", rep.Cut)
	}
}
