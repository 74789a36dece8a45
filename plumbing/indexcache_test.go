package plumbing_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/plumbing"
)

// tracedCapture is capture (invariant 1 checked around it) with the
// capture's trace: one "venom trace: git ..." line per git child, plus
// the index cache's own lines.
func tracedCapture(t *testing.T, r *gittest.Repo, o plumbing.CaptureOptions) (*plumbing.Snapshot, string) {
	t.Helper()
	before := r.Snapshot()
	repo, err := plumbing.Open(context.Background(), r.Dir)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	var trace bytes.Buffer
	plumbing.SetTrace(repo, &trace)
	snap, err := repo.Capture(context.Background(), o)
	if added := r.AssertUnchanged(before); len(added) > 0 {
		t.Errorf("capture created refs %v", added)
	}
	if err != nil {
		t.Fatalf("capture: %v\ntrace:\n%s", err, trace.String())
	}
	return snap, trace.String()
}

// runs counts the git children in trace whose arguments include sub
// ("ls-files", "write-tree"), whatever -c options come first. Those that
// run in the index of the changed paths alone (stage-*.index) are not
// counted: they ask nothing about the user's index.
func runs(trace, sub string) int { return childRuns(trace, sub, false) }

// childRuns is runs, counting with stage only those that run in a stage
// index, without it only the others.
func childRuns(trace, sub string, stage bool) int {
	n := 0
	for _, l := range strings.Split(trace, "\n") {
		args, ok := strings.CutPrefix(l, "venom trace: git ")
		if !ok {
			continue
		}
		args, env, _ := strings.Cut(args, " [") // the extra environment
		if strings.Contains(env, "/stage-") != stage {
			continue
		}
		if slices.Contains(strings.Fields(args), sub) {
			n++
		}
	}
	return n
}

// settle waits until a capture may store answers about r's index as it
// is now (plumbing's indexSettle after its last change).
func settle(t *testing.T, r *gittest.Repo) {
	t.Helper()
	at, ok := plumbing.IndexSettledAt(filepath.Join(r.GitDir, "index"))
	if !ok {
		t.Skip("the index cache is not used on this system")
	}
	time.Sleep(time.Until(at.Add(20 * time.Millisecond)))
}

// cachePath is r's index cache file.
func cachePath(t *testing.T, r *gittest.Repo) string {
	t.Helper()
	repo, err := plumbing.Open(context.Background(), r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return plumbing.IndexCachePath(repo)
}

// warm makes r's index cache hold its index: it waits for the index to
// settle, captures once (a miss: ls-files and write-tree run) and checks
// that a second capture of the unchanged index runs neither. It returns
// the second capture.
func warm(t *testing.T, r *gittest.Repo) *plumbing.Snapshot {
	t.Helper()
	settle(t, r)
	first, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	if runs(tr, "ls-files") != 1 || runs(tr, "write-tree") != 1 || !strings.Contains(tr, "index cache: miss") {
		t.Fatalf("first capture: want a miss that runs ls-files and write-tree once:\n%s", tr)
	}
	second, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	if runs(tr, "ls-files") != 0 || runs(tr, "write-tree") != 0 || !strings.Contains(tr, "index cache: hit") {
		t.Fatalf("second capture of an unchanged index ran ls-files or write-tree:\n%s", tr)
	}
	if first.Tree != second.Tree || !reflect.DeepEqual(first.Skipped, second.Skipped) ||
		!reflect.DeepEqual(first.Submodules, second.Submodules) || first.Head != second.Head {
		t.Fatalf("the cached capture differs:\n%+v\n%+v", first, second)
	}
	return second
}

// TestIndexCacheHit: the second capture of an unchanged index runs
// neither ls-files nor write-tree, and says the same as the first: the
// tree (HEAD's), and the submodule with the commit the index records.
func TestIndexCacheHit(t *testing.T) {
	t.Parallel()
	up := gittest.New(t)
	up.Write("lib.c", "v1\n")
	up.Commit("lib v1")
	r := gittest.New(t)
	r.Write("main.c", "main\n")
	r.Write("dir/a b.txt", "a\n")
	r.Commit("init")
	r.Git("-c", "protocol.file.allow=always", "submodule", "add", "-q", up.Dir, "sub")
	r.Commit("add sub")
	snap := warm(t, r)
	if snap.Tree != plumbing.OID(r.Line("rev-parse", "HEAD^{tree}")) {
		t.Errorf("tree %s, want HEAD's", snap.Tree)
	}
	str := func(s string) *string { return &s }
	if want := []plumbing.Submodule{{Path: "sub", Commit: str(r.Line("rev-parse", "HEAD:sub"))}}; !reflect.DeepEqual(snap.Submodules, want) {
		t.Errorf("submodules %s, want %s", subString(snap.Submodules), subString(want))
	}
	if _, err := os.Stat(cachePath(t, r)); err != nil {
		t.Errorf("no cache file: %v", err)
	}

	// A changed work tree with the same index: ls-files still comes from
	// the cache, and so does the index's tree, which the changed path is
	// written into with mktree: no write-tree.
	r.Write("main.c", "main 2\n")
	snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	if runs(tr, "ls-files") != 0 || runs(tr, "write-tree") != 0 || runs(tr, "mktree") != 1 {
		t.Errorf("edited tree, same index: want no ls-files, no write-tree and one mktree:\n%s", tr)
	}
	if got, _ := r.Show(string(snap.Tree), "main.c"); got != "main 2\n" {
		t.Errorf("main.c captured as %q", got)
	}
}

// zeroChecksum replaces r's index with a copy whose trailing checksum is
// zeros, as git 2.40's index.skipHash writes it (git does not check it
// when it reads an index): a new file, changed just now.
func zeroChecksum(t *testing.T, r *gittest.Repo) {
	t.Helper()
	p := filepath.Join(r.GitDir, "index")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	clear(b[len(b)-20:])
	if err := os.WriteFile(p+".zeroed", b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".zeroed", p); err != nil {
		t.Fatal(err)
	}
}

// youngCapture is tracedCapture of r's index, skipping the test when the
// capture did not end within the settle time of the index's last change.
func youngCapture(t *testing.T, r *gittest.Repo) (*plumbing.Snapshot, string) {
	t.Helper()
	at, ok := plumbing.IndexSettledAt(filepath.Join(r.GitDir, "index"))
	if !ok {
		t.Skip("the index cache is not used on this system")
	}
	snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	if time.Now().After(at) {
		t.Skip("the machine is too slow to capture within the settle time")
	}
	return snap, tr
}

// TestIndexCacheYoungIndex (issue 16): answers about an index git wrote
// just now are stored, since its checksum tells it from any other index
// file: the next capture, in another process, runs neither ls-files nor
// write-tree and captures the same tree. An index changed less than the
// settle time ago whose checksum is zeros (index.skipHash) is not stored
// (two index writes within one tick of the file system's clock could
// share a key), so the next capture asks git again.
func TestIndexCacheYoungIndex(t *testing.T) {
	t.Parallel()
	t.Run("checksum", func(t *testing.T) {
		t.Parallel()
		r := gittest.New(t)
		r.Write("f", "f\n")
		r.Write("d/g", "g\n")
		r.Commit("init")
		r.Git("checkout", "-q", "HEAD", "--", "f") // rewrites the index
		first, tr := youngCapture(t, r)
		if runs(tr, "ls-files") != 1 || runs(tr, "write-tree") != 1 || strings.Contains(tr, "not stored") {
			t.Fatalf("first capture: want ls-files and write-tree once, and the answers stored:\n%s", tr)
		}
		second, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
		if runs(tr, "ls-files") != 0 || runs(tr, "write-tree") != 0 || !strings.Contains(tr, "index cache: hit") {
			t.Errorf("second capture of the index git wrote just before asked git again:\n%s", tr)
		}
		if head := plumbing.OID(r.Line("rev-parse", "HEAD^{tree}")); first.Tree != head || second.Tree != head {
			t.Errorf("trees %s, %s; want HEAD's %s", first.Tree, second.Tree, head)
		}
	})
	t.Run("zeros", func(t *testing.T) {
		t.Parallel()
		r := gittest.New(t)
		r.Write("f", "f\n")
		r.Commit("init")
		zeroChecksum(t, r)
		_, tr := youngCapture(t, r)
		if !strings.Contains(tr, "index cache: not stored") {
			t.Errorf("a young index without a checksum was cached:\n%s", tr)
		}
		if _, err := os.Stat(cachePath(t, r)); !os.IsNotExist(err) {
			t.Errorf("cache file written for a young index without a checksum: %v", err)
		}
		if _, tr := tracedCapture(t, r, plumbing.CaptureOptions{}); runs(tr, "ls-files") != 1 {
			t.Errorf("the next capture did not ask git:\n%s", tr)
		}
	})
}

// TestIndexCacheSameKeyOtherContent (issue 16): an index rewritten within
// the settle time of the one the cache stored answers about, with the
// same stat identity (device, inode, size and both times, which the
// kernel's reuse of an inode number within one clock tick can give it)
// but other content, does not get the old answers: its checksum differs.
// Here the rewrite sets an assume-unchanged bit (same size) over a change
// to f; the old answers would leave the bit in the private copy and miss
// the change.
func TestIndexCacheSameKeyOtherContent(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("f", "1\n")
	r.Write("d/g", "2\n")
	r.Commit("one")
	r.Git("checkout", "-q", "HEAD", "--", "f")
	youngCapture(t, r)
	r.Write("f", "changed under the bit\n")
	r.Git("update-index", "--assume-unchanged", "f")
	repo, err := plumbing.Open(context.Background(), r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := plumbing.RekeyIndexCache(repo); err != nil {
		t.Fatalf("the first capture stored no answers about a young index with a checksum: %v", err)
	}
	snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	if !strings.Contains(tr, "index cache: miss (the index changed)") || runs(tr, "ls-files") != 1 || runs(tr, "--no-assume-unchanged") != 1 {
		t.Errorf("the old answers were taken for other content under the same identity:\n%s", tr)
	}
	if got := r.Line("cat-file", "-p", string(snap.Tree)+":f"); got != "changed under the bit" {
		t.Errorf("f in the tree: %q, want the change under the assume-unchanged bit", got)
	}
}

// TestIndexCacheMisses: after each change to the index, and with a
// corrupt or unreadable cache file, the capture asks git again
// (ls-files runs) and captures what a capture without a cache would.
func TestIndexCacheMisses(t *testing.T) {
	t.Parallel()
	type change struct {
		// do changes r after the cache is warm; check checks the capture
		// that follows, whose trace is tr.
		do    func(t *testing.T, r *gittest.Repo)
		check func(t *testing.T, r *gittest.Repo, snap *plumbing.Snapshot, tr string)
	}
	mustList := func(t *testing.T, tr string) {
		t.Helper()
		if runs(tr, "ls-files") == 0 || runs(tr, "write-tree") != 1 {
			t.Errorf("the cache was used; want ls-files and write-tree:\n%s", tr)
		}
	}
	corrupt := func(content string) change {
		return change{
			do: func(t *testing.T, r *gittest.Repo) {
				if err := os.WriteFile(cachePath(t, r), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, r *gittest.Repo, snap *plumbing.Snapshot, tr string) {
				mustList(t, tr)
				if snap.Tree != plumbing.OID(r.Line("rev-parse", "HEAD^{tree}")) {
					t.Errorf("tree %s, want HEAD's", snap.Tree)
				}
				// The miss stored a good entry again.
				if _, tr := tracedCapture(t, r, plumbing.CaptureOptions{}); runs(tr, "ls-files")+runs(tr, "write-tree") != 0 {
					t.Errorf("the cache was not repaired:\n%s", tr)
				}
			},
		}
	}
	cases := map[string]change{
		"git add": {
			do: func(t *testing.T, r *gittest.Repo) {
				r.Write("new.txt", "n\n")
				r.Git("add", "new.txt")
			},
			check: func(t *testing.T, r *gittest.Repo, snap *plumbing.Snapshot, tr string) {
				mustList(t, tr)
				if got, _ := r.Show(string(snap.Tree), "new.txt"); got != "n\n" {
					t.Errorf("new.txt captured as %q", got)
				}
			},
		},
		"assume-unchanged": {
			do: func(t *testing.T, r *gittest.Repo) {
				r.Git("update-index", "--assume-unchanged", "keep/k.txt")
				r.Write("keep/k.txt", "hidden edit\n")
			},
			check: func(t *testing.T, r *gittest.Repo, snap *plumbing.Snapshot, tr string) {
				mustList(t, tr)
				if runs(tr, "--no-assume-unchanged") != 1 {
					t.Errorf("the bit was not cleared in the private index:\n%s", tr)
				}
				if got, _ := r.Show(string(snap.Tree), "keep/k.txt"); got != "hidden edit\n" {
					t.Errorf("keep/k.txt captured as %q", got)
				}
				if got := r.Git("ls-files", "-v", "keep/k.txt"); got != "h keep/k.txt\n" {
					t.Errorf("ls-files -v = %q, want the bit kept in the user's index", got)
				}
			},
		},
		"sparse-checkout set": {
			do: func(t *testing.T, r *gittest.Repo) { r.Git("sparse-checkout", "set", "--cone", "keep") },
			check: func(t *testing.T, r *gittest.Repo, snap *plumbing.Snapshot, tr string) {
				mustList(t, tr)
				if want := []plumbing.Skip{{Path: "other/o.txt", Reason: "skip_worktree"}}; !reflect.DeepEqual(skips(snap), want) {
					t.Errorf("skipped %+v, want %+v", skips(snap), want)
				}
				if snap.Tree != plumbing.OID(r.Line("rev-parse", "HEAD^{tree}")) {
					t.Errorf("tree %s, want HEAD's", snap.Tree)
				}
			},
		},
		"submodule commit staged": {
			do: func(t *testing.T, r *gittest.Repo) {
				sub := gittest.At(t, r.Path("sub"))
				sub.Write("lib.c", "v2\n")
				sub.Git("-c", "user.name=N", "-c", "user.email=n@x", "commit", "-q", "-am", "v2")
				r.Git("add", "sub")
			},
			check: func(t *testing.T, r *gittest.Repo, snap *plumbing.Snapshot, tr string) {
				mustList(t, tr)
				moved := r.Line("-C", "sub", "rev-parse", "HEAD")
				if got := r.Tree(string(snap.Tree))["sub"]; got.Mode != "160000" || got.OID != moved {
					t.Errorf("sub captured as %+v, want the gitlink %s", got, moved)
				}
				if len(snap.Submodules) != 1 || *snap.Submodules[0].Commit != moved {
					t.Errorf("submodules %s, want sub at %s", subString(snap.Submodules), moved)
				}
			},
		},
		"submodule commit not staged": {
			// The index does not change: its answers still hold, but the
			// new commit is written to the private index, so the cached
			// clean tree is not used.
			do: func(t *testing.T, r *gittest.Repo) {
				sub := gittest.At(t, r.Path("sub"))
				sub.Write("lib.c", "v2\n")
				sub.Git("-c", "user.name=N", "-c", "user.email=n@x", "commit", "-q", "-am", "v2")
			},
			check: func(t *testing.T, r *gittest.Repo, snap *plumbing.Snapshot, tr string) {
				if runs(tr, "ls-files") != 0 || runs(tr, "write-tree") != 0 || runs(tr, "mktree") != 1 {
					t.Errorf("want the cached ls-files answer and tree, and the commit written with mktree:\n%s", tr)
				}
				moved := r.Line("-C", "sub", "rev-parse", "HEAD")
				if got := r.Tree(string(snap.Tree))["sub"]; got.Mode != "160000" || got.OID != moved {
					t.Errorf("sub captured as %+v, want the gitlink %s", got, moved)
				}
			},
		},
		"corrupt cache file":   corrupt("{\"version\":1,\"key\":{\"dev\":"),
		"garbage cache file":   corrupt("\x00\xffnot json at all"),
		"cache of other index": corrupt(`{"version":1,"key":{"dev":1,"ino":2,"size":3,"mtime_ns":4,"ctime_ns":5},"tree":"4b825dc642cb6eb9a060e54bf8d69288fbee4904"}`),
		"unreadable cache file": {
			// A directory where the file should be: reading fails, and so
			// does writing; the capture does neither harm nor fails.
			do: func(t *testing.T, r *gittest.Repo) {
				p := cachePath(t, r)
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(p, 0o755); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, r *gittest.Repo, snap *plumbing.Snapshot, tr string) {
				mustList(t, tr)
				if !strings.Contains(tr, "index cache: miss (unreadable") || !strings.Contains(tr, "index cache: not stored") {
					t.Errorf("want an unreadable miss and a failed store:\n%s", tr)
				}
			},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			up := gittest.New(t)
			up.Write("lib.c", "v1\n")
			up.Commit("lib v1")
			r := gittest.New(t)
			r.Write("keep/k.txt", "k\n")
			r.Write("other/o.txt", "o\n")
			r.Commit("init")
			r.Git("-c", "protocol.file.allow=always", "submodule", "add", "-q", up.Dir, "sub")
			r.Commit("add sub")
			warm(t, r)
			c.do(t, r)
			snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
			c.check(t, r, snap, tr)
		})
	}
}

// TestIndexCacheSparse: in a sparse checkout the skip-worktree entries
// come from the cache while none of their paths is in the work tree. When
// one is (git then clears its bit as it reads the index), git is asked
// with the user's configuration, and the capture lists what git lists.
func TestIndexCacheSparse(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("keep/k.txt", "k\n")
	r.Write("other/o.txt", "o\n")
	r.Write("other/p.txt", "p\n")
	r.Commit("init")
	r.Git("sparse-checkout", "set", "--cone", "keep")
	snap := warm(t, r)
	want := []plumbing.Skip{{Path: "other/o.txt", Reason: "skip_worktree"}, {Path: "other/p.txt", Reason: "skip_worktree"}}
	if !reflect.DeepEqual(skips(snap), want) {
		t.Errorf("skipped %+v, want %+v", skips(snap), want)
	}

	// An out-of-cone file appears: git clears its bit and the walk sees it
	// modified.
	r.Write("other/o.txt", "o here\n")
	snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	if runs(tr, "ls-files") != 1 || strings.Contains(tr, "core.sparseCheckout=false ls-files") {
		t.Errorf("want one ls-files with the user's configuration:\n%s", tr)
	}
	want = []plumbing.Skip{{Path: "other/p.txt", Reason: "skip_worktree"}}
	if !reflect.DeepEqual(skips(snap), want) {
		t.Errorf("skipped %+v, want %+v", skips(snap), want)
	}
	if got := r.Git("ls-files", "-v", "other"); got != "H other/o.txt\nS other/p.txt\n" {
		t.Errorf("git's own view changed: %q", got)
	}
	if got, _ := r.Show(string(snap.Tree), "other/o.txt"); got != "o here\n" {
		t.Errorf("other/o.txt captured as %q", got)
	}
}

// TestIndexCacheSkipWorktreePresent: a skip-worktree bit set by hand,
// without a sparse checkout, on a file that is present, is listed with
// the file's size on every capture, cached or not.
func TestIndexCacheSkipWorktreePresent(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("conf.yml", "shared\n")
	r.Commit("init")
	r.Git("update-index", "--skip-worktree", "conf.yml")
	r.Write("conf.yml", "my local settings\n")
	settle(t, r)
	wantSkips := []plumbing.Skip{{Path: "conf.yml", Bytes: 18, Reason: "skip_worktree"}}
	for i := 0; i < 2; i++ {
		snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
		if !reflect.DeepEqual(skips(snap), wantSkips) {
			t.Errorf("capture %d: skipped %+v, want %+v", i, skips(snap), wantSkips)
		}
		assertTree(t, r, snap.Tree, map[string]want{"conf.yml": file("shared\n")})
		if runs(tr, "ls-files") == 0 {
			t.Errorf("capture %d: a present skip-worktree file must be asked of git:\n%s", i, tr)
		}
	}
}

// TestIndexCacheAssumeUnchanged: clearing an assume-unchanged bit in the
// private index changes none of its entries, so the index's tree is
// cached as any other: the first capture runs write-tree and ls-files, the
// next ones neither; each clears the bit.
func TestIndexCacheAssumeUnchanged(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("f.txt", "f\n")
	r.Write("local.cfg", "cfg\n")
	r.Commit("init")
	r.Git("update-index", "--assume-unchanged", "local.cfg")
	settle(t, r)
	for i := 0; i < 3; i++ {
		snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
		if wantWt := map[bool]int{true: 1, false: 0}[i == 0]; runs(tr, "write-tree") != wantWt || runs(tr, "--no-assume-unchanged") != 1 {
			t.Errorf("capture %d: want the bit cleared and %d write-tree:\n%s", i, wantWt, tr)
		}
		if wantLs := map[bool]int{true: 1, false: 0}[i == 0]; runs(tr, "ls-files") != wantLs {
			t.Errorf("capture %d: %d ls-files, want %d:\n%s", i, runs(tr, "ls-files"), wantLs, tr)
		}
		if snap.Tree != plumbing.OID(r.Line("rev-parse", "HEAD^{tree}")) {
			t.Errorf("capture %d: tree %s, want HEAD's", i, snap.Tree)
		}
	}
}

// TestHeldIndexAnswers (issue 16): answers about an index without a
// checksum (index.skipHash) written less than indexSettle ago, which the
// cache does not store, serve the same process's next capture while the
// index is still that file (held open, so no other file can get its
// inode): no ls-files and no write-tree of the user's index again, the
// same tree. An index rewritten since (a new
// file, a new key) is asked again, and what changed in it counts (an
// assume-unchanged bit, cleared in the copy, so the change under it is
// captured); so is an index in another process.
func TestHeldIndexAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := gittest.New(t)
	r.Write("f", "1\n")
	r.Write("d/g", "2\n")
	r.Commit("one")
	zeroChecksum(t, r)
	repo, err := plumbing.Open(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var trace bytes.Buffer
	plumbing.SetTrace(repo, &trace)
	capture := func() *plumbing.Snapshot {
		t.Helper()
		trace.Reset()
		snap, err := repo.Capture(ctx, plumbing.CaptureOptions{})
		if err != nil {
			t.Fatalf("capture: %v\n%s", err, trace.String())
		}
		return snap
	}
	first := capture()
	if !strings.Contains(trace.String(), "not stored") {
		t.Skipf("the index settled before the first capture read it:\n%s", trace.String())
	}
	if runs(trace.String(), "ls-files") != 1 {
		t.Fatalf("the first capture asked no ls-files:\n%s", trace.String())
	}
	second := capture()
	if !strings.Contains(trace.String(), "held by this process") || runs(trace.String(), "ls-files") != 0 || runs(trace.String(), "write-tree") != 0 {
		t.Errorf("the second capture asked git about the same index again:\n%s", trace.String())
	}
	if second.Tree != first.Tree || first.Tree != plumbing.OID(r.Line("rev-parse", "HEAD^{tree}")) {
		t.Errorf("trees %s, %s; want HEAD's", first.Tree, second.Tree)
	}
	r.Write("f", "changed under the bit\n")
	r.Git("update-index", "--assume-unchanged", "f")
	third := capture()
	if strings.Contains(trace.String(), "held by this process") || runs(trace.String(), "ls-files") != 1 {
		t.Errorf("a rewritten index was not asked again:\n%s", trace.String())
	}
	if got := r.Line("cat-file", "-p", string(third.Tree)+":f"); got != "changed under the bit" {
		t.Errorf("f in the tree: %q, want the change under the assume-unchanged bit", got)
	}
	_, other := tracedCapture(t, r, plumbing.CaptureOptions{})
	if strings.Contains(other, "held by this process") {
		t.Errorf("another process's capture took this one's answers:\n%s", other)
	}
}
