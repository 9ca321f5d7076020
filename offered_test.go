package gentlecrawl

import (
	"fmt"
	"testing"
)

// TestOfferedLinks: only plain links are kept; a key equal to the URL is
// given back as the URL; memory is bounded to two generations, and a link
// still asked for survives the turn of a generation.
func TestOfferedLinks(t *testing.T) {
	var o offeredLinks
	o.put(0, "http://a.test/x", "http://a.test/x")
	o.put(0, "http://a.test/y", "http://a.test/Y")
	for _, s := range []string{"http://a.test/q?x=1", "http://a.test/p;jsessionid=1", "http://a.test/f#top"} {
		o.put(0, s, s)
		if _, ok := o.get(s); ok {
			t.Errorf("%s kept: not a plain link", s)
		}
	}
	if k, ok := o.get("http://a.test/x"); !ok || k != "http://a.test/x" {
		t.Errorf("x: %q %v", k, ok)
	}
	if k, ok := o.get("http://a.test/y"); !ok || k != "http://a.test/Y" {
		t.Errorf("y: %q %v", k, ok)
	}
	if _, ok := o.get("http://a.test/z"); ok {
		t.Error("z found, never put")
	}
	// Fill three generations; the link asked for all along stays.
	for i := range 3 * maxOffered {
		o.put(0, fmt.Sprintf("http://a.test/n%d", i), "")
		if i%1000 == 0 {
			if _, ok := o.get("http://a.test/x"); !ok {
				t.Fatalf("x lost after %d more links", i)
			}
		}
	}
	if n := len(o.cur) + len(o.old); n > 2*maxOffered {
		t.Errorf("%d links kept, want at most %d", n, 2*maxOffered)
	}
	if _, ok := o.get("http://a.test/n0"); ok {
		t.Error("the oldest link is still kept")
	}
}

// TestOfferedLinksRestart: in a shared crawl, the links kept are forgotten
// when the frontier finds the database server restarted (a crash of the
// server may have lost the releases that queued them), and a link of a
// release made before a restart is not kept after it.
func TestOfferedLinksRestart(t *testing.T) {
	var restarts uint64
	o := offeredLinks{restarts: func() uint64 { return restarts }}
	o.put(0, "http://a.test/x", "http://a.test/x")
	if _, ok := o.get("http://a.test/x"); !ok {
		t.Fatal("x not kept")
	}
	epoch := o.now() // a release made now…
	restarts++       // …that a crash of the server took
	o.put(epoch, "http://a.test/y", "http://a.test/y")
	if _, ok := o.get("http://a.test/x"); ok {
		t.Error("x kept across a restart")
	}
	if _, ok := o.get("http://a.test/y"); ok {
		t.Error("y, of a release made before the restart, kept")
	}
	o.put(o.now(), "http://a.test/z", "http://a.test/z")
	if _, ok := o.get("http://a.test/z"); !ok {
		t.Error("z, of a release made after the restart, not kept")
	}
}
