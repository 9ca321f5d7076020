package cms_test

import (
	"testing"

	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
)

// TestMain checks the work every crawl skips, and runs the command line
// for the crawler processes the tests start (crawltest.Main).
func TestMain(m *testing.M) { crawltest.Main(m) }
