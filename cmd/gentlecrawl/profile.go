package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

// startProfiles starts the profiles that GENTLECRAWL_CPUPROFILE and
// GENTLECRAWL_MEMPROFILE name (files to write), for measuring a real crawl
// as the command runs it (BENCHMARKS.md). The returned function writes them.
// With GENTLECRAWL_MEMPROFILE, the heap in use is also written to its name
// plus ".heap" every 5 seconds.
func startProfiles() (stop func()) {
	cpu, mem := os.Getenv("GENTLECRAWL_CPUPROFILE"), os.Getenv("GENTLECRAWL_MEMPROFILE")
	var f *os.File
	if cpu != "" {
		var err error
		if f, err = os.Create(cpu); err != nil {
			fmt.Fprintln(os.Stderr, "gentlecrawl: GENTLECRAWL_CPUPROFILE:", err)
			os.Exit(2)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "gentlecrawl: GENTLECRAWL_CPUPROFILE:", err)
			os.Exit(2)
		}
	}
	stopHeap := make(chan struct{})
	if mem != "" {
		// The heap in use, every few seconds while the command runs: the
		// allocation profile written at the end says what was allocated,
		// not what a long crawl holds.
		go func() {
			t := time.NewTicker(5 * time.Second)
			defer t.Stop()
			for {
				select {
				case <-stopHeap:
					return
				case <-t.C:
					if hf, err := os.Create(mem + ".heap"); err == nil {
						pprof.Lookup("heap").WriteTo(hf, 0)
						hf.Close()
					}
				}
			}
		}()
	}
	return func() {
		close(stopHeap)
		if f != nil {
			pprof.StopCPUProfile()
			f.Close()
		}
		if mem == "" {
			return
		}
		runtime.GC()
		mf, err := os.Create(mem)
		if err == nil {
			err = pprof.Lookup("allocs").WriteTo(mf, 0)
			if cerr := mf.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "gentlecrawl: GENTLECRAWL_MEMPROFILE:", err)
		}
	}
}
