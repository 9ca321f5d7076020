package cli

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/hook"
	"github.com/gentlecrawl/gentlecrawl/internal/report"
	"github.com/spf13/cobra"
)

type crawlFlags struct {
	job          string
	agent        string
	from         string
	signKey      string
	sigAgent     string
	delay        time.Duration
	maxPages     int
	maxRate      float64
	maxDepth     int
	scope        string
	crawlDelay   string
	recrawl      bool
	continuous   bool
	forDur       time.Duration
	revisitMin   time.Duration
	revisitMax   time.Duration
	refreshShare float64
	recheckEvery int
	allTypes     bool
	sitemaps     []string
	noSitemaps   bool
	include      []string
	exclude      []string
	resolve      []string
	connectTo    []string
	allowPrivate bool
	proxy        proxyFlags
	frontier     string
	leaseTTL     time.Duration
	config       string
	workers      int
	timeout      time.Duration
	verbose      bool
	quiet        bool
	logFormat    string
	metricsAddr  string
	metricsHosts int
}

func newCrawlCmd(stdout, stderr io.Writer) *cobra.Command {
	var f crawlFlags
	cmd := &cobra.Command{
		Use:   "crawl [flags] URL...",
		Short: "Crawl from seed URLs into a job directory",
		Long: `Crawl from the seed URLs, politely: robots.txt first, one request at a time per host,
at least --delay between requests to a host (longer if robots.txt asks with Crawl-delay).
All state is kept in --job DIR; running the same command again resumes an unfinished crawl.`,
		Example: `  gentlecrawl crawl --job jobs/example --from you@example.org https://example.org/
  gentlecrawl crawl --job jobs/example --recrawl      # fetch everything again with conditional GET
  gentlecrawl crawl --job jobs/example --continuous --max-rate 0.5 https://example.org/
                                                      # keep it fresh: revisit pages as often as they change
  gentlecrawl crawl --job jobs/local --allow-private-networks \
      --connect-to a.test:80:127.0.0.1:8080 http://a.test/`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var rules []gentlecrawl.HostRule
			if f.config != "" {
				var err error
				if rules, err = loadConfigFile(cmd.Flags(), f.config); err != nil {
					return exitError{2, err}
				}
			}
			f.proxy.parsed(cmd.Flags())
			cfg, err := f.toConfig(args, stderr)
			if err != nil {
				return exitError{2, err}
			}
			cfg.HostRules = rules
			if px, _ := f.proxy.proxy(); px != nil && !f.quiet {
				fmt.Fprintf(stderr, "Requests go through the proxy %s.\n", px)
			}
			return runCrawl(cmd.Context(), cfg, stdout, stderr, runOptions{quiet: f.quiet, frontier: f.frontier, leaseTTL: f.leaseTTL, metricsAddr: f.metricsAddr})
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVar(&f.job, "job", "", "job directory: all state of the crawl; the same DIR again resumes it (required)")
	fs.StringVar(&f.agent, "user-agent", "gentlecrawl", "product token for robots.txt and the User-Agent header (letters, - and _)")
	fs.StringVar(&f.from, "from", "", "e-mail address sent in the From header, so site owners can reach you")
	fs.StringVar(&f.signKey, "sign-key", "", "sign every request with this Ed25519 private key (PEM or JWK; gentlecrawl keygen makes one), so sites can verify the crawler (Web Bot Auth)")
	fs.StringVar(&f.sigAgent, "signature-agent", "", "with --sign-key: the https:// origin that publishes its public key at /.well-known/http-message-signatures-directory")
	fs.DurationVar(&f.delay, "delay", time.Second, "minimum gap between requests to one host (0: none; host load alone sets the pace, and a host that stays fast may get two requests at once)")
	fs.StringVar(&f.crawlDelay, "crawl-delay", "honor", "robots.txt Crawl-delay: honor, ignore, or cap=DUR")
	fs.IntVar(&f.maxPages, "max-pages", 0, "stop after this many fetches (0: no limit)")
	fs.Float64Var(&f.maxRate, "max-rate", 0, "at most this many requests per second over the whole crawl, to all hosts together, robots.txt included (0: no budget)")
	fs.IntVar(&f.maxDepth, "max-depth", 0, "follow at most this many links from a seed (0: no limit)")
	fs.StringVar(&f.scope, "scope", "host", "which links to follow: host (the seeds' hosts), domain (their registrable domains), prefix (URLs under a seed)")
	fs.StringArrayVar(&f.include, "include", nil, "follow only URLs matching this regular expression (repeatable: any of them)")
	fs.StringArrayVar(&f.exclude, "exclude", nil, "never follow URLs matching this regular expression (repeatable)")
	fs.BoolVar(&f.recrawl, "recrawl", false, "fetch every URL the job knows again, with conditional GET (If-None-Match / If-Modified-Since)")
	fs.BoolVar(&f.continuous, "continuous", false, "do not stop when nothing new is left: revisit each page about as often as it changes, within the budget, and keep discovering; ends on Ctrl-C (resume with the same command) or after --for")
	fs.DurationVar(&f.forDur, "for", 0, "end the crawl after this long, with exit status 0 (0: no limit)")
	fs.DurationVar(&f.revisitMin, "revisit-min", time.Hour, "with --continuous: never revisit a page sooner than this")
	fs.DurationVar(&f.revisitMax, "revisit-max", 30*24*time.Hour, "with --continuous: revisit every page at least this often")
	fs.Float64Var(&f.refreshShare, "refresh-share", 0.5, "with --continuous: the share of each host's budget planned for revisits while new URLs wait (0 < share ≤ 1; all of it when none wait)")
	fs.IntVar(&f.recheckEvery, "recheck-every", 8, "with --continuous: after this many 304s in a row, refresh a page once without validators, to catch servers whose validators lie (-1: never)")
	fs.BoolVar(&f.allTypes, "all-types", false, "download every kind of file (by default audio, video, executables, archives and disk images are skipped)")
	fs.StringArrayVar(&f.sitemaps, "sitemap", nil, "also read this sitemap (XML, index, gzip or text) for URLs (repeatable)")
	fs.BoolVar(&f.noSitemaps, "no-sitemaps", false, "do not read the sitemaps listed in robots.txt")
	fs.StringArrayVar(&f.resolve, "resolve", nil, "HOST:PORT:ADDR — connect to ADDR for HOST:PORT, as curl does (repeatable)")
	fs.StringArrayVar(&f.connectTo, "connect-to", nil, "HOST1:PORT1:HOST2:PORT2 — connect to HOST2:PORT2 instead, as curl does; empty HOST1/PORT1 match any (repeatable)")
	fs.BoolVar(&f.allowPrivate, "allow-private-networks", false, "allow loopback and private addresses (refused by default)")
	f.proxy.add(fs)
	fs.StringVar(&f.frontier, "frontier", "", "share the crawl with other processes through this PostgreSQL database, `postgres://USER@HOST:PORT/DB?sslmode=disable` (default: the embedded store in the job directory)")
	fs.DurationVar(&f.leaseTTL, "lease-ttl", 30*time.Second, "with --frontier: how long the hosts of a process that died stay its own before another takes them over")
	fs.StringVar(&f.config, "config", "", "TOML file of settings named like these flags; flags given here win")
	fs.IntVar(&f.workers, "workers", 32, "hosts fetched at the same time")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "limit on one HTTP exchange, body included")
	fs.BoolVarP(&f.verbose, "verbose", "v", false, "log every fetch failure and robots.txt problem")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no progress display, only the summary")
	fs.StringVar(&f.logFormat, "log-format", "text", "log lines as text (key=value) or json (one object a line), on stderr")
	fs.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://`HOST:PORT`/metrics while the crawl runs")
	fs.IntVar(&f.metricsHosts, "metrics-hosts", 0, "give the first `N` hosts their own \"host\" label in the metrics (the rest: \"other\")")
	return cmd
}

func (f *crawlFlags) toConfig(seeds []string, stderr io.Writer) (gentlecrawl.Config, error) {
	if f.job == "" {
		return gentlecrawl.Config{}, errors.New("--job DIR is required: the directory that keeps the crawl's state")
	}
	cd, err := parseCrawlDelayPolicy(f.crawlDelay)
	if err != nil {
		return gentlecrawl.Config{}, err
	}
	scope, err := parseScope(f.scope)
	if err != nil {
		return gentlecrawl.Config{}, err
	}
	include, err := parseRegexps("--include", f.include)
	if err != nil {
		return gentlecrawl.Config{}, err
	}
	exclude, err := parseRegexps("--exclude", f.exclude)
	if err != nil {
		return gentlecrawl.Config{}, err
	}
	resolve, err := parseResolve(f.resolve)
	if err != nil {
		return gentlecrawl.Config{}, err
	}
	connectTo, err := parseConnectTo(f.connectTo)
	if err != nil {
		return gentlecrawl.Config{}, err
	}
	if f.delay < 0 {
		return gentlecrawl.Config{}, fmt.Errorf("--delay %v: must not be negative", f.delay)
	}
	if !f.continuous && (f.revisitMin != time.Hour || f.revisitMax != 30*24*time.Hour || f.refreshShare != 0.5 || f.recheckEvery != 8) {
		return gentlecrawl.Config{}, errors.New("--revisit-min, --revisit-max, --refresh-share and --recheck-every apply to --continuous crawls only")
	}
	if f.continuous && f.recrawl {
		return gentlecrawl.Config{}, errors.New("--continuous and --recrawl: give one (a continuous crawl revisits every page itself)")
	}
	if f.recheckEvery == 0 {
		return gentlecrawl.Config{}, errors.New("--recheck-every 0: give a number of 304s, or -1 for never")
	}
	if f.frontier != "" {
		if !strings.HasPrefix(f.frontier, "postgres://") && !strings.HasPrefix(f.frontier, "postgresql://") {
			return gentlecrawl.Config{}, fmt.Errorf("--frontier %q: want a PostgreSQL URL, postgres://USER@HOST:PORT/DB?sslmode=disable (without --frontier the job directory holds the frontier)", redactDSN(f.frontier))
		}
		if f.continuous {
			return gentlecrawl.Config{}, errors.New("--continuous with --frontier: a shared crawl does not revisit yet; run a continuous crawl on the embedded frontier")
		}
		if f.leaseTTL < time.Second {
			return gentlecrawl.Config{}, fmt.Errorf("--lease-ttl %v: at least 1s", f.leaseTTL)
		}
	}
	if f.metricsAddr != "" {
		if _, _, err := net.SplitHostPort(f.metricsAddr); err != nil {
			return gentlecrawl.Config{}, fmt.Errorf("--metrics-addr %q: want HOST:PORT (%v)", f.metricsAddr, err)
		}
	}
	px, err := f.proxy.url()
	if err != nil {
		return gentlecrawl.Config{}, err
	}
	var signKey crypto.Signer
	switch {
	case f.signKey != "" && f.sigAgent == "":
		return gentlecrawl.Config{}, errors.New("--sign-key needs --signature-agent: the https:// origin that publishes its public key")
	case f.signKey == "" && f.sigAgent != "":
		return gentlecrawl.Config{}, errors.New("--signature-agent needs --sign-key: the private key whose public key it publishes")
	case f.signKey != "":
		key, err := readSignKey(f.signKey, stderr)
		if err != nil {
			return gentlecrawl.Config{}, err
		}
		signKey = key
	}
	level := slog.LevelError
	if f.verbose {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	var handler slog.Handler
	switch f.logFormat {
	case "text":
		handler = slog.NewTextHandler(stderr, opts)
	case "json":
		handler = slog.NewJSONHandler(stderr, opts)
	default:
		return gentlecrawl.Config{}, fmt.Errorf("--log-format %q: text or json", f.logFormat)
	}
	return gentlecrawl.Config{
		JobDir:               f.job,
		Seeds:                seeds,
		Agent:                f.agent,
		From:                 f.from,
		SignKey:              signKey,
		SignatureAgent:       f.sigAgent,
		Delay:                f.delay,
		NoDelay:              f.delay == 0,
		CrawlDelay:           cd,
		MaxPages:             f.maxPages,
		MaxRate:              f.maxRate,
		MaxDepth:             f.maxDepth,
		Scope:                scope,
		Recrawl:              f.recrawl,
		Continuous:           f.continuous,
		For:                  f.forDur,
		RevisitMin:           f.revisitMin,
		RevisitMax:           f.revisitMax,
		RefreshShare:         f.refreshShare,
		RecheckEvery:         f.recheckEvery,
		AllTypes:             f.allTypes,
		Sitemaps:             f.sitemaps,
		Include:              include,
		Exclude:              exclude,
		NoSitemaps:           f.noSitemaps,
		Workers:              f.workers,
		Timeout:              f.timeout,
		Resolve:              resolve,
		ConnectTo:            connectTo,
		AllowPrivateNetworks: f.allowPrivate,
		Proxy:                px,
		NoProxy:              f.proxy.noProxy,
		ProxyFromEnvironment: !f.proxy.set,
		MetricsHosts:         f.metricsHosts,
		Logger:               slog.New(handler),
	}, nil
}

// runOptions are the settings of a crawl that are the command's, not the
// library's Config.
type runOptions struct {
	quiet       bool          // no progress display
	frontier    string        // --frontier: the DSN of a shared frontier
	leaseTTL    time.Duration // --lease-ttl
	metricsAddr string        // --metrics-addr: where to serve the metrics
}

// runCrawl runs one crawl with a progress display and prints its summary.
func runCrawl(ctx context.Context, cfg gentlecrawl.Config, stdout, stderr io.Writer, opts runOptions) error {
	if opts.frontier != "" {
		f, err := gentlecrawl.OpenSharedFrontier(ctx, opts.frontier, gentlecrawl.SharedFrontierOptions{LeaseTTL: opts.leaseTTL, Logger: cfg.Logger})
		if err != nil {
			return fmt.Errorf("--frontier: %w", err)
		}
		defer f.Close()
		cfg.Frontier = f
	}
	c, err := gentlecrawl.New(cfg)
	if err != nil {
		return exitError{2, err}
	}
	if opts.metricsAddr != "" {
		stop, err := serveMetrics(opts.metricsAddr, c, cfg.Logger)
		if err != nil {
			return err
		}
		defer stop()
	}
	stopProgress := func() {}
	if !opts.quiet {
		stopProgress = showProgress(ctx, c, stderr)
	}
	stopProcs := tuneProcs(ctx, func() int { return hook.HostsInTurn(c) })
	sum, err := c.Run(ctx)
	stopProcs()
	stopProgress()
	if sum != nil {
		writeSummary(stdout, sum)
	}
	if err != nil {
		return err
	}
	switch {
	case sum.Stopped == "interrupted":
		return errors.New("interrupted; run the same command again to resume")
	case strings.HasPrefix(sum.Stopped, "error"):
		return errors.New(sum.Stopped)
	case sum.Pages > 0 && sum.Errors["private-network"] == sum.Pages:
		return errors.New("every fetch was refused because the hosts resolve to loopback or private addresses; add --allow-private-networks to crawl them")
	}
	return nil
}

// serveMetrics serves the crawl's metrics at http://addr/metrics until the
// returned function is called, and logs the address served ("metrics
// served"; port 0 picks one).
func serveMetrics(addr string, c *gentlecrawl.Crawler, logger *slog.Logger) (stop func(), err error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", c.MetricsHandler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	logger.Info("metrics served", "addr", ln.Addr().String(), "url", "http://"+ln.Addr().String()+"/metrics")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}, nil
}

// redactDSN hides the password of a DSN for messages.
func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return dsn
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// showProgress reports the crawl's progress on w until the returned function
// is called: one line refreshed every second on a terminal, a plain log line
// every ten seconds otherwise.
func showProgress(ctx context.Context, c *gentlecrawl.Crawler, w io.Writer) (stop func()) {
	tty := isTerminal(w)
	every := 10 * time.Second
	if tty {
		every = time.Second
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		var lastPages int
		lastTime := time.Now()
		for {
			select {
			case <-done:
				if tty {
					fmt.Fprint(w, "\r\033[K")
				}
				return
			case <-ctx.Done():
				return
			case now := <-t.C:
				p := c.Progress()
				rate := float64(p.Pages-lastPages) / now.Sub(lastTime).Seconds()
				lastPages, lastTime = p.Pages, now
				line := progressLine(p, rate)
				if tty {
					fmt.Fprintf(w, "\r\033[K%s", line)
				} else {
					fmt.Fprintln(w, line)
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

func progressLine(p gentlecrawl.Progress, rate float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %d pages (%.1f/s)  %d queued  %d hosts active",
		p.Elapsed.Round(time.Second), p.Pages, rate, p.Queued, p.Active)
	if n := p.Waiting[gentlecrawl.WaitDelay]; n > 0 {
		fmt.Fprintf(&b, ", %d waiting for their delay", n)
	}
	if n := p.Waiting[gentlecrawl.WaitRate]; n > 0 {
		fmt.Fprintf(&b, ", %d held to their learned rate", n)
	}
	if n := p.Waiting[gentlecrawl.WaitBackoff]; n > 0 {
		fmt.Fprintf(&b, ", %d backing off", n)
	}
	if n := p.Waiting[gentlecrawl.WaitRobots]; n > 0 {
		fmt.Fprintf(&b, ", %d waiting for robots.txt", n)
	}
	if n := p.Waiting[gentlecrawl.WaitAddress]; n > 0 {
		fmt.Fprintf(&b, ", %d waiting for their address", n)
	}
	if p.NotModified > 0 {
		fmt.Fprintf(&b, "  %d not modified", p.NotModified)
	}
	fmt.Fprintf(&b, "  %d errors", p.Errors)
	return b.String()
}

// writeSummary prints what a crawl did.
// writeFinding writes a URL-space finding of the summary (a trap, a URL
// family): what, its evidence, its cost, and two examples.
func writeFinding(w io.Writer, what, evidence string, requests int, state string, examples []string) {
	fmt.Fprintf(w, "    %s: %s; it cost %d requests%s\n", what, evidence, requests, state)
	for _, e := range examples[:min(2, len(examples))] {
		fmt.Fprintf(w, "      e.g. %s\n", e)
	}
}

// maxDefaultLines bounds the default values listed per host in the text
// summary: a site writes one per list, and the JSON has them all.
const maxDefaultLines = 5

func writeSummary(w io.Writer, s *gentlecrawl.Summary) {
	fmt.Fprintf(w, "Crawl %s after %s.\n", s.Stopped, s.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(w, "  requests        %d (%d pages, %d robots.txt)\n", s.Requests, s.Pages, s.Requests-s.Pages)
	if s.ByPurpose["refresh"] > 0 {
		fmt.Fprintf(w, "  by purpose      %d discovery, %d refresh\n", s.ByPurpose["discovery"], s.ByPurpose["refresh"])
	}
	if len(s.ByStatus) > 0 {
		codes := slices.Sorted(maps.Keys(s.ByStatus))
		parts := make([]string, len(codes))
		for i, code := range codes {
			parts[i] = fmt.Sprintf("%d: %d", code, s.ByStatus[code])
		}
		fmt.Fprintf(w, "  by status       %s\n", strings.Join(parts, ", "))
	}
	if len(s.Errors) > 0 {
		fmt.Fprintf(w, "  errors          %s\n", countList(s.Errors))
	}
	if len(s.Robots) > 0 {
		fmt.Fprintf(w, "  robots.txt      %s\n", countList(s.Robots))
	}
	if s.Disallowed > 0 {
		fmt.Fprintf(w, "  disallowed      %d URLs not fetched: robots.txt forbids them\n", s.Disallowed)
	}
	fmt.Fprintf(w, "  bytes received  %s on the wire, %s after decompression\n", byteSize(s.WireBytes), byteSize(s.BodyBytes))
	if s.NotModified > 0 {
		fmt.Fprintf(w, "  not modified    %d (304), saving the servers about %s\n", s.NotModified, byteSize(s.SavedBytes))
	}
	if s.Sitemaps > 0 || s.SitemapErrors > 0 {
		fmt.Fprintf(w, "  sitemaps        %d read, listing %d URLs", s.Sitemaps, s.SitemapURLs)
		if s.SitemapErrors > 0 {
			fmt.Fprintf(w, "; %d unreadable", s.SitemapErrors)
		}
		fmt.Fprintln(w)
	}
	if s.NoFollowPages > 0 {
		fmt.Fprintf(w, "  nofollow        %d pages asked that their links not be followed (meta robots, X-Robots-Tag)\n", s.NoFollowPages)
	}
	if s.TrapsRefused > 0 || len(s.URLSpace) > 0 {
		fmt.Fprintf(w, "  URL space       %d new URLs refused as traps\n", s.TrapsRefused)
		for _, h := range slices.Sorted(maps.Keys(s.URLSpace)) {
			sp := s.URLSpace[h]
			if len(sp.Refused) > 0 {
				fmt.Fprintf(w, "    %s refused: %s\n", h, countList(sp.Refused))
			}
			for _, p := range sp.Irrelevant {
				fmt.Fprintf(w, "    %s parameter that does not change the page: %s\n", h, p)
			}
			if sp.NearDuplicates > 0 {
				fmt.Fprintf(w, "    %s near-duplicate pages: %d (e.g. %s)\n", h, sp.NearDuplicates, sp.NearExample)
			}
			for _, d := range sp.Defaults[:min(maxDefaultLines, len(sp.Defaults))] {
				fmt.Fprintf(w, "    %s parameter value that gives the page without it: %s\n", h, d)
			}
			if n := len(sp.Defaults) - maxDefaultLines; n > 0 {
				fmt.Fprintf(w, "    %s … and %d more such values (the JSON summary lists them)\n", h, n)
			}
			if sp.CanonicalElsewhere > 0 {
				fmt.Fprintf(w, "    %s pages naming another URL as canonical: %d\n", h, sp.CanonicalElsewhere)
			}
			if sp.NofollowLinks > 0 {
				fmt.Fprintf(w, "    %s links marked rel=\"nofollow\": %d, queued last; %d not fetched, their family yielding nothing\n",
					h, sp.NofollowLinks, sp.NofollowRefused)
			}
			for _, f := range sp.Families {
				state := ""
				if f.Spent {
					state = fmt.Sprintf("; %d more of its URLs not fetched", f.Refused)
				}
				writeFinding(w, h+" URL family "+f.Pattern, f.Evidence, f.Requests, state, f.Examples)
			}
			for _, t := range sp.Traps {
				state := ""
				if t.Spent {
					state = fmt.Sprintf("; its budget spent, %d more of its URLs not fetched", t.Refused)
				}
				writeFinding(w, h+" trap "+t.Pattern, t.Evidence, t.Requests, state, t.Examples)
			}
			if sp.Exploding != "" {
				fmt.Fprintf(w, "    %s URL explosion: %s\n", h, sp.Exploding)
			}
		}
	}
	if s.Retries > 0 {
		fmt.Fprintf(w, "  retried         %d fetches met an overloaded server or a failing network; tried again later\n", s.Retries)
	}
	for _, h := range slices.Sorted(maps.Keys(s.Slowed)) {
		fmt.Fprintf(w, "  host load       %s: %s\n", h, report.HostLoadText(jsonOf(s.Slowed[h])))
	}
	if s.SlowedMore {
		fmt.Fprintf(w, "  host load       … and more hosts pushed back than these %d (the request log has every answer)\n", len(s.Slowed))
	}
	for _, h := range slices.Sorted(maps.Keys(s.Demand)) {
		fmt.Fprintf(w, "  change          %s: %s\n", h, report.DemandText(jsonOf(s.Demand[h])))
	}
	for _, h := range slices.Sorted(maps.Keys(s.Validators)) {
		fmt.Fprintf(w, "  validators      %s: %s\n", h, report.ValidatorsText(jsonOf(s.Validators[h])))
	}
	if s.SkippedExtension > 0 || s.SkippedType > 0 {
		fmt.Fprintf(w, "  skipped         %d links by extension, %d downloads by Content-Type (audio, video, executables, archives, disk images; --all-types fetches them)\n", s.SkippedExtension, s.SkippedType)
	}
	if s.BadRedirects > 0 {
		fmt.Fprintf(w, "  bad redirects   %d not followed: unusable Location, or more than 10 in a chain\n", s.BadRedirects)
	}
	if len(s.FetchLimits) > 0 {
		fmt.Fprintf(w, "  safeguards      %s\n", countList(s.FetchLimits))
	}
	if s.Truncated > 0 {
		fmt.Fprintf(w, "  truncated       %d bodies cut by a limit or a broken connection\n", s.Truncated)
	}
	fmt.Fprintf(w, "  discovered      %d new URLs; %d links out of scope", s.Discovered, s.OutOfScope)
	if s.TooDeep > 0 {
		fmt.Fprintf(w, ", %d too deep", s.TooDeep)
	}
	fmt.Fprintln(w)
	if s.Queued > 0 {
		fmt.Fprintf(w, "  still queued    %d URLs (run the same command again to go on)\n", s.Queued)
	}
	for _, h := range s.Deferred {
		fmt.Fprintf(w, "  deferred        %s: robots.txt unavailable, its URLs are kept for a later run\n", h)
	}
	for _, f := range s.WARCFiles {
		fmt.Fprintf(w, "  WARC            %s\n", f)
	}
}

// jsonOf is v as runs.jsonl holds it, for the report's prose of the
// summary's per-host values (report.HostLoadText and the like), which
// reads the summaries of earlier runs there.
func jsonOf(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func countList[V int | int64](m map[string]V) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
