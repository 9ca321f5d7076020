// Command pgscale measures the shared frontier (internal/frontier/postgres)
// at scale, on a real PostgreSQL server:
//
//  1. It starts a server on loopback, in a directory under -dir (or uses
//     the database of -dsn), and admits -urls URLs over -hosts hosts
//     through Store.Add, in batches of -batch as the crawler admits its
//     seeds, from -loaders goroutines.
//  2. For each count P of -procs it runs P worker processes (this program
//     again, with -worker) for -dur. Each runs -conc loops that do what a
//     crawl's turn does to the frontier: claim the host due longest (up
//     to 16 URLs, the crawler's lease), settle its first URL with a
//     history, offer -links links of which a share -new are new URLs, and
//     release the host with its next allowed time -gap later.
//  3. With -soak, it leases the same way for that long with -soakprocs
//     processes, and samples the tables' sizes, dead tuples and vacuums
//     every -every.
//
// It prints what it measured as lines for people, then one JSON line with
// the headline figures. Run it from the bench module:
//
//	nice -n 5 go run -tags pebblegozstd ./cmd/pgscale -urls 1000000 -hosts 100000 -dir /var/tmp
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
	"github.com/gentlecrawl/gentlecrawl/internal/frontier/postgres"
	"github.com/gentlecrawl/gentlecrawl/internal/pgtest"
)

// config is what both the parent and its workers are given.
type config struct {
	dsn, dir  string
	urls      int
	hosts     int
	batch     int
	loaders   int
	load      bool
	procs     string
	dur       time.Duration
	conc      int
	links     int
	newShare  float64
	gap       time.Duration
	soak      time.Duration
	soakProcs int
	every     time.Duration
	settings  string
	durable   bool
	keep      bool
	worker    bool
	tag       string // a worker's prefix for the new URLs it makes up
}

// leaseMax is how many due URLs a claim asks for, as the crawler does.
const leaseMax = 16

func main() {
	var c config
	flag.StringVar(&c.dsn, "dsn", "", "database to use (postgres://…); empty: start a server under -dir")
	flag.StringVar(&c.dir, "dir", "", "directory the server's directory is made in (default the system's temporary directory)")
	flag.IntVar(&c.urls, "urls", 1_000_000, "URLs to admit")
	flag.IntVar(&c.hosts, "hosts", 100_000, "hosts they are spread over")
	flag.IntVar(&c.batch, "batch", 1000, "URLs per Add")
	flag.IntVar(&c.loaders, "loaders", 2, "goroutines admitting at once")
	flag.BoolVar(&c.load, "load", true, "admit the URLs (false: the database of -dsn holds them already)")
	flag.StringVar(&c.procs, "procs", "1,2,4", "worker process counts to measure, in turn")
	flag.DurationVar(&c.dur, "dur", time.Minute, "how long each count of processes leases")
	flag.IntVar(&c.conc, "conc", 4, "lease loops per worker process")
	flag.IntVar(&c.links, "links", 4, "links offered with each release")
	flag.Float64Var(&c.newShare, "new", 0.25, "share of the links that are new URLs (the others were admitted before)")
	flag.DurationVar(&c.gap, "gap", time.Second, "a host's next allowed time after its release")
	flag.DurationVar(&c.soak, "soak", 0, "lease this long after the measurements, sampling sizes and vacuums")
	flag.IntVar(&c.soakProcs, "soakprocs", 2, "worker processes of the soak")
	flag.DurationVar(&c.every, "every", time.Minute, "sampling interval of the soak")
	flag.StringVar(&c.settings, "pgset", "shared_buffers=2GB,max_wal_size=8GB,shared_preload_libraries=pg_stat_statements",
		"server settings, comma-separated name=value, for a server it starts (with pg_stat_statements, each phase's costliest statements are printed)")
	flag.BoolVar(&c.durable, "durable", true, "a server it starts keeps PostgreSQL's durability (fsync, full-page writes)")
	flag.BoolVar(&c.keep, "keep", false, "leave the server it starts running at the end, its data kept, until interrupted")
	flag.BoolVar(&c.worker, "worker", false, "internal: run as a worker process")
	flag.StringVar(&c.tag, "tag", "", "internal: a worker's prefix for new URLs")
	flag.Parse()
	var err error
	if c.worker {
		err = work(c)
	} else {
		err = run(c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgscale:", err)
		os.Exit(1)
	}
}

// urlOf is the i-th URL admitted: about 75 bytes, on host i mod hosts, so
// that a batch of consecutive URLs touches as many hosts as it has URLs.
func urlOf(i, hosts int) (host, url string) {
	host = hostOf(i % hosts)
	return host, "https://" + host + "/articles/" + strconv.Itoa(i/hosts) + "/page-" + strconv.Itoa(i) + ".html"
}

func hostOf(h int) string { return fmt.Sprintf("www.h%06d.example.net", h) }

func candidate(host, url string) frontier.Candidate {
	return frontier.Candidate{Host: host, Canonical: url, Entry: frontier.Entry{URL: url, Depth: 1}}
}

// run is the parent: the server, the admission, the worker phases, the
// soak, the report.
func run(c config) error {
	ctx := context.Background()
	var srv *pgtest.Server
	dsn := c.dsn
	if dsn == "" {
		var settings []string
		for kv := range strings.SplitSeq(c.settings, ",") {
			if kv = strings.TrimSpace(kv); kv != "" {
				settings = append(settings, kv)
			}
		}
		var err error
		srv, err = pgtest.Start(ctx, pgtest.Config{Durable: c.durable, Dir: c.dir, Settings: settings})
		if err != nil {
			return err
		}
		defer func() {
			if c.keep {
				fmt.Printf("server kept: %s (data in %s); interrupt to stop it\n", dsn, srv.Dir())
				waitInterrupt()
			}
			srv.Stop()
		}()
		if dsn, err = srv.CreateDB(ctx); err != nil {
			return err
		}
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var version string
	conn.QueryRow(ctx, "SHOW server_version").Scan(&version)
	fmt.Printf("PostgreSQL %s; %d URLs over %d hosts; load average %s\n", version, c.urls, c.hosts, loadavg())
	for _, name := range []string{"shared_buffers", "max_wal_size", "fsync", "full_page_writes", "autovacuum_naptime", "autovacuum_vacuum_scale_factor", "autovacuum_vacuum_cost_limit"} {
		var v string
		conn.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v)
		fmt.Printf("  %s = %s\n", name, v)
	}

	// The statements' costs, when the server has pg_stat_statements.
	_, err = conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
	statements := err == nil
	if err != nil {
		fmt.Println("  without pg_stat_statements:", err)
	}
	resetStatements := func() {
		if statements {
			conn.Exec(ctx, "SELECT pg_stat_statements_reset()")
		}
	}
	printStatements := func() {
		if statements {
			if err := topStatements(ctx, conn); err != nil {
				fmt.Println("  pg_stat_statements:", err)
			}
		}
	}

	out := report{URLs: c.urls, Hosts: c.hosts, Leases: map[string]phaseReport{}}
	if c.load {
		if out.AdmitPerSec, out.LoadSeconds, err = admit(ctx, c, dsn); err != nil {
			return err
		}
	}
	// Stats of a backend reach the shared counters within a second of
	// its transaction's end.
	time.Sleep(1500 * time.Millisecond)
	before, err := snapshot(ctx, conn)
	if err != nil {
		return err
	}
	before.print("after admission")
	out.AfterLoad = before.summary()

	last := before
	for p := range strings.SplitSeq(c.procs, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 {
			return fmt.Errorf("bad -procs %q", c.procs)
		}
		resetStatements()
		ph, err := phase(ctx, c, dsn, srv, n, c.dur, 0, nil)
		if err != nil {
			return err
		}
		time.Sleep(1500 * time.Millisecond)
		after, err := snapshot(ctx, conn)
		if err != nil {
			return err
		}
		ph.print(fmt.Sprintf("%d process(es) × %d loops", n, c.conc))
		rep := ph.report()
		rep.BuffersPerLease = printScans(last, after, ph.leases)
		printStatements()
		last = after
		out.Leases[strconv.Itoa(n)] = rep
	}
	last.print("after the lease phases")
	out.AfterPhases = last.summary()

	if c.soak > 0 {
		start := last
		fmt.Printf("soak: %d process(es) × %d loops for %v, sampled every %v\n", c.soakProcs, c.conc, c.soak, c.every)
		fmt.Printf("  %8s %9s %10s %10s %10s %10s %11s %9s %9s\n", "t", "leases/s", "total MB", "queue MB", "hosts MB", "seen MB", "history MB", "dead q", "av q/h")
		sample := func(t time.Duration, rate float64) {
			s, err := snapshot(ctx, conn)
			if err != nil {
				fmt.Println("  sample:", err)
				return
			}
			q, h := s.tables["gc_queue"], s.tables["gc_hosts"]
			fmt.Printf("  %8s %9.0f %10.1f %10.1f %10.1f %10.1f %11.1f %9d %4d/%-4d\n", t.Round(time.Second), rate,
				mb(s.total()), mb(q.Total), mb(h.Total), mb(s.tables["gc_seen"].Total), mb(s.tables["gc_history"].Total),
				q.DeadTup, q.Autovacuums, h.Autovacuums+h.Vacuums)
			out.Soak.Samples = append(out.Soak.Samples, soakSample{T: t.Seconds(), LeasesPerSec: math.Round(rate), TotalBytes: s.total(),
				QueueBytes: q.Total, HostsBytes: h.Total, QueueDead: q.DeadTup, QueueAutovacuums: q.Autovacuums})
		}
		resetStatements()
		ph, err := phase(ctx, c, dsn, srv, c.soakProcs, c.soak, c.every, sample)
		if err != nil {
			return err
		}
		time.Sleep(1500 * time.Millisecond)
		end, err := snapshot(ctx, conn)
		if err != nil {
			return err
		}
		ph.print("soak")
		buffers := printScans(start, end, ph.leases)
		printStatements()
		end.print("after the soak")
		out.Soak.Seconds = c.soak.Seconds()
		out.Soak.Procs = c.soakProcs
		out.Soak.Phase = ph.report()
		out.Soak.Phase.BuffersPerLease = buffers
		out.AfterSoak = end.summary()
	}
	out.LoadAvg = loadavg()
	fmt.Printf("load average at the end: %s\n", out.LoadAvg)
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
	return nil
}

// admit loads the URLs through Store.Add, the call the crawler makes for
// its seeds and for what it requeues, and returns URLs/s and seconds.
func admit(ctx context.Context, c config, dsn string) (float64, float64, error) {
	s, err := postgres.Open(ctx, withPool(dsn, c.loaders+2), postgres.Options{})
	if err != nil {
		return 0, 0, err
	}
	defer s.Close()
	batches := (c.urls + c.batch - 1) / c.batch
	var next, done atomic.Int64
	var firstErr error
	var mu sync.Mutex
	start := time.Now()
	// Progress every tenth of the URLs (or million, whichever is less).
	step := int64(max(1, min(batches/10, 1_000_000/c.batch)))
	var wg sync.WaitGroup
	for range c.loaders {
		wg.Go(func() {
			cs := make([]frontier.Candidate, 0, c.batch)
			for {
				b := next.Add(1) - 1
				if b >= int64(batches) {
					return
				}
				cs = cs[:0]
				for i := int(b) * c.batch; i < min(c.urls, int(b+1)*c.batch); i++ {
					cs = append(cs, candidate(urlOf(i, c.hosts)))
				}
				if _, err := s.Add(ctx, frontier.Batch{Add: cs}); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					next.Store(int64(batches))
					return
				}
				if d := done.Add(1); d%step == 0 || d == int64(batches) {
					el := time.Since(start)
					n := min(int(d)*c.batch, c.urls)
					fmt.Printf("  admitted %d URLs in %v: %.0f URLs/s so far; load average %s\n", n, el.Round(time.Second), float64(n)/el.Seconds(), loadavg())
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return 0, 0, firstErr
	}
	el := time.Since(start)
	rate := float64(c.urls) / el.Seconds()
	fmt.Printf("admission: %d URLs in %v, %.0f URLs/s (%d goroutines, batches of %d)\n", c.urls, el.Round(time.Second), rate, c.loaders, c.batch)
	return math.Round(rate), math.Round(el.Seconds()), nil
}

// withPool sets pgxpool's pool size in a DSN, a URL or key=value pairs.
func withPool(dsn string, n int) string {
	switch {
	case !strings.Contains(dsn, "://"):
		return dsn + " pool_max_conns=" + strconv.Itoa(n)
	case strings.Contains(dsn, "?"):
		return dsn + "&pool_max_conns=" + strconv.Itoa(n)
	default:
		return dsn + "?pool_max_conns=" + strconv.Itoa(n)
	}
}

// workerReport is a worker process's last line.
type workerReport struct {
	Leases, Misses, Lost, Errors int64
	FirstError                   string
	Claim, Release               hist
}

// workerLine is a line a worker prints after "ready": its lease count so
// far every few seconds, then its report.
type workerLine struct {
	Progress *int64        `json:",omitempty"`
	Report   *workerReport `json:",omitempty"`
}

// phaseResult is what the workers of a phase did together.
type phaseResult struct {
	procs          int
	elapsed        time.Duration
	leases, misses int64
	lost, errors   int64
	claim, release hist
	pgCPU, goCPU   time.Duration // the server's, and the workers' processes'
	measured       bool          // pgCPU is: the server is pgscale's
	loadBefore     string
	loadAfter      string
}

// phase runs n worker processes for d. With every and sample set, it calls
// sample every that long, with the time since the start and the rate of
// leases since the last sample.
func phase(ctx context.Context, c config, dsn string, srv *pgtest.Server, n int, d, every time.Duration, sample func(time.Duration, float64)) (*phaseResult, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	type proc struct {
		cmd    *exec.Cmd
		stdin  io.WriteCloser
		lines  *bufio.Scanner
		leases atomic.Int64
		final  workerReport
		done   bool // final was read
		err    error
	}
	procs := make([]*proc, n)
	tag := make([]byte, 4)
	rand.Read(tag)
	for i := range procs {
		args := []string{"-worker", "-dsn", dsn, "-dur", d.String(), "-conc", strconv.Itoa(c.conc),
			"-urls", strconv.Itoa(c.urls), "-hosts", strconv.Itoa(c.hosts), "-links", strconv.Itoa(c.links),
			"-new", strconv.FormatFloat(c.newShare, 'g', -1, 64), "-gap", c.gap.String(),
			"-tag", hex.EncodeToString(tag) + "-" + strconv.Itoa(i)}
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		procs[i] = &proc{cmd: cmd, stdin: stdin, lines: sc}
	}
	// Every worker says it is ready (its store open) before any starts.
	for _, p := range procs {
		if !p.lines.Scan() || p.lines.Text() != "ready" {
			for _, q := range procs {
				q.cmd.Process.Kill()
			}
			return nil, fmt.Errorf("a worker did not start: %v", p.lines.Err())
		}
	}
	r := &phaseResult{procs: n, claim: hist{}, release: hist{}, loadBefore: loadavg()}
	if srv != nil {
		if r.pgCPU, err = srv.CPUTime(); err != nil {
			return nil, err
		}
		r.pgCPU, r.measured = -r.pgCPU, true
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, p := range procs {
		io.WriteString(p.stdin, "go\n")
		wg.Go(func() {
			for p.lines.Scan() {
				var l workerLine
				switch err := json.Unmarshal(p.lines.Bytes(), &l); {
				case err != nil:
					p.err = fmt.Errorf("a worker's line: %v", err)
				case l.Progress != nil:
					p.leases.Store(*l.Progress)
				case l.Report != nil:
					p.final, p.done = *l.Report, true
				}
			}
			if err := p.cmd.Wait(); err != nil && p.err == nil {
				p.err = fmt.Errorf("a worker: %v", err)
			}
			if !p.done && p.err == nil {
				p.err = errors.New("a worker ended without its report")
			}
		})
	}
	if sample != nil && every > 0 {
		tick := time.NewTicker(every)
		var lastN int64
		lastT := start
		for t := range tick.C {
			if t.Sub(start) > d {
				break
			}
			var sum int64
			for _, p := range procs {
				sum += p.leases.Load()
			}
			sample(t.Sub(start), float64(sum-lastN)/t.Sub(lastT).Seconds())
			lastN, lastT = sum, t
		}
		tick.Stop()
	}
	wg.Wait()
	r.elapsed = time.Since(start)
	r.loadAfter = loadavg()
	if srv != nil {
		now, err := srv.CPUTime()
		if err != nil {
			return nil, err
		}
		r.pgCPU += now
	}
	for _, p := range procs {
		if p.err != nil {
			return nil, p.err
		}
		f := p.final
		r.leases += f.Leases
		r.misses += f.Misses
		r.lost += f.Lost
		r.errors += f.Errors
		if f.FirstError != "" {
			fmt.Println("  a worker's first error:", f.FirstError)
		}
		r.claim.merge(f.Claim)
		r.release.merge(f.Release)
		ps := p.cmd.ProcessState
		r.goCPU += ps.UserTime() + ps.SystemTime()
	}
	return r, nil
}

func (r *phaseResult) rate() float64 { return float64(r.leases) / r.elapsed.Seconds() }

func (r *phaseResult) print(what string) {
	n := float64(max(1, r.leases))
	fmt.Printf("%s: %d leases in %v: %.0f leases/s; claim p50 %.0f µs p99 %.0f µs; release p50 %.0f µs p99 %.0f µs\n",
		what, r.leases, r.elapsed.Round(time.Millisecond), r.rate(),
		r.claim.quantile(0.5), r.claim.quantile(0.99), r.release.quantile(0.5), r.release.quantile(0.99))
	server := "not measured (-dsn)"
	if r.measured {
		server = fmt.Sprintf("%.0f µs", float64(r.pgCPU.Microseconds())/n)
	}
	fmt.Printf("  misses %d, leases lost %d, errors %d; CPU a lease: server %s, workers %.0f µs; load average %s → %s\n",
		r.misses, r.lost, r.errors, server, float64(r.goCPU.Microseconds())/n, r.loadBefore, r.loadAfter)
}

func (r *phaseResult) report() phaseReport {
	n := float64(max(1, r.leases))
	return phaseReport{
		LeasesPerSec: math.Round(r.rate()), Leases: r.leases, Misses: r.misses, Lost: r.lost, Errors: r.errors,
		ClaimP50: math.Round(r.claim.quantile(0.5)), ClaimP99: math.Round(r.claim.quantile(0.99)),
		ReleaseP50: math.Round(r.release.quantile(0.5)), ReleaseP99: math.Round(r.release.quantile(0.99)),
		PgCPUPerLease: math.Round(float64(r.pgCPU.Microseconds()) / n), GoCPUPerLease: math.Round(float64(r.goCPU.Microseconds()) / n),
		LoadAvg: r.loadAfter,
	}
}

// work is a worker process: it opens the store, says "ready", waits for
// "go" on its input, leases for -dur, and prints its report.
func work(c config) error {
	ctx := context.Background()
	s, err := postgres.Open(ctx, withPool(c.dsn, c.conc+2), postgres.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	if !in.Scan() || in.Text() != "go" {
		return fmt.Errorf("worker: no go: %v", in.Err())
	}
	end := time.Now().Add(c.dur)
	var leases, misses, lost, errs, newSeq atomic.Int64
	var mu sync.Mutex
	var firstErr string
	total := workerReport{Claim: hist{}, Release: hist{}}
	stop := make(chan struct{})
	go func() {
		// Progress, for the soak's samples.
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				n := leases.Load()
				b, _ := json.Marshal(workerLine{Progress: &n})
				mu.Lock()
				os.Stdout.Write(append(b, '\n'))
				mu.Unlock()
			}
		}
	}()
	fail := func(err error) {
		errs.Add(1)
		mu.Lock()
		if firstErr == "" {
			firstErr = err.Error()
		}
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for g := range c.conc {
		wg.Go(func() {
			rng := mrand.New(mrand.NewPCG(uint64(time.Now().UnixNano()), uint64(g)))
			claim, release := hist{}, hist{}
			defer func() {
				mu.Lock()
				total.Claim.merge(claim)
				total.Release.merge(release)
				mu.Unlock()
			}()
			for time.Now().Before(end) {
				t0 := time.Now()
				l, next, err := s.Claim(ctx, frontier.ClaimRequest{Now: t0, Max: leaseMax, TTL: time.Hour})
				claim.add(time.Since(t0))
				if err != nil {
					fail(err)
					time.Sleep(10 * time.Millisecond)
					continue
				}
				if l == nil {
					// Nothing due: wait for the first host to be, as the
					// crawler's feeder does, but not past the end.
					misses.Add(1)
					wait := 20 * time.Millisecond
					if !next.IsZero() {
						wait = min(max(time.Until(next), time.Millisecond), wait)
					}
					time.Sleep(wait)
					continue
				}
				it := l.Items[0]
				now := time.Now()
				r := frontier.Result{Item: it, Outcome: frontier.Fetched, Canonical: it.URL, History: &frontier.History{
					URL: it.URL, Status: 200, ETag: `"` + strconv.FormatUint(rng.Uint64(), 16) + `"`,
					LastModified: now.UTC().Format(time.RFC1123), ContentType: "text/html; charset=utf-8",
					Digest: "sha1:" + strconv.FormatUint(rng.Uint64(), 36) + strconv.FormatUint(rng.Uint64(), 36),
					Size:   20_000 + rng.Int64N(60_000), Fetched: now, Captured: now, Visits: 1,
				}}
				for range c.links {
					var host, url string
					if rng.Float64() < c.newShare {
						host = hostOf(rng.IntN(c.hosts))
						url = "https://" + host + "/found/" + c.tag + "/" + strconv.FormatInt(newSeq.Add(1), 10) + ".html"
					} else {
						host, url = urlOf(rng.IntN(c.urls), c.hosts)
					}
					r.Add = append(r.Add, candidate(host, url))
				}
				t1 := time.Now()
				_, err = s.Release(ctx, frontier.ReleaseRequest{Lease: l, Results: []frontier.Result{r}, Next: t1.Add(c.gap), Admit: admitAll})
				release.add(time.Since(t1))
				switch {
				case errors.Is(err, frontier.ErrLeaseLost):
					lost.Add(1)
				case err != nil:
					fail(err)
				default:
					leases.Add(1)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	total.Leases, total.Misses, total.Lost, total.Errors, total.FirstError = leases.Load(), misses.Load(), lost.Load(), errs.Load(), firstErr
	b, err := json.Marshal(workerLine{Report: &total})
	if err != nil {
		return err
	}
	mu.Lock()
	os.Stdout.Write(append(b, '\n'))
	mu.Unlock()
	return nil
}

// admitAll admits every link, as a crawl's scope does for links within it.
func admitAll(frontier.Candidate) bool { return true }

// hist is a latency histogram: bucket i counts the durations from
// histBase^i to histBase^(i+1) microseconds, so quantiles are within 5 %.
type hist map[int]int64

const histBase = 1.05

func (h hist) add(d time.Duration) {
	us := max(float64(d)/float64(time.Microsecond), 1)
	h[int(math.Log(us)/math.Log(histBase))]++
}

func (h hist) merge(o hist) {
	for k, v := range o {
		h[k] += v
	}
}

// quantile returns the q-quantile in microseconds: the middle of its
// bucket.
func (h hist) quantile(q float64) float64 {
	var n int64
	keys := make([]int, 0, len(h))
	for k, v := range h {
		keys = append(keys, k)
		n += v
	}
	if n == 0 {
		return 0
	}
	slices.Sort(keys)
	want := int64(math.Ceil(q * float64(n)))
	var seen int64
	for _, k := range keys {
		if seen += h[k]; seen >= want {
			return math.Pow(histBase, float64(k)+0.5)
		}
	}
	return math.Pow(histBase, float64(keys[len(keys)-1])+0.5)
}

// tableStats is a table's row of pg_stat_user_tables with its sizes.
type tableStats struct {
	Total, Heap, Indexes      int64
	LiveTup, DeadTup          int64
	SeqScan, SeqRead, IdxScan int64
	Autovacuums, Vacuums      int64
	Autoanalyzes              int64
	LastAutovacuum            *time.Time
	HotUpdates, Updates, Dels int64
	indexes                   map[string]int64
}

type stats struct {
	tables map[string]*tableStats
	db     int64
	// The database's buffer accesses, found in shared buffers or read.
	hit, read int64
}

// snapshot reads the frontier's tables' sizes and statistics.
func snapshot(ctx context.Context, conn *pgx.Conn) (*stats, error) {
	s := &stats{tables: map[string]*tableStats{}}
	rows, err := conn.Query(ctx, `
SELECT relname, pg_total_relation_size(relid), pg_relation_size(relid), pg_indexes_size(relid),
	n_live_tup, n_dead_tup, coalesce(seq_scan, 0), coalesce(seq_tup_read, 0), coalesce(idx_scan, 0),
	autovacuum_count, vacuum_count, autoanalyze_count, last_autovacuum, n_tup_hot_upd, n_tup_upd, n_tup_del
FROM pg_stat_user_tables WHERE relname LIKE 'gc\_%' AND schemaname = current_schema() ORDER BY relname`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var name string
		t := &tableStats{indexes: map[string]int64{}}
		if err := rows.Scan(&name, &t.Total, &t.Heap, &t.Indexes, &t.LiveTup, &t.DeadTup, &t.SeqScan, &t.SeqRead, &t.IdxScan,
			&t.Autovacuums, &t.Vacuums, &t.Autoanalyzes, &t.LastAutovacuum, &t.HotUpdates, &t.Updates, &t.Dels); err != nil {
			rows.Close()
			return nil, err
		}
		s.tables[name] = t
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = conn.Query(ctx, `
SELECT relname, indexrelname, pg_relation_size(indexrelid) FROM pg_stat_user_indexes
WHERE relname LIKE 'gc\_%' AND schemaname = current_schema()`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var table, index string
		var size int64
		if err := rows.Scan(&table, &index, &size); err != nil {
			rows.Close()
			return nil, err
		}
		if t := s.tables[table]; t != nil {
			t.indexes[index] = size
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	err = conn.QueryRow(ctx, `
SELECT pg_database_size(current_database()), blks_hit, blks_read FROM pg_stat_database WHERE datname = current_database()`).Scan(&s.db, &s.hit, &s.read)
	return s, err
}

func (s *stats) total() int64 {
	var n int64
	for _, t := range s.tables {
		n += t.Total
	}
	return n
}

func (s *stats) names() []string {
	names := make([]string, 0, len(s.tables))
	for n := range s.tables {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (s *stats) print(when string) {
	fmt.Printf("tables %s: %.1f MB in all (database %.1f MB)\n", when, mb(s.total()), mb(s.db))
	fmt.Printf("  %-11s %10s %10s %10s %11s %10s %4s %4s %4s %s\n", "table", "total MB", "heap MB", "index MB", "live rows", "dead rows", "av", "vac", "aan", "last autovacuum")
	for _, n := range s.names() {
		t := s.tables[n]
		last := "never"
		if t.LastAutovacuum != nil {
			last = t.LastAutovacuum.Local().Format("15:04:05")
		}
		fmt.Printf("  %-11s %10.1f %10.1f %10.1f %11d %10d %4d %4d %4d %s\n", n, mb(t.Total), mb(t.Heap), mb(t.Indexes),
			t.LiveTup, t.DeadTup, t.Autovacuums, t.Vacuums, t.Autoanalyzes, last)
		idx := make([]string, 0, len(t.indexes))
		for i := range t.indexes {
			idx = append(idx, i)
		}
		slices.Sort(idx)
		for _, i := range idx {
			fmt.Printf("      %-28s %10.1f MB\n", i, mb(t.indexes[i]))
		}
	}
}

// topStatements prints the statements that took the server the most time
// since the last reset, with their buffer accesses a call.
func topStatements(ctx context.Context, conn *pgx.Conn) error {
	rows, err := conn.Query(ctx, `
SELECT calls, total_exec_time, (shared_blks_hit + shared_blks_read)::float8 / greatest(calls, 1),
	regexp_replace(left(query, 400), '\s+', ' ', 'g')
FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
ORDER BY total_exec_time DESC LIMIT 8`)
	if err != nil {
		return err
	}
	var (
		calls   int64
		ms, buf float64
		query   string
	)
	fmt.Printf("  %9s %9s %9s  %s\n", "calls", "ms each", "buffers", "statement")
	_, err = pgx.ForEachRow(rows, []any{&calls, &ms, &buf, &query}, func() error {
		if len(query) > 110 {
			query = query[:110] + "…"
		}
		fmt.Printf("  %9d %9.3f %9.1f  %s\n", calls, ms/float64(max(calls, 1)), buf, query)
		return nil
	})
	return err
}

// printScans prints how each table was read between two snapshots, and
// the buffers a lease touched: a sequential scan of a large table in a
// lease's statements, or buffers a lease that grow with the tables, is a
// defect.
func printScans(a, b *stats, leases int64) float64 {
	hit, read := b.hit-a.hit, b.read-a.read
	fmt.Printf("  buffers a lease: %.1f (%.1f of them read from outside shared buffers)\n",
		float64(hit+read)/float64(max(1, leases)), float64(read)/float64(max(1, leases)))
	fmt.Print("  scans:")
	for _, n := range b.names() {
		x, y := a.tables[n], b.tables[n]
		if x == nil {
			x = &tableStats{}
		}
		fmt.Printf(" %s seq %d (%d rows) idx %d;", n, y.SeqScan-x.SeqScan, y.SeqRead-x.SeqRead, y.IdxScan-x.IdxScan)
	}
	fmt.Println()
	return math.Round(10*float64(hit+read)/float64(max(1, leases))) / 10
}

func (s *stats) summary() map[string]tableSummary {
	m := map[string]tableSummary{}
	for n, t := range s.tables {
		m[n] = tableSummary{Total: t.Total, Indexes: t.Indexes, Dead: t.DeadTup, Live: t.LiveTup, Autovacuums: t.Autovacuums}
	}
	return m
}

// report is the last line: the headline figures as JSON.
type report struct {
	URLs        int                     `json:"urls"`
	Hosts       int                     `json:"hosts"`
	AdmitPerSec float64                 `json:"admit_urls_per_s,omitempty"`
	LoadSeconds float64                 `json:"admit_s,omitempty"`
	AfterLoad   map[string]tableSummary `json:"after_admission"`
	Leases      map[string]phaseReport  `json:"leases_by_procs"`
	AfterPhases map[string]tableSummary `json:"after_phases"`
	Soak        struct {
		Seconds float64      `json:"s,omitempty"`
		Procs   int          `json:"procs,omitempty"`
		Phase   phaseReport  `json:"leases"`
		Samples []soakSample `json:"samples,omitempty"`
	} `json:"soak"`
	AfterSoak map[string]tableSummary `json:"after_soak,omitempty"`
	LoadAvg   string                  `json:"loadavg"`
}

type tableSummary struct {
	Total       int64 `json:"bytes"`
	Indexes     int64 `json:"index_bytes"`
	Live        int64 `json:"live"`
	Dead        int64 `json:"dead"`
	Autovacuums int64 `json:"autovacuums"`
}

type phaseReport struct {
	LeasesPerSec  float64 `json:"leases_per_s"`
	Leases        int64   `json:"leases"`
	Misses        int64   `json:"misses"`
	Lost          int64   `json:"lost"`
	Errors        int64   `json:"errors"`
	ClaimP50      float64 `json:"claim_p50_us"`
	ClaimP99      float64 `json:"claim_p99_us"`
	ReleaseP50    float64 `json:"release_p50_us"`
	ReleaseP99    float64 `json:"release_p99_us"`
	PgCPUPerLease float64 `json:"pg_cpu_us_per_lease,omitempty"`
	GoCPUPerLease float64 `json:"workers_cpu_us_per_lease"`
	// BuffersPerLease are the database's buffer accesses a lease.
	BuffersPerLease float64 `json:"buffers_per_lease"`
	LoadAvg         string  `json:"loadavg"`
}

type soakSample struct {
	T                float64 `json:"t_s"`
	LeasesPerSec     float64 `json:"leases_per_s"`
	TotalBytes       int64   `json:"bytes"`
	QueueBytes       int64   `json:"queue_bytes"`
	HostsBytes       int64   `json:"hosts_bytes"`
	QueueDead        int64   `json:"queue_dead"`
	QueueAutovacuums int64   `json:"queue_autovacuums"`
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

// loadavg is the first three fields of /proc/loadavg.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// waitInterrupt returns on SIGINT or SIGTERM.
func waitInterrupt() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	<-ch
}
