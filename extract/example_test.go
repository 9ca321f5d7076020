package extract_test

import (
	"fmt"
	"net/url"

	"github.com/gentlecrawl/gentlecrawl/extract"
)

func Example() {
	doc, _ := url.Parse("https://example.com/blog/post.html")
	body := []byte(`<html><head>
<meta name="robots" content="noindex">
<base href="/blog/">
</head><body>
<a href="next.html">Next</a>
<a href="next.html#comments">Comments</a>
<a href="https://Other.Example:443/x" rel="nofollow">Sponsor</a>
<a href="mailto:me@example.com">Mail</a>
</body></html>`)
	page, err := extract.HTML(doc, body)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("noindex:", page.NoIndex, "nofollow:", page.NoFollow)
	for _, l := range page.Links {
		fmt.Println(l.Tag, l.URL, l.NoFollow)
	}
	// Output:
	// noindex: true nofollow: false
	// a https://example.com/blog/next.html false
	// a https://other.example/x true
}
