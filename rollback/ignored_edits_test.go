package rollback_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/rollback"
)

// TestIgnoredEditsOutOfReach: the agent's edit records name paths that are
// now inside a gitlink (sub, a nested repository the index holds) and
// beyond a symlink (d, a directory the turn turned into a link to e), some
// of them matching an ignore rule, beside an ignored file of the tree and
// a tracked one. git check-ignore dies on the first two kinds (D6, D9 in
// internal/model). The plan lists only the ignored file of the tree in
// ignored_edits, the files as the trees differ, and the rollback restores
// d and leaves the nested repository as it is (RFC 7.3, 7.4).
func TestIgnoredEditsOutOfReach(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	r.Write(".gitignore", "*.log\n")
	r.Write("a.txt", "one\n")
	r.Write("d/x", "1\n")
	r.Write("e/y", "1\n")
	r.Commit("init")
	sub := r.Path("sub")
	r.Write("sub/x", "1\n")
	n := &gittest.Repo{T: t, Dir: sub, GitDir: filepath.Join(sub, ".git")}
	n.Git("init", "-q", "-b", "main")
	n.Git("-c", "user.name=N", "-c", "user.email=n@example.invalid", "add", "-A")
	n.Git("-c", "user.name=N", "-c", "user.email=n@example.invalid", "commit", "-q", "-m", "n1")
	r.Git("add", "sub")
	r.Commit("sub as a gitlink")
	k1 := f.take(checkpoint.ReasonTurnStart)

	r.Write("a.txt", "two\n")
	r.Write("build.log", "built\n")
	r.Write("sub/x", "2\n")
	r.Write("sub/y.log", "nested\n")
	r.Write("d/x", "2\n")
	r.Write("d/z.log", "gone with d\n")
	ctx := context.Background()
	if _, err := f.tree().RecordEdit(ctx, f.agent, []string{"a.txt", "build.log", "sub/x", "sub/y.log", "d/x", "d/z.log"}); err != nil {
		t.Fatal(err)
	}
	symlink(t, r.Dir, "d", "e")
	f.take(checkpoint.ReasonTurnEnd)

	plan, err := f.plan(k1, rollback.Options{Restore: "files"})
	if err != nil {
		t.Fatalf("plan: %s", describe(err))
	}
	repo := plan.Repos[0]
	if want := []string{"build.log"}; !reflect.DeepEqual(repo.IgnoredEdits, want) {
		t.Errorf("ignored_edits %q, want %q", repo.IgnoredEdits, want)
	}
	want := map[string]string{"a.txt": "modify", "d": "delete", "d/x": "create"}
	got := map[string]string{}
	for _, fc := range repo.Files {
		got[fc.Path] = fc.Change
	}
	if !reflect.DeepEqual(got, want) || len(repo.Left) != 0 {
		t.Errorf("files %v, left %+v; want files %v, nothing left", got, repo.Left, want)
	}

	res := f.mustRollback(k1, rollback.Options{Restore: "files"})
	if !reflect.DeepEqual(res.Repos[0].IgnoredEdits, []string{"build.log"}) {
		t.Errorf("real call: ignored_edits %q", res.Repos[0].IgnoredEdits)
	}
	for p, c := range map[string]string{"a.txt": "one\n", "d/x": "1\n", "build.log": "built\n", "sub/x": "2\n", "sub/y.log": "nested\n", "e/y": "1\n"} {
		if got := r.Read(p); got != c {
			t.Errorf("%s = %q after the rollback, want %q", p, got, c)
		}
	}
	if st, err := os.Lstat(r.Path("d")); err != nil || !st.IsDir() {
		t.Errorf("d after the rollback: %v, %v; want a directory", st, err)
	}
	if res.Exact == nil || !*res.Exact {
		t.Errorf("exact is not true")
	}
}
