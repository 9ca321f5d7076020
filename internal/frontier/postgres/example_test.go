package postgres_test

import (
	"context"
	"errors"
	"log"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
	"github.com/gentlecrawl/gentlecrawl/internal/frontier/postgres"
)

// A worker of a shared crawl: every process opened on the same database
// claims whichever host is due, fetches, and releases it. (Compiled, not
// run: it needs a server.)
func Example() {
	ctx := context.Background()
	s, err := postgres.Open(ctx, "postgres://crawler@db.example/crawl?sslmode=require", postgres.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close() // gives back the leases it holds
	u := "https://a.example/"
	if _, err := s.Add(ctx, frontier.Batch{Add: []frontier.Candidate{{Host: "a.example", Canonical: u, Entry: frontier.Entry{URL: u}}}}); err != nil {
		log.Fatal(err)
	}
	l, next, err := s.Claim(ctx, frontier.ClaimRequest{Now: time.Now(), Max: 16, TTL: time.Hour})
	if err != nil || l == nil {
		log.Println("nothing due until", next, err)
		return
	}
	var results []frontier.Result
	for _, it := range l.Items {
		// … fetch it.URL …
		results = append(results, frontier.Result{Item: it, Outcome: frontier.Fetched, Canonical: it.URL,
			History: &frontier.History{URL: it.URL, Status: 200}})
	}
	_, err = s.Release(ctx, frontier.ReleaseRequest{Lease: l, Results: results, Next: time.Now().Add(time.Second)})
	if errors.Is(err, frontier.ErrLeaseLost) {
		log.Println("another worker took the host: this lease's work is discarded")
	}
}
