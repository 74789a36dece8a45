package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/cli"
	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/journal"
)

// These tests run cli.Main in the test process from the repository's
// directory (t.Chdir), so they are not parallel. Each error code of issue 3
// is checked for its exit status (the class of RFC 11.3) and the JSON
// shape of DESIGN.md section 7: one object {"error":{"code","message",
// "data"}} on stdout.

// ran is one cli.Main call.
type ran struct {
	exit           int
	stdout, stderr string
}

func venom(t *testing.T, dir, verb string, args ...string) ran {
	t.Helper()
	gittest.Setup()
	t.Chdir(dir)
	var out, errw bytes.Buffer
	code := cli.Main(verb, args, strings.NewReader(""), &out, &errw)
	return ran{exit: code, stdout: out.String(), stderr: errw.String()}
}

// classExit is RFC 11.3's table, written out here rather than taken from
// the package under test.
var classExit = map[string]int{"failed": 1, "invalid_params": 2, "not_found": 3, "denied": 4, "conflict": 5, "timeout": 7, "unsupported": 10}

// wantError checks that res is the error code with its class's exit status
// and exactly the JSON shape {"error":{"code","message","data"}} on one
// line of stdout, and returns data.
func wantError(t *testing.T, res ran, code string) map[string]any {
	t.Helper()
	class, _, _ := strings.Cut(code, ".")
	if res.exit != classExit[class] {
		t.Errorf("%s: exit %d, want %d\nstdout %s\nstderr %s", code, res.exit, classExit[class], res.stdout, res.stderr)
	}
	if strings.Count(res.stdout, "\n") != 1 || !strings.HasSuffix(res.stdout, "\n") {
		t.Errorf("%s: stdout is not one line: %q", code, res.stdout)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(res.stdout), &top); err != nil || len(top) != 1 || top["error"] == nil {
		t.Fatalf("%s: stdout is not {\"error\":…}: %v %q", code, err, res.stdout)
	}
	var e map[string]json.RawMessage
	if err := json.Unmarshal(top["error"], &e); err != nil || len(e) != 3 {
		t.Fatalf("%s: error object is not {code, message, data}: %s", code, top["error"])
	}
	var got, msg string
	var data map[string]any
	if json.Unmarshal(e["code"], &got) != nil || json.Unmarshal(e["message"], &msg) != nil || json.Unmarshal(e["data"], &data) != nil || data == nil {
		t.Fatalf("%s: error members have the wrong types: %s", code, top["error"])
	}
	if got != code {
		t.Errorf("code %q, want %q (message %q, data %v)", got, code, msg, data)
	}
	if msg == "" || strings.HasSuffix(msg, ".") {
		t.Errorf("%s: message %q: want git style, no period", code, msg)
	}
	return data
}

// repo is a repository with agent a1 registered in it: guarded (the main
// worktree, in_place) or not (--isolation worktree).
type repo struct {
	*gittest.Repo
	t       *testing.T
	guarded bool
}

func newRepo(t *testing.T, guarded bool) *repo {
	return &repo{Repo: gittest.New(t), t: t, guarded: guarded}
}

func (r *repo) tree() *checkpoint.Tree {
	r.t.Helper()
	tr, err := checkpoint.OpenTree(context.Background(), r.Dir)
	if err != nil {
		r.t.Fatal(err)
	}
	return tr
}

// take captures for agent a1 and returns the checkpoint id.
func (r *repo) take(reason string) string {
	r.t.Helper()
	o := checkpoint.TakeOptions{Agent: "a1", Reason: reason}
	if !r.guarded {
		o.Isolation = checkpoint.IsolationWorktree
	}
	res, err := r.tree().Take(context.Background(), o)
	if err != nil {
		r.t.Fatalf("take %s: %v", reason, err)
	}
	return res.Checkpoint.Checkpoint
}

// turn makes k1 (turn_start), runs edit, and makes k2 (turn_end).
func (r *repo) turn(edit func()) {
	r.t.Helper()
	r.take(checkpoint.ReasonTurnStart)
	edit()
	r.take(checkpoint.ReasonTurnEnd)
}

// basic is a repository with one commit and a turn that edits a.txt.
func basic(t *testing.T, guarded bool) *repo {
	r := newRepo(t, guarded)
	r.Write("a.txt", "one\n")
	r.Commit("init")
	r.turn(func() { r.Write("a.txt", "two\n") })
	return r
}

// planID runs the dry run and returns its plan id.
func planID(t *testing.T, dir string, args ...string) string {
	t.Helper()
	res := venom(t, dir, "plan", append(args, "--json")...)
	var out struct {
		Plan string `json:"plan"`
	}
	if res.exit != 0 || json.Unmarshal([]byte(res.stdout), &out) != nil || out.Plan == "" {
		t.Fatalf("plan %v: exit %d\n%s%s", args, res.exit, res.stdout, res.stderr)
	}
	return out.Plan
}

func TestRollbackNotFoundAgent(t *testing.T) {
	r := basic(t, false)
	for _, verb := range []string{"plan", "rollback"} {
		args := []string{"--agent", "ghost", "k1", "--json"}
		if verb == "rollback" {
			args = append(args, "--plan", "p1-0000000000000000")
		}
		data := wantError(t, venom(t, r.Dir, verb, args...), "not_found.agent")
		if data["agent"] != "ghost" {
			t.Errorf("%s: data %v", verb, data)
		}
	}
}

func TestRollbackNotFoundCheckpoint(t *testing.T) {
	t.Run("never existed", func(t *testing.T) {
		r := basic(t, false)
		data := wantError(t, venom(t, r.Dir, "plan", "--agent", "a1", "k9", "--json"), "not_found.checkpoint")
		if data["checkpoint"] != "k9" {
			t.Errorf("data %v", data)
		}
		data = wantError(t, venom(t, r.Dir, "rollback", "--agent", "a1", "k9", "--plan", "p1-0000000000000000", "--json"), "not_found.checkpoint")
		if data["checkpoint"] != "k9" {
			t.Errorf("data %v", data)
		}
	})
	t.Run("ref deleted", func(t *testing.T) {
		r := basic(t, false)
		r.Git("update-ref", "-d", "refs/venom/checkpoints/a1/1")
		data := wantError(t, venom(t, r.Dir, "plan", "--agent", "a1", "k1", "--json"), "not_found.checkpoint")
		if data["checkpoint"] != "k1" || data["repo"] != "." {
			t.Errorf("data %v", data)
		}
	})
	t.Run("ref moved", func(t *testing.T) {
		r := basic(t, false)
		r.Git("update-ref", "refs/venom/checkpoints/a1/1", "refs/venom/checkpoints/a1/2")
		data := wantError(t, venom(t, r.Dir, "plan", "--agent", "a1", "k1", "--json"), "not_found.checkpoint")
		if data["checkpoint"] != "k1" || data["repo"] != "." {
			t.Errorf("data %v", data)
		}
	})
	t.Run("taken in another worktree", func(t *testing.T) {
		r := basic(t, false)
		wt := filepath.Join(filepath.Dir(r.Dir), filepath.Base(r.Dir)+"-wt")
		r.Git("worktree", "add", "-q", wt)
		t.Cleanup(func() { os.RemoveAll(wt) })
		wtDir, _ := filepath.EvalSymlinks(wt)
		other := &repo{Repo: gittest.At(t, wtDir), t: t}
		k := other.take(checkpoint.ReasonManual)
		data := wantError(t, venom(t, r.Dir, "plan", "--agent", "a1", k, "--json"), "not_found.checkpoint")
		if data["checkpoint"] != k || data["tree"] != wtDir {
			t.Errorf("data %v, want tree %s", data, wtDir)
		}
		// From its own worktree the checkpoint is found.
		if res := venom(t, wtDir, "plan", "--agent", "a1", k, "--restore", "files", "--json"); res.exit != 0 {
			t.Errorf("plan from the checkpoint's worktree: exit %d\n%s", res.exit, res.stdout)
		}
	})
}

func TestRollbackInvalidPlan(t *testing.T) {
	r := basic(t, false)
	p := planID(t, r.Dir, "--agent", "a1", "k1", "--restore", "files")
	for _, tc := range []struct {
		verb string
		args []string
	}{
		{"rollback", []string{"--agent", "a1", "k1", "--restore", "files", "--json"}},
		{"plan", []string{"--agent", "a1", "k1", "--restore", "files", "--plan", p, "--json"}},
		{"rollback", []string{"--agent", "a1", "k1", "--restore", "files", "--dry-run", "--plan", p, "--json"}},
	} {
		wantError(t, venom(t, r.Dir, tc.verb, tc.args...), "invalid_params.plan")
	}
	if got := r.Read("a.txt"); got != "two\n" {
		t.Errorf("a.txt = %q", got)
	}
	// One of the two is fine: the dry run through rollback, then the plan.
	if res := venom(t, r.Dir, "rollback", "--agent", "a1", "k1", "--restore", "files", "--dry-run", "--json"); res.exit != 0 || !strings.Contains(res.stdout, `"plan":"`+p+`"`) {
		t.Errorf("rollback --dry-run: exit %d %s", res.exit, res.stdout)
	}
	if res := venom(t, r.Dir, "rollback", "--agent", "a1", "k1", "--restore", "files", "--plan", p, "--json"); res.exit != 0 {
		t.Errorf("rollback --plan: exit %d %s", res.exit, res.stdout)
	}
}

// hold takes one of the toolkit's locks for the test.
func hold(t *testing.T, r *repo, name string) {
	t.Helper()
	tr := r.tree()
	l, err := journal.TryLock(tr.Log.LockPath(name), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Unlock)
}

func TestRollbackRunningAndPending(t *testing.T) {
	t.Run("rollback_running", func(t *testing.T) {
		r := basic(t, false)
		p := planID(t, r.Dir, "--agent", "a1", "k1", "--restore", "files")
		hold(t, r, checkpoint.RollbackLock(r.tree().Path()))
		data := wantError(t, venom(t, r.Dir, "plan", "--agent", "a1", "k1", "--restore", "files", "--json"), "conflict.rollback_running")
		if data["agent"] != "a1" {
			t.Errorf("data %v", data)
		}
		wantError(t, venom(t, r.Dir, "rollback", "--agent", "a1", "k1", "--restore", "files", "--plan", p, "--json"), "conflict.rollback_running")
		if got := r.Read("a.txt"); got != "two\n" {
			t.Errorf("a.txt = %q", got)
		}
	})
	t.Run("checkpoint_pending", func(t *testing.T) {
		r := basic(t, false)
		p := planID(t, r.Dir, "--agent", "a1", "k1", "--restore", "files")
		hold(t, r, checkpoint.AgentLock("a1"))
		data := wantError(t, venom(t, r.Dir, "plan", "--agent", "a1", "k1", "--restore", "files", "--json"), "conflict.checkpoint_pending")
		if data["agent"] != "a1" {
			t.Errorf("data %v", data)
		}
		wantError(t, venom(t, r.Dir, "rollback", "--agent", "a1", "k1", "--restore", "files", "--plan", p, "--json"), "conflict.checkpoint_pending")
	})
	// The tree's lock, held shared by any capture in the tree (another
	// agent's, a sharer's hook): still conflict.checkpoint_pending, but the
	// message must not say the capture is a1's, which is not running one.
	t.Run("checkpoint_pending of the tree", func(t *testing.T) {
		r := basic(t, false)
		tr := r.tree()
		l, err := journal.TryLock(tr.Log.LockPath(checkpoint.TreeLock(tr.Path())), false)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Unlock()
		res := venom(t, r.Dir, "plan", "--agent", "a1", "k1", "--restore", "files")
		if res.exit != 5 || !strings.Contains(res.stderr, "a capture is running in this tree") || strings.Contains(res.stderr, "of agent a1") {
			t.Errorf("exit %d, stderr %q: want conflict.checkpoint_pending saying a capture runs in the tree, not a1's", res.exit, res.stderr)
		}
	})
}

func TestRollbackGitOperation(t *testing.T) {
	// conflicting makes side and main change f.txt differently, after k1.
	conflicting := func(t *testing.T) *repo {
		r := newRepo(t, false)
		r.Write("f.txt", "base\n")
		r.Commit("base")
		r.turn(func() { r.Write("a.txt", "agent\n") })
		r.Git("switch", "-q", "-c", "side")
		r.Write("f.txt", "side\n")
		r.Commit("side")
		r.Git("switch", "-q", "main")
		r.Write("f.txt", "main\n")
		r.Commit("main")
		return r
	}
	for _, tc := range []struct {
		op    string
		start func(r *repo)
	}{
		{"merge", func(r *repo) { r.GitErr("merge", "-q", "side") }},
		{"rebase", func(r *repo) { r.GitErr("rebase", "side") }},
		{"cherry-pick", func(r *repo) { r.GitErr("cherry-pick", "side") }},
		{"revert", func(r *repo) {
			r.Write("f.txt", "main again\n")
			r.Commit("again")
			r.GitErr("revert", "--no-edit", "HEAD~1")
		}},
		{"bisect", func(r *repo) { r.Git("bisect", "start") }},
	} {
		t.Run(tc.op, func(t *testing.T) {
			r := conflicting(t)
			tc.start(r)
			// No --keep-head: RFC 7.1 checks the operation before HEAD.
			data := wantError(t, venom(t, r.Dir, "plan", "--agent", "a1", "k1", "--restore", "files", "--json"), "conflict.git_operation")
			if data["operation"] != tc.op || data["repo"] != "." {
				t.Errorf("data %v, want operation %s", data, tc.op)
			}
		})
	}
}

func TestRollbackHeadMoved(t *testing.T) {
	t.Run("other branch", func(t *testing.T) {
		r := newRepo(t, false)
		r.Write("a.txt", "one\n")
		a := r.Commit("A")
		r.turn(func() { r.Write("a.txt", "two\n") })
		r.Git("switch", "-q", "-c", "other")
		b := r.Commit("B")
		data := wantError(t, venom(t, r.Dir, "plan", "--agent", "a1", "k1", "--restore", "files", "--json"), "conflict.head_moved")
		if data["expected"] != a || data["actual"] != b || data["branch"] != "main" || data["repo"] != "." {
			t.Errorf("data %v, want expected %s actual %s branch main", data, a, b)
		}
		if res := venom(t, r.Dir, "plan", "--agent", "a1", "k1", "--restore", "files", "--keep-head", "--json"); res.exit != 0 {
			t.Errorf("--keep-head: exit %d %s", res.exit, res.stdout)
		}
	})
	t.Run("rebased history", func(t *testing.T) {
		r := newRepo(t, false)
		r.Write("a.txt", "one\n")
		r.Commit("A")
		r.Write("b.txt", "b\n")
		b := r.Commit("B")
		r.turn(func() { r.Write("a.txt", "two\n") })
		r.Git("commit", "-q", "--amend", "-m", "B rewritten")
		b2 := r.Line("rev-parse", "HEAD")
		data := wantError(t, venom(t, r.Dir, "plan", "--agent", "a1", "k1", "--restore", "files", "--json"), "conflict.head_moved")
		if data["expected"] != b || data["actual"] != b2 {
			t.Errorf("data %v, want expected %s actual %s", data, b, b2)
		}
	})
	t.Run("checkpoint with no head", func(t *testing.T) {
		r := newRepo(t, false)
		r.turn(func() { r.Write("a.txt", "two\n") })
		c := r.Commit("first")
		data := wantError(t, venom(t, r.Dir, "plan", "--agent", "a1", "k1", "--restore", "files", "--json"), "conflict.head_moved")
		if v, ok := data["expected"]; !ok || v != nil || data["actual"] != c {
			t.Errorf("data %v, want expected null actual %s", data, c)
		}
	})
}

func TestRollbackCommitsPushed(t *testing.T) {
	r := newRepo(t, false)
	remote := filepath.Join(filepath.Dir(r.Dir), filepath.Base(r.Dir)+"-remote.git")
	r.Git("init", "-q", "--bare", remote)
	t.Cleanup(func() { os.RemoveAll(remote) })
	r.Git("remote", "add", "origin", remote)
	r.Write("a.txt", "one\n")
	r.Commit("A")
	r.Git("push", "-q", "origin", "main")
	var c string
	r.turn(func() {
		r.Write("a.txt", "two\n")
		c = r.Commit("C")
		r.Git("push", "-q", "origin", "main")
		r.Write("a.txt", "three\n")
		r.Commit("D, not pushed")
	})
	data := wantError(t, venom(t, r.Dir, "plan", "--agent", "a1", "k1", "--restore", "files", "--json"), "conflict.commits_pushed")
	if !reflect.DeepEqual(data["commits"], []any{c}) || !reflect.DeepEqual(data["refs"], []any{"refs/remotes/origin/main"}) || data["repo"] != "." {
		t.Errorf("data %v, want commits [%s] refs [refs/remotes/origin/main]", data, c)
	}
	if res := venom(t, r.Dir, "plan", "--agent", "a1", "k1", "--restore", "files", "--keep-head", "--json"); res.exit != 0 {
		t.Errorf("--keep-head: exit %d %s", res.exit, res.stdout)
	}
}

func TestRollbackIndexLocked(t *testing.T) {
	r := newRepo(t, false)
	r.Write("a.txt", "one\n")
	r.Commit("A")
	r.turn(func() {
		r.Write("a.txt", "two\n")
		r.Commit("agent")
	})
	p := planID(t, r.Dir, "--agent", "a1", "k1", "--restore", "files")
	lock := filepath.Join(r.GitDir, "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	data := wantError(t, venom(t, r.Dir, "plan", "--agent", "a1", "k1", "--restore", "files", "--json"), "conflict.index_locked")
	if data["repo"] != "." || data["lock"] != lock {
		t.Errorf("data %v", data)
	}
	// The real call is refused before anything is written.
	logBefore := logFile(t, r)
	wantError(t, venom(t, r.Dir, "rollback", "--agent", "a1", "k1", "--restore", "files", "--plan", p, "--json"), "conflict.index_locked")
	if got := logFile(t, r); got != logBefore || r.Read("a.txt") != "two\n" {
		t.Errorf("a refused rollback wrote: log %q, a.txt %q", got[len(logBefore):], r.Read("a.txt"))
	}
	if _, err := os.Stat(lock); err != nil {
		t.Errorf("somebody else's index.lock was removed: %v", err)
	}
	// Nothing needs the index when HEAD stays: --keep-head goes ahead.
	p = planID(t, r.Dir, "--agent", "a1", "k1", "--restore", "files", "--keep-head")
	if res := venom(t, r.Dir, "rollback", "--agent", "a1", "k1", "--restore", "files", "--keep-head", "--plan", p, "--json"); res.exit != 0 {
		t.Errorf("--keep-head with index.lock held: exit %d %s", res.exit, res.stdout)
	}
}

func logFile(t *testing.T, r *repo) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.GitDir, "venom", "log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRollbackStale(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(r *repo)
		real   []string
	}{
		{"tree changed", func(r *repo) { r.Write("new.txt", "saved after the plan\n") }, nil},
		{"HEAD changed", func(r *repo) { r.Git("commit", "-q", "--allow-empty", "-m", "later") }, nil},
		{"other outside choice", func(*repo) {}, []string{"--outside", "overwrite"}},
		{"other restore choice", func(*repo) {}, []string{"--restore", "all"}},
		{"other keep-head choice", func(*repo) {}, []string{"--keep-head"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := basic(t, false)
			p := planID(t, r.Dir, "--agent", "a1", "k1", "--restore", "files")
			tc.change(r)
			files := r.Snapshot()
			logBefore := logFile(t, r)
			args := append([]string{"--agent", "a1", "k1", "--restore", "files", "--plan", p, "--json"}, tc.real...)
			data := wantError(t, venom(t, r.Dir, "rollback", args...), "conflict.rollback_stale")
			if data["checkpoint"] != "k1" {
				t.Errorf("data %v", data)
			}
			if added := r.AssertUnchanged(files); len(added) > 0 {
				t.Errorf("a stale plan made refs %v", added)
			}
			if got := logFile(t, r); got != logBefore {
				t.Errorf("a stale plan wrote to the log: %q", got[len(logBefore):])
			}
		})
	}
}

func TestRollbackTurnRunning(t *testing.T) {
	r := newRepo(t, false)
	r.Write("a.txt", "one\n")
	r.Commit("A")
	r.take(checkpoint.ReasonTurnStart)
	r.take(checkpoint.ReasonManual)
	data := wantError(t, venom(t, r.Dir, "plan", "--agent", "a1", "k1", "--restore", "files", "--json"), "conflict.turn_running")
	if data["agent"] != "a1" || data["turn"] != "t1" {
		t.Errorf("data %v", data)
	}
	// Without --json: git style, and the hint names the command that ends
	// the turn.
	res := venom(t, r.Dir, "plan", "--agent", "a1", "k1", "--restore", "files")
	if res.exit != 5 || res.stdout != "" || !strings.HasPrefix(res.stderr, "error: ") || !strings.Contains(res.stderr, "hint: ") || !strings.Contains(res.stderr, "--reason turn_end") {
		t.Errorf("human output: exit %d\nstdout %q\nstderr %q", res.exit, res.stdout, res.stderr)
	}
}

func TestRollbackOutsideEdits(t *testing.T) {
	r := newRepo(t, true)
	r.Write("a.txt", "one\n")
	r.Write("b.txt", "b\n")
	r.Write("c.txt", "c\n")
	r.Commit("A")
	r.turn(func() { r.Write("a.txt", "two\n") })
	r.Write("b.txt", "a person's edit\n")
	r.Write("c.txt", "another\n")
	data := wantError(t, venom(t, r.Dir, "plan", "--agent", "a1", "k1", "--restore", "files", "--json"), "conflict.outside_edits")
	want := []any{map[string]any{"repo": ".", "paths": []any{"b.txt", "c.txt"}, "changes": []any{"modify", "modify"}}}
	if repos, _ := data["repos"].([]any); len(repos) == 1 {
		if m, ok := repos[0].(map[string]any); ok {
			if ps, ok := m["paths"].([]any); ok {
				sort.Slice(ps, func(i, j int) bool { return ps[i].(string) < ps[j].(string) })
			}
		}
	}
	if !reflect.DeepEqual(data["repos"], want) {
		t.Errorf("data %v, want repos %v", data, want)
	}
	if res := venom(t, r.Dir, "plan", "--agent", "a1", "k1", "--restore", "files", "--outside", "keep", "--json"); res.exit != 0 {
		t.Errorf("--outside keep: exit %d %s", res.exit, res.stdout)
	}
}

func TestRollbackDeniedAgentCaller(t *testing.T) {
	r := basic(t, true)
	t.Setenv("GIT_VENOM_CALLER", "agent")
	p := planID(t, r.Dir, "--agent", "a1", "k1", "--restore", "files") // a dry run is allowed
	wantError(t, venom(t, r.Dir, "rollback", "--agent", "a1", "k1", "--restore", "files", "--plan", p, "--json"), "denied.agent_caller")
	if got := r.Read("a.txt"); got != "two\n" {
		t.Errorf("a.txt = %q", got)
	}
}

// failingSmudge makes *.dat files whose smudge filter fails (required), so
// the plan and the safety checkpoint work and the real call's writes fail.
// The turn changes model.dat and creates extra (a path the real call
// deletes before its writes).
func failingSmudge(t *testing.T, extra string) *repo {
	r := newRepo(t, false)
	r.Write(".gitattributes", "*.dat filter=x\n")
	r.Write("model.dat", "v1\n")
	r.Commit("A")
	r.Git("config", "filter.x.clean", "cat")
	r.Git("config", "filter.x.smudge", "false")
	r.Git("config", "filter.x.required", "true")
	r.turn(func() {
		r.Write("model.dat", "v2\n")
		r.Write(extra, "made by the agent\n")
	})
	return r
}

func TestRollbackFailedUndone(t *testing.T) {
	r := failingSmudge(t, "extra.txt")
	p := planID(t, r.Dir, "--agent", "a1", "k1", "--restore", "files")
	before := r.Snapshot()
	data := wantError(t, venom(t, r.Dir, "rollback", "--agent", "a1", "k1", "--restore", "files", "--plan", p, "--json"), "failed.rollback_undone")
	if data["repo"] != "." || data["safety"] != "k3" || data["reason"] == nil {
		t.Errorf("data %v", data)
	}
	// As if it had not happened: the deleted file and the file the failed
	// write unlinked are back, byte for byte (mtimes aside); the index and
	// HEAD are untouched; only the safety checkpoint's ref was added.
	sameContent(t, before, r.Snapshot())
	for name, oid := range r.Refs() {
		if before.Refs[name] != oid && name != "refs/venom/checkpoints/a1/3" {
			t.Errorf("ref %s changed to %s", name, oid)
		}
	}
	ended := endedRecords(t, r)
	if len(ended) != 1 || ended[0].Code != "failed.rollback_undone" || ended[0].OK || ended[0].Safety != "k3" {
		t.Errorf("rollback.ended: %+v", ended)
	}
}

// TestRollbackFailedPartial: the way back fails too. The failing filter
// first puts a symbolic link where the directory sub was (the rollback
// deleted sub/extra.dat and removed sub, empty): the way back puts back
// what it moved away, but never through a symlink, so sub/extra.dat
// stays out of the tree (it is in the safety checkpoint).
func TestRollbackFailedPartial(t *testing.T) {
	r := failingSmudge(t, "sub/extra.dat")
	r.Git("config", "filter.x.smudge", "ln -s .git sub; exit 1")
	p := planID(t, r.Dir, "--agent", "a1", "k1", "--restore", "files")
	data := wantError(t, venom(t, r.Dir, "rollback", "--agent", "a1", "k1", "--restore", "files", "--plan", p, "--json"), "failed.rollback_partial")
	repos, _ := data["repos"].([]any)
	if data["safety"] != "k3" || len(repos) != 1 {
		t.Errorf("data %v", data)
	}
	// The safety checkpoint is whole.
	if got, _ := r.Show("refs/venom/checkpoints/a1/3", "sub/extra.dat"); got != "made by the agent\n" {
		t.Errorf("safety checkpoint sub/extra.dat = %q", got)
	}
	ended := endedRecords(t, r)
	if len(ended) != 1 || ended[0].Code != "failed.rollback_partial" || ended[0].OK {
		t.Errorf("rollback.ended: %+v", ended)
	}
}

// sameContent compares two snapshots by type, mode bits and bytes, not
// by mtime: a deleted file that is written back has a new one.
func sameContent(t *testing.T, before, after *gittest.State) {
	t.Helper()
	// The snapshot's entry type is gittest's own; its fields are read here.
	flat := func(s *gittest.State) map[string]string {
		out := map[string]string{}
		for k, v := range s.Work {
			out["work "+k] = fmt.Sprintf("%v %d %s", v.Mode, v.Size, v.Hash)
		}
		for k, v := range s.Git {
			out["git "+k] = fmt.Sprintf("%v %d %s", v.Mode, v.Size, v.Hash)
		}
		for k, v := range s.Work {
			if v.Mode.IsDir() {
				out["work "+k] = v.Mode.String()
			}
		}
		for k, v := range s.Git {
			if v.Mode.IsDir() {
				out["git "+k] = v.Mode.String()
			}
		}
		return out
	}
	b, a := flat(before), flat(after)
	for k, v := range b {
		if a[k] != v {
			t.Errorf("%q was %s, is %q", k, v, a[k])
		}
	}
	for k, v := range a {
		if _, ok := b[k]; !ok {
			t.Errorf("%q is new (%s)", k, v)
		}
	}
	if before.Head != after.Head {
		t.Errorf("HEAD moved")
	}
}

func endedRecords(t *testing.T, r *repo) []journal.RollbackEnded {
	t.Helper()
	recs, torn, err := journal.Parse([]byte(logFile(t, r)))
	if err != nil || torn {
		t.Fatalf("log: torn %v err %v", torn, err)
	}
	var out []journal.RollbackEnded
	for _, rec := range recs {
		if rec.Type == journal.TypeRollbackEnded {
			var e journal.RollbackEnded
			if err := rec.Decode(&e); err != nil {
				t.Fatal(err)
			}
			out = append(out, e)
		}
	}
	return out
}

// TestRollbackInterrupted: failed.rollback_interrupted is never a
// command's error; it is the code of the rollback.ended record the next
// command writes for a rollback killed mid-way (RFC 11.3 "only on
// agent.rollback_ended"). The killed process is the built binary with a
// failpoint; the next command is cli.Main, which warns on stderr naming
// the code and the safety checkpoint and still does its own job.
func TestRollbackInterrupted(t *testing.T) {
	bin := filepath.Join(gittest.Build(t, "git-venom-rollback"), "git-venom-rollback")
	r := newRepo(t, false)
	r.Write("a.txt", "one\n")
	r.Commit("A")
	r.turn(func() {
		r.Write("a.txt", "two\n")
		r.Write("b.txt", "agent\n")
	})
	p := planID(t, r.Dir, "--agent", "a1", "k1", "--restore", "files")
	cmd := execCommand(bin, r.Dir, "GIT_VENOM_TEST_FAILPOINT=rollback.deleted", "--agent", "a1", "k1", "--restore", "files", "--plan", p, "--json")
	err := cmd.Run()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("rollback with a failpoint: %v, want SIGKILL", err)
	}
	if len(endedRecords(t, r)) != 0 {
		t.Fatalf("rollback.ended before the next command")
	}
	res := venom(t, r.Dir, "plan", "--agent", "a1", "k3", "--restore", "files", "--json")
	if res.exit != 0 || strings.Contains(res.stdout, `"error"`) {
		t.Errorf("plan after the kill: exit %d %s", res.exit, res.stdout)
	}
	if !strings.Contains(res.stderr, "failed.rollback_interrupted") || !strings.Contains(res.stderr, "k3") {
		t.Errorf("stderr does not report the interrupted rollback and its safety checkpoint k3: %q", res.stderr)
	}
	ended := endedRecords(t, r)
	if len(ended) != 1 || ended[0].Code != "failed.rollback_interrupted" || ended[0].OK || ended[0].Safety != "k3" || ended[0].Checkpoint != "k1" {
		t.Errorf("rollback.ended: %+v", ended)
	}
	// The record's JSON has RFC 11.2's members for agent.rollback_ended.
	recs, _, _ := journal.Parse([]byte(logFile(t, r)))
	var m map[string]any
	json.Unmarshal(recs[len(recs)-1].Line, &m)
	for _, k := range []string{"agent", "checkpoint", "safety", "restore", "ok", "code"} {
		if _, ok := m[k]; !ok {
			t.Errorf("rollback.ended has no %s: %s", k, recs[len(recs)-1].Line)
		}
	}
}

// execCommand is a built binary run in dir with one extra environment
// variable.
func execCommand(bin, dir, env string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = gittest.Env(env)
	return cmd
}
