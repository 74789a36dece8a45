package plumbing

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/venom-org/git-venom/internal/gittest"
)

// TestTreeEditMatchesIndex: for random trees and random changes to their
// files (edits, deletions, chmod, symlinks, a file replaced by a directory
// and back, new directories, a nested repository, core.fileMode and
// core.symlinks off), the tree an editor makes from the base tree and the
// paths' staged entries is the one `git update-index` and `git write-tree`
// make in a full copy of the index, for the same paths.
func TestTreeEditMatchesIndex(t *testing.T) {
	t.Parallel()
	first, n := testSeeds(t, 30)
	for i := 0; i < n; i++ {
		seed := first + int64(i)
		t.Run(fmt.Sprint(seed), func(t *testing.T) { treeEditCase(t, seed) })
	}
}

// testSeeds returns the first of n seeds from the clock, logged, or the
// one seed GIT_VENOM_TEST_SEED names (n is then 1).
func testSeeds(t *testing.T, n int) (first int64, count int) {
	t.Helper()
	first = time.Now().UnixNano() % 1_000_000_000
	if s := os.Getenv("GIT_VENOM_TEST_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		first, n = v, 1
	}
	t.Logf("seeds %d to %d (GIT_VENOM_TEST_SEED=<seed> reruns one)", first, first+int64(n)-1)
	return first, n
}

func treeEditCase(t *testing.T, seed int64) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(seed))
	g := gittest.New(t)
	names := []string{"a", "b", "a.b", "a-b", "c d", "ü", "x\ny", ":z"}
	pick := func(depth int) string {
		var parts []string
		for d := 0; d <= depth; d++ {
			parts = append(parts, names[rng.Intn(len(names))])
		}
		return strings.Join(parts, "/")
	}
	write := func(p string) {
		full := g.Path(p)
		os.RemoveAll(full)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return // a parent is a file
		}
		switch rng.Intn(5) {
		case 0:
			os.Symlink(pick(0), full)
		case 1:
			os.WriteFile(full, []byte(fmt.Sprint(rng.Intn(4))), 0o755)
		default:
			os.WriteFile(full, []byte(fmt.Sprint(rng.Intn(4))), 0o644)
		}
	}
	for i := 0; i < 25; i++ {
		write(pick(rng.Intn(4)))
	}
	fileMode, symlinks := rng.Intn(6) != 0, rng.Intn(6) != 0
	g.Git("config", "core.fileMode", fmt.Sprint(fileMode))
	g.Git("config", "core.symlinks", fmt.Sprint(symlinks))
	if rng.Intn(3) == 0 {
		// Attributes from the index: a .gitattributes the work tree
		// lacks (skip-worktree, as in a sparse checkout) still applies.
		g.Write(".gitattributes", "*.b text eol=crlf\n\"c d\"/** filter=up\n")
		g.Git("config", "filter.up.clean", "tr 0-3 a-d")
		g.Git("config", "filter.up.smudge", "cat")
	}
	g.Git("add", "-A")
	g.Git("commit", "-q", "--allow-empty", "-m", "base")
	sparse := false
	if _, err := os.Stat(g.Path(".gitattributes")); err == nil && rng.Intn(2) == 0 {
		g.Git("update-index", "--skip-worktree", ".gitattributes")
		os.Remove(g.Path(".gitattributes"))
		sparse = true
	}
	r := openRepo(t, g)
	base := OID(g.Line("rev-parse", "HEAD^{tree}"))

	// Random changes, and the paths to read again: every changed path, a
	// few that did not change, a few that were never there.
	touched := map[string]bool{}
	tracked := strings.Split(strings.TrimSuffix(g.Git("ls-files", "-z"), "\x00"), "\x00")
	for i := 0; i < 8; i++ {
		switch p := tracked[rng.Intn(len(tracked))]; rng.Intn(6) {
		case 0:
			os.Remove(g.Path(p))
			touched[p] = true
		case 1:
			os.Chmod(g.Path(p), os.FileMode(0o644|rng.Intn(2)*0o111))
			touched[p] = true
		case 2: // the file becomes a directory
			os.Remove(g.Path(p))
			q := p + "/" + pick(0)
			write(q)
			touched[p], touched[q] = true, true
		case 3: // its directory becomes a file
			if d := filepath.Dir(p); d != "." {
				os.RemoveAll(g.Path(d))
				write(d)
				touched[d] = true
				for _, q := range tracked {
					if strings.HasPrefix(q, d+"/") {
						touched[q] = true
					}
				}
			}
		default:
			write(p)
			touched[p] = true
		}
	}
	for i := 0; i < 4; i++ {
		p := pick(rng.Intn(3))
		if rng.Intn(2) == 0 {
			write(p)
		}
		touched[p] = true
	}
	if rng.Intn(3) == 0 {
		sub := pick(0) + "sub"
		os.RemoveAll(g.Path(sub))
		g.Git("init", "-q", sub)
		g.Git("-C", sub, "-c", "user.name=Dev", "-c", "user.email=dev@example.invalid", "commit", "-q", "--allow-empty", "-m", "s")
		touched[sub] = true
	}
	for _, p := range tracked[:3] {
		touched[p] = true
	}
	if sparse {
		// A skip-worktree path is never one status lists.
		delete(touched, ".gitattributes")
	}
	var present, gone []string
	for p := range touched {
		st, err := os.Lstat(g.Path(p))
		switch {
		case err != nil || !r.Exists(p):
			gone = append(gone, p)
		case st.IsDir():
			// A directory now: read again when it is a nested
			// repository, or when it was a file (a rollback's reread
			// names such a path); git refuses a plain directory it never
			// had an entry for, either way.
			_, repo := os.Stat(g.Path(p + "/.git"))
			if was := g.Git("ls-tree", "HEAD", "--", p); repo == nil || strings.HasPrefix(was, "1") {
				present = append(present, p)
			}
		default:
			present = append(present, p)
		}
	}
	sort.Strings(present)
	sort.Strings(gone)

	fromDisk, err := r.modesFromDisk(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fromDisk != (fileMode && symlinks) {
		t.Fatalf("modesFromDisk %v with core.fileMode %v, core.symlinks %v", fromDisk, fileMode, symlinks)
	}
	if !fromDisk {
		// update-index keeps the full index's old modes: Capture takes
		// the full way, and the editor is not used.
		return
	}
	if want, got := bothWays(t, r, base, present, gone); got != want {
		t.Errorf("seed %d (GIT_VENOM_TEST_SEED=%d): the editor made %s, the index %s; present %q, gone %q:\n%s",
			seed, seed, got, want, present, gone, g.Git("diff-tree", "-r", string(want), string(got)))
	}
}

// bothWays makes the tree of base with paths present read again and gone
// removed, the index way (in a copy of the real index: --force-remove,
// update-index, write-tree) and the editor's way, and returns both.
func bothWays(t *testing.T, r *Repo, base OID, present, gone []string) (want, got OID) {
	t.Helper()
	ctx := context.Background()
	idx, _, err := r.privateCopy("test", r.RealIndex())
	if err != nil {
		t.Fatal(err)
	}
	defer RemovePrivateIndex(idx)
	env := []string{"GIT_INDEX_FILE=" + idx}
	if len(gone) > 0 {
		if _, err := r.Run(ctx, Options{Env: env, Stdin: bytes.NewReader(NulList(gone))}, "update-index", "-z", "--force-remove", "--stdin"); err != nil {
			t.Fatal(err)
		}
	}
	if len(present) > 0 {
		if err := r.updateIndex(ctx, env, present); err != nil {
			t.Fatal(err)
		}
	}
	line, err := r.Line(ctx, Options{Env: env}, "write-tree")
	if err != nil {
		t.Fatal(err)
	}
	ed, err := r.editTree(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer ed.close()
	changes, err := r.stage(ctx, ed, present, gone, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range gone {
		changes[p] = nil
	}
	if got, err = ed.apply(changes); err != nil {
		t.Fatal(err)
	}
	if err := ed.close(); err != nil {
		t.Fatal(err)
	}
	return OID(line), got
}

// TestTreeEditAttributesFromIndex: a .gitattributes the work tree lacks
// (skip-worktree, as in a sparse checkout) still applies to the paths
// below it, as git reads attributes from the index then, unless it is
// being removed: the editor's index of the changed paths holds it too.
func TestTreeEditAttributesFromIndex(t *testing.T) {
	t.Parallel()
	g := gittest.New(t)
	g.Write("d/.gitattributes", "*.dat filter=up\n")
	g.Write("d/keep.txt", "k\n")
	g.Git("config", "filter.up.clean", "tr a-z A-Z")
	g.Git("config", "filter.up.smudge", "cat")
	g.Commit("base")
	g.Git("update-index", "--skip-worktree", "d/.gitattributes")
	os.Remove(g.Path("d/.gitattributes"))
	g.Write("d/x.dat", "hello\n")
	r := openRepo(t, g)
	base := OID(g.Line("rev-parse", "HEAD^{tree}"))
	want, got := bothWays(t, r, base, []string{"d/x.dat"}, nil)
	if got != want {
		t.Errorf("the editor made %s, the index %s", got, want)
	}
	if blob, _ := g.Show(string(got), "d/x.dat"); blob != "HELLO\n" {
		t.Errorf("d/x.dat was staged as %q, want the clean filter's HELLO", blob)
	}
	// Removed along with the change: its rules no longer apply.
	want, got = bothWays(t, r, base, []string{"d/x.dat"}, []string{"d/.gitattributes"})
	if got != want {
		t.Errorf("with the attributes removed: the editor made %s, the index %s", got, want)
	}
	if blob, _ := g.Show(string(got), "d/x.dat"); blob != "hello\n" {
		t.Errorf("with the attributes removed, d/x.dat was staged as %q", blob)
	}
}

// TestTreeEditContradiction: an entry below a path that also gets a file
// entry is refused, and nothing is written for it.
func TestTreeEditContradiction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := gittest.New(t)
	g.Write("a/b", "1\n")
	g.Commit("base")
	r := openRepo(t, g)
	blob := OID(g.HashBlob("1\n"))
	ed, err := r.editTree(ctx, OID(g.Line("rev-parse", "HEAD^{tree}")))
	if err != nil {
		t.Fatal(err)
	}
	defer ed.close()
	_, err = ed.apply(map[string]*Entry{"a": {Mode: "100644", OID: blob}, "a/c": {Mode: "100644", OID: blob}})
	if err == nil || !strings.Contains(err.Error(), `"a/c" gets an entry below "a"`) {
		t.Errorf("a file and an entry below it: %v", err)
	}
	// A removal of a directory's path leaves the directory, as
	// `update-index --force-remove` would.
	tree, err := ed.apply(map[string]*Entry{"a": nil})
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Git("ls-tree", "-r", "--name-only", string(tree)); got != "a/b\n" {
		t.Errorf("removing the path of a directory: %q", got)
	}
	// Removing the last file removes its directory; an empty result is
	// the empty tree.
	if tree, err = ed.apply(map[string]*Entry{"a/b": nil}); err != nil || tree != EmptyTree {
		t.Errorf("removing everything: %s %v, want the empty tree", tree, err)
	}
}

// TestTreeEditCloseAfterError: an editor that stops reading cat-file's
// answers after an error (a blob where a tree was wanted) while large
// answers are still coming ends its processes when closed, instead of
// waiting on a pipe nobody reads.
func TestTreeEditCloseAfterError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := gittest.New(t)
	r := openRepo(t, g)
	blob, err := r.Line(ctx, Options{Stdin: strings.NewReader("x\n")}, "hash-object", "-w", "--stdin")
	if err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&in, "100644 blob %s\tfile-with-a-long-name-%05d\n", blob, i)
	}
	out, err := r.Run(ctx, Options{Stdin: strings.NewReader(in.String())}, "mktree")
	if err != nil {
		t.Fatal(err)
	}
	tree := OID(strings.TrimSpace(string(out)))
	ed, err := r.editTree(ctx, tree)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		err := ed.readAll([]OID{OID(blob), tree})
		ed.close()
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a tree") {
			t.Errorf("reading a blob as a tree: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the editor did not end after the error")
	}
}

// TestTreeEditRefusedPath: a tracked path update-index now refuses ("git~1"
// under core.protectNTFS, added while it was off) keeps its entry, as in a
// full index, instead of leaving the tree as if deleted; helper repro 05.
func TestTreeEditRefusedPath(t *testing.T) {
	t.Parallel()
	g := gittest.New(t)
	g.Write("a", "a\n")
	g.Write("git~1", "g\n")
	g.Git("-c", "core.protectNTFS=false", "add", "a", "git~1")
	g.Git("-c", "core.protectNTFS=false", "commit", "-q", "-m", "base")
	g.Write("git~1", "g\nmore\n")
	g.Write("a", "a2\n")
	r := openRepo(t, g)
	base := OID(g.Line("rev-parse", "HEAD^{tree}"))
	want, got := bothWays(t, r, base, []string{"a", "git~1"}, nil)
	if got != want {
		t.Errorf("the editor made %s, the index %s:\n%s", got, want, g.Git("diff-tree", "-r", string(want), string(got)))
	}
	if blob, ok := g.Show(string(got), "git~1"); !ok || blob != "g\n" {
		t.Errorf("git~1 is %q (present %v), want its entry kept", blob, ok)
	}
}

// openRepo opens g's repository for plumbing.
func openRepo(t *testing.T, g *gittest.Repo) *Repo {
	t.Helper()
	r, err := Open(context.Background(), g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSameIndexContent: whether git rewrote the copy of the kept stage
// index is told by the checksum at its end, not by the file's identity
// and mtime: an index rewritten with other entries that keeps its inode
// and its mtime (two rewrites in one second on a file system of 1 s
// timestamps, where the second new file got the first's inode) is
// changed, and its kept listing must not be taken. With the old test
// (os.SameFile and an equal mtime) this case was "unchanged".
func TestSameIndexContent(t *testing.T) {
	r := gittest.New(t)
	r.Write("a", "a\n")
	r.Write("b", "b\n")
	r.Git("add", "a")
	idx := filepath.Join(r.GitDir, "index")
	sum := fileTrailer(idx)
	if sum == "" {
		t.Fatal("an index git wrote has no checksum")
	}
	if !sameIndexContent(sum, idx) {
		t.Fatal("an index as it was is not the same")
	}
	before, err := os.Stat(idx)
	if err != nil {
		t.Fatal(err)
	}
	// Other entries, written in place: the same inode, the mtime put back.
	other := filepath.Join(t.TempDir(), "index")
	if _, err := r.GitEnv([]string{"GIT_INDEX_FILE=" + other}, "add", "a", "b"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(idx, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(idx, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(idx)
	if !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Fatal("the setup did not keep the inode and the mtime")
	}
	if sameIndexContent(sum, idx) {
		t.Fatal("an index rewritten with other entries, its inode and mtime kept, counts as the same")
	}
	if sameIndexContent("", idx) {
		t.Fatal("an index without a checksum to compare counts as the same")
	}
}
