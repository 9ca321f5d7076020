// Package frontiertest is the conformance suite every frontier.Frontier
// implementation passes: the tests of the embedded store and of the
// PostgreSQL frontier run it, and so must those of any other backend.
package frontiertest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
)

// Backend opens the implementation under test.
type Backend struct {
	// Open returns a new, empty frontier with the given budgets; the
	// backend closes it when the test ends.
	Open func(t *testing.T, limits frontier.Limits) frontier.Frontier
	// Reopen closes f and opens the same frontier again, as a new process
	// would after f's process died. The leases f held are gone.
	Reopen func(t *testing.T, f frontier.Frontier) frontier.Frontier
}

// Run runs the suite against b.
func Run(t *testing.T, b Backend) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, Backend)
	}{
		{"AddDeduplicates", testAddDeduplicates},
		{"ClaimOrder", testClaimOrder},
		{"ClaimIsExclusive", testClaimIsExclusive},
		{"DueTimes", testDueTimes},
		{"ReleaseOutcomes", testReleaseOutcomes},
		{"ReleaseAdmitsLinks", testReleaseAdmitsLinks},
		{"NextAllowedTime", testNextAllowedTime},
		{"LeaseExpiry", testLeaseExpiry},
		{"BadRelease", testBadRelease},
		{"Budgets", testBudgets},
		{"Requeue", testRequeue},
		{"Revisit", testRevisit},
		{"Records", testRecords},
		{"Reopen", testReopen},
		{"Invariant", testInvariant},
		{"Concurrent", testConcurrent},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, b) })
	}
}

var ctx = context.Background()

// t0 is the suite's clock: every call passes its own time.
var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

func host(i int) string { return "h" + strconv.Itoa(i) + ".test" }

// cand returns the candidate for path on host.
func cand(host, path string) frontier.Candidate {
	u := "https://" + host + path
	return frontier.Candidate{Host: host, Canonical: u, Entry: frontier.Entry{URL: u}}
}

func add(t *testing.T, f frontier.Frontier, cs ...frontier.Candidate) frontier.Added {
	t.Helper()
	a, err := f.Add(ctx, frontier.Batch{Add: cs})
	if err != nil {
		t.Fatalf("Add: %v", err)
	}
	return a
}

func claim(t *testing.T, f frontier.Frontier, h string, now time.Time, n int) (*frontier.Lease, time.Time) {
	t.Helper()
	l, next, err := f.Claim(ctx, frontier.ClaimRequest{Host: h, Now: now, Max: n})
	if err != nil {
		t.Fatalf("Claim(%q): %v", h, err)
	}
	return l, next
}

func release(t *testing.T, f frontier.Frontier, l *frontier.Lease, next time.Time, rs ...frontier.Result) frontier.Added {
	t.Helper()
	a, err := f.Release(ctx, frontier.ReleaseRequest{Lease: l, Results: rs, Next: next})
	if err != nil {
		t.Fatalf("Release(%s): %v", l.Host, err)
	}
	return a
}

// done is the result that settles item as fetched.
func done(item *frontier.Item) frontier.Result {
	return frontier.Result{Item: item, Outcome: frontier.Fetched, Canonical: item.URL,
		History: &frontier.History{URL: item.URL, Status: 200}}
}

func urls(l *frontier.Lease) []string {
	if l == nil {
		return nil
	}
	var out []string
	for _, it := range l.Items {
		out = append(out, it.URL)
	}
	return out
}

func testAddDeduplicates(t *testing.T, b Backend) {
	f := b.Open(t, frontier.Limits{})
	a, b2 := host(1), host(2)
	got := add(t, f, cand(a, "/1"), cand(a, "/2"), cand(b2, "/1"), cand(a, "/1"))
	if got.Queued[a] != 2 || got.Queued[b2] != 1 || got.Total() != 3 {
		t.Fatalf("Add queued %v, want %s:2 %s:1 (a repeat in one batch is dropped)", got.Queued, a, b2)
	}
	got = add(t, f, cand(a, "/2"), cand(a, "/3"))
	if got.Total() != 1 {
		t.Fatalf("second Add queued %v, want only /3", got.Queued)
	}
	for _, c := range []string{"/1", "/2", "/3"} {
		if seen, err := f.Seen(ctx, "https://"+a+c); err != nil || !seen {
			t.Errorf("Seen(%s) = %v, %v", c, seen, err)
		}
	}
	if seen, _ := f.Seen(ctx, "https://"+a+"/4"); seen {
		t.Error("a URL never added is seen")
	}
	if err := f.MarkSeen(ctx, "https://"+a+"/4"); err != nil {
		t.Fatal(err)
	}
	if got := add(t, f, cand(a, "/4")); got.Total() != 0 {
		t.Error("a URL marked seen was queued")
	}
	refuse := func(c frontier.Candidate) bool { return c.URL != "https://"+a+"/5" }
	got, err := f.Add(ctx, frontier.Batch{Add: []frontier.Candidate{cand(a, "/5"), cand(a, "/6")}, Admit: refuse})
	if err != nil || got.Total() != 1 {
		t.Fatalf("Add with Admit = %v, %v; want /6 only", got.Queued, err)
	}
	if got := add(t, f, cand(a, "/5")); got.Total() != 0 {
		t.Error("a URL refused by Admit was queued when offered again: it is refused once, then seen")
	}
	hosts, err := f.Hosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pending := map[string]int{}
	for _, h := range hosts {
		pending[h.Host] = h.Pending
	}
	if fmt.Sprint(pending) != fmt.Sprint(map[string]int{a: 4, b2: 1}) {
		t.Errorf("Hosts pending = %v", pending)
	}
	if _, err := f.Add(ctx, frontier.Batch{Add: []frontier.Candidate{{Canonical: "x", Entry: frontier.Entry{URL: "x"}}}}); err == nil {
		t.Error("a candidate without a host was accepted")
	}
}

func testClaimOrder(t *testing.T, b Backend) {
	f := b.Open(t, frontier.Limits{})
	a, b2 := host(1), host(2)
	add(t, f, cand(a, "/1"), cand(a, "/2"), cand(a, "/3"))
	add(t, f, cand(b2, "/1"))
	// a is claimed, released with a next allowed time 10 s ahead: b2 is the
	// host due first now.
	l, _ := claim(t, f, a, at(0), 2)
	if fmt.Sprint(urls(l)) != fmt.Sprint([]string{"https://" + a + "/1", "https://" + a + "/2"}) {
		t.Fatalf("lease of %s = %v; want the first two, first queued first", a, urls(l))
	}
	release(t, f, l, at(10), done(l.Items[0]))
	l, _ = claim(t, f, "", at(1), 5)
	if l == nil || l.Host != b2 {
		t.Fatalf("Claim(any) at 1 s = %v; want %s (%s waits until 10 s)", urls(l), b2, a)
	}
	release(t, f, l, at(20), done(l.Items[0]))
	l, next := claim(t, f, "", at(2), 5)
	if l != nil || !next.Equal(at(10)) {
		t.Fatalf("Claim(any) at 2 s = %v, next %v; want none until 10 s", urls(l), next)
	}
	l, _ = claim(t, f, "", at(10), 5)
	// /2 was in the lease without a result: it is queued as it was.
	if fmt.Sprint(urls(l)) != fmt.Sprint([]string{"https://" + a + "/2", "https://" + a + "/3"}) {
		t.Fatalf("Claim at 10 s = %v; want /2 (returned unsettled) then /3", urls(l))
	}
	release(t, f, l, at(11), done(l.Items[0]), done(l.Items[1]))
	if l, next := claim(t, f, "", at(100), 5); l != nil || !next.IsZero() {
		t.Fatalf("Claim with nothing queued = %v, %v; want nothing, zero time", urls(l), next)
	}
	if l, next := claim(t, f, "unknown.test", at(100), 5); l != nil || !next.IsZero() {
		t.Fatalf("Claim of an unknown host = %v, %v", urls(l), next)
	}
}

func testClaimIsExclusive(t *testing.T, b Backend) {
	f := b.Open(t, frontier.Limits{})
	a := host(1)
	add(t, f, cand(a, "/1"), cand(a, "/2"))
	l, _ := claim(t, f, a, at(0), 1)
	if l == nil {
		t.Fatal("no lease")
	}
	if l2, next := claim(t, f, a, at(1), 1); l2 != nil || !next.Equal(l.Expires) {
		t.Fatalf("second Claim of a leased host = %v, next %v; want none until the lease expires (%v)", urls(l2), next, l.Expires)
	}
	if l2, _ := claim(t, f, "", at(1), 1); l2 != nil {
		t.Fatalf("Claim(any) handed out a leased host: %v", urls(l2))
	}
	release(t, f, l, at(0), done(l.Items[0]))
	if _, err := f.Release(ctx, frontier.ReleaseRequest{Lease: l, Next: at(0)}); !errors.Is(err, frontier.ErrLeaseLost) {
		t.Errorf("releasing a lease twice = %v, want ErrLeaseLost", err)
	}
}

func testDueTimes(t *testing.T, b Backend) {
	f := b.Open(t, frontier.Limits{})
	a := host(1)
	later := cand(a, "/later")
	later.Due = at(60)
	add(t, f, later, cand(a, "/now"))
	l, _ := claim(t, f, a, at(0), 10)
	if fmt.Sprint(urls(l)) != fmt.Sprint([]string{"https://" + a + "/now"}) {
		t.Fatalf("lease at 0 s = %v; want /now only", urls(l))
	}
	release(t, f, l, at(0), done(l.Items[0]))
	if l, next := claim(t, f, "", at(30), 10); l != nil || !next.Equal(at(60)) {
		t.Fatalf("Claim at 30 s = %v, %v; want none until 60 s", urls(l), next)
	}
	if l, _ := claim(t, f, "", at(60), 10); l == nil || urls(l)[0] != "https://"+a+"/later" {
		t.Fatalf("Claim at 60 s = %v; want /later", urls(l))
	}

	// A URL added due before those queued is claimed first, however the
	// backend keeps its queues (the embedded one keeps the first entries of
	// a claimed queue in memory).
	b2 := host(2)
	var cs []frontier.Candidate
	for i := range 4 {
		c := cand(b2, "/q"+strconv.Itoa(i))
		c.Due = at(100 + i)
		cs = append(cs, c)
	}
	add(t, f, cs...)
	l, _ = claim(t, f, b2, at(200), 1)
	release(t, f, l, at(200), done(l.Items[0]))
	early := cand(b2, "/early")
	early.Due = at(50)
	add(t, f, early)
	l, _ = claim(t, f, b2, at(200), 2)
	if fmt.Sprint(urls(l)) != fmt.Sprint([]string{"https://" + b2 + "/early", "https://" + b2 + "/q1"}) {
		t.Fatalf("lease after a URL due earlier was added = %v; want /early, then /q1", urls(l))
	}
	// And one added due after them waits its turn.
	release(t, f, l, at(200), done(l.Items[0]))
	last := cand(b2, "/last")
	last.Due = at(150)
	add(t, f, last)
	l, _ = claim(t, f, b2, at(200), 5)
	if fmt.Sprint(urls(l)) != fmt.Sprint([]string{"https://" + b2 + "/q1", "https://" + b2 + "/q2", "https://" + b2 + "/q3", "https://" + b2 + "/last"}) {
		t.Fatalf("lease = %v; want /q1 (returned), /q2, /q3, /last", urls(l))
	}
}

func testReleaseOutcomes(t *testing.T, b Backend) {
	f := b.Open(t, frontier.Limits{})
	a := host(1)
	add(t, f, cand(a, "/retry-now"), cand(a, "/retry-later"), cand(a, "/gone"), cand(a, "/no"))
	l, _ := claim(t, f, a, at(0), 4)
	if len(l.Items) != 4 {
		t.Fatalf("lease = %v", urls(l))
	}
	release(t, f, l, at(0),
		frontier.Result{Item: l.Items[0], Outcome: frontier.Retry},
		frontier.Result{Item: l.Items[1], Outcome: frontier.Retry, RetryAt: at(100)},
		frontier.Result{Item: l.Items[2], Outcome: frontier.Gone, Canonical: l.Items[2].URL, History: &frontier.History{URL: l.Items[2].URL, Status: 404}},
		frontier.Result{Item: l.Items[3], Outcome: frontier.Disallowed},
	)
	l, _ = claim(t, f, a, at(1), 4)
	if len(l.Items) != 1 || l.Items[0].URL != "https://"+a+"/retry-now" || l.Items[0].Attempts != 1 {
		t.Fatalf("after release, lease at 1 s = %+v; want /retry-now with one attempt counted", l.Items)
	}
	release(t, f, l, at(1), frontier.Result{Item: l.Items[0], Outcome: frontier.Retry})
	l, _ = claim(t, f, a, at(100), 4)
	if fmt.Sprint(urls(l)) != fmt.Sprint([]string{"https://" + a + "/retry-now", "https://" + a + "/retry-later"}) {
		t.Fatalf("lease at 100 s = %v", urls(l))
	}
	if l.Items[0].Attempts != 2 || l.Items[1].Attempts != 1 {
		t.Errorf("attempts = %d, %d; want 2, 1", l.Items[0].Attempts, l.Items[1].Attempts)
	}
	h, err := f.History(ctx, "https://"+a+"/gone")
	if err != nil || h == nil || h.Status != 404 || h.Outcome != string(frontier.Gone) {
		t.Errorf("History of /gone = %+v, %v; want status 404, outcome gone", h, err)
	}
	if h, _ := f.History(ctx, "https://"+a+"/no"); h != nil {
		t.Errorf("a result without a history wrote one: %+v", h)
	}
}

func testReleaseAdmitsLinks(t *testing.T, b Backend) {
	f := b.Open(t, frontier.Limits{})
	a, b2 := host(1), host(2)
	add(t, f, cand(a, "/1"))
	l, _ := claim(t, f, a, at(0), 1)
	r := done(l.Items[0])
	r.Add = []frontier.Candidate{cand(a, "/1"), cand(a, "/2"), cand(b2, "/x"), cand(b2, "/trap")}
	got, err := f.Release(ctx, frontier.ReleaseRequest{Lease: l, Results: []frontier.Result{r}, Next: at(1),
		Admit: func(c frontier.Candidate) bool { return c.URL != "https://"+b2+"/trap" }})
	if err != nil {
		t.Fatal(err)
	}
	if got.Queued[a] != 1 || got.Queued[b2] != 1 {
		t.Fatalf("Release queued %v; want %s:1 (/1 is seen) %s:1 (/trap refused)", got.Queued, a, b2)
	}
	if l, _ := claim(t, f, b2, at(0), 5); fmt.Sprint(urls(l)) != fmt.Sprint([]string{"https://" + b2 + "/x"}) {
		t.Fatalf("lease of %s = %v", b2, urls(l))
	}
}

func testNextAllowedTime(t *testing.T, b Backend) {
	f := b.Open(t, frontier.Limits{})
	a := host(1)
	add(t, f, cand(a, "/1"), cand(a, "/2"))
	l, _ := claim(t, f, a, at(0), 1)
	release(t, f, l, at(30), done(l.Items[0]))
	if l, next := claim(t, f, a, at(29), 1); l != nil || !next.Equal(at(30)) {
		t.Fatalf("Claim before the next allowed time = %v, %v; want none until 30 s", urls(l), next)
	}
	// Adding URLs does not make a host due earlier.
	add(t, f, cand(a, "/3"))
	if l, _ := claim(t, f, "", at(29), 1); l != nil {
		t.Fatalf("Claim(any) before the next allowed time = %v", urls(l))
	}
	if l, _ := claim(t, f, "", at(30), 1); l == nil {
		t.Fatal("no lease at the next allowed time")
	}
	hosts, _ := f.Hosts(ctx)
	if len(hosts) != 1 || !hosts[0].Next.Equal(at(30)) || !hosts[0].Leased || hosts[0].Pending != 2 {
		t.Errorf("Hosts = %+v", hosts)
	}
}

func testLeaseExpiry(t *testing.T, b Backend) {
	f := b.Open(t, frontier.Limits{})
	a := host(1)
	add(t, f, cand(a, "/1"))
	l1, _, err := f.Claim(ctx, frontier.ClaimRequest{Host: a, Now: at(0), Max: 1, TTL: time.Minute})
	if err != nil || l1 == nil {
		t.Fatalf("Claim = %v, %v", l1, err)
	}
	if l, next := claim(t, f, "", at(59), 1); l != nil || !next.Equal(at(60)) {
		t.Fatalf("Claim before the lease expires = %v, %v", urls(l), next)
	}
	l2, _ := claim(t, f, "", at(60), 1)
	if l2 == nil || fmt.Sprint(urls(l2)) != fmt.Sprint(urls(l1)) {
		t.Fatalf("Claim after the lease expired = %v; want the same URL again", urls(l2))
	}
	if _, err := f.Release(ctx, frontier.ReleaseRequest{Lease: l1, Results: []frontier.Result{done(l1.Items[0])}, Next: at(61)}); !errors.Is(err, frontier.ErrLeaseLost) {
		t.Fatalf("Release of the expired lease = %v, want ErrLeaseLost", err)
	}
	release(t, f, l2, at(61), done(l2.Items[0]))
	if l, next := claim(t, f, "", at(1000), 1); l != nil || !next.IsZero() {
		t.Fatalf("after the release, Claim = %v, %v; want nothing queued", urls(l), next)
	}
}

func testBadRelease(t *testing.T, b Backend) {
	f := b.Open(t, frontier.Limits{})
	a, b2 := host(1), host(2)
	add(t, f, cand(a, "/1"), cand(b2, "/1"))
	la, _ := claim(t, f, a, at(0), 1)
	lb, _ := claim(t, f, b2, at(0), 1)
	for name, rs := range map[string][]frontier.Result{
		"another lease's item": {done(lb.Items[0])},
		"two results for one":  {done(la.Items[0]), done(la.Items[0])},
		"unknown outcome":      {{Item: la.Items[0], Outcome: "maybe"}},
		"history, no key":      {{Item: la.Items[0], Outcome: frontier.Fetched, History: &frontier.History{}}},
	} {
		if _, err := f.Release(ctx, frontier.ReleaseRequest{Lease: la, Results: rs, Next: at(1)}); err == nil {
			t.Errorf("Release with %s succeeded", name)
		}
	}
	if _, err := f.Release(ctx, frontier.ReleaseRequest{Next: at(1)}); err == nil {
		t.Error("Release without a lease succeeded")
	}
	// The failed releases changed nothing: the lease still holds /1.
	release(t, f, la, at(1), done(la.Items[0]))
	release(t, f, lb, at(1))
	if l, _ := claim(t, f, "", at(2), 5); l == nil || l.Host != b2 {
		t.Fatalf("after the bad releases, Claim = %v; want %s/1 only", urls(l), b2)
	}
}

func testBudgets(t *testing.T, b Backend) {
	f := b.Open(t, frontier.Limits{HostBudget: 3, CrawlBudget: 5})
	a, b2, c := host(1), host(2), host(3)
	got := add(t, f, cand(a, "/1"), cand(a, "/2"), cand(a, "/3"), cand(a, "/4"), cand(b2, "/1"))
	if got.Queued[a] != 3 || got.OverBudget[a] != 1 || got.Queued[b2] != 1 {
		t.Fatalf("Add = %+v; want %s:3 queued and 1 over its budget, %s:1", got, a, b2)
	}
	// Settling URLs does not give budget back.
	l, _ := claim(t, f, a, at(0), 3)
	release(t, f, l, at(0), done(l.Items[0]), done(l.Items[1]), done(l.Items[2]))
	if got := add(t, f, cand(a, "/5")); got.Total() != 0 || got.OverBudget[a] != 1 {
		t.Fatalf("after settling, Add = %+v; want still over budget", got)
	}
	got = add(t, f, cand(b2, "/2"), cand(c, "/1"))
	if got.Total() != 1 || got.OverBudget[c]+got.OverBudget[b2] != 1 {
		t.Fatalf("Add past the crawl budget = %+v; want one queued, one refused", got)
	}
}

func testRequeue(t *testing.T, b Backend) {
	f := b.Open(t, frontier.Limits{})
	a := host(1)
	add(t, f, cand(a, "/1"))
	l, _ := claim(t, f, a, at(0), 1)
	release(t, f, l, at(0), done(l.Items[0]))
	req := []frontier.Candidate{cand(a, "/1"), cand(a, "/never-seen")}
	got, err := f.Add(ctx, frontier.Batch{Requeue: req})
	if err != nil || got.Queued[a] != 1 {
		t.Fatalf("Requeue = %v, %v; want %s:1 (the unknown URL skipped)", got.Queued, err, a)
	}
	if got, _ := f.Add(ctx, frontier.Batch{Requeue: req}); got.Total() != 0 {
		t.Fatalf("second Requeue = %v; want nothing (already pending)", got.Queued)
	}
	if h, _ := f.History(ctx, "https://"+a+"/1"); h == nil || !h.Pending {
		t.Errorf("requeued URL's history = %+v; want pending", h)
	}
	l, _ = claim(t, f, a, at(1), 5)
	if fmt.Sprint(urls(l)) != fmt.Sprint([]string{"https://" + a + "/1"}) {
		t.Fatalf("lease after requeue = %v", urls(l))
	}
	release(t, f, l, at(1), done(l.Items[0]))
	if h, _ := f.History(ctx, "https://"+a+"/1"); h == nil || h.Pending {
		t.Errorf("after the visit, history = %+v; want not pending", h)
	}
}

// testRevisit: a result with a Revisit time settles its URL and queues it
// again, due then, with its history (observations included) pending; the
// revisit is not counted as a URL queued, survives a reopen, and a result
// without one settles the URL for good.
func testRevisit(t *testing.T, b Backend) {
	f := b.Open(t, frontier.Limits{})
	a := host(1)
	add(t, f, cand(a, "/1"), cand(a, "/2"))
	l, _ := claim(t, f, a, at(0), 1)
	r := done(l.Items[0])
	r.Revisit = at(100)
	r.History.Observed = []frontier.Observation{{Interval: time.Hour, Before: true}}
	if got := release(t, f, l, at(0), r); got.Total() != 0 {
		t.Errorf("a revisit counted as queued: %v", got.Queued)
	}
	u1 := "https://" + a + "/1"
	if h, _ := f.History(ctx, u1); h == nil || !h.Pending || h.Outcome != string(frontier.Fetched) || len(h.Observed) != 1 {
		t.Errorf("history after a release with a revisit = %+v; want fetched, pending, its observation kept", h)
	}
	if b.Reopen != nil {
		f = b.Reopen(t, f)
	}
	l, _ = claim(t, f, a, at(1), 5)
	if fmt.Sprint(urls(l)) != fmt.Sprint([]string{"https://" + a + "/2"}) {
		t.Fatalf("lease at 1 s = %v; want /2 only (/1 is due at 100 s)", urls(l))
	}
	release(t, f, l, at(1), done(l.Items[0]))
	if l, next := claim(t, f, a, at(99), 5); l != nil || !next.Equal(at(100)) {
		t.Fatalf("Claim at 99 s = %v, %v; want nothing until 100 s", urls(l), next)
	}
	hosts, _ := f.Hosts(ctx)
	if len(hosts) != 1 || hosts[0].Pending != 1 {
		t.Errorf("Hosts = %+v; want %s with the revisit pending", hosts, a)
	}
	l, _ = claim(t, f, a, at(100), 5)
	if l == nil || len(l.Items) != 1 || l.Items[0].URL != u1 || !l.Items[0].Recrawl {
		t.Fatalf("lease at 100 s = %+v; want the revisit of /1, marked Recrawl", l)
	}
	release(t, f, l, at(100), done(l.Items[0]))
	if h, _ := f.History(ctx, u1); h == nil || h.Pending {
		t.Errorf("after a visit without a revisit, history = %+v; want settled", h)
	}
	if l, next := claim(t, f, a, at(1000), 5); l != nil || !next.IsZero() {
		t.Errorf("Claim after everything settled = %v, %v; want nothing queued", urls(l), next)
	}
}

func testRecords(t *testing.T, b Backend) {
	f := b.Open(t, frontier.Limits{})
	if r, err := f.Robots(ctx, "https://a.test"); r != nil || err != nil {
		t.Fatalf("Robots of an unknown origin = %v, %v", r, err)
	}
	in := &frontier.RobotsRecord{Status: 200, Outcome: "parsed", Body: []byte("User-agent: *\nDisallow: /x\n"), Checked: t0}
	if err := f.PutRobots(ctx, "https://a.test", in); err != nil {
		t.Fatal(err)
	}
	if out, err := f.Robots(ctx, "https://a.test"); err != nil || string(out.Body) != string(in.Body) || !out.Checked.Equal(t0) {
		t.Fatalf("Robots = %+v, %v", out, err)
	}
	if v, err := f.Meta(ctx, "seeds"); v != "" || err != nil {
		t.Fatalf("Meta of an unset name = %q, %v", v, err)
	}
	if err := f.SetMeta(ctx, "seeds", `["https://a.test/"]`); err != nil {
		t.Fatal(err)
	}
	if v, _ := f.Meta(ctx, "seeds"); v != `["https://a.test/"]` {
		t.Fatalf("Meta = %q", v)
	}
	if h, err := f.History(ctx, "https://a.test/none"); h != nil || err != nil {
		t.Fatalf("History of an unknown URL = %v, %v", h, err)
	}
	var all []string
	add(t, f, cand("a.test", "/1"), cand("a.test", "/2"))
	l, _ := claim(t, f, "a.test", at(0), 2)
	release(t, f, l, at(0), done(l.Items[0]), done(l.Items[1]))
	err := f.EachHistory(ctx, func(h *frontier.History) error { all = append(all, h.URL); return nil })
	slices.Sort(all)
	if err != nil || fmt.Sprint(all) != "[https://a.test/1 https://a.test/2]" {
		t.Fatalf("EachHistory = %v, %v", all, err)
	}
}

func testReopen(t *testing.T, b Backend) {
	if b.Reopen == nil {
		t.Skip("backend cannot be reopened")
	}
	f := b.Open(t, frontier.Limits{HostBudget: 10})
	a, b2 := host(1), host(2)
	add(t, f, cand(a, "/1"), cand(a, "/2"), cand(a, "/3"), cand(b2, "/1"))
	l, _ := claim(t, f, a, at(0), 1)
	r := done(l.Items[0])
	r.History.ETag = `"v1"`
	// a pauses until 50 s (a Retry-After): that must hold after a restart.
	if _, err := f.Release(ctx, frontier.ReleaseRequest{Lease: l, Results: []frontier.Result{r}, Next: at(50), Pause: true}); err != nil {
		t.Fatal(err)
	}
	// b2 is leased when the process dies.
	if l, _ := claim(t, f, b2, at(0), 1); l == nil {
		t.Fatal("no lease of b2")
	}
	f = b.Reopen(t, f)

	if h, err := f.History(ctx, "https://"+a+"/1"); err != nil || h == nil || h.ETag != `"v1"` {
		t.Fatalf("History after reopen = %+v, %v", h, err)
	}
	if got := add(t, f, cand(a, "/1"), cand(a, "/4")); got.Total() != 1 {
		t.Fatalf("after reopen, Add = %v; want /1 seen, /4 new", got.Queued)
	}
	// The dead process's lease is gone: b2 is claimable at once; a keeps
	// its pause.
	l, _ = claim(t, f, "", at(1), 5)
	if l == nil || l.Host != b2 {
		t.Fatalf("after reopen, Claim at 1 s = %v; want %s (its lease died with the process)", urls(l), b2)
	}
	release(t, f, l, at(1), done(l.Items[0]))
	if l, next := claim(t, f, a, at(49), 5); l != nil || !next.Equal(at(50)) {
		t.Fatalf("after reopen, Claim of %s at 49 s = %v, %v; want none until 50 s", a, urls(l), next)
	}
	l, _ = claim(t, f, a, at(50), 5)
	if fmt.Sprint(urls(l)) != fmt.Sprint([]string{"https://" + a + "/2", "https://" + a + "/3", "https://" + a + "/4"}) {
		t.Fatalf("after reopen, lease = %v; want /2 /3 /4 in order", urls(l))
	}
	hosts, _ := f.Hosts(ctx)
	if len(hosts) != 1 || hosts[0].Queued != 4 || hosts[0].Pending != 3 {
		t.Errorf("Hosts after reopen = %+v; want %s with 4 queued ever, 3 pending", hosts, a)
	}
}

// testInvariant drives a frontier with random adds, claims, releases,
// expiries and reopens against a model, and checks after every step that
// every URL ever added is exactly one of pending, leased or done, and that
// no claim hands out a URL that is leased, settled or not due, or a host
// before its next allowed time.
func testInvariant(t *testing.T, b Backend) {
	f := b.Open(t, frontier.Limits{})
	rng := rand.New(rand.NewPCG(1, 2))
	const hosts = 7
	type state int
	const (
		pending state = iota
		leased
		settled
	)
	model := map[string]state{}
	due := map[string]time.Time{}     // per URL
	allowed := map[string]time.Time{} // per host: its next allowed time
	durable := map[string]time.Time{} // per host: the next allowed time a restart keeps
	leases := map[string]*frontier.Lease{}
	now := t0
	next := 0
	for step := range 3000 {
		now = now.Add(time.Duration(rng.IntN(900)) * time.Millisecond)
		switch op := rng.IntN(10); {
		case op < 3: // add a few URLs, some repeated
			var cs []frontier.Candidate
			for range 1 + rng.IntN(4) {
				var c frontier.Candidate
				if next > 0 && rng.IntN(4) == 0 {
					i := rng.IntN(next)
					c = cand(host(i%hosts), "/"+strconv.Itoa(i))
				} else {
					c = cand(host(next%hosts), "/"+strconv.Itoa(next))
					if rng.IntN(5) == 0 {
						c.Due = now.Add(time.Duration(rng.IntN(5)) * time.Second)
					}
					next++
				}
				cs = append(cs, c)
			}
			a := add(t, f, cs...)
			n := 0
			for _, c := range cs {
				if _, known := model[c.URL]; !known {
					model[c.URL], due[c.URL] = pending, c.Due
					n++
				}
			}
			if a.Total() != n {
				t.Fatalf("step %d: Add queued %d, want %d", step, a.Total(), n)
			}
		case op < 6: // claim
			l, _, err := f.Claim(ctx, frontier.ClaimRequest{Now: now, Max: 1 + rng.IntN(3), TTL: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if l == nil {
				break
			}
			if allowed[l.Host].After(now) {
				t.Fatalf("step %d: %s claimed at %v before its next allowed time %v", step, l.Host, now, allowed[l.Host])
			}
			if old := leases[l.Host]; old != nil {
				if old.Expires.After(now) {
					t.Fatalf("step %d: %s claimed while leased", step, l.Host)
				}
				for _, it := range old.Items {
					if model[it.URL] == leased {
						model[it.URL] = pending
					}
				}
			}
			for _, it := range l.Items {
				if model[it.URL] != pending || due[it.URL].After(now) {
					t.Fatalf("step %d: claimed %s in state %d, due %v at %v", step, it.URL, model[it.URL], due[it.URL], now)
				}
				model[it.URL] = leased
			}
			leases[l.Host] = l
		case op < 9: // release a live lease
			for h, l := range leases {
				nextAllowed := now.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
				var rs []frontier.Result
				for _, it := range l.Items {
					switch rng.IntN(4) {
					case 0: // no result: returned as it was
					case 1:
						rs = append(rs, frontier.Result{Item: it, Outcome: frontier.Retry, RetryAt: now.Add(time.Second)})
					default:
						rs = append(rs, done(it))
					}
				}
				pause := rng.IntN(3) == 0
				_, err := f.Release(ctx, frontier.ReleaseRequest{Lease: l, Results: rs, Next: nextAllowed, Pause: pause})
				delete(leases, h)
				if l.Expires.Before(now) && errors.Is(err, frontier.ErrLeaseLost) {
					break // expired and claimed again: the model already moved on
				}
				if err != nil {
					t.Fatalf("step %d: Release: %v", step, err)
				}
				allowed[h] = nextAllowed
				// What must hold after a restart: the last pause, or an
				// earlier time that replaced it.
				if pause || durable[h].After(nextAllowed) {
					durable[h] = nextAllowed
				}
				for _, it := range l.Items {
					if model[it.URL] == leased {
						model[it.URL] = pending
					}
				}
				for _, r := range rs {
					if r.Outcome == frontier.Retry {
						due[r.Item.URL] = r.RetryAt
					} else {
						model[r.Item.URL] = settled
					}
				}
				break
			}
		default: // the process dies and the frontier is opened again
			if b.Reopen == nil || rng.IntN(5) != 0 {
				break
			}
			f = b.Reopen(t, f)
			// Pacing need not survive a restart (the crawler waits each
			// host's gap when it resumes); pauses must.
			allowed = maps.Clone(durable)
			for h, l := range leases {
				for _, it := range l.Items {
					model[it.URL] = pending
				}
				delete(leases, h)
			}
		}
		// The frontier's count of pending URLs (leased ones included)
		// matches the model's.
		infos, err := f.Hosts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, h := range infos {
			got[h.Host] = h.Pending
		}
		want := map[string]int{}
		for u, s := range model {
			if s != settled {
				want[hostOf(u)]++
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("step %d: pending per host = %v, model %v", step, got, want)
		}
	}
	// Drain: every URL is claimed and settled exactly once more.
	for h, l := range leases {
		release(t, f, l, time.Time{})
		delete(leases, h)
	}
	for u, s := range model {
		if s == leased {
			model[u] = pending
		}
	}
	far := now.Add(time.Hour)
	for {
		l, _ := claim(t, f, "", far, 100)
		if l == nil {
			break
		}
		var rs []frontier.Result
		for _, it := range l.Items {
			if model[it.URL] != pending {
				t.Fatalf("drain: %s handed out in state %d", it.URL, model[it.URL])
			}
			model[it.URL] = settled
			rs = append(rs, done(it))
		}
		release(t, f, l, time.Time{}, rs...)
	}
	for u, s := range model {
		if s != settled {
			t.Errorf("%s lost: never handed out again (state %d)", u, s)
		}
	}
}

func hostOf(u string) string {
	rest := u[len("https://"):]
	for i := range len(rest) {
		if rest[i] == '/' {
			return rest[:i]
		}
	}
	return rest
}

// testConcurrent runs producers and workers at once: producers add URLs
// (each offered by two of them), workers claim any host, settle what they
// were handed (some as retries first) and admit a link per URL. Every URL
// is queued once and settled exactly once.
func testConcurrent(t *testing.T, b Backend) {
	f := b.Open(t, frontier.Limits{})
	const producers, workers, perProducer, hosts = 4, 8, 1000, 13
	var queued, settled atomic.Int64
	var mu sync.Mutex
	times := map[string]int{}
	var producing sync.WaitGroup
	for p := range producers {
		producing.Go(func() {
			for i := 0; i < perProducer; i += 100 {
				var cs []frontier.Candidate
				for j := i; j < i+100; j++ {
					n := (p/2)*perProducer + j // producers 0,1 offer the same URLs, as do 2,3
					cs = append(cs, cand(host(n%hosts), "/"+strconv.Itoa(n)))
				}
				a, err := f.Add(ctx, frontier.Batch{Add: cs})
				if err != nil {
					t.Error(err)
					return
				}
				queued.Add(int64(a.Total()))
			}
		})
	}
	finished := make(chan struct{})
	go func() { producing.Wait(); close(finished) }()
	var working sync.WaitGroup
	for w := range workers {
		working.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for {
				l, _, err := f.Claim(ctx, frontier.ClaimRequest{Now: t0, Max: 3})
				if err != nil {
					t.Error(err)
					return
				}
				if l == nil {
					select {
					case <-finished:
						if settled.Load() == queued.Load() {
							return
						}
					default:
					}
					time.Sleep(time.Millisecond)
					continue
				}
				var rs []frontier.Result
				for _, it := range l.Items {
					if it.Attempts == 0 && rng.IntN(4) == 0 {
						rs = append(rs, frontier.Result{Item: it, Outcome: frontier.Retry})
						continue
					}
					r := done(it)
					if !strings.HasSuffix(it.URL, "/link") {
						r.Add = []frontier.Candidate{cand(host(rng.IntN(hosts)), strings.TrimPrefix(it.URL, "https://"+it.Host)+"/link")}
					}
					rs = append(rs, r)
				}
				a, err := f.Release(ctx, frontier.ReleaseRequest{Lease: l, Results: rs, Next: t0})
				if err != nil {
					t.Error(err)
					return
				}
				queued.Add(int64(a.Total()))
				mu.Lock()
				for _, r := range rs {
					if r.Outcome != frontier.Retry {
						times[r.Item.URL]++
					}
				}
				mu.Unlock()
				settled.Add(int64(len(rs) - countRetries(rs)))
			}
		})
	}
	working.Wait()
	want := 2 * perProducer * 2 // every URL once, and one link per URL
	if int(queued.Load()) != want || len(times) != want {
		t.Fatalf("queued %d URLs, settled %d distinct; want %d of each", queued.Load(), len(times), want)
	}
	for u, n := range times {
		if n != 1 {
			t.Errorf("%s settled %d times", u, n)
		}
	}
}

func countRetries(rs []frontier.Result) int {
	n := 0
	for _, r := range rs {
		if r.Outcome == frontier.Retry {
			n++
		}
	}
	return n
}
