package robots

import "bytes"

// CleanParam is a Clean-param record, a Yandex extension: the query
// parameters Params do not change the content of the pages whose path
// starts with Prefix, so URLs that differ only in them are one page
// (https://yandex.com/support/webmaster/robot-workings/clean-param.html).
// Its syntax is "Clean-param: p1&p2&... [prefix]". Like Sitemap, it
// belongs to no group.
type CleanParam struct {
	Params []string // parameter names, compared case-sensitively
	Prefix string   // path prefix, "/" when none was given; "*" matches any sequence, as in a rule
	Line   int
}

// maxCleanParam is the longest Clean-param value Yandex reads.
const maxCleanParam = 500

// Applies reports whether the record applies to pathQuery (see
// Group.Allowed): whether its path starts with Prefix. It does not
// allocate for paths of up to 2 KiB.
func (c CleanParam) Applies(pathQuery string) bool {
	pat := c.Prefix
	if pat == "" {
		pat = "/"
	}
	var buf [pathBufSize]byte
	if norm, changed := normalizePath(buf[:0], pathQuery); changed {
		return matchGlob(pat, false, norm)
	}
	return matchGlob(pat, false, pathQuery)
}

func parseCleanParam(value []byte, line int) (CleanParam, issueKind) {
	if len(value) == 0 {
		return CleanParam{}, issueCleanParamEmpty
	}
	if len(value) > maxCleanParam {
		return CleanParam{}, issueCleanParamLong
	}
	params, prefix := value, []byte(nil)
	if i := indexSpace(value); i >= 0 {
		params, prefix = value[:i], trimSpace(value[i:])
		if indexSpace(prefix) >= 0 {
			return CleanParam{}, issueCleanParamSyntax
		}
	}
	c := CleanParam{Prefix: "/", Line: line}
	if len(prefix) > 0 {
		if prefix[0] != '/' && prefix[0] != '*' {
			return CleanParam{}, issueCleanParamSyntax
		}
		c.Prefix = normalize(nil, string(prefix))
	}
	for p := range bytes.SplitSeq(params, []byte("&")) {
		if len(p) == 0 {
			continue // "a&&b", a final "&"
		}
		for _, ch := range p {
			if ch <= ' ' || ch == '=' || ch == '?' || ch == '#' || ch >= 0x7f {
				return CleanParam{}, issueCleanParamSyntax
			}
		}
		c.Params = append(c.Params, string(p))
	}
	if len(c.Params) == 0 {
		return CleanParam{}, issueCleanParamEmpty
	}
	return c, 0
}
