package rollback_test

import (
	"os"
	"reflect"
	"sort"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/rollback"
)

// nestedAt makes a repository at rel inside r's tree, commits content as
// rel/n.txt, and returns it and the commit.
func nestedAt(t *testing.T, r *gittest.Repo, rel, content string) (*gittest.Repo, string) {
	t.Helper()
	if err := os.MkdirAll(r.Path(rel), 0o755); err != nil {
		t.Fatal(err)
	}
	n := &gittest.Repo{T: t, Dir: r.Path(rel), GitDir: r.Path(rel + "/.git")}
	n.Git("init", "-q", "-b", "main")
	return n, commitIn(n, content)
}

func commitIn(n *gittest.Repo, content string) string {
	n.Write("n.txt", content)
	n.Git("add", "n.txt")
	n.Git("-c", "user.name=N", "-c", "user.email=n@x", "commit", "-q", "-m", "n")
	return n.Line("rev-parse", "HEAD")
}

// sortedLeft is res's left, sorted by path.
func sortedLeft(res *rollback.Result) []rollback.Left {
	out := append([]rollback.Left(nil), res.Repos[0].Left...)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// TestGitlinkDifferencesAreLeft: now that a checkpoint's tree records a
// nested repository as a gitlink at its HEAD (RFC 4, 4.2; issue 13 item
// 13), a gitlink that differs between S and the target is left with
// reason gitlink and the target's commit in detail (RFC 7.4), once;
// nothing is written into or deleted from a nested repository; and the
// rollback is exact. Three ways: the nested repository's HEAD moved; a
// repository appeared where the target had plain files (left gitlink with
// no commit, its paths ignored_in_the_way); and a repository the target
// recorded became plain files.
func TestGitlinkDifferencesAreLeft(t *testing.T) {
	t.Parallel()
	t.Run("moved", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, false)
		r := f.r
		r.Write("file.txt", "v1\n")
		r.Commit("init")
		n, n1 := nestedAt(t, r, "nested", "one\n")
		k1 := f.take(checkpoint.ReasonTurnStart)
		r.Write("file.txt", "v2\n")
		n2 := commitIn(n, "two\n")
		f.take(checkpoint.ReasonTurnEnd)
		res := f.mustRollback(k1, rollback.Options{Restore: "files"})
		if want := []rollback.Left{{Path: "nested", Reason: "gitlink", Detail: n1}}; !reflect.DeepEqual(sortedLeft(res), want) {
			t.Errorf("left %+v, want %+v", sortedLeft(res), want)
		}
		if got := res.Repos[0].Files; len(got) != 1 || got[0].Path != "file.txt" {
			t.Errorf("files %+v, want file.txt alone", got)
		}
		if res.Exact == nil || !*res.Exact {
			t.Errorf("exact %v, want true", res.Exact)
		}
		if h := n.Line("rev-parse", "HEAD"); h != n2 || n.Read("n.txt") != "two\n" || r.Read("file.txt") != "v1\n" {
			t.Errorf("nested at %s with n.txt %q (want %s, two), file.txt %q", h, n.Read("n.txt"), n2, r.Read("file.txt"))
		}
		if e := r.Tree(f.ref(res.After))["nested"]; e.Mode != "160000" || e.OID != n2 {
			t.Errorf("the rollback checkpoint has nested %+v, want a gitlink at %s", e, n2)
		}
	})
	t.Run("appeared", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, false)
		r := f.r
		r.Write("file.txt", "v1\n")
		r.Commit("init")
		r.Write("lib/n.txt", "the tree's, untracked\n")
		k1 := f.take(checkpoint.ReasonTurnStart)
		r.Write("file.txt", "v2\n")
		if err := os.Remove(r.Path("lib/n.txt")); err != nil {
			t.Fatal(err)
		}
		n, _ := nestedAt(t, r, "lib", "the nested repository's\n")
		f.take(checkpoint.ReasonTurnEnd)
		res := f.mustRollback(k1, rollback.Options{Restore: "files"})
		want := []rollback.Left{{Path: "lib", Reason: "gitlink"}, {Path: "lib/n.txt", Reason: "ignored_in_the_way", Detail: "lib"}}
		if !reflect.DeepEqual(sortedLeft(res), want) {
			t.Errorf("left %+v, want %+v", sortedLeft(res), want)
		}
		if res.Exact == nil || !*res.Exact {
			t.Errorf("exact %v, want true", res.Exact)
		}
		if got := n.Read("n.txt"); got != "the nested repository's\n" || r.Read("file.txt") != "v1\n" {
			t.Errorf("lib/n.txt %q, file.txt %q", got, r.Read("file.txt"))
		}
	})
	t.Run("gone", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, false)
		r := f.r
		r.Write("file.txt", "v1\n")
		r.Commit("init")
		_, n1 := nestedAt(t, r, "vendored", "one\n")
		k1 := f.take(checkpoint.ReasonTurnStart)
		r.Write("file.txt", "v2\n")
		// The repository goes; its files stay, as the tree's now.
		if err := os.RemoveAll(r.Path("vendored/.git")); err != nil {
			t.Fatal(err)
		}
		f.take(checkpoint.ReasonTurnEnd)
		res := f.mustRollback(k1, rollback.Options{Restore: "files", Outside: "overwrite"})
		want := []rollback.Left{{Path: "vendored", Reason: "gitlink", Detail: n1}, {Path: "vendored/n.txt", Reason: "gitlink", Detail: n1}}
		if !reflect.DeepEqual(sortedLeft(res), want) {
			t.Errorf("left %+v, want %+v", sortedLeft(res), want)
		}
		if res.Exact == nil || !*res.Exact {
			t.Errorf("exact %v, want true", res.Exact)
		}
		if got := r.Read("vendored/n.txt"); got != "one\n" || r.Read("file.txt") != "v1\n" {
			t.Errorf("vendored/n.txt %q, file.txt %q", got, r.Read("file.txt"))
		}
	})
}
