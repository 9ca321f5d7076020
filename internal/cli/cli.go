// Package cli is gentlecrawl's command line: subcommands, flags, the config
// file, and the progress display. Everything here turns arguments into a
// library Config and a library result into text; the crawling is done by the
// root package.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Run runs the command line args (without the program name) and returns the
// process exit status. Errors are printed to stderr as one line.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(ctx, stdout, stderr)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(stderr, "gentlecrawl: %v\n", oneLine(err))
		var ex exitError
		if errors.As(err, &ex) {
			return ex.code
		}
		return 1
	}
	return 0
}

// exitError carries a specific exit status.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

func newRoot(ctx context.Context, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "gentlecrawl",
		Short:         "A web crawler site owners are glad to see in their logs",
		Long:          "gentlecrawl obeys robots.txt (RFC 9309) and Crawl-delay, keeps one request at a time per host,\nre-fetches with conditional GET, asks for compression and writes WARC files.",
		Version:       gentlecrawl.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return exitError{code: 2, err: err}
	})
	root.AddCommand(newCrawlCmd(stdout, stderr), newDemoCmd(stdout, stderr), newRobotsCmd(stdout, stderr), newExportCmd(stdout, stderr))
	root.AddCommand(newReportCmd(stdout, stderr))
	root.AddCommand(newCheckCmd(stdout, stderr))
	root.AddCommand(newKeygenCmd(stdout, stderr), newVerifyCmd(stdout, stderr))
	return root
}

// loadConfigFile sets, from a TOML file, every flag of fs that the command
// line did not set. Keys are flag names ("delay = \"2s\"", "connect-to =
// [\"a:80:127.0.0.1:8080\"]"); an unknown key is an error, so a typo is not
// silently ignored. Tables [[host]] give per-host rules:
//
//	[[host]]
//	name  = "shop.example.org"      # "*.example.org" for every subdomain
//	delay = "10s"                   # at most one request per 10 s ...
//	until = "2027-01-31"            # ... until this date (optional)
//	hours = ["09:00-18:00 Europe/Warsaw 20s"]  # slower in the site's busy hours
func loadConfigFile(fs *pflag.FlagSet, path string) ([]gentlecrawl.HostRule, error) {
	var m map[string]any
	if _, err := toml.DecodeFile(path, &m); err != nil {
		return nil, fmt.Errorf("--config %s: %w", path, err)
	}
	var rules []gentlecrawl.HostRule
	if hosts, ok := m["host"]; ok {
		delete(m, "host")
		var err error
		if rules, err = hostRules(hosts); err != nil {
			return nil, fmt.Errorf("--config %s: %w", path, err)
		}
	}
	for key, v := range m {
		f := fs.Lookup(key)
		if f == nil || key == "config" {
			return nil, fmt.Errorf("--config %s: unknown setting %q (settings are named like the flags)", path, key)
		}
		if f.Changed {
			continue // the command line wins
		}
		vals, ok := v.([]any)
		if !ok {
			vals = []any{v}
		}
		for _, x := range vals {
			if err := fs.Set(key, fmt.Sprint(x)); err != nil {
				return nil, fmt.Errorf("--config %s: %s: %w", path, key, err)
			}
		}
	}
	return rules, nil
}

// hostRules reads the [[host]] tables of a config file.
func hostRules(v any) ([]gentlecrawl.HostRule, error) {
	tables, ok := v.([]map[string]any)
	if !ok {
		return nil, errors.New("host: want [[host]] tables")
	}
	var rules []gentlecrawl.HostRule
	for i, t := range tables {
		var r gentlecrawl.HostRule
		for key, val := range t {
			s, isString := val.(string)
			var err error
			switch {
			case key == "name" && isString:
				r.Host = strings.ToLower(s)
			case key == "delay" && isString:
				r.Delay, err = time.ParseDuration(s)
				if err == nil && r.Delay <= 0 {
					err = errors.New("must be positive")
				}
			case key == "until" && isString:
				r.Until, err = time.Parse("2006-01-02", s)
			case key == "hours":
				list, ok := val.([]any)
				if !ok {
					return nil, fmt.Errorf("host %d: hours: want a list of \"HH:MM-HH:MM [ZONE] DELAY\"", i+1)
				}
				for _, x := range list {
					w, err := parseHourWindow(fmt.Sprint(x))
					if err != nil {
						return nil, fmt.Errorf("host %d: %w", i+1, err)
					}
					r.Windows = append(r.Windows, w)
				}
			default:
				return nil, fmt.Errorf("host %d: unknown or malformed setting %q (want name, delay, until, hours)", i+1, key)
			}
			if err != nil {
				return nil, fmt.Errorf("host %d: %s %q: %w", i+1, key, s, err)
			}
		}
		if r.Host == "" {
			return nil, fmt.Errorf("host %d: name is required", i+1)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// isTerminal reports whether w is a terminal, for the refreshed progress line.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
