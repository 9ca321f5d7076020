package gentlecrawl_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestCampaignParameters: links that carry analytics campaign parameters
// and advertising click ids (utm_source, gclid, fbclid) are fetched
// without them, once for all the campaigns that linked them; a parameter
// the site's content may depend on ("utm" alone, "id") is kept.
func TestCampaignParameters(t *testing.T) {
	count, log := crawlSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<html><body>
<a href="/a?utm_source=news&utm_medium=email&utm_campaign=spring">a</a>
<a href="/a?utm_campaign=summer">a again</a>
<a href="/a?gclid=Cj0KCQ123&fbclid=IwAR0x">a from ads</a>
<a href="/b?id=7&utm_content=footer">b</a>
<a href="/c?utm=1">c</a>
</body></html>`)
		default:
			fmt.Fprint(w, `<html><body><p>`+strings.Repeat("words of a page ", 20)+r.URL.Path+`</p></body></html>`)
		}
	})
	for _, want := range []string{"/", "/a", "/b?id=7", "/c?utm=1"} {
		if count[want] != 1 {
			t.Errorf("%s requested %d times, want once; requests %v", want, count[want], log)
		}
	}
	for _, u := range log {
		if strings.Contains(u, "utm_") || strings.Contains(u, "clid") {
			t.Errorf("requested %s with a campaign parameter", u)
		}
	}
}
