package rollback_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/rollback"
)

// TestFailedRollbackGivesBackPerms: a rollback logs, in rollback.started,
// the permission bits no checkpoint holds of what it deletes (a 0600 file,
// a 0700 directory it empties); when it then fails and goes back to S, the
// files and directories it recreates get those bits, not the umask's
// (CASES BR-41). The failure is a branch that moves under the rollback, as
// in TestHeadCompareAndSwap.
func TestFailedRollbackGivesBackPerms(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	c := raceTurn(f)
	write(t, r.Dir, "private.txt", []byte("secret\n"), 0o600)
	write(t, r.Dir, "keys/id", []byte("key\n"), 0o600)
	if err := os.Chmod(filepath.Join(r.Dir, "keys"), 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, r.Dir, "wide.txt", []byte("git's own bits\n"), 0o644)
	f.take(checkpoint.ReasonTurnEnd)
	moveBranchDuringWrites(r, c)

	_, res, err := f.rollback("k1", rollback.Options{Restore: "files"})
	if c := code(err); c != "failed.rollback_undone" && c != "failed.rollback_partial" {
		t.Fatalf("rollback with a commit landing during it: %v, %v", res, describe(err))
	}
	started := records(t, r, "rollback.started")
	if len(started) != 1 {
		t.Fatalf("rollback.started: %v", started)
	}
	var got []string
	perms, _ := started[0]["perms"].([]any)
	for _, p := range perms {
		m := p.(map[string]any)
		got = append(got, m["path"].(string)+" "+m["perm"].(string)+" "+boolString(m["dir"]))
	}
	sort.Strings(got)
	want := []string{"keys 0700 dir", "keys/id 0600 file", "private.txt 0600 file"}
	if !slices.Equal(got, want) {
		t.Errorf("rollback.started perms = %q, want %q (wide.txt has git's bits: not logged)", got, want)
	}
	for rel, want := range map[string]os.FileMode{"private.txt": 0o600, "keys": 0o700, "keys/id": 0o600} {
		st, err := os.Lstat(filepath.Join(r.Dir, rel))
		if err != nil {
			t.Errorf("%s after the undone rollback: %v", rel, err)
			continue
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s is %04o after the undone rollback, want %04o", rel, st.Mode().Perm(), want)
		}
	}
}

func boolString(v any) string {
	if b, _ := v.(bool); b {
		return "dir"
	}
	return "file"
}

// TestUndoOfAnUndoGivesBackTheBitsItChanged (model seed 196006737): an
// undo gives a file the bits its rollback logged (here a 0600 file the
// first rollback deleted comes back 0600 over a 0644 one). Its own undo
// must give that file its 0644 back: the undo logs, in its own
// rollback.started, the bits of each file it sets to logged bits, git's
// default ones too. It used to keep the 0600 (a file rewritten with its
// own git mode keeps its bits), so undoing the undo did not give back the
// tree as it was.
func TestUndoOfAnUndoGivesBackTheBitsItChanged(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	r.Write("base.txt", "base\n")
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart) // k1: no a.txt
	write(t, r.Dir, "a.txt", []byte("one\n"), 0o600)
	f.take(checkpoint.ReasonTurnEnd) // k2: a.txt 0600
	first := f.mustRollback("k1", rollback.Options{Restore: "files"})
	write(t, r.Dir, "a.txt", []byte("two\n"), 0o644)
	f.take(checkpoint.ReasonManual)
	undo := f.mustRollback(first.Safety, rollback.Options{Restore: "files"})
	if st, err := os.Lstat(r.Path("a.txt")); err != nil || st.Mode().Perm() != 0o600 || r.Read("a.txt") != "one\n" {
		t.Fatalf("a.txt after the undo of the first rollback: %v %v %q; want the 0600 one", st, err, r.Read("a.txt"))
	}
	f.mustRollback(undo.Safety, rollback.Options{Restore: "files"})
	st, err := os.Lstat(r.Path("a.txt"))
	if err != nil || r.Read("a.txt") != "two\n" {
		t.Fatalf("a.txt after the undo of the undo: %v %q", err, r.Read("a.txt"))
	}
	if st.Mode().Perm() != 0o644 {
		t.Errorf("a.txt is %04o after the undo of the undo, was 0644 before the undo", st.Mode().Perm())
	}
}

// TestRewriteNeverWider (break-it pass, 2026-12-06): a 0600 file a
// rollback rewrites with its own git mode keeps its bits, and is never
// wider in the tree, not even between its link into the tree and the
// bits' pass: a kill there left it 0644. Its bits are also logged in
// rollback.started, so that an undo after a kill that left the file only
// in the backup directory writes it back 0600, not git's 0644.
func TestRewriteNeverWider(t *testing.T) {
	f := newFixture(t, false)
	r := f.r
	write(t, r.Dir, "secret.txt", []byte("token=old\n"), 0o600)
	r.Write("z.txt", "one\n")
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart)
	write(t, r.Dir, "secret.txt", []byte("token=new\n"), 0o600)
	r.Write("z.txt", "two\n")
	f.take(checkpoint.ReasonTurnEnd)
	var seen []os.FileMode
	rollback.SetTouching(func(op, rel string) {
		if op == "link" && rel == "z.txt" {
			// secret.txt is linked already: as it would be left by a kill now.
			if st, err := os.Lstat(r.Path("secret.txt")); err == nil {
				seen = append(seen, st.Mode().Perm())
			}
		}
	})
	defer rollback.SetTouching(nil)
	res := f.mustRollback("k1", rollback.Options{Restore: "files"})
	rollback.SetTouching(nil)
	if fc := fileOf(res, "secret.txt"); fc == nil || fc.Change != "modify" {
		t.Fatalf("secret.txt: %+v", fc)
	}
	if len(seen) != 1 || seen[0] != 0o600 {
		t.Errorf("secret.txt in the tree before the bits' pass: %04o, want 0600", seen)
	}
	if st, err := os.Lstat(r.Path("secret.txt")); err != nil || st.Mode().Perm() != 0o600 || r.Read("secret.txt") != "token=old\n" {
		t.Errorf("secret.txt after the rollback: %v %v %q", st, err, r.Read("secret.txt"))
	}
	started := records(t, r, "rollback.started")
	var got []string
	if len(started) == 1 {
		perms, _ := started[0]["perms"].([]any)
		for _, p := range perms {
			m := p.(map[string]any)
			got = append(got, m["path"].(string)+" "+m["perm"].(string))
		}
	}
	if want := []string{"secret.txt 0600"}; !slices.Equal(got, want) {
		t.Errorf("rollback.started perms = %q, want %q (z.txt has git's bits: not logged)", got, want)
	}
}

// TestKeptBitsOnlyWhereGone (a break-it pass, 2026-12-06): the bits a
// rollback logs for a file it rewrote with its own git mode (kept) are
// given back by the undo only where no file is: a file deleted since
// (as a kill while it sat in the backup directory leaves it) comes back
// 0600, while a chmod the person made after the rollback stays (the undo
// used to widen that 0600 back to the logged 0640).
func TestKeptBitsOnlyWhereGone(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	write(t, r.Dir, "other.txt", []byte("o1\n"), 0o640)
	write(t, r.Dir, "secret.txt", []byte("s1\n"), 0o600)
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart)
	write(t, r.Dir, "other.txt", []byte("o2\n"), 0o640)
	write(t, r.Dir, "secret.txt", []byte("s2\n"), 0o600)
	f.take(checkpoint.ReasonTurnEnd)
	res := f.mustRollback("k1", rollback.Options{Restore: "files"})
	kept := map[string]bool{}
	if started := records(t, r, "rollback.started"); len(started) == 1 {
		perms, _ := started[0]["perms"].([]any)
		for _, p := range perms {
			m := p.(map[string]any)
			kept[m["path"].(string)+" "+m["perm"].(string)], _ = m["kept"].(bool)
		}
	}
	if want := map[string]bool{"other.txt 0640": true, "secret.txt 0600": true}; !maps.Equal(kept, want) {
		t.Errorf("rollback.started perms (path, bits: kept) = %v, want %v", kept, want)
	}
	if err := os.Chmod(r.Path("other.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(r.Path("secret.txt")); err != nil {
		t.Fatal(err)
	}
	f.mustRollback(res.Safety, rollback.Options{Restore: "files", Outside: "overwrite"})
	for rel, want := range map[string]os.FileMode{"other.txt": 0o600, "secret.txt": 0o600} {
		if st, err := os.Lstat(r.Path(rel)); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s after the undo: %v %v, want %04o", rel, st, err, want)
		}
	}
	if r.Read("other.txt") != "o2\n" || r.Read("secret.txt") != "s2\n" {
		t.Errorf("after the undo: other.txt %q, secret.txt %q", r.Read("other.txt"), r.Read("secret.txt"))
	}
}
