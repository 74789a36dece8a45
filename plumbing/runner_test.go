package plumbing_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/plumbing"
)

// TestOpenErrors: outside a repository, in a bare one, and inside the git
// directory are told apart; a subdirectory opens the whole tree.
func TestOpenErrors(t *testing.T) {
	t.Parallel()
	gittest.Setup()
	ctx := context.Background()
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	if _, err := plumbing.Open(ctx, outside); !errors.Is(err, plumbing.ErrNoRepo) {
		t.Errorf("outside: %v, want ErrNoRepo", err)
	}
	bare := gittest.New(t)
	bare.Git("init", "-q", "--bare", "b.git")
	if _, err := plumbing.Open(ctx, bare.Path("b.git")); !errors.Is(err, plumbing.ErrBare) {
		t.Errorf("bare: %v, want ErrBare", err)
	}
	r := gittest.New(t)
	r.Write("sub/dir/x", "x\n")
	repo, err := plumbing.Open(ctx, r.Path("sub/dir"))
	if err != nil {
		t.Fatal(err)
	}
	if repo.WorkTree != r.Dir || repo.GitDir != r.GitDir || repo.CommonDir != r.GitDir {
		t.Errorf("from a subdirectory: %+v, want the top %s", repo, r.Dir)
	}
	if _, err := plumbing.Open(ctx, r.GitDir); !errors.Is(err, plumbing.ErrNoRepo) {
		t.Errorf("inside .git: %v, want ErrNoRepo (it is not a bare repository)", err)
	}
}

// TestOpenCanonical: a tree reached through a symlink, or with a trailing
// slash, has one name, its canonical path (BR-54).
func TestOpenCanonical(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("d/x", "x\n")
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(r.Dir, alias); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{alias, alias + "/", alias + "/d", r.Dir + "/d/"} {
		repo, err := plumbing.Open(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		if repo.WorkTree != r.Dir || repo.GitDir != r.GitDir {
			t.Errorf("Open(%s): tree %s git dir %s, want %s", dir, repo.WorkTree, repo.GitDir, r.Dir)
		}
	}
}
