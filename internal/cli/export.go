package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/gentlecrawl/gentlecrawl/internal/export"
	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
	"github.com/spf13/cobra"
)

type exportFlags struct {
	job     string
	text    bool
	maxBody int64
}

func newExportCmd(stdout, stderr io.Writer) *cobra.Command {
	var f exportFlags
	cmd := &cobra.Command{
		Use:   "export --job DIR [--text]",
		Short: "Print one JSON line per page fetched, read from a job's WARC files",
		Long: `Read the WARC files of a job, in the order they were written, and print one JSON
object a line for every page fetched: each response, and each revisit (a 304 answer
to a conditional GET). robots.txt fetches are left out; sitemaps are pages like any other.

Fields: url, final_url (where a 3xx answer leads; otherwise url), status, fetched
(RFC 3339), content_type, length (bytes of the decoded body), digest (the WARC
payload digest, of the body as received), truncated (when the crawler kept only the
start of the body), title and links (absolute, each once, in document order; HTML
only), text with --text, and error when the body could not be read in full.

Files still being written (.open) are skipped, with a note on stderr.

Exit status: 0 when every record was read; 1 when a WARC file is damaged (the lines
of the records before the damage are printed, and the error names the file and the
byte offset of the damaged record); 2 on bad flags or an unusable job directory.`,
		Example: `  gentlecrawl export --job jobs/example > pages.jsonl
  gentlecrawl export --job jobs/example --text | jq -r 'select(.status == 200) | .title'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runExport(cmd.Context(), f, stdout, stderr)
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVar(&f.job, "job", "", "job directory whose WARC files are read (required)")
	fs.BoolVar(&f.text, "text", false, "add the visible text of each HTML page")
	fs.Int64Var(&f.maxBody, "max-body-size", fetch.DefaultMaxBodySize, "decode at most this many bytes of one body (the crawler's limit); WARC records are read up to twice this plus 1 MiB")
	return cmd
}

func runExport(ctx context.Context, f exportFlags, stdout, stderr io.Writer) error {
	if f.job == "" {
		return exitError{2, errors.New("export: --job DIR is required: the job directory whose WARC files to read")}
	}
	if f.maxBody <= 0 {
		return exitError{2, fmt.Errorf("export: --max-body-size %d: must be positive", f.maxBody)}
	}
	files, open, err := export.Files(f.job)
	if err != nil {
		return exitError{2, fmt.Errorf("export: %w", err)}
	}
	for _, path := range open {
		fmt.Fprintf(stderr, "gentlecrawl: export: skipping %s: still being written, or left by a crash (the next crawl of the job closes it)\n", path)
	}
	if len(files) == 0 {
		fmt.Fprintf(stderr, "gentlecrawl: export: no WARC files in %s: nothing to export\n", filepath.Join(f.job, "warc"))
		return nil
	}

	e := export.New(stdout, export.Options{Text: f.text, MaxBodySize: f.maxBody})
	var damaged []error
	for _, path := range files {
		err := e.File(ctx, path)
		var re *export.ReadError
		switch {
		case err == nil:
		case errors.As(err, &re):
			damaged = append(damaged, err)
		default:
			e.Flush()
			if ctx.Err() != nil {
				return fmt.Errorf("export: interrupted in %s", path)
			}
			return fmt.Errorf("export: writing the output: %w", err)
		}
	}
	if err := e.Flush(); err != nil {
		return fmt.Errorf("export: writing the output: %w", err)
	}
	if len(damaged) > 0 {
		st := e.Stats()
		return exitError{1, fmt.Errorf("export: %d pages written; damaged WARC file: %w", st.Pages, errors.Join(damaged...))}
	}
	return nil
}
