// Package plumbing is the only package that starts git. It resolves the git
// binary and the repository once, runs every child with an explicit GIT_DIR
// and GIT_WORK_TREE, a scrubbed environment and the pinned configuration of
// DESIGN.md section 4, and returns typed errors. It also holds the -z parsers
// and the capture and restore recipes of RFC 4.1 and 7.4.
package plumbing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// pins is the configuration every git child runs with, as -c pairs. Each pin
// says why it is there; RFC 4.1 and DESIGN.md section 4 list them.
var pins = []string{
	// Hooks are the repository's programs: reference-transaction would fire on
	// update-ref, post-commit never applies to commit-tree but a hooksPath may
	// point anywhere (CASES BR-20).
	"core.hooksPath=/dev/null",
	// An fsmonitor is a program too, and its answers may hide an edit made in
	// the same second (BR-20).
	"core.fsmonitor=false",
	// The untracked cache is written into the index; a private index must not
	// depend on, or seed, the user's cache.
	"core.untrackedCache=false",
	// Paths come back verbatim; we parse -z output, never quoted names.
	"core.quotePath=false",
	// A copied split index shares sharedindex.* in $GIT_DIR with the user's
	// index; writing it split would create or expire the live shared index
	// (BR-15).
	"core.splitIndex=false",
	"splitIndex.sharedIndexExpire=never",
	// safecrlf turns an end-of-line conversion into a fatal error in add
	// (BR-34); it is meant for interactive commits, not snapshots.
	"core.safecrlf=false",
	// Parallel checkout has raced on some git builds and left half-populated
	// trees (BR-46); restores write few paths, serially.
	"checkout.workers=1",
	// We never collect garbage or run maintenance: RFC 5.2 forbids it, and an
	// automatic gc could prune what a concurrent capture just wrote.
	"gc.auto=0",
	"maintenance.auto=false",
	// commit-tree ignores commit.gpgSign, but pin it anyway so no code path
	// we add later can prompt for a passphrase (BR-20).
	"commit.gpgSign=false",
	// Advice text is noise in parsed stderr.
	"advice.detachedHead=false",
	// Objects are read as they are: a replacement (git replace) of a tree
	// venom reads to build a checkpoint or a plan would otherwise put the
	// replacement's entries in a checkpoint of files that never held them.
	"core.useReplaceRefs=false",
	// core.ignoreStat makes update-index mark what it stages (--cacheinfo,
	// --index-info, a path) assume-unchanged, and git then trusts such an
	// entry without looking at the file: a capture that stages a changed
	// file over the entry it seeded from a tree kept the tree's blob (RFC
	// 4: assume-unchanged paths are captured with the work tree's content).
	"core.ignoreStat=false",
	// The kept indexes between captures (kept.go) let git's stat check say
	// which files did not change. Without the ctime in it (trustctime
	// off, checkStat minimal), a write of the same size with the mtime
	// put back (cp -p, touch -d, an archive's extraction) looks clean to
	// it at any time, and a capture would record the entry's old bytes.
	"core.trustctime=true",
	"core.checkStat=default",
}

// Error is a failed git command: the arguments it ran with (pins left out),
// its exit code (-1 when it could not start or was killed) and its stderr.
// Args is the whole argv; the message (Error) names only its first
// ShownArgs arguments, each cut at ShownArgBytes, and counts the rest:
// an update-index with one --cacheinfo per path would otherwise put every
// path of a rollback into one error line. GIT_VENOM_TRACE prints each
// command's whole argv before it runs.
type Error struct {
	Args     []string
	ExitCode int
	Stderr   string
	Err      error // the underlying error from os/exec, if any
}

// ShownArgs is how many of git's arguments an Error's message names, and
// ShownArgBytes how many bytes of each (DESIGN.md section 7: an error
// says what failed in a line a person can read).
const (
	ShownArgs     = 8
	ShownArgBytes = 200
	// ShownStderrBytes bounds the part of git's stderr the message keeps
	// (its last line, when it has several and they are long).
	ShownStderrBytes = 1000
)

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if i := strings.LastIndexByte(msg, '\n'); i >= 0 && len(msg) > 400 {
		msg = msg[i+1:]
	}
	return fmt.Sprintf("git %s: exit %d: %s", ShortArgv(e.Args), e.ExitCode, cut(msg, ShownStderrBytes))
}

// ShortArgv is args joined by spaces as an error message shows them: the
// first ShownArgs, each cut to ShownArgBytes bytes (with "..."), then
// "(and N more arguments)" for the rest.
func ShortArgv(args []string) string {
	n := min(len(args), ShownArgs)
	parts := make([]string, 0, n+1)
	for _, a := range args[:n] {
		parts = append(parts, cut(a, ShownArgBytes))
	}
	if more := len(args) - n; more > 0 {
		parts = append(parts, fmt.Sprintf("(and %d more arguments)", more))
	}
	return strings.Join(parts, " ")
}

// cut is s when it has at most n bytes, else its first n bytes or fewer,
// never half a UTF-8 sequence, and "...".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

func (e *Error) Unwrap() error { return e.Err }

// Repo is one working tree of a repository, and the single place that runs
// git for it. WorkTree is the canonical absolute path of the tree's top
// (symlinks resolved); GitDir is the worktree's own git directory and
// CommonDir the repository's shared one (they differ in linked worktrees).
type Repo struct {
	Git       string // absolute path of the git binary
	WorkTree  string
	GitDir    string
	CommonDir string
	// Prefix is where Open was asked from, relative to WorkTree, as git
	// sees it (`git rev-parse --show-prefix`): "" at the top of the
	// tree (and for a Repo made another way), else a path ending in "/".
	Prefix string

	baseEnv []string
	trace   *tracer   // nil: no trace
	spread  sync.Once // TmpDir's spreadSubdirs
	modes   struct {  // modesFromDisk's answer
		once sync.Once
		ok   bool
		err  error
	}
	// configFiles are the configured names of files the kept caches also
	// key on, configOnBranch whether an include depends on the branch
	// (KnowConfigFiles).
	configFiles    []string
	configOnBranch bool
	trees          treeCache // trees read or written by this process's tree edits
	// held is what a capture learnt of the real index that the index
	// cache could not keep yet, held for this process's next captures
	// (heldIndex).
	held   *heldIndex
	heldMu sync.Mutex
	// OnProgress, when set, hears how far the long steps are (Progress);
	// it may be called from several goroutines.
	OnProgress Progress
	// wrote is when this process last wrote files into the work tree
	// (Wrote; Unix nanoseconds, 0: never).
	wrote atomic.Int64
}

// Options changes one run of git.
type Options struct {
	Stdin      io.Reader // nil: stdin is /dev/null
	Env        []string  // extra KEY=VALUE pairs, e.g. GIT_INDEX_FILE
	Dir        string    // working directory; default the work tree
	NoWorkTree bool      // run without GIT_WORK_TREE (object-only commands)
	// NoIndex runs git with an empty index (Repo.absentIndex), for a
	// command that reads the index although its answer never depends on
	// it: diff-tree's raw output. On a 100,000-file tree the read costs
	// 10 ms a call.
	NoIndex bool
	Stdout  io.Writer // stream stdout here instead of returning it
	Stderr  io.Writer // also copy stderr here (it is kept for errors either way)
	// GitDirOnly marks a command that writes only in the git directory,
	// behind git's lock files (HEAD's branch, venom's refs): where
	// the system has a parent-death signal (Linux) it is SIGTERM for this
	// child, not SIGKILL, so that git removes its lock file as it dies
	// and a rollback killed while it runs leaves no stale index.lock or
	// ref lock that would stop the way back (termOnParentDeath; but for
	// a kill while git creates the lock). A
	// command that writes the work tree never takes it: SIGTERM can be
	// ignored where this process was started with it ignored.
	GitDirOnly bool
}

// scrubbed lists variables never inherited by a git child. They are the ones
// `git rev-parse --local-env-vars` prints (a hook or `rebase -x` exports
// GIT_DIR and GIT_INDEX_FILE), except the GIT_CONFIG_PARAMETERS family, which
// carries the user's own `git -c` and must keep working; plus pathspec modes
// that would change how our literal pathspecs parse.
var scrubbed = map[string]bool{
	"GIT_ALTERNATE_OBJECT_DIRECTORIES": true,
	"GIT_CONFIG":                       true,
	"GIT_OBJECT_DIRECTORY":             true,
	"GIT_DIR":                          true,
	"GIT_WORK_TREE":                    true,
	"GIT_IMPLICIT_WORK_TREE":           true,
	"GIT_GRAFT_FILE":                   true,
	"GIT_INDEX_FILE":                   true,
	"GIT_NO_REPLACE_OBJECTS":           true,
	"GIT_REPLACE_REF_BASE":             true,
	"GIT_PREFIX":                       true,
	"GIT_INTERNAL_SUPER_PREFIX":        true,
	"GIT_SHALLOW_FILE":                 true,
	"GIT_COMMON_DIR":                   true,
	"GIT_NAMESPACE":                    true,
	"GIT_CEILING_DIRECTORIES":          true,
	"GIT_DISCOVERY_ACROSS_FILESYSTEM":  true,
	"GIT_LITERAL_PATHSPECS":            true,
	"GIT_GLOB_PATHSPECS":               true,
	"GIT_NOGLOB_PATHSPECS":             true,
	"GIT_ICASE_PATHSPECS":              true,
	"GIT_QUARANTINE_PATH":              true,
	"GIT_EXTERNAL_DIFF":                true,
	"GIT_DIFF_OPTS":                    true,
	"GIT_AUTHOR_NAME":                  true,
	"GIT_AUTHOR_EMAIL":                 true,
	"GIT_COMMITTER_NAME":               true,
	"GIT_COMMITTER_EMAIL":              true,
	"GIT_EDITOR":                       true,
	"GIT_PAGER":                        true,
	"GIT_OPTIONAL_LOCKS":               true,
	"LC_ALL":                           true,
	"LANG":                             true,
	"LANGUAGE":                         true,
}

// mallocTrim is the glibc heap trim threshold every git child gets unless
// the environment sets one (MALLOC_TRIM_THRESHOLD_, or
// glibc.malloc.trim_threshold in GLIBC_TUNABLES), in bytes: 16 MiB.
//
// git's per-object loops (update-index --stdin, the capture's stage, and
// hash-object --stdin-paths, the rollback's) free zlib's state after each
// object; with glibc's default threshold (128 KiB, dynamic) the heap is
// trimmed and grown again for every file, 4 brk calls a file, about a third
// of the child's CPU. A higher threshold keeps the freed heap for the next
// object. Other allocators (macOS, musl) ignore the variable. Measured in
// bench/README.md, "The heap's trim threshold (issue 16)".
const mallocTrim = "MALLOC_TRIM_THRESHOLD_=16777216"

// CleanEnv returns env without the variables a git child must not inherit,
// and with the ones every child gets: no prompts, C locale for stderr we
// parse, no pager, and the heap trim threshold of mallocTrim unless env
// already chooses one (trimChosen).
func CleanEnv(env []string) []string {
	out := make([]string, 0, len(env)+5)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if scrubbed[k] {
			continue
		}
		out = append(out, kv)
	}
	out = append(out,
		"GIT_TERMINAL_PROMPT=0",
		"GIT_PAGER=cat",
		"LC_ALL=C",
	)
	if !trimChosen(env) {
		out = append(out, mallocTrim)
	}
	return out
}

// trimChosen reports whether env sets glibc's heap trim threshold in
// either of its spellings: MALLOC_TRIM_THRESHOLD_, or
// glibc.malloc.trim_threshold in GLIBC_TUNABLES.
func trimChosen(env []string) bool {
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if k == "MALLOC_TRIM_THRESHOLD_" ||
			(k == "GLIBC_TUNABLES" && strings.Contains(v, "glibc.malloc.trim_threshold")) {
			return true
		}
	}
	return false
}

var gitPath struct {
	once sync.Once
	path string
	err  error
}

// GitBinary finds git on PATH once ($GIT_VENOM_GIT overrides, for tests).
func GitBinary() (string, error) {
	gitPath.once.Do(func() {
		if p := os.Getenv("GIT_VENOM_GIT"); p != "" {
			gitPath.path = p
			return
		}
		gitPath.path, gitPath.err = exec.LookPath("git")
	})
	return gitPath.path, gitPath.err
}

// ErrNoRepo is returned by Open when dir is not inside a git working tree.
var ErrNoRepo = errors.New("not a git repository")

// ErrBare is returned by Open for a bare repository, which has no tree.
var ErrBare = errors.New("bare repository has no working tree")

// Open finds the working tree that contains dir, as git would from there.
// GIT_DIR and GIT_WORK_TREE from the environment are honoured for discovery
// (as `git --git-dir` passes them) and then made explicit and absolute; every
// other repository variable is dropped. A GIT_DIR alone that names the
// repository dir is in does not make dir the top of the tree. It returns ErrNoRepo outside any
// repository and ErrBare for a bare one.
func Open(ctx context.Context, dir string) (*Repo, error) { return open(ctx, dir, true) }

func open(ctx context.Context, dir string, honourEnv bool) (*Repo, error) {
	git, err := GitBinary()
	if err != nil {
		return nil, fmt.Errorf("finding git: %w", err)
	}
	env := CleanEnv(os.Environ())
	disc := discoveryEnv(env, honourEnv)
	cmd := exec.CommandContext(ctx, git, "rev-parse", "--path-format=absolute",
		"--is-bare-repository", "--git-dir", "--git-common-dir", "--show-toplevel", "--show-prefix")
	bound(cmd)
	cmd.Dir = dir
	cmd.Env = disc
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = run(cmd)
	envTracer().childCPU(cmd.Args[1:], cmd.ProcessState)
	if err != nil {
		s := stderr.String()
		if strings.Contains(s, "not a git repository") {
			return nil, ErrNoRepo
		}
		if strings.Contains(s, "must be run in a work tree") {
			// --is-bare-repository printed before --show-toplevel failed:
			// "false" means dir is inside a non-bare repository's git
			// directory, where there is no tree either, but the repository
			// is not bare and the message must not say so.
			if strings.HasPrefix(stdout.String(), "false\n") {
				return nil, ErrNoRepo
			}
			return nil, ErrBare
		}
		return nil, &Error{Args: cmd.Args[1:], ExitCode: exitCode(err), Stderr: s, Err: err}
	}
	lines := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
	if len(lines) >= 1 && lines[0] == "true" {
		return nil, ErrBare
	}
	if len(lines) < 4 || lines[3] == "" {
		// Inside the git directory itself: there is no tree here.
		return nil, ErrNoRepo
	}
	r := &Repo{Git: git, baseEnv: env}
	if r.GitDir, err = canonical(lines[1]); err != nil {
		return nil, err
	}
	if r.CommonDir, err = canonical(lines[2]); err != nil {
		return nil, err
	}
	if r.WorkTree, err = canonical(lines[3]); err != nil {
		return nil, err
	}
	if len(lines) > 4 {
		// The last line; empty at the top, and then trimmed above.
		r.Prefix = strings.Join(lines[4:], "\n")
	}
	// A hook exports GIT_DIR without GIT_WORK_TREE (a linked worktree's
	// pre-commit hook gets both it and GIT_INDEX_FILE), and git then takes
	// the current directory for the top of the tree: run from a
	// subdirectory, a capture would record every file outside it as
	// deleted. When plain discovery from dir finds the same repository, its
	// top is the real one.
	if _, wt := os.LookupEnv("GIT_WORK_TREE"); honourEnv && !wt && os.Getenv("GIT_DIR") != "" {
		if plain, err := open(ctx, dir, false); err == nil && plain.GitDir == r.GitDir {
			return plain, nil
		}
	}
	r.trace = envTracer()
	return r, nil
}

// discoveryEnv is env plus the caller's GIT_DIR and GIT_WORK_TREE when
// honourEnv: how Open finds the repository from a directory. A relative
// one is relative to this process's directory, where it was set (git
// exports GIT_DIR=.git to hooks), not to the directory git is asked about
// (a hook event's cwd may be a subdirectory).
func discoveryEnv(env []string, honourEnv bool) []string {
	disc := append([]string(nil), env...)
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE"} {
		if v, ok := os.LookupEnv(k); ok && honourEnv {
			if v != "" && !filepath.IsAbs(v) {
				if wd, err := os.Getwd(); err == nil {
					v = filepath.Join(wd, v)
				}
			}
			disc = append(disc, k+"="+v)
		}
	}
	return disc
}

// RunDiscovered runs `git args...` in dir, finding the repository there as
// Open does (same environment, the pinned -c settings), without waiting
// for Open: a read that needs only the repository, not its paths (the
// venom.* config), can then run beside Open's rev-parse, and a hook pays
// one git start in wall time instead of two (issue 5). Output and errors
// are Run's.
func RunDiscovered(ctx context.Context, dir string, args ...string) ([]byte, error) {
	git, err := GitBinary()
	if err != nil {
		return nil, fmt.Errorf("finding git: %w", err)
	}
	full := make([]string, 0, 2*len(pins)+len(args))
	for _, p := range pins {
		full = append(full, "-c", p)
	}
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, git, full...)
	bound(cmd)
	cmd.Dir = dir
	cmd.Env = discoveryEnv(CleanEnv(os.Environ()), true)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = run(cmd)
	envTracer().childCPU(args, cmd.ProcessState)
	if err != nil {
		if ctx.Err() != nil {
			return stdout.Bytes(), ctx.Err()
		}
		return stdout.Bytes(), &Error{Args: args, ExitCode: exitCode(err), Stderr: stderr.String(), Err: err}
	}
	return stdout.Bytes(), nil
}

// canonical resolves symlinks, so one tree has one name (CASES BR-54).
func canonical(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	r, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	return r, nil
}

// Canonical is the tree identity of a path: absolute, symlinks resolved.
func Canonical(p string) (string, error) { return canonical(p) }

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// Run runs git with args and returns its stdout. A non-zero exit is an
// *Error carrying the arguments, exit code and stderr.
//
// A command of objectWriters that failed only because a concurrent gc
// removed an object directory under it (objectRace) is run again, up to
// objectWriteTries runs in all and within ctx, when its stdin can be
// read again from its start (nil, or a reader that seeks: bytes.Reader,
// strings.Reader) and its stdout is not streamed (o.Stdout nil): what
// the caller gets is the last run's. Its stderr copy (o.Stderr) gets
// every run's.
func (r *Repo) Run(ctx context.Context, o Options, args ...string) ([]byte, error) {
	var rewind func() bool
	if len(args) > 0 && objectWriters[args[0]] && o.Stdout == nil {
		rewind, _ = rewinder(o.Stdin)
	}
	for try := 1; ; try++ {
		out, err := r.run(ctx, o, args...)
		if err == nil || rewind == nil || try >= objectWriteTries || !objectRace(err) {
			return out, err
		}
		r.trace.printf("git %s: an object directory went away under it (a concurrent gc): run %d of %d", args[0], try+1, objectWriteTries)
		if !sleepCtx(ctx, retryWait(try)) {
			return out, ctx.Err()
		}
		if !rewind() {
			return out, err
		}
	}
}

// run is one run of git for Run.
func (r *Repo) run(ctx context.Context, o Options, args ...string) ([]byte, error) {
	full := make([]string, 0, 2*len(pins)+len(args))
	for _, p := range pins {
		full = append(full, "-c", p)
	}
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, r.Git, full...)
	bound(cmd)
	if o.GitDirOnly {
		termOnParentDeath(cmd)
	}
	cmd.Dir = r.WorkTree
	if o.Dir != "" {
		cmd.Dir = o.Dir
	}
	env := append([]string(nil), r.baseEnv...)
	env = append(env, "GIT_DIR="+r.GitDir)
	if !o.NoWorkTree {
		env = append(env, "GIT_WORK_TREE="+r.WorkTree)
	}
	if o.NoIndex {
		env = append(env, "GIT_INDEX_FILE="+r.absentIndex())
	}
	env = append(env, o.Env...)
	cmd.Env = env
	cmd.Stdin = o.Stdin // nil means /dev/null in os/exec
	var stdout, stderr bytes.Buffer
	if o.Stdout != nil {
		cmd.Stdout = o.Stdout
	} else {
		cmd.Stdout = &stdout
	}
	cmd.Stderr = &stderr
	if o.Stderr != nil {
		cmd.Stderr = io.MultiWriter(&stderr, o.Stderr)
	}
	r.trace.printf("git %s%s", strings.Join(args, " "), traceEnv(o.Env))
	err := run(cmd)
	r.trace.childCPU(args, cmd.ProcessState)
	if err != nil {
		if ctx.Err() != nil {
			return stdout.Bytes(), ctx.Err()
		}
		return stdout.Bytes(), &Error{Args: args, ExitCode: exitCode(err), Stderr: stderr.String(), Err: err}
	}
	return stdout.Bytes(), nil
}

// absentIndex is an index path no code creates, in the worktree's scratch
// directory: git reads a missing index file as an empty index. Were a file
// there, git would refuse it as corrupt (it is no index) or read it; either
// way the answers NoIndex is for do not depend on it.
func (r *Repo) absentIndex() string {
	return filepath.Join(r.GitDir, "venom", "tmp", "absent.index")
}

// tracer writes "venom trace: " lines (GIT_VENOM_TRACE), one at a time:
// git children run from several goroutines.
type tracer struct {
	mu sync.Mutex
	w  io.Writer
}

// printf writes one trace line; on a nil tracer it does nothing.
func (t *tracer) printf(format string, args ...any) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.w, "venom trace: "+format+"\n", args...)
}

// stderrTracer is the one tracer of this process: every Repo's, and the
// git children started before there is a Repo (Open's discovery,
// RunDiscovered), write through its lock.
var stderrTracer = &tracer{w: os.Stderr}

// TraceTo sends the trace (GIT_VENOM_TRACE) to w instead of os.Stderr:
// a command's standard error, where its other output goes.
func TraceTo(w io.Writer) {
	stderrTracer.mu.Lock()
	defer stderrTracer.mu.Unlock()
	stderrTracer.w = w
}

// envTracer is stderrTracer when GIT_VENOM_TRACE is set, else nil.
func envTracer() *tracer {
	if os.Getenv("GIT_VENOM_TRACE") == "" {
		return nil
	}
	return stderrTracer
}

// childCPU writes, once git child args has ended, the CPU time (user
// plus system, in ms, from its rusage) it used: "venom trace: CPU of git
// <subcommand>: <ms> ms". A run's lines add up to the children's part of
// the last line (traceCPU in internal/cli), and tell where a command's
// CPU goes without a wrapper around git, which would add its own start to
// every child (bench/README.md, Profiling). Nothing when st is nil: the
// child never started.
func (t *tracer) childCPU(args []string, st *os.ProcessState) {
	if t == nil || st == nil {
		return
	}
	cpu := st.UserTime() + st.SystemTime()
	t.printf("CPU of git %s: %.2f ms", Subcommand(args), float64(cpu.Microseconds())/1000)
}

// Subcommand is the git command args run ("status" for
// `-c core.quotePath=false status -z`): the first argument that is not
// an option of git itself, -c and -C taking the argument after them
// along; "" when there is none.
func Subcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-c" || a == "-C":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return ""
}

func traceEnv(env []string) string {
	if len(env) == 0 {
		return ""
	}
	return " [" + strings.Join(env, " ") + "]"
}

// Line runs git and returns its stdout with the trailing newline removed.
func (r *Repo) Line(ctx context.Context, o Options, args ...string) (string, error) {
	out, err := r.Run(ctx, o, args...)
	return strings.TrimRight(string(out), "\n"), err
}

// ForDir returns a runner for another repository found at dir (a nested
// repository or submodule), sharing this one's binary and environment.
func (r *Repo) ForDir(ctx context.Context, dir string) (*Repo, error) {
	return open(ctx, dir, false)
}

// IsExit reports whether err is a git failure with the given exit code.
func IsExit(err error, code int) bool {
	var ge *Error
	return errors.As(err, &ge) && ge.ExitCode == code
}

// TracksBelowPrefix reports whether the user's index tracks a path below
// Prefix, the directory Open was asked from: that directory is then part
// of the tree's work, and a command run there acts on the whole tree (the
// subdirectory convenience, CASES BR-52). At the top of the tree it is
// true, and starts no git. Below it, the index cache answers when it
// holds an entry for the index as it is (its tracked directories, or a
// gitlink at Prefix: indexcache.go), which starts no git either; else one
// `git ls-files -z` limited to that directory does (it reads the whole
// index, about 40 ms of CPU for 100,000 entries; what it prints is
// counted, not kept). An untracked or ignored folder holds no tracked
// path: it is no part of this repository's work (RFC 4.1, "a git root of
// its own").
func (r *Repo) TracksBelowPrefix(ctx context.Context) (bool, error) {
	if r.Prefix == "" {
		return true, nil
	}
	if tracked, known := r.cachedTracksBelow(strings.TrimSuffix(r.Prefix, "/")); known {
		return tracked, nil
	}
	var w countWriter
	if _, err := r.Run(ctx, Options{Stdout: &w}, "ls-files", "-z", "--", ":(literal)"+r.Prefix); err != nil {
		return false, err
	}
	return w.n > 0, nil
}

// countWriter counts what is written to it and keeps nothing.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}
