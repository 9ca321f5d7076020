package robots_test

import (
	"fmt"

	"github.com/gentlecrawl/gentlecrawl/robots"
)

func Example() {
	body := []byte(`# robots.txt
User-agent: *
Disallow: /

User-agent: gentlecrawl
Allow: /public/
Disallow: /public/drafts/
Crawl-delay: 1.5

Sitemap: https://example.com/sitemap.xml
`)
	r := robots.Parse(body)
	g := r.Group("gentlecrawl")
	for _, path := range []string{"/public/a.html", "/public/drafts/b.html", "/private"} {
		m := g.Match(path)
		fmt.Printf("%-22s allowed=%-5v %q line %d\n", path, m.Allowed, m.Rule, m.Line)
	}
	delay, ok := g.CrawlDelay()
	fmt.Println("crawl-delay:", delay, ok)
	fmt.Println("sitemaps:", r.Sitemaps())
	fmt.Println("other bots:", r.Group("otherbot").Allowed("/public/a.html"))
	// Output:
	// /public/a.html         allowed=true  "Allow: /public/" line 6
	// /public/drafts/b.html  allowed=false "Disallow: /public/drafts/" line 7
	// /private               allowed=true  "" line 0
	// crawl-delay: 1.5s true
	// sitemaps: [https://example.com/sitemap.xml]
	// other bots: false
}

func ExampleFromResponse() {
	r, outcome := robots.FromResponse(503, nil, nil)
	fmt.Println(outcome, r.Group("gentlecrawl").Allowed("/"))
	r, outcome = robots.FromResponse(404, nil, nil)
	fmt.Println(outcome, r.Group("gentlecrawl").Allowed("/"))
	// Output:
	// unavailable false
	// unrestricted true
}
