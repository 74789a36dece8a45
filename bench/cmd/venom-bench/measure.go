package main

import (
	"fmt"
	"os"
	"sort"
	"time"
)

// side is one half of a comparison. prepare runs untimed before every timed
// run (and before the warm-up); run is what the clock measures; check looks
// at run's output afterwards, untimed, so a wrong result is never a fast one.
type side struct {
	label   string                  // shown in the table ("git status --porcelain -z ...")
	prepare func(run int) error     // may be nil
	run     func() (outcome, error) // timed
	check   func(out []byte) error  // may be nil
}

// benchCase is one row of the table: venom against a baseline on the same
// tree and the same state, with the target ratio venom/baseline (0: the
// row has none, it is there to read beside another).
type benchCase struct {
	name     string
	target   float64
	venom    side
	base     side
	teardown func() error // may be nil; runs once after the last run
	// reps, when larger than -reps, is this row's number of rounds (the
	// tool-call rows print a 95th percentile).
	reps int
}

// outcome is what a timed run gave: its stdout and the CPU time (user and
// system) of the process and every child it waited for, from wait4's
// rusage. CPU time is much less sensitive than wall time to other load on
// the machine, so the table shows its ratio too.
type outcome struct {
	out []byte
	cpu time.Duration
}

// result is a measured row.
type result struct {
	vCPU, bCPU  []time.Duration
	cpuRatio    float64
	c           *benchCase
	venom, base []time.Duration
	vMed, bMed  time.Duration
	ratio       float64
}

func (r result) ok() bool { return r.c.target == 0 || r.ratio <= r.c.target }

// measure runs one warm-up of each side, then reps rounds. Rounds alternate
// the order (venom first, baseline first, ...) so drift, cache warmth and
// background noise fall on both sides alike.
func measure(c *benchCase, reps int, verbose bool) (res result, err error) {
	defer func() {
		if c.teardown != nil {
			if terr := c.teardown(); terr != nil && err == nil {
				err = fmt.Errorf("%s: teardown: %w", c.name, terr)
			}
		}
	}()
	res.c = c
	runs := 0
	once := func(s *side) (time.Duration, time.Duration, error) {
		runs++
		if s.prepare != nil {
			if err := s.prepare(runs); err != nil {
				return 0, 0, fmt.Errorf("%s: preparing %s: %w", c.name, s.label, err)
			}
		}
		t0 := time.Now()
		o, err := s.run()
		d := time.Since(t0)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %s: %w", c.name, s.label, err)
		}
		if s.check != nil {
			if err := s.check(o.out); err != nil {
				return 0, 0, fmt.Errorf("%s: %s gave a wrong result: %w", c.name, s.label, err)
			}
		}
		return d, o.cpu, nil
	}
	reps = max(reps, c.reps)
	// Warm-up: page cache, the binaries, git's own lazy setup.
	for _, s := range []*side{&c.venom, &c.base} {
		if _, _, err := once(s); err != nil {
			return res, err
		}
	}
	for i := 0; i < reps; i++ {
		order := []*side{&c.venom, &c.base}
		if i%2 == 1 {
			order[0], order[1] = order[1], order[0]
		}
		for _, s := range order {
			d, cpu, err := once(s)
			if err != nil {
				return res, err
			}
			if s == &c.venom {
				res.venom = append(res.venom, d)
				res.vCPU = append(res.vCPU, cpu)
			} else {
				res.base = append(res.base, d)
				res.bCPU = append(res.bCPU, cpu)
			}
		}
	}
	res.vMed, res.bMed = median(res.venom), median(res.base)
	res.ratio = float64(res.vMed) / float64(res.bMed)
	res.cpuRatio = float64(median(res.vCPU)) / float64(median(res.bCPU))
	if verbose {
		fmt.Fprintf(os.Stderr, "  %-28s venom %v\n  %-28s base  %v\n", c.name, ms(res.venom), "", ms(res.base))
		fmt.Fprintf(os.Stderr, "  %-28s venom cpu %v\n  %-28s base  cpu %v\n", "", ms(res.vCPU), "", ms(res.bCPU))
	}
	return res, nil
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func ms(ds []time.Duration) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = fmtDur(d)
	}
	return out
}

func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
}
