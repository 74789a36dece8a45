package rollback_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/gittest"
)

// cliOut is the part of plan's and rollback's --json output these tests
// read: a result or an error.
type cliOut struct {
	Plan   string `json:"plan"`
	Safety string `json:"safety"`
	After  string `json:"after"`
	Exact  *bool  `json:"exact"`
	Repos  []struct {
		Head struct {
			Moves bool `json:"moves"`
		} `json:"head"`
		Left []struct {
			Path   string `json:"path"`
			Reason string `json:"reason"`
		} `json:"left"`
	} `json:"repos"`
	Error *struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
}

func parseOut(t *testing.T, p procResult) cliOut {
	t.Helper()
	var o cliOut
	if err := json.Unmarshal([]byte(p.stdout), &o); err != nil {
		t.Fatalf("output is not JSON (exit %d): %v\nstdout %q\nstderr %q", p.exit, err, p.stdout, p.stderr)
	}
	return o
}

// planOf makes the plan of args in r's tree; a plan that fails fails the
// test.
func planOf(t *testing.T, r *gittest.Repo, args []string) cliOut {
	t.Helper()
	p := runBin(t, r.Dir, "git-venom-plan", nil, args...)
	plan := parseOut(t, p)
	if p.exit != 0 || plan.Plan == "" {
		t.Fatalf("plan: exit %d\n%s%s", p.exit, p.stdout, p.stderr)
	}
	return plan
}

// realCall runs the rollback of args with the plan id plan, env added to
// its environment (a failpoint, say).
func realCall(t *testing.T, r *gittest.Repo, args []string, plan string, env ...string) procResult {
	t.Helper()
	return runBin(t, r.Dir, "git-venom-rollback", env, append(append([]string(nil), args...), "--plan", plan)...)
}

// treeState is what a rollback that must leave the tree as it was is
// held to: the files, HEAD (its commit and symbolic ref) and the index's
// bytes.
type treeState struct {
	files            map[string]entry
	head, sym, index string
}

func stateOf(t testing.TB, r *gittest.Repo) treeState {
	t.Helper()
	s := treeState{files: files(disk(t, r.Dir)), index: indexBytes(t, r)}
	s.head, s.sym = head(r)
	return s
}

// changes says how the tree differs from s now: its files, HEAD and,
// when index is set, the index; "" when it does not.
func (s treeState) changes(t testing.TB, r *gittest.Repo, index bool) string {
	t.Helper()
	var out []string
	if d := diffEntries(s.files, files(disk(t, r.Dir))); d != "" {
		out = append(out, "files:\n"+d)
	}
	if h, sym := head(r); h != s.head || sym != s.sym {
		out = append(out, fmt.Sprintf("HEAD is %s %s, was %s %s", sym, h, s.sym, s.head))
	}
	if index && indexBytes(t, r) != s.index {
		out = append(out, "the index changed")
	}
	return strings.Join(out, "\n")
}

// crashScenario builds a tree whose rollback to k1 deletes, creates,
// modifies, changes a mode and a symlink, keeps ignored files around the
// paths it writes, and (unguarded) moves HEAD back over an agent's commit.
// A file created after the last checkpoint and an edit after it (a gap)
// complete S. It returns the fixture and the choices of the rollback.
func crashScenario(t *testing.T, guarded bool) (*fixture, []string, []*gittest.Repo) {
	t.Helper()
	f := newFixture(t, guarded)
	r := f.r
	r.Write(".gitignore", ".env\n*.log\n")
	r.Write("a.txt", "one\n")
	r.Write("dir/b.txt", "b\n")
	r.Write("keep.txt", "keep\n")
	write(t, r.Dir, "run.sh", []byte("#!/bin/sh\n"), 0o755)
	symlink(t, r.Dir, "link", "a.txt")
	r.Commit("init")
	write(t, r.Dir, ".env", []byte("SECRET=1\n"), 0o600)
	r.Write("dir/x.log", "log\n")
	f.take(checkpoint.ReasonTurnStart) // k1
	r.Write("a.txt", "two\n")
	os.Remove(r.Path("dir/b.txt"))
	r.Write("new/c.txt", "c\n")
	os.Chmod(r.Path("run.sh"), 0o644)
	symlink(t, r.Dir, "link", "keep.txt")
	r.Commit("agent")
	r.Write("new/d.log", "ignored, in a directory the rollback removes\n")
	f.take(checkpoint.ReasonTurnEnd) // k2
	r.Write("late.txt", "created after the last checkpoint\n")
	r.Write("keep.txt", "edited in a gap\n")
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
	if guarded {
		args = append(args, "--outside", "overwrite")
	}
	return f, args, nil
}

// TestFailpoints kills the real call at every failpoint of the source (a
// grep of failpoint.Hit, so a new step is never missed), with SIGKILL as a
// crash would, and checks RFC 7.6 and invariant 2:
//
//   - killed before rollback.started is logged: nothing was written (files,
//     HEAD, the index), the next command reports nothing, and a new plan
//     and rollback work. A safety ref without its log record may be left:
//     refs no record names are allowed and ignored (DESIGN.md section 3).
//   - killed after: the next command (plan) warns on stderr naming the
//     safety checkpoint and logs rollback.ended {ok: false, code:
//     failed.rollback_interrupted}, once; it writes nothing (nothing is
//     resumed); and a rollback to the safety checkpoint with --restore
//     files brings back every file, ignored ones included, and HEAD.
func TestFailpoints(t *testing.T) {
	t.Parallel()
	names := failpoints(t)
	if len(names) < 6 {
		t.Fatalf("found only failpoints %v", names)
	}
	var rollbackSteps int
	for _, n := range names {
		if strings.HasPrefix(n, "rollback.") {
			rollbackSteps++
		}
	}
	if rollbackSteps < 5 {
		t.Fatalf("found only failpoints %v: the real call's steps are missing", names)
	}
	for _, guarded := range []bool{false, true} {
		for _, name := range names {
			if guarded && !strings.HasPrefix(name, "rollback.") {
				continue // killed before anything is written: guarding changes nothing
			}
			if strings.HasPrefix(name, "rollback.sub-") {
				continue // a step of a submodule's rollback (TestFailpointsWithSubmodules)
			}
			if strings.HasPrefix(name, "rescue.") {
				// Reached only when a person saved during the rollback,
				// which this scenario does not do (TestRescueWhoseTrees...).
				continue
			}
			t.Run(fmt.Sprintf("%s/guarded=%v", name, guarded), func(t *testing.T) {
				t.Parallel()
				crashAt(t, name, guarded, crashScenario)
			})
		}
	}
}

// TestFailpointsWithSubmodules is TestFailpoints for a rollback of three
// repositories (the top, lib and lib/in, nested two deep), whose agent
// edited, created, deleted and committed in each, at every failpoint of
// the rollback, the submodules' own steps included: a kill anywhere
// recovers as the single-repository one does, and the rollback to the
// safety checkpoint gives every repository back its files and HEAD
// (issue 18).
func TestFailpointsWithSubmodules(t *testing.T) {
	t.Parallel()
	var names []string
	for _, n := range failpoints(t) {
		if strings.HasPrefix(n, "rollback.") {
			names = append(names, n)
		}
	}
	for _, guarded := range []bool{false, true} {
		for _, name := range names {
			t.Run(fmt.Sprintf("%s/guarded=%v", name, guarded), func(t *testing.T) {
				t.Parallel()
				crashAt(t, name, guarded, subCrashScenario)
			})
		}
	}
}

// subCrashScenario is crashScenario's kind of rollback across three
// repositories: in lib a modification, a deletion, a creation, a mode
// change and (unguarded) a commit the rollback drops, with ignored
// files around them; in lib/in a modification and a creation; in the top
// a modification and a commit. A gap edits a file of lib and creates
// one in the top.
func subCrashScenario(t *testing.T, guarded bool) (*fixture, []string, []*gittest.Repo) {
	t.Helper()
	f, lib, in := subFixture(t, guarded)
	lib.Write(".gitignore", "*.log\n")
	lib.Write("b.txt", "b\n")
	lib.Write("dir/c.txt", "c\n")
	lib.Write("keep.txt", "keep\n")
	write(t, lib.Dir, "run.sh", []byte("#!/bin/sh\n"), 0o755)
	lib.Commit("lib files")
	f.r.Write(".gitignore", ".env\n*.log\n")
	f.r.Commit("lib moved")
	write(t, f.r.Dir, ".env", []byte("SECRET=1\n"), 0o600)
	lib.Write("dir/x.log", "ignored\n")
	f.take(checkpoint.ReasonTurnStart) // k1
	f.r.Write("a", "a2\n")
	lib.Write("b.txt", "b2\n")
	os.Remove(lib.Path("dir/c.txt"))
	lib.Write("new/d.txt", "d\n")
	os.Chmod(lib.Path("run.sh"), 0o644)
	in.Write("i", "i2\n")
	in.Write("made", "m\n")
	lib.Commit("agent in lib")
	f.r.Commit("agent")
	lib.Write("new/e.log", "ignored, in a directory the rollback removes\n")
	f.take(checkpoint.ReasonTurnEnd) // k2
	f.r.Write("late.txt", "created after the last checkpoint\n")
	lib.Write("keep.txt", "edited in a gap\n")
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
	if guarded {
		args = append(args, "--outside", "overwrite")
	}
	return f, args, []*gittest.Repo{lib, in}
}

func crashAt(t *testing.T, name string, guarded bool, scenario func(*testing.T, bool) (*fixture, []string, []*gittest.Repo)) {
	f, args, subs := scenario(t, guarded)
	r := f.r
	before := files(disk(t, r.Dir))
	headBefore, symBefore := head(r)
	subHeads := map[*gittest.Repo]string{}
	for _, s := range subs {
		subHeads[s], _ = head(s)
	}
	indexBefore := indexBytes(t, r)

	plan := planOf(t, r, args)
	moves := plan.Repos[0].Head.Moves
	if moves == guarded {
		t.Fatalf("scenario: head.moves is %v in a tree with guarded %v", moves, guarded)
	}
	logBefore := logBytes(t, r)
	refsBefore := r.Refs()
	real := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_FAILPOINT="+name)
	if !real.killed {
		if (name == "rollback.head-moved" || name == "rollback.sub-head-moved") && guarded {
			// A guarded tree never moves HEAD: the step does not exist.
			if real.exit != 0 {
				t.Fatalf("rollback: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
			}
			return
		}
		t.Fatalf("failpoint %s was not reached: exit %d\n%s%s", name, real.exit, real.stdout, real.stderr)
	}

	// The log the killed process left replays, with no torn line (records
	// are written whole: a kill before the write leaves nothing).
	if got := logBytes(t, r); !strings.HasPrefix(got, logBefore) || (got != "" && !strings.HasSuffix(got, "\n")) {
		t.Errorf("the log was not appended to whole:\n%q", strings.TrimPrefix(got, logBefore))
	}
	started := records(t, r, "rollback.started")
	mid := disk(t, r.Dir)
	headMid, symMid := head(r)

	if len(started) == 0 {
		// Killed before rollback.started: invariant 2, nothing written.
		if d := diffEntries(before, files(mid)); d != "" {
			t.Errorf("killed at %s, before rollback.started, files changed:\n%s", name, d)
		}
		if headMid != headBefore || symMid != symBefore || indexBytes(t, r) != indexBefore {
			t.Errorf("killed at %s, before rollback.started, HEAD or the index changed", name)
		}
		orphans := map[string]string{}
		for ref, oid := range r.Refs() {
			if refsBefore[ref] != oid {
				if !strings.HasPrefix(ref, "refs/venom/checkpoints/") {
					t.Errorf("killed at %s: ref %s changed", name, ref)
				}
				orphans[ref] = oid
			}
		}
		if len(orphans) > 0 {
			t.Logf("killed at %s: refs without a log record (allowed, ignored): %v", name, orphans)
		}
		next := runBin(t, r.Dir, "git-venom-plan", nil, args...)
		if next.exit != 0 || strings.Contains(next.stderr, "interrupted") {
			t.Errorf("plan after a kill before rollback.started: exit %d\n%s%s", next.exit, next.stdout, next.stderr)
		}
		if ended := records(t, r, "rollback.ended"); len(ended) != 0 {
			t.Errorf("rollback.ended records after a kill before rollback.started: %v", ended)
		}
		// The rollback can be done again, and the orphan ref is never
		// reused for the new safety checkpoint.
		again := runBin(t, r.Dir, "git-venom-rollback", nil, append(append([]string(nil), args...), "--plan", parseOut(t, next).Plan)...)
		res := parseOut(t, again)
		if again.exit != 0 {
			t.Fatalf("rollback after a kill before rollback.started: exit %d\n%s%s", again.exit, again.stdout, again.stderr)
		}
		for ref, oid := range orphans {
			if r.Refs()[ref] != oid {
				t.Errorf("the orphan ref %s was overwritten by the new safety checkpoint %s", ref, res.Safety)
			}
		}
		return
	}

	// Killed after rollback.started: the next command closes it. Killed
	// after rollback.ended (ok), the rollback is done; it had not removed
	// its backups, and the next command does, as they hold nothing the
	// safety checkpoint does not (F6 of break-dirmove: they stayed for
	// good).
	safety, _ := started[0]["safety"].(string)
	if safety == "" {
		t.Fatalf("rollback.started has no safety: %v", started[0])
	}
	endedOK := false
	if ended := records(t, r, "rollback.ended"); len(ended) == 1 && ended[0]["ok"] == true {
		endedOK = true
		if len(backupDirs(r, subs)) == 0 {
			t.Errorf("killed at %s: no backup directory was left to test the next command with", name)
		}
	}
	undoArgs := []string{"--agent", f.agent, safety, "--restore", "files", "--json"}
	if guarded {
		// Everything the killed call wrote is a gap to the rollback; a
		// person says what to do with it (RFC 7.3).
		undoArgs = append(undoArgs, "--outside", "overwrite")
	}
	next := runBin(t, r.Dir, "git-venom-plan", nil, undoArgs...)
	ended := records(t, r, "rollback.ended")
	switch {
	case endedOK:
		if strings.Contains(next.stderr, "interrupted") || len(ended) != 1 || ended[0]["ok"] != true {
			t.Errorf("plan after a kill at %s, once the rollback ended: %v\n%s", name, ended, next.stderr)
		}
		if left := backupDirs(r, subs); len(left) != 0 {
			t.Errorf("backup directories left after the next command: %v", left)
		}
	case !strings.Contains(next.stderr, "failed.rollback_interrupted") || !strings.Contains(next.stderr, safety):
		t.Errorf("plan after a kill at %s does not report the interrupted rollback naming %s:\n%s", name, safety, next.stderr)
	case len(ended) != 1 || ended[0]["code"] != "failed.rollback_interrupted" || ended[0]["ok"] != false || ended[0]["safety"] != safety:
		t.Errorf("rollback.ended records after the next command: %v", ended)
	}
	// Nothing was resumed: the files, HEAD and the index are as the kill
	// left them.
	if d := diffEntries(mid, disk(t, r.Dir)); d != "" {
		t.Errorf("the command after the kill at %s wrote files:\n%s", name, d)
	}
	if h, s := head(r); h != headMid || s != symMid {
		t.Errorf("the command after the kill moved HEAD")
	}
	again := runBin(t, r.Dir, "git-venom-plan", nil, undoArgs...)
	if strings.Contains(again.stderr, "interrupted") || len(records(t, r, "rollback.ended")) != 1 {
		t.Errorf("the interruption was reported twice:\n%s", again.stderr)
	}

	// The safety checkpoint brings everything back.
	undoPlan := parseOut(t, next)
	if undoPlan.Error != nil && undoPlan.Error.Code == "conflict.head_moved" && headMid != headBefore {
		t.Errorf("killed at %s after HEAD moved: the plan to the safety checkpoint %s is refused with conflict.head_moved "+
			"(%s), so HEAD cannot be restored", name, safety, undoPlan.Error.Message)
		undoArgs = append(undoArgs, "--keep-head")
		undoPlan = parseOut(t, runBin(t, r.Dir, "git-venom-plan", nil, undoArgs...))
	}
	if undoPlan.Plan == "" {
		t.Fatalf("plan to the safety checkpoint %s: %s", safety, next.stdout)
	}
	undo := runBin(t, r.Dir, "git-venom-rollback", nil, append(undoArgs, "--plan", undoPlan.Plan)...)
	if undo.exit != 0 {
		t.Fatalf("rollback to the safety checkpoint %s: exit %d\n%s%s", safety, undo.exit, undo.stdout, undo.stderr)
	}
	if d := diffEntries(before, files(disk(t, r.Dir))); d != "" {
		t.Errorf("after a kill at %s, the rollback to the safety checkpoint %s (%s) did not bring back the files:\n%sleft: %v",
			name, safety, strings.Join(undoArgs, " "), d, parseOut(t, undo).Repos[0].Left)
	}
	if h, s := head(r); (h != headBefore || s != symBefore) && !strings.Contains(strings.Join(undoArgs, " "), "--keep-head") {
		t.Errorf("after the undo HEAD is %s %s, was %s %s", s, h, symBefore, headBefore)
	}
	if guarded && indexBytes(t, r) != indexBefore {
		t.Errorf("the index of a guarded tree changed")
	}
	for _, s := range subs {
		if h, _ := head(s); h != subHeads[s] && !strings.Contains(strings.Join(undoArgs, " "), "--keep-head") {
			t.Errorf("after the undo, %s's HEAD is %s, was %s", s.Dir, h, subHeads[s])
		}
	}
	if _, err := os.Stat(filepath.Join(r.Dir, ".env")); err != nil {
		t.Errorf(".env: %v", err)
	}
}

// TestCaptureFailpoints kills `git venom-checkpoint` at each failpoint of
// the capture and of the log append. Invariant 1 holds even then: nothing
// the user sees changed, and no ref but a checkpoint ref was added. The log
// is whole (a record is written in one write after the failpoint, so no
// torn line is left) and replays. A ref made before its record
// (capture.ref-created, journal.before-append) stays as an orphan: allowed
// and ignored, since the log is the truth (DESIGN.md section 3). It is not
// listed, and the next capture takes a new id rather than overwrite it.
func TestCaptureFailpoints(t *testing.T) {
	t.Parallel()
	var names []string
	for _, n := range failpoints(t) {
		if strings.HasPrefix(n, "capture.") || strings.HasPrefix(n, "journal.") {
			names = append(names, n)
		}
	}
	if len(names) < 4 {
		t.Fatalf("capture and journal failpoints: %v", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			r := f.r
			r.Write(".gitignore", "*.log\n")
			r.Write("a.txt", "one\n")
			r.Commit("init")
			f.take(checkpoint.ReasonManual) // k1
			r.Write("a.txt", "two\n")
			r.Write("new.txt", "new\n")
			r.Write("x.log", "ignored\n")
			logBefore := logBytes(t, r)
			before := r.Snapshot()
			p := runBin(t, r.Dir, "git-venom-checkpoint", []string{"GIT_VENOM_TEST_FAILPOINT=" + name}, "--agent", f.agent, "--json")
			if !p.killed {
				t.Fatalf("failpoint %s was not reached: exit %d\n%s%s", name, p.exit, p.stdout, p.stderr)
			}
			added := r.AssertUnchanged(before)
			if got := logBytes(t, r); got != logBefore {
				t.Errorf("killed at %s, the log changed:\n%q", name, strings.TrimPrefix(got, logBefore))
			}
			records(t, r, "checkpoint.taken") // replays
			orphan := f.ref("k2")
			switch name {
			case "capture.ref-created", "journal.before-append":
				if len(added) != 1 || added[0] != orphan {
					t.Errorf("killed at %s: refs added %v, want the orphan %s", name, added, orphan)
				}
			default:
				if len(added) != 0 {
					t.Errorf("killed at %s: refs added %v", name, added)
				}
			}
			orphanOID := r.Refs()[orphan]

			list := runBin(t, r.Dir, "git-venom-checkpoint", nil, "list", "--agent", f.agent, "--json")
			var l struct {
				Checkpoints []struct {
					Checkpoint string `json:"checkpoint"`
				} `json:"checkpoints"`
			}
			if err := json.Unmarshal([]byte(list.stdout), &l); err != nil || list.exit != 0 {
				t.Fatalf("list: exit %d %v\n%s%s", list.exit, err, list.stdout, list.stderr)
			}
			if len(l.Checkpoints) != 1 || l.Checkpoints[0].Checkpoint != "k1" {
				t.Errorf("list after the kill: %s", list.stdout)
			}
			next := runBin(t, r.Dir, "git-venom-checkpoint", nil, "--agent", f.agent, "--json")
			var out struct {
				Checkpoint string `json:"checkpoint"`
				Reused     bool   `json:"reused"`
			}
			if err := json.Unmarshal([]byte(next.stdout), &out); err != nil || next.exit != 0 || out.Reused {
				t.Fatalf("capture after the kill: exit %d %v\n%s%s", next.exit, err, next.stdout, next.stderr)
			}
			want := "k2"
			if orphanOID != "" {
				want = "k3"
				if r.Refs()[orphan] != orphanOID {
					t.Errorf("the orphan ref %s was overwritten", orphan)
				}
			}
			if out.Checkpoint != want {
				t.Errorf("capture after the kill took %s, want %s", out.Checkpoint, want)
			}
			if got, _ := r.Show(f.ref(out.Checkpoint), "a.txt"); got != "two\n" {
				t.Errorf("the new checkpoint has a.txt %q", got)
			}
		})
	}
}

// backupDirs lists the rollback backup directories in the scratch
// directories of r and of subs.
func backupDirs(r *gittest.Repo, subs []*gittest.Repo) []string {
	var out []string
	for _, q := range append([]*gittest.Repo{r}, subs...) {
		m, _ := filepath.Glob(filepath.Join(q.GitDir, "venom", "tmp", "backup-*"))
		out = append(out, m...)
	}
	return out
}
