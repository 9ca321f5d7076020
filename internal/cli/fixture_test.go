package cli

import (
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
)

func progressFixture() gentlecrawl.Progress {
	return gentlecrawl.Progress{
		Elapsed: 5 * time.Second, Pages: 12, Queued: 30, Active: 2, Errors: 3,
		Waiting: map[gentlecrawl.WaitReason]int{gentlecrawl.WaitDelay: 4, gentlecrawl.WaitRobots: 1, gentlecrawl.WaitAddress: 2},
	}
}
