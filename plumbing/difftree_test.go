package plumbing_test

import (
	"context"
	"fmt"
	"strings"
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

// TestDiffTreePairsAtOnce (issue 16): pairs of full tree names are asked
// of one `diff-tree --stdin`, and each pair gets exactly what its own
// diff-tree says, the empty tree, a pair with no change and a pathspec
// included; pairs it cannot take (a commit, a tree that is not there)
// are asked one by one, which gives git's error for the one that fails.
func TestDiffTreePairsAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := gittest.New(t)
	r.Write("a", "1\n")
	r.Write("d/b", "2\n")
	r.Write("d/sp ace\nnl", "3\n")
	c1 := r.Commit("one")
	r.Write("a", "one more\n")
	r.Write("d/e", "5\n")
	r.Git("rm", "-q", "d/b")
	c2 := r.Commit("two")
	t1, t2 := r.Line("rev-parse", c1+"^{tree}"), r.Line("rev-parse", c2+"^{tree}")
	empty := plumbing.EmptyTree
	repo, err := plumbing.Open(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var trace strings.Builder
	plumbing.SetTrace(repo, &trace)
	pairs := [][2]string{{t1, t2}, {t2, t1}, {t1, t1}, {string(empty), t2}, {t2, string(empty)}}
	check := func(ps *plumbing.Pathspec, pairs [][2]string, children int) {
		t.Helper()
		trace.Reset()
		got, bad, err := repo.DiffTreePairs(ctx, pairs, ps, false)
		if err != nil {
			t.Fatalf("DiffTreePairs: pair %d: %v", bad, err)
		}
		if n := strings.Count(trace.String(), "venom trace: git diff-tree"); n != children {
			t.Errorf("%d diff-tree children, want %d:\n%s", n, children, trace.String())
		}
		trace.Reset()
		for i, p := range pairs {
			want, err := repo.DiffTreesIn(ctx, p[0], p[1], ps)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got[i]) != fmt.Sprint(want) {
				t.Errorf("pair %d (%s..%s): %v, want %v", i, p[0], p[1], got[i], want)
			}
		}
	}
	check(nil, pairs, 1)
	check(&plumbing.Pathspec{Args: []string{"d"}, Dir: r.Dir}, pairs, 1)
	// A commit first on a line is a commit and its parents to --stdin:
	// the pairs are asked one by one.
	check(nil, [][2]string{{t1, t2}, {c2, c1}}, 3)
	// With trees: each pair's records and its trees' (-t), which
	// FilesOnly drops again, at once or one by one.
	for _, ps := range [][2]string{{t1, t2}, {c2, c1}} {
		ps := [][2]string{{t2, t1}, ps}
		trace.Reset()
		got, _, err := repo.DiffTreePairs(ctx, ps, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range ps {
			want, err := repo.DiffTreesIn(ctx, p[0], p[1], nil)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(plumbing.FilesOnly(got[i])) != fmt.Sprint(want) {
				t.Errorf("pair %d with trees, files only: %v, want %v", i, plumbing.FilesOnly(got[i]), want)
			}
			trees := map[string]string{}
			for _, c := range got[i] {
				if c.SrcMode == "040000" || c.DstMode == "040000" {
					trees[c.Path] = c.SrcMode + " " + c.DstMode
				}
			}
			// d changed (b gone, e new), at the top of each tree.
			if len(trees) != 1 || trees["d"] != "040000 040000" {
				t.Errorf("pair %d: trees %v, want d alone", i, trees)
			}
		}
	}
	missing := strings.Repeat("1", len(t1))
	if _, bad, err := repo.DiffTreePairs(ctx, [][2]string{{t1, t2}, {t2, missing}}, nil, false); err == nil || bad != 1 {
		t.Errorf("a missing tree: pair %d, %v; want pair 1's error", bad, err)
	}
	if _, bad, err := repo.DiffTreePairs(ctx, [][2]string{{missing, t2}, {t2, t1}}, nil, false); err == nil || bad != 0 {
		t.Errorf("a missing tree first: pair %d, %v; want pair 0's error", bad, err)
	}
}

// TestParseDiffTreeStdin: each pair's records up to the next header, and
// an error for any answer that is not one block a pair in order.
func TestParseDiffTreeStdin(t *testing.T) {
	a, b, c := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)
	rec := func(path string) string {
		return ":100644 100644 " + a + " " + b + " M\x00" + path + "\x00"
	}
	pairs := [][2]string{{a, b}, {b, c}, {a, c}}
	out := a + " " + b + "\n" + rec("x") + rec(c+" "+a+"\n") + b + " " + c + "\n" + a + " " + c + "\n" + rec("z")
	got, err := plumbing.ParseDiffTreeStdin([]byte(out), pairs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || len(got[0]) != 2 || got[0][0].Path != "x" || got[0][1].Path != c+" "+a+"\n" ||
		len(got[1]) != 0 || len(got[2]) != 1 || got[2][0].Path != "z" || got[2][0].Dst != plumbing.OID(b) {
		t.Fatalf("got %+v", got)
	}
	for name, bad := range map[string]string{
		"a pair's header missing": a + " " + b + "\n" + rec("x") + a + " " + c + "\n",
		"headers out of order":    b + " " + c + "\n" + a + " " + b + "\n" + a + " " + c + "\n",
		"a commit's header":       a + "\x00" + rec("x") + b + " " + c + "\n" + a + " " + c + "\n",
		"nothing at all":          "",
		"something left over":     a + " " + b + "\n" + b + " " + c + "\n" + a + " " + c + "\n" + "junk",
		"a record cut short":      a + " " + b + "\n" + ":100644 100644 " + a + " " + b + " M\x00x",
	} {
		if got, err := plumbing.ParseDiffTreeStdin([]byte(bad), pairs); err == nil {
			t.Errorf("%s: no error, got %+v", name, got)
		}
	}
}
