package fetch

import (
	"bytes"
	"net/http"
	"net/url"
)

// requestRaw renders the request head the way net/http writes it for
// HTTP/1.1: request line, Host, User-Agent, then the remaining fields sorted
// by name (http.Header.Write order), and the empty line.
func requestRaw(u *url.URL, host string, h http.Header) []byte {
	var b bytes.Buffer
	uri := u.RequestURI()
	b.Grow(len("GET  HTTP/1.1\r\nHost: \r\n\r\n") + len(uri) + len(host) + headerSize(h))
	b.WriteString("GET ")
	b.WriteString(uri)
	b.WriteString(" HTTP/1.1\r\nHost: ")
	b.WriteString(host)
	b.WriteString("\r\n")
	if ua := h.Get("User-Agent"); ua != "" {
		b.WriteString("User-Agent: ")
		b.WriteString(ua)
		b.WriteString("\r\n")
	}
	_ = h.WriteSubset(&b, map[string]bool{"User-Agent": true, "Host": true})
	b.WriteString("\r\n")
	return b.Bytes()
}

// responseHead reconstructs the response head from the parsed response.
// net/http does not keep the original bytes; field order becomes sorted and
// names canonical. Transfer-Encoding is dropped because the body we record
// has had its chunking removed.
func responseHead(resp *http.Response) []byte {
	var b bytes.Buffer
	b.Grow(len(resp.Proto) + len(resp.Status) + len(" \r\n\r\n") + headerSize(resp.Header))
	b.WriteString(resp.Proto)
	b.WriteByte(' ')
	b.WriteString(resp.Status)
	b.WriteString("\r\n")
	_ = resp.Header.WriteSubset(&b, map[string]bool{"Transfer-Encoding": true})
	b.WriteString("\r\n")
	return b.Bytes()
}

// headerSize returns how many bytes h takes written as header fields, so
// the buffer it is written to is made once at its size.
func headerSize(h http.Header) int {
	n := 0
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(": \r\n") + len(v)
		}
	}
	return n
}
