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
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"
)

type options struct {
	cache   string
	bin     string
	repo    string
	files   int
	sizes   []int
	reps    int
	only    string
	verbose bool
	strict  bool
	tsv     string
	big     int
	subs    int
	small   int
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
	flag.IntVar(&o.subs, "submodules", 20, "submodules in the tree of issue 18's rows; 0 skips it")
	flag.IntVar(&o.small, "small", 4800, "files in the small generated tree (git.git's size) of the small-tree rows; 0 skips it")
	sizes := flag.String("modified", "1,10,100,1000,10000", "comma-separated numbers of files changed in the modified-files rows")
	flag.IntVar(&o.reps, "reps", 9, "timed runs of each side (median reported), after one warm-up each")
	flag.StringVar(&o.only, "only", "", "run only cases whose name matches this regular expression")
	flag.BoolVar(&o.verbose, "v", false, "print every sample on stderr")
	flag.BoolVar(&o.strict, "strict", false, "exit 1 when a target is missed")
	flag.StringVar(&o.tsv, "tsv", "", "also append every line of the table to this file, tab-separated (tree, case, baseline, venom wall ms, venom cpu ms, baseline wall ms, baseline cpu ms, ratio, cpu ratio, target, verdict)")
	flag.IntVar(&o.big, "big", 50000, "files created (and deleted) in the new-files rows; 0 skips them")
	flag.Parse()
	for _, f := range strings.Split(*sizes, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "venom-bench: -modified: %q is not a positive number\n", f)
			os.Exit(2)
		}
		o.sizes = append(o.sizes, n)
	}
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
	if err := os.WriteFile(global, []byte("# venom-bench: fixed global config for every measured git\n[init]\n\tdefaultBranch = main\n"+
		"# a loaded machine must not fail a 10,000-file capture at the 30s default\n[venom \"checkpoints\"]\n\ttimeout = 10m\n"), 0o644); err != nil {
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
	if o.small > 0 && o.small != o.files {
		t, err := generated(o.cache, o.small)
		if err != nil {
			return err
		}
		t.small = true
		trees = append(trees, t)
	}
	if o.subs > 0 {
		t, err := withSubmodules(o.cache, o.subs)
		if err != nil {
			return err
		}
		trees = append(trees, t)
	}
	if len(trees) == 0 {
		return fmt.Errorf("nothing to measure: -files 0, -small 0, -submodules 0 and no -repo")
	}

	ver, _ := git(o.cache, "--version")
	fmt.Fprintf(w, "git-venom bench: %s, %s/%s, %d CPUs, %d runs a side (median), interleaved\n",
		strings.TrimSpace(string(ver)), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), o.reps)
	fmt.Fprintf(w, "load average at start: %s\n", loadavg())
	var only *regexp.Regexp
	if o.only != "" {
		if only, err = regexp.Compile(o.only); err != nil {
			return fmt.Errorf("-only: %w", err)
		}
	}
	missed := 0
	var tsv *os.File
	if o.tsv != "" {
		if tsv, err = os.OpenFile(o.tsv, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err != nil {
			return err
		}
		defer tsv.Close()
	}
	for _, t := range trees {
		if err := t.reset(); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "venom-bench: measuring %s\n", t.title)
		fmt.Fprintf(w, "\n%s\n  %s\n", t.title, t.dir)
		fmt.Fprintf(w, "  %-36s %10s %10s  %-30s %10s %10s %7s %9s %7s\n",
			"case", "venom", "venom cpu", "against", "baseline", "cpu", "ratio", "cpu ratio", "target")
		cases := allCases(o)
		switch {
		case t.subs > 0:
			cases = submoduleCases(o)
		case t.small:
			cases = smallCases
		}
		for _, f := range cases {
			c, err := f(t, o)
			if err != nil {
				return err
			}
			if c == nil {
				continue // not for this tree
			}
			if only != nil && !only.MatchString(c.name) {
				if c.teardown != nil {
					if err := c.teardown(); err != nil {
						return err
					}
				}
				continue
			}
			fmt.Fprintf(os.Stderr, "venom-bench:   %s\n", c.name)
			r, err := measure(c, o.reps, o.verbose)
			if err != nil {
				return err
			}
			for i, l := range r.lines() {
				name, vw, vc := c.name, fmtDur(l.vWall), fmtDur(l.vCPU)
				if i > 0 {
					name, vw, vc = "", "", ""
				}
				if l.verdict == "MISS" {
					missed++
				}
				fmt.Fprintf(w, "  %-36s %10s %10s  %-30s %10s %10s %6.2fx %8.2fx %7s %s\n",
					name, vw, vc, l.base.label, fmtDur(l.bWall), fmtDur(l.bCPU), l.ratio, l.cpuRatio, l.targets, l.verdict)
				if tsv != nil {
					fmt.Fprintf(tsv, "%s\t%s\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.3f\t%.3f\t%s\t%s\n", t.title, c.name, l.base.label,
						msf(l.vWall), msf(l.vCPU), msf(l.bWall), msf(l.bCPU), l.ratio, l.cpuRatio, strings.TrimSpace(l.targets), l.verdict)
				}
			}
			if c.reps > 0 {
				fmt.Fprintf(w, "  %-36s %10s %10s  (95th percentile of %d runs, venom wall; the baseline's %s)\n", "",
					fmtDur(p95(r.venom.wall)), "", len(r.venom.wall), fmtDur(p95(r.bases[0].wall)))
			}
			for _, l := range strings.Split(r.where+c.note, "\n") {
				if l != "" {
					fmt.Fprintf(w, "    %s\n", l)
				}
			}
		}
	}
	fmt.Fprintf(w, "\nratio = venom median / baseline median (wall clock); cpu ratio = the same for user+system CPU\n"+
		"time of the whole process tree (wait4). The targets are CPU ratios (issue 16): ok when cpu ratio <= target.\n"+
		"Wall-clock ratios wander with other load on the machine (load average %s).\n"+
		"Baselines (bench/README.md says exactly what each runs):\n", loadavg())
	for _, b := range baselineLegend {
		fmt.Fprintf(w, "  %-30s %s\n", b[0], b[1])
	}
	if missed > 0 && o.strict {
		os.Exit(1)
	}
	return nil
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

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
