package check

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
	"github.com/gentlecrawl/gentlecrawl/robots"
)

// originRobots is what the check learned from an origin's robots.txt.
type originRobots struct {
	origin   string
	chain    []string // "GET URL → status" per request, in order
	status   int      // of the last answer; 0 without one
	header   http.Header
	mediaTyp string
	body     []byte
	cut      bool // the body was read in part (larger than the check reads)
	fetchErr error
	redirect string // why a redirect chain was not followed to its end
	decision robots.Decision
	group    *robots.Group
	notRead  bool // the budget ran out before robots.txt could be read
}

// usable reports whether the origin's pages may be fetched at all.
func (r *originRobots) usable() bool {
	return !r.notRead && r.decision.Outcome != robots.OutcomeUnavailable && !r.disallowsAll()
}

// allowed reports whether the agent may fetch u by these rules.
func (r *originRobots) allowed(u *url.URL) bool {
	return !r.notRead && r.decision.Outcome != robots.OutcomeUnavailable && r.group.Allowed(robots.PathQuery(u.String()))
}

// robotsFor returns the rules of origin, fetching its robots.txt the
// first time as the crawler does: following up to five redirects, then
// reading the answer with robots.Decide. first says this is the first
// request of the check: a failure to connect then means the check cannot
// run, and is returned as an *UnreachableError. The findings about the
// file are added as it is read.
func (c *checker) robotsFor(ctx context.Context, origin string, first bool) (*originRobots, error) {
	if r := c.origins[origin]; r != nil {
		return r, nil
	}
	r := &originRobots{origin: origin}
	c.origins[origin] = r
	target, _ := url.Parse(origin + "/robots.txt")
	seen := map[string]bool{}
	var policy robots.Policy
	var resp robots.Response
	for {
		seen[target.String()] = true
		res, err := c.do(ctx, purposeRobots, fetch.Request{URL: target, AllTypes: true})
		if errors.Is(err, errStop) {
			r.notRead = true
			return r, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			var fe *fetch.Error
			if first && len(c.exchanges) == 1 && (errors.As(err, &fe) && fe.Op == "dial" || errors.Is(err, fetch.ErrPrivateNetwork)) {
				return nil, &UnreachableError{URL: target.String(), Err: err}
			}
			r.chain = append(r.chain, fmt.Sprintf("GET %s → no answer: %s", target, oneLine(err)))
			r.fetchErr, resp.Err = err, err
			break
		}
		r.chain = append(r.chain, fmt.Sprintf("GET %s → %d%s", target, res.Status, locationNote(res)))
		r.status, r.header, r.mediaTyp = res.Status, res.Header, res.MediaType
		resp.Status = res.Status
		if res.Status >= 300 && res.Status < 400 {
			loc := res.Header.Get("Location")
			next, lerr := fetch.ResolveLocation(target, loc)
			switch {
			case loc == "" || lerr != nil || next.Scheme != "http" && next.Scheme != "https":
				r.redirect = fmt.Sprintf("a redirect without a usable Location (%q)", loc)
			case seen[next.String()]:
				r.redirect = "a redirect loop, back to " + next.String()
			case !policy.FollowRedirect(resp.Hops):
				r.redirect = fmt.Sprintf("more than %d redirects", resp.Hops)
			default:
				target = next
				resp.Hops++
				continue
			}
			break
		}
		resp.CacheControl = strings.Join(res.Header.Values("Cache-Control"), ",")
		resp.Body = res.Body
		r.body = res.Body
		switch {
		case res.Undecoded != "":
			resp.Err = fmt.Errorf("a body in an encoding that cannot be decoded (Content-Encoding: %s)", res.Undecoded)
			r.fetchErr = resp.Err
		case res.DecodeErr != nil, res.Truncated == fetch.TruncatedTime, res.Truncated == fetch.TruncatedDisconnect:
			resp.Truncated = true
		case res.Truncated == fetch.TruncatedLength:
			r.cut = true
		}
		break
	}
	r.decision = robots.Decide(resp, robots.Record{}, time.Now())
	r.group = r.decision.Robots.Group(c.cfg.Agent)
	if cd, ok := r.group.CrawlDelay(); ok && r.decision.Outcome == robots.OutcomeParsed {
		c.setGap(cd, "Crawl-delay")
	}
	c.judgeRobots(r)
	return r, nil
}

// locationNote is " (Location: …)" for a redirect.
func locationNote(res *fetch.Result) string {
	if res.Status >= 300 && res.Status < 400 {
		return fmt.Sprintf(" (Location: %s)", res.Header.Get("Location"))
	}
	return ""
}

// judgeRobots adds the findings about an origin's robots.txt.
func (c *checker) judgeRobots(r *originRobots) {
	name := r.origin + "/robots.txt"
	d := r.decision
	switch {
	case r.redirect != "" && r.status >= 300 && r.status < 400:
		c.add(IDRobotsRedirects, Fail,
			fmt.Sprintf("%s ends in %s: crawlers read that as unavailable, which means complete disallow (RFC 9309 §2.3.1.2, §2.3.1.4): they crawl nothing of the site", name, r.redirect),
			r.chain...)
		return
	case d.Outcome == robots.OutcomeUnavailable:
		ev := append([]string(nil), r.chain...)
		var why string
		switch {
		case r.fetchErr != nil:
			why = "did not answer"
		case r.status == http.StatusTooManyRequests || r.status >= 500:
			why = fmt.Sprintf("answers %d %s", r.status, http.StatusText(r.status))
			if ra := r.header.Get("Retry-After"); ra != "" {
				ev = append(ev, "Retry-After: "+ra)
			} else {
				ev = append(ev, "no Retry-After")
			}
		default:
			why = fmt.Sprintf("answers %d but its body was cut short", r.status)
		}
		c.add(IDRobotsUnavailable, Fail,
			fmt.Sprintf("%s %s: crawlers read that as complete disallow (RFC 9309 §2.3.1.4) and stop crawling the site until it answers 200 or 404", name, why),
			ev...)
		return
	case d.Outcome == robots.OutcomeUnrestricted:
		c.add(IDRobots, Info, fmt.Sprintf("%s answers %d: no restrictions (RFC 9309 §2.3.1.3)", name, r.status), r.chain...)
		return
	}

	rules := d.Robots
	if looksHTML(r.mediaTyp, r.body) {
		ev := append([]string(nil), r.chain...)
		ev = append(ev, "Content-Type: "+r.header.Get("Content-Type"))
		if t := htmlTitle(r.body); t != "" {
			ev = append(ev, fmt.Sprintf("title: %q", t))
		}
		ev = append(ev, fmt.Sprintf("%d lines, %d of them ignored or read leniently as robots.txt", rules.Lines(), len(rules.Issues())))
		c.add(IDRobotsHTML, Warn,
			fmt.Sprintf("%s answers 200 with an HTML page: crawlers read it as robots.txt, find no rules they understand, and crawl everything; if rules were meant, serve them as text/plain", name),
			ev...)
	}
	if len(r.body) > robots.MaxSize {
		lost, rulesLost := countPast(r.body, robots.MaxSize)
		size := fmt.Sprintf("%d bytes", len(r.body))
		if r.cut {
			size = fmt.Sprintf("more than %d bytes (the check read no further)", len(r.body))
		}
		ev := append([]string(nil), r.chain...)
		ev = append(ev, "size: "+size,
			fmt.Sprintf("read: the first %d bytes (500 KiB)", robots.MaxSize),
			fmt.Sprintf("ignored: %d lines, %d of them Allow or Disallow rules", lost, rulesLost))
		c.add(IDRobotsTooLarge, Warn,
			fmt.Sprintf("%s is larger than 500 KiB: crawlers read the first 500 KiB and ignore every rule after it (RFC 9309 §2.5)", name),
			ev...)
	}
	g := r.group
	groupName := "no group applies"
	if a := g.Agent(); a != "" {
		groupName = fmt.Sprintf("the group %q applies", a)
		if ls := g.Lines(); len(ls) > 0 {
			groupName += fmt.Sprintf(" (user-agent on line %d)", ls[0])
		}
	}
	if r.disallowsAll() {
		m := g.Match("/")
		c.add(IDRobotsDisallowAll, Warn,
			fmt.Sprintf("%s disallows everything for %s: a crawler that obeys it fetches nothing but robots.txt", name, c.cfg.Agent),
			append(append([]string(nil), r.chain...), groupName, fmt.Sprintf("line %d: %s", m.Line, m.Rule))...)
		return
	}
	ev := append([]string(nil), r.chain...)
	ev = append(ev, fmt.Sprintf("%d lines; for %s %s", rules.Lines(), c.cfg.Agent, groupName))
	if cd, ok := g.CrawlDelayInfo(); ok {
		ev = append(ev, fmt.Sprintf("Crawl-delay: %s (line %d)", cd.Raw, cd.Line))
	}
	for i, is := range rules.Issues() {
		if i == 5 {
			ev = append(ev, fmt.Sprintf("… and %d more lines ignored or read leniently", len(rules.Issues())-5))
			break
		}
		if is.Line == 0 {
			ev = append(ev, "file: "+is.Reason)
		} else {
			ev = append(ev, fmt.Sprintf("line %d: %s: %q", is.Line, is.Reason, is.Text))
		}
	}
	c.add(IDRobots, Info, fmt.Sprintf("%s answers %d and is read as robots.txt", name, r.status), ev...)
}

// disallowsAll reports whether the rules leave the agent nothing to
// fetch. The group's rules are not listed by the robots package, so this
// asks it about paths: the root, a few ordinary ones, and every Allow
// rule of the file with its wildcards filled in. A group that disallows
// all of them allows nothing a crawler could find.
func (r *originRobots) disallowsAll() bool {
	if r.decision.Outcome != robots.OutcomeParsed {
		return false
	}
	g := r.group
	probes := []string{"/", "/index.html", "/a", "/page?id=1", "/gentlecrawl-check/x"}
	for _, line := range strings.Split(string(r.body[:min(len(r.body), robots.MaxSize)]), "\n") {
		key, value, ok := strings.Cut(line, ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(key), "allow") {
			continue
		}
		value, _, _ = strings.Cut(value, "#")
		value = strings.TrimSpace(value)
		if value == "" {
			continue
		}
		p := strings.TrimSuffix(strings.ReplaceAll(value, "*", "x"), "$")
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		probes = append(probes, p)
	}
	for _, p := range probes {
		if p != "/robots.txt" && g.Allowed(p) {
			return false
		}
	}
	return true
}

// countPast counts the lines of body after its first n bytes, and those
// of them that are Allow or Disallow rules.
func countPast(body []byte, n int) (lines, rules int) {
	rest := body[n:]
	if i := bytes.IndexByte(rest, '\n'); i >= 0 && n > 0 && body[n-1] != '\n' {
		rest = rest[i+1:] // the line cut in two was read in part
	}
	for len(rest) > 0 {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		lines++
		key, _, ok := bytes.Cut(line, []byte(":"))
		if k := strings.ToLower(strings.TrimSpace(string(key))); ok && (k == "allow" || k == "disallow") {
			rules++
		}
	}
	return lines, rules
}

// looksHTML reports whether a body served as mediaType is an HTML page.
func looksHTML(mediaType string, body []byte) bool {
	if mediaType == "text/html" || mediaType == "application/xhtml+xml" {
		return true
	}
	head := bytes.ToLower(body[:min(len(body), 1024)])
	head = bytes.TrimLeft(head, "\ufeff \t\r\n")
	for _, p := range []string{"<!doctype html", "<html", "<head", "<body"} {
		if bytes.HasPrefix(head, []byte(p)) {
			return true
		}
	}
	return bytes.Contains(head, []byte("<html")) && bytes.Contains(head, []byte("</"))
}

// htmlTitle returns the text of a page's <title>, shortened; "" without one.
func htmlTitle(body []byte) string {
	head := body[:min(len(body), 64<<10)]
	lower := bytes.ToLower(head)
	i := bytes.Index(lower, []byte("<title"))
	if i < 0 {
		return ""
	}
	j := bytes.IndexByte(lower[i:], '>')
	if j < 0 {
		return ""
	}
	start := i + j + 1
	end := bytes.Index(lower[start:], []byte("</title"))
	if end < 0 {
		return ""
	}
	t := strings.Join(strings.Fields(string(head[start:start+end])), " ")
	if len(t) > 80 {
		t = t[:77] + "…"
	}
	return t
}
