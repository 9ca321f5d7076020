package gentlecrawl_test

import (
	"testing"

	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
)

// TestMain makes every crawl of the test binary check the work it skips
// (a URL whose history is not read has none, a link skipped as queued is
// seen), those of the processes it starts too, and runs the command line
// for the crawler processes the benchmarks start (crawltest.Main).
func TestMain(m *testing.M) { crawltest.Main(m) }
