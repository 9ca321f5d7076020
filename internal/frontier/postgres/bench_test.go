package postgres_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
	"github.com/gentlecrawl/gentlecrawl/internal/frontier/postgres"
	"github.com/gentlecrawl/gentlecrawl/internal/pgtest"
)

// BenchmarkLeases measures claim+release cycles per second (leases/s):
// eight workers claim whichever of 1,000 hosts is due, settle its one URL
// with a history and give it back, due again at once. The "links" cases
// also admit five new links per release, as a crawl does (Admit set).
// "nosync" runs on the tests' server, which never syncs (pgtest's
// default); the others on a server of their own with PostgreSQL's
// default durability (fsync, full-page writes), with the store's
// default asynchronous commit, or with SyncCommit (every commit waits for
// its WAL flush).
//
//	go test -tags pebblegozstd -run '^$' -bench Leases -benchtime 20000x ./internal/frontier/postgres/
func BenchmarkLeases(b *testing.B) {
	for _, bc := range []struct {
		name          string
		durable, sync bool
		links         int
	}{
		{"nosync", false, false, 0},
		{"nosync-links", false, false, 5},
		{"durable", true, false, 0},
		{"durable-links", true, false, 5},
		{"synccommit", true, true, 0},
		{"synccommit-links", true, true, 5},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv := pgtest.Require(b)
			if bc.durable {
				var err error
				if srv, err = pgtest.Start(context.Background(), pgtest.Config{Durable: true}); err != nil {
					b.Fatal(err)
				}
				defer srv.Stop()
			}
			dsn, err := srv.CreateDB(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			benchmarkLeases(b, srv, dsn+"&pool_max_conns=16", postgres.Options{SyncCommit: bc.sync}, bc.links)
		})
	}
}

func admitAll(frontier.Candidate) bool { return true }

func benchmarkLeases(b *testing.B, srv *pgtest.Server, dsn string, opts postgres.Options, links int) {
	const hosts, workers = 1000, 8
	s := open(b, dsn, opts)
	var cs []frontier.Candidate
	flush := func() {
		if _, err := s.Add(ctx, frontier.Batch{Add: cs}); err != nil {
			b.Fatal(err)
		}
		cs = cs[:0]
	}
	// Enough URLs that no host runs dry: each lease settles one.
	for i := range b.N + hosts*workers {
		cs = append(cs, cand("h"+strconv.Itoa(i%hosts)+".test", "/"+strconv.Itoa(i)))
		if len(cs) == 5000 {
			flush()
		}
	}
	flush()
	var leases, misses, linkSeq atomic.Int64
	b.SetParallelism(max(1, workers/runtime.GOMAXPROCS(0))) // workers goroutines
	pgBefore, err := srv.CPUTime()
	if err != nil {
		b.Fatal(err)
	}
	goBefore := processCPU()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
		for pb.Next() {
			for {
				now := time.Now()
				l, _, err := s.Claim(ctx, frontier.ClaimRequest{Now: now, Max: 1, TTL: time.Minute})
				if err != nil {
					b.Error(err)
					return
				}
				if l == nil {
					misses.Add(1)
					continue
				}
				r := done(l.Items[0])
				for range links {
					n := linkSeq.Add(1)
					r.Add = append(r.Add, cand("h"+strconv.Itoa(rng.IntN(hosts))+".test", "/link"+strconv.FormatInt(n, 10)))
				}
				if _, err := s.Release(ctx, frontier.ReleaseRequest{Lease: l, Results: []frontier.Result{r}, Next: now, Admit: admitAll}); err != nil {
					b.Error(err)
					return
				}
				leases.Add(1)
				break
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	pgAfter, err := srv.CPUTime()
	if err != nil {
		b.Fatal(err)
	}
	n := float64(max(1, leases.Load()))
	b.ReportMetric(float64(leases.Load())/elapsed.Seconds(), "leases/s")
	b.ReportMetric(float64(misses.Load())/n, "misses/lease")
	// Processor time per lease, the server's and this process's: what
	// other load on the machine does not change.
	b.ReportMetric(float64((pgAfter-pgBefore).Microseconds())/n, "pg-cpu-µs/lease")
	b.ReportMetric(float64((processCPU()-goBefore).Microseconds())/n, "go-cpu-µs/lease")
}

// processCPU is the processor time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
