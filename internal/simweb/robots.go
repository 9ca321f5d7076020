package simweb

import (
	"strconv"
	"strings"
	"time"
)

// The robots.txt paths served by every host.
const (
	robotsPath      = "/robots.txt"
	robotsMovedPath = "/robots-moved.txt" // target of ProfileRedirect
)

// ourAgent is the product token that ProfileAgent gives its own group.
const ourAgent = "gentlecrawl"

const disallowRules = "User-agent: *\nDisallow: /private/\nAllow: /private/open/\nDisallow: /search\n"

// robotsResponse returns how a host answers /robots.txt: status, content
// type, body and, for redirects, the Location.
func (o *hostOptions) robotsResponse(name string) (status int, ctype, body, location string) {
	const plain = "text/plain; charset=utf-8"
	switch o.profile {
	case ProfileAllow:
		return 200, plain, "User-agent: *\nDisallow:\n", ""
	case ProfileDisallow:
		return 200, plain, disallowRules, ""
	case ProfileCrawlDelay:
		return 200, plain, "User-agent: *\nCrawl-delay: " + o.crawlDelay + "\nDisallow: /private/\n", ""
	case ProfileNotFound:
		return 404, plain, "not found\n", ""
	case ProfileError:
		return 500, plain, "internal server error\n", ""
	case ProfileHTML:
		return 200, "text/html; charset=utf-8", "<!DOCTYPE html>\n<html><head><title>Welcome to " + name +
			"</title></head>\n<body><h1>Welcome to " + name + "</h1>\n<p>This site has moved its " +
			"pages around. Please use the menu to find what you are looking for.</p>\n" +
			"<p><a href=\"/\">Home</a></p></body></html>\n", ""
	case ProfileRedirect:
		return 301, "text/html; charset=utf-8", "<a href=\"/robots-moved.txt\">Moved Permanently</a>.\n", robotsMovedPath
	case ProfileAgent:
		return 200, plain, "User-agent: " + ourAgent + "\nDisallow: /nogc/\n\nUser-agent: *\nDisallow: /\n", ""
	}
	return 404, plain, "not found\n", ""
}

// Allowed reports the ground truth of host's robots.txt profile: whether
// agent may fetch path (escaped, with the query if any). It is written
// from the profile definitions with plain prefix logic, independently of
// any robots.txt parser. agent may be a product token ("gentlecrawl") or a
// whole User-Agent header ("gentlecrawl/1.0 (+https://…)"); its product
// token is compared case-insensitively. The robots.txt file itself (and
// /robots-moved.txt of a ProfileRedirect host) is always allowed. Unknown
// hosts allow nothing.
func (w *Web) Allowed(host, path, agent string) bool {
	h := w.Host(host)
	if h == nil {
		return false
	}
	if path == robotsPath || (h.Profile == ProfileRedirect && path == robotsMovedPath) {
		return true
	}
	switch h.Profile {
	case ProfileAllow, ProfileNotFound, ProfileHTML:
		return true
	case ProfileError:
		return false // RFC 9309 §2.3.1.4: unreachable means complete disallow
	case ProfileDisallow, ProfileRedirect:
		if strings.HasPrefix(path, "/private/open/") {
			return true // the longer Allow wins
		}
		return !strings.HasPrefix(path, "/private/") && !strings.HasPrefix(path, "/search")
	case ProfileCrawlDelay:
		return !strings.HasPrefix(path, "/private/")
	case ProfileAgent:
		if productToken(agent) == ourAgent {
			return !strings.HasPrefix(path, "/nogc/")
		}
		return false
	}
	return false
}

// productToken returns the lower-cased product token at the start of a
// User-Agent value: "GentleCrawl/1.0 (+x)" → "gentlecrawl".
func productToken(agent string) string {
	agent = strings.TrimSpace(agent)
	if i := strings.IndexAny(agent, "/ \t;("); i >= 0 {
		agent = agent[:i]
	}
	return strings.ToLower(agent)
}

// formatSeconds writes d in seconds as robots.txt Crawl-delay expects:
// "2", "1.5", "0.25".
func formatSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}
