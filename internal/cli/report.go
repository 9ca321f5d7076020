package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/gentlecrawl/gentlecrawl/internal/report"
	"github.com/spf13/cobra"
)

type reportFlags struct {
	jobs  []string
	json  bool
	html  string
	run   int
	hosts int
}

func newReportCmd(stdout, stderr io.Writer) *cobra.Command {
	var f reportFlags
	cmd := &cobra.Command{
		Use:   "report --job DIR [--job DIR…] [--json] [--html FILE] [--run N]",
		Short: "Crawl statistics of a job: requests, bytes and response times over time, breakdowns, hosts",
		Long: `Show what a crawl job did, as a site owner's crawl-statistics page shows it:
requests, download size and response time over time; requests by response code,
file type (HTML, image, CSS, JavaScript, PDF, other), purpose (discovery,
refresh) and kind (page, robots.txt, sitemap); host status over time (robots.txt
fetches, DNS and connection failures); the bandwidth that 304 Not Modified and
compression saved; and per host its requests, its Crawl-delay and what that
means, how the crawler adapted to its load, and its URL-space findings.

It reads the job's request logs (requests/*.tsv, one line per request sent,
robots.txt included) and runs.jsonl; a job may be read while it is crawled.
A crawl shared by several processes (crawl --frontier) leaves one job directory
per process: give each with --job, and the report is of them all as one crawl,
its runs listed with their job.

Text by default; --json prints one JSON document whose "requests" is every
request sent, the number the servers logged; --html FILE writes one
self-contained page with SVG charts, readable offline and printable.`,
		Example: `  gentlecrawl report --job crawl1
  gentlecrawl report --job crawl1 --run 2 --json | jq .by_status
  gentlecrawl report --job crawl1 --html crawl1.html
  gentlecrawl report --job shared-a --job shared-b`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return exitError{2, fmt.Errorf("report: unexpected argument %q (the job is given with --job)", args[0])}
			}
			if len(f.jobs) == 0 {
				return exitError{2, errors.New("report: --job DIR is required")}
			}
			for _, job := range f.jobs {
				if job == "" {
					return exitError{2, errors.New("report: --job: an empty directory name")}
				}
			}
			if f.run < 0 {
				return exitError{2, fmt.Errorf("report: --run %d: runs are numbered from 1", f.run)}
			}
			if f.hosts < 0 {
				return exitError{2, fmt.Errorf("report: --hosts %d: want a positive number", f.hosts)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(f, stdout)
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringArrayVar(&f.jobs, "job", nil, "the job `DIR` of the crawl; repeat for the job directories of a crawl shared by several processes (--frontier)")
	fs.BoolVar(&f.json, "json", false, "print one JSON document")
	fs.StringVar(&f.html, "html", "", "also write a self-contained HTML page with charts to `FILE`")
	fs.IntVar(&f.run, "run", 0, "report on run `N` only (runs are numbered from 1; default all)")
	fs.IntVar(&f.hosts, "hosts", 25, "list the `N` busiest hosts")
	return cmd
}

func runReport(f reportFlags, stdout io.Writer) error {
	r, err := report.ReadJobs(f.jobs, report.Options{Run: f.run, Hosts: f.hosts})
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, report.ErrNoJob) || errors.Is(err, report.ErrNoRequestLog) ||
			errors.Is(err, report.ErrRunSeveralJobs) {
			return exitError{2, fmt.Errorf("report: %w", err)}
		}
		return fmt.Errorf("report: %w", err)
	}
	if f.html != "" {
		if err := writeFileAtomic(f.html, func(w io.Writer) error { return report.WriteHTML(w, r) }); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	w := bufio.NewWriter(stdout)
	if f.json {
		err = report.WriteJSON(w, r)
	} else {
		err = report.WriteText(w, r)
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

// writeFileAtomic writes a file through a temporary file beside it and a
// rename, so that a failed write leaves no half file.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(tmp)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
