package plumbing_test

import (
	"context"
	"testing"

	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/plumbing"
)

// TestOpenSubmoduleAsGitSeesIt: OpenSubmodule, which reads a submodule's
// gitfile itself instead of asking git, finds the work tree, git dir and
// common dir git's rev-parse gives, two deep; and a capture with
// Submodules lists them in Scope.
func TestOpenSubmoduleAsGitSeesIt(t *testing.T) {
	r, _, _ := subTree(t)
	ctx := context.Background()
	top, lib, in := openSubTree(t, r)
	snap, err := top.Capture(ctx, plumbing.CaptureOptions{Submodules: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Scope) != 1 || snap.Scope[0] != "lib" {
		t.Fatalf("top's scope %q, want lib", snap.Scope)
	}
	for _, s := range []*plumbing.Repo{lib, in} {
		want, err := plumbing.Open(ctx, s.WorkTree)
		if err != nil {
			t.Fatal(err)
		}
		if s.WorkTree != want.WorkTree || s.GitDir != want.GitDir || s.CommonDir != want.CommonDir {
			t.Errorf("OpenSubmodule: %s %s %s; git says %s %s %s", s.WorkTree, s.GitDir, s.CommonDir, want.WorkTree, want.GitDir, want.CommonDir)
		}
	}
}

// subTree is a repository with a file a, the submodule lib (file l) and
// its submodule lib/in (file i), committed (gittest.Repo.Submodules), and
// files more written in the top and committed before the submodules.
func subTree(t *testing.T, more ...string) (top, lib, in *gittest.Repo) {
	r := gittest.New(t)
	r.Write("a", "a\n")
	for _, f := range more {
		r.Write(f, f+"\n")
	}
	r.Commit("init")
	lib, in = r.Submodules()
	return r, lib, in
}

// openSubTree opens subTree's three repositories as plumbing sees them.
func openSubTree(t *testing.T, r *gittest.Repo) (top, lib, in *plumbing.Repo) {
	ctx := context.Background()
	top, err := plumbing.Open(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if lib, err = top.OpenSubmodule(ctx, "lib"); err != nil {
		t.Fatal(err)
	}
	if in, err = lib.OpenSubmodule(ctx, "in"); err != nil {
		t.Fatal(err)
	}
	return top, lib, in
}

// TestSubmoduleGitDirOfADeinitializedSubmodule: once `git submodule
// deinit` empties a submodule's directory, SubmoduleGitDir finds its git
// directory under the top's by the name .gitmodules gives it (not its
// path), and reads its refs there; a path no submodule has fails.
func TestSubmoduleGitDirOfADeinitializedSubmodule(t *testing.T) {
	ctx := context.Background()
	inner := gittest.New(t)
	inner.Write("x", "x\n")
	inner.Commit("x")
	r := gittest.New(t)
	r.Write("a", "a\n")
	r.Commit("a")
	r.Git("-c", "protocol.file.allow=always", "submodule", "add", "-q", "--name", "the-lib", inner.Dir, "vendor/lib")
	r.Commit("lib")
	head := r.Line("-C", "vendor/lib", "rev-parse", "HEAD")
	r.Git("submodule", "deinit", "-q", "-f", "vendor/lib")
	top, err := plumbing.Open(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := top.OpenSubmodule(ctx, "vendor/lib"); err == nil {
		t.Fatalf("OpenSubmodule opened a deinitialized submodule")
	}
	sub, err := top.SubmoduleGitDir(ctx, "vendor/lib")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := plumbing.Canonical(r.GitDir + "/modules/the-lib")
	if sub.GitDir != want {
		t.Errorf("git dir %s, want %s", sub.GitDir, want)
	}
	if got, err := sub.RefValue(ctx, "HEAD"); err != nil || string(got) != head {
		t.Errorf("its HEAD: %s, %v; want %s", got, err, head)
	}
	if _, err := top.SubmoduleGitDir(ctx, "nothing/here"); err == nil {
		t.Errorf("a path no submodule has gave a git directory")
	}
}
