package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// caseFunc builds one row for a tree; nil means the row is not made for
// this tree. Each row is one function (a prepare that puts the tree in the
// state to measure, untimed, then the timed commands of every side).
type caseFunc func(t *tree, o *options) (*benchCase, error)

// allCases lists the rows in the order they run. The rows that leave
// tens of thousands of loose objects or files behind come last, each
// cleaning up after itself.
// smallCases are the rows of the small generated tree (-small, git.git's
// size, 4,800 files by default), where a command's fixed cost of git
// children weighs most: issue 16's rollback of 10 paths on a 4.8k-file
// tree (1.5x two status walks and the checkout).
var smallCases = []caseFunc{rollbackRow(10)}

func allCases(o *options) []caseFunc {
	cs := []caseFunc{cleanCapture, dedupCapture, logGrowth, dedupUnstaged, dedupAfterRollback}
	for _, n := range o.sizes {
		cs = append(cs, modifiedRow(n))
	}
	cs = append(cs, hookTurnRow(1, 0), hookTurnRow(1000, 0), hookTurnRow(1, 1000))
	cs = append(cs, toolCallRows...)
	for _, n := range []int{10, 1000, 10000} {
		cs = append(cs, rollbackRow(n))
	}
	if o.big > 0 {
		cs = append(cs, newFilesCapture, afterBigTurn, rollbackDeletions, rollbackCreations)
	}
	return cs
}

// The baselines' labels, and what each runs (printed under the table).
const (
	labelStatus   = "git status"
	labelStatusRf = "git status (refreshed index)"
	labelRecipe   = "RFC core recipe"
	labelStash    = "git stash create (index copy)"
	labelTwoHash  = "2 status + hash-object"
	labelCheckout = "git checkout"
	labelTwoCo    = "2 status + checkout"
	labelStRm     = "status + rm -rf"
	labelCoSt     = "checkout + status"
	// Issue 18's rows (submodules.go).
	labelStatusSubs = "git status (into submodules)"
	labelStatusEach = "git status in each repository"
	labelFloorEach  = "status + rev-parse HEAD in each"
)

var baselineLegend = [][2]string{
	{labelStatus, "git status --porcelain -z --untracked-files=all: the one walk any tool must do"},
	{labelStatusRf, "the same, GIT_OPTIONAL_LOCKS=0, on a copy of the index refreshed once (what status costs once the index is fresh again)"},
	{labelRecipe, "cp -p .git/index tmp; GIT_INDEX_FILE=tmp: git add -A; git write-tree; git commit-tree; git update-ref (RFC 4.1's recipe)"},
	{labelStash, "cp -p .git/index tmp; GIT_INDEX_FILE=tmp git stash create (no untracked files: no new-files row)"},
	{labelTwoHash, "status (turn start); the edits, untimed; status and git hash-object -w --stdin-paths of the changed files (turn end)"},
	{labelCheckout, "git checkout HEAD --pathspec-from-file of the rollback's paths"},
	{labelTwoCo, "two status walks (the safety checkpoint, the full verification capture) and that checkout"},
	{labelStRm, "one status walk and rm -rf of the directory the turn created"},
	{labelCoSt, "git checkout HEAD -- <the deleted paths>, then one status walk"},
	{labelStatusSubs, "git status --porcelain -z --untracked-files=all at the top, which runs a status in each submodule to see whether it is dirty"},
	{labelStatusEach, "that status, --ignore-submodules=dirty, in the top and then in each submodule, one after another"},
	{labelFloorEach, "that, and git rev-parse HEAD HEAD^{tree} --symbolic-full-name HEAD after each status: one walk and one HEAD a repository"},
}

// statusCmd is the baseline a capture is held to (issues 2 and 16): the
// one walk any tool must do to know what changed.
var statusCmd = []string{"status", "--porcelain", "-z", "--untracked-files=all"}

// command returns a timed run of git with args in dir; stdout is returned,
// stderr goes into the error.
func command(dir string, args ...string) func() (outcome, error) {
	return commandIn(dir, nil, args...)
}

// commandIn returns a timed run of git with args in dir, reading stdin
// (nil: none).
func commandIn(dir string, stdin []byte, args ...string) func() (outcome, error) {
	return process(dir, nil, stdin, "git", args...)
}

// process returns a timed run of the program name (git, cp, rm, a venom
// binary) in dir with the bench's environment plus env, reading stdin
// (nil: none); stdout is returned, stderr goes into the error.
func process(dir string, env []string, stdin []byte, name string, args ...string) func() (outcome, error) {
	return func() (outcome, error) {
		o, _, err := processStderr(dir, env, stdin, name, args...)
		return o, err
	}
}

// processStderr runs name as process does, once, and returns its stderr
// too (a run with GIT_VENOM_TRACE=1 writes its trace there).
func processStderr(dir string, env []string, stdin []byte, name string, args ...string) (outcome, []byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string(nil), childEnv...), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return outcome{}, nil, fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return outcome{out: out.Bytes(), cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}, errb.Bytes(), nil
}

// sequence runs steps one after another as one timed run: their CPU times
// add up, and the output is the last step's.
func sequence(steps ...func() (outcome, error)) func() (outcome, error) {
	return func() (outcome, error) {
		var total outcome
		for _, s := range steps {
			o, err := s()
			if err != nil {
				return o, err
			}
			total.cpu += o.cpu
			total.out = o.out
		}
		return total, nil
	}
}

// checkpointCmd is what a harness hook runs: `git venom-checkpoint` through
// git's own dispatch, so the wrapper process is counted as users pay it.
func checkpointCmd(dir string, agent *string) func() (outcome, error) {
	return func() (outcome, error) {
		return command(dir, "venom-checkpoint", "--agent", *agent, "--reason", "manual", "--json")()
	}
}

type takeJSON struct {
	Checkpoint string `json:"checkpoint"`
	Reused     bool   `json:"reused"`
	Repos      []struct {
		Tree    string `json:"tree"`
		Skipped []struct {
			Path string `json:"path"`
		} `json:"skipped"`
	} `json:"repos"`
}

func parseTake(out []byte) (*takeJSON, error) {
	var r takeJSON
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("reading its JSON: %v: %q", err, out)
	}
	if len(r.Repos) == 0 {
		return nil, fmt.Errorf("want a repo in %s", out)
	}
	return &r, nil
}

// wantNew checks a capture made a new checkpoint and its tree passes ok.
func wantNew(ok func(tree string) error) func(out []byte) error {
	return func(out []byte) error {
		r, err := parseTake(out)
		if err != nil {
			return err
		}
		if r.Reused {
			return fmt.Errorf("want a new checkpoint, got %s reused", r.Checkpoint)
		}
		return ok(r.Repos[0].Tree)
	}
}

// wantReused checks a capture reused the checkpoint *id.
func wantReused(id *string) func(out []byte) error {
	return func(out []byte) error {
		r, err := parseTake(out)
		if err != nil {
			return err
		}
		if !r.Reused || r.Checkpoint != *id {
			return fmt.Errorf("want %s reused, got %s reused=%v", *id, r.Checkpoint, r.Reused)
		}
		return nil
	}
}

func headTree(dir string) (string, error) {
	out, err := git(dir, "rev-parse", "HEAD^{tree}")
	return strings.TrimSpace(string(out)), err
}

func statusBase(t *tree, prepare func(int) error, check func([]byte) error, target float64) baseline {
	return baseline{side: side{label: labelStatus, prepare: prepare, run: command(t.dir, statusCmd...), check: check}, target: target}
}

// wantEntries checks a `status --porcelain -z` output lists n paths.
func wantEntries(n int) func(out []byte) error {
	return func(out []byte) error {
		if got := bytes.Count(out, []byte{0}); got != n {
			return fmt.Errorf("status lists %d paths, want %d: %.200q", got, n, out)
		}
		return nil
	}
}

func wantEmpty(out []byte) error { return wantEntries(0)(out) }

// cleanCapture: a capture of a clean tree that makes a new checkpoint (a
// fresh agent every run, so nothing is deduplicated) against one status.
// Checked: the captured tree is HEAD's tree.
func cleanCapture(t *tree, o *options) (*benchCase, error) {
	want, err := headTree(t.dir)
	if err != nil {
		return nil, err
	}
	agent := ""
	return &benchCase{
		name: "clean-tree capture",
		venom: side{
			label:   "git venom-checkpoint (new checkpoint)",
			prepare: func(run int) error { agent = fmt.Sprintf("clean-%d", run); return nil },
			run:     checkpointCmd(t.dir, &agent),
			check: wantNew(func(tree string) error {
				if tree != want {
					return fmt.Errorf("want a checkpoint of tree %s, got %s", want, tree)
				}
				return nil
			}),
		},
		bases: []baseline{statusBase(t, nil, wantEmpty, 1.1)},
	}, nil
}

// dedupCapture: the second capture with nothing changed (RFC 3.2 reuses
// the latest checkpoint) against one status.
func dedupCapture(t *tree, o *options) (*benchCase, error) {
	agent := "dedup"
	first, err := checkpointCmd(t.dir, &agent)()
	if err != nil {
		return nil, err
	}
	r0, err := parseTake(first.out)
	if err != nil {
		return nil, err
	}
	return &benchCase{
		name:  "dedup no-op capture",
		venom: side{label: "git venom-checkpoint (reused)", run: checkpointCmd(t.dir, &agent), check: wantReused(&r0.Checkpoint)},
		bases: []baseline{statusBase(t, nil, wantEmpty, 1.1)},
	}, nil
}

// edited is a set of tracked files the bench changes and puts back.
type edited struct {
	t     *tree
	paths []string
	orig  [][]byte
}

func editSet(t *tree, n int) (*edited, error) {
	paths, err := pickFiles(t.dir, n)
	if err != nil {
		return nil, err
	}
	e := &edited{t: t, paths: paths, orig: make([][]byte, len(paths))}
	for i, p := range paths {
		if e.orig[i], err = os.ReadFile(filepath.Join(t.dir, p)); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// modify gives every file content no earlier run wrote: its original plus
// a line naming tag and the run, so each run hashes and stores that many
// new blobs and no side finds another's objects already stored.
func (e *edited) modify(tag string, run int) error {
	line := fmt.Sprintf("\nvenom-bench %s %d\n", tag, run)
	for i, p := range e.paths {
		if err := os.WriteFile(filepath.Join(e.t.dir, p), append(e.orig[i][:len(e.orig[i]):len(e.orig[i])], line...), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// restore puts the original content back and makes the index fresh.
func (e *edited) restore() error {
	for i, p := range e.paths {
		if err := os.WriteFile(filepath.Join(e.t.dir, p), e.orig[i], 0o644); err != nil {
			return err
		}
	}
	return freshen(e.t.dir)
}

// restored checks the first and last file hold their original content.
func (e *edited) restored() error {
	for _, i := range []int{0, len(e.paths) - 1} {
		got, err := os.ReadFile(filepath.Join(e.t.dir, e.paths[i]))
		if err != nil {
			return err
		}
		if !bytes.Equal(got, e.orig[i]) {
			return fmt.Errorf("%s was not restored", e.paths[i])
		}
	}
	return nil
}

// holdsDisk checks, untimed, that a captured tree holds the first and the
// last of paths as they are on disk now.
func holdsDisk(dir string, paths []string) func(treeish string) error {
	return func(treeish string) error {
		for _, p := range []string{paths[0], paths[len(paths)-1]} {
			got, err := git(dir, "rev-parse", treeish+":"+p)
			if err != nil {
				return err
			}
			want, err := git(dir, "hash-object", "--", p)
			if err != nil {
				return err
			}
			if !bytes.Equal(got, want) {
				return fmt.Errorf("%s in %s is %s, the file is %s", p, treeish, bytes.TrimSpace(got), bytes.TrimSpace(want))
			}
		}
		return nil
	}
}

// dedupUnstaged: a dedup no-op with 1,000 files the person changed and
// never staged (issue 16: every turn pays it twice), against one status
// of the same state.
func dedupUnstaged(t *tree, o *options) (*benchCase, error) {
	e, err := editSet(t, 1000)
	if err != nil {
		return nil, err
	}
	if err := e.modify("unstaged", 0); err != nil {
		return nil, err
	}
	// The person's edits are older than the agent's turn: a capture keeps
	// a file's stamp once it changed 2 s before (plumbing/stamps.go), so
	// the runs measure a turn's captures, not those of the first seconds
	// after the edits (which stage the 1,000 files again, as git would).
	time.Sleep(2100 * time.Millisecond)
	agent := "dedup-unstaged"
	first, err := checkpointCmd(t.dir, &agent)()
	if err != nil {
		return nil, err
	}
	r0, err := parseTake(first.out)
	if err != nil {
		return nil, err
	}
	return &benchCase{
		name:     fmt.Sprintf("dedup no-op, %d unstaged", len(e.paths)),
		venom:    side{label: "git venom-checkpoint (reused)", run: checkpointCmd(t.dir, &agent), check: wantReused(&r0.Checkpoint)},
		bases:    []baseline{statusBase(t, nil, wantEntries(len(e.paths)), 1.1)},
		teardown: e.restore,
	}, nil
}

// dedupAfterRollback: after a rollback of 1,000 paths the user's index is
// stat-stale for every restored path (a rollback never writes it); a dedup
// no-op capture then, against a status with a fresh index (what status
// costs once anything refreshed it).
func dedupAfterRollback(t *tree, o *options) (*benchCase, error) {
	e, err := editSet(t, 1000)
	if err != nil {
		return nil, err
	}
	agent := "dedup-after-rb"
	k, err := turnCheckpoint(t.dir, agent, "turn_start", "--isolation", "worktree")
	if err != nil {
		return nil, err
	}
	if err := e.modify("before-rollback", 0); err != nil {
		return nil, err
	}
	if _, err := turnCheckpoint(t.dir, agent, "turn_end"); err != nil {
		return nil, err
	}
	plan, err := planTo(t.dir, agent, k)
	if err != nil {
		return nil, err
	}
	out, err := git(t.dir, "venom-rollback", "--agent", agent, k, "--restore", "files", "--plan", plan, "--json")
	if err != nil {
		return nil, err
	}
	if err := exactRollback(out); err != nil {
		return nil, err
	}
	if err := e.restored(); err != nil {
		return nil, err
	}
	first, err := checkpointCmd(t.dir, &agent)()
	if err != nil {
		return nil, err
	}
	r0, err := parseTake(first.out)
	if err != nil {
		return nil, err
	}
	// The baseline's own index: a copy of the user's, refreshed once, so
	// its status re-reads nothing; GIT_OPTIONAL_LOCKS=0 keeps status from
	// writing the user's index (which would refresh it for venom too).
	fresh := filepath.Join(t.dir, ".git", "venom-bench-fresh.index")
	if _, err := process(t.dir, nil, nil, "cp", "-p", filepath.Join(t.dir, ".git", "index"), fresh)(); err != nil {
		return nil, err
	}
	env := []string{"GIT_INDEX_FILE=" + fresh}
	if _, err := process(t.dir, env, nil, "git", "update-index", "-q", "--refresh")(); err != nil {
		return nil, err
	}
	return &benchCase{
		name:  "dedup no-op after a rollback of 1000",
		venom: side{label: "git venom-checkpoint (reused)", run: checkpointCmd(t.dir, &agent), check: wantReused(&r0.Checkpoint)},
		bases: []baseline{{side: side{label: labelStatusRf,
			run:   process(t.dir, append(env, "GIT_OPTIONAL_LOCKS=0"), nil, "git", statusCmd...),
			check: wantEmpty}, target: 1.1}},
		teardown: func() error {
			os.Remove(fresh)
			return freshen(t.dir)
		},
	}, nil
}

// recipeSide is RFC 4.1's core recipe on the same state, as its own
// processes: the index copied with its mtime, `git add -A` in the copy,
// write-tree, commit-tree, update-ref. check gets the commit.
func recipeSide(t *tree, prepare func(int) error, check func(treeish string) error) side {
	idx := filepath.Join(t.dir, ".git", "venom-bench-recipe.index")
	env := []string{"GIT_INDEX_FILE=" + idx}
	return side{
		label: labelRecipe,
		prepare: func(r int) error {
			os.Remove(idx)
			if prepare != nil {
				return prepare(r)
			}
			return nil
		},
		run: func() (outcome, error) {
			cp, err := process(t.dir, nil, nil, "cp", "-p", filepath.Join(t.dir, ".git", "index"), idx)()
			if err != nil {
				return cp, err
			}
			add, err := process(t.dir, env, nil, "git", "add", "-A")()
			if err != nil {
				return add, err
			}
			wt, err := process(t.dir, env, nil, "git", "write-tree")()
			if err != nil {
				return wt, err
			}
			tree := strings.TrimSpace(string(wt.out))
			ct, err := process(t.dir, append(env, identity...), []byte("venom-bench recipe\n"), "git", "commit-tree", "-p", "HEAD", "-F", "-", tree)()
			if err != nil {
				return ct, err
			}
			commit := strings.TrimSpace(string(ct.out))
			recipeRuns++
			ur, err := process(t.dir, env, nil, "git", "update-ref", fmt.Sprintf("refs/venom-bench/recipe/%d", recipeRuns), commit, "")()
			if err != nil {
				return ur, err
			}
			return outcome{out: []byte(commit), cpu: cp.cpu + add.cpu + wt.cpu + ct.cpu + ur.cpu}, nil
		},
		check: func(out []byte) error {
			os.Remove(idx)
			return check(string(out) + "^{tree}")
		},
	}
}

// recipeRuns numbers the recipe's refs over the whole bench run.
var recipeRuns int

var identity = []string{"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@localhost", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@localhost"}

// stashSide is `git stash create` on a copy of the index (stash create
// refreshes the index it reads; on the user's own it would change what
// every later run finds).
func stashSide(t *tree, prepare func(int) error, check func(treeish string) error) side {
	idx := filepath.Join(t.dir, ".git", "venom-bench-stash.index")
	env := []string{"GIT_INDEX_FILE=" + idx}
	return side{
		label: labelStash,
		prepare: func(r int) error {
			os.Remove(idx)
			return prepare(r)
		},
		run: sequence(process(t.dir, nil, nil, "cp", "-p", filepath.Join(t.dir, ".git", "index"), idx),
			process(t.dir, append(env, identity...), nil, "git", "stash", "create")),
		check: func(out []byte) error {
			os.Remove(idx)
			oid := strings.TrimSpace(string(out))
			if oid == "" {
				return fmt.Errorf("stash create made no commit")
			}
			return check(oid + "^{tree}")
		},
	}
}

// modifiedRow: n tracked files changed, a capture (new checkpoint, a new
// agent every run) against status, the RFC core recipe and stash create on
// the same state. Before every timed run, of any side, the files get
// content no earlier run wrote. The tree has no untracked files, so every
// side stores the same content (stash create never stores untracked
// files). Targets (issue 16): 1.1x the recipe; 2x status for 1,000 files
// on a tree of 25,000 files or more.
func modifiedRow(n int) caseFunc {
	return func(t *tree, o *options) (*benchCase, error) {
		e, err := editSet(t, n)
		if err != nil {
			return nil, err
		}
		modify := func(run int) error { return e.modify("modified", run) }
		holds := holdsDisk(t.dir, e.paths)
		statusTarget := 0.0
		if n == 1000 && t.files >= 25000 {
			statusTarget = 2
		}
		agent := ""
		c := &benchCase{
			name: fmt.Sprintf("capture, %d modified", len(e.paths)),
			venom: side{
				label: "git venom-checkpoint (new checkpoint)",
				prepare: func(run int) error {
					agent = fmt.Sprintf("mod%d-%d", n, run)
					return modify(run)
				},
				run:   checkpointCmd(t.dir, &agent),
				check: wantNew(holds),
			},
			bases: []baseline{
				statusBase(t, modify, wantEntries(len(e.paths)), statusTarget),
				{side: recipeSide(t, modify, holds), target: 1.1},
				{side: stashSide(t, modify, holds)},
			},
			teardown: func() error {
				if err := e.restore(); err != nil {
					return err
				}
				if n >= 10000 {
					return t.dropLoose()
				}
				return nil
			},
		}
		if n >= 10000 {
			c.maxReps = 5
		}
		return c, nil
	}
}

// afterBigTurn (issue 16): a capture of one modified file after a turn
// that wrote o.big new files (a codegen), captured, and which the person
// then threw away (rm -rf), against the RFC core recipe and status on
// the same state. Every run, both sides, goes through the whole of it
// (the turn's capture on venom's side alone, untimed), so venom's caches
// are each time what that turn left: a kept stage index of o.big paths,
// of which this capture stages none (git-venom-checkpoint(1), FILES;
// before, it copied that index and had update-index drop every entry).
// Checked: the checkpoint holds the file.
func afterBigTurn(t *tree, o *options) (*benchCase, error) {
	one, err := editSet(t, 1)
	if err != nil {
		return nil, err
	}
	f := &newFiles{t: t, top: "venom-bench-bigturn", n: o.big}
	agent := ""
	// turn makes the state both sides start from; captured, with the
	// turn's capture, on venom's side.
	turn := func(run int, captured bool) error {
		if err := f.write(run); err != nil {
			return err
		}
		if captured {
			agent = fmt.Sprintf("after-big-%d", run)
			if _, err := checkpointCmd(t.dir, &agent)(); err != nil {
				return err
			}
		}
		if err := f.remove(); err != nil {
			return err
		}
		return one.modify("after-big-turn", run)
	}
	base := func(run int) error { return turn(run, false) }
	holds := holdsDisk(t.dir, one.paths)
	return &benchCase{
		name:    fmt.Sprintf("capture, 1 modified after a discarded turn of %d new files", f.n),
		maxReps: 3,
		venom: side{
			label:   "git venom-checkpoint (new checkpoint)",
			prepare: func(run int) error { return turn(run, true) },
			run:     checkpointCmd(t.dir, &agent),
			check:   wantNew(holds),
		},
		bases: []baseline{
			statusBase(t, base, wantEntries(1), 0),
			{side: recipeSide(t, base, holds), target: 1.1},
		},
		teardown: func() error {
			if err := one.restore(); err != nil {
				return err
			}
			return t.dropLoose()
		},
	}, nil
}

// newFiles is a directory of n new (untracked) files the bench writes and
// removes, about 500 bytes each, 50 to a directory.
type newFiles struct {
	t   *tree
	top string // relative to the tree
	n   int
}

func (f *newFiles) path(i int) string { return fmt.Sprintf("%s/n%03d/f%05d.txt", f.top, i/50, i) }

// write gives every file content no earlier run wrote.
func (f *newFiles) write(run int) error {
	filler := strings.Repeat("new file content for the venom bench, ", 12)
	for i := 0; i < f.n; i++ {
		p := filepath.Join(f.t.dir, f.path(i))
		if i%50 == 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("%s %d run %d\n%s\n", f.path(i), i, run, filler)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (f *newFiles) remove() error { return os.RemoveAll(filepath.Join(f.t.dir, f.top)) }

func (f *newFiles) gone() error {
	if _, err := os.Lstat(filepath.Join(f.t.dir, f.top)); err == nil {
		return fmt.Errorf("%s is still there", f.top)
	}
	return nil
}

// newFilesCapture: o.big new files (a codegen, a vendored tree), a capture
// against status and the RFC core recipe on the same state (no stash
// create: it never stores untracked files).
func newFilesCapture(t *tree, o *options) (*benchCase, error) {
	f := &newFiles{t: t, top: "venom-bench-new", n: o.big}
	paths := []string{f.path(0), f.path(f.n - 1)}
	holds := holdsDisk(t.dir, paths)
	agent := ""
	return &benchCase{
		name:    fmt.Sprintf("capture, %d new files", f.n),
		maxReps: 3,
		venom: side{
			label: "git venom-checkpoint (new checkpoint)",
			prepare: func(run int) error {
				agent = fmt.Sprintf("new-%d", run)
				return f.write(run)
			},
			run:   checkpointCmd(t.dir, &agent),
			check: wantNew(holds),
		},
		bases: []baseline{
			statusBase(t, f.write, wantEntries(f.n), 0),
			{side: recipeSide(t, f.write, holds), target: 1.1},
		},
		teardown: func() error {
			if err := f.remove(); err != nil {
				return err
			}
			return t.dropLoose()
		},
	}, nil
}

// pickFiles chooses n tracked regular files under 1 MiB, not ignore or
// attribute files, spread evenly over the index order (so over the whole
// tree, not one directory).
func pickFiles(dir string, n int) ([]string, error) {
	out, err := git(dir, "ls-files", "-s", "-z")
	if err != nil {
		return nil, err
	}
	var cand []string
	for _, rec := range bytes.Split(out, []byte{0}) {
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok {
			continue
		}
		f := strings.Fields(string(meta))
		if len(f) != 3 || f[2] != "0" || (f[0] != "100644" && f[0] != "100755") {
			continue
		}
		st, err := os.Lstat(filepath.Join(dir, string(path)))
		if err != nil || !st.Mode().IsRegular() || st.Size() > 1<<20 {
			continue
		}
		if base := filepath.Base(string(path)); base == ".gitignore" || base == ".gitattributes" {
			// Changing one changes what git makes of every other path: a
			// rollback that writes one re-reads the whole tree
			// (git-venom-rollback(1)). The rows measure the common case.
			continue
		}
		cand = append(cand, string(path))
	}
	if len(cand) < n {
		// A small repository: change all of them; the row's name says how many.
		n = len(cand)
	}
	if n == 0 {
		return nil, fmt.Errorf("the tree has no tracked regular file under 1 MiB to modify")
	}
	res := make([]string, 0, n)
	step := float64(len(cand)) / float64(n)
	for i := 0; i < n; i++ {
		res = append(res, cand[int(float64(i)*step)])
	}
	return res, nil
}

// hookTurnRow: a whole agent turn through the Claude Code hook, as a
// harness runs it: UserPromptSubmit (turn_start), the edits (untimed), a
// PostToolUse Write of one of the files, Stop (turn_end); every run is one
// more turn of one session, so the turn start finds the tree as the last
// turn end left it. Against the floor of the same turn (issue 16: 2.2x
// status plus the hashing of what the turn changed): a status at the
// start, a status at the end and `git hash-object -w` of the changed files
// (into an empty object directory, so it writes every blob, as the
// capture does). Both sides walk the very same states: each round is one
// turn, the sides alternating which goes first at each point. With
// unstaged > 0, that many other files were changed by a person before
// the turns and never staged: a turn's cost follows what it changed, not
// what differs from the index (issue 16).
func hookTurnRow(n, unstaged int) caseFunc {
	return func(t *tree, o *options) (*benchCase, error) {
		all, err := editSet(t, n+unstaged)
		if err != nil {
			return nil, err
		}
		e := &edited{t: t, paths: all.paths[:n], orig: all.orig[:n]}
		person := &edited{t: t, paths: all.paths[n:], orig: all.orig[n:]}
		name := fmt.Sprintf("hook turn, %d modified", len(e.paths))
		if unstaged > 0 {
			if len(person.paths) == 0 {
				return nil, nil // a tree too small for both
			}
			if err := person.modify("unstaged", 0); err != nil {
				return nil, err
			}
			time.Sleep(2100 * time.Millisecond) // settled, as in dedupUnstaged
			name += fmt.Sprintf(" beside %d unstaged", len(person.paths))
		}
		session := fmt.Sprintf("b%07d-7f2a-4c39-9a57-1b2c3d4e5f60", n)
		if unstaged > 0 {
			session = "c" + session[1:] // another agent
		}
		transcript := filepath.Join(o.cache, fmt.Sprintf("transcript-%d.jsonl", n))
		msg := "done with the turn"
		if err := os.WriteFile(transcript, []byte(`{"type":"assistant","uuid":"a1","message":{"role":"assistant","content":[{"type":"text","text":"`+msg+`"}]}}`+"\n"), 0o644); err != nil {
			return nil, err
		}
		event := func(name string, extra map[string]any) []byte {
			ev := map[string]any{"session_id": session, "transcript_path": transcript, "cwd": t.dir,
				"permission_mode": "default", "hook_event_name": name}
			for k, v := range extra {
				ev[k] = v
			}
			b, _ := json.Marshal(ev)
			return b
		}
		ups := event("UserPromptSubmit", map[string]any{"prompt": "change the files"})
		post := event("PostToolUse", map[string]any{"tool_name": "Write",
			"tool_input":    map[string]any{"file_path": filepath.Join(t.dir, e.paths[0]), "content": "x"},
			"tool_response": map[string]any{"filePath": filepath.Join(t.dir, e.paths[0]), "success": true}})
		stop := event("Stop", map[string]any{"stop_hook_active": false, "last_assistant_message": msg})
		runHook := func(in []byte) func() (outcome, error) {
			run := hookCmd(t.dir, o.bin, in)
			return func() (outcome, error) {
				o, err := run()
				if err == nil && len(o.out) > 0 {
					err = fmt.Errorf("the hook printed %q", o.out)
				}
				return o, err
			}
		}
		objects := filepath.Join(o.cache, "hook-turn-objects")
		hashEnv := []string{"GIT_OBJECT_DIRECTORY=" + objects}
		spec := []byte(strings.Join(e.paths, "\n") + "\n")
		timed := func(f func() (outcome, error)) (outcome, error) {
			t0 := time.Now()
			o, err := f()
			o.wall = time.Since(t0)
			return o, err
		}
		add := func(a *outcome, b outcome) { a.cpu += b.cpu; a.wall += b.wall }
		rounds := func(run int, venomFirst bool) ([]outcome, error) {
			var v, b outcome
			if err := os.RemoveAll(objects); err != nil {
				return nil, err
			}
			if err := os.MkdirAll(objects, 0o755); err != nil {
				return nil, err
			}
			venomStart := func() error { o, err := timed(runHook(ups)); add(&v, o); return err }
			baseStart := func() error { o, err := timed(command(t.dir, statusCmd...)); add(&b, o); return err }
			venomEnd := func() error {
				o, err := timed(sequence(runHook(post), runHook(stop)))
				add(&v, o)
				return err
			}
			baseEnd := func() error {
				o, err := timed(sequence(command(t.dir, statusCmd...),
					process(t.dir, hashEnv, spec, "git", "hash-object", "-w", "--stdin-paths")))
				add(&b, o)
				return err
			}
			order := func(first, second func() error) error {
				if !venomFirst {
					first, second = second, first
				}
				if err := first(); err != nil {
					return err
				}
				return second()
			}
			if err := order(venomStart, baseStart); err != nil {
				return nil, err
			}
			if err := e.modify("turn", run); err != nil {
				return nil, err
			}
			if err := order(venomEnd, baseEnd); err != nil {
				return nil, err
			}
			// Checked: the turn's end checkpoint holds the edits.
			out, err := git(t.dir, "venom-checkpoint", "list", "--agent", "claude-"+strings.ReplaceAll(session, "-", "")[:12], "--json")
			if err != nil {
				return nil, err
			}
			var l struct {
				Checkpoints []struct {
					Reason string `json:"reason"`
					Repos  []struct {
						Tree string `json:"tree"`
					} `json:"repos"`
				} `json:"checkpoints"`
			}
			if err := json.Unmarshal(out, &l); err != nil || len(l.Checkpoints) == 0 || len(l.Checkpoints[0].Repos) != 1 {
				return nil, fmt.Errorf("reading the turn's checkpoints: %v: %.300s", err, out)
			}
			if l.Checkpoints[0].Reason != "turn_end" {
				return nil, fmt.Errorf("the newest checkpoint is a %s, not the turn's end", l.Checkpoints[0].Reason)
			}
			if err := holdsDisk(t.dir, e.paths)(l.Checkpoints[0].Repos[0].Tree); err != nil {
				return nil, err
			}
			if len(person.paths) > 0 {
				if err := holdsDisk(t.dir, person.paths)(l.Checkpoints[0].Repos[0].Tree); err != nil {
					return nil, err
				}
			}
			return []outcome{v, b}, nil
		}
		return &benchCase{
			name:   name,
			venom:  side{label: "git-venom-hook: UserPromptSubmit, PostToolUse, Stop"},
			bases:  []baseline{{side: side{label: labelTwoHash}, target: 1.1}},
			rounds: rounds,
			teardown: func() error {
				os.RemoveAll(objects)
				if unstaged > 0 {
					if err := person.restore(); err != nil {
						return err
					}
				}
				return e.restore()
			},
		}, nil
	}
}
