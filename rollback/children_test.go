package rollback_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
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
// exact, and no commit-tree either: the target's commit, whose ref that
// same child reads, holds its tree on its HEAD (RFC 5.1). The rollback is
// exact and the files are back.
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
	var refReads, diffs, commits []string
	for _, l := range strings.Split(p.stderr, "\n") {
		args, ok := strings.CutPrefix(l, "venom trace: git ")
		if !ok {
			continue
		}
		f := strings.Fields(args)
		switch {
		case f[0] == "commit-tree":
			commits = append(commits, args)
		case f[0] == "rev-parse" && strings.Contains(args, "refs/venom/checkpoints/"):
			refReads = append(refReads, args)
		case f[0] == "diff-tree":
			diffs = append(diffs, args)
		}
	}
	// S's read of HEAD reads k1 and k2; the verification's, the safety
	// checkpoint k3 (the latest then, whose commit an unchanged
	// repository would get again: RFC 5.1) and the target k1 (whose
	// commit serves a tree as k1 holds it). No child reads a ref alone.
	if len(refReads) != 2 || !strings.Contains(refReads[0], f.ref("k1")+"^{commit}") || !strings.Contains(refReads[0], f.ref("k2")+"^{commit}") ||
		!strings.Contains(refReads[1], f.ref("k3")+"^{commit}") || !strings.Contains(refReads[1], f.ref("k1")+"^{commit}") ||
		!strings.Contains(refReads[0], "HEAD^{tree}") || !strings.Contains(refReads[1], "HEAD^{tree}") {
		t.Errorf("the checkpoint refs read by %d children, want two, S's read of HEAD for k1 and k2 and the verification's for k3 and k1:\n%s", len(refReads), strings.Join(refReads, "\n"))
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
// after the safety ref exists (as a racing gc --prune=now would) stops
// the rollback with nothing written. The plan lists those trees with its
// diffs (diff-tree -t), where the listing after the safety checkpoint
// failed to read them.
func TestPrunedSafetySubtreeStopsTheRollback(t *testing.T) {
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
	real := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_FAILPOINT=rollback.started:exec", "GIT_VENOM_TEST_FAILPOINT_EXEC="+prune)
	gone := strings.TrimSpace(r.Read(".git/venom/pruned-subtree"))
	if _, err := r.GitErr("cat-file", "-e", gone); gone == "" || err == nil {
		t.Fatalf("the simulated gc did not delete S's tree sub/deep %q\n%s", gone, real.stderr)
	}
	out := parseOut(t, real)
	if real.exit != 1 || out.Error == nil || out.Error.Code != "failed.rollback_undone" {
		t.Fatalf("rollback whose safety checkpoint lost a subtree: exit %d, want failed.rollback_undone\n%s%s", real.exit, real.stdout, real.stderr)
	}
	if !strings.Contains(out.Error.Message, "nothing was written") {
		t.Errorf("message %q does not say nothing was written", out.Error.Message)
	}
	if d := before.changes(t, r, true); d != "" {
		t.Errorf("something was written although the safety checkpoint was not whole:\n%s", d)
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
