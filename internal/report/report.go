// Package report reads what a crawl job left behind — its request logs
// (internal/reqlog) and runs.jsonl — and makes the crawl-statistics view a
// search engine gives site owners: requests, bytes and response times over
// time; requests by response code, file type, purpose and kind; host
// status; bandwidth saved; and per host its Crawl-delay and what that
// means, how the crawler adapted to its load and what it found in its URL
// space.
//
// Reading is one pass over each log, in memory bounded by the number of
// hosts and of distinct URLs per host, not by the number of requests.
package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/reqlog"
)

// Report is a job's crawl statistics. Its JSON form is what
// `gentlecrawl report --json` prints.
type Report struct {
	// Job is the job directory read; "" when several were (Jobs).
	Job string `json:"job"`
	// Jobs are the job directories of a crawl shared by several processes,
	// when several were read (ReadJobs).
	Jobs []string `json:"jobs,omitempty"`
	Runs []Run    `json:"runs"`

	// Requests is every HTTP request sent, robots.txt included: the number
	// the servers logged, but for Retried.
	Requests int `json:"requests"`
	// Retried counts the requests sent twice (flag r in the request log):
	// a kept-alive connection failed before any byte of the answer and the
	// request went once more on a new one. Each is one of Requests, and
	// the server may have logged it twice.
	Retried int       `json:"retried,omitempty"`
	First   time.Time `json:"first,omitzero"` // the first request's start
	Last    time.Time `json:"last,omitzero"`  // the last request's end

	Bytes        Bytes     `json:"bytes"`
	ResponseTime Durations `json:"response_time"`
	TTFB         Durations `json:"time_to_first_byte"`

	ByStatus  map[string]int `json:"by_status"`  // "200", "304", …; "none": no answer
	ByType    map[string]int `json:"by_type"`    // html, image, css, javascript, pdf, other; "none": no answer
	ByPurpose map[string]int `json:"by_purpose"` // discovery, refresh (URL fetches only)
	ByKind    map[string]int `json:"by_kind"`    // page, robots, sitemap
	Errors    map[string]int `json:"errors"`     // requests without an answer, by cause

	// Conditional counts requests that carried validators, and how many
	// of them the server answered 304.
	Conditional struct {
		Sent        int `json:"sent"`
		NotModified int `json:"not_modified"`
	} `json:"conditional"`

	OverTime Timeline `json:"over_time"`

	HostsTotal int    `json:"hosts_total"`
	Hosts      []Host `json:"hosts"` // the busiest hosts first, at most Options.Hosts
}

// Run is one run of the job, from runs.jsonl, or only from its request log
// when the run did not finish (killed).
type Run struct {
	Job      string    `json:"job,omitempty"` // its job directory, when several were read
	Run      int       `json:"run"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
	Stopped  string    `json:"stopped"` // why it ended; "killed": no summary was written
	Requests int       `json:"requests"`
}

// Bytes counts what crossed the wire and what it spared.
type Bytes struct {
	Wire    int64 `json:"wire"`    // as received: headers and bodies, compressed
	Decoded int64 `json:"decoded"` // bodies after decompression
	// SavedNotModified is what the 304s spared: each page's last full
	// answer, less the 304.
	SavedNotModified int64 `json:"saved_by_not_modified"`
	// SavedCompression is what compression spared: decoded less received,
	// over the compressed answers.
	SavedCompression int64 `json:"saved_by_compression"`
}

// Durations summarises times, in milliseconds.
type Durations struct {
	Count  int     `json:"count"`
	MeanMS float64 `json:"mean_ms"`
	P50MS  float64 `json:"p50_ms"`
	P95MS  float64 `json:"p95_ms"`
}

// Timeline is the crawl over time in equal buckets.
type Timeline struct {
	Start   time.Time `json:"start,omitzero"`
	Seconds float64   `json:"bucket_seconds"`
	Buckets []Bucket  `json:"buckets"`
}

// Bucket is one interval of the timeline.
type Bucket struct {
	Start        time.Time `json:"start"`
	Requests     int       `json:"requests"`
	Wire         int64     `json:"wire_bytes"`
	Decoded      int64     `json:"decoded_bytes"`
	MeanMS       float64   `json:"mean_ms"`
	P50MS        float64   `json:"p50_ms"`
	P95MS        float64   `json:"p95_ms"`
	NotModified  int       `json:"not_modified"`
	Overloaded   int       `json:"overloaded"` // 429, 500, 502, 503, 504 answers
	Robots       int       `json:"robots_fetches"`
	RobotsFailed int       `json:"robots_failed"` // robots.txt without an answer, or 5xx / 429
	DNSFailures  int       `json:"dns_failures"`
	ConnFailures int       `json:"connection_failures"` // refused, reset, timed out, other network errors
}

// Host is one host's part of the crawl.
type Host struct {
	Host         string         `json:"host"`
	Requests     int            `json:"requests"`
	ByStatus     map[string]int `json:"by_status"`
	Wire         int64          `json:"wire_bytes"`
	MeanMS       float64        `json:"mean_ms"`
	NotModified  int            `json:"not_modified"`
	Fetched      int            `json:"urls_fetched"` // distinct URLs fetched
	Queued       int            `json:"urls_queued"`  // waiting at the end of the last run that recorded it
	CrawlDelay   float64        `json:"crawl_delay_s,omitempty"`
	MaxPerDay    int            `json:"max_requests_per_day,omitempty"` // what the Crawl-delay allows
	DaysPerPass  float64        `json:"days_per_pass,omitempty"`        // one pass over the known URLs at that pace
	CrawlDelayIs string         `json:"crawl_delay_means,omitempty"`

	Slowed     string          `json:"slowed,omitempty"`     // the host-load decisions: where its rate settled, and why
	Validators string          `json:"validators,omitempty"` // validators it ignored, and what is sent instead
	Demand     string          `json:"demand,omitempty"`     // how often its pages change (continuous crawls)
	URLSpace   json.RawMessage `json:"url_space,omitempty"`  // traps, irrelevant parameters, explosions
}

// Options choose what a report covers.
type Options struct {
	Run   int // 0: every run
	Hosts int // how many hosts to list (the busiest); 0: 25
}

// ErrNoJob says the directory is not a crawl job.
var ErrNoJob = errors.New("not a crawl job (no requests/ and no runs.jsonl)")

// ErrNoRequestLog says a job has no request log to report on.
var ErrNoRequestLog = errors.New("no request log")

// maxBuckets bounds the timeline; the bucket width doubles to fit.
const maxBuckets = 120

// runSummary is the part of a runs.jsonl line a report uses.
type runSummary struct {
	Run      int       `json:"run"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Stopped  string    `json:"stopped"`
	Requests int       `json:"requests"`
	// Slowed, Validators and Demand are gentlecrawl.HostLoad,
	// OriginValidators and HostDemand, or the prose earlier versions wrote.
	Slowed     map[string]json.RawMessage `json:"slowed"`
	Validators map[string]json.RawMessage `json:"validators"`
	Demand     map[string]json.RawMessage `json:"demand"`
	URLSpace   map[string]json.RawMessage `json:"url_space"`
}

// maxRunLine bounds a runs.jsonl line: a summary with its per-host maps.
const maxRunLine = 64 << 20

// Read makes the report of the job in dir.
func Read(dir string, opt Options) (*Report, error) {
	return ReadJobs([]string{dir}, opt)
}

// ErrRunSeveralJobs refuses Options.Run over several jobs: each job
// directory numbers its runs from 1, so a run number names no one run of
// the crawl.
var ErrRunSeveralJobs = errors.New("--run with several --job: each job directory numbers its runs from 1, so a run number names no one run of the crawl (give one --job with --run)")

// job is one job directory being read.
type job struct {
	dir   string
	runs  []int               // the runs with a request log, read
	byRun map[int]*runSummary // what runs.jsonl says of them
}

// runKey names a run of the crawl: a job (its index in the report's jobs)
// and the run's number in it.
type runKey struct{ job, run int }

// logRef is one request log to read.
type logRef struct {
	job, run int
	start    time.Time // from its header; only known when several jobs are read
}

// ReadJobs makes the report of a crawl from its job directories: one, or
// those of a crawl shared by several processes (crawl --frontier), each of
// which keeps its own job directory with its own runs numbered from 1. The
// report is of them all as one crawl: every request of every job counted
// once, hosts merged, one timeline, the runs listed with their job (in the
// order they started). A directory given twice (after filepath.Abs) is
// read once; one directory left is the report Read makes.
//
// With several jobs, Report.Job is "" and Report.Jobs lists them, and
// Options.Run is refused (ErrRunSeveralJobs). What a job says of a host at
// the end of a run (its queue in the request log; its host load,
// validators, change and URL space in runs.jsonl) is taken from the run
// that ended last, whichever job it belongs to: the processes share one
// frontier, so the latest word is the crawl's, and the words are not sums.
func ReadJobs(dirs []string, opt Options) (*Report, error) {
	if opt.Hosts <= 0 {
		opt.Hosts = 25
	}
	dirs, err := uniqueDirs(dirs)
	if err != nil {
		return nil, err
	}
	if len(dirs) == 0 {
		return nil, errors.New("no job directory to report on")
	}
	several := len(dirs) > 1
	if several && opt.Run != 0 {
		return nil, ErrRunSeveralJobs
	}
	jobs := make([]*job, len(dirs))
	for i, dir := range dirs {
		if jobs[i], err = readJob(dir, opt); err != nil {
			return nil, err
		}
	}
	// The logs, in the order they are read: one job's in the order of its
	// runs, as ever; several jobs' in the order their runs started, which
	// builds the timeline from its first request on.
	var logs []logRef
	for j, jb := range jobs {
		for _, run := range jb.runs {
			logs = append(logs, logRef{job: j, run: run})
		}
	}
	if several {
		for i := range logs {
			l := &logs[i]
			if l.start, err = logStart(reqlog.Path(jobs[l.job].dir, l.run)); err != nil {
				return nil, err
			}
		}
		slices.SortStableFunc(logs, func(x, y logRef) int { return x.start.Compare(y.start) })
	}
	a := newAggregate()
	// ended is the end of each job's latest run read: a run's end is its
	// summary's finished time, else its last request's end, and never
	// before an earlier run of its job ended (the runs of a job follow
	// one another).
	ended := make([]time.Time, len(jobs))
	for _, l := range logs {
		jb := jobs[l.job]
		a.curJob = l.job
		end, err := a.readLog(reqlog.Path(jb.dir, l.run))
		if err != nil {
			return nil, err
		}
		if s := jb.byRun[l.run]; s != nil && !s.Finished.IsZero() {
			end = s.Finished
		}
		if end.Before(ended[l.job]) {
			end = ended[l.job]
		}
		ended[l.job] = end
		a.settle(end)
	}
	r := a.report(opt)
	if several {
		r.Jobs = dirs
	} else {
		r.Job = dirs[0]
	}
	// Runs: the request logs read, with what runs.jsonl says of each; for
	// several jobs, in the order they started.
	type word struct {
		finished time.Time
		s        *runSummary
	}
	var words []word
	for j, jb := range jobs {
		var finished time.Time
		for _, run := range jb.runs {
			k := runKey{j, run}
			out := Run{Run: run, Started: a.runStart[k], Requests: a.runRequests[k], Stopped: "killed"}
			if several {
				out.Job = jb.dir
			}
			if s := jb.byRun[run]; s != nil {
				out.Finished, out.Stopped = s.Finished, s.Stopped
				if s.Finished.After(finished) {
					finished = s.Finished
				}
				words = append(words, word{finished, s})
			}
			r.Runs = append(r.Runs, out)
		}
	}
	if several {
		slices.SortStableFunc(r.Runs, func(x, y Run) int { return x.Started.Compare(y.Started) })
		slices.SortStableFunc(words, func(x, y word) int { return x.finished.Compare(y.finished) })
	}
	// Per host: the latest word of the runs read.
	for i := range r.Hosts {
		h := &r.Hosts[i]
		for _, w := range words {
			s := w.s
			if v, ok := s.Slowed[h.Host]; ok {
				h.Slowed = proseOf(v, HostLoadText)
			}
			for origin, v := range s.Validators {
				if hostOf(origin) == h.Host {
					h.Validators = proseOf(v, ValidatorsText)
				}
			}
			if v, ok := s.Demand[h.Host]; ok {
				h.Demand = proseOf(v, DemandText)
			}
			if v, ok := s.URLSpace[h.Host]; ok {
				h.URLSpace = v
			}
		}
	}
	return r, nil
}

// uniqueDirs drops the directories given twice: the same after
// filepath.Abs, the first spelling kept.
func uniqueDirs(dirs []string) ([]string, error) {
	seen := make(map[string]bool, len(dirs))
	var out []string
	for _, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		if !seen[abs] {
			seen[abs] = true
			out = append(out, dir)
		}
	}
	return out, nil
}

// readJob finds what there is to read in the job directory dir.
func readJob(dir string, opt Options) (*job, error) {
	runs, err := reqlog.Runs(dir)
	if err != nil {
		return nil, err
	}
	summaries, err := readRuns(dir)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 && len(summaries) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", dir, ErrNoJob)
	}
	if len(runs) == 0 {
		// runs.jsonl alone: the job was crawled by a version that kept no
		// request log, and an empty report would say nothing was sent.
		return nil, fmt.Errorf("%s: %w (its %d runs in runs.jsonl were crawled before gentlecrawl kept one)", dir, ErrNoRequestLog, len(summaries))
	}
	if opt.Run != 0 {
		if !slices.Contains(runs, opt.Run) {
			return nil, fmt.Errorf("%s: no run %d (runs with a request log: %v)", dir, opt.Run, runs)
		}
		runs = []int{opt.Run}
	}
	jb := &job{dir: dir, runs: runs, byRun: make(map[int]*runSummary)}
	for i := range summaries {
		jb.byRun[summaries[i].Run] = &summaries[i]
	}
	return jb, nil
}

// errStop ends reading a request log early.
var errStop = errors.New("stop")

// logStart returns the start of a request log's run, from its header.
func logStart(path string) (time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return time.Time{}, err
	}
	defer f.Close()
	var start time.Time
	err = reqlog.Read(f, reqlog.Visitor{
		Header:     func(_ int, t time.Time) error { start = t; return errStop },
		Request:    func(*reqlog.Record) error { return errStop },
		CrawlDelay: func(string, time.Duration) error { return errStop },
		Queued:     func(string, int) error { return errStop },
	})
	if err != nil && !errors.Is(err, errStop) {
		return time.Time{}, fmt.Errorf("%s: %w", path, err)
	}
	return start, nil
}

// hostOf returns the host name of an origin ("http://a.test:8080" → "a.test").
func hostOf(origin string) string {
	if u, err := url.Parse(origin); err == nil && u.Host != "" {
		return strings.ToLower(u.Hostname())
	}
	return origin
}

// readRuns reads runs.jsonl; a line without a run number (written before
// runs were numbered) takes its place in the file.
func readRuns(dir string) ([]runSummary, error) {
	f, err := os.Open(filepath.Join(dir, "runs.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxRunLine)
	var out []runSummary
	for n := 1; sc.Scan(); n++ {
		var s runSummary
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return nil, fmt.Errorf("runs.jsonl line %d: %w", n, err)
		}
		if s.Run == 0 {
			s.Run = n
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("runs.jsonl: %w", err)
	}
	return out, nil
}

// timeBins is a histogram of durations on a log scale: bin i holds
// durations around 100 µs × 1.15^i, up to about 20 minutes.
const timeBins = 120

type histogram [timeBins]uint32

func binOf(d time.Duration) int {
	us := float64(d) / float64(time.Microsecond)
	if us <= 100 {
		return 0
	}
	i := int(math.Log(us/100) / math.Log(1.15))
	return min(i, timeBins-1)
}

// binMS is the middle of bin i, in milliseconds.
func binMS(i int) float64 { return 0.1 * math.Pow(1.15, float64(i)+0.5) }

func (h *histogram) quantile(q float64, n int) float64 {
	if n == 0 {
		return 0
	}
	want := uint64(math.Ceil(q * float64(n)))
	var seen uint64
	for i, c := range h {
		seen += uint64(c)
		if seen >= want {
			return binMS(i)
		}
	}
	return binMS(timeBins - 1)
}

type bucket struct {
	Bucket
	timed  int
	sumMS  float64
	times  histogram
	filled bool
}

type hostAgg struct {
	name        string
	requests    int
	byStatus    map[int]int
	wire        int64
	timed       int
	sumMS       float64
	notModified int
	urls        map[uint64]struct{}
	queued      int
	queuedSet   bool
	queuedAt    time.Time // the end of the run whose log said queued
	delay       time.Duration
	hasDelay    bool
}

type aggregate struct {
	r           Report
	seed        maphash.Seed
	byStatus    map[int]int
	timed       int
	sumMS       float64
	ttfbN       int
	sumTTFB     float64
	times       histogram
	ttfbs       histogram
	origin      time.Time
	width       time.Duration
	buckets     []bucket
	hosts       map[string]*hostAgg
	runStart    map[runKey]time.Time
	runRequests map[runKey]int
	curJob      int
	curRun      int
	logEnd      time.Time      // the latest time of the log being read
	queued      map[string]int // its queue lines, settled at its end
}

func newAggregate() *aggregate {
	a := &aggregate{
		seed: maphash.MakeSeed(), byStatus: map[int]int{}, hosts: map[string]*hostAgg{},
		runStart: map[runKey]time.Time{}, runRequests: map[runKey]int{}, queued: map[string]int{}, width: time.Second,
	}
	a.r.ByType, a.r.ByPurpose, a.r.ByKind, a.r.Errors = map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	return a
}

func (a *aggregate) host(name string) *hostAgg {
	h := a.hosts[name]
	if h == nil {
		h = &hostAgg{name: name, byStatus: map[int]int{}, urls: map[uint64]struct{}{}}
		a.hosts[name] = h
	}
	return h
}

// readLog reads the request log at path into the aggregate, for the job
// a.curJob; it returns the latest time the log shows (its start or a
// request's end). Its queue lines wait for settle.
func (a *aggregate) readLog(path string) (time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return time.Time{}, err
	}
	defer f.Close()
	a.logEnd = time.Time{}
	clear(a.queued)
	err = reqlog.Read(f, reqlog.Visitor{
		Header: func(run int, start time.Time) error {
			a.curRun = run
			a.runStart[runKey{a.curJob, run}] = start
			if start.After(a.logEnd) {
				a.logEnd = start
			}
			if a.origin.IsZero() || start.Before(a.origin) {
				if !a.origin.IsZero() {
					a.rebase(start)
				}
				a.origin = start
			}
			return nil
		},
		Request: func(r *reqlog.Record) error {
			a.add(r)
			if end := r.Start.Add(r.Duration); end.After(a.logEnd) {
				a.logEnd = end
			}
			return nil
		},
		CrawlDelay: func(host string, d time.Duration) error {
			h := a.host(host)
			h.delay, h.hasDelay = d, true
			return nil
		},
		Queued: func(host string, n int) error {
			a.queued[host] = n
			return nil
		},
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", path, err)
	}
	return a.logEnd, nil
}

// settle takes the queue lines of the log just read, whose run ended at
// end: a host's queue is what the run that ended last said of it. (One
// job's runs are read in order and end in order, so there the last log
// read says it, as each process logs the queue at its end.)
func (a *aggregate) settle(end time.Time) {
	for host, n := range a.queued {
		h := a.host(host)
		if !h.queuedSet || !end.Before(h.queuedAt) {
			h.queued, h.queuedSet, h.queuedAt = n, true, end
		}
	}
	clear(a.queued)
}

// rebase moves the timeline's origin earlier (a log whose run started
// before the first one read): the buckets are rebuilt from scratch, which
// only happens when logs are read out of order.
func (a *aggregate) rebase(start time.Time) {
	shift := int(a.origin.Sub(start) / a.width)
	if shift <= 0 {
		return
	}
	nb := make([]bucket, shift, shift+len(a.buckets))
	a.buckets = append(nb, a.buckets...)
	a.fit()
}

// slot returns the bucket of time t, widening the buckets to keep at most
// maxBuckets.
func (a *aggregate) slot(t time.Time) *bucket {
	if a.origin.IsZero() {
		a.origin = t
	}
	off := max(0, t.Sub(a.origin))
	i := int(off / a.width)
	for i >= maxBuckets {
		a.width *= 2
		a.merge()
		i = int(off / a.width)
	}
	for len(a.buckets) <= i {
		a.buckets = append(a.buckets, bucket{})
	}
	return &a.buckets[i]
}

// fit halves the number of buckets until they fit maxBuckets.
func (a *aggregate) fit() {
	for len(a.buckets) > maxBuckets {
		a.width *= 2
		a.merge()
	}
}

// merge joins buckets pairwise after the width doubled.
func (a *aggregate) merge() {
	out := make([]bucket, (len(a.buckets)+1)/2)
	for i := range a.buckets {
		o, b := &out[i/2], &a.buckets[i]
		o.Requests += b.Requests
		o.Wire += b.Wire
		o.Decoded += b.Decoded
		o.NotModified += b.NotModified
		o.Overloaded += b.Overloaded
		o.Robots += b.Robots
		o.RobotsFailed += b.RobotsFailed
		o.DNSFailures += b.DNSFailures
		o.ConnFailures += b.ConnFailures
		o.timed += b.timed
		o.sumMS += b.sumMS
		for j, c := range b.times {
			o.times[j] += c
		}
	}
	a.buckets = out
}

func overloaded(status int) bool {
	switch status {
	case 429, 500, 502, 503, 504:
		return true
	}
	return false
}

func (a *aggregate) add(r *reqlog.Record) {
	a.r.Requests++
	a.runRequests[runKey{a.curJob, a.curRun}]++
	end := r.Start.Add(r.Duration)
	if a.r.First.IsZero() || r.Start.Before(a.r.First) {
		a.r.First = r.Start
	}
	if end.After(a.r.Last) {
		a.r.Last = end
	}
	a.byStatus[r.Status]++
	typ := r.Type
	if typ == "" {
		typ = "none"
	}
	a.r.ByType[typ]++
	a.r.ByKind[r.Kind]++
	if r.Purpose != "" {
		a.r.ByPurpose[r.Purpose]++
	}
	a.r.Bytes.Wire += r.Wire
	a.r.Bytes.Decoded += r.Body
	a.r.Bytes.SavedNotModified += r.Saved
	if r.Compressed && r.Body > r.Wire {
		a.r.Bytes.SavedCompression += r.Body - r.Wire
	}
	if r.Retried {
		a.r.Retried++
	}
	if r.Conditional {
		a.r.Conditional.Sent++
		if r.Status == 304 {
			a.r.Conditional.NotModified++
		}
	}
	b := a.slot(r.Start)
	b.Requests++
	b.Wire += r.Wire
	b.Decoded += r.Body
	if r.Status == 304 {
		b.NotModified++
	}
	if overloaded(r.Status) {
		b.Overloaded++
	}
	if r.Kind == reqlog.KindRobots {
		b.Robots++
		if r.Status == 0 || r.Status >= 500 || r.Status == 429 {
			b.RobotsFailed++
		}
	}
	h := a.host(r.Host)
	h.requests++
	h.byStatus[r.Status]++
	h.wire += r.Wire
	if r.Status == 304 {
		h.notModified++
	}
	if r.Kind != reqlog.KindRobots {
		h.urls[maphash.String(a.seed, r.URL)] = struct{}{}
	}
	if r.Status == 0 {
		a.r.Errors[r.Error]++
		switch r.Error {
		case "dns":
			b.DNSFailures++
		case "refused", "reset", "timeout", "network":
			b.ConnFailures++
		}
		return
	}
	ms := float64(r.Duration) / float64(time.Millisecond)
	a.timed++
	a.sumMS += ms
	a.times[binOf(r.Duration)]++
	a.ttfbN++
	a.sumTTFB += float64(r.TTFB) / float64(time.Millisecond)
	a.ttfbs[binOf(r.TTFB)]++
	b.timed++
	b.sumMS += ms
	b.times[binOf(r.Duration)]++
	h.timed++
	h.sumMS += ms
}

func statusKey(s int) string {
	if s == 0 {
		return "none"
	}
	return strconv.Itoa(s)
}

func (a *aggregate) report(opt Options) *Report {
	r := a.r
	r.ByStatus = make(map[string]int, len(a.byStatus))
	for s, n := range a.byStatus {
		r.ByStatus[statusKey(s)] = n
	}
	r.ResponseTime = durations(a.timed, a.sumMS, &a.times)
	r.TTFB = durations(a.ttfbN, a.sumTTFB, &a.ttfbs)
	r.OverTime = Timeline{Start: a.origin, Seconds: a.width.Seconds(), Buckets: []Bucket{}}
	for i := range a.buckets {
		b := &a.buckets[i]
		out := b.Bucket
		out.Start = a.origin.Add(time.Duration(i) * a.width)
		d := durations(b.timed, b.sumMS, &b.times)
		out.MeanMS, out.P50MS, out.P95MS = d.MeanMS, d.P50MS, d.P95MS
		r.OverTime.Buckets = append(r.OverTime.Buckets, out)
	}
	hosts := make([]*hostAgg, 0, len(a.hosts))
	for _, h := range a.hosts {
		if h.requests > 0 {
			hosts = append(hosts, h)
		}
	}
	r.HostsTotal = len(hosts)
	slices.SortFunc(hosts, func(x, y *hostAgg) int {
		if x.requests != y.requests {
			return y.requests - x.requests
		}
		return strings.Compare(x.name, y.name)
	})
	r.Hosts = []Host{}
	for _, h := range hosts[:min(len(hosts), opt.Hosts)] {
		out := Host{Host: h.name, Requests: h.requests, ByStatus: map[string]int{}, Wire: h.wire,
			NotModified: h.notModified, Fetched: len(h.urls), Queued: h.queued}
		for s, n := range h.byStatus {
			out.ByStatus[statusKey(s)] = n
		}
		if h.timed > 0 {
			out.MeanMS = round(h.sumMS / float64(h.timed))
		}
		if h.hasDelay && h.delay > 0 {
			out.CrawlDelay = h.delay.Seconds()
			out.MaxPerDay = int(24 * time.Hour / h.delay)
			known := out.Fetched + out.Queued
			out.DaysPerPass = round(float64(known) * h.delay.Seconds() / 86400)
			out.CrawlDelayIs = fmt.Sprintf("Crawl-delay %s → at most %s requests a day; %s known URLs → %s for one pass",
				trimFloat(h.delay.Seconds()), group(out.MaxPerDay), group(known), span(time.Duration(known)*h.delay))
		}
		r.Hosts = append(r.Hosts, out)
	}
	return &r
}

func durations(n int, sum float64, h *histogram) Durations {
	if n == 0 {
		return Durations{}
	}
	return Durations{Count: n, MeanMS: round(sum / float64(n)), P50MS: round(h.quantile(0.5, n)), P95MS: round(h.quantile(0.95, n))}
}

func round(x float64) float64 { return math.Round(x*100) / 100 }

// group writes n with thousands separators: 8640 → "8,640".
func group(n int) string {
	s := strconv.Itoa(n)
	neg := ""
	if n < 0 {
		neg, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return neg + s
}

func trimFloat(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// span writes a long duration the way a person would say it.
func span(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%s days", trimFloat(math.Round(d.Hours()/24*10)/10))
	case d >= 2*time.Hour:
		return fmt.Sprintf("%s hours", trimFloat(math.Round(d.Hours()*10)/10))
	case d >= 2*time.Minute:
		return fmt.Sprintf("%s minutes", trimFloat(math.Round(d.Minutes()*10)/10))
	}
	return d.Round(time.Second).String()
}
