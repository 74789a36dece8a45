package main

import (
	"fmt"
	"os"
	"sort"
	"time"
)

// side is one contender of a row. prepare runs untimed before every timed
// run (and before the warm-up); run is what the clock measures; check looks
// at run's output afterwards, untimed, so a wrong result is never a fast one.
type side struct {
	label   string                  // shown in the table ("git status --porcelain -z ...")
	prepare func(run int) error     // may be nil
	run     func() (outcome, error) // timed
	check   func(out []byte) error  // may be nil
	// traced, when set, is run as run is, with GIT_VENOM_TRACE=1, and
	// returns the trace (stderr) too: for a row that explains where its
	// CPU goes (benchCase.explain).
	traced func() (outcome, []byte, error)
}

// baseline is a side venom is held to, with the target for venom's CPU
// ratio over it (0: none, the line is there to be read beside another).
type baseline struct {
	side
	target float64
}

// benchCase is one row of the table: venom against one or more baselines
// on the same tree and the same state, all measured in one interleaved
// run.
type benchCase struct {
	name     string
	venom    side
	bases    []baseline
	teardown func() error // may be nil; runs once after the last run
	// maxReps, when not 0, caps the timed runs of each side (rows whose
	// every run writes tens of thousands of files); reps, when larger
	// than -reps, is this row's number of rounds (the tool-call rows
	// print a 95th percentile).
	maxReps, reps int
	// rounds, when set, replaces the generic interleaving: it runs one
	// round (venom and every baseline once, in the order given) and
	// returns each side's outcome, venom first. For rows whose sides must
	// see the very same states in one sequence (a hook turn: both sides
	// walk the tree before and after the same edits).
	rounds func(run int, venomFirst bool) ([]outcome, error)
	// note, when set, is printed under the row: where its cost goes,
	// when that is what the row is read for.
	note string
	// explain: after the timed runs, venom's side runs once more, untimed
	// and traced (side.traced), and the row says where that run's CPU
	// went (result.where): venom's own process, git's dispatcher, and
	// each git child by command.
	explain bool
}

// outcome is what a timed run gave: its stdout and the CPU time (user and
// system) of the process and every child it waited for, from wait4's
// rusage. CPU time is much less sensitive than wall time to other load on
// the machine, so the table shows its ratio too. wall, when not 0, is the
// run's timed wall-clock time (a run with untimed steps inside it);
// otherwise the clock around run is used.
type outcome struct {
	out  []byte
	cpu  time.Duration
	wall time.Duration
}

// samples are one side's timed runs.
type samples struct {
	wall, cpu []time.Duration
}

func (s *samples) add(wall, cpu time.Duration) {
	s.wall = append(s.wall, wall)
	s.cpu = append(s.cpu, cpu)
}

// result is a measured row: venom's samples and each baseline's, in the
// order of c.bases.
type result struct {
	c     *benchCase
	venom samples
	bases []samples
	where string // the traced run's breakdown (benchCase.explain); "" if none
}

// line is one venom-against-baseline comparison of a row, as printed.
type line struct {
	base             *baseline
	vWall, bWall     time.Duration
	vCPU, bCPU       time.Duration
	ratio, cpuRatio  float64
	verdict, targets string
}

// lines gives the row's comparisons: the medians of each side and their
// ratios; a target is met when venom's CPU ratio is at most it (the
// targets of issue 16 are CPU ratios, which other load moves much less
// than wall clock).
func (r result) lines() []line {
	var out []line
	for i := range r.c.bases {
		b := &r.c.bases[i]
		l := line{base: b, vWall: median(r.venom.wall), bWall: median(r.bases[i].wall),
			vCPU: median(r.venom.cpu), bCPU: median(r.bases[i].cpu)}
		l.ratio = float64(l.vWall) / float64(l.bWall)
		l.cpuRatio = float64(l.vCPU) / float64(l.bCPU)
		l.targets = "      -"
		if b.target > 0 {
			l.targets = fmt.Sprintf("%6.2fx", b.target)
			l.verdict = "ok"
			if l.cpuRatio > b.target {
				l.verdict = "MISS"
			}
		}
		out = append(out, l)
	}
	return out
}

// measure runs one warm-up of each side, then reps rounds. Each round runs
// every side once, the order rotated from round to round (venom first,
// then the first baseline first, ...), so drift, cache warmth and
// background noise fall on every side alike.
func measure(c *benchCase, reps int, verbose bool) (res result, err error) {
	defer func() {
		if c.teardown != nil {
			if terr := c.teardown(); terr != nil && err == nil {
				err = fmt.Errorf("%s: teardown: %w", c.name, terr)
			}
		}
	}()
	if c.maxReps > 0 && reps > c.maxReps {
		reps = c.maxReps
	}
	reps = max(reps, c.reps)
	res.c = c
	res.bases = make([]samples, len(c.bases))
	runs := 0
	// runOnce prepares s for one more run, makes it with run (named
	// what in errors) and checks its output.
	runOnce := func(s *side, what string, run func() (outcome, error)) (outcome, time.Duration, error) {
		runs++
		if s.prepare != nil {
			if err := s.prepare(runs); err != nil {
				return outcome{}, 0, fmt.Errorf("%s: preparing %s: %w", c.name, what, err)
			}
		}
		t0 := time.Now()
		o, err := run()
		d := time.Since(t0)
		if err != nil {
			return outcome{}, 0, fmt.Errorf("%s: %s: %w", c.name, what, err)
		}
		if o.wall != 0 {
			d = o.wall
		}
		if s.check != nil {
			if err := s.check(o.out); err != nil {
				return outcome{}, 0, fmt.Errorf("%s: %s gave a wrong result: %w", c.name, what, err)
			}
		}
		return o, d, nil
	}
	once := func(s *side) (time.Duration, time.Duration, error) {
		o, d, err := runOnce(s, s.label, s.run)
		return d, o.cpu, err
	}
	if c.rounds != nil {
		for i := 0; i <= reps; i++ {
			outs, err := c.rounds(i+1, i%2 == 0)
			if err != nil {
				return res, fmt.Errorf("%s: %w", c.name, err)
			}
			if i == 0 {
				continue // the warm-up
			}
			res.venom.add(outs[0].wall, outs[0].cpu)
			for j := range c.bases {
				res.bases[j].add(outs[j+1].wall, outs[j+1].cpu)
			}
		}
	} else {
		sides := []*side{&c.venom}
		for i := range c.bases {
			sides = append(sides, &c.bases[i].side)
		}
		// Warm-up: page cache, the binaries, git's own lazy setup.
		for _, s := range sides {
			if _, _, err := once(s); err != nil {
				return res, err
			}
		}
		for i := 0; i < reps; i++ {
			start := i % len(sides)
			for k := range sides {
				j := (start + k) % len(sides)
				d, cpu, err := once(sides[j])
				if err != nil {
					return res, err
				}
				if j == 0 {
					res.venom.add(d, cpu)
				} else {
					res.bases[j-1].add(d, cpu)
				}
			}
		}
	}
	if c.explain && c.venom.traced != nil {
		var trace []byte
		o, _, err := runOnce(&c.venom, "the traced run", func() (outcome, error) {
			o, t, err := c.venom.traced()
			trace = t
			return o, err
		})
		if err != nil {
			return res, err
		}
		b, err := parseTrace(trace)
		if err != nil {
			return res, fmt.Errorf("%s: the traced run: %w", c.name, err)
		}
		res.where = b.explain(o.cpu)
	}
	if verbose {
		fmt.Fprintf(os.Stderr, "  %s\n    venom       %v\n    venom cpu   %v\n", c.name, ms(res.venom.wall), ms(res.venom.cpu))
		for j, b := range c.bases {
			fmt.Fprintf(os.Stderr, "    %s\n      wall %v\n      cpu  %v\n", b.label, ms(res.bases[j].wall), ms(res.bases[j].cpu))
		}
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
