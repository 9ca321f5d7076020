package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
	"github.com/gentlecrawl/gentlecrawl/robots"
	"github.com/spf13/cobra"
)

type robotsFlags struct {
	agent        string
	json         bool
	resolve      []string
	connectTo    []string
	allowPrivate bool
	proxy        proxyFlags
	timeout      time.Duration
}

func newRobotsCmd(stdout, stderr io.Writer) *cobra.Command {
	var f robotsFlags
	cmd := &cobra.Command{
		Use:   "robots [flags] ROBOTS [URL...]",
		Short: "Test URLs against a robots.txt (a file, '-' for stdin, or an http(s) URL)",
		Long: `Test URLs against a robots.txt as gentlecrawl reads it (RFC 9309).

ROBOTS is a file, '-' for standard input, or an http(s) URL, fetched as the
crawler fetches it: up to five redirects, and the status read as the crawler
reads it (404: no restrictions; 5xx, 429 or no answer: complete disallow).

For each URL it prints whether the agent may fetch it and the rule that
decided, with its line. It also prints the group chosen, Crawl-delay,
Sitemaps, Clean-param, and every line that was ignored or read leniently.

Exit status: 0 when every URL is allowed, 1 when one is disallowed, 2 on error.`,
		Example: `  gentlecrawl robots robots.txt https://example.org/private/x /public/y
  curl -s https://example.org/robots.txt | gentlecrawl robots --agent mybot - /x
  gentlecrawl robots --json https://example.org/robots.txt https://example.org/x`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 {
				return exitError{2, errors.New("robots: want ROBOTS (a file, '-' or a URL) and the URLs to test")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			f.proxy.parsed(cmd.Flags())
			return runRobots(cmd.Context(), f, args[0], args[1:], cmd.InOrStdin(), stdout)
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVar(&f.agent, "agent", "gentlecrawl", "product token whose group applies (letters, - and _)")
	fs.BoolVar(&f.json, "json", false, "print JSON")
	fs.StringArrayVar(&f.resolve, "resolve", nil, "HOST:PORT:ADDR — connect to ADDR for HOST:PORT, as curl does (repeatable)")
	fs.StringArrayVar(&f.connectTo, "connect-to", nil, "HOST1:PORT1:HOST2:PORT2 — connect to HOST2:PORT2 instead, as curl does (repeatable)")
	fs.BoolVar(&f.allowPrivate, "allow-private-networks", false, "allow loopback and private addresses (refused by default)")
	f.proxy.add(fs)
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "limit on one HTTP exchange, body included")
	return cmd
}

// robotsReport is the tester's result; its JSON form is the --json output.
type robotsReport struct {
	Source      string            `json:"source"`          // the file, "-" or the URL
	Fetch       *robotsFetch      `json:"fetch,omitempty"` // when ROBOTS is a URL
	Agent       string            `json:"agent"`           // the product token
	Group       robotsGroup       `json:"group"`           // the group that applies
	CrawlDelay  *robotsCrawlDelay `json:"crawl_delay"`     // null when the group has none
	Sitemaps    []string          `json:"sitemaps"`        // file order
	CleanParams []robotsClean     `json:"clean_params"`    // file order
	Issues      []robots.Issue    `json:"issues"`          // lines ignored or read leniently
	Lines       int               `json:"lines"`           // lines read
	URLs        []robotsURL       `json:"urls"`            // one per URL argument
	Disallowed  int               `json:"disallowed"`      // how many URLs are disallowed
}

type robotsFetch struct {
	Chain   []string `json:"chain"`   // URL and status of each request, in order
	Status  int      `json:"status"`  // of the last response; 0 when there was none
	Outcome string   `json:"outcome"` // parsed, unrestricted or unavailable
	Rules   string   `json:"rules"`   // response, last-good-copy, disallow-all, assumed-allow
	Reason  string   `json:"reason"`
	Expires string   `json:"expires"` // when the crawler would ask again (RFC 3339)
}

type robotsGroup struct {
	Agent string `json:"agent"` // "*", the token, or "" when no group applies
	Lines []int  `json:"lines"` // first user-agent line of each group merged
}

type robotsCrawlDelay struct {
	Seconds float64 `json:"seconds"`
	Raw     string  `json:"raw"`
	Line    int     `json:"line"`
	Absurd  bool    `json:"absurd"` // longer than robots.MaxCrawlDelay
}

type robotsClean struct {
	Params []string `json:"params"`
	Prefix string   `json:"prefix"`
	Line   int      `json:"line"`
}

type robotsURL struct {
	URL     string `json:"url"`
	Path    string `json:"path"` // what the rules are matched against
	Allowed bool   `json:"allowed"`
	Rule    string `json:"rule"` // the deciding rule as written; "" when none matched
	Line    int    `json:"line"` // its line; 0 when no rule matched
}

func runRobots(ctx context.Context, f robotsFlags, source string, urls []string, stdin io.Reader, stdout io.Writer) error {
	if err := robots.ValidateAgent(f.agent); err != nil {
		return exitError{2, fmt.Errorf("--agent: %w", err)}
	}
	rep := robotsReport{Source: source, Agent: f.agent}
	var rules *robots.Robots
	switch {
	case source == "-":
		body, err := readLimited(stdin)
		if err != nil {
			return exitError{2, fmt.Errorf("reading robots.txt from stdin: %w", err)}
		}
		rules = robots.Parse(body)
	case strings.HasPrefix(source, "http://") || strings.HasPrefix(source, "https://"):
		d, chain, err := fetchRobots(ctx, f, source)
		if err != nil {
			return exitError{2, err}
		}
		rules = d.Robots
		rep.Fetch = &robotsFetch{
			Chain: chain, Status: d.status, Outcome: d.Outcome.String(), Rules: d.Source.String(),
			Reason: d.Reason, Expires: d.Expires.UTC().Format(time.RFC3339),
		}
	default:
		fh, err := os.Open(source)
		if err != nil {
			return exitError{2, err}
		}
		body, err := readLimited(fh)
		fh.Close()
		if err != nil {
			return exitError{2, fmt.Errorf("reading %s: %w", source, err)}
		}
		rules = robots.Parse(body)
	}

	g := rules.Group(f.agent)
	rep.Group = robotsGroup{Agent: g.Agent(), Lines: g.Lines()}
	if cd, ok := g.CrawlDelayInfo(); ok {
		rep.CrawlDelay = &robotsCrawlDelay{Seconds: cd.Delay.Seconds(), Raw: cd.Raw, Line: cd.Line, Absurd: cd.Absurd}
	}
	rep.Sitemaps = nonNil(rules.Sitemaps())
	rep.CleanParams = []robotsClean{}
	for _, c := range rules.CleanParams() {
		rep.CleanParams = append(rep.CleanParams, robotsClean{Params: c.Params, Prefix: c.Prefix, Line: c.Line})
	}
	rep.Issues = nonNil(rules.Issues())
	rep.Lines = rules.Lines()
	rep.URLs = []robotsURL{}
	for _, u := range urls {
		path := robots.PathQuery(u)
		m := g.Match(path)
		rep.URLs = append(rep.URLs, robotsURL{URL: u, Path: path, Allowed: m.Allowed, Rule: m.Rule, Line: m.Line})
		if !m.Allowed {
			rep.Disallowed++
		}
	}

	if f.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return exitError{2, err}
		}
	} else {
		writeRobotsReport(stdout, &rep)
	}
	if rep.Disallowed > 0 {
		return exitError{1, fmt.Errorf("%d of %d URLs disallowed for %s", rep.Disallowed, len(urls), f.agent)}
	}
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// readLimited reads what Parse reads of a body, and one byte more so that
// Parse can tell the file was longer.
func readLimited(r io.Reader) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, robots.MaxSize+1))
}

// robotsDecision is a Decision with the status of the last response.
type robotsDecision struct {
	robots.Decision
	status int
}

// fetchRobots fetches a robots.txt URL as the crawler does: following up
// to five redirects itself (the fetch client follows none), then reading the
// answer with robots.Decide. It returns the chain of requests, one
// "URL → status" line each.
func fetchRobots(ctx context.Context, f robotsFlags, rawURL string) (robotsDecision, []string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return robotsDecision{}, nil, fmt.Errorf("robots.txt URL %q: not an absolute http(s) URL", rawURL)
	}
	cfg := fetch.Config{
		UserAgent:            fmt.Sprintf("%s/%s (+%s)", f.agent, gentlecrawl.Version, gentlecrawl.InfoURL),
		AllowPrivateNetworks: f.allowPrivate,
		Timeout:              f.timeout,
		MaxBodySize:          robots.MaxSize,
	}
	for _, r := range f.resolve {
		rr, err := fetch.ParseResolve(r)
		if err != nil {
			return robotsDecision{}, nil, err
		}
		cfg.Resolve = append(cfg.Resolve, rr)
	}
	for _, c := range f.connectTo {
		cr, err := fetch.ParseConnectTo(c)
		if err != nil {
			return robotsDecision{}, nil, err
		}
		cfg.ConnectTo = append(cfg.ConnectTo, cr)
	}
	if cfg.Proxy, err = f.proxy.proxy(); err != nil {
		return robotsDecision{}, nil, err
	}
	if err := cfg.CheckTargets(); err != nil {
		return robotsDecision{}, nil, err
	}
	client, err := fetch.New(cfg)
	if err != nil {
		return robotsDecision{}, nil, err
	}
	defer client.Close()

	var policy robots.Policy
	var chain []string
	var resp robots.Response
	for {
		res, err := client.Do(ctx, fetch.Request{URL: u})
		if err != nil {
			if errors.Is(err, fetch.ErrPrivateNetwork) {
				return robotsDecision{}, chain, err
			}
			if ctx.Err() != nil {
				return robotsDecision{}, chain, ctx.Err()
			}
			chain = append(chain, u.String()+" → "+err.Error())
			resp.Err = err
			break
		}
		chain = append(chain, u.String()+" → "+strconv.Itoa(res.Status))
		resp.Status = res.Status
		if res.Status >= 300 && res.Status < 400 && policy.FollowRedirect(resp.Hops) {
			loc, lerr := u.Parse(res.Header.Get("Location"))
			if lerr == nil && res.Header.Get("Location") != "" && (loc.Scheme == "http" || loc.Scheme == "https") {
				u = loc
				resp.Hops++
				continue
			}
		}
		resp.CacheControl = strings.Join(res.Header.Values("Cache-Control"), ",")
		resp.Body = res.Body
		switch {
		case res.Undecoded != "":
			resp.Err = fmt.Errorf("body in an encoding that cannot be decoded (Content-Encoding: %s)", res.Undecoded)
		case res.DecodeErr != nil, res.Truncated == fetch.TruncatedTime, res.Truncated == fetch.TruncatedDisconnect:
			resp.Truncated = true
		}
		break
	}
	d := robots.Decide(resp, robots.Record{}, time.Now())
	return robotsDecision{Decision: d, status: resp.Status}, chain, nil
}

func writeRobotsReport(w io.Writer, rep *robotsReport) {
	fmt.Fprintf(w, "robots.txt: %s (%d lines)\n", rep.Source, rep.Lines)
	if f := rep.Fetch; f != nil {
		for _, c := range f.Chain {
			fmt.Fprintf(w, "  fetched %s\n", c)
		}
		fmt.Fprintf(w, "  %s\n", f.Reason)
	}
	switch g := rep.Group; {
	case g.Agent == "":
		fmt.Fprintf(w, "group: none (no group names %s and there is no \"*\" group): everything allowed\n", rep.Agent)
	case len(g.Lines) == 0:
		fmt.Fprintf(w, "group: %s\n", g.Agent)
	default:
		fmt.Fprintf(w, "group: %s (user-agent on line %s)\n", g.Agent, joinInts(g.Lines))
	}
	if cd := rep.CrawlDelay; cd != nil {
		d := time.Duration(cd.Seconds * float64(time.Second))
		fmt.Fprintf(w, "crawl-delay: %v (line %d: %q)", d, cd.Line, cd.Raw)
		if cd.Absurd {
			fmt.Fprintf(w, " — absurd: more than %v between requests; a crawler should not trust it blindly", robots.MaxCrawlDelay)
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintln(w, "crawl-delay: none")
	}
	if len(rep.Sitemaps) > 0 {
		fmt.Fprintln(w, "sitemaps:")
		for _, s := range rep.Sitemaps {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	if len(rep.CleanParams) > 0 {
		fmt.Fprintln(w, "clean-param:")
		for _, c := range rep.CleanParams {
			fmt.Fprintf(w, "  line %d: %s for %s\n", c.Line, strings.Join(c.Params, "&"), c.Prefix)
		}
	}
	if len(rep.Issues) > 0 {
		fmt.Fprintln(w, "lines ignored or read leniently:")
		for _, is := range rep.Issues {
			what := "note"
			if is.Ignored {
				what = "ignored"
			}
			if is.Line == 0 {
				fmt.Fprintf(w, "  file: %s: %s\n", what, is.Reason)
				continue
			}
			fmt.Fprintf(w, "  line %d: %s: %s: %q\n", is.Line, what, is.Reason, is.Text)
		}
	}
	for _, u := range rep.URLs {
		verdict := "allowed   "
		if !u.Allowed {
			verdict = "DISALLOWED"
		}
		why := "no rule matches"
		switch {
		case u.Line > 0:
			why = fmt.Sprintf("line %d: %s", u.Line, u.Rule)
		case u.Rule != "":
			why = u.Rule
		case u.Path == "/robots.txt" || strings.HasPrefix(u.Path, "/robots.txt?"):
			why = "/robots.txt is always allowed"
		}
		fmt.Fprintf(w, "%s %s  (%s)\n", verdict, u.URL, why)
	}
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
