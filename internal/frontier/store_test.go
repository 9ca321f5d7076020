package frontier

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

func cand(host, path string) Candidate {
	u := host + path
	return Candidate{Host: host, Canonical: u, Entry: Entry{URL: u}}
}

func TestStoreQueuesSeenAndHistory(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	const a, b = "http://a.test", "http://b.test"
	added, err := s.Apply(Update{Add: []Candidate{cand(a, "/1"), cand(a, "/2"), cand(b, "/1"), cand(a, "/1")}})
	if err != nil {
		t.Fatal(err)
	}
	if added[a] != 2 || added[b] != 1 {
		t.Fatalf("added %v, want a:2 b:1 (duplicate in one batch dropped)", added)
	}
	// A URL seen before is never queued twice.
	added, err = s.Apply(Update{Add: []Candidate{cand(a, "/2"), cand(a, "/3")}})
	if err != nil || added[a] != 1 {
		t.Fatalf("second add = %v, %v; want a:1", added, err)
	}

	// FIFO per host, and visiting one is atomic with its history.
	item, err := s.Peek(a)
	if err != nil || item == nil || item.URL != a+"/1" {
		t.Fatalf("Peek = %+v, %v; want %s/1", item, err, a)
	}
	h := &History{URL: item.URL, Status: 200, ETag: `"x"`, Outcome: "fetched"}
	if _, err := s.Apply(Update{Done: item, Canonical: item.URL, History: h, Add: []Candidate{cand(b, "/9")}}); err != nil {
		t.Fatal(err)
	}
	if item, _ := s.Peek(a); item == nil || item.URL != a+"/2" {
		t.Fatalf("after Done, Peek = %+v; want /2", item)
	}
	pending, err := s.Pending()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(pending) != fmt.Sprint(map[string]int{a: 2, b: 2}) {
		t.Errorf("Pending = %v", pending)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Everything survives a reopen, and new entries go after the old ones.
	s, err = Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.History(a + "/1")
	if err != nil || got == nil || got.ETag != `"x"` {
		t.Fatalf("History after reopen = %+v, %v", got, err)
	}
	if _, err := s.Apply(Update{Add: []Candidate{cand(a, "/4")}}); err != nil {
		t.Fatal(err)
	}
	var order []string
	for {
		item, err := s.Peek(a)
		if err != nil {
			t.Fatal(err)
		}
		if item == nil {
			break
		}
		order = append(order, item.URL)
		if _, err := s.Apply(Update{Done: item, Canonical: item.URL, History: &History{URL: item.URL}}); err != nil {
			t.Fatal(err)
		}
	}
	if want := fmt.Sprint([]string{a + "/2", a + "/3", a + "/4"}); fmt.Sprint(order) != want {
		t.Errorf("order %v, want %v", order, want)
	}
}

func TestStoreRequeueOnlyKnownAndNotPending(t *testing.T) {
	s, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const a = "http://a.test"
	s.Apply(Update{Add: []Candidate{cand(a, "/1")}})
	item, _ := s.Peek(a)
	s.Apply(Update{Done: item, Canonical: item.URL, History: &History{URL: item.URL, Outcome: "fetched"}})

	req := []Candidate{cand(a, "/1"), cand(a, "/never-seen")}
	added, err := s.Apply(Update{Requeue: req})
	if err != nil || added[a] != 1 {
		t.Fatalf("requeue = %v, %v; want a:1 (unknown URL skipped)", added, err)
	}
	added, err = s.Apply(Update{Requeue: req})
	if err != nil || added[a] != 0 {
		t.Fatalf("second requeue = %v, %v; want nothing (already pending)", added, err)
	}
	h, _ := s.History(a + "/1")
	if !h.Pending {
		t.Error("requeued URL not marked pending")
	}
}

func TestStoreRefusesOtherFormat(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetMeta("version", "999"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(dir, nil); !errors.Is(err, ErrIncompatible) {
		t.Fatalf("Open = %v, want ErrIncompatible", err)
	}
}

func TestStoreRobotsRecord(t *testing.T) {
	s, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if r, err := s.Robots("http://a.test"); r != nil || err != nil {
		t.Fatalf("Robots of unknown host = %v, %v", r, err)
	}
	in := &RobotsRecord{Status: 200, Outcome: "parsed", Body: []byte("User-agent: *\nDisallow: /x\n")}
	if err := s.PutRobots("http://a.test", in); err != nil {
		t.Fatal(err)
	}
	out, err := s.Robots("http://a.test")
	if err != nil || string(out.Body) != string(in.Body) {
		t.Fatalf("Robots = %+v, %v", out, err)
	}
}

// TestStoreFailureIsAnError: when the disk refuses a write (a full disk),
// Pebble gives up; the store's methods return an error matching
// ErrStoreFailed, with a message saying what happened, instead of crashing
// the process, and keep returning it.
func TestStoreFailureIsAnError(t *testing.T) {
	var failing atomic.Bool
	fs := errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if failing.Load() && (op.Kind == errorfs.OpFileWrite || op.Kind == errorfs.OpFileSync) {
			return syscall.ENOSPC
		}
		return nil
	}))
	s, err := OpenFS(t.TempDir(), nil, fs)
	if err != nil {
		t.Fatal(err)
	}
	const a = "http://a.test"
	if _, err := s.Apply(Update{Add: []Candidate{cand(a, "/1")}}); err != nil {
		t.Fatal(err)
	}
	failing.Store(true)
	_, err = s.Apply(Update{Add: []Candidate{cand(a, "/2")}})
	if !errors.Is(err, ErrStoreFailed) || !strings.Contains(err.Error(), "resumed") {
		t.Fatalf("Apply on a full disk = %v; want ErrStoreFailed with a clear message", err)
	}
	if err := s.PutRobots(a, &RobotsRecord{}); !errors.Is(err, ErrStoreFailed) {
		t.Errorf("after the failure PutRobots = %v, want ErrStoreFailed", err)
	}
	if err := s.Close(); !errors.Is(err, ErrStoreFailed) {
		t.Errorf("Close = %v, want ErrStoreFailed", err)
	}
}
