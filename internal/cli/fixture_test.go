package cli

import (
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/hostload"
)

func progressFixture() gentlecrawl.Progress {
	return gentlecrawl.Progress{
		Elapsed: 5 * time.Second, Pages: 12, Queued: 30, Active: 2, Errors: 3,
		Waiting: map[hostload.Reason]int{hostload.ReasonDelay: 4, hostload.ReasonRobots: 1, hostload.ReasonAddr: 2},
	}
}
