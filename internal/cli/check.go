package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/check"
	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
	"github.com/gentlecrawl/gentlecrawl/robots"
	"github.com/spf13/cobra"
)

type checkFlags struct {
	json         bool
	agent        string
	resolve      []string
	connectTo    []string
	allowPrivate bool
	proxy        proxyFlags
	delay        time.Duration
	budget       time.Duration
	slow         time.Duration
}

func newCheckCmd(stdout, stderr io.Writer) *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check [flags] URL",
		Short: "Audit a site for crawler-friendliness: robots.txt, validators, compression, soft 404s",
		Long: `Audit a site the way gentlecrawl meets it, for its owner.

check reads the site's robots.txt as the crawler reads it (up to five
redirects; 404: no restrictions; 5xx, 429 or no answer: nothing may be
fetched), then a small sample of pages starting at URL and following links
on the host, and reports findings, each with its evidence: robots.txt
problems, what a Crawl-delay costs, pages without validators or whose
conditional requests are ignored, uncompressed pages, session ids in links,
soft 404s, slow answers.

It is polite: robots.txt first, one request at a time, at least --delay and
any Crawl-delay apart, never a disallowed URL, at most 60 requests in all,
and done within --time: a long Crawl-delay or slow answers make the sample
smaller, and the report says so.

Exit status: 0 when no finding is a warning or a failure, 1 when one is,
2 when the check could not run (a bad URL, a host that does not resolve or
refuses connections).`,
		Example: `  gentlecrawl check https://example.org/
  gentlecrawl check --json https://example.org/blog/ | jq '.findings[] | select(.severity != "info")'
  gentlecrawl check --resolve example.org:443:192.0.2.10 https://example.org/`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return exitError{2, errors.New("check: want one URL")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			f.proxy.parsed(cmd.Flags())
			return runCheck(cmd, f, args[0], stdout)
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.BoolVar(&f.json, "json", false, "print one JSON document")
	fs.StringVar(&f.agent, "agent", check.DefaultAgent, "product token whose robots.txt group applies (letters, - and _)")
	fs.DurationVar(&f.delay, "delay", check.DefaultDelay, "least time between two requests (a longer Crawl-delay wins)")
	fs.DurationVar(&f.budget, "time", check.DefaultTime, "time budget of the whole check")
	fs.DurationVar(&f.slow, "slow", check.DefaultSlowTTFB, "median time to first byte above which the site is slow")
	fs.StringArrayVar(&f.resolve, "resolve", nil, "HOST:PORT:ADDR — connect to ADDR for HOST:PORT, as curl does (repeatable)")
	fs.StringArrayVar(&f.connectTo, "connect-to", nil, "HOST1:PORT1:HOST2:PORT2 — connect to HOST2:PORT2 instead, as curl does (repeatable)")
	fs.BoolVar(&f.allowPrivate, "allow-private-networks", false, "allow loopback and private addresses (refused by default)")
	f.proxy.add(fs)
	return cmd
}

func runCheck(cmd *cobra.Command, f checkFlags, rawURL string, stdout io.Writer) error {
	if err := robots.ValidateAgent(f.agent); err != nil {
		return exitError{2, fmt.Errorf("--agent: %w", err)}
	}
	if f.delay <= 0 || f.budget <= 0 || f.slow <= 0 {
		return exitError{2, errors.New("check: --delay, --time and --slow must be positive")}
	}
	cfg := check.Config{
		// The crawler's User-Agent, saying it is the check.
		UserAgent:            fmt.Sprintf("%s/%s (+%s; check)", f.agent, gentlecrawl.Version, gentlecrawl.InfoURL),
		Agent:                f.agent,
		Delay:                f.delay,
		Time:                 f.budget,
		SlowTTFB:             f.slow,
		AllowPrivateNetworks: f.allowPrivate,
	}
	for _, r := range f.resolve {
		rr, err := fetch.ParseResolve(r)
		if err != nil {
			return exitError{2, err}
		}
		cfg.Resolve = append(cfg.Resolve, rr)
	}
	for _, c := range f.connectTo {
		cr, err := fetch.ParseConnectTo(c)
		if err != nil {
			return exitError{2, err}
		}
		cfg.ConnectTo = append(cfg.ConnectTo, cr)
	}
	proxy, err := f.proxy.proxy()
	if err != nil {
		return exitError{2, err}
	}
	cfg.Proxy = proxy
	rep, err := check.Run(cmd.Context(), cfg, rawURL)
	if err != nil {
		return exitError{2, err}
	}
	if f.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return exitError{2, err}
		}
	} else if err := rep.WriteText(stdout); err != nil {
		return exitError{2, err}
	}
	if n := rep.Problems(); n > 0 {
		what := "findings"
		if n == 1 {
			what = "finding"
		}
		return exitError{1, fmt.Errorf("check: %d %s to look at (fail or warn)", n, what)}
	}
	return nil
}
