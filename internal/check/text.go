package check

import (
	"fmt"
	"io"
	"strings"
)

// WriteText writes the report for a person: one block per finding, fail
// first, with its evidence indented under it, and a closing count.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "gentlecrawl check %s\n", r.URL)
	fmt.Fprintf(&b, "  as %s (robots.txt group for %s)\n\n", r.UserAgent, r.Agent)
	counts := map[Severity]int{}
	for _, f := range r.Findings {
		counts[f.Severity]++
		label := map[Severity]string{Fail: "FAIL", Warn: "WARN", Info: "info"}[f.Severity]
		fmt.Fprintf(&b, "%-4s  %s: %s\n", label, f.ID, f.Message)
		for _, e := range f.Evidence {
			fmt.Fprintf(&b, "        %s\n", e)
		}
	}
	verdict := "no problem found"
	if n := counts[Fail] + counts[Warn]; n > 0 {
		verdict = fmt.Sprintf("%d fail, %d warn", counts[Fail], counts[Warn])
	}
	fmt.Fprintf(&b, "\n%s; %s in %.1f s, %s sampled\n", verdict, plural(r.Requests, "request"), r.Seconds, plural(r.Pages, "HTML page"))
	_, err := io.WriteString(w, b.String())
	return err
}
