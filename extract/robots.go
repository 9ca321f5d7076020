package extract

import "strings"

// robotsDirectives reads a comma-separated list of robots directives, the
// content of <meta name="robots">.
func robotsDirectives(list string) (noindex, nofollow bool) {
	for d := range strings.SplitSeq(list, ",") {
		switch strings.ToLower(strings.TrimSpace(d)) {
		case "nofollow":
			nofollow = true
		case "noindex":
			noindex = true
		case "none":
			noindex, nofollow = true, true
		}
	}
	return noindex, nofollow
}

// valued are the robots directives that take a value after a colon; any
// other "name: ..." starts the directives for the user agent name.
var valued = map[string]bool{
	"unavailable_after": true,
	"max-snippet":       true,
	"max-image-preview": true,
	"max-video-preview": true,
}

// XRobotsTag reads X-Robots-Tag header values as Google documents them
// (developers.google.com/search/docs/crawling-indexing/robots-meta-tag):
// a comma-separated list of directives, which apply to every crawler, or,
// after "name:", only to the crawler whose user agent token is name
// (compared ignoring case) until another "name:" begins. "none" means
// "noindex, nofollow".
//
// header holds one header value, or several joined by newlines; pass
// strings.Join(h.Values("X-Robots-Tag"), "\n"), since a value's user agent
// ends with it. agent is the crawler's product token; with "" only the
// directives for every crawler count.
func XRobotsTag(header string, agent string) (noindex, nofollow bool) {
	for line := range strings.SplitSeq(header, "\n") {
		applies := true // no user agent: every crawler
		for item := range strings.SplitSeq(line, ",") {
			item = strings.TrimSpace(item)
			if name, rest, ok := strings.Cut(item, ":"); ok {
				name = strings.TrimSpace(name)
				if !valued[strings.ToLower(name)] && isToken(name) {
					applies = agent != "" && strings.EqualFold(name, agent)
					item = strings.TrimSpace(rest)
				}
			}
			if !applies {
				continue
			}
			switch strings.ToLower(item) {
			case "noindex":
				noindex = true
			case "nofollow":
				nofollow = true
			case "none":
				noindex, nofollow = true, true
			}
		}
	}
	return noindex, nofollow
}

// isToken reports whether s can be a user agent product token: letters,
// digits, '-' and '_' (RFC 9309 §2.2.1). It keeps the comma inside a date
// ("unavailable_after: Friday, 25-Jun-2010 15:00:00 PST") from being read
// as a user agent.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
