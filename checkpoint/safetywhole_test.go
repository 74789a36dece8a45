package checkpoint_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
)

// TestSafetyWholeListsOnceAndReads: a blob that both S's tree and the
// user's index tree hold, and HEAD does not, is listed and checked once
// (it was counted twice in the warning and the error); with read, an
// empty loose object file (a crash's leaving) is named missing, where
// the check of presence alone takes it as there.
func TestSafetyWholeListsOnceAndReads(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("a.txt", "one\n")
	r.Commit("init")
	head := strings.TrimSpace(r.Git("rev-parse", "HEAD"))
	r.Write("staged.txt", "staged and on disk\n")
	r.Git("add", "staged.txt")
	index := plumbing.OID(strings.TrimSpace(r.Git("write-tree")))
	tree := strings.TrimSpace(r.Git("write-tree")) // S: the same files
	commit := strings.TrimSpace(r.Git("commit-tree", "-p", head, "-m", "S", tree))
	rs := journal.RepoState{Repo: ".", Commit: commit, Tree: tree, Head: &head}
	blob := r.HashBlob("staged and on disk\n")
	ctx := context.Background()
	tr := openTree(t, r)
	list, missing, err := tr.SafetyWhole(ctx, rs, index, nil, true)
	if err != nil || len(missing) != 0 {
		t.Fatalf("SafetyWhole of a whole checkpoint: missing %v, %v", missing, err)
	}
	n := 0
	for _, o := range list {
		if string(o) == blob {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the blob both trees hold is listed %d times in %v, want once", n, list)
	}
	obj := r.LooseObject(blob)
	if err := os.Remove(obj); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(obj, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	if _, missing, err := tr.SafetyWhole(ctx, rs, index, list, false); err != nil || len(missing) != 0 {
		t.Errorf("presence alone: missing %v, %v; want the empty file taken as there", missing, err)
	}
	_, missing, err = tr.SafetyWhole(ctx, rs, index, nil, true)
	if err != nil || len(missing) != 1 || string(missing[0]) != blob {
		t.Errorf("read: missing %v, %v; want [%s] once", missing, err, blob)
	}
}
