// Package bench compares gentlecrawl with peer crawlers' libraries on the
// same inputs. It is its own module, so the peers never enter the product's
// go.mod.
package bench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gentlecrawl/gentlecrawl/robots"
	"github.com/temoto/robotstxt"
)

// robotsFiles are the robots.txt files both parsers read.
var robotsFiles = []struct {
	name string
	body []byte
}{
	{"small-1KiB", smallRobots()},
	{"literal-32KiB", literalRobots(32 << 10)},
	{"wildcard-100KiB", wildcardRobots(100 << 10)},
	{"wildcard-500KiB", wildcardRobots(500 << 10)},
}

// paths are the URLs (path and query) matched against every file.
var paths = []string{
	"/",
	"/index.html",
	"/wiki/Main_Page",
	"/wiki/Special:Search?search=robots",
	"/w/index.php?title=Talk:Go&action=edit",
	"/products/shoes/red?size=42&color=red",
	"/dir120/x/y.php",
	"/dir7/public/x/y?q=1",
	"/search?q=robots&sessionid=1234",
	"/category/250/item-~250/",
	"/static/js/app.min.js",
	"/private/reports/2024.pdf",
	"/api/v1/users/42",
	"/cart/checkout?step=2",
	"/blog/2024/05/a-long-post-title-with-words",
	"/images/a.gif",
}

const agent = "gentlecrawl"

func BenchmarkParse(b *testing.B) {
	for _, f := range robotsFiles {
		kib := float64(len(f.body)) / 1024
		b.Run(f.name+"/gentlecrawl", func(b *testing.B) {
			b.SetBytes(int64(len(f.body)))
			b.ReportAllocs()
			for b.Loop() {
				robots.Parse(f.body)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/kib, "ns/KiB")
		})
		// What a crawler pays before its first decision: Parse, the group,
		// and the group's index, built on first use.
		b.Run(f.name+"/gentlecrawl+compile", func(b *testing.B) {
			b.SetBytes(int64(len(f.body)))
			b.ReportAllocs()
			for b.Loop() {
				robots.Parse(f.body).Group(agent).Allowed("/")
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/kib, "ns/KiB")
		})
		b.Run(f.name+"/temoto", func(b *testing.B) {
			b.SetBytes(int64(len(f.body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := robotstxt.FromBytes(f.body); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/kib, "ns/KiB")
		})
	}
}

// BenchmarkMatch measures one decision for one URL, the group already
// chosen: ns/op is the time per URL.
func BenchmarkMatch(b *testing.B) {
	for _, f := range robotsFiles {
		g := robots.Parse(f.body).Group(agent)
		g.Allowed("/") // build the index outside the loop
		b.Run(f.name+"/gentlecrawl", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				g.Allowed(paths[i%len(paths)])
			}
		})
		t, err := robotstxt.FromBytes(f.body)
		if err != nil {
			b.Fatal(err)
		}
		tg := t.FindGroup(agent)
		b.Run(f.name+"/temoto", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				tg.Test(paths[i%len(paths)])
			}
		})
	}
}

// TestSameFiles checks that both libraries read the files: the benchmark
// is only fair if neither skips the work.
func TestSameFiles(t *testing.T) {
	for _, f := range robotsFiles {
		g := robots.Parse(f.body).Group(agent)
		tr, err := robotstxt.FromBytes(f.body)
		if err != nil {
			t.Fatal(err)
		}
		tg := tr.FindGroup(agent)
		disallowed, tDisallowed := 0, 0
		for _, p := range paths {
			if !g.Allowed(p) {
				disallowed++
			}
			if !tg.Test(p) {
				tDisallowed++
			}
		}
		t.Logf("%s: %d bytes; of %d paths gentlecrawl disallows %d, temoto %d", f.name, len(f.body), len(paths), disallowed, tDisallowed)
		if disallowed == 0 || tDisallowed == 0 {
			t.Errorf("%s: a library disallows nothing; the file is not being read", f.name)
		}
	}
}

// smallRobots is a typical small robots.txt: a few groups, a dozen rules.
func smallRobots() []byte {
	return []byte(`# robots.txt
User-agent: *
Disallow: /cart/
Disallow: /checkout/
Disallow: /private/
Disallow: /search
Allow: /search/help
Disallow: /*?sessionid=
Disallow: /*.gif$

User-agent: gentlecrawl
User-agent: otherbot
Disallow: /private/
Disallow: /api/
Allow: /api/v1/public/
Disallow: /*?*sessionid=
Disallow: /cart/checkout
Crawl-delay: 1

User-agent: BadBot
Disallow: /

Sitemap: https://example.com/sitemap.xml
`)
}

// literalRobots is shaped like a large site's file with mostly literal
// prefixes sharing a path (as Wikipedia's, with hundreds of /wiki/ rules).
func literalRobots(size int) []byte {
	var b strings.Builder
	b.WriteString("# large site\nUser-agent: *\nUser-agent: gentlecrawl\nAllow: /w/api.php?action=mobileview&\nDisallow: /w/\nDisallow: /api/\nDisallow: /trap/\n")
	words := []string{"Special", "Talk", "User", "Project", "Help", "Portal", "Draft", "Module"}
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "Disallow: /wiki/%s:%s_%d\n", words[i%len(words)], words[(i/8)%len(words)], i)
		if i%10 == 0 {
			fmt.Fprintf(&b, "Disallow: /wiki/%s%%3A%d/\n", words[i%len(words)], i)
		}
	}
	return []byte(b.String())
}

// wildcardRobots is a large file full of wildcard rules, a few groups and
// comments (the file of the robots package's own benchmark).
func wildcardRobots(size int) []byte {
	var b strings.Builder
	b.WriteString("# robots.txt for a large site\nSitemap: https://example.com/sitemap.xml\n\n")
	for i := 0; b.Len() < size; i++ {
		switch i % 500 {
		case 0:
			fmt.Fprintf(&b, "\nUser-agent: bot%d\nUser-agent: gentlecrawl\nCrawl-delay: 2\n", i)
		case 250:
			b.WriteString("\nUser-agent: *\n")
		}
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "Disallow: /dir%d/*.php$\n", i)
		case 1:
			fmt.Fprintf(&b, "Allow: /dir%d/public/\n", i)
		case 2:
			fmt.Fprintf(&b, "Disallow: /*?sessionid=%d* # sessions\n", i)
		case 3:
			fmt.Fprintf(&b, "Disallow: /category/%d/item-%%7e%d/\n", i, i)
		}
	}
	return []byte(b.String())
}
