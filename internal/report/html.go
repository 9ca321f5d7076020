package report

import (
	"fmt"
	"html"
	"html/template"
	"io"
	"math"
	"strings"
	"time"
)

// WriteHTML writes the report as one self-contained page: the charts are
// SVG drawn here, the style is inline, and nothing is loaded from anywhere
// (its Content-Security-Policy forbids it), so it reads offline and
// prints. There is no script.
func WriteHTML(w io.Writer, r *Report) error {
	return page.Execute(w, htmlData(r))
}

type htmlBreakdown struct {
	Title string
	Chart template.HTML
}

type htmlHost struct {
	Host
	Codes    string
	WireText string
	URLSpace string
}

type htmlRun struct {
	Run
	StartedText string
	Ended       string
}

type htmlView struct {
	R          *Report
	Jobs       string    // the job directories, when several were read
	Runs       []htmlRun // the runs with their jobs, when several were read
	Period     string
	Facts      [][2]string
	Charts     []htmlBreakdown
	Breakdowns []htmlBreakdown
	Hosts      []htmlHost
}

func htmlData(r *Report) htmlView {
	v := htmlView{R: r, Jobs: strings.Join(r.Jobs, ", ")}
	if len(r.Jobs) > 0 {
		for _, run := range r.Runs {
			ended := run.Stopped
			if !run.Finished.IsZero() {
				ended += fmt.Sprintf(" after %s", run.Finished.Sub(run.Started).Round(time.Second))
			}
			v.Runs = append(v.Runs, htmlRun{Run: run, StartedText: run.Started.Local().Format(time.DateTime), Ended: ended})
		}
	}
	if r.Requests > 0 {
		v.Period = fmt.Sprintf("%s – %s", r.First.Local().Format(time.DateTime), r.Last.Local().Format(time.DateTime))
	}
	v.Facts = [][2]string{
		{"Total requests", group(r.Requests)},
		{"Downloaded (on the wire)", bytesText(r.Bytes.Wire)},
		{"Decoded", bytesText(r.Bytes.Decoded)},
		{"Saved by 304 Not Modified", fmt.Sprintf("%s (%s of %s conditional requests)", bytesText(r.Bytes.SavedNotModified), group(r.Conditional.NotModified), group(r.Conditional.Sent))},
		{"Saved by compression", bytesText(r.Bytes.SavedCompression)},
		{"Response time", fmt.Sprintf("mean %.1f ms, median %.1f ms, p95 %.1f ms", r.ResponseTime.MeanMS, r.ResponseTime.P50MS, r.ResponseTime.P95MS)},
	}
	bs := r.OverTime.Buckets
	times := make([]time.Time, len(bs))
	for i, b := range bs {
		times[i] = b.Start
	}
	series := func(f func(Bucket) float64) []float64 {
		out := make([]float64, len(bs))
		for i, b := range bs {
			out[i] = f(b)
		}
		return out
	}
	if len(bs) > 0 {
		v.Charts = []htmlBreakdown{
			{"Requests", lineChart(times, "requests", []named{{"requests", "#3366cc", series(func(b Bucket) float64 { return float64(b.Requests) })}})},
			{"Download size", lineChart(times, "bytes", []named{
				{"on the wire", "#3366cc", series(func(b Bucket) float64 { return float64(b.Wire) })},
				{"decoded", "#dc8a00", series(func(b Bucket) float64 { return float64(b.Decoded) })},
			})},
			{"Response time", lineChart(times, "ms", []named{
				{"mean", "#3366cc", series(func(b Bucket) float64 { return b.MeanMS })},
				{"median", "#109618", series(func(b Bucket) float64 { return b.P50MS })},
				{"95th percentile", "#dc3912", series(func(b Bucket) float64 { return b.P95MS })},
			})},
			{"Host status", lineChart(times, "requests", []named{
				{"robots.txt fetches", "#3366cc", series(func(b Bucket) float64 { return float64(b.Robots) })},
				{"robots.txt unavailable", "#dc3912", series(func(b Bucket) float64 { return float64(b.RobotsFailed) })},
				{"DNS failures", "#990099", series(func(b Bucket) float64 { return float64(b.DNSFailures) })},
				{"connection failures", "#dc8a00", series(func(b Bucket) float64 { return float64(b.ConnFailures) })},
				{"overloaded (429, 5xx)", "#666666", series(func(b Bucket) float64 { return float64(b.Overloaded) })},
			})},
		}
	}
	v.Breakdowns = []htmlBreakdown{
		{"By response", barChart(r.ByStatus, statusOrder(r.ByStatus))},
		{"By file type", barChart(r.ByType, typeOrder(r.ByType))},
		{"By purpose", barChart(r.ByPurpose, sortedKeys(r.ByPurpose))},
		{"By kind", barChart(r.ByKind, sortedKeys(r.ByKind))},
	}
	if len(r.Errors) > 0 {
		v.Breakdowns = append(v.Breakdowns, htmlBreakdown{"No answer", barChart(r.Errors, sortedKeys(r.Errors))})
	}
	for _, h := range r.Hosts {
		var codes []string
		for _, k := range statusOrder(h.ByStatus) {
			codes = append(codes, fmt.Sprintf("%s × %d", k, h.ByStatus[k]))
		}
		v.Hosts = append(v.Hosts, htmlHost{Host: h, Codes: strings.Join(codes, ", "), WireText: bytesText(h.Wire), URLSpace: urlSpaceText(h.URLSpace)})
	}
	return v
}

type named struct {
	name, color string
	values      []float64
}

const (
	chartW, chartH     = 720, 220
	padL, padR, padT   = 64, 16, 12
	padB               = 40
	plotW, plotH       = chartW - padL - padR, chartH - padT - padB
	barRowH, barLabelW = 22, 120
)

// niceMax rounds a chart's top up to 1, 2 or 5 times a power of ten.
func niceMax(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if x <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func axisText(x float64, unit string) string {
	if unit == "bytes" {
		return bytesText(int64(x))
	}
	if x == math.Trunc(x) {
		return group(int(x))
	}
	return fmt.Sprintf("%.1f", x)
}

// lineChart draws series over the timeline's buckets as an SVG.
func lineChart(times []time.Time, unit string, series []named) template.HTML {
	var b strings.Builder
	top := 0.0
	for _, s := range series {
		for _, v := range s.values {
			top = max(top, v)
		}
	}
	top = niceMax(top)
	n := len(times)
	x := func(i int) float64 {
		if n <= 1 {
			return padL + plotW/2
		}
		return padL + float64(i)*plotW/float64(n-1)
	}
	y := func(v float64) float64 { return padT + plotH - v/top*plotH }
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img">`, chartW, chartH+18*((len(series)+2)/3), chartW, chartH+18*((len(series)+2)/3))
	for k := 0; k <= 4; k++ {
		v := top * float64(k) / 4
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" class="grid"/>`, padL, chartW-padR, y(v), y(v))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" class="ylab">%s</text>`, padL-6, y(v)+4, html.EscapeString(axisText(v, unit)))
	}
	if n > 0 {
		span := times[n-1].Sub(times[0])
		layout := time.TimeOnly
		if span >= 48*time.Hour {
			layout = time.DateOnly
		} else if span >= 12*time.Hour {
			layout = "01-02 15:04"
		}
		ticks := uniqueTicks(n, 5)
		for k, i := range ticks {
			anchor := "middle"
			switch {
			case len(ticks) > 1 && k == 0:
				anchor = "start"
			case len(ticks) > 1 && k == len(ticks)-1:
				anchor = "end"
			}
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="xlab" text-anchor="%s">%s</text>`, x(i), padT+plotH+16, anchor, html.EscapeString(times[i].Local().Format(layout)))
		}
	}
	for _, s := range series {
		var pts []string
		for i, v := range s.values {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(v)))
		}
		if len(pts) == 1 {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`, x(0), y(s.values[0]), s.color)
			continue
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`, s.color, strings.Join(pts, " "))
	}
	for k, s := range series {
		lx, ly := padL+(k%3)*220, chartH+(k/3)*18+2
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d" class="legend">%s</text>`,
			lx, ly-10, s.color, lx+18, ly, html.EscapeString(s.name))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// uniqueTicks picks at most k evenly spread indexes of n.
func uniqueTicks(n, k int) []int {
	var out []int
	for j := 0; j < k; j++ {
		i := 0
		if k > 1 {
			i = int(math.Round(float64(j) * float64(n-1) / float64(k-1)))
		}
		if len(out) == 0 || out[len(out)-1] != i {
			out = append(out, i)
		}
	}
	return out
}

// barChart draws a breakdown as horizontal bars.
func barChart(m map[string]int, keys []string) template.HTML {
	if len(keys) == 0 {
		return template.HTML(`<p class="none">none</p>`)
	}
	total, top := 0, 0
	for _, k := range keys {
		total += m[k]
		top = max(top, m[k])
	}
	const w = 520
	h := len(keys)*barRowH + 4
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img">`, w, h, w, h)
	for i, k := range keys {
		y := i*barRowH + 2
		bw := float64(w-barLabelW-130) * float64(m[k]) / float64(max(top, 1))
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="ylab">%s</text>`, barLabelW-8, y+15, html.EscapeString(k))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" class="bar"/>`, barLabelW, y+2, max(bw, 1), barRowH-6)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="val">%s (%s)</text>`, float64(barLabelW)+max(bw, 1)+6, y+15, group(m[k]), percent(m[k], total))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

var page = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Crawl statistics — {{if .Jobs}}{{.Jobs}}{{else}}{{.R.Job}}{{end}}</title>
<style>
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222; margin: 24px auto; max-width: 960px; padding: 0 16px; background: #fff; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
.sub { color: #555; margin: 0 0 16px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #eee; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.facts th { width: 240px; font-weight: 600; }
.grid { stroke: #e4e4e4; stroke-width: 1; }
.ylab { font-size: 11px; fill: #555; text-anchor: end; }
.xlab { font-size: 11px; fill: #555; }
svg { max-width: 100%; height: auto; }
.legend, .val { font-size: 12px; fill: #333; }
.bar { fill: #3366cc; }
.grid2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(440px, 1fr)); gap: 8px 24px; }
.note { color: #555; font-size: 13px; }
.none { color: #777; }
@media print { body { margin: 0; max-width: none; } h2 { break-after: avoid; } svg, table { break-inside: avoid; } }
</style>
</head>
<body>
<h1>Crawl statistics</h1>
<p class="sub">{{if .Jobs}}Jobs {{.Jobs}} (one crawl shared by {{len .R.Jobs}} processes){{else}}Job {{.R.Job}}{{end}}{{if .Period}} · {{.Period}}{{end}} · {{len .R.Runs}} run{{if ne (len .R.Runs) 1}}s{{end}}</p>
<table class="facts">
{{range .Facts}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>
{{end}}</table>
<p class="note">Every request is counted, robots.txt included: the number the servers' access logs show.</p>
{{if .Runs}}<h2>Runs</h2>
<table>
<tr><th>Job</th><th>Run</th><th>Started</th><th>Requests</th><th>Ended</th></tr>
{{range .Runs}}<tr><td>{{.Job}}</td><td class="n">{{.Run.Run}}</td><td>{{.StartedText}}</td><td class="n">{{.Requests}}</td><td>{{.Ended}}</td></tr>
{{end}}</table>
{{end}}{{if .Charts}}<h2>Over time</h2>
<p class="note">Each point is {{.R.OverTime.Seconds}} s of the crawl.</p>
{{range .Charts}}<h3>{{.Title}}</h3>
{{.Chart}}
{{end}}{{end}}
<h2>Requests broken down</h2>
<div class="grid2">
{{range .Breakdowns}}<div><h3>{{.Title}}</h3>{{.Chart}}</div>
{{end}}</div>
<h2>Hosts</h2>
<p class="note">{{len .Hosts}} of {{.R.HostsTotal}} hosts, the busiest first.</p>
<table>
<tr><th>Host</th><th>Requests</th><th>Answers</th><th>Downloaded</th><th>Mean time</th><th>URLs fetched / queued</th></tr>
{{range .Hosts}}<tr><td>{{.Host.Host}}</td><td class="n">{{.Requests}}</td><td>{{.Codes}}</td><td class="n">{{.WireText}}</td><td class="n">{{printf "%.1f" .MeanMS}} ms</td><td class="n">{{.Fetched}} / {{.Queued}}</td></tr>
{{if or .CrawlDelayIs .Slowed .Validators .Demand .URLSpace}}<tr><td></td><td colspan="5" class="note">
{{if .CrawlDelayIs}}{{.CrawlDelayIs}}<br>{{end}}
{{if .Slowed}}Host load: {{.Slowed}}<br>{{end}}
{{if .Validators}}Validators: {{.Validators}}<br>{{end}}
{{if .Demand}}Change: {{.Demand}}<br>{{end}}
{{if .URLSpace}}URL space: {{.URLSpace}}{{end}}
</td></tr>{{end}}
{{end}}</table>
<p class="note">Made by gentlecrawl report.</p>
</body>
</html>
`))
