package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

// changesUsage explains the change flags in the usage text.
const changesUsage = `Changes: --changes RATE[,RATE…] makes every page of every host but the shops
change over time, each page as a Poisson process with one of the RATEs, drawn
per page from --seed: a RATE is changes per second (0.001) or the mean time
between changes as a duration (1h). Changes start when simweb starts. A
changed page gets a new version: new text, Last-Modified and ETag (with
--lying-validators the validators stay those of the first version).
--changes-static F leaves about that fraction of the pages unchanged.
`

// changesFlags are the flags of the changing pages.
type changesFlags struct {
	rates  []float64
	static float64
	lying  bool
}

func (f *changesFlags) register(fs *flag.FlagSet) {
	fs.Func("changes", "pages change at `RATE[,RATE…]` (changes per second, or a mean interval such as 1h)", func(v string) error {
		rates, err := parseRates(v)
		if err == nil {
			f.rates = rates
		}
		return err
	})
	fs.Float64Var(&f.static, "changes-static", 0, "with --changes, the fraction `F` of pages that never change")
	fs.BoolVar(&f.lying, "lying-validators", false, "with --changes, keep each page's ETag and Last-Modified when it changes")
}

// parseRates reads a comma-separated list of rates per second or mean
// intervals.
func parseRates(v string) ([]float64, error) {
	var rates []float64
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		if d, err := time.ParseDuration(s); err == nil && s != "0" {
			if d <= 0 {
				return nil, fmt.Errorf("%q: the mean interval must be positive", s)
			}
			rates = append(rates, 1/d.Seconds())
			continue
		}
		r, err := strconv.ParseFloat(s, 64)
		if err != nil || r < 0 || math.IsInf(r, 0) || math.IsNaN(r) {
			return nil, fmt.Errorf("%q: want changes per second (≥ 0) or a duration", s)
		}
		rates = append(rates, r)
	}
	return rates, nil
}

// apply gives every host that is not a shop the Changes, keeping the
// options cfg.HostOptions already gives.
func (f *changesFlags) apply(cfg *simweb.Config) error {
	if f.rates == nil {
		if f.static != 0 || f.lying {
			return fmt.Errorf("--changes-static and --lying-validators need --changes")
		}
		return nil
	}
	if f.static < 0 || f.static > 1 {
		return fmt.Errorf("--changes-static %v: not in 0..1", f.static)
	}
	prev := cfg.HostOptions
	cfg.HostOptions = func(i int, name string) simweb.HostOptions {
		var o simweb.HostOptions
		if prev != nil {
			o = prev(i, name)
		}
		if o.Shop == nil {
			o.Changes = &simweb.Changes{Rates: f.rates, Static: f.static, Lying: f.lying}
		}
		return o
	}
	return nil
}

// describe prints the change rates in the banner.
func (f *changesFlags) describe(out io.Writer) {
	if f.rates == nil {
		return
	}
	var ws []string
	for _, r := range f.rates {
		if r == 0 {
			ws = append(ws, "never")
			continue
		}
		ws = append(ws, fmt.Sprintf("%g/s (every %v on average)", r, time.Duration(float64(time.Second)/r).Round(time.Millisecond)))
	}
	fmt.Fprintf(out, "changes: pages change at %s", strings.Join(ws, ", "))
	if f.static > 0 {
		fmt.Fprintf(out, "; %g of them never", f.static)
	}
	if f.lying {
		fmt.Fprint(out, "; validators lie")
	}
	fmt.Fprintln(out)
}
