package urlspace

import (
	"net/url"
	"slices"
	"strings"
)

// CalendarLike reports whether u looks like a page of a calendar: a URL
// that ends with a date, or has date parameters (see Limits.CalendarMonths).
func CalendarLike(u *url.URL) bool {
	_, _, ok := calendar(u)
	return ok
}

// calendar reports whether u looks like a page of a calendar, and if so
// its shape (the URL with the date taken out, hashed) and its date in
// months (year*12 + month - 1).
//
// A path is calendar-like when it ends with a date: a segment YYYY-MM,
// YYYY-MM-DD or YYYYMMDD, or segments YYYY/MM or YYYY/MM/DD (a trailing
// slash, or an extension like ".html", allowed).
// A query is calendar-like when it has a parameter whose value is such a
// date, or parameters named year (with or without month) or date. The
// date in the path wins over the query.
func calendar(u *url.URL) (shape uint64, month int, ok bool) {
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	if m, prefix, ok := pathDate(path); ok {
		return hashMore(hash(prefix), "/{date}"), m, true
	}
	if u.RawQuery == "" {
		return 0, 0, false
	}
	var names []string
	year, mon, m := -1, -1, -1
	for p := range strings.SplitSeq(u.RawQuery, "&") {
		name, value, _ := strings.Cut(p, "=")
		lname := strings.ToLower(name)
		switch {
		case lname == "year" && len(value) == 4 && digits(value):
			year = atoi(value)
		case lname == "month" && len(value) <= 2 && len(value) > 0 && digits(value):
			mon = atoi(value)
		default:
			d, ok := parseDate(value)
			if !ok {
				continue
			}
			m = d
		}
		names = append(names, lname)
	}
	switch {
	case m >= 0:
	case year >= 0 && mon >= 1 && mon <= 12:
		m = year*12 + mon - 1
	case year >= 0:
		m = year * 12
	default:
		return 0, 0, false
	}
	slices.Sort(names)
	h := hashMore(hash(path), "?")
	for _, n := range names {
		h = hashMore(hashMore(h, n), "&")
	}
	return h, m, true
}

// pathDate finds a date at the end of path, returning it in months and the
// path before it.
func pathDate(path string) (month int, prefix string, ok bool) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return 0, "", false
	}
	last := path[i+1:]
	// A page's extension does not make it less of a date:
	// "2026-12-01.html", "05.php".
	if j := strings.LastIndexByte(last, '.'); j > 0 && len(last)-j <= 6 && isLetters(last[j+1:]) {
		last = last[:j]
	}
	if m, ok := parseDate(last); ok {
		return m, path[:i], true
	}
	// YYYY/MM or YYYY/MM/DD.
	if len(last) > 2 || len(last) == 0 || !digits(last) {
		return 0, "", false
	}
	rest := path[:i]
	j := strings.LastIndexByte(rest, '/')
	if j < 0 {
		return 0, "", false
	}
	mid := rest[j+1:]
	if len(mid) == 4 && digits(mid) {
		if m := atoi(last); m >= 1 && m <= 12 {
			return atoi(mid)*12 + m - 1, rest[:j], true
		}
		return 0, "", false
	}
	if len(mid) > 2 || len(mid) == 0 || !digits(mid) || atoi(last) > 31 || atoi(last) < 1 {
		return 0, "", false
	}
	k := strings.LastIndexByte(rest[:j], '/')
	if k < 0 {
		return 0, "", false
	}
	year := rest[k+1 : j]
	if len(year) != 4 || !digits(year) {
		return 0, "", false
	}
	if m := atoi(mid); m >= 1 && m <= 12 {
		return atoi(year)*12 + m - 1, rest[:k], true
	}
	return 0, "", false
}

// parseDate parses YYYY-MM, YYYY-MM-DD, or YYYYMMDD with a year from
// 1900 to 2199, into months.
func parseDate(s string) (int, bool) {
	if len(s) == 8 && digits(s) {
		y, m, d := atoi(s[:4]), atoi(s[4:6]), atoi(s[6:])
		if y < 1900 || y > 2199 || m < 1 || m > 12 || d < 1 || d > 31 {
			return 0, false
		}
		return y*12 + m - 1, true
	}
	if (len(s) != 7 && len(s) != 10) || s[4] != '-' || !digits(s[:4]) || !digits(s[5:7]) {
		return 0, false
	}
	if len(s) == 10 {
		if s[7] != '-' || !digits(s[8:]) {
			return 0, false
		}
		if d := atoi(s[8:]); d < 1 || d > 31 {
			return 0, false
		}
	}
	m := atoi(s[5:7])
	if m < 1 || m > 12 {
		return 0, false
	}
	return atoi(s[:4])*12 + m - 1, true
}

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return s != ""
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}
