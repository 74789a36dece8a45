package plumbing_test

import (
	"context"
	"testing"

	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/plumbing"
)

// TestHashesOfAPathWithANewline: a path holding a newline cannot be given
// to `hash-object --stdin-paths`, so it goes on the command line; its
// hashes are there like any other's, raw and through the filters, and
// StoreRaw stores it. Left out, a rollback took such a file for one
// changed since S when its ctime was near S's capture (a random-trees
// test failed so under load), and could not tell git's write of it.
func TestHashesOfAPathWithANewline(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Git("config", "filter.up.clean", "tr a-z A-Z")
	r.Write(".gitattributes", "*.up filter=up\n")
	r.Write("new\nline", "one\n")
	r.Write("plain", "two\n")
	r.Write("x\ny.up", "three\n")
	ctx := context.Background()
	repo, err := plumbing.Open(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"new\nline", "plain", "x\ny.up"}
	raw, err := repo.RawHashes(ctx, paths)
	if err != nil {
		t.Fatal(err)
	}
	clean, err := repo.CleanHashes(ctx, paths)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		"new\nline": {r.HashBlob("one\n"), r.HashBlob("one\n")},
		"plain":     {r.HashBlob("two\n"), r.HashBlob("two\n")},
		"x\ny.up":   {r.HashBlob("three\n"), r.HashBlob("THREE\n")},
	}
	for p, w := range want {
		if string(raw[p]) != w[0] || string(clean[p]) != w[1] {
			t.Errorf("%q: raw %q clean %q, want %q %q", p, raw[p], clean[p], w[0], w[1])
		}
	}
	stored, err := repo.StoreRaw(ctx, []string{"new\nline"})
	if err != nil || string(stored["new\nline"]) != want["new\nline"][0] {
		t.Fatalf("StoreRaw: %v %v", stored, err)
	}
	if _, err := r.GitErr("cat-file", "-e", string(stored["new\nline"])); err != nil {
		t.Errorf("the blob StoreRaw named is not stored: %v", err)
	}
}
