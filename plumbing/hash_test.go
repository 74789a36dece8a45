package plumbing_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// TestHashesOfPathsStdinPathsMisreads: `hash-object --stdin-paths` reads
// a line that begins with a double quote as a C-quoted string and strips
// a carriage return from its end, so such paths go on the command line
// too: each gets its own file's hash, and one of them no longer fails
// every path asked with it (a rollback over a file named "q" failed with
// "could not open 'q' for reading").
func TestHashesOfPathsStdinPathsMisreads(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	names := []string{`"q"`, `"bad`, "cr\r", "-dash", " sp", "plain"}
	for i, n := range names {
		r.Write(n, fmt.Sprintf("content %d\n", i))
	}
	r.Write("q", "the unquoted name's\n")
	r.Write("cr", "the name without its CR\n")
	ctx := context.Background()
	repo, err := plumbing.Open(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := repo.RawHashes(ctx, names)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		if want := r.HashBlob(fmt.Sprintf("content %d\n", i)); string(raw[n]) != want {
			t.Errorf("%q: %q, want %q", n, raw[n], want)
		}
	}
}

// TestBlobsFromDisk: of the blobs asked, those a regular file of the
// tree still holds are written back; not one whose file changed since,
// nor one reached through a symbolic link to a directory elsewhere,
// whose content is not stored either.
func TestBlobsFromDisk(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("same.txt", "kept\n")
	r.Write("changed.txt", "before\n")
	r.Write("d/x.txt", "through a link\n")
	r.Git("add", ".")
	tree := strings.TrimSpace(r.Git("write-tree"))
	oid := func(p string) plumbing.OID { return plumbing.OID(strings.TrimSpace(r.Git("rev-parse", tree+":"+p))) }
	asked := []plumbing.OID{oid("same.txt"), oid("changed.txt"), oid("d/x.txt")}
	for _, o := range asked {
		if err := os.Remove(r.LooseObject(string(o))); err != nil {
			t.Fatal(err)
		}
	}
	r.Write("changed.txt", "after\n")
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "x.txt"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(r.Dir, "d")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(r.Dir, "d")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	repo, err := plumbing.Open(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	back, err := repo.BlobsFromDisk(ctx, plumbing.OID(tree), asked)
	if err != nil || len(back) != 1 || back[0] != asked[0] {
		t.Fatalf("written back %v (%v), want same.txt's %s alone", back, err, asked[0])
	}
	for blob, want := range map[string]bool{string(asked[0]): true, string(asked[1]): false, r.HashBlob("after\n"): false, r.HashBlob("outside\n"): false} {
		if _, err := r.GitErr("cat-file", "-e", blob); (err == nil) != want {
			t.Errorf("blob %s in the store: %v, want %v", blob, err == nil, want)
		}
	}
}

// TestUnreadTree: a diff-tree that reaches a subtree missing from the
// store dies naming it, and UnreadTree returns that name, which Missing
// confirms; an error of anything else names none.
func TestUnreadTree(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("a", "one\n")
	r.Write("d/e/f", "two\n")
	r.Commit("init")
	sub := strings.TrimSpace(r.Git("rev-parse", "HEAD:d/e"))
	if err := os.Remove(r.LooseObject(sub)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	repo, err := plumbing.Open(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	tree := plumbing.OID(strings.TrimSpace(r.Git("rev-parse", "HEAD^{tree}")))
	_, err = repo.BlobsBeyond(ctx, tree, "")
	got := plumbing.UnreadTree(err)
	if len(got) != 1 || string(got[0]) != sub {
		t.Fatalf("UnreadTree(%v) = %v, want [%s]", err, got, sub)
	}
	if missing, err := repo.Missing(ctx, got); err != nil || len(missing) != 1 {
		t.Errorf("Missing(%v) = %v, %v; want it missing", got, missing, err)
	}
	// Other git commands put the name in parentheses (grep, checkout).
	paren := &plumbing.Error{Args: []string{"checkout"}, ExitCode: 128, Stderr: "error: unable to read tree (" + sub + ")\n"}
	if got := plumbing.UnreadTree(fmt.Errorf("wrapped: %w", paren)); len(got) != 1 || string(got[0]) != sub {
		t.Errorf("UnreadTree(%v) = %v, want [%s]", paren, got, sub)
	}
	_, err = repo.Run(ctx, plumbing.Options{}, "rev-parse", "--verify", "no-such-ref")
	if err == nil || plumbing.UnreadTree(err) != nil {
		t.Errorf("UnreadTree of another failure (%v) = %v, want none", err, plumbing.UnreadTree(err))
	}
}
