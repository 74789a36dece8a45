package plumbing_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/plumbing"
)

// want is one expected path of a captured tree: its mode and content (for
// a gitlink, the commit).
type want struct {
	mode, content string
}

func file(content string) want { return want{"100644", content} }
func exec(content string) want { return want{"100755", content} }
func link(target string) want  { return want{"120000", target} }
func gitlink(oid string) want  { return want{"160000", oid} }

// capture runs plumbing's Capture on r and checks invariant 1 around it:
// nothing in the work tree, the git directory or the refs changes, not
// even an mtime, and no ref is added (refs are the caller's step).
func capture(t *testing.T, r *gittest.Repo, o plumbing.CaptureOptions) *plumbing.Snapshot {
	t.Helper()
	snap, err := captureErr(t, r, o)
	if err != nil {
		t.Fatalf("capture: %v", err)
	}
	return snap
}

func captureErr(t *testing.T, r *gittest.Repo, o plumbing.CaptureOptions) (*plumbing.Snapshot, error) {
	t.Helper()
	before := r.Snapshot()
	repo, err := plumbing.Open(context.Background(), r.Dir)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	snap, err := repo.Capture(context.Background(), o)
	if added := r.AssertUnchanged(before); len(added) > 0 {
		t.Errorf("capture created refs %v", added)
	}
	return snap, err
}

// assertTree compares the whole tree with want, path by path, names byte
// for byte.
func assertTree(t *testing.T, r *gittest.Repo, tree plumbing.OID, w map[string]want) {
	t.Helper()
	got := r.Tree(string(tree))
	for p, e := range w {
		g, ok := got[p]
		oid := e.content
		if e.mode != "160000" {
			oid = r.HashBlob(e.content)
		}
		switch {
		case !ok:
			t.Errorf("tree lacks %q", p)
		case g.Mode != e.mode || g.OID != oid:
			c, _ := r.Show(string(tree), p)
			t.Errorf("%q: mode %s content %q, want mode %s content %q", p, g.Mode, c, e.mode, e.content)
		}
	}
	for p := range got {
		if _, ok := w[p]; !ok {
			t.Errorf("tree has unexpected %q", p)
		}
	}
}

func skips(s *plumbing.Snapshot) []plumbing.Skip {
	out := append([]plumbing.Skip(nil), s.Skipped...)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// TestCaptureTableRows covers the rows of RFC 4's table that need no
// special setup: tracked files staged and not, untracked files, deletions
// (staged or not), intent-to-add, exec bits both ways, symlinks, and
// ignored files from .gitignore, .git/info/exclude and core.excludesFile.
func TestCaptureTableRows(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write(".gitignore", "*.log\nbuild/\n")
	r.Write("staged.txt", "v1\n")
	r.Write("partial.txt", "l1\nl2\n")
	r.Write("unstaged.txt", "v1\n")
	r.Write("deleted.txt", "d\n")
	r.Write("rm-cached.txt", "r\n")
	r.Write("tool.sh", "#!/bin/sh\n")
	r.Write("plain.sh", "#!/bin/sh\n")
	os.Chmod(r.Path("tool.sh"), 0o755)
	os.Symlink("staged.txt", r.Path("old-link"))
	r.Commit("init")
	r.Write("staged.txt", "stashed\n")
	r.Git("stash", "-q") // the stash must stay as it is, too

	r.Write("staged.txt", "v2\n")
	r.Git("add", "staged.txt")
	r.Write("partial.txt", "l1 staged\nl2\n")
	r.Git("add", "partial.txt")
	r.Write("partial.txt", "l1 staged\nl2 unstaged\n")
	r.Write("unstaged.txt", "v2\n")
	os.Remove(r.Path("deleted.txt"))
	r.Git("rm", "-q", "rm-cached.txt")
	os.Chmod(r.Path("tool.sh"), 0o644)
	os.Chmod(r.Path("plain.sh"), 0o755)
	os.Remove(r.Path("old-link"))
	os.Symlink("unstaged.txt", r.Path("old-link"))
	os.Symlink("../nowhere", r.Path("dangling"))
	r.Write("new dir/untracked.txt", "u\n")
	r.Write("ita.txt", "intent\n")
	r.Git("add", "-N", "ita.txt")
	r.Write("debug.log", "ignored by .gitignore\n")
	r.Write("build/out.o", "ignored directory\n")
	r.Write("secret.env", "ignored by info/exclude\n")
	os.WriteFile(filepath.Join(r.GitDir, "info", "exclude"), []byte("secret.env\n"), 0o644)
	excl := filepath.Join(t.TempDir(), "global-ignore")
	os.WriteFile(excl, []byte("*.cache\n"), 0o644)
	r.Git("config", "core.excludesFile", excl)
	r.Write("data.cache", "ignored by core.excludesFile\n")

	snap := capture(t, r, plumbing.CaptureOptions{})
	assertTree(t, r, snap.Tree, map[string]want{
		".gitignore":            file("*.log\nbuild/\n"),
		"staged.txt":            file("v2\n"),
		"partial.txt":           file("l1 staged\nl2 unstaged\n"),
		"unstaged.txt":          file("v2\n"),
		"tool.sh":               file("#!/bin/sh\n"),
		"plain.sh":              exec("#!/bin/sh\n"),
		"old-link":              link("unstaged.txt"),
		"dangling":              link("../nowhere"),
		"new dir/untracked.txt": file("u\n"),
		"ita.txt":               file("intent\n"),
	})
	if snap.Head != plumbing.OID(r.Line("rev-parse", "HEAD")) || snap.Branch != "main" {
		t.Errorf("head %q branch %q", snap.Head, snap.Branch)
	}
	if len(snap.Skipped) != 0 || len(snap.Submodules) != 0 {
		t.Errorf("skipped %v submodules %v, want none", snap.Skipped, snap.Submodules)
	}

	// A clean tree captures to HEAD's tree.
	r2 := gittest.New(t)
	r2.Write("a", "a\n")
	r2.Commit("init")
	if snap := capture(t, r2, plumbing.CaptureOptions{}); snap.Tree != plumbing.OID(r2.Line("rev-parse", "HEAD^{tree}")) || snap.Changed != 0 {
		t.Errorf("clean tree: %s (%d changed), want HEAD's tree", snap.Tree, snap.Changed)
	}
}

// TestCaptureDetachedHead records no branch.
func TestCaptureDetachedHead(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("a", "a\n")
	head := r.Commit("init")
	r.Git("checkout", "-q", "--detach")
	snap := capture(t, r, plumbing.CaptureOptions{})
	if snap.Head != plumbing.OID(head) || snap.Branch != "" {
		t.Errorf("head %q branch %q, want %s and none", snap.Head, snap.Branch, head)
	}
}

// TestBR31SymlinksFalse: with core.symlinks=false the plain stand-in file
// keeps its 120000 entry, so there is no type change every turn.
func TestBR31SymlinksFalse(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("CLAUDE.md", "# rules\n")
	os.Symlink("CLAUDE.md", r.Path("AGENTS.md"))
	r.Commit("init")
	r.Git("config", "core.symlinks", "false")
	os.Remove(r.Path("AGENTS.md"))
	r.Git("checkout", "--", "AGENTS.md")
	r.Write("CLAUDE.md", "# rules\nmore\n")
	snap := capture(t, r, plumbing.CaptureOptions{})
	assertTree(t, r, snap.Tree, map[string]want{
		"CLAUDE.md": file("# rules\nmore\n"),
		"AGENTS.md": link("CLAUDE.md"),
	})
}

// TestBR55UnbornHead: a repository with no commit captures with no head,
// and an empty tree is a tree like any other.
func TestBR55UnbornHead(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	snap := capture(t, r, plumbing.CaptureOptions{})
	if snap.Tree != plumbing.EmptyTree || snap.Head != "" || snap.Branch != "main" {
		t.Errorf("empty unborn repo: tree %s head %q branch %q", snap.Tree, snap.Head, snap.Branch)
	}
	if _, err := os.Stat(filepath.Join(r.GitDir, "index")); err == nil {
		t.Error("the capture created the user's index")
	}
	r.Write("a.txt", "a\n")
	r.Write("staged.txt", "s\n")
	r.Git("add", "staged.txt")
	snap = capture(t, r, plumbing.CaptureOptions{})
	assertTree(t, r, snap.Tree, map[string]want{"a.txt": file("a\n"), "staged.txt": file("s\n")})
	if snap.Head != "" {
		t.Errorf("head %q, want none", snap.Head)
	}
	if _, err := r.GitErr("rev-parse", "-q", "--verify", "HEAD"); err == nil {
		t.Error("HEAD is no longer unborn")
	}
	// Everything deleted again: the empty tree.
	os.Remove(r.Path("a.txt"))
	os.Remove(r.Path("staged.txt"))
	if snap := capture(t, r, plumbing.CaptureOptions{}); snap.Tree != plumbing.EmptyTree {
		t.Errorf("all deleted: tree %s, want the empty tree", snap.Tree)
	}
}

// TestBR38TrickyNames: every name is captured exactly, never read as a
// pathspec, and the size skip of '*.bin' swallows no other .bin file.
func TestBR38TrickyNames(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("a", "a\n")
	r.Write("tracked :colon", "c\n")
	r.Commit("init")
	w := map[string]want{"a": file("a\n"), "tracked :colon": file("c\n changed\n")}
	r.Write("tracked :colon", "c\n changed\n")
	for _, n := range namesFor(t, r) {
		if n == "--" {
			continue // git forbids no name, but '--' alone is kept for the parser tests
		}
		r.Write(n, n+"\n")
		w[n] = file(n + "\n")
		r.Write("dir "+n+"/x", n+"\n")
		w["dir "+n+"/x"] = file(n + "\n")
	}
	r.Write("*.bin", strings.Repeat("x", 100))
	r.Write("model.bin", "small\n")
	w["model.bin"] = file("small\n")
	snap := capture(t, r, plumbing.CaptureOptions{MaxFileBytes: 50})
	assertTree(t, r, snap.Tree, w)
	if got := skips(snap); !reflect.DeepEqual(got, []plumbing.Skip{{Path: "*.bin", Bytes: 100, Reason: "too_big"}}) {
		t.Errorf("skipped %+v, want only *.bin", got)
	}
}

// TestBR24MaxFileBytes: files over maxFileBytes, new or changed, are
// skipped and listed; the tree keeps what the index had for them.
func TestBR24MaxFileBytes(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("big-tracked.dat", "small at first\n")
	r.Write("unchanged-big.dat", strings.Repeat("u", 200))
	r.Commit("init")
	r.Write("big-tracked.dat", strings.Repeat("b", 300))
	r.Write("dataset.bin", strings.Repeat("d", 101))
	r.Write("edge.bin", strings.Repeat("e", 100))
	snap := capture(t, r, plumbing.CaptureOptions{MaxFileBytes: 100})
	assertTree(t, r, snap.Tree, map[string]want{
		"big-tracked.dat":   file("small at first\n"),
		"unchanged-big.dat": file(strings.Repeat("u", 200)),
		"edge.bin":          file(strings.Repeat("e", 100)),
	})
	wantSkips := []plumbing.Skip{
		{Path: "big-tracked.dat", Bytes: 300, Reason: "too_big"},
		{Path: "dataset.bin", Bytes: 101, Reason: "too_big"},
	}
	if got := skips(snap); !reflect.DeepEqual(got, wantSkips) {
		t.Errorf("skipped %+v, want %+v", got, wantSkips)
	}
	// Skipped files are only stat'ed: no blob of theirs was written.
	for _, c := range []string{strings.Repeat("b", 300), strings.Repeat("d", 101)} {
		if _, err := r.GitErr("cat-file", "-e", r.HashBlob(c)); err == nil {
			t.Errorf("a skipped file of %d bytes was hashed into the object store", len(c))
		}
	}
}

// TestBR27StatCache: the capture starts from a copy of the real index and
// its stat data, so an unchanged tracked file is never read again (a
// read-tree start re-hashes every file, BR-27). A clean filter that logs
// each file git reads through it shows which ones were.
func TestBR27StatCache(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	spy := filepath.Join(t.TempDir(), "spy.log")
	r.Git("config", "filter.spy.clean", "echo %f >> '"+spy+"'; cat")
	r.Write(".gitattributes", "* filter=spy\n")
	old := time.Now().Add(-time.Hour)
	for i := 0; i < 20; i++ {
		p := fmt.Sprintf("f%02d.txt", i)
		r.Write(p, p+"\n")
		os.Chtimes(r.Path(p), old, old) // not racily clean
	}
	r.Write("a", "a\n")
	os.Chtimes(r.Path("a"), old, old)
	os.Chtimes(r.Path(".gitattributes"), old, old)
	r.Commit("init")
	os.Remove(spy)
	r.Write("a", "edited\n")
	r.Write("new.txt", "n\n")
	snap := capture(t, r, plumbing.CaptureOptions{})
	if got, _ := r.Show(string(snap.Tree), "a"); got != "edited\n" {
		t.Errorf("a = %q", got)
	}
	read, _ := os.ReadFile(spy)
	seen := map[string]bool{}
	for _, p := range strings.Fields(string(read)) {
		seen[p] = true
	}
	for p := range seen {
		if p != "a" && p != "new.txt" {
			t.Errorf("the capture read the unchanged %s (read: %q)", p, read)
		}
	}
	if !seen["a"] || !seen["new.txt"] {
		t.Errorf("the filter did not see the changed files (read: %q): the test does not test", read)
	}
}

// TestBR25MaxTotalBytes: past maxTotalBytes the capture fails naming the
// five largest paths, and writes no object.
func TestBR25MaxTotalBytes(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("a", "a\n")
	r.Commit("init")
	for i, n := range []int{10, 70, 20, 60, 30, 50, 40} {
		r.Write("build-out/chunk"+string(rune('a'+i))+".o", strings.Repeat("x", n))
	}
	r.Write("skipped-big", strings.Repeat("s", 500)) // over maxFileBytes: not counted
	objs := r.ObjectFiles()
	_, err := captureErr(t, r, plumbing.CaptureOptions{MaxFileBytes: 400, MaxTotalBytes: 250})
	var tl *plumbing.TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("err = %v, want a TooLargeError", err)
	}
	if tl.Bytes != 280 {
		t.Errorf("bytes %d, want 280", tl.Bytes)
	}
	wantLargest := []string{"build-out/chunkb.o", "build-out/chunkd.o", "build-out/chunkf.o", "build-out/chunkg.o", "build-out/chunke.o"}
	if !reflect.DeepEqual(tl.Largest, wantLargest) {
		t.Errorf("largest %v, want %v", tl.Largest, wantLargest)
	}
	if got := r.ObjectFiles(); !reflect.DeepEqual(got, objs) {
		t.Errorf("objects were written: %v -> %v", objs, got)
	}
	// At the limit it is fine.
	if _, err := captureErr(t, r, plumbing.CaptureOptions{MaxFileBytes: 400, MaxTotalBytes: 280}); err != nil {
		t.Errorf("at the limit: %v", err)
	}
}

// TestBR12AssumeUnchanged: an edit to an assume-unchanged path is captured,
// and the bit stays set in the user's index (byte for byte unchanged, with
// a partial staging and an intent-to-add entry beside it).
func TestBR12AssumeUnchanged(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("f.txt", "l1\nl2\nl3\n")
	r.Write("local.cfg", "cfg\n")
	r.Commit("init")
	r.Write("f.txt", "l1 staged\nl2\nl3\n")
	r.Git("add", "f.txt")
	r.Write("f.txt", "l1 staged\nl2\nl3 unstaged\n")
	r.Write("new.txt", "n\n")
	r.Git("add", "-N", "new.txt")
	r.Git("update-index", "--assume-unchanged", "local.cfg")
	r.Write("local.cfg", "changed\n")
	cached := r.Git("diff", "--cached")
	snap := capture(t, r, plumbing.CaptureOptions{})
	assertTree(t, r, snap.Tree, map[string]want{
		"f.txt": file("l1 staged\nl2\nl3 unstaged\n"), "local.cfg": file("changed\n"), "new.txt": file("n\n"),
	})
	if got := r.Git("ls-files", "-v", "local.cfg"); !strings.HasPrefix(got, "h ") {
		t.Errorf("ls-files -v local.cfg = %q, want the assume-unchanged bit kept", got)
	}
	if got := r.Git("diff", "--cached"); got != cached {
		t.Errorf("staged changes moved:\n%s\nwant\n%s", got, cached)
	}
}

// TestBR56SkipWorktree: skip-worktree paths, from a cone sparse checkout
// or set by hand, keep the index's content and are listed as skipped.
func TestBR56SkipWorktree(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("keep/k.txt", "k\n")
	r.Write("keep/manual.txt", "m\n")
	r.Write("other/o.txt", "o\n")
	r.Commit("init")
	r.Git("sparse-checkout", "set", "--cone", "keep")
	if _, err := os.Stat(r.Path("other")); err == nil {
		t.Fatal("sparse checkout left other/")
	}
	r.Git("update-index", "--skip-worktree", "keep/manual.txt")
	os.Remove(r.Path("keep/manual.txt")) // deleted inside the cone, but skip-worktree by hand
	r.Write("keep/k.txt", "k2\n")
	snap := capture(t, r, plumbing.CaptureOptions{})
	assertTree(t, r, snap.Tree, map[string]want{
		"keep/k.txt": file("k2\n"), "keep/manual.txt": file("m\n"), "other/o.txt": file("o\n"),
	})
	wantSkips := []plumbing.Skip{
		{Path: "keep/manual.txt", Reason: "skip_worktree"},
		{Path: "other/o.txt", Reason: "skip_worktree"},
	}
	if got := skips(snap); !reflect.DeepEqual(got, wantSkips) {
		t.Errorf("skipped %+v, want %+v", got, wantSkips)
	}
	ls := r.Git("ls-files", "-v")
	if !strings.Contains(ls, "S other/o.txt\n") || !strings.Contains(ls, "S keep/manual.txt\n") {
		t.Errorf("skip-worktree bits lost:\n%s", ls)
	}

	// Without a sparse checkout, a skip-worktree file that is present and
	// edited keeps the index's content too. (With one, git itself clears
	// the bit of present files when it reads the index.)
	m := gittest.New(t)
	m.Write("conf.yml", "shared\n")
	m.Commit("init")
	m.Git("update-index", "--skip-worktree", "conf.yml")
	m.Write("conf.yml", "my local settings\n")
	snap = capture(t, m, plumbing.CaptureOptions{})
	assertTree(t, m, snap.Tree, map[string]want{"conf.yml": file("shared\n")})
	if got := skips(snap); !reflect.DeepEqual(got, []plumbing.Skip{{Path: "conf.yml", Bytes: 18, Reason: "skip_worktree"}}) {
		t.Errorf("skipped %+v", got)
	}
	if ls := m.Git("ls-files", "-v"); ls != "S conf.yml\n" {
		t.Errorf("ls-files -v: %q", ls)
	}
}

// TestBR21NestedRepos: nested repositories (a .git directory, a .git file,
// one with no commit) are reported, and recorded in the tree as gitlinks at
// their HEAD, nothing inside (RFC 4, 4.2); one with no commit has no entry
// (a gitlink needs one); the rest of the tree is captured, never a stale
// tree; nested repositories in ignored directories are neither reported
// nor entered (BR-28).
func TestBR21NestedRepos(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write(".gitignore", "node_modules/\n")
	r.Write("file.txt", "v1\n")
	r.Commit("init")
	r.Write("file.txt", "v2\n")

	commit := func(n *gittest.Repo, path, content string) string {
		n.Write(path, content)
		n.Git("add", path)
		n.Git("-c", "user.name=N", "-c", "user.email=n@x", "commit", "-q", "-m", path)
		return n.Line("rev-parse", "HEAD")
	}
	clean := nested(t, r.Path("clean-clone"))
	cleanHead := commit(clean, "c", "c\n")
	dirty := nested(t, r.Path("deep/dirty-clone"))
	dirtyHead := commit(dirty, "d", "d\n")
	dirty.Write("d", "edited\n")
	// A .git file pointing at a git directory elsewhere.
	sep := filepath.Join(t.TempDir(), "sep.git")
	gf := nested(t, r.Path("gitfile-repo"), "--separate-git-dir", sep)
	gfHead := commit(gf, "g", "g\n")
	unborn := nested(t, r.Path("scratch-clone"))
	unborn.Write("z", "z\n")
	ignored := nested(t, r.Path("node_modules/.pnpm/p1"))
	commit(ignored, "i.js", "i\n")
	ignored.Write("i.js", "dirty\n")

	snap := capture(t, r, plumbing.CaptureOptions{})
	assertTree(t, r, snap.Tree, map[string]want{".gitignore": file("node_modules/\n"), "file.txt": file("v2\n"),
		"clean-clone": gitlink(cleanHead), "deep/dirty-clone": gitlink(dirtyHead), "gitfile-repo": gitlink(gfHead)})
	str := func(s string) *string { return &s }
	wantSubs := []plumbing.Submodule{
		{Path: "clean-clone", Commit: str(cleanHead), Dirty: false},
		{Path: "deep/dirty-clone", Commit: str(dirtyHead), Dirty: true},
		{Path: "gitfile-repo", Commit: str(gfHead), Dirty: false},
		{Path: "scratch-clone", Commit: nil, Dirty: true},
	}
	if !reflect.DeepEqual(snap.Submodules, wantSubs) {
		t.Errorf("submodules:\n got %s\nwant %s", subString(snap.Submodules), subString(wantSubs))
	}
}

// nested makes a repository at dir, inside another one's tree.
func nested(t *testing.T, dir string, initArgs ...string) *gittest.Repo {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	n := &gittest.Repo{T: t, Dir: dir, GitDir: filepath.Join(dir, ".git")}
	n.Git(append([]string{"init", "-q", "-b", "main"}, initArgs...)...)
	return n
}

func subString(s []plumbing.Submodule) string {
	var b strings.Builder
	for _, x := range s {
		c := "null"
		if x.Commit != nil {
			c = *x.Commit
		}
		b.WriteString("{" + x.Path + " " + c + " dirty=" + map[bool]string{true: "true", false: "false"}[x.Dirty] + "} ")
	}
	return b.String()
}

// TestCaptureSubmodule: a real submodule is recorded as a gitlink at the
// commit it is at (not the one the index has), nothing inside it, and its
// own index and files are left alone.
func TestCaptureSubmodule(t *testing.T) {
	t.Parallel()
	up := gittest.New(t)
	up.Write("lib.c", "v1\n")
	up.Commit("lib v1")
	r := gittest.New(t)
	r.Write("main.c", "main\n")
	r.Commit("init")
	r.Git("-c", "protocol.file.allow=always", "submodule", "add", "-q", up.Dir, "sub")
	r.Commit("add sub")
	old := r.Line("rev-parse", "HEAD:sub")

	snap := capture(t, r, plumbing.CaptureOptions{})
	if snap.Tree != plumbing.OID(r.Line("rev-parse", "HEAD^{tree}")) {
		t.Errorf("clean tree with a submodule: %s, want HEAD's tree", snap.Tree)
	}
	str := func(s string) *string { return &s }
	if want := []plumbing.Submodule{{Path: "sub", Commit: str(old)}}; !reflect.DeepEqual(snap.Submodules, want) {
		t.Errorf("submodules %s, want %s", subString(snap.Submodules), subString(want))
	}

	// A new commit in the submodule, not staged in the superproject, and an
	// uncommitted edit inside it.
	sub := gittest.At(t, r.Path("sub"))
	sub.Write("lib.c", "v2\n")
	sub.Git("-c", "user.name=N", "-c", "user.email=n@x", "commit", "-q", "-am", "v2")
	moved := sub.Line("rev-parse", "HEAD")
	sub.Write("lib.c", "v3 uncommitted\n")
	r.Write("main.c", "main 2\n")
	snap = capture(t, r, plumbing.CaptureOptions{})
	assertTree(t, r, snap.Tree, map[string]want{
		".gitmodules": file(r.Read(".gitmodules")), "main.c": file("main 2\n"), "sub": gitlink(moved),
	})
	if want := []plumbing.Submodule{{Path: "sub", Commit: str(moved), Dirty: true}}; !reflect.DeepEqual(snap.Submodules, want) {
		t.Errorf("submodules %s, want %s", subString(snap.Submodules), subString(want))
	}
}

// TestBR19UnmergedIndex: a capture in the middle of a conflicted rebase
// records the work tree's content and leaves the unmerged index and the
// rebase state alone.
func TestBR19UnmergedIndex(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("f", "base\n")
	r.Commit("base")
	r.Git("checkout", "-q", "-b", "topic")
	r.Write("f", "topic\n")
	r.Commit("topic")
	r.Git("checkout", "-q", "main")
	r.Write("f", "main\n")
	r.Commit("main")
	r.Git("checkout", "-q", "topic")
	if _, err := r.GitErr("rebase", "main"); err == nil {
		t.Fatal("rebase did not stop on the conflict")
	}
	r.Write("f", "resolved by hand\n")
	snap := capture(t, r, plumbing.CaptureOptions{})
	assertTree(t, r, snap.Tree, map[string]want{"f": file("resolved by hand\n")})
	if r.Git("ls-files", "-u", "--", "f") == "" {
		t.Error("the unmerged entries are gone from the user's index")
	}
}

// TestBR19UnmergedTooBig: a conflicted file over maxFileBytes is skipped
// like any other, keeping our side, instead of making write-tree fail on
// its unmerged entries (and so every capture until the merge ends). A
// conflicted file our side deleted is left out.
func TestBR19UnmergedTooBig(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("f", "base\n")
	r.Write("big", "small\n")
	r.Write("gone", "base\n")
	r.Commit("base")
	r.Git("checkout", "-q", "-b", "topic")
	r.Write("f", "topic\n")
	r.Write("big", strings.Repeat("t", 300))
	r.Write("gone", "topic edits it\n")
	r.Commit("topic")
	r.Git("checkout", "-q", "main")
	r.Write("f", "main\n")
	r.Write("big", strings.Repeat("m", 400))
	os.Remove(r.Path("gone"))
	r.Commit("main deletes gone")
	if _, err := r.GitErr("merge", "-q", "topic"); err == nil {
		t.Fatal("merge did not stop on the conflicts")
	}
	r.Write("gone", strings.Repeat("g", 500)) // conflicted, deleted by ours, big
	r.Write("f", "resolved\n")
	snap := capture(t, r, plumbing.CaptureOptions{MaxFileBytes: 100})
	assertTree(t, r, snap.Tree, map[string]want{"f": file("resolved\n"), "big": file(strings.Repeat("m", 400))})
	wantSkips := []plumbing.Skip{
		{Path: "big", Bytes: int64(len(r.Read("big"))), Reason: "too_big"},
		{Path: "gone", Bytes: 500, Reason: "too_big"},
	}
	if got := skips(snap); !reflect.DeepEqual(got, wantSkips) {
		t.Errorf("skipped %+v, want %+v", got, wantSkips)
	}
	if r.Git("ls-files", "-u", "--", "big") == "" {
		t.Error("the user's unmerged entries are gone")
	}
}

// TestBR19UnmergedModes: with core.fileMode or core.symlinks off, a
// conflicted path is recorded with the mode `git add` gives it, taken
// from our side's entry (stage 2, else 1), not the 100644 update-index
// alone makes of a path with no stage-0 entry (RFC 4.1 step 4).
func TestBR19UnmergedModes(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Git("config", "core.fileMode", "false")
	r.Git("config", "core.symlinks", "false")
	for _, p := range []string{"run.sh", "link", "theirs.sh"} {
		r.Write(p, "base\n")
	}
	r.Git("add", "-A")
	r.Git("update-index", "--chmod=+x", "run.sh", "theirs.sh")
	// A symbolic link as git records it where the file system has none:
	// a 120000 entry, a regular file holding the target. git add keeps
	// the entry's mode from then on.
	r.Git("update-index", "--cacheinfo", "120000,"+r.Line("hash-object", "link")+",link")
	r.Commit("base")
	r.Git("checkout", "-q", "-b", "topic")
	for _, p := range []string{"run.sh", "link", "theirs.sh"} {
		r.Write(p, "topic\n")
	}
	r.Commit("topic")
	r.Git("checkout", "-q", "main")
	r.Write("run.sh", "main\n")
	r.Write("link", "main\n")
	r.Git("rm", "-q", "theirs.sh")
	r.Commit("main")
	if _, err := r.GitErr("merge", "-q", "topic"); err == nil {
		t.Fatal("merge did not stop on the conflicts")
	}
	if got := r.Git("ls-files", "-u", "--", "theirs.sh"); strings.Count(got, "\n") != 2 {
		t.Fatalf("theirs.sh is not deleted by us, unmerged: %q", got)
	}
	r.Write("run.sh", "resolved\n")
	r.Write("link", "resolved\n")
	r.Write("theirs.sh", "kept\n") // deleted by us: stage 1's mode
	snap := capture(t, r, plumbing.CaptureOptions{})
	assertTree(t, r, snap.Tree, map[string]want{
		"run.sh": exec("resolved\n"), "link": link("resolved\n"), "theirs.sh": exec("kept\n"),
	})
	// The same as git add -A on a copy of the index.
	idx := filepath.Join(t.TempDir(), "index")
	b, err := os.ReadFile(filepath.Join(r.GitDir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(idx, b, 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"GIT_INDEX_FILE=" + idx}
	if _, err := r.GitEnv(env, "add", "-A"); err != nil {
		t.Fatal(err)
	}
	if want, err := r.GitEnv(env, "write-tree"); err != nil || string(snap.Tree) != strings.TrimSpace(want) {
		t.Errorf("capture %s, git add -A %s (%v)", snap.Tree, want, err)
	}
}

// TestBR19UnmergedReplaced: a conflicted path now a directory (with
// files, or empty) or below a directory that became a symbolic link is
// recorded as git add -A records it, instead of failing every capture
// until the merge ends ("is a directory", "beyond a symbolic link").
func TestBR19UnmergedReplaced(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		after func(r *gittest.Repo)
		want  map[string]want
	}{
		{"a directory", func(r *gittest.Repo) {
			os.Remove(r.Path("d/c"))
			r.Write("d/c/in", "in\n")
		}, map[string]want{"x": file("x\n"), "d/c/in": file("in\n")}},
		{"an empty directory", func(r *gittest.Repo) {
			os.Remove(r.Path("d/c"))
			os.Mkdir(r.Path("d/c"), 0o755)
		}, map[string]want{"x": file("x\n")}},
		{"beyond a symbolic link", func(r *gittest.Repo) {
			os.RemoveAll(r.Path("d"))
			other := t.TempDir()
			os.WriteFile(filepath.Join(other, "c"), []byte("elsewhere\n"), 0o644)
			os.Symlink(other, r.Path("d"))
		}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := gittest.New(t)
			r.Write("d/c", "base\n")
			r.Write("x", "x\n")
			r.Commit("base")
			r.Git("checkout", "-q", "-b", "topic")
			r.Write("d/c", "topic\n")
			r.Commit("topic")
			r.Git("checkout", "-q", "main")
			r.Write("d/c", "main\n")
			r.Commit("main")
			if _, err := r.GitErr("merge", "-q", "topic"); err == nil {
				t.Fatal("merge did not stop on the conflict")
			}
			c.after(r)
			snap := capture(t, r, plumbing.CaptureOptions{})
			exp := c.want
			if exp == nil {
				target, err := os.Readlink(r.Path("d"))
				if err != nil {
					t.Fatal(err)
				}
				exp = map[string]want{"x": file("x\n"), "d": link(target)}
			}
			assertTree(t, r, snap.Tree, exp)
			if r.Git("ls-files", "-u", "--", "d/c") == "" {
				t.Error("the user's unmerged entries are gone")
			}
		})
	}
}

// TestBR32FileBecomesDirectory: a tracked file replaced by a directory and
// a directory replaced by a file are both captured.
func TestBR32FileBecomesDirectory(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("x", "file\n")
	r.Write("d/inner", "inner\n")
	r.Commit("init")
	os.Remove(r.Path("x"))
	r.Write("x/y", "now a dir\n")
	os.RemoveAll(r.Path("d"))
	r.Write("d", "now a file\n")
	snap := capture(t, r, plumbing.CaptureOptions{})
	assertTree(t, r, snap.Tree, map[string]want{"x/y": file("now a dir\n"), "d": file("now a file\n")})
}

// TestBR15SplitIndex: with a split index that expires shared indexes at
// once, the capture leaves the sharedindex.* files alone and the user's
// status keeps working.
func TestBR15SplitIndex(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Git("config", "core.splitIndex", "true")
	r.Git("config", "splitIndex.maxPercentChange", "1")
	r.Git("config", "splitIndex.sharedIndexExpire", "now")
	w := map[string]want{}
	for i := 0; i < 50; i++ {
		p := "f" + string(rune('a'+i/26)) + string(rune('a'+i%26))
		r.Write(p, p+"\n")
		w[p] = file(p + "\n" + "x\n")
	}
	r.Commit("init")
	shared, _ := filepath.Glob(filepath.Join(r.GitDir, "sharedindex.*"))
	if len(shared) == 0 {
		t.Fatal("no shared index: split index is not on")
	}
	for p := range w {
		r.Write(p, p+"\n"+"x\n")
	}
	r.Write("g", "new\n")
	w["g"] = file("new\n")
	snap := capture(t, r, plumbing.CaptureOptions{}) // compares sharedindex.* byte for byte
	assertTree(t, r, snap.Tree, w)
	if _, err := r.GitErr("status", "--porcelain"); err != nil {
		t.Errorf("the user's status fails after the capture: %v", err)
	}
	snap2 := capture(t, r, plumbing.CaptureOptions{})
	if snap2.Tree != snap.Tree {
		t.Errorf("second capture: %s, want %s", snap2.Tree, snap.Tree)
	}
}

// TestCaptureIgnoreStat: with core.ignoreStat, git marks what update-index
// stages assume-unchanged and then trusts it without looking; a capture
// still takes every changed file's content, on the tree-editing way (the
// entries it seeds from the base tree) and on the full one. Without the
// pin both changed files kept HEAD's content on the tree-editing way.
func TestCaptureIgnoreStat(t *testing.T) {
	t.Parallel()
	for _, way := range []string{"tree edit", "full index"} {
		t.Run(way, func(t *testing.T) {
			t.Parallel()
			r := gittest.New(t)
			r.Write("d/f", "content 0\n")
			r.Write("g", "content 0\n")
			r.Commit("init")
			r.Git("config", "core.ignoreStat", "true")
			if way == "full index" {
				r.Git("config", "core.fileMode", "false")
			}
			r.Write("d/f", "unstaged change\n")
			r.Write("g", "staged, then changed\n")
			r.Git("add", "g") // marked assume-unchanged by git itself
			r.Write("g", "staged, then changed again\n")
			snap := capture(t, r, plumbing.CaptureOptions{})
			assertTree(t, r, snap.Tree, map[string]want{"d/f": file("unstaged change\n"), "g": file("staged, then changed again\n")})
		})
	}
}

// TestBR34SafeCRLF: core.safecrlf=true with autocrlf makes `git add` fatal;
// the capture pins it off and works, and the user's repository stays
// healthy.
func TestBR34SafeCRLF(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("unix.txt", "one\ntwo\n")
	r.Commit("init")
	r.Git("config", "core.autocrlf", "true")
	r.Git("config", "core.safecrlf", "true")
	r.Write("unix.txt", "one\ntwo\nthree\n")
	r.Write("new.txt", "lf only\n")
	// Without the pin, staging into a copy of the index dies.
	copyIdx := filepath.Join(t.TempDir(), "index")
	if err := plumbing.CopyKeepMtime(filepath.Join(r.GitDir, "index"), copyIdx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.GitEnv([]string{"GIT_INDEX_FILE=" + copyIdx}, "update-index", "--add", "unix.txt"); err == nil {
		t.Fatal("update-index under safecrlf=true succeeded: the test does not test the pin")
	}
	snap := capture(t, r, plumbing.CaptureOptions{})
	assertTree(t, r, snap.Tree, map[string]want{"unix.txt": file("one\ntwo\nthree\n"), "new.txt": file("lf only\n")})
	if _, err := r.GitErr("status", "--porcelain"); err != nil {
		t.Errorf("status after the capture: %v", err)
	}
}

// TestCaptureRacyGit: an edit made in the same second as the last index
// write, with the same size, is captured. git's racy-entry check compares
// each entry's mtime with the index file's own, so this holds only because
// the private copy keeps the index's mtime (DESIGN.md section 4): a copy
// stamped a second later makes the edit look clean. Each round waits for
// the next second before capturing, so a plain copy would fail it; the
// rounds run in parallel, so the wait is paid once.
func TestCaptureRacyGit(t *testing.T) {
	t.Parallel()
	for i := 0; i < 6; i++ {
		t.Run(fmt.Sprint("round", i), func(t *testing.T) {
			t.Parallel()
			r := gittest.New(t)
			r.Write("seed", "seed\n")
			r.Commit("init")
			if i == 5 {
				// The private index is rewritten (to clear this bit) before
				// the walk; git smudges racy entries as it writes, against
				// the copy's kept mtime.
				r.Git("update-index", "--assume-unchanged", "seed")
			}
			r.Write("f", "aaaa\n")
			r.Git("add", "f")
			r.Write("f", "bbbb\n") // same size, and most likely the same second
			fst, _ := os.Stat(r.Path("f"))
			ist, _ := os.Stat(filepath.Join(r.GitDir, "index"))
			if fst.ModTime().Unix() != ist.ModTime().Unix() {
				t.Log("the clock ticked between the index write and the edit; this round proves little")
			}
			time.Sleep(time.Until(ist.ModTime().Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
			snap := capture(t, r, plumbing.CaptureOptions{})
			if got, _ := r.Show(string(snap.Tree), "f"); got != "bbbb\n" {
				t.Errorf("captured %q, want the same-second edit %q", got, "bbbb\n")
			}
		})
	}
}

// TestCaptureLinkedWorktree: a capture in a linked worktree captures that
// worktree, from its own index, and leaves the main one alone.
func TestCaptureLinkedWorktree(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("a", "a\n")
	r.Commit("init")
	wtDir := filepath.Join(t.TempDir(), "wt")
	r.Git("worktree", "add", "-q", "-b", "side", wtDir)
	wtDir, _ = filepath.EvalSymlinks(wtDir)
	wt := gittest.At(t, wtDir)
	wt.Write("a", "in the worktree\n")
	wt.Write("scratch.txt", "s\n")
	r.Write("main-only.txt", "m\n")
	mainBefore := r.Snapshot()
	snap := capture(t, wt, plumbing.CaptureOptions{})
	r.AssertUnchanged(mainBefore)
	assertTree(t, wt, snap.Tree, map[string]want{"a": file("in the worktree\n"), "scratch.txt": file("s\n")})
	if snap.Branch != "side" {
		t.Errorf("branch %q, want side", snap.Branch)
	}
}

// TestCaptureCleanFilter: a path with a clean filter is captured as the
// filter gives it (RFC 4: LFS and other clean filters, a pointer).
func TestCaptureCleanFilter(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Git("config", "filter.upper.clean", "tr a-z A-Z")
	r.Git("config", "filter.upper.smudge", "cat")
	r.Write(".gitattributes", "*.up filter=upper\n")
	r.Write("x.up", "hello\n")
	r.Commit("init")
	r.Write("x.up", "hello\nworld\n")
	r.Write("y.up", "new\n")
	r.Write("plain.txt", "lower\n")
	snap := capture(t, r, plumbing.CaptureOptions{})
	assertTree(t, r, snap.Tree, map[string]want{
		".gitattributes": file("*.up filter=upper\n"), "x.up": file("HELLO\nWORLD\n"), "y.up": file("NEW\n"), "plain.txt": file("lower\n"),
	})
}

// TestCaptureSHA256: a SHA-256 repository captures like any other, unborn
// or not.
func TestCaptureSHA256(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Git("init", "-q", "--object-format=sha256", "-b", "main", r.Path("s"))
	s := gittest.At(t, r.Path("s"))
	s.Write("a", "a\n")
	snap := capture(t, s, plumbing.CaptureOptions{})
	if len(snap.Tree) != 64 || snap.Head != "" {
		t.Errorf("unborn: tree %s head %q", snap.Tree, snap.Head)
	}
	assertTree(t, s, snap.Tree, map[string]want{"a": file("a\n")})
	s.Git("add", "a")
	s.Git("-c", "user.name=N", "-c", "user.email=n@x", "commit", "-q", "-m", "a")
	s.Write("a", "b\n")
	snap = capture(t, s, plumbing.CaptureOptions{})
	if len(snap.Head) != 64 {
		t.Errorf("head %q", snap.Head)
	}
	assertTree(t, s, snap.Tree, map[string]want{"a": file("b\n")})
	os.Remove(s.Path("a"))
	if snap := capture(t, s, plumbing.CaptureOptions{}); snap.Tree != plumbing.OID(s.Line("mktree")) {
		t.Errorf("all deleted: %s, want the empty tree", snap.Tree)
	}
}

// TestRefValues (issue 16): the commits of several refs from one
// rev-parse, in order, a tag peeled to its commit; when one names no
// commit (missing, or a tree), each is asked alone, and that one is "".
func TestRefValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, c1, c2 := refsRepo(t)
	r.Git("update-ref", "refs/venom/checkpoints/a/2", c2)
	r.Git("tag", "-a", "-m", "t", "tg", c1)
	r.Git("update-ref", "refs/venom/checkpoints/a/3", r.Line("rev-parse", c2+"^{tree}"))
	repo, err := plumbing.Open(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var trace strings.Builder
	plumbing.SetTrace(repo, &trace)
	got, err := repo.RefValues(ctx, "refs/venom/checkpoints/a/2", "refs/venom/checkpoints/a/1", "refs/tags/tg")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint([]plumbing.OID{plumbing.OID(c2), plumbing.OID(c1), plumbing.OID(c1)}) {
		t.Errorf("RefValues: %v, want %s %s %s", got, c2, c1, c1)
	}
	if n := strings.Count(trace.String(), "venom trace: git "); n != 1 {
		t.Errorf("%d git children, want 1:\n%s", n, trace.String())
	}
	got, err = repo.RefValues(ctx, "refs/venom/checkpoints/a/1", "refs/venom/checkpoints/a/9", "refs/venom/checkpoints/a/3", "refs/venom/checkpoints/a/2")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint([]plumbing.OID{plumbing.OID(c1), "", "", plumbing.OID(c2)}) {
		t.Errorf("RefValues with a missing ref and a tree: %v, want %s, \"\", \"\", %s", got, c1, c2)
	}
}

// TestCaptureReadsRefsWithHead (issue 16): the commits of
// CaptureOptions.Refs come from the child that reads HEAD, in order (a
// tag peeled); when one names no commit, none is read there (Refs nil,
// for the caller to read) and HEAD, its tree and branch are still right,
// as in an unborn repository.
func TestCaptureReadsRefsWithHead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, c1, c2 := refsRepo(t)
	r.Git("tag", "-a", "-m", "t", "tg", c2)
	repo, err := plumbing.Open(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var trace strings.Builder
	plumbing.SetTrace(repo, &trace)
	snap, err := repo.Capture(ctx, plumbing.CaptureOptions{Refs: []string{"refs/venom/checkpoints/a/1", "refs/tags/tg"}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(snap.Refs) != fmt.Sprint([]plumbing.OID{plumbing.OID(c1), plumbing.OID(c2)}) {
		t.Errorf("Refs %v, want %s %s", snap.Refs, c1, c2)
	}
	if string(snap.Head) != c2 || snap.Branch != "main" || string(snap.HeadTree) != r.Line("rev-parse", "HEAD^{tree}") {
		t.Errorf("head %s branch %q tree %s", snap.Head, snap.Branch, snap.HeadTree)
	}
	if n := strings.Count(trace.String(), "venom trace: git rev-parse"); n != 1 {
		t.Errorf("%d rev-parse children, want 1:\n%s", n, trace.String())
	}
	snap, err = repo.Capture(ctx, plumbing.CaptureOptions{Refs: []string{"refs/venom/checkpoints/a/1", "refs/venom/checkpoints/a/9"}})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Refs != nil || string(snap.Head) != c2 || snap.Branch != "main" || string(snap.HeadTree) != r.Line("rev-parse", "HEAD^{tree}") {
		t.Errorf("with a missing ref: refs %v head %s branch %q tree %s", snap.Refs, snap.Head, snap.Branch, snap.HeadTree)
	}
	u := gittest.New(t)
	u.Write("f", "1\n")
	urepo, err := plumbing.Open(ctx, u.Dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err = urepo.Capture(ctx, plumbing.CaptureOptions{Refs: []string{"refs/venom/checkpoints/a/1"}})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Refs != nil || snap.Head != "" || snap.Branch != "main" || snap.Tree == "" {
		t.Errorf("unborn: refs %v head %q branch %q tree %q", snap.Refs, snap.Head, snap.Branch, snap.Tree)
	}
}

// refsRepo is a repository of two commits, c1 and c2 (HEAD, on main),
// with refs/venom/checkpoints/a/1 at c1.
func refsRepo(t *testing.T) (r *gittest.Repo, c1, c2 string) {
	t.Helper()
	r = gittest.New(t)
	r.Write("f", "1\n")
	c1 = r.Commit("one")
	r.Write("f", "2\n")
	c2 = r.Commit("two")
	r.Git("update-ref", "refs/venom/checkpoints/a/1", c1)
	return r, c1, c2
}
