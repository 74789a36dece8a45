package rollback_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/rollback"
)

// agentCommits makes a repository with commit A, checkpoint k1, two agent
// commits B and C with a staged and an unstaged change on top, and k2. It
// returns A and C.
func agentCommits(t *testing.T, f *fixture) (a, c string) {
	t.Helper()
	r := f.r
	r.Write("a.txt", "one\n")
	r.Write("b.txt", "b\n")
	a = r.Commit("A")
	f.take(checkpoint.ReasonTurnStart) // k1
	r.Write("a.txt", "two\n")
	r.Commit("B")
	r.Write("c.txt", "c\n")
	c = r.Commit("C")
	r.Write("b.txt", "staged\n")
	r.Git("add", "b.txt")
	r.Write("b.txt", "unstaged\n")
	f.take(checkpoint.ReasonTurnEnd) // k2
	return a, c
}

// TestHeadMovesBack: in an unguarded tree the branch goes back to the
// checkpoint's HEAD with update-ref (a reflog entry from C to A), HEAD stays
// on the branch, the index follows HEAD, and the dropped commits stay
// reachable from the safety checkpoint (RFC 7.5).
func TestHeadMovesBack(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	a, c := agentCommits(t, f)
	plan, res, err := f.rollback("k1", rollback.Options{Restore: "files"})
	if err != nil {
		t.Fatal(describe(err))
	}
	for _, h := range []rollback.Head{plan.Repos[0].Head, res.Repos[0].Head} {
		if !h.Moves || h.From == nil || *h.From != c || h.To == nil || *h.To != a || h.Commits != 2 {
			t.Errorf("head: moves %v from %v to %v commits %d; want C %s -> A %s, 2", h.Moves, deref(h.From), deref(h.To), h.Commits, c, a)
		}
	}
	if h, sym := head(r); h != a || sym != "refs/heads/main" {
		t.Errorf("HEAD is %s %s, want refs/heads/main at %s", sym, h, a)
	}
	if got := r.Line("reflog", "-1", "--format=%H %gs", "refs/heads/main"); got != a+" venom rollback a1 to k1" {
		t.Errorf("reflog of main: %q", got)
	}
	if got := r.Line("rev-parse", "refs/heads/main@{1}"); got != c {
		t.Errorf("main@{1} is %s, want C %s", got, c)
	}
	if _, err := r.GitErr("diff-index", "--cached", "--quiet", "HEAD"); err != nil {
		t.Errorf("the index does not follow HEAD: %s", r.Git("diff-index", "--cached", "--name-status", "HEAD"))
	}
	if got := r.Git("status", "--porcelain"); got != "" {
		t.Errorf("status after the rollback: %q", got)
	}
	if _, err := r.GitErr("merge-base", "--is-ancestor", c, f.ref(res.Safety)); err != nil {
		t.Errorf("C is not reachable from the safety checkpoint %s", res.Safety)
	}
	if got, _ := r.Show(f.ref(res.Safety), "b.txt"); got != "unstaged\n" {
		t.Errorf("safety checkpoint b.txt = %q", got)
	}
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// TestHeadDetached: a detached HEAD moves with update-ref --no-deref; no
// branch changes.
func TestHeadDetached(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	r.Write("a.txt", "one\n")
	r.Commit("A")
	r.Git("checkout", "-q", "--detach")
	a := r.Line("rev-parse", "HEAD")
	f.take(checkpoint.ReasonTurnStart)
	r.Write("a.txt", "two\n")
	r.Commit("B")
	f.take(checkpoint.ReasonTurnEnd)
	f.mustRollback("k1", rollback.Options{Restore: "files"})
	if h, sym := head(r); h != a || sym != "" {
		t.Errorf("HEAD is %q %s, want detached at %s", sym, h, a)
	}
	if got := r.Line("rev-parse", "refs/heads/main"); got != a {
		t.Errorf("main moved to %s", got)
	}
	if got := r.Read("a.txt"); got != "one\n" {
		t.Errorf("a.txt = %q", got)
	}
}

// TestHeadCompareAndSwap: the branch moves with its old value, so a commit
// that lands between the plan check and the move is never clobbered: the
// move fails, the files go back to S and the branch keeps the new commit.
// The code is failed.rollback_undone or, since HEAD is no longer S's (the
// other commit moved it), failed.rollback_partial; either names the safety
// checkpoint. The concurrent commit is made by a smudge
// filter that runs during the rollback's own writes, just before the move.
func TestHeadCompareAndSwap(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	c := raceTurn(f)
	f.take(checkpoint.ReasonTurnEnd)
	d := moveBranchDuringWrites(r, c)
	before := files(disk(t, r.Dir))
	_, res, err := f.rollback("k1", rollback.Options{Restore: "files"})
	if c := code(err); c != "failed.rollback_undone" && c != "failed.rollback_partial" {
		t.Fatalf("rollback with a commit landing during it: %v, %v", res, describe(err))
	}
	if e := rfcerr.As(err); e.Data["safety"] != "k3" {
		t.Errorf("error data: %v", e.Data)
	}
	if got := r.Line("rev-parse", "refs/heads/main"); got != d {
		t.Errorf("main is %s, want the concurrent commit %s kept", got, d)
	}
	if diff := diffEntries(before, files(disk(t, r.Dir))); diff != "" {
		t.Errorf("files after the undone rollback:\n%s", diff)
	}
	ended := records(t, r, "rollback.ended")
	if len(ended) != 1 || ended[0]["code"] != code(err) || ended[0]["ok"] != false {
		t.Errorf("rollback.ended: %v", ended)
	}
}

// raceTurn makes commit A with model.dat (filter=race), takes k1 (a
// turn_start) and commits C, the turn's change to model.dat, whose
// rollback moveBranchDuringWrites can make fail. It returns C.
func raceTurn(f *fixture) string {
	r := f.r
	r.Write(".gitattributes", "*.dat filter=race\n")
	r.Write("model.dat", "one\n")
	r.Commit("A")
	f.take(checkpoint.ReasonTurnStart)
	r.Write("model.dat", "two\n")
	return r.Commit("C")
}

// moveBranchDuringWrites makes a rollback of the files *.dat (the tree's
// .gitattributes gives them filter=race) fail at its HEAD step: main
// points at c, and the smudge filter, run by the rollback's own writes,
// moves it to a new commit D on top of c, so the compare-and-swap of the
// move fails. It returns D.
func moveBranchDuringWrites(r *gittest.Repo, c string) string {
	r.Git("commit", "-q", "--allow-empty", "-m", "D")
	d := r.Line("rev-parse", "HEAD")
	r.Git("reset", "-q", "--soft", c)
	r.Git("config", "filter.race.clean", "cat")
	r.Git("config", "filter.race.smudge", "git update-ref refs/heads/main "+d+" && cat")
	return d
}

// TestKeepHead: --keep-head restores the files and leaves HEAD and the
// index alone, so the dropped changes show as uncommitted reversals.
func TestKeepHead(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	_, c := agentCommits(t, f)
	index := indexBytes(t, r)
	res := f.mustRollback("k1", rollback.Options{Restore: "files", KeepHead: true})
	if res.Repos[0].Head.Moves {
		t.Errorf("head.moves with --keep-head")
	}
	if h, sym := head(r); h != c || sym != "refs/heads/main" {
		t.Errorf("HEAD is %s %s, want main at C", sym, h)
	}
	if indexBytes(t, r) != index {
		t.Errorf("--keep-head wrote the index")
	}
	if got := r.Read("a.txt"); got != "one\n" {
		t.Errorf("a.txt = %q", got)
	}
	if got := r.Git("status", "--porcelain"); !strings.Contains(got, " M a.txt") || !strings.Contains(got, "D c.txt") {
		t.Errorf("status does not show the reversals: %q", got)
	}
}

// TestGuardedNeverMovesHead: a guarded tree never moves HEAD or a branch
// and never writes the index, even with commits after the checkpoint or
// HEAD on another branch (RFC 6, invariant 4); the staged change, an
// intent-to-add entry and an assume-unchanged bit stay in the index byte
// for byte (CASES BR-12, BR-13).
func TestGuardedNeverMovesHead(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	r := f.r
	r.Write("local.cfg", "base\n")
	_, c := agentCommits(t, f)
	defer func() {
		if got := r.Line("rev-parse", "refs/heads/main"); got != c {
			t.Errorf("main moved from C %s to %s", c, got)
		}
	}()
	r.Write("ita.txt", "n\n")
	r.Git("add", "-N", "ita.txt")
	r.Git("update-index", "--assume-unchanged", "local.cfg")
	r.Write("local.cfg", "changed\n")
	f.take(checkpoint.ReasonTurnStart)
	f.take(checkpoint.ReasonTurnEnd)
	r.Git("switch", "-q", "-c", "elsewhere")
	r.Git("commit", "-q", "--allow-empty", "-m", "E")
	e := r.Line("rev-parse", "HEAD")
	index := indexBytes(t, r)
	refs := r.Refs()
	plan, res, err := f.rollback("k1", rollback.Options{Restore: "files", Outside: "overwrite"})
	if err != nil {
		t.Fatal(describe(err))
	}
	if plan.Repos[0].Head.Moves || res.Repos[0].Head.Moves || plan.Guarded == nil || !*plan.Guarded {
		t.Errorf("guarded plan: guarded %v head %+v", plan.Guarded, plan.Repos[0].Head)
	}
	if h, sym := head(r); h != e || sym != "refs/heads/elsewhere" {
		t.Errorf("HEAD is %s %s", sym, h)
	}
	for name, oid := range refs {
		if !strings.HasPrefix(name, "refs/venom/") && r.Refs()[name] != oid {
			t.Errorf("ref %s moved", name)
		}
	}
	if indexBytes(t, r) != index {
		t.Errorf("a guarded rollback wrote the index")
	}
	if got := r.Read("a.txt"); got != "one\n" {
		t.Errorf("a.txt = %q", got)
	}
	if got := r.Git("ls-files", "-v", "local.cfg"); !strings.HasPrefix(got, "h ") {
		t.Errorf("assume-unchanged bit: %q", got)
	}
}

// TestUndoMovesHeadForward: the undo a rollback prints (a rollback to its
// safety checkpoint, --restore files) brings HEAD back to where it was
// after the rollback moved it back: a move forward drops no commit. The
// files come back too, and the index is again as the rollback found it:
// C's entries, and b.txt's staged version (index_test.go has more).
func TestUndoMovesHeadForward(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	_, c := agentCommits(t, f)
	before := files(disk(t, r.Dir))
	indexBefore := r.Git("ls-files", "-s")
	res := f.mustRollback("k1", rollback.Options{Restore: "files"})
	if !res.Repos[0].Head.Moves {
		t.Fatalf("scenario: the rollback did not move HEAD")
	}
	plan, undo, err := f.rollback(res.Safety, rollback.Options{Restore: "files"})
	if err != nil {
		t.Fatalf("undo: %s", describe(err))
	}
	if h := plan.Repos[0].Head; !h.Moves || deref(h.To) != c {
		t.Errorf("undo plan: head %+v, want a move to C %s", h, c)
	}
	if h, sym := head(r); h != c || sym != "refs/heads/main" {
		t.Errorf("after the undo HEAD is %s %s, want main at C %s", sym, h, c)
	}
	if d := diffEntries(before, files(disk(t, r.Dir))); d != "" {
		t.Errorf("after the undo the files differ:\n%s", d)
	}
	if got := r.Git("ls-files", "-s"); got != indexBefore {
		t.Errorf("the index after the undo:\n%s\nwant it as the rollback found it:\n%s", got, indexBefore)
	}
	if got := r.Line("diff-index", "--cached", "--name-only", "HEAD"); got != "b.txt" {
		t.Errorf("staged after the undo: %q, want b.txt alone (its staged version)", got)
	}
	if undo.Exact == nil || !*undo.Exact {
		t.Errorf("undo: exact %v", deref2(undo.Exact))
	}
}

// TestHeadMovedMessage: when HEAD left the checkpoint's branch (or left a
// detached HEAD for a branch) and moved on, the plan is refused with
// conflict.head_moved, and the message says where HEAD is and where the
// checkpoint was taken, in words a git user reads (RFC 7.5).
func TestHeadMovedMessage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, want  string
		detachFirst bool
	}{
		{"detached since", "HEAD is detached, but the checkpoint was taken on branch main", false},
		{"on a branch since", "HEAD is on branch main, but the checkpoint was taken with HEAD detached", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, false)
			r := f.r
			r.Write("a.txt", "one\n")
			r.Commit("A")
			if c.detachFirst {
				r.Git("checkout", "-q", "--detach")
			}
			f.take(checkpoint.ReasonTurnStart) // k1
			if c.detachFirst {
				r.Git("checkout", "-q", "main")
			} else {
				r.Git("checkout", "-q", "--detach")
			}
			r.Write("a.txt", "two\n")
			r.Commit("B")
			f.take(checkpoint.ReasonTurnEnd) // k2
			_, err := f.plan("k1", rollback.Options{Restore: "files"})
			if code(err) != "conflict.head_moved" {
				t.Fatalf("plan k1: %s, want conflict.head_moved", describe(err))
			}
			var e *rfcerr.Error
			if !errors.As(err, &e) || e.Message != c.want {
				t.Errorf("message %q, want %q", err.Error(), c.want)
			}
		})
	}
}
