package report

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/reqlog"
)

// WriteJSON writes the report as one JSON document.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// bytesText writes a byte count for people: "1.2 MB".
func bytesText(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	x, suffix := float64(n), "kMGTPE"
	i := -1
	for x >= unit && i < len(suffix)-1 {
		x /= unit
		i++
	}
	return fmt.Sprintf("%.1f %cB", x, suffix[i])
}

func percent(n, of int) string {
	if of == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(n)/float64(of))
}

// sortedKeys returns a breakdown's keys, the largest count first.
func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(a, b)
	})
	return keys
}

// statusOrder sorts status keys numerically, "none" last.
func statusOrder(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		x, errA := strconv.Atoi(a)
		y, errB := strconv.Atoi(b)
		switch {
		case errA != nil && errB != nil:
			return strings.Compare(a, b)
		case errA != nil:
			return 1
		case errB != nil:
			return -1
		}
		return x - y
	})
	return keys
}

// typeOrder lists file types in the report's order, then any others.
func typeOrder(m map[string]int) []string {
	var keys []string
	for _, t := range append(slices.Clone(reqlog.Types), "none") {
		if m[t] > 0 {
			keys = append(keys, t)
		}
	}
	for _, k := range sortedKeys(m) {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// WriteText writes the report for a person at a terminal.
func WriteText(w io.Writer, r *Report) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	if len(r.Jobs) > 0 {
		p("Crawl statistics for one crawl shared by %d jobs: %s", len(r.Jobs), strings.Join(r.Jobs, ", "))
	} else {
		p("Crawl statistics for %s", r.Job)
	}
	for _, run := range r.Runs {
		of := ""
		if run.Job != "" {
			of = " of " + run.Job
		}
		line := fmt.Sprintf("  run %d%s: started %s, %d requests, %s", run.Run, of, run.Started.Local().Format(time.DateTime), run.Requests, run.Stopped)
		if !run.Finished.IsZero() {
			line += fmt.Sprintf(" after %s", run.Finished.Sub(run.Started).Round(time.Second))
		}
		p("%s", line)
	}
	p("")
	if r.Requests == 0 {
		p("No requests were sent.")
		_, err := io.WriteString(w, b.String())
		return err
	}
	if r.Retried > 0 {
		p("Total requests      %d (robots.txt included), %d of them sent twice after a kept-alive connection dropped: %d in the servers' logs at most", r.Requests, r.Retried, r.Requests+r.Retried)
	} else {
		p("Total requests      %d (robots.txt included: the number the servers logged)", r.Requests)
	}
	p("Period              %s – %s (%s)", r.First.Local().Format(time.DateTime), r.Last.Local().Format(time.DateTime), r.Last.Sub(r.First).Round(time.Second))
	p("Downloaded          %s on the wire, %s decoded", bytesText(r.Bytes.Wire), bytesText(r.Bytes.Decoded))
	p("Saved               %s by %d answers 304 Not Modified (of %d conditional requests), %s by compression",
		bytesText(r.Bytes.SavedNotModified), r.Conditional.NotModified, r.Conditional.Sent, bytesText(r.Bytes.SavedCompression))
	p("Response time       mean %.1f ms, median %.1f ms, 95th percentile %.1f ms (time to first byte: median %.1f ms)",
		r.ResponseTime.MeanMS, r.ResponseTime.P50MS, r.ResponseTime.P95MS, r.TTFB.P50MS)
	p("")

	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	section := func(title string, m map[string]int, keys []string, total int) {
		fmt.Fprintf(tw, "%s\t\t\n", title)
		for _, k := range keys {
			fmt.Fprintf(tw, "  %s\t%d\t%s\n", k, m[k], percent(m[k], total))
		}
		fmt.Fprintf(tw, "\t\t\n")
	}
	section("By response", r.ByStatus, statusOrder(r.ByStatus), r.Requests)
	section("By file type", r.ByType, typeOrder(r.ByType), r.Requests)
	pages := 0
	for _, n := range r.ByPurpose {
		pages += n
	}
	section("By purpose (URL fetches)", r.ByPurpose, sortedKeys(r.ByPurpose), pages)
	section("By kind", r.ByKind, sortedKeys(r.ByKind), r.Requests)
	if len(r.Errors) > 0 {
		section("No answer", r.Errors, sortedKeys(r.Errors), r.Requests)
	}
	tw.Flush()

	if rows := textRows(r.OverTime, maxTextRows); len(rows) > 0 {
		p("Over time (%s a row)", rows[0].width)
		tw = tabwriter.NewWriter(&b, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "from\trequests\twire\tmean ms\tp95 ms\t304\toverloaded\trobots.txt\tDNS failed\tconnection failed\t\n")
		layout := time.TimeOnly
		if r.Last.Sub(r.First) >= 12*time.Hour {
			layout = "01-02 15:04"
		}
		for _, bk := range rows {
			if bk.Requests == 0 {
				continue
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%.1f\t%.1f\t%d\t%d\t%d\t%d\t%d\t\n", bk.Start.Local().Format(layout), bk.Requests,
				bytesText(bk.Wire), bk.MeanMS, bk.P95MS, bk.NotModified, bk.Overloaded, bk.Robots, bk.DNSFailures, bk.ConnFailures)
		}
		tw.Flush()
		p("")
	}

	p("Hosts (%d of %d, the busiest first)", len(r.Hosts), r.HostsTotal)
	for _, h := range r.Hosts {
		codes := make([]string, 0, len(h.ByStatus))
		for _, k := range statusOrder(h.ByStatus) {
			codes = append(codes, fmt.Sprintf("%s × %d", k, h.ByStatus[k]))
		}
		p("  %s: %d requests (%s), %s, mean %.1f ms; %d URLs fetched, %d queued",
			h.Host, h.Requests, strings.Join(codes, ", "), bytesText(h.Wire), h.MeanMS, h.Fetched, h.Queued)
		if h.CrawlDelayIs != "" {
			p("    %s", h.CrawlDelayIs)
		}
		if h.Slowed != "" {
			p("    host load: %s", h.Slowed)
		}
		if h.Validators != "" {
			p("    validators: %s", h.Validators)
		}
		if h.Demand != "" {
			p("    change: %s", h.Demand)
		}
		if s := urlSpaceText(h.URLSpace); s != "" {
			p("    URL space: %s", s)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// urlSpaceText is one line on a host's URL-space findings.
func urlSpaceText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s struct {
		Refused        map[string]int `json:"refused"`
		Irrelevant     []string       `json:"irrelevant_params"`
		Exploding      string         `json:"exploding"`
		NearDuplicates int            `json:"near_duplicates"`
		Traps          []struct {
			Pattern string `json:"pattern"`
		} `json:"traps"`
		Families []struct {
			Pattern string `json:"pattern"`
			Spent   bool   `json:"spent"`
		} `json:"families"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	var parts []string
	if s.Exploding != "" {
		parts = append(parts, s.Exploding)
	}
	for _, t := range s.Traps {
		parts = append(parts, "trap "+t.Pattern)
	}
	for _, f := range s.Families {
		if f.Spent {
			parts = append(parts, "URL family yielding nothing "+f.Pattern)
		}
	}
	if n := len(s.Refused); n > 0 {
		refused := 0
		for _, v := range s.Refused {
			refused += v
		}
		parts = append(parts, fmt.Sprintf("%d URLs refused as trap-shaped", refused))
	}
	if len(s.Irrelevant) > 0 {
		parts = append(parts, "parameters that change nothing: "+strings.Join(s.Irrelevant, "; "))
	}
	if s.NearDuplicates > 0 {
		parts = append(parts, fmt.Sprintf("%d near-duplicate pages", s.NearDuplicates))
	}
	return strings.Join(parts, "; ")
}

// maxTextRows bounds the timeline in the text report; the JSON and HTML
// forms have every bucket.
const maxTextRows = 24

type textRow struct {
	Bucket
	width time.Duration
}

// textRows joins the timeline's buckets k at a time so that at most limit
// rows remain. A row's p95 is the highest of its buckets' (the
// distribution itself is not kept per bucket), and its mean is weighted by
// the requests.
func textRows(tl Timeline, limit int) []textRow {
	n := len(tl.Buckets)
	if n == 0 {
		return nil
	}
	k := (n + limit - 1) / limit
	width := time.Duration(tl.Seconds*float64(k)) * time.Second
	var rows []textRow
	for i := 0; i < n; i += k {
		row := textRow{width: width}
		row.Start = tl.Buckets[i].Start
		timed := 0.0
		for _, b := range tl.Buckets[i:min(n, i+k)] {
			row.Requests += b.Requests
			row.Wire += b.Wire
			row.Decoded += b.Decoded
			row.NotModified += b.NotModified
			row.Overloaded += b.Overloaded
			row.Robots += b.Robots
			row.RobotsFailed += b.RobotsFailed
			row.DNSFailures += b.DNSFailures
			row.ConnFailures += b.ConnFailures
			row.MeanMS += b.MeanMS * float64(b.Requests)
			timed += float64(b.Requests)
			row.P95MS = max(row.P95MS, b.P95MS)
		}
		if timed > 0 {
			row.MeanMS /= timed
		}
		rows = append(rows, row)
	}
	return rows
}
