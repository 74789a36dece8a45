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
// reuses) in one child, under its locks, and the plan's diffs of S, T
// and the windows in one diff-tree. The rollback is exact and the files
// are back.
func TestRollbackGitChildren(t *testing.T) {
	f := newFixture(t, false)
	r := f.r
	var paths []string
	for i := 0; i < 10; i++ {
		p := fmt.Sprintf("d%d/f%d.txt", i%3, i)
		paths = append(paths, p)
		r.Write(p, fmt.Sprintf("one %d\n", i))
	}
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
	var refReads, diffs []string
	for _, l := range strings.Split(p.stderr, "\n") {
		args, ok := strings.CutPrefix(l, "venom trace: git ")
		if !ok {
			continue
		}
		f := strings.Fields(args)
		switch {
		case f[0] == "rev-parse" && strings.Contains(args, "refs/venom/checkpoints/"):
			refReads = append(refReads, args)
		case f[0] == "diff-tree":
			diffs = append(diffs, args)
		}
	}
	if len(refReads) != 1 || !strings.Contains(refReads[0], f.ref("k1")+"^{commit}") || !strings.Contains(refReads[0], f.ref("k2")+"^{commit}") {
		t.Errorf("the checkpoint refs read by %d children, want one for k1 and k2:\n%s", len(refReads), strings.Join(refReads, "\n"))
	}
	stdin := 0
	for _, d := range diffs {
		if strings.Contains(d, "--stdin") {
			stdin++
		}
	}
	// The plan's one --stdin, the safety checkpoint's listing of what
	// HEAD does not hold, the verification's compare with S.
	if stdin != 1 || len(diffs) > 3 {
		t.Errorf("%d diff-tree children (%d --stdin), want the plan's one --stdin and at most 2 more:\n%s", len(diffs), stdin, strings.Join(diffs, "\n"))
	}
}
