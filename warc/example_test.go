package warc_test

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/gentlecrawl/gentlecrawl/warc"
)

func Example() {
	dir, err := os.MkdirTemp("", "warc-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// A crawler recovers what a crash left behind before it writes again.
	if _, err := warc.Recover(dir); err != nil {
		log.Fatal(err)
	}
	w, err := warc.Create(warc.Options{
		Dir:      dir,
		Software: "gentlecrawl/0.1.0",
		Info:     map[string]string{"robots": "obey"},
		Now:      func() time.Time { return time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		log.Fatal(err)
	}
	id, err := w.Write(&warc.Exchange{
		TargetURI: "https://example.com/",
		IP:        "192.0.2.1",
		Request:   []byte("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"),
		Response:  []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n\r\nhello\n"),
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	path := w.Files()[0]
	fmt.Println(filepath.Base(path))
	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	r, err := warc.NewReader(f)
	if err != nil {
		log.Fatal(err)
	}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(rec.Type, rec.Get("WARC-Target-URI"), rec.Get("WARC-Record-ID") == id)
	}
	// Output:
	// gentlecrawl-20250301120000-00000.warc.gz
	// warcinfo  false
	// request https://example.com/ false
	// response https://example.com/ true
}
