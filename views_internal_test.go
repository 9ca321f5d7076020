package gentlecrawl

import (
	"strings"
	"testing"
)

// TestViewIndex: a page whose long blocks are another page's, in other
// chrome, is a view of it; blocks seen on two pages are boilerplate and
// count for neither; a page of paragraphs of its own is no view, and its
// main text is counted.
func TestViewIndex(t *testing.T) {
	var v viewIndex
	para := func(word string, n int) string { return strings.TrimSpace(strings.Repeat(word+" ", n)) }
	footer := "All rights reserved by the example company and its many friends everywhere"
	post := para("alpha", 20) + "\n" + para("beta", 30) + "\n" + para("gamma", 15)
	a := "Menu Home About\n" + post + "\n" + footer
	if of, main := v.viewOf(1, "http://h/post/1", []byte(a)); of != "" || main < 65 {
		t.Fatalf("the first page: view of %q, %d main words", of, main)
	}
	other := "Menu Home About\n" + para("delta", 40) + "\n" + footer
	if of, main := v.viewOf(1, "http://h/post/2", []byte(other)); of != "" || main != 40+12 {
		// The footer is met a second time: counted this once, and
		// boilerplate from now on.
		t.Errorf("another post: view of %q, %d main words, want none and 52", of, main)
	}
	print := "Printable version\n" + post
	if of, _ := v.viewOf(1, "http://h/print/1", []byte(print)); of != "http://h/post/1" {
		t.Errorf("the print view: view of %q, want http://h/post/1", of)
	}
	// The same blocks on another host are not a view.
	if of, _ := v.viewOf(2, "http://g/post/1", []byte(post)); of != "" {
		t.Errorf("another host's page: view of %q", of)
	}
	// A page with the footer alone has no main text.
	if of, main := v.viewOf(1, "http://h/form/1", []byte("Quote\n"+footer)); of != "" || main != 0 {
		t.Errorf("a form: view of %q, %d main words", of, main)
	}
	// A page of many paragraphs is read up to maxBlocksPerPage of them.
	var long strings.Builder
	for i := range 3 * maxBlocksPerPage {
		long.WriteString(para("w"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26)), 12) + "\n")
	}
	if _, main := v.viewOf(3, "http://k/long", []byte(long.String())); main != 12*maxBlocksPerPage {
		t.Errorf("a long page: %d main words, want %d (maxBlocksPerPage blocks)", main, 12*maxBlocksPerPage)
	}
}
