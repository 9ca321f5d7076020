package urlspace_test

import (
	"fmt"

	"github.com/gentlecrawl/gentlecrawl/internal/urlspace"
	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

func Example() {
	learner := urlspace.NewLearner(urlspace.LearnerConfig{})
	checker := urlspace.NewChecker(urlspace.Limits{})

	// Fetched pages and their content digests: ref does not change the page.
	for _, s := range []string{"/p?id=1&ref=a", "/p?id=1&ref=b", "/p?id=1&ref=c"} {
		u, _ := urlnorm.Parse("http://shop.example" + s)
		learner.Observe(u, "sha1:5f2a")
	}
	for _, p := range learner.Irrelevant("http://shop.example") {
		fmt.Println(p.Name, p.URLs, p.Examples[0])
	}

	// A link found later: its key drops the session id and ref.
	u, _ := urlnorm.Parse("http://shop.example/p?ref=zz&PHPSESSID=42&id=1")
	fmt.Println(urlnorm.Key(u, learner.DropFunc(urlnorm.HostKey(u))))

	u, _ = urlnorm.Parse("http://shop.example/a/b/a/b/a/b")
	fmt.Println(checker.Check(u))
	fmt.Println(checker.Counts("http://shop.example"))
	// Output:
	// ref 3 http://shop.example/p?id=1&ref=a
	// http://shop.example/p?id=1
	// false repeated-segment
	// map[repeated-segment:1]
}
