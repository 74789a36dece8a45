package plumbing_test

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/plumbing"
)

// TestNestedRepositoryNamesWithAnyByte: a nested repository is reported in
// RFC 4.2 submodules[] with its HEAD and whether it is clean, and is a
// gitlink at that HEAD in the tree, whatever bytes but NUL its path holds,
// a newline included, as a directory or behind a gitfile (D7 in
// internal/model/regress_test.go); each nested repository costs two git
// children (HEAD, then status), none to find it.
func TestNestedRepositoryNamesWithAnyByte(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("file.txt", "v1\n")
	r.Commit("init")

	commit := func(n *gittest.Repo, path, content string) string {
		n.Write(path, content)
		n.Git("add", path)
		n.Git("-c", "user.name=N", "-c", "user.email=n@x", "commit", "-q", "-m", "c")
		return n.Line("rev-parse", "HEAD")
	}
	str := func(s string) *string { return &s }
	var subs []plumbing.Submodule
	for _, p := range []string{"a\nb", "\n", "deep\n/x\ny\n", " lead and trail ", "tab\there", "quote\"back\\slash"} {
		n := nested(t, r.Path(p))
		subs = append(subs, plumbing.Submodule{Path: p, Commit: str(commit(n, "f\nx", "1\n"))})
	}
	d := nested(t, r.Path("dirty\nclone"))
	subs = append(subs, plumbing.Submodule{Path: "dirty\nclone", Commit: str(commit(d, "f", "1\n")), Dirty: true})
	d.Write("f", "2\n")
	u := nested(t, r.Path("un\nborn"))
	u.Write("z", "z\n")
	subs = append(subs, plumbing.Submodule{Path: "un\nborn", Dirty: true})
	// A .git file naming a git directory whose path holds a newline too.
	sep := filepath.Join(t.TempDir(), "sep\n.git")
	g := nested(t, r.Path("git\nfile"), "--separate-git-dir", sep)
	subs = append(subs, plumbing.Submodule{Path: "git\nfile", Commit: str(commit(g, "g", "g\n"))})

	snap, trace := tracedCapture(t, r, plumbing.CaptureOptions{})
	sort.Slice(subs, func(i, j int) bool { return subs[i].Path < subs[j].Path })
	if !reflect.DeepEqual(snap.Submodules, subs) {
		t.Errorf("submodules:\n got %q\nwant %q", subString(snap.Submodules), subString(subs))
	}
	wantTree := map[string]want{"file.txt": file("v1\n")}
	for _, sm := range subs {
		if sm.Commit != nil {
			wantTree[sm.Path] = gitlink(*sm.Commit)
		}
	}
	assertTree(t, r, snap.Tree, wantTree)
	born := len(subs) - 1
	if got := runs(trace, "--untracked-files=normal"); got != born {
		t.Errorf("%d nested status children, want %d\n%s", got, born, trace)
	}
	if got := runs(trace, "symbolic-ref"); got != 1 {
		t.Errorf("%d symbolic-ref children, want 1 (the unborn one)\n%s", got, trace)
	}
}

// TestNestedRepositoryOfAnotherOwner: a nested repository that another user
// owns is not read by naming its git directory, which would skip git's
// safe.directory check: it is found by discovery, and git refuses it, so it
// is reported as unreadable (commit null, dirty), not entered.
func TestNestedRepositoryOfAnotherOwner(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("giving a directory to another user needs root")
	}
	r := gittest.New(t)
	r.Write("file.txt", "v1\n")
	r.Commit("init")
	n := nested(t, r.Path("theirs"))
	n.Write("f", "1\n")
	n.Git("add", "f")
	n.Git("-c", "user.name=N", "-c", "user.email=n@x", "commit", "-q", "-m", "c")
	const nobody = 65534
	err := filepath.Walk(n.Dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, nobody, nobody)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.Walk(n.Dir, func(p string, _ os.FileInfo, err error) error {
			if err == nil {
				os.Lchown(p, 0, 0)
			}
			return nil
		})
	})
	snap, trace := tracedCapture(t, r, plumbing.CaptureOptions{})
	subs := []plumbing.Submodule{{Path: "theirs", Dirty: true}}
	if !reflect.DeepEqual(snap.Submodules, subs) {
		t.Errorf("submodules %q, want %q", subString(snap.Submodules), subString(subs))
	}
	if got := runs(trace, "--untracked-files=normal"); got != 0 {
		t.Errorf("git status ran in the other user's repository\n%s", trace)
	}
}

// TestRepositoryWhereTrackedFilesWereIsNested: a repository cloned or
// `git init`ed at a directory under which the user's index still tracks
// files is a nested repository like any other, though git's status walks
// into it: its files, tracked and untracked, are not the tree's (every
// entry the index has below it leaves the tree), it is a gitlink at its
// HEAD (no entry when it has no commit), and submodules[] lists it; a
// clone whose files are the index's, which status finds clean, too. A
// directory holding a .git git cannot read stays the tree's. Both ways of
// writing the tree (tree edit, and the full index with core.fileMode
// off), and a second capture that takes the index's answer from the
// cache, agree (issue 13 item 12).
func TestRepositoryWhereTrackedFilesWereIsNested(t *testing.T) {
	t.Parallel()
	for _, way := range []string{"tree edit", "full index"} {
		t.Run(way, func(t *testing.T) {
			t.Parallel()
			r := gittest.New(t)
			r.Write("top.txt", "top\n")
			for _, d := range []string{"vendor/lib", "vendor/same", "scratch", "fake"} {
				r.Write(d+"/a.c", "a\n")
				r.Write(d+"/sub/b.c", "b\n")
			}
			r.Commit("init")
			if way == "full index" {
				r.Git("config", "core.fileMode", "false")
			}
			// A clone at vendor/lib, with other files than the index's.
			if err := os.RemoveAll(r.Path("vendor/lib")); err != nil {
				t.Fatal(err)
			}
			lib := nested(t, r.Path("vendor/lib"))
			lib.Write("a.c", "the clone's own\n")
			lib.Git("add", "a.c")
			lib.Git("-c", "user.name=N", "-c", "user.email=n@x", "commit", "-q", "-m", "c")
			libHead := lib.Line("rev-parse", "HEAD")
			lib.Write("untracked.c", "u\n")
			// `git init` where the files are, and a commit of them as
			// they are: status sees nothing changed.
			same := nested(t, r.Path("vendor/same"))
			same.Git("add", "-A")
			same.Git("-c", "user.name=N", "-c", "user.email=n@x", "commit", "-q", "-m", "c")
			sameHead := same.Line("rev-parse", "HEAD")
			// `git init` with no commit, and a new file in it.
			nested(t, r.Path("scratch")).Write("new.c", "n\n")
			// A directory named .git that is no git directory.
			if err := os.MkdirAll(r.Path("fake/.git"), 0o755); err != nil {
				t.Fatal(err)
			}
			r.Write("fake/a.c", "edited\n")
			str := func(s string) *string { return &s }
			wantSubs := []plumbing.Submodule{
				{Path: "scratch", Dirty: true},
				{Path: "vendor/lib", Commit: str(libHead), Dirty: true},
				{Path: "vendor/same", Commit: str(sameHead)},
			}
			wantTree := map[string]want{"top.txt": file("top\n"), "fake/a.c": file("edited\n"), "fake/sub/b.c": file("b\n"),
				"vendor/lib": gitlink(libHead), "vendor/same": gitlink(sameHead)}
			settle(t, r) // the first capture stores the index's answer, the second takes it
			for i := 0; i < 2; i++ {
				snap, trace := tracedCapture(t, r, plumbing.CaptureOptions{})
				if !reflect.DeepEqual(snap.Submodules, wantSubs) {
					t.Errorf("capture %d: submodules\n got %q\nwant %q", i+1, subString(snap.Submodules), subString(wantSubs))
				}
				assertTree(t, r, snap.Tree, wantTree)
				if i == 1 && !strings.Contains(trace, "index cache: hit") {
					t.Errorf("the second capture did not take the index's answer from the cache:\n%s", trace)
				}
			}
		})
	}
}

// TestHiddenRepositoryFoundWithTheIndexUnchanged: with the index's answer
// taken from the cache (the index has not changed since the last
// capture), a repository made where tracked files are is found by the
// first capture whose status lists something below it (here an untracked
// file of the new repository), and is remembered by the captures of that
// index after it, also once nothing below it differs any more (issue 13
// item 12; nested.go says which directories a capture looks at).
func TestHiddenRepositoryFoundWithTheIndexUnchanged(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("top.txt", "top\n")
	r.Write("vendor/lib/a.c", "a\n")
	r.Commit("init")
	settle(t, r)
	snap, trace := tracedCapture(t, r, plumbing.CaptureOptions{})
	if len(snap.Submodules) != 0 || !strings.Contains(trace, "index cache: miss") {
		t.Fatalf("first capture: submodules %q\n%s", subString(snap.Submodules), trace)
	}
	lib := nested(t, r.Path("vendor/lib"))
	lib.Git("add", "a.c")
	lib.Git("-c", "user.name=N", "-c", "user.email=n@x", "commit", "-q", "-m", "c")
	head := lib.Line("rev-parse", "HEAD")
	lib.Write("new.c", "n\n")
	str := func(s string) *string { return &s }
	for i, step := range []func(){func() {}, func() { os.Remove(r.Path("vendor/lib/new.c")) }} {
		step()
		snap, trace := tracedCapture(t, r, plumbing.CaptureOptions{})
		if !strings.Contains(trace, "index cache: hit") {
			t.Fatalf("capture %d did not take the index's answer from the cache:\n%s", i+2, trace)
		}
		subs := []plumbing.Submodule{{Path: "vendor/lib", Commit: str(head), Dirty: i == 0}}
		if !reflect.DeepEqual(snap.Submodules, subs) {
			t.Errorf("capture %d: submodules %q, want %q", i+2, subString(snap.Submodules), subString(subs))
		}
		assertTree(t, r, snap.Tree, map[string]want{"top.txt": file("top\n"), "vendor/lib": gitlink(head)})
	}
}
