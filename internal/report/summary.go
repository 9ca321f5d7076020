package report

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// The prose of a crawl's summary for a person: what the crawl's text
// summary and the report say of a host's load, its validators and how
// often its pages change. Each function takes the JSON of a value of
// gentlecrawl.Summary's Slowed, Validators or Demand, as runs.jsonl holds
// it (the report reads it there; the command marshals the summary it got),
// or the prose that earlier versions wrote in its place, returned as it is.
// It returns "" for what it cannot read.

// hostLoad is gentlecrawl.HostLoad as JSON.
type hostLoad struct {
	Cause         string        `json:"cause"`
	Status        int           `json:"status"`
	RetryAfter    time.Duration `json:"retry_after_ns"`
	HasRetryAfter bool          `json:"has_retry_after"`
	Slow          float64       `json:"slow"`
	Baseline      time.Duration `json:"baseline_ns"`
	EventRate     float64       `json:"event_rate"`
	Settled       float64       `json:"settled_rate"`
	Events        int           `json:"events"`
}

// HostLoadText says where a host that pushed back settled, and why: "503,
// no Retry-After at 20.4/s → settled at 18.6/s (3 congestion events)".
func HostLoadText(raw json.RawMessage) string {
	return proseOf(raw, func(h hostLoad) string {
		var why string
		switch h.Cause {
		case "slow":
			why = fmt.Sprintf("response time %.1f× baseline %v", h.Slow, h.Baseline.Round(time.Millisecond))
		case "no-response":
			why = "no response"
		default:
			why = strconv.Itoa(h.Status) + ", no Retry-After"
			if h.HasRetryAfter {
				why = fmt.Sprintf("%d, Retry-After %v", h.Status, h.RetryAfter)
			}
		}
		ev := "1 congestion event"
		if h.Events != 1 {
			ev = fmt.Sprintf("%d congestion events", h.Events)
		}
		return fmt.Sprintf("%s at %.1f/s → settled at %.1f/s (%s)", why, h.EventRate, h.Settled, ev)
	})
}

// originValidators is gentlecrawl.OriginValidators as JSON.
type originValidators struct {
	Sent     string `json:"sent"`
	Ignored  int    `json:"ignored"`
	ETag     string `json:"etag"`
	Honoured int    `json:"honoured"`
	Full     int    `json:"full"`
	Lies     int    `json:"lies"`
	LiedURL  string `json:"lied_url"`
}

// ValidatorsText says what was found of an origin's validators and how
// they are sent now: `validators ignored as sent (ETag "5f-6a1b-gzip": 1
// full answer with the same body); the ETag without its encoding suffix:
// 287 answered 304, 0 full`.
func ValidatorsText(raw json.RawMessage) string {
	return proseOf(raw, func(v originValidators) string {
		if v.Sent == "none" {
			return fmt.Sprintf("validators lie: %d pages (e.g. %s) changed while the server answered 304 to their validators; refreshed without validators", v.Lies, v.LiedURL)
		}
		answers := "full answers"
		if v.Ignored == 1 {
			answers = "full answer"
		}
		line := fmt.Sprintf("validators ignored as sent (ETag %s: %d %s with the same body)", v.ETag, v.Ignored, answers)
		switch v.Sent {
		case "as-given":
			return line + "; no way of sending them was honoured"
		case "etag-without-suffix":
			return line + fmt.Sprintf("; the ETag without its encoding suffix: %d answered 304, %d full", v.Honoured, v.Full)
		case "if-modified-since":
			return line + fmt.Sprintf("; If-Modified-Since alone: %d answered 304, %d full", v.Honoured, v.Full)
		}
		return line
	})
}

// hostDemand is gentlecrawl.HostDemand as JSON.
type hostDemand struct {
	Pages     int           `json:"pages"`
	ChangeP10 time.Duration `json:"change_p10_ns"`
	ChangeP50 time.Duration `json:"change_p50_ns"`
	ChangeP90 time.Duration `json:"change_p90_ns"`
	Budget    float64       `json:"budget"`
	Worth     float64       `json:"worth"`
}

// DemandText says how often a host's pages change and what refreshing them
// is worth: "279 pages; a change every 16s / 11m / 2d (10th, 50th, 90th
// percentile); refresh budget 7.00 requests/s, worth spending 6.21".
func DemandText(raw json.RawMessage) string {
	return proseOf(raw, func(d hostDemand) string {
		return fmt.Sprintf("%d pages; a change every %s / %s / %s (10th, 50th, 90th percentile); refresh budget %.2f requests/s, worth spending %.2f",
			d.Pages, every(d.ChangeP10), every(d.ChangeP50), every(d.ChangeP90), d.Budget, d.Worth)
	})
}

// every writes the interval between two changes to two significant units:
// 16s, 11m, 3h, 2d; "never" for 0.
func every(d time.Duration) string {
	switch {
	case d <= 0:
		return "never"
	case d < time.Minute:
		return fmt.Sprintf("%.0fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%.0fm", d.Minutes())
	case d < 48*time.Hour:
		return fmt.Sprintf("%.0fh", d.Hours())
	}
	return fmt.Sprintf("%.0fd", d.Hours()/24)
}

// proseOf is the prose of a value of a summary: a JSON string as an
// earlier version wrote it, kept as it is, or the value, decoded as a T,
// in words.
func proseOf[T any](raw json.RawMessage, text func(T) string) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var v T
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	return text(v)
}
