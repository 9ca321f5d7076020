package urlnorm_test

import (
	"fmt"

	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

func Example() {
	u, err := urlnorm.Parse(" HTTP://Bücher.Example:80/a/./b/../%7euser?z=1&a=2#top ")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(u)
	fmt.Println(urlnorm.Canonical(u))
	fmt.Println(urlnorm.HostKey(u))

	_, err = urlnorm.Parse("ftp://example.com/file")
	fmt.Println(err)
	// Output:
	// http://xn--bcher-kva.example/a/./b/../%7euser?z=1&a=2#top
	// http://xn--bcher-kva.example/a/~user?a=2&z=1
	// http://xn--bcher-kva.example
	// urlnorm: parse "ftp://example.com/file": unsupported scheme "ftp"
}
