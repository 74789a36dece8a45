package rollback_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/rollback"
)

// stagedState makes agentCommits' repository (k1 at A, k2 at C) and then
// stages, on top of C: b.txt's staged version, which differs from its
// file; a new file n.txt, staged then changed; an intent-to-add entry i.txt;
// and an unmerged path u.txt (stages 1, 2 and 3, no operation in
// progress, as a stash pop that conflicted leaves it). It returns what
// the index's stage-0 entries must be after the undo of a rollback that
// moves HEAD: every stage-0 entry as it is, u.txt at its stage 2 (ours),
// and i.txt not at all (no tree holds an intent-to-add entry).
func stagedState(t *testing.T, f *fixture) (want string) {
	t.Helper()
	r := f.r
	agentCommits(t, f)
	r.Write("b.txt", "staged again\n")
	r.Git("add", "b.txt")
	r.Write("b.txt", "the file\n")
	r.Write("n.txt", "new, staged\n")
	r.Git("add", "n.txt")
	r.Write("n.txt", "new, changed since\n")
	r.Write("i.txt", "intent\n")
	r.Git("add", "-N", "i.txt")
	var stages []string
	for _, c := range []string{"base\n", "ours\n", "theirs\n"} {
		blob := filepath.Join(t.TempDir(), "blob")
		if err := os.WriteFile(blob, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		stages = append(stages, r.Line("hash-object", "-w", blob))
	}
	r.Write("u.txt", "<<<<<<< ours\nours\n=======\ntheirs\n>>>>>>> theirs\n")
	cmd := exec.Command("git", "update-index", "--index-info")
	cmd.Dir, cmd.Env = r.Dir, gittest.Env()
	cmd.Stdin = strings.NewReader(fmt.Sprintf("100644 %s 1\tu.txt\n100644 %s 2\tu.txt\n100644 %s 3\tu.txt\n", stages[0], stages[1], stages[2]))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("update-index --index-info: %v %s", err, out)
	}
	if got := r.Line("ls-files", "-u"); strings.Count(got, "\tu.txt") != 3 {
		t.Fatalf("u.txt is not unmerged: %q", got)
	}
	var lines []string
	for _, l := range strings.Split(r.Line("ls-files", "-s"), "\n") {
		if !strings.HasSuffix(l, "\ti.txt") && !strings.HasSuffix(l, "\tu.txt") {
			lines = append(lines, l)
		}
	}
	lines = append(lines, fmt.Sprintf("100644 %s 0\tu.txt", stages[1]))
	return sortedLines(lines)
}

// sortedLines is lines sorted, one a line.
func sortedLines(lines []string) string {
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestUndoGivesBackTheIndex: a rollback that moves HEAD resets the index
// (RFC 7.5), so it records the index's tree in rollback.started and keeps
// it reachable as its safety checkpoint's second parent; the undo, which
// moves HEAD back, sets the index to it: every staged version comes back,
// even after a `git gc --prune=now` between the two (issue 13 item 5).
func TestUndoGivesBackTheIndex(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	want := stagedState(t, f)
	c := r.Line("rev-parse", "HEAD")
	_, res, err := f.rollback("k1", rollback.Options{Restore: "files", Outside: "overwrite"})
	if err != nil {
		t.Fatal(describe(err))
	}
	if !res.Repos[0].Head.Moves || res.Repos[0].Index != "" {
		t.Fatalf("the rollback: head %+v index %q, want HEAD to move and the index to follow it", res.Repos[0].Head, res.Repos[0].Index)
	}
	started := records(t, r, "rollback.started")
	idx, _ := started[len(started)-1]["index"].(string)
	if idx == "" {
		t.Fatalf("rollback.started has no index: %v", started[len(started)-1])
	}
	if got := r.Line("rev-parse", f.ref(res.Safety)+"^2^{tree}"); got != idx {
		t.Errorf("the safety checkpoint's second parent has tree %s, want the index's %s", got, idx)
	}
	if got := r.Line("rev-parse", f.ref(res.Safety)+"^1"); got != c {
		t.Errorf("the safety checkpoint's first parent is %s, want HEAD %s", got, c)
	}
	// The index now follows HEAD: the staged versions are in no index.
	if got := r.Line("ls-files", "-s", "b.txt"); strings.Contains(got, r.HashBlob("staged again\n")) {
		t.Fatalf("the rollback left b.txt's staged version in the index: %s", got)
	}
	r.Git("gc", "-q", "--prune=now")

	plan, undo, err := f.rollback(res.Safety, rollback.Options{Restore: "files", Outside: "overwrite"})
	if err != nil {
		t.Fatal(describe(err))
	}
	for _, x := range []*rollback.Result{plan, undo} {
		if x.Repos[0].Index != idx || !x.Repos[0].Head.Moves {
			t.Errorf("the undo: index %q head %+v, want the recorded index %s and HEAD moving back", x.Repos[0].Index, x.Repos[0].Head, idx)
		}
	}
	if h, _ := head(r); h != c {
		t.Errorf("HEAD is %s after the undo, want C %s", h, c)
	}
	if got := sortedLines(strings.Split(r.Line("ls-files", "-s"), "\n")); got != want {
		t.Errorf("the index after the undo:\n%s\nwant\n%s", got, want)
	}
	if got := r.Read("b.txt"); got != "the file\n" {
		t.Errorf("b.txt = %q", got)
	}
	if undo.Exact == nil || !*undo.Exact {
		t.Errorf("the undo is not exact")
	}
}

// TestUndoInAGuardedTreeLeavesTheIndex: the undo gives the index back only
// where it moves HEAD back. Once another agent shares the tree it is
// guarded: HEAD stays, the index is never written (invariant 4), and the
// recorded tree stays in the safety checkpoint for a person to read back.
func TestUndoInAGuardedTreeLeavesTheIndex(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	stagedState(t, f)
	res := f.mustRollback("k1", rollback.Options{Restore: "files", Outside: "overwrite"})
	if _, err := f.tree().Fork(context.Background(), "b1", f.agent, ""); err != nil {
		t.Fatal(describe(err))
	}
	before := indexBytes(t, r)
	plan, undo, err := f.rollback(res.Safety, rollback.Options{Restore: "files", Outside: "overwrite"})
	if err != nil {
		t.Fatal(describe(err))
	}
	for _, x := range []*rollback.Result{plan, undo} {
		if x.Repos[0].Index != "" || x.Repos[0].Head.Moves {
			t.Errorf("the undo in a guarded tree: index %q head %+v, want neither", x.Repos[0].Index, x.Repos[0].Head)
		}
	}
	if indexBytes(t, r) != before {
		t.Errorf("the undo in a guarded tree wrote the index")
	}
	if got := r.Line("rev-parse", f.ref(res.Safety)+"^2:b.txt"); got != r.HashBlob("staged again\n") {
		t.Errorf("the safety checkpoint's index commit holds b.txt %s", got)
	}
}

// A rollback that does not move HEAD records no index and gives its
// safety checkpoint one parent.
func TestRollbackKeepingHeadRecordsNoIndex(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	agentCommits(t, f)
	res := f.mustRollback("k1", rollback.Options{Restore: "files", KeepHead: true})
	started := records(t, r, "rollback.started")
	if _, ok := started[0]["index"]; ok {
		t.Errorf("rollback.started of a rollback that keeps HEAD has an index: %v", started[0])
	}
	if _, err := r.GitErr("rev-parse", "--verify", "-q", f.ref(res.Safety)+"^2"); err == nil {
		t.Errorf("the safety checkpoint has a second parent")
	}
}

// TestStagedDuringTheRollbackIsKept (a break-it pass's R3): a rollback
// that moves HEAD records the index as it found it, for its undo, and
// resets it once the files are written. Something staged in between (a
// person's git add while a long rollback writes) was reset with nothing
// keeping it; now the rollback looks at the index again before it moves
// HEAD, and goes back instead: failed.rollback_undone, the tree, HEAD
// and the staged version as they are.
func TestStagedDuringTheRollbackIsKept(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	_, c := agentCommits(t, f)
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--outside", "overwrite", "--json"}
	plan := planOf(t, r, args)
	before := stateOf(t, r)
	stage := `printf 'staged while the rollback wrote\n' >mine.txt && git add mine.txt`
	real := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_FAILPOINT=rollback.written:exec", "GIT_VENOM_TEST_FAILPOINT_EXEC="+stage)
	var res rollbackOut
	if err := json.Unmarshal([]byte(real.stdout), &res); err != nil {
		t.Fatalf("%v\n%s%s", err, real.stdout, real.stderr)
	}
	if res.Error == nil || res.Error.Code != "failed.rollback_undone" || !strings.Contains(res.Error.Message, "the index changed while the rollback ran") {
		t.Fatalf("exit %d, want failed.rollback_undone for the index that changed:\n%s%s", real.exit, real.stdout, real.stderr)
	}
	if h, _ := head(r); h != c {
		t.Errorf("HEAD is %s, want C %s", h, c)
	}
	if got, want := r.Line("rev-parse", ":mine.txt"), r.HashBlob("staged while the rollback wrote\n"); got != want {
		t.Errorf("mine.txt in the index is %s, want the staged %s", got, want)
	}
	if got := r.Line("rev-parse", ":b.txt"); got != r.HashBlob("staged\n") {
		t.Errorf("b.txt in the index is %s, want its staged version", got)
	}
	// The tree as before, but for the file staged meanwhile.
	r.Git("rm", "-q", "--cached", "mine.txt")
	os.Remove(r.Path("mine.txt"))
	if d := before.changes(t, r, false); d != "" {
		t.Errorf("the tree after the way back:\n%s", d)
	}
}

// TestCtrlCBeforeTheWritesSaysInterrupted: a rollback interrupted while
// it still only reads (here in S's capture, after its walk) changes
// nothing, and its error says it was interrupted: a git child the
// context killed used to read as a git failure ("context canceled").
func TestCtrlCBeforeTheWritesSaysInterrupted(t *testing.T) {
	t.Parallel()
	f, args, plan := twoFilesBack(t, "a two\n", "b two\n")
	r := f.r
	before := stateOf(t, r)
	real := realCall(t, r, args, plan, "GIT_VENOM_TEST_FAILPOINT=capture.status-done:int")
	out := parseOut(t, real)
	if out.Error == nil || !strings.HasPrefix(out.Error.Message, "interrupted (") {
		t.Fatalf("rollback interrupted before its writes: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
	}
	if d := before.changes(t, r, true); d != "" {
		t.Errorf("the tree after an interrupt before the writes:\n%s", d)
	}
}
