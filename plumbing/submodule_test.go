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
	r := gittest.New(t)
	r.Write("a", "a\n")
	r.Commit("init")
	r.Submodules()
	ctx := context.Background()
	top, err := plumbing.Open(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := top.Capture(ctx, plumbing.CaptureOptions{Submodules: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Scope) != 1 || snap.Scope[0] != "lib" {
		t.Fatalf("top's scope %q, want lib", snap.Scope)
	}
	lib, err := top.OpenSubmodule(ctx, "lib")
	if err != nil {
		t.Fatal(err)
	}
	in, err := lib.OpenSubmodule(ctx, "in")
	if err != nil {
		t.Fatal(err)
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
