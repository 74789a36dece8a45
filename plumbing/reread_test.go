package plumbing_test

import (
	"context"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/plumbing"
)

// TestReread: reading paths again from a capture's private index decides
// each as Capture does. A tracked file the rules match stays (tracked files
// are never ignored), one no longer tracked that they match leaves the
// snapshot, an absent one leaves it, the others are read again; the
// result is the tree a full Capture makes, and a file over maxFileBytes
// asks for a full capture (ErrRereadNotEnough).
func TestReread(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := gittest.New(t)
	r.Write(".gitignore", "*.log\n")
	r.Write("t.log", "tracked although ignored\n")
	r.Write("a.txt", "one\n")
	r.Write("gone.txt", "here\n")
	r.Write("x.log", "tracked, then untracked\n")
	r.Git("add", "-f", "t.log", "x.log")
	r.Commit("init")
	repo, err := plumbing.Open(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	r.Write(":!u.log", "will be ignored\n")
	r.Write("new.txt", "new\n")
	prev, err := repo.Capture(ctx, plumbing.CaptureOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// What a rollback might do: rewrite the paths, one is removed; and the
	// person untracks x.log, which the rules ignore.
	r.Git("rm", "-q", "--cached", "x.log")
	r.Write("x.log", "untracked now\n")
	r.Write("t.log", "tracked, rewritten\n")
	r.Write("a.txt", "two\n")
	os.Remove(r.Path("gone.txt"))
	paths := []string{"t.log", "x.log", "a.txt", "gone.txt", "new.txt", ":!u.log"}
	snap, err := repo.Reread(ctx, prev, paths, 0)
	if err != nil {
		t.Fatal(err)
	}
	full, err := repo.Capture(ctx, plumbing.CaptureOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Tree != full.Tree {
		t.Errorf("Reread made %s, a full capture %s:\n%s", snap.Tree, full.Tree, r.Git("diff-tree", "-r", string(full.Tree), string(snap.Tree)))
	}
	got := strings.Fields(r.Git("ls-tree", "-r", "--name-only", string(snap.Tree)))
	sort.Strings(got)
	want := []string{".gitignore", "a.txt", "new.txt", "t.log"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Reread holds %q, want %q", got, want)
	}
	if !strings.Contains(r.Git("ls-tree", "-r", "--name-only", string(prev.Tree)), "x.log") {
		t.Errorf("the first capture did not hold x.log (tracked then)")
	}
	if _, err := repo.Reread(ctx, prev, []string{"a.txt"}, 2); err != plumbing.ErrRereadNotEnough {
		t.Errorf("a file over maxFileBytes: %v, want ErrRereadNotEnough", err)
	}
}

// TestRereadFileNowDirectory: a written path that became a directory
// (another process, right after the write) is one git leaves out, and its
// entry in the first capture's tree says nothing of what is there now:
// Reread asks for a full capture, which holds the directory's files.
func TestRereadFileNowDirectory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := gittest.New(t)
	r.Write("d/x", "one\n")
	r.Write("d/y", "y\n")
	r.Commit("init")
	repo, err := plumbing.Open(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	r.Write("d/x", "two\n")
	prev, err := repo.Capture(ctx, plumbing.CaptureOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(r.Path("d/x")); err != nil {
		t.Fatal(err)
	}
	r.Write("d/x/q", "q\n")
	if _, err := repo.Reread(ctx, prev, []string{"d/x", "d/y"}, 0); err != plumbing.ErrRereadNotEnough {
		t.Fatalf("a written file now a directory: %v, want ErrRereadNotEnough", err)
	}
	full, err := repo.Capture(ctx, plumbing.CaptureOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Git("ls-tree", "-r", "--name-only", string(full.Tree)); got != "d/x/q\nd/y\n" {
		t.Errorf("the full capture holds %q", got)
	}
}
