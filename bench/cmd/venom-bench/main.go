// Command venom-bench measures git-venom against the git commands a user
// would compare it with, in the same run, interleaved, and prints the median
// ratios. bench/run.sh builds and runs it; bench/README.md says what each
// row measures and why.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

type options struct {
	cache    string
	bin      string
	repo     string
	files    int
	modified int
	reps     int
	only     string
	verbose  bool
	strict   bool
}

func main() {
	var o options
	tmp := os.Getenv("TMPDIR")
	if tmp == "" {
		tmp = "/tmp"
	}
	defCache := os.Getenv("VENOM_BENCH_CACHE")
	if defCache == "" {
		defCache = filepath.Join(tmp, "git-venom-bench")
	}
	flag.StringVar(&o.cache, "cache", defCache, "cache dir for the generated tree and clones (never inside a repository you care about)")
	flag.StringVar(&o.bin, "bin", "", "directory holding the git-venom-* binaries to measure (required)")
	flag.StringVar(&o.repo, "repo", "", "also measure on a local clone of this repository (the repository itself is only read)")
	flag.IntVar(&o.files, "files", 100000, "files in the generated tree; 0 skips it")
	flag.IntVar(&o.modified, "modified", 1000, "files changed in the modified-files case")
	flag.IntVar(&o.reps, "reps", 9, "timed runs of each side (median reported), after one warm-up each")
	flag.StringVar(&o.only, "only", "", "run only cases whose name contains this")
	flag.BoolVar(&o.verbose, "v", false, "print every sample on stderr")
	flag.BoolVar(&o.strict, "strict", false, "exit 1 when a target is missed")
	flag.Parse()
	if err := run(&o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "venom-bench:", err)
		os.Exit(2)
	}
}

func run(o *options, w io.Writer) error {
	if o.bin == "" {
		return fmt.Errorf("-bin is required (bench/run.sh passes it)")
	}
	if o.reps < 1 {
		return fmt.Errorf("-reps must be at least 1")
	}
	var err error
	if o.bin, err = filepath.Abs(o.bin); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(o.bin, "git-venom-checkpoint")); err != nil {
		return fmt.Errorf("no git-venom-checkpoint in %s", o.bin)
	}
	if o.cache, err = filepath.Abs(o.cache); err != nil {
		return err
	}
	if err := os.MkdirAll(o.cache, 0o755); err != nil {
		return err
	}
	global := filepath.Join(o.cache, "gitconfig")
	if err := os.WriteFile(global, []byte("# venom-bench: fixed global config for every measured git\n[init]\n\tdefaultBranch = main\n"), 0o644); err != nil {
		return err
	}
	childEnv = benchEnv(o.bin, global)

	var trees []*tree
	if o.files > 0 {
		t, err := generated(o.cache, o.files)
		if err != nil {
			return err
		}
		trees = append(trees, t)
	}
	if o.repo != "" {
		t, err := cloned(o.cache, o.repo)
		if err != nil {
			return err
		}
		trees = append(trees, t)
	}
	if len(trees) == 0 {
		return fmt.Errorf("nothing to measure: -files 0 and no -repo")
	}

	ver, _ := git(o.cache, "--version")
	fmt.Fprintf(w, "git-venom bench: %s, %s/%s, %d CPUs, %d runs a side (median), interleaved\n",
		strings.TrimSpace(string(ver)), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), o.reps)
	fmt.Fprintf(w, "load average at start: %s\n", loadavg())
	missed := 0
	for _, t := range trees {
		if err := t.reset(); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "venom-bench: measuring %s\n", t.title)
		var rows []result
		for _, f := range cases {
			c, err := f(t, o)
			if err != nil {
				return err
			}
			if o.only != "" && !strings.Contains(c.name, o.only) {
				if c.teardown != nil {
					if err := c.teardown(); err != nil {
						return err
					}
				}
				continue
			}
			r, err := measure(c, o.reps, o.verbose)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "venom-bench:   %s: %.2fx\n", c.name, r.ratio)
			rows = append(rows, r)
		}
		fmt.Fprintf(w, "\n%s\n  %s\n", t.title, t.dir)
		fmt.Fprintf(w, "  %-30s %10s %10s %7s %7s  %-4s  %9s  %s\n", "case", "venom", "baseline", "ratio", "target", "", "cpu ratio", "baseline command")
		for _, r := range rows {
			verdict, target := "ok", fmt.Sprintf("%6.1fx", r.c.target)
			if r.c.target == 0 {
				verdict, target = "", "      -"
			} else if !r.ok() {
				verdict = "MISS"
				missed++
			}
			fmt.Fprintf(w, "  %-30s %10s %10s %6.2fx %s  %-4s  %8.2fx  %s\n",
				r.c.name, fmtDur(r.vMed), fmtDur(r.bMed), r.ratio, target, verdict, r.cpuRatio, r.c.base.label)
			if r.c.reps > 0 {
				fmt.Fprintf(w, "  %-30s %10s %10s %6.2fx  (95th percentile of %d runs; cpu median %s vs %s)\n", "", fmtDur(p95(r.venom)), fmtDur(p95(r.base)),
					float64(p95(r.venom))/float64(p95(r.base)), len(r.venom), fmtDur(median(r.vCPU)), fmtDur(median(r.bCPU)))
			}
		}
	}
	fmt.Fprintf(w, "\nratio = venom median / baseline median (wall clock); ok when ratio <= target.\n"+
		"cpu ratio = the same for user+system CPU time of the whole process tree: a cross-check that\n"+
		"other load on the machine moves much less (load average %s).\n"+
		"rollback rows: the real call with its plan (made untimed) vs git checkout HEAD -- <paths> (no target:\n"+
		"a rollback walks the tree once, for its safety checkpoint S, which a checkout does not), then vs\n"+
		"status+checkout (target 1.3x): beyond that one walk a rollback should cost what its paths cost.\n", loadavg())
	if missed > 0 && o.strict {
		os.Exit(1)
	}
	return nil
}

// loadavg is the 1, 5 and 15 minute load average where the system tells
// it cheaply (Linux), else "unknown".
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		if out, err := exec.Command("sysctl", "-n", "vm.loadavg").Output(); err == nil {
			return strings.Trim(strings.TrimSpace(string(out)), "{} ")
		}
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
