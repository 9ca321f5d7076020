package extract

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports keeps the package pure: no net/http anywhere in its
// dependencies, and no package of the project but urlnorm
// (docs/architecture.md, "Packages").
func TestImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	const module = "github.com/gentlecrawl/gentlecrawl/"
	for _, p := range strings.Fields(string(out)) {
		switch {
		case p == "net/http":
			t.Errorf("extract depends on net/http")
		case strings.HasPrefix(p, module) && p != module+"urlnorm" && p != module+"extract":
			t.Errorf("extract depends on %s", p)
		}
	}
}
