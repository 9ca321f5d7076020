package robots_test

import (
	"fmt"
	"time"

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

func ExampleDecide() {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	body := []byte("User-agent: *\nDisallow: /private/\n")

	// A good fetch: the rules, kept for the max-age the server asked for.
	d := robots.Decide(robots.Response{Status: 200, Body: body, CacheControl: "max-age=3600"}, robots.Record{}, now)
	fmt.Println(d.Outcome, d.Source, d.Expires.Sub(now))

	// A day later the server fails: the last good copy stands in, and
	// robots.txt is asked again soon.
	later := now.Add(24 * time.Hour)
	d = robots.Decide(robots.Response{Status: 503}, d.Record, later)
	fmt.Println(d.Outcome, d.Source, d.Expires.Sub(later), d.Robots.Group("gentlecrawl").Allowed("/private/x"))
	// Output:
	// parsed response 1h0m0s
	// unavailable last-good-copy 1m0s false
}

func ExampleRobots_Issues() {
	r := robots.Parse([]byte("User-agent: *\nDisalow: /x\nNoindex: /y\nClean-param: sid&ref /forum/\n"))
	for _, is := range r.Issues() {
		fmt.Printf("line %d ignored=%v: %s\n", is.Line, is.Ignored, is.Reason)
	}
	for _, c := range r.CleanParams() {
		fmt.Println("clean-param:", c.Params, c.Prefix, c.Applies("/forum/t?sid=1"))
	}
	// Output:
	// line 2 ignored=false: misspelled directive name, read as the directive it resembles
	// line 3 ignored=true: Noindex/Nofollow are not robots.txt rules (Google dropped them in 2019)
	// clean-param: [sid ref] /forum/ true
}
