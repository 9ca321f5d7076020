package fetch_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
)

func ExampleParseConnectTo() {
	ct, err := fetch.ParseConnectTo("www.example.com:443:[2001:db8::7]:8443")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s:%d -> %s:%d\n", ct.FromHost, ct.FromPort, ct.ToHost, ct.ToPort)

	_, err = fetch.ParseResolve("www.example.com:443")
	fmt.Println(err)
	// Output:
	// www.example.com:443 -> 2001:db8::7:8443
	// --resolve "www.example.com:443": want HOST:PORT:ADDR[,ADDR]...
}

func ExampleClient_Do() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		fmt.Fprintf(w, "hello, %s", r.Host)
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port

	c, err := fetch.New(fetch.Config{
		UserAgent: "ExampleBot/1.0 (+https://example.org/bot)",
		// The test server is on loopback, which a crawler refuses by default.
		AllowPrivateNetworks: true,
		// Send www.example.com:80 to the test server; the Host header stays.
		ConnectTo: []fetch.ConnectTo{{FromHost: "www.example.com", FromPort: 80, ToHost: "127.0.0.1", ToPort: port}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	u, _ := url.Parse("http://www.example.com/")
	res, err := c.Do(context.Background(), fetch.Request{URL: u})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, string(res.Body))

	// Revisit with the validator from the first fetch.
	res, err = c.Do(context.Background(), fetch.Request{URL: u, ETag: res.Header.Get("ETag")})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, res.NotModified)
	// Output:
	// 200 hello, www.example.com
	// 304 true
}
