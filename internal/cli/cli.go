// Package cli is the only package that parses flags, prints and chooses exit
// codes. Each binary's main calls Main with its verb; everything below
// returns values and *rfcerr.Error, which meet the exit-code table of RFC
// 11.3 in exitCode, the one switch.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/plumbing"
)

// IO is where a command reads and writes; tests pass buffers.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
	// Color is true when Out is a terminal and color is wanted.
	Color bool
}

// command is one verb's entry point.
type command func(ctx context.Context, env *env, args []string) error

// env is what a verb gets: the streams and the common flags.
type env struct {
	IO
	JSON bool
	Dir  string
	// width is the terminal's width when Out is one, measured by
	// setupOutput before a pager takes Out over (0: not measured).
	width int
	// palette colours the human output (nil: no colour), by setupOutput.
	palette palette
	// closers run when the command is done, before its error is shown:
	// a pager's, which waits for the person to quit it.
	closers []func()
}

// finish runs e's closers, once.
func (e *env) finish() {
	for _, c := range e.closers {
		c()
	}
	e.closers = nil
}

var verbs = map[string]command{
	"checkpoint": runCheckpoint,
	"plan":       runPlan,
	"rollback":   runRollback,
	"hook":       runHook,
	"doctor":     runDoctor,
}

// Main runs `git venom-<verb>` with args (without the program name) and
// returns the exit status: 0, or the class of the error's RFC code. A panic
// is recovered and reported as failed.internal (exit 1), so exit 2 always
// means bad parameters.
func Main(verb string, args []string, in io.Reader, out, errw io.Writer) (code int) {
	e := &env{IO: IO{In: in, Out: out, Err: errw}}
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--json" {
			e.JSON = true
		}
	}
	defer func() {
		if p := recover(); p != nil {
			if os.Getenv("GIT_VENOM_TRACE") != "" {
				fmt.Fprintf(errw, "%s\n", debug.Stack())
			}
			code = report(e, panicErr(p))
		}
	}()
	run, ok := verbs[verb]
	if !ok {
		return report(e, rfcerr.New("invalid_params.command", nil, "unknown command %q", verb))
	}
	if path := os.Getenv("GIT_VENOM_CPUPROFILE"); path != "" {
		defer startProfile(path)()
	}
	tuneGC()
	if os.Getenv("GIT_VENOM_TRACE") != "" {
		plumbing.TraceTo(errw)
		defer traceCPU(errw)
	}
	// A hang-up (a closed terminal, a harness ending its hook's session)
	// stops a command as SIGTERM and Ctrl-C do: the context ends, git's
	// children are killed, and a rollback goes back to S before it exits
	// (issue 13 items 1 and 7). Left to its default, SIGHUP would kill
	// venom at once, with no way back run.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	err := run(ctx, e, args)
	e.finish()
	if err != nil {
		if errors.Is(err, errHelp) {
			return 129
		}
		err = interrupted(ctx, err)
		var st exitStatus
		if errors.As(err, &st) {
			return int(st)
		}
		return report(e, err)
	}
	return 0
}

// interrupted is err, said to be an interruption where a signal ended
// ctx and err does not say so itself (a rollback's way back does: its
// failed.rollback_undone and failed.rollback_partial): a git child
// killed by the context otherwise reads as a git failure ("comparing S
// with k1: ... context canceled"). The code stays err's.
func interrupted(ctx context.Context, err error) error {
	e := rfcerr.As(err)
	if ctx.Err() == nil || e == nil || strings.Contains(e.Message, "interrupted") {
		return err
	}
	c := *e
	c.Message = fmt.Sprintf("interrupted (%v): %s", context.Cause(ctx), e.Message)
	return &c
}

// tuneGC lets the heap grow to five times what is live before the
// garbage collector runs (GOGC=400), under a soft limit of 1 GiB, unless
// GOGC or GOMEMLIMIT says otherwise. A command lives for one capture or
// rollback, and what it keeps (the trees a capture's tree edit read and
// wrote, about 10 MB for 1,000 changed files on a 57k-file tree) lives
// until it exits: at Go's default the collector ran several times a
// capture for nothing, a fifth of venom's own CPU (issue 16, pprof).
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(1 << 30)
	}
}

// traceCPU writes, as the last trace line (GIT_VENOM_TRACE), the CPU time
// (user+system, ms) of this process and of the git children it waited
// for, from getrusage(2): what a profile of a small command needs and a
// wrapper around git would inflate (bench/README.md, Profiling).
func traceCPU(w io.Writer) {
	ms := func(who int) float64 {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) != nil {
			return -1
		}
		return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
	}
	fmt.Fprintf(w, "venom trace: CPU: %.2f ms venom, %.2f ms its git children\n", ms(syscall.RUSAGE_SELF), ms(syscall.RUSAGE_CHILDREN))
}

// panicErr is a recovered panic as failed.internal (DESIGN.md 7: a bug).
func panicErr(p any) error {
	return rfcerr.New("failed.internal", map[string]any{"panic": fmt.Sprint(p)}, "internal error: %v", p)
}

// startProfile writes a CPU profile of this process (not of its git
// children) to path, for `go tool pprof`; GIT_VENOM_CPUPROFILE=<path>
// turns it on (bench/README.md, Profiling). It returns the function that
// stops and closes it. A profile that cannot start is no error: the
// command runs without one.
func startProfile(path string) func() {
	f, err := os.Create(path)
	if err != nil {
		return func() {}
	}
	if pprof.StartCPUProfile(f) != nil {
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// exitCode is RFC 11.3's table: the class of a code fixes the exit status.
func exitCode(code string) int {
	class, _, _ := strings.Cut(code, ".")
	switch class {
	case "failed":
		return 1
	case "invalid_params":
		return 2
	case "not_found":
		return 3
	case "denied":
		return 4
	case "conflict":
		return 5
	case "timeout":
		return 7
	case "unsupported":
		return 10
	}
	return 1
}

// report prints err as the JSON error object on stdout (--json) or as git
// style error: and hint: lines on stderr, and returns its exit status.
func report(e *env, err error) int {
	re := rfcerr.As(err)
	if re == nil {
		re = rfcerr.Wrap("failed.internal", err, nil, "internal error")
		re.Message = err.Error()
	}
	if e.JSON {
		data := re.Data
		if data == nil {
			data = map[string]any{}
		}
		obj := map[string]any{"error": map[string]any{"code": re.Code, "message": re.Message, "data": data}}
		writeJSON(e.Out, obj)
	} else {
		fmt.Fprintf(e.Err, "error: %s\n", re.Message)
		for _, h := range re.Hints {
			fmt.Fprintf(e.Err, "hint: %s\n", h)
		}
		if os.Getenv("GIT_VENOM_TRACE") != "" {
			fmt.Fprintf(e.Err, "trace: code %s\n", re.Code)
		}
	}
	return exitCode(re.Code)
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// flags makes a flag set with the common --json and -C, parse errors
// returned (never printed or exited on).
func (e *env) flags(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.BoolVar(&e.JSON, "json", e.JSON, "print one JSON object (RFC 11.1 shapes)")
	fs.StringVarP(&e.Dir, "directory", "C", "", "run as if started in this directory")
	return fs
}

// errHelp is returned by parse after printing usage for -h/--help; Main
// exits 129 for it, as git's builtins do for -h.
var errHelp = errors.New("help shown")

// parse parses args, turning pflag's errors into invalid_params.usage and
// printing usage for -h and --help.
func (e *env) parse(fs *pflag.FlagSet, usage string, args []string) error {
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		return rfcerr.New("invalid_params.usage", map[string]any{"usage": usage}, "%s", err.Error()).WithHint("usage: %s", usage)
	}
	if *help {
		fmt.Fprintf(e.Out, "usage: %s\n\n%s", usage, FlagUsages(fs))
		return errHelp
	}
	if e.Dir != "" {
		if err := os.Chdir(e.Dir); err != nil {
			return rfcerr.Wrap("invalid_params.usage", err, nil, "cannot change to %s", e.Dir)
		}
	}
	return nil
}

// placeholders name the value of each option that takes one, in the
// usage (git's "--agent <id>"); an option not listed shows <value>.
var placeholders = map[string]string{
	"agent": "id", "reason": "reason", "label": "text", "isolation": "kind", "turn": "t",
	"fork-of": "agent", "through-turn": "t", "harness": "name", "harness-session": "id",
	"harness-turn": "id", "harness-end": "id", "before": "k", "limit": "n", "directory": "dir",
	"path": "path", "restore": "all|files", "outside": "refuse|keep|overwrite", "plan": "plan",
	"scope": "scope", "color": "when",
}

// FlagUsages lists fs's options as git's -h does: one an option, four
// spaces in, its description at column 27 (on the next line when the
// option is longer), hidden ones left out, and no pflag type names or
// [=true|false]; an option's value is named by placeholders. The
// commands and the TUI (git venom -h) print it under their usage line.
func FlagUsages(fs *pflag.FlagSet) string {
	var b strings.Builder
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		left := "    "
		if f.Shorthand != "" {
			left += "-" + f.Shorthand + ", "
		}
		left += "--" + f.Name
		if f.Value.Type() != "bool" {
			ph := placeholders[f.Name]
			if ph == "" {
				ph = "value"
			}
			if f.NoOptDefVal != "" {
				left += "[=<" + ph + ">]"
			} else {
				left += " <" + ph + ">"
			}
		}
		_, desc := pflag.UnquoteUsage(f)
		switch f.DefValue {
		case "", "false", "0", "[]":
		default:
			if f.Name != "help" {
				desc += fmt.Sprintf(" (default %s)", f.DefValue)
			}
		}
		if len(left) > 25 {
			fmt.Fprintf(&b, "%s\n%26s %s\n", left, "", desc)
		} else {
			fmt.Fprintf(&b, "%-26s %s\n", left, desc)
		}
	})
	return b.String()
}

func usageErr(usage, format string, args ...any) error {
	return rfcerr.New("invalid_params.usage", map[string]any{"usage": usage}, format, args...).WithHint("usage: %s", usage)
}
