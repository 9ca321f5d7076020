package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
)

func main() {
	f, _ := os.Create("/tmp/open.prof")
	pprof.StartCPUProfile(f)
	t0 := time.Now()
	s, err := frontier.Open(os.Args[1], frontier.Options{ExpectedURLs: 3000000})
	fmt.Println("open", time.Since(t0), err)
	pprof.StopCPUProfile()
	s.Close()
}
