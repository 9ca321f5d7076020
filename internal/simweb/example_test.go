package simweb_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

func Example() {
	web, err := simweb.New(simweb.Config{Seed: 1, Hosts: 3, PagesPerHost: 10})
	if err != nil {
		panic(err)
	}
	srv, err := web.Start("127.0.0.1:0")
	if err != nil {
		panic(err)
	}

	// Every host name resolves to the one listener, as curl's
	// --connect-to ::ADDR does.
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, srv.Addr)
		},
	}}
	for _, h := range web.Hosts() {
		resp, err := client.Get("http://" + h.Name + "/robots.txt")
		if err != nil {
			panic(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Println(h.Name, h.Profile, resp.StatusCode)
	}

	srv.Close() // waits for the handlers, so the log is complete

	// The ground truth a crawler is checked against.
	fmt.Println(web.Allowed("b.test", "/private/1.html", "gentlecrawl"))
	fmt.Println(web.Allowed("b.test", "/private/open/1.html", "gentlecrawl"))
	fmt.Println(len(web.Requests()), "requests logged")
	// Output:
	// a.test allow 200
	// b.test disallow 200
	// c.test allow 200
	// false
	// true
	// 3 requests logged
}

func ExampleCapacity() {
	// 20 requests/s: one worker, 50 ms a request; five may wait, the
	// sixth is told to come back in two minutes; a saturated server
	// takes twice as long per request.
	c := simweb.Capacity{
		Workers: 1, ServiceTime: 50 * time.Millisecond, SlowdownAtSaturation: 2,
		QueueLimit: 5, OverloadStatus: http.StatusTooManyRequests, RetryAfter: 2 * time.Minute,
	}
	fmt.Println(c.Rate(), "requests/s")
	m, err := simweb.NewModel(c)
	if err != nil {
		panic(err)
	}
	res, _ := m.Serve(context.Background()) // alone: served after 50 ms
	fmt.Println(res.Status, res.Wait, res.Service, m.Stats().Served)
	// Output:
	// 20 requests/s
	// 200 0s 50ms 1
}

func ExampleTraps() {
	// A host of exactly 500 real pages behind session ids, a faceted
	// catalog and an endless calendar.
	web, err := simweb.New(simweb.Config{Hosts: 1, Profiles: []simweb.Profile{simweb.ProfileAllow},
		HostOptions: func(int, string) simweb.HostOptions {
			return simweb.HostOptions{Pages: 500, NoFiles: true, Traps: simweb.Traps{
				SessionIDs: "sid", Facets: true, Calendar: true,
			}}
		}})
	if err != nil {
		panic(err)
	}
	h := web.Hosts()[0]
	fmt.Println(len(h.DistinctPages()), "real pages")

	// After a crawl, each logged request maps to the page it served.
	for _, path := range []string{
		"/catalog?size=m&sort=price&color=red&page=1&sid=9f3c",
		"/catalog?page=7&color=blue&sid=77aa",
		"/calendar?month=2031-04&sid=01",
	} {
		fmt.Println(h.PageOf(path))
	}
	// Output:
	// 500 real pages
	// http://a.test/catalog?color=red&size=m true
	// http://a.test/catalog?color=blue&page=2 true
	//  false
}
