package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportRefusals: what report cannot run on is refused with one line
// and exit status 2, and writes no HTML file.
func TestReportRefusals(t *testing.T) {
	old := t.TempDir()
	os.WriteFile(filepath.Join(old, "runs.jsonl"), []byte(`{"requests":3}`+"\n"), 0o644)
	html := filepath.Join(t.TempDir(), "r.html")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no job", []string{"report"}, "--job DIR is required"},
		{"argument", []string{"report", "--job", old, "extra"}, "unexpected argument"},
		{"missing", []string{"report", "--job", filepath.Join(old, "none")}, "no such file"},
		{"empty", []string{"report", "--job", t.TempDir()}, "not a crawl job"},
		{"old job", []string{"report", "--job", old, "--html", html}, "no request log"},
		{"run 0-", []string{"report", "--job", old, "--run", "-1"}, "numbered from 1"},
		{"hosts", []string{"report", "--job", old, "--hosts", "-5"}, "--hosts -5"},
	} {
		code, _, stderr := run(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q; want 2 and one line with %q", c.name, code, stderr, c.want)
		}
	}
	if _, err := os.Stat(html); !os.IsNotExist(err) {
		t.Errorf("an HTML file was written for a refused report: %v", err)
	}
}
