package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
	"github.com/spf13/cobra"
)

type demoFlags struct {
	hosts      int
	pages      int
	delay      time.Duration
	crawlDelay time.Duration
	job        string
	seed       int64
}

func newDemoCmd(stdout, stderr io.Writer) *cobra.Command {
	var f demoFlags
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Crawl a built-in synthetic web, then crawl it again with conditional GET (offline)",
		Long: `demo starts a synthetic web of many hosts inside this process, on 127.0.0.1 only,
crawls it, and crawls it again to show what conditional GETs save. Nothing leaves this machine.
The web's own request log is then read back to show the crawl as the site owners saw it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd.Context(), f, stdout, stderr)
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&f.hosts, "hosts", 20, "hosts in the synthetic web")
	fs.IntVar(&f.pages, "pages", 10, "HTML pages per host, on average")
	fs.DurationVar(&f.delay, "delay", 250*time.Millisecond, "gap between requests to a host (shorter than the default 1s: these servers are ours)")
	fs.DurationVar(&f.crawlDelay, "site-crawl-delay", time.Second, "the Crawl-delay that the crawl-delay hosts ask for in robots.txt")
	fs.StringVar(&f.job, "job", "", "job directory to keep (default: a temporary one, removed at the end)")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the synthetic web")
	return cmd
}

func runDemo(ctx context.Context, f demoFlags, stdout, stderr io.Writer) error {
	web, err := simweb.New(simweb.Config{
		Seed:         f.seed,
		Hosts:        f.hosts,
		PagesPerHost: f.pages,
		CrawlDelay:   f.crawlDelay,
	})
	if err != nil {
		return exitError{2, err}
	}
	srv, err := web.Start("127.0.0.1:0")
	if err != nil {
		return err
	}
	defer srv.Close()

	job := f.job
	if job == "" {
		job, err = os.MkdirTemp("", "gentlecrawl-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(job)
	}

	var seeds []string
	for _, h := range web.Hosts() {
		seeds = append(seeds, "http://"+h.Name+"/")
	}
	fmt.Fprintf(stdout, "A synthetic web of %d hosts is running on %s (loopback only; nothing leaves this machine).\n", len(seeds), srv.Addr)
	fmt.Fprintf(stdout, "Each host answers robots.txt in its own way:\n\n")
	describeHosts(stdout, web)
	fmt.Fprintf(stdout, "\nFirst crawl: robots.txt first on every host, then its pages, one request at a time per host,\nat least %v apart (longer where robots.txt asks with Crawl-delay). Job directory: %s\n\n", f.delay, job)

	connectTo, err := parseConnectTo([]string{"::" + srv.Addr})
	if err != nil {
		return err
	}
	cfg := gentlecrawl.Config{
		JobDir:               job,
		Seeds:                seeds,
		Delay:                f.delay,
		ConnectTo:            connectTo,
		AllowPrivateNetworks: true,
		Logger:               slog.New(slog.DiscardHandler),
	}
	if err := runCrawl(ctx, cfg, stdout, stderr, runOptions{}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nWhat the site owners saw in their logs:\n\n")
	serverView(stdout, web, f.delay)

	web.ResetLog()
	fmt.Fprintf(stdout, "\nSecond crawl (--recrawl): every page again, now with If-None-Match / If-Modified-Since\nfrom the first crawl. Nothing changed, so the servers answer 304 Not Modified without a body.\n\n")
	cfg.Recrawl = true
	if err := runCrawl(ctx, cfg, stdout, stderr, runOptions{}); err != nil {
		return err
	}
	var full, notModified int
	var fullBytes, nmBytes int64
	for _, e := range web.Requests() {
		switch e.Status {
		case 304:
			notModified++
			nmBytes += e.Bytes
		case 200:
			full++
			fullBytes += e.Bytes
		}
	}
	fmt.Fprintf(stdout, "\nServer side of the second crawl: %d answers were 304 (%s of bodies), %d were full 200s (%s).\n",
		notModified, byteSize(nmBytes), full, byteSize(fullBytes))
	if f.job != "" {
		fmt.Fprintf(stdout, "The crawl statistics of both crawls:  gentlecrawl report --job %s  (--html FILE for charts)\n", f.job)
	}
	fmt.Fprintf(stdout, "Try it on a real site:  gentlecrawl crawl --job jobs/mysite --from you@example.org https://example.org/\n")
	return nil
}

func describeHosts(w io.Writer, web *simweb.Web) {
	byProfile := make(map[simweb.Profile][]string)
	var order []simweb.Profile
	for _, h := range web.Hosts() {
		if _, ok := byProfile[h.Profile]; !ok {
			order = append(order, h.Profile)
		}
		byProfile[h.Profile] = append(byProfile[h.Profile], h.Name)
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, p := range order {
		fmt.Fprintf(tw, "  %s\t%s\n", profileText(p), strings.Join(byProfile[p], " "))
	}
	tw.Flush()
}

func profileText(p simweb.Profile) string {
	switch p {
	case simweb.ProfileAllow:
		return "allows everything"
	case simweb.ProfileDisallow:
		return "disallows /private/ and /search"
	case simweb.ProfileCrawlDelay:
		return "asks for a Crawl-delay"
	case simweb.ProfileNotFound:
		return "has no robots.txt (404)"
	case simweb.ProfileError:
		return "robots.txt fails (500)"
	case simweb.ProfileHTML:
		return "robots.txt is an HTML page"
	case simweb.ProfileRedirect:
		return "robots.txt redirects"
	case simweb.ProfileAgent:
		return "has rules for gentlecrawl only"
	}
	return string(p)
}

// serverView summarizes the web's request log per host: what each site owner
// would read in their access log.
func serverView(w io.Writer, web *simweb.Web, delay time.Duration) {
	type hostLog struct {
		requests, robots, notModified int
		bytes                         int64
		minGap                        time.Duration
		overlap                       bool
		lastEnd                       time.Time
	}
	logs := make(map[string]*hostLog)
	entries := web.Requests()
	sort.Slice(entries, func(i, j int) bool { return entries[i].Start.Before(entries[j].Start) })
	for _, e := range entries {
		h := logs[e.Host]
		if h == nil {
			h = &hostLog{minGap: -1}
			logs[e.Host] = h
		}
		h.requests++
		h.bytes += e.Bytes
		if strings.HasPrefix(e.Path, "/robots") {
			h.robots++
		}
		if !h.lastEnd.IsZero() {
			gap := e.Start.Sub(h.lastEnd)
			if gap < 0 {
				h.overlap = true
			} else if h.minGap < 0 || gap < h.minGap {
				h.minGap = gap
			}
		}
		h.lastEnd = e.End
	}
	overall, overlaps := time.Duration(-1), 0
	for _, h := range logs {
		if h.overlap {
			overlaps++
		}
		if h.minGap >= 0 && (overall < 0 || h.minGap < overall) {
			overall = h.minGap
		}
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  host\trequests\trobots.txt\tbytes sent\tshortest gap\tprofile\t\n")
	for _, host := range web.Hosts() {
		h := logs[host.Name]
		if h == nil {
			fmt.Fprintf(tw, "  %s\t0\t0\t0 B\t-\t%s\t\n", host.Name, host.Profile)
			continue
		}
		gap := "-"
		if h.minGap >= 0 {
			gap = h.minGap.Round(time.Millisecond).String()
		}
		if h.overlap {
			gap = "OVERLAP"
		}
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%s\t%s\t%s\t\n", host.Name, h.requests, h.robots, byteSize(h.bytes), gap, host.Profile)
	}
	tw.Flush()
	switch {
	case overlaps > 0:
		fmt.Fprintf(w, "\n  PROBLEM: %d hosts had two requests in flight at once.\n", overlaps)
	case overall >= 0 && overall < delay:
		fmt.Fprintf(w, "\n  PROBLEM: a gap of %v, below the delay of %v.\n", overall, delay)
	default:
		fmt.Fprintf(w, "\n  Never two requests at once to a host. The shortest gap between the end of one request and\n  the start of the next to the same host was %v (the delay is %v; Crawl-delay hosts got theirs).\n",
			overall.Round(time.Millisecond), delay)
	}
}
