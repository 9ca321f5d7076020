package urlnorm

import (
	"net/url"
	"strings"
)

// Key returns the seen-set key of u: its [Canonical] form without the
// session ids [StripSessionIDs] removes and without the query parameters
// whose name drop reports (robots.txt Clean-param rules, parameters learned
// to be irrelevant). drop gets a query parameter's name percent-decoded, and
// a path parameter's name (";vsid=…" in a segment) with its leading ";"; it may
// be nil. Key(u, nil) equals Canonical(StripSessionIDs(u)) and costs about
// what Canonical costs.
func Key(u *url.URL, drop func(name string) bool) string {
	return canonical(u, drop, true)
}

// StripSessionIDs returns u without the well-known session ids, and the
// names of the parameters it removed, in order. When there is none, u itself
// is returned; otherwise a copy, u is never modified. The order of the other
// query parameters is kept, so the result may be fetched.
//
// Removed, with names compared case-insensitively:
//   - path parameters and query parameters named jsessionid, phpsessid,
//     cfid, cftoken, oscsid (osCommerce), zenid (Zen Cart), or starting
//     with aspsessionid (classic ASP), whatever their value;
//   - sid, sessid, sessionid and session_id when the value looks like a
//     session: at least 16 hex digits, or at least 20 characters of the
//     base64 alphabet (or a UUID) mixing letters and digits;
//   - s (WordPress uses it for searches) only when the value is at least 16
//     hex digits or at least 20 letters and digits that alternate at least
//     four times, like a random token and unlike words: "s=2", "sid=en",
//     "s=summer-sale-2024" stay.
func StripSessionIDs(u *url.URL) (*url.URL, []string) {
	return strip(u, nil, true)
}

// StripParams returns u without the query parameters named in names
// (compared case-sensitively, after percent-decoding, as robots.txt
// Clean-param does), and the names it removed. When there is none, u itself
// is returned; otherwise a copy.
func StripParams(u *url.URL, names []string) (*url.URL, []string) {
	if len(names) == 0 || u.RawQuery == "" {
		return u, nil
	}
	return strip(u, func(name string) bool {
		for _, n := range names {
			if n == name {
				return true
			}
		}
		return false
	}, false)
}

// StripFunc returns u without the session ids StripSessionIDs removes and
// without the parameters drop reports: query parameters by their
// percent-decoded name, path parameters (";name=value" in a segment) by
// their name with a leading ";" (";vsid"). It returns the names of the
// parameters removed. When there is none, u itself is returned; otherwise
// a copy. The order of the other parameters is kept.
func StripFunc(u *url.URL, drop func(name string) bool) (*url.URL, []string) {
	return strip(u, drop, true)
}

func strip(u *url.URL, drop func(string) bool, sessions bool) (*url.URL, []string) {
	var removed []string
	c := u
	if (sessions || drop != nil) && u.Opaque == "" {
		if esc := u.EscapedPath(); strings.IndexByte(esc, ';') >= 0 {
			if p, n := stripPathParams(esc, &removed, sessions, drop); n > 0 {
				if dec, err := url.PathUnescape(p); err == nil {
					cp := *u
					cp.Path, cp.RawPath = dec, p
					c = &cp
				}
			}
		}
	}
	if u.RawQuery == "" {
		return c, removed
	}
	q := u.RawQuery
	kept := make([]string, 0, strings.Count(q, "&")+1)
	changed := false
	for len(q) > 0 {
		var p string
		p, q, _ = strings.Cut(q, "&")
		name, value, _ := strings.Cut(p, "=")
		if p != "" && (sessions && isSessionParam(name, value) || drop != nil && drop(DecodeParamName(name))) {
			removed = append(removed, DecodeParamName(name))
			changed = true
			continue
		}
		kept = append(kept, p)
	}
	if !changed {
		return c, removed
	}
	if c == u {
		cp := *u
		c = &cp
	}
	c.RawQuery = strings.Join(kept, "&")
	if strings.Trim(c.RawQuery, "&") == "" {
		c.RawQuery, c.ForceQuery = "", false
	}
	return c, removed
}

// stripPathParams removes path parameters (RFC 3986 §3.3) from the escaped
// path p: with sessions the session ids (";jsessionid=…"), and those whose
// name with a leading ";" drop reports. It appends their names to removed
// when it is not nil, and reports how many it removed.
func stripPathParams(p string, removed *[]string, sessions bool, drop func(string) bool) (string, int) {
	var b []byte
	n := 0
	for i := 0; i < len(p); {
		if p[i] != ';' {
			if b != nil {
				b = append(b, p[i])
			}
			i++
			continue
		}
		end := i + 1
		for end < len(p) && p[end] != ';' && p[end] != '/' {
			end++
		}
		name, value, _ := strings.Cut(p[i+1:end], "=")
		if sessions && isSessionParam(name, value) || drop != nil && name != "" && drop(";"+name) {
			if b == nil {
				b = append(make([]byte, 0, len(p)), p[:i]...)
			}
			if removed != nil {
				*removed = append(*removed, name)
			}
			n++
		} else if b != nil {
			b = append(b, p[i:end]...)
		}
		i = end
	}
	if b == nil {
		return p, 0
	}
	return string(b), n
}

// DecodeParamName percent-decodes a raw query parameter name the way Key
// does before asking its drop function; it allocates only when the name
// holds an escape or a '+'. Callers that keep lists of parameter names to
// drop decode with it, so that their names and Key's agree.
func DecodeParamName(name string) string {
	if strings.IndexByte(name, '%') < 0 && strings.IndexByte(name, '+') < 0 {
		return name
	}
	if d, err := url.QueryUnescape(name); err == nil {
		return d
	}
	return name
}

// isSessionParam reports whether name=value (raw, as in the URL) is a
// session id; see StripSessionIDs.
func isSessionParam(name, value string) bool {
	switch len(name) {
	case 1:
		return (name[0] == 's' || name[0] == 'S') && looksLikeSession(value, true)
	case 3, 6, 9, 10:
		if strings.EqualFold(name, "sid") || strings.EqualFold(name, "sessid") ||
			strings.EqualFold(name, "sessionid") || strings.EqualFold(name, "session_id") {
			return looksLikeSession(value, false)
		}
	}
	switch {
	case strings.EqualFold(name, "jsessionid"), strings.EqualFold(name, "phpsessid"),
		strings.EqualFold(name, "cfid"), strings.EqualFold(name, "cftoken"),
		strings.EqualFold(name, "oscsid"), strings.EqualFold(name, "zenid"):
		return true
	case len(name) >= 12 && strings.EqualFold(name[:12], "aspsessionid"):
		return true
	}
	return false
}

// looksLikeSession reports whether a parameter value looks like a random
// session token rather than a number, a word or a slug. strict is for
// names that are also used for other things ("s" for a search).
func looksLikeSession(v string, strict bool) bool {
	n, digits, letters, changes := 0, 0, 0, 0
	hex, alnum := true, true
	prev := 0 // class of the previous letter or digit: 1 digit, 2 letter
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '%' {
			// Escaped base64 characters.
			if i+2 >= len(v) {
				return false
			}
			switch v[i+1 : i+3] {
			case "2B", "2b":
				c = '+'
			case "2F", "2f":
				c = '/'
			case "3D", "3d":
				c = '='
			default:
				return false
			}
			i += 2
		}
		cls := 0
		switch {
		case '0' <= c && c <= '9':
			digits++
			cls = 1
		case 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
			letters++
			cls = 2
		case 'g' <= c && c <= 'z', 'G' <= c && c <= 'Z':
			letters++
			cls = 2
			hex = false
		case c == '+' || c == '/' || c == '=' || c == '-' || c == '_':
			hex, alnum = false, false
		default:
			return false
		}
		if cls != 0 {
			if prev != 0 && cls != prev {
				changes++
			}
			prev = cls
		}
		n++
	}
	if digits == 0 || letters == 0 {
		return false
	}
	if hex && n >= 16 {
		return true
	}
	if strict {
		return alnum && n >= 20 && changes >= 4
	}
	return n >= 20 && changes >= 2
}
