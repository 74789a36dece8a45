package checkpoint_test

import (
	"os"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/gittest"
)

// nestedRepo makes a repository at rel inside r's tree with one commit,
// and returns it and that commit.
func nestedRepo(t *testing.T, r *gittest.Repo, rel string) (*gittest.Repo, string) {
	t.Helper()
	if err := os.MkdirAll(r.Path(rel), 0o755); err != nil {
		t.Fatal(err)
	}
	n := &gittest.Repo{T: t, Dir: r.Path(rel), GitDir: r.Path(rel + "/.git")}
	n.Git("init", "-q", "-b", "main")
	return n, nestedCommit(n, "n.txt", "1\n")
}

func nestedCommit(n *gittest.Repo, path, content string) string {
	n.Write(path, content)
	n.Git("add", path)
	n.Git("-c", "user.name=N", "-c", "user.email=n@x", "commit", "-q", "-m", path)
	return n.Line("rev-parse", "HEAD")
}

// TestNestedCommitIsANewCheckpoint: a nested repository is a gitlink at
// its HEAD in the checkpoint's tree (RFC 4, 4.2), so a commit inside it,
// with nothing else changed, is a new checkpoint that reports the new
// commit, not a reuse of the one that still names the old commit (RFC
// 3.2 compares trees); with nothing changed at all the checkpoint is
// reused (issue 13 item 13).
func TestNestedCommitIsANewCheckpoint(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	n, c1 := nestedRepo(t, r, "tools/nested")
	o := checkpoint.TakeOptions{Agent: "a1", Reason: checkpoint.ReasonManual}
	k1 := take(t, r, o)
	if e := r.Tree(k1.Checkpoint.Repos[0].Commit)["tools/nested"]; e.Mode != "160000" || e.OID != c1 {
		t.Errorf("k1's tree has tools/nested %+v, want a gitlink at %s", e, c1)
	}
	if k := take(t, r, o); !k.Reused || k.Checkpoint.Checkpoint != k1.Checkpoint.Checkpoint {
		t.Errorf("nothing changed: %s reused %v, want k1 reused", k.Checkpoint.Checkpoint, k.Reused)
	}
	c2 := nestedCommit(n, "n.txt", "2\n")
	k2 := take(t, r, o)
	if k2.Reused {
		t.Fatalf("a commit in the nested repository was deduplicated into %s", k2.Checkpoint.Checkpoint)
	}
	subs := k2.Checkpoint.Repos[0].Submodules
	if len(subs) != 1 || subs[0].Commit == nil || *subs[0].Commit != c2 {
		t.Errorf("k2 reports %+v, want tools/nested at %s", subs, c2)
	}
	if e := r.Tree(k2.Checkpoint.Repos[0].Commit)["tools/nested"]; e.Mode != "160000" || e.OID != c2 {
		t.Errorf("k2's tree has tools/nested %+v, want a gitlink at %s", e, c2)
	}
	// A repository with no commit has no gitlink, and its appearing
	// leaves the tree as it was; the checkpoint is new all the same, so
	// that what it lists is what is there. Its becoming dirty is not.
	r.Git("init", "-q", r.Path("scratch"))
	k3 := take(t, r, o)
	if k3.Reused || k3.Checkpoint.Repos[0].Tree != k2.Checkpoint.Repos[0].Tree {
		t.Errorf("an unborn repository appeared: %s reused %v, tree %s (want a new checkpoint of k2's tree)",
			k3.Checkpoint.Checkpoint, k3.Reused, k3.Checkpoint.Repos[0].Tree)
	}
	if subs := k3.Checkpoint.Repos[0].Submodules; len(subs) != 2 || subs[0].Path != "scratch" || subs[0].Commit != nil {
		t.Errorf("k3 lists %+v, want scratch with no commit first", subs)
	}
	n.Write("n.txt", "dirty\n")
	if k := take(t, r, o); !k.Reused {
		t.Errorf("the nested repository's own edit made %s", k.Checkpoint.Checkpoint)
	}
}
