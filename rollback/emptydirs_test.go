package rollback_test

import (
	"os"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/rollback"
)

// TestEmptyDirectoriesAreNotRecorded pins what git-venom-checkpoint(1) and
// git-venom-plan(1) say of empty directories (issue 13 item 16): a
// capture records files, never a directory with nothing in it, so making
// or removing one is no change (the next capture reuses the checkpoint);
// and a rollback neither restores nor removes one, except that a
// directory its own deletions leave empty is removed (up to the top, as
// git does), and an empty directory where it writes a file is replaced
// by the file. An undo does not bring back an empty directory either.
func TestEmptyDirectoriesAreNotRecorded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	r.Write("a.txt", "one\n")
	r.Write("w", "a file\n")
	r.Commit("init")
	for _, d := range []string{"kept-empty", "filled/deep", "gone"} {
		if err := os.MkdirAll(r.Path(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	k1 := f.take(checkpoint.ReasonTurnStart)
	if err := os.Mkdir(r.Path("made"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(r.Path("gone")); err != nil {
		t.Fatal(err)
	}
	if k := f.take(checkpoint.ReasonManual); k != k1 {
		t.Errorf("making and removing empty directories took %s, want %s reused", k, k1)
	}
	// The turn: a file in an empty directory, and a file replaced by
	// empty directories.
	r.Write("filled/deep/x.txt", "agent\n")
	if err := os.Remove(r.Path("w")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(r.Path("w/sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.take(checkpoint.ReasonTurnEnd)
	res := f.mustRollback(k1, rollback.Options{Restore: "files"})
	if res.Exact == nil || !*res.Exact {
		t.Errorf("exact %v, want true", res.Exact)
	}
	isDir := func(p string) bool { st, err := os.Lstat(r.Path(p)); return err == nil && st.IsDir() }
	exists := func(p string) bool { _, err := os.Lstat(r.Path(p)); return err == nil }
	switch {
	case !isDir("kept-empty") || !isDir("made"):
		t.Errorf("an empty directory the rollback had no file in was removed (kept-empty %v, made %v)", isDir("kept-empty"), isDir("made"))
	case exists("gone"):
		t.Errorf("the rollback made the empty directory gone/, which no checkpoint records")
	case exists("filled"):
		t.Errorf("filled/ is still there: the directories the deletion of filled/deep/x.txt left empty stay")
	case r.Read("w") != "a file\n":
		t.Errorf("w = %q, want the file back in place of the empty directories", r.Read("w"))
	}
	// The undo puts back the files of S, so filled/deep comes back with
	// x.txt; w/sub, empty in S, does not.
	f.mustRollback(res.Safety, rollback.Options{Restore: "files", Outside: "overwrite"})
	if r.Read("filled/deep/x.txt") != "agent\n" || exists("w") {
		t.Errorf("undo: filled/deep/x.txt %v, w exists %v (want the file back, and no w: the empty w/sub is not in S)", exists("filled/deep/x.txt"), exists("w"))
	}
}
