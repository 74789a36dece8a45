package plumbing_test

import (
	"context"
	"testing"

	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/plumbing"
)

// TestDiffTreesListsEveryGitlink: DiffTrees runs without the user's index
// and lists a gitlink that changed even where .gitmodules says ignore=all
// (committed, staged only, or in the work tree), and does not fail on a
// .gitmodules git cannot parse (a merge's conflict markers): its answer
// is the two trees' alone.
func TestDiffTreesListsEveryGitlink(t *testing.T) {
	t.Parallel()
	for _, where := range []string{"committed", "staged", "work tree", "unparsable"} {
		t.Run(where, func(t *testing.T) {
			t.Parallel()
			r := gittest.New(t)
			c1 := r.Commit("one")
			r.Write("f", "2\n")
			c2 := r.Commit("two")
			r.Write(".gitmodules", "[submodule \"sub\"]\n\tpath = sub\n\turl = ./sub\n\tignore = all\n")
			r.Git("add", ".gitmodules")
			r.Git("update-index", "--add", "--cacheinfo", "160000,"+c1+",sub")
			r.Git("commit", "-q", "-m", "with sub at one")
			from := r.Line("rev-parse", "HEAD")
			r.Git("update-index", "--cacheinfo", "160000,"+c2+",sub")
			r.Git("commit", "-q", "-m", "with sub at two")
			to := r.Line("rev-parse", "HEAD")
			switch where {
			case "staged":
				r.Git("rm", "-q", "--cached", ".gitmodules")
				r.Git("commit", "-q", "-m", "no .gitmodules")
				r.Git("add", ".gitmodules")
				r.Git("rm", "-q", "--cached", "f")
			case "work tree":
				r.Git("rm", "-q", "--cached", ".gitmodules")
			case "unparsable":
				r.Write(".gitmodules", "<<<<<<< ours\n[submodule \"sub\"]\n=======\n>>>>>>> theirs\n")
			}
			repo, err := plumbing.Open(context.Background(), r.Dir)
			if err != nil {
				t.Fatal(err)
			}
			changes, err := repo.DiffTrees(context.Background(), from, to)
			if err != nil {
				t.Fatalf("DiffTrees: %v", err)
			}
			if len(changes) != 1 || changes[0].Path != "sub" || changes[0].SrcMode != "160000" || string(changes[0].Dst) != c2 {
				t.Fatalf("changes %+v, want the gitlink sub moved to %s", changes, c2)
			}
		})
	}
}
