package gentlecrawl

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/gentlecrawl/gentlecrawl"

// layering lists, for each package of the module, the packages of the module
// it may import (docs/architecture.md, "Packages"). Data flows one way:
// nothing below the root imports the root, and no package imports one
// beside it unless listed here.
var layering = map[string][]string{
	"cmd/gentlecrawl":   {"internal/cli", "internal/gctune", "internal/rawio"},
	"cmd/simweb":        {"internal/simweb"},
	"internal/cli":      {"", "internal/hook", "internal/hostload", "internal/simweb", "robots", "internal/fetch", "internal/report", "internal/export", "internal/check", "site", "internal/httpsig"},
	"":                  {"robots", "urlnorm", "extract", "warc", "internal/fetch", "internal/hostload", "internal/frontier", "internal/frontier/postgres", "internal/urlspace", "internal/simhash", "internal/revisit", "internal/reqlog", "internal/metrics", "internal/hook"},
	"robots":            {},
	"urlnorm":           {},
	"extract":           {"urlnorm"},
	"warc":              {},
	"site":              {"internal/httpsig"},
	"internal/fetch":    {"internal/inflate", "internal/rawio", "internal/httpsig"},
	"internal/hostload": {"robots"},
	"internal/frontier": {"urlnorm", "internal/hostload"},
	// The conformance suite every frontier backend runs.
	"internal/frontier/frontiertest": {"internal/frontier"},
	"internal/simweb":                {},
	"internal/simhash":               {},
	"internal/inflate":               {},
	"internal/gctune":                {},
	"internal/revisit":               {},
	"internal/reqlog":                {},
	"internal/rawio":                 {},
	"internal/metrics":               {"internal/reqlog"},
	"internal/hook":                  {},
	"internal/report":                {"internal/reqlog"},
	"internal/export":                {"warc", "extract", "internal/fetch"},
	"internal/urlspace":              {"urlnorm"},
	// gentlecrawl check: robots.txt, sitemaps and links read as the crawler
	// reads them, its margin on the gap, its session-id recognition.
	"internal/check": {"robots", "extract", "urlnorm", "internal/fetch", "internal/hostload", "internal/urlspace"},
	// The shared frontier, in PostgreSQL.
	"internal/frontier/postgres": {"internal/frontier"},
	// A real nginx for tests and benchmarks; see testOnly.
	"internal/nginxtest": {"internal/simweb"},
	// A real Apache httpd for tests (mod_deflate's ETags); see testOnly.
	"internal/apachetest": {},
	// Reads back the WARC files tests write, with three readers; see testOnly.
	"internal/warccheck": {"warc"},
	// A throwaway PostgreSQL for tests and benchmarks; see testOnly.
	"internal/pgtest": {},
	// Generated sites built like real ones (a faceted shop, news, a forum,
	// a wiki), drawn per seed, for the URL-space tests; see testOnly.
	"internal/gensite": {},
	// Real WordPress and DokuWiki from Debian, for the URL-space tests;
	// see testOnly.
	"internal/cmstest": {"internal/apachetest"},
	// A real HTTP proxy (Debian's tinyproxy) for tests; see testOnly.
	"internal/proxytest": {},
	// HTTP Message Signatures in the Web Bot Auth profile, shared by the
	// signing client (internal/fetch) and the verifying server (site).
	"internal/httpsig": {},
	// npm's web-bot-auth run with node, for the signed requests' tests;
	// see testOnly.
	"internal/botauthtest": {},
	// What the end-to-end tests share: their TestMain, crawls read back,
	// crawler processes; see testOnly.
	"internal/crawltest": {"", "internal/cli", "internal/hook", "internal/fetch", "internal/simweb", "internal/warccheck", "warc"},
	// End-to-end tests in packages of their own, which go test runs side
	// by side: a doc.go and tests, no code; see testOnly.
	"e2e/crash":      {},
	"e2e/servers":    {},
	"e2e/urlspace":   {},
	"e2e/cms":        {},
	"e2e/continuous": {},
	// An example server built on site, for site owners (a program, not a
	// package: nothing imports it).
	"examples/siteserver": {"site"},
}

// testOnly packages are for tests and benchmarks: _test.go files, the
// bench module and other testOnly packages may import them, the code of a
// package never (whatever layering says).
var testOnly = map[string]bool{
	"internal/nginxtest":   true,
	"internal/apachetest":  true,
	"internal/warccheck":   true,
	"internal/pgtest":      true,
	"internal/gensite":     true,
	"internal/cmstest":     true,
	"internal/proxytest":   true,
	"internal/botauthtest": true,
	"internal/crawltest":   true,
	"e2e/crash":            true,
	"e2e/servers":          true,
	"e2e/urlspace":         true,
	"e2e/cms":              true,
	"e2e/continuous":       true,
}

// pure packages parse and decide; they never touch the network.
var pure = map[string][]string{
	"robots":            {"net/http", "net"},
	"urlnorm":           {"net/http"},
	"extract":           {"net/http", "net"},
	"internal/hostload": {"net/http"},
}

func TestImportLayering(t *testing.T) {
	found := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bench") {
			return filepath.SkipDir
		}
		pkg, err := build.Default.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files here
		}
		rel := filepath.ToSlash(path)
		if rel == "." {
			rel = ""
		}
		found[rel] = true
		allowed, ok := layering[rel]
		if !ok {
			t.Errorf("package %q is not in the layering table of deps_test.go (and docs/architecture.md): say what it may import", rel)
			return nil
		}
		for _, imp := range pkg.Imports {
			for _, bad := range pure[rel] {
				if imp == bad {
					t.Errorf("%s imports %s: it must stay free of I/O", rel, imp)
				}
			}
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			target := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			if testOnly[target] && !testOnly[rel] {
				t.Errorf("%s imports %s, which only tests and benchmarks may import", displayName(rel), target)
				continue
			}
			okImport := false
			for _, a := range allowed {
				if a == target {
					okImport = true
				}
			}
			if !okImport {
				name := target
				if name == "" {
					name = "the root package"
				}
				t.Errorf("%s imports %s, which breaks the layering (allowed: %q)", displayName(rel), name, allowed)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"", "robots", "extract", "internal/frontier"} {
		if !found[p] {
			t.Errorf("package %q not found: is the test walking the module?", p)
		}
	}
}

func displayName(rel string) string {
	if rel == "" {
		return "the root package"
	}
	return rel
}

// rawCallers are the only files that may make system calls the scheduler
// is not told of: package rawio's reads and writes of non-blocking TCP
// sockets, and the fetcher's peek at an idle one. Never a file: a write
// to a file can block, and a raw call would hold its P meanwhile.
var rawCallers = map[string]bool{
	"internal/rawio/sys_linux.go":  true,
	"internal/fetch/peek_linux.go": true,
}

// TestNoRawCallsElsewhere: no other file of the module makes a raw system
// call (syscall.RawSyscall*, unix.RawSyscall*) or writes a descriptor by
// hand.
func TestNoRawCallsElsewhere(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		src := string(b)
		for _, call := range []string{"RawSyscall", "SYS_WRITE", "SYS_PWRITE", "SYS_WRITEV"} {
			if strings.Contains(src, call) && !rawCallers[filepath.ToSlash(path)] {
				t.Errorf("%s makes a raw system call (%s); only %v may, on sockets", path, call, rawCallers)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestArchitectureTable keeps the package table of docs/architecture.md
// ("Packages") the same as layering and testOnly: the same packages, each
// with the same packages it may import, and "(tests only)" on exactly
// the testOnly ones.
func TestArchitectureTable(t *testing.T) {
	b, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Packages\n")
	if !ok {
		t.Fatal(`docs/architecture.md has no "## Packages" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	// docName reads a cell's first name in backquotes; the root package
	// is written `gentlecrawl`.
	docName := func(cell string) (string, bool) {
		_, rest, ok := strings.Cut(cell, "`")
		name, _, ok2 := strings.Cut(rest, "`")
		if !ok || !ok2 {
			return "", false
		}
		if name == "gentlecrawl" {
			name = ""
		}
		return name, true
	}
	doc := map[string][]string{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 5 {
			continue
		}
		pkg, ok := docName(cells[1])
		if !ok {
			continue // the header
		}
		if _, dup := doc[pkg]; dup {
			t.Errorf("docs/architecture.md lists %s twice", displayName(pkg))
		}
		imports := []string{}
		for _, c := range strings.Split(cells[3], ",") {
			if name, ok := docName(c); ok {
				imports = append(imports, name)
			}
		}
		doc[pkg] = imports
		if tests := strings.Contains(cells[2], "(tests only)"); tests != testOnly[pkg] {
			t.Errorf("docs/architecture.md: %s is marked tests only: %v; testOnly says %v", displayName(pkg), tests, testOnly[pkg])
		}
	}
	sorted := func(s []string) string {
		s = slices.Clone(s)
		slices.Sort(s)
		return strings.Join(s, ", ")
	}
	for pkg, allowed := range layering {
		got, ok := doc[pkg]
		switch {
		case !ok:
			t.Errorf("docs/architecture.md does not list %s", displayName(pkg))
		case sorted(got) != sorted(allowed):
			t.Errorf("docs/architecture.md: %s may import [%s]; deps_test.go says [%s]", displayName(pkg), sorted(got), sorted(allowed))
		}
	}
	for pkg := range doc {
		if _, ok := layering[pkg]; !ok {
			t.Errorf("docs/architecture.md lists %s, which is not in layering", displayName(pkg))
		}
	}
}
