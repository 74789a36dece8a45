package rollback_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/journal"
)

// TestRollbackGitChildren (issue 16): on a small tree a rollback's cost
// is its git children, each a git start. The real call of a one-turn
// rollback of ten files reads the checkpoint refs it needs (its
// target's, and its latest checkpoint's, which the safety checkpoint
// reuses) under its locks in the child that reads S's HEAD (the
// verification reads the safety checkpoint's in its own), and the
// plan's diffs of S, T and the windows in one diff-tree, which lists
// what of S HEAD does not hold for the safety checkpoint's checks too;
// its verification, which finds T's tree, needs no diff-tree to call it
// exact, and no commit-tree either: the target's commit, whose ref S's
// child read under the locks it still holds, holds its tree on its HEAD
// (RFC 5.1); nor a child to read HEAD: its walk says HEAD is where S
// found it (status --branch), and the refs it may take a commit from are
// the ones this command read or made. The rollback is exact and the
// files are back.
func TestRollbackGitChildren(t *testing.T) {
	f := newFixture(t, false)
	r := f.r
	var paths []string
	for i := 0; i < 10; i++ {
		p := fmt.Sprintf("d%d/f%d.txt", i%3, i)
		paths = append(paths, p)
		r.Write(p, fmt.Sprintf("one %d\n", i))
	}
	p := tracedRollbackOfTwos(t, f, paths)
	var refReads, diffs, commits, heads, walks []string
	for _, l := range strings.Split(p.stderr, "\n") {
		args, ok := strings.CutPrefix(l, "venom trace: git ")
		if !ok {
			continue
		}
		f := strings.Fields(args)
		if f[0] == "rev-parse" || f[0] == "symbolic-ref" {
			heads = append(heads, args)
		}
		switch {
		case f[0] == "commit-tree":
			commits = append(commits, args)
		case f[0] == "status":
			walks = append(walks, args)
		case f[0] == "rev-parse" && strings.Contains(args, "refs/venom/checkpoints/"):
			refReads = append(refReads, args)
		case f[0] == "diff-tree":
			diffs = append(diffs, args)
		}
	}
	// S's read of HEAD reads k1 and k2, and is the only child that reads
	// HEAD or a ref: the verification's walk reads HEAD (--branch), and
	// the refs of the safety checkpoint k3 (the latest then, whose commit
	// an unchanged repository would get again: RFC 5.1) and of the
	// target k1 (whose commit serves a tree as k1 holds it) are known.
	if len(refReads) != 1 || len(heads) != 1 || !strings.Contains(refReads[0], f.ref("k1")+"^{commit}") || !strings.Contains(refReads[0], f.ref("k2")+"^{commit}") ||
		!strings.Contains(refReads[0], "HEAD^{tree}") {
		t.Errorf("HEAD and the checkpoint refs read by %d children, want S's alone, for k1 and k2:\n%s", len(heads), strings.Join(heads, "\n"))
	}
	if len(walks) != 2 || strings.Contains(walks[0], "--branch") || !strings.Contains(walks[1], "--branch") {
		t.Errorf("the walks, want S's and the verification's, which reads HEAD:\n%s", strings.Join(walks, "\n"))
	}
	// The verification k4 holds T's tree on T's HEAD: k1's commit, no
	// commit made (the safety checkpoint k3 reuses k2's).
	if len(commits) != 0 {
		t.Errorf("%d commit-tree children, want none:\n%s", len(commits), strings.Join(commits, "\n"))
	}
	if k4, k1 := f.r.Git("rev-parse", f.ref("k4")), f.r.Git("rev-parse", f.ref("k1")); k4 != k1 {
		t.Errorf("the verification k4 is commit %s, want k1's %s", k4, k1)
	}
	stdin := 0
	for _, d := range diffs {
		if strings.Contains(d, "--stdin") {
			stdin++
		}
	}
	// The plan's one --stdin, which lists what of S HEAD does not hold
	// for the safety checkpoint's checks too.
	if stdin != 1 || len(diffs) != 1 {
		t.Errorf("%d diff-tree children (%d --stdin), want the plan's one --stdin alone:\n%s", len(diffs), stdin, strings.Join(diffs, "\n"))
	}
}

// TestVerificationFindsHEADMoved: a commit made while the rollback
// writes (HEAD moves beside it) is what its verification records: its
// walk finds HEAD elsewhere than S found it, and HEAD is read again, so
// the rollback checkpoint's commit has the new HEAD for parent and the
// record names it, on its branch.
func TestVerificationFindsHEADMoved(t *testing.T) {
	t.Parallel()
	f, r := startedAtK1(t)
	r.Write("a.txt", "two\n")
	f.take(checkpoint.ReasonTurnEnd) // k2
	p, out := rollbackWhileWriting(t, f, "git -c user.name=p -c user.email=p@x commit -q --allow-empty -m beside", "GIT_VENOM_TRACE=1")
	moved := strings.TrimSpace(r.Git("rev-parse", "HEAD"))
	if parent := strings.TrimSpace(r.Git("rev-parse", f.ref(out.After)+"^")); parent != moved {
		t.Errorf("the verification %s has parent %s, want the commit made beside it, %s", out.After, parent, moved)
	}
	rec := f.record(out.After)
	if rec == nil || deref(rec.Rec.Repos[0].Head) != moved || rec.Rec.Repos[0].Branch != "main" {
		t.Errorf("the verification's record: %+v, want HEAD %s on main", rec, moved)
	}
	if !strings.Contains(p.stderr, "venom trace: capture: HEAD is not where the caller read it") {
		t.Errorf("no trace of HEAD read again:\n%s", p.stderr)
	}
}

// TestVerificationOnABranchNamedDetached: on a branch named
// "(detached)", which status names as it names a detached HEAD, a
// detach made while the rollback writes is what the verification
// records: HEAD is read again, not taken from the walk.
func TestVerificationOnABranchNamedDetached(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	r.Write("a.txt", "one\n")
	r.Commit("init")
	r.Git("checkout", "-q", "-b", "(detached)")
	f.take(checkpoint.ReasonTurnStart) // k1
	r.Write("a.txt", "two\n")
	f.take(checkpoint.ReasonTurnEnd) // k2
	_, out := rollbackWhileWriting(t, f, "git checkout -q --detach")
	rec := f.record(out.After)
	if rec == nil || rec.Rec.Repos[0].Branch != "" {
		t.Errorf("the verification's record: %+v, want no branch (HEAD detached)", rec)
	}
	if v, k1 := strings.TrimSpace(r.Git("rev-parse", f.ref(out.After))), strings.TrimSpace(r.Git("rev-parse", f.ref("k1"))); v == k1 {
		t.Errorf("the verification took k1's commit %s, which is on the branch, for a detached HEAD", k1)
	}
}

// TestVerificationWhenTheTargetsCommitIsGone: the target's ref, read as
// the rollback began, deleted while it writes and its commit pruned: the
// verification cannot take that commit (git will not make a ref to an
// object it lacks), and makes one of its own; it is not lost.
func TestVerificationWhenTheTargetsCommitIsGone(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	r.Write("a.txt", "one\n")
	r.Write("b.txt", "b\n")
	r.Commit("init")
	r.Write("u.txt", "untracked: only k1's tree holds it\n")
	f.take(checkpoint.ReasonTurnStart) // k1
	r.Write("a.txt", "two\n")
	for _, p := range []string{"b.txt", "u.txt"} {
		if err := os.Remove(filepath.Join(r.Dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	f.take(checkpoint.ReasonTurnEnd) // k2
	k1 := strings.TrimSpace(r.Git("rev-parse", f.ref("k1")))
	k1Tree := strings.TrimSpace(r.Git("rev-parse", f.ref("k1")+"^{tree}"))
	p, out := rollbackWhileWriting(t, f, "git update-ref -d "+f.ref("k1")+" && git reflog expire --expire=now --all && git gc -q --prune=now")
	if _, err := r.GitErr("cat-file", "-e", k1); err == nil {
		t.Fatalf("the simulated gc left k1's commit %s", k1)
	}
	if out.Exact == nil || !*out.Exact {
		t.Fatalf("rollback not exact\n%s%s", p.stdout, p.stderr)
	}
	v := strings.TrimSpace(r.Git("rev-parse", f.ref(out.After)))
	if tree := strings.TrimSpace(r.Git("rev-parse", v+"^{tree}")); v == k1 || tree != k1Tree {
		t.Errorf("the verification %s is commit %s of tree %s, want a commit of its own of k1's tree %s", out.After, v, tree, k1Tree)
	}
	if got := r.Read("u.txt"); got != "untracked: only k1's tree holds it\n" {
		t.Errorf("u.txt is %q", got)
	}
}

// rollbackWhileWriting plans the rollback of f's agent to k1 (files)
// and makes it, with env, `sh -c exec` run in the tree as its writes end
// (the failpoint rollback.written); the test fails unless it ends with a
// verification checkpoint (after).
func rollbackWhileWriting(t *testing.T, f *fixture, exec string, env ...string) (procResult, cliOut) {
	t.Helper()
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
	plan := planOf(t, f.r, args)
	env = append(env, "GIT_VENOM_TEST_FAILPOINT=rollback.written:exec", "GIT_VENOM_TEST_FAILPOINT_EXEC="+exec)
	p := runBin(t, f.r.Dir, "git-venom-rollback", env, append(args, "--plan", plan.Plan)...)
	out := parseOut(t, p)
	if p.exit != 0 || out.After == "" {
		t.Fatalf("rollback: exit %d, no verification\n%s%s", p.exit, p.stdout, p.stderr)
	}
	return p, out
}

// record is the log's record of checkpoint id of f's agent (nil: none).
func (f *fixture) record(id string) *journal.Saved {
	f.t.Helper()
	st, err := f.tree().Log.Load()
	if err != nil {
		f.t.Fatal(err)
	}
	return st.Agents[f.agent].Checkpoint(id)
}

// TestExactWithALeftPathAtT: a rollback whose verification finds T's very
// tree is exact only where the plan wrote every path S and T differ in.
// Here the plan leaves b.txt (changed outside the agent's turns, --outside
// keep), and while the rollback runs someone writes T's content into it:
// the after tree is T's, yet b.txt was not the rollback's to write, so
// exact is false (issue 13 item 6), as the full compare with S says.
func TestExactWithALeftPathAtT(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	r.Write("a.txt", "one\n")
	r.Write("b.txt", "one b\n")
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart) // k1
	r.Write("a.txt", "two\n")
	f.take(checkpoint.ReasonTurnEnd) // k2
	r.Write("b.txt", "a person's b\n")
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--outside", "keep", "--json"}
	plan := planOf(t, r, args)
	if len(plan.Repos) != 1 || len(plan.Repos[0].Left) != 1 || plan.Repos[0].Left[0].Path != "b.txt" {
		t.Fatalf("the plan does not leave b.txt alone: %+v", plan.Repos)
	}
	p := runBin(t, r.Dir, "git-venom-rollback",
		[]string{"GIT_VENOM_TEST_FAILPOINT=rollback.written:exec", "GIT_VENOM_TEST_FAILPOINT_EXEC=echo 'one b' > b.txt"},
		append(args, "--plan", plan.Plan)...)
	out := parseOut(t, p)
	if p.exit != 0 {
		t.Fatalf("rollback: exit %d\n%s%s", p.exit, p.stdout, p.stderr)
	}
	if r.Read("a.txt") != "one\n" || r.Read("b.txt") != "one b\n" {
		t.Fatalf("a.txt %q, b.txt %q", r.Read("a.txt"), r.Read("b.txt"))
	}
	if out.Exact == nil || *out.Exact {
		t.Errorf("exact is true (or absent), but b.txt, which the plan left, was written while the rollback ran")
	}
}

// TestPrunedSafetySubtreeStopsTheRollback: the safety checkpoint's check
// (issue 13 item 3) covers the trees of S that HEAD does not hold, not
// only its commit, its root tree and its blobs: a subtree of S deleted
// after the safety ref exists (as a racing gc --prune=now would) is
// found before the first write. The plan lists those trees with its
// diffs (diff-tree -t), where the listing after the safety checkpoint
// failed to read them.
//
//   - mended: the files below it are as S had them, so a capture of S
//     without the kept stage makes the tree again (applier.treesFromDisk):
//     the rollback goes on, says so, and the tree is in the store again.
//   - elsewhere: a new file saved beside the rollback, outside the missing
//     tree, changes S's root but not that tree: it is written again, the
//     check passes, and the rollback goes on, leaving the file (exact
//     false: the tree is not what the plan made).
//   - changed: a file below it was saved since S, so no capture can make
//     S's tree again: the rollback stops with nothing written.
func TestPrunedSafetySubtreeStopsTheRollback(t *testing.T) {
	t.Parallel()
	for _, variant := range []string{"mended", "elsewhere", "changed"} {
		changed := variant == "changed"
		t.Run(variant, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, false)
			r := f.r
			r.Write("top.txt", "top\n")
			r.Write("sub/deep/f.txt", "one\n")
			r.Commit("init")
			f.take(checkpoint.ReasonTurnStart) // k1
			r.Write("top.txt", "top two\n")
			r.Write("sub/deep/f.txt", "two\n")
			f.take(checkpoint.ReasonTurnEnd) // k2
			before := stateOf(t, r)
			args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
			plan := planOf(t, r, args)
			prune := `set -e
safety=$(git for-each-ref --format='%(refname)' refs/venom/checkpoints/a1/ | sort -t/ -k5 -n | tail -n 1)
oid=$(git rev-parse "$safety:sub/deep")
rm "$(git rev-parse --git-path objects)/$(echo "$oid" | cut -c1-2)/$(echo "$oid" | cut -c3-)"
echo "$oid" > "$(git rev-parse --git-path venom/pruned-subtree)"
`
			switch variant {
			case "changed":
				prune += "echo three > sub/deep/f.txt\n"
			case "elsewhere":
				prune += "echo beside > other.txt\n"
			}
			real := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_FAILPOINT=rollback.started:exec", "GIT_VENOM_TEST_FAILPOINT_EXEC="+prune)
			gone := strings.TrimSpace(r.Read(".git/venom/pruned-subtree"))
			if gone == "" {
				t.Fatalf("the simulated gc did not run\n%s", real.stderr)
			}
			_, lost := r.GitErr("cat-file", "-e", gone)
			out := parseOut(t, real)
			if !changed {
				if exact := variant == "mended"; real.exit != 0 || out.Exact == nil || *out.Exact != exact || lost != nil {
					t.Fatalf("rollback whose safety checkpoint lost a subtree the files still make: exit %d, tree %s in the store: %v; want done, exact only without the save beside it, the tree written again\n%s%s", real.exit, gone, lost == nil, real.stdout, real.stderr)
				}
				if variant == "elsewhere" && r.Read("other.txt") != "beside\n" {
					t.Errorf("other.txt %q, want the save made beside the rollback", r.Read("other.txt"))
				}
				if !strings.Contains(real.stderr, "warning: the safety checkpoint "+out.Safety+" lacked 1 object(s)") {
					t.Errorf("no warning that the tree was written again:\n%s", real.stderr)
				}
				if r.Read("top.txt") != "top\n" || r.Read("sub/deep/f.txt") != "one\n" {
					t.Errorf("top.txt %q, sub/deep/f.txt %q, want k1's", r.Read("top.txt"), r.Read("sub/deep/f.txt"))
				}
				return
			}
			if lost == nil {
				t.Fatalf("the tree %s is in the store again, though no file makes it any more\n%s", gone, real.stderr)
			}
			if real.exit != 1 || out.Error == nil || out.Error.Code != "failed.rollback_undone" {
				t.Fatalf("rollback whose safety checkpoint lost a subtree: exit %d, want failed.rollback_undone\n%s%s", real.exit, real.stdout, real.stderr)
			}
			if !strings.Contains(out.Error.Message, "nothing was written") {
				t.Errorf("message %q does not say nothing was written", out.Error.Message)
			}
			if got := r.Read("sub/deep/f.txt"); got != "three\n" {
				t.Fatalf("sub/deep/f.txt %q, want the save made beside the rollback", got)
			}
			// With the save taken back by hand, nothing else differs.
			r.Write("sub/deep/f.txt", "two\n")
			if d := before.changes(t, r, true); d != "" {
				t.Errorf("something was written although the safety checkpoint was not whole:\n%s", d)
			}
		})
	}
}

// tracedRollbackOfTwos commits paths (each holding "one <i>", written by
// the caller), takes k1, makes each "two <i>", takes k2, and rolls back
// to k1 with GIT_VENOM_TRACE=1, which must be exact and give every path
// its "one <i>" back; it returns the rollback's process.
func tracedRollbackOfTwos(t *testing.T, f *fixture, paths []string) procResult {
	t.Helper()
	r := f.r
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart) // k1
	for i, p := range paths {
		r.Write(p, fmt.Sprintf("two %d\n", i))
	}
	f.take(checkpoint.ReasonTurnEnd) // k2
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
	plan := planOf(t, r, args)
	p := runBin(t, r.Dir, "git-venom-rollback", []string{"GIT_VENOM_TRACE=1"}, append(args, "--plan", plan.Plan)...)
	out := parseOut(t, p)
	if p.exit != 0 || out.Exact == nil || !*out.Exact {
		t.Fatalf("rollback: exit %d, not exact:\n%s\n%s", p.exit, p.stdout, p.stderr)
	}
	for i, path := range paths {
		if got, want := r.Read(path), fmt.Sprintf("one %d\n", i); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
	return p
}
