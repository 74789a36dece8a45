package rollback_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/rollback"
)

// swapMidPass arms moveAway's test hook so that, as the rollback comes
// to move a/b/x out of the way, the directory a is moved outside the
// tree and a symlink to it put in its place: the pass looked at a (a
// real directory) before, for its checks and for the paths moved before
// a/b/x. It returns where a went. Not parallel: the hook is the
// package's.
func swapMidPass(t *testing.T, f *fixture) string {
	return swapAt(t, f, "move")
}

// swapAt is swapMidPass as op ("move" or "link") begins with a/b/x.
func swapAt(t *testing.T, f *fixture, op string) string {
	t.Helper()
	outside := filepath.Join(t.TempDir(), "a")
	root := f.r.Dir
	swapped := false
	rollback.SetTouching(func(o, rel string) {
		if swapped || o != op || rel != "a/b/x" {
			return
		}
		swapped = true
		if err := os.Rename(filepath.Join(root, "a"), outside); err != nil {
			t.Errorf("moving a outside: %v", err)
		}
		if err := os.Symlink(outside, filepath.Join(root, "a")); err != nil {
			t.Errorf("a symlink for a: %v", err)
		}
	})
	t.Cleanup(func() {
		rollback.SetTouching(nil)
		if !swapped {
			t.Errorf("the swap of a never happened")
		}
	})
	return outside
}

// TestDeleteThroughAParentSwappedMidPass: the deletions of a pass look
// at each parent once for their checks (issue 16), but each move out of
// the way looks at the parents again just before it, so a directory of
// the tree swapped for a symlink to outside between the pass's look and
// a later path's move is never deleted through: the file there, now
// outside the tree, stays, and the path is left. (The old code moved it
// into the backup and removed it.)
func TestDeleteThroughAParentSwappedMidPass(t *testing.T) {
	f := newFixture(t, true)
	r := f.r
	r.Write("base", "base\n")
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart)
	r.Write("a/b/long-name-1", "l\n")
	r.Write("a/b/x", "x\n")
	f.take(checkpoint.ReasonTurnEnd)
	outside := swapMidPass(t, f)
	_, res, err := f.rollback("k1", rollback.Options{Restore: "files"})
	if err != nil {
		t.Fatalf("rollback: %v", describe(err))
	}
	if got, err := os.ReadFile(filepath.Join(outside, "b", "x")); err != nil || string(got) != "x\n" {
		t.Errorf("the file outside the tree is %q (%v) after the rollback, want x: deleted through the symlink a", got, err)
	}
	if len(res.Repos) != 1 || len(res.Repos[0].Left) == 0 || res.Repos[0].Left[0].Path != "a/b/x" {
		t.Errorf("left %+v, want a/b/x", res.Repos)
	}
}

// TestWriteMoveThroughAParentSwappedMidPass is the same for a write: the
// file S holds at a/b/x is moved away before git writes the target's,
// and is never moved from outside the tree through the symlink a (the
// old code moved it into the backup, then failed at git's write and
// could not put it back through the symlink: x2 was only in the backup
// and the safety checkpoint).
func TestWriteMoveThroughAParentSwappedMidPass(t *testing.T) {
	f := newFixture(t, true)
	r := f.r
	r.Write("a/b/long-name-1", "l1\n")
	r.Write("a/b/x", "x1\n")
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart)
	r.Write("a/b/long-name-1", "l2\n")
	r.Write("a/b/x", "x2\n")
	f.take(checkpoint.ReasonTurnEnd)
	outside := swapMidPass(t, f)
	_, _, err := f.rollback("k1", rollback.Options{Restore: "files"})
	t.Logf("rollback: %v", err)
	if got, err := os.ReadFile(filepath.Join(outside, "b", "x")); err != nil || string(got) != "x2\n" {
		t.Errorf("the file outside the tree is %q (%v) after the rollback, want x2", got, err)
	}
}

// TestLinkThroughAParentSwappedMidPass: git's files are linked from the
// stage into the tree in one pass; a parent swapped for a symlink to
// outside after the pass made or looked at it is never linked through:
// nothing is written outside the tree, and the rollback is undone.
func TestLinkThroughAParentSwappedMidPass(t *testing.T) {
	f := newFixture(t, true)
	r := f.r
	r.Write("a/b/long-name-1", "l1\n")
	r.Write("a/b/x", "x1\n")
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart)
	if err := os.RemoveAll(r.Path("a")); err != nil {
		t.Fatal(err)
	}
	f.take(checkpoint.ReasonTurnEnd)
	outside := swapAt(t, f, "link")
	_, res, err := f.rollback("k1", rollback.Options{Restore: "files"})
	if c := code(err); c != "failed.rollback_undone" && c != "failed.rollback_partial" {
		t.Errorf("rollback with a swapped while its files were linked: %+v, %v", res, describe(err))
	}
	if _, err := os.Lstat(filepath.Join(outside, "b", "x")); err == nil {
		t.Errorf("a/b/x was written outside the tree, through the symlink a")
	}
}

// TestChmodThroughAParentSwappedMidPass: after git wrote, the bits of
// a 0664 file it rewrote are given back (git wrote 0644; bits a file
// must lose are taken in the stage, before its link, and only those it
// gains are set here); the parent a swapped then for a symlink to a
// directory outside the tree is never followed: the file of the same
// name there keeps its 0644.
func TestChmodThroughAParentSwappedMidPass(t *testing.T) {
	f := newFixture(t, true)
	r := f.r
	r.Write("a/b/x", "x1\n")
	r.Commit("init")
	if err := os.Chmod(r.Path("a/b/x"), 0o664); err != nil {
		t.Fatal(err)
	}
	f.take(checkpoint.ReasonTurnStart)
	r.Write("a/b/x", "x2\n")
	if err := os.Chmod(r.Path("a/b/x"), 0o664); err != nil {
		t.Fatal(err)
	}
	f.take(checkpoint.ReasonTurnEnd)
	other := t.TempDir()
	if err := os.MkdirAll(filepath.Join(other, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(other, "b", "x")
	if err := os.WriteFile(theirs, []byte("theirs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(theirs, 0o644); err != nil {
		t.Fatal(err)
	}
	root := r.Dir
	swapped := false
	rollback.SetTouching(func(op, rel string) {
		if swapped || op != "chmod" || rel != "a/b/x" {
			return
		}
		swapped = true
		if err := os.Rename(filepath.Join(root, "a"), filepath.Join(t.TempDir(), "a")); err != nil {
			t.Errorf("moving a away: %v", err)
		}
		if err := os.Symlink(other, filepath.Join(root, "a")); err != nil {
			t.Errorf("a symlink for a: %v", err)
		}
	})
	defer rollback.SetTouching(nil)
	_, res, err := f.rollback("k1", rollback.Options{Restore: "files"})
	t.Logf("rollback: %+v %v", res, err)
	if !swapped {
		t.Fatalf("the bits of a/b/x were never set: no chmod to test")
	}
	st, err := os.Stat(theirs)
	if err != nil {
		t.Fatalf("the file outside the tree: %v", err)
	}
	if st.Mode().Perm() != 0o644 {
		t.Errorf("the file outside the tree has mode %v, want 0644: chmod through the symlink a", st.Mode().Perm())
	}
}

// TestFileSavedAtAParentAsGitWritesIsLeft (a break-it pass's R5): the
// agent made the directory X a file; the rollback makes X a directory
// again, and a person saves a file at X while git writes the batch. The
// paths below X are left, saved while the rollback ran, and the rest is
// rolled back; the rollback used to fail as a whole ("X is not a
// directory of the tree") and go back.
func TestFileSavedAtAParentAsGitWritesIsLeft(t *testing.T) {
	f := newFixture(t, false)
	r := f.r
	r.Write("X/f0", "x0\n")
	r.Write("X/f1", "x1\n")
	r.Write("a.txt", "one\n")
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart)
	if err := os.RemoveAll(r.Path("X")); err != nil {
		t.Fatal(err)
	}
	r.Write("X", "the agent made X a file\n")
	r.Write("a.txt", "two\n")
	f.take(checkpoint.ReasonTurnEnd)
	root := r.Dir
	saved := false
	rollback.SetTouching(func(op, rel string) {
		if saved || op != "link" || !strings.HasPrefix(rel, "X/") {
			return
		}
		saved = true
		if err := os.Remove(filepath.Join(root, "X")); err != nil { // the directory the rollback just made
			t.Errorf("removing X: %v", err)
		}
		if err := os.WriteFile(filepath.Join(root, "X"), []byte("the person's notes\n"), 0o644); err != nil {
			t.Errorf("saving X: %v", err)
		}
	})
	defer rollback.SetTouching(nil)
	_, res, err := f.rollback("k1", rollback.Options{Restore: "files"})
	if !saved {
		t.Fatal("no path below X was linked: nothing to test")
	}
	if err != nil {
		t.Fatalf("rollback with X saved as git wrote below it: %v", describe(err))
	}
	if got := r.Read("X"); got != "the person's notes\n" {
		t.Errorf("X is %q, want the person's save", got)
	}
	if got := r.Read("a.txt"); got != "one\n" {
		t.Errorf("a.txt is %q, want k1's", got)
	}
	var left []string
	for _, l := range res.Repos[0].Left {
		left = append(left, l.Path+": "+l.Reason)
	}
	if want := []string{"X/f0: changed_during_rollback", "X/f1: changed_during_rollback"}; !reflect.DeepEqual(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
	if res.Exact == nil || *res.Exact {
		t.Errorf("exact is %v with two paths left", res.Exact)
	}
}
