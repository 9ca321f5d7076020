package simweb

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"strings"
	"time"
)

// sitemapNS is the namespace of sitemaps.org, protocol 0.9.
const sitemapNS = "http://www.sitemaps.org/schemas/sitemap/0.9"

// serveSitemap answers one of the sitemap files of Traps.Sitemaps: the
// index, or one of its two parts (the first half of the host's real
// pages in plain XML, the second half gzipped).
func (h *Host) serveSitemap(rw http.ResponseWriter, r *http.Request, uri string) {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	if uri == sitemapIndex {
		b.WriteString("<sitemapindex xmlns=\"" + sitemapNS + "\">\n")
		for _, part := range []string{sitemapPart1, sitemapPart2} {
			b.WriteString("<sitemap><loc>")
			xml.EscapeText(&b, []byte(h.URL(part)))
			b.WriteString("</loc><lastmod>" + lastModifiedEpoch.Format(time.DateOnly) + "</lastmod></sitemap>\n")
		}
		b.WriteString("</sitemapindex>\n")
		serveGenerated(rw, r, "application/xml", b.Bytes())
		return
	}
	pages := h.DistinctPages()
	half := (len(pages) + 1) / 2
	if uri == sitemapPart1 {
		pages = pages[:half]
	} else {
		pages = pages[half:]
	}
	b.WriteString("<urlset xmlns=\"" + sitemapNS + "\">\n")
	for _, u := range pages {
		b.WriteString("<url><loc>")
		xml.EscapeText(&b, []byte(u))
		b.WriteString("</loc><lastmod>" + h.lastModOf(u).UTC().Format(time.RFC3339) + "</lastmod></url>\n")
	}
	b.WriteString("</urlset>\n")
	if uri == sitemapPart2 {
		serveGenerated(rw, r, "application/gzip", gzipBytes(b.Bytes()))
		return
	}
	serveGenerated(rw, r, "application/xml", b.Bytes())
}

// lastModOf returns the Last-Modified of the real page at canonical URL u.
func (h *Host) lastModOf(u string) time.Time {
	sk := h.skeleton()
	if i, ok := sk.byPath[strings.TrimPrefix(u, "http://"+h.Name)]; ok {
		return sk.res[i].lastModified
	}
	return lastModifiedEpoch
}
