package plumbing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	osexec "os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/plumbing"
)

// countingRepo is a repository whose files f00..f<n-1> go through a clean
// filter that appends a line to a log each time git reads one to hash it:
// the number of lines is the number of files git read.
func countingRepo(t *testing.T, n int) (*gittest.Repo, func() int) {
	t.Helper()
	r := gittest.New(t)
	log := filepath.Join(t.TempDir(), "reads")
	r.Git("config", "filter.count.clean", fmt.Sprintf("sh -c 'echo %%f >>%s; cat'", log))
	r.Git("config", "filter.count.smudge", "cat")
	r.Write(".gitattributes", "f* filter=count\n")
	for i := 0; i < n; i++ {
		r.Write(fmt.Sprintf("d/f%02d", i), fmt.Sprintf("content %d\n", i))
	}
	r.Commit("init")
	reads := func() int {
		b, _ := os.ReadFile(log)
		os.Remove(log)
		return strings.Count(string(b), "\n")
	}
	reads()
	return r, reads
}

// touch gives every file another mtime, its content as it was: what a
// rollback that wrote them back leaves (the index is stat-stale for them).
// The time is in the past, so that no entry git records of them is racily
// clean (which makes git read the file again once more, rightly).
func touch(t *testing.T, r *gittest.Repo, n int) {
	t.Helper()
	then := time.Now().Add(-time.Hour - time.Duration(rand.Intn(1000))*time.Second)
	for i := 0; i < n; i++ {
		if err := os.Chtimes(r.Path(fmt.Sprintf("d/f%02d", i)), then, then); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}

// tick waits for the clock's next second: files written before are not
// racily clean in an index written after (git compares seconds).
func tick() {
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
}

// TestStatusIndexSparesRereads (issue 16): after the files' stat data
// changed and their content did not (a rollback wrote them back), the
// first capture's status reads each again to find it unchanged; it keeps
// its private index so refreshed, and the next captures of the same
// user's index read none. Without the status index every capture read
// them all. The user's index is never written (capture checks it).
func TestStatusIndexSparesRereads(t *testing.T) {
	t.Parallel()
	const n = 12
	r, reads := countingRepo(t, n)
	head := r.Line("rev-parse", "HEAD^{tree}")
	touch(t, r, n)
	settle(t, r)
	snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	if got := reads(); got != n {
		t.Fatalf("first capture read %d files, want %d (status checks each)", got, n)
	}
	if string(snap.Tree) != head || !strings.Contains(tr, "kept as status-") {
		t.Fatalf("first capture: tree %s (want HEAD's %s), trace:\n%s", snap.Tree, head, tr)
	}
	for i := 0; i < 2; i++ {
		snap, tr = tracedCapture(t, r, plumbing.CaptureOptions{})
		if got := reads(); got != 0 || string(snap.Tree) != head {
			t.Fatalf("capture %d read %d files, tree %s; want none read, HEAD's tree:\n%s", i+2, got, snap.Tree, tr)
		}
		if !strings.Contains(tr, "from the status index") {
			t.Fatalf("capture %d did not start from the status index:\n%s", i+2, tr)
		}
	}
	// A change to the user's index (a person's git add) is another file:
	// its status index is not used, and a new one is kept for it.
	r.Write("d/f00", "staged\n")
	r.Git("add", "d/f00")
	touch(t, r, n)
	settle(t, r)
	snap, tr = tracedCapture(t, r, plumbing.CaptureOptions{})
	if strings.Contains(tr, "from the status index") {
		t.Fatalf("a capture of a changed index started from the old one's status index:\n%s", tr)
	}
	if got, _ := r.Show(string(snap.Tree), "d/f00"); got != "staged\n" {
		t.Fatalf("captured d/f00 %q", got)
	}
	reads()
	snap2, _ := tracedCapture(t, r, plumbing.CaptureOptions{})
	if got := reads(); got != 0 || snap2.Tree != snap.Tree {
		t.Fatalf("after the new index: read %d, tree %s (want 0, %s)", got, snap2.Tree, snap.Tree)
	}
}

// TestStageIndexSparesRehash (issue 16): files the person changed and
// never staged are hashed by the first capture, and by no later one while
// they stay as they are (the kept stage index holds their stat data); the
// same changes on the same base make the same tree, which is not written
// again (no mktree). Without the kept stage index every capture hashed
// them all and wrote every tree along them.
func TestStageIndexSparesRehash(t *testing.T) {
	t.Parallel()
	const n = 12
	r, reads := countingRepo(t, n)
	for i := 0; i < n; i++ {
		r.Write(fmt.Sprintf("d/f%02d", i), fmt.Sprintf("changed %d, a little longer\n", i))
	}
	tick()
	first, _ := tracedCapture(t, r, plumbing.CaptureOptions{})
	if got := reads(); got != n {
		t.Fatalf("first capture read %d files, want %d", got, n)
	}
	for i := 0; i < 2; i++ {
		snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
		if got := reads(); got != 0 || snap.Tree != first.Tree {
			t.Fatalf("capture %d read %d files, tree %s; want none, %s:\n%s", i+2, got, snap.Tree, first.Tree, tr)
		}
		if runs(tr, "mktree") != 0 {
			t.Fatalf("capture %d wrote the same trees again:\n%s", i+2, tr)
		}
		// Nor is git asked what it already said: the kept stage index's
		// listing stands while update-index left the copy as it was, and
		// whether the memoized tree is there is asked of the child that
		// reads HEAD.
		if n := stageChildren(tr, "ls-files"); n != 0 {
			t.Fatalf("capture %d listed the unchanged stage index again (%d):\n%s", i+2, n, tr)
		}
		if runs(tr, "cat-file") != 0 {
			t.Fatalf("capture %d asked cat-file about the memoized tree:\n%s", i+2, tr)
		}
	}
	// One more file changed: that one is read, the others are not.
	r.Write("d/f03", "changed again, to something else\n")
	tick()
	snap, _ := tracedCapture(t, r, plumbing.CaptureOptions{})
	if got := reads(); got != 1 {
		t.Fatalf("a capture with one more change read %d files, want 1", got)
	}
	if got, _ := r.Show(string(snap.Tree), "d/f03"); got != "changed again, to something else\n" {
		t.Fatalf("captured d/f03 %q", got)
	}
	// An attributes file among the changes: nothing kept is used, and
	// the files are hashed under the new attributes.
	r.Write(".gitattributes", "f* filter=count\nf0* text eol=crlf\n")
	snap, _ = tracedCapture(t, r, plumbing.CaptureOptions{})
	if got := reads(); got < n {
		t.Fatalf("a capture with .gitattributes changed read %d files, want all %d", got, n)
	}
	assertSameAsScratch(t, r, snap)
}

// stageChildren counts the git children in trace that ran sub in a stage
// index (those runs leaves out).
func stageChildren(trace, sub string) int { return childRuns(trace, sub, true) }

// unstagedCapture is a countingRepo of n files, each changed and not
// staged, captured once (which must read each of them; its reads
// counted off): what that capture kept is the stage index of the n
// paths and its memo.
func unstagedCapture(t *testing.T, n int) (*gittest.Repo, func() int, *plumbing.Snapshot) {
	t.Helper()
	r, reads := countingRepo(t, n)
	for i := 0; i < n; i++ {
		r.Write(fmt.Sprintf("d/f%02d", i), fmt.Sprintf("unstaged %d, longer than before\n", i))
	}
	tick()
	first := capture(t, r, plumbing.CaptureOptions{})
	if got := reads(); got != n {
		t.Fatalf("the first capture read %d files, want %d", got, n)
	}
	return r, reads, first
}

// TestKeptStageMemoGone: the tree a capture memoized is gone from the
// object store (a gc of unreachable objects; here its file alone is
// removed, the blobs stay): the next capture of the same changes writes
// it again rather than name a tree that is not there.
func TestKeptStageMemoGone(t *testing.T) {
	t.Parallel()
	r, _, first := unstagedCapture(t, 3)
	obj := filepath.Join(r.GitDir, "objects", string(first.Tree)[:2], string(first.Tree)[2:])
	if err := os.Remove(obj); err != nil {
		t.Fatalf("the capture's tree is not a loose object: %v", err)
	}
	snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	if snap.Tree != first.Tree {
		t.Fatalf("tree %s, want %s", snap.Tree, first.Tree)
	}
	if runs(tr, "mktree") == 0 {
		t.Fatalf("the memoized tree, gone, was not written again:\n%s", tr)
	}
	assertObjects(t, r, snap.Tree)
}

// scratch is what a capture makes of r with nothing kept (no status or
// stage index, no index cache): the kept files are set aside and put
// back after.
func scratch(t *testing.T, r *gittest.Repo) *plumbing.Snapshot {
	t.Helper()
	venom := filepath.Join(r.GitDir, "venom")
	aside := filepath.Join(t.TempDir(), "venom")
	if err := os.Rename(venom, aside); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	defer func() {
		os.RemoveAll(venom)
		if err := os.Rename(aside, venom); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}()
	return capture(t, r, plumbing.CaptureOptions{MaxFileBytes: 1000})
}

func assertSameAsScratch(t *testing.T, r *gittest.Repo, snap *plumbing.Snapshot) {
	t.Helper()
	if want := scratch(t, r); want.Tree != snap.Tree {
		t.Fatalf("with what captures kept, tree %s; from scratch %s:\n%v\n%v", snap.Tree, want.Tree, r.Tree(string(snap.Tree)), r.Tree(string(want.Tree)))
	}
}

// TestKeptIndexesRacyGit: an edit made right after a capture kept its
// indexes, with the same size and most likely in the same second as their
// write, is captured: the kept indexes are copied with their own mtime,
// against which git checks racily clean entries, as the user's index is.
func TestKeptIndexesRacyGit(t *testing.T) {
	t.Parallel()
	for i := 0; i < 4; i++ {
		t.Run(fmt.Sprint("round", i), func(t *testing.T) {
			t.Parallel()
			r, _ := countingRepo(t, 2)
			if i%2 == 0 {
				touch(t, r, 2) // a status index is kept
				settle(t, r)
			} else {
				r.Write("d/f00", "unstaged change\n") // a stage index is kept
			}
			tracedCapture(t, r, plumbing.CaptureOptions{})
			kept, _ := filepath.Glob(filepath.Join(r.GitDir, "venom", "kept", "*.index"))
			if len(kept) == 0 {
				t.Fatal("nothing was kept")
			}
			before := r.Read("d/f00")
			r.Write("d/f00", strings.ToUpper(before)) // same size, now
			var newest time.Time
			for _, k := range kept {
				if st, err := os.Stat(k); err == nil && st.ModTime().After(newest) {
					newest = st.ModTime()
				}
			}
			time.Sleep(time.Until(newest.Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
			snap := capture(t, r, plumbing.CaptureOptions{})
			if got, _ := r.Show(string(snap.Tree), "d/f00"); got != strings.ToUpper(before) {
				t.Fatalf("captured %q, want the edit %q", got, strings.ToUpper(before))
			}
		})
	}
}

// TestKeptStageSameSecondRewrite: a file written twice in one second,
// the same size each time and its mtime put back each time (cp -p, an
// archive's extraction), with a capture between the writes, is captured
// with its last bytes by the next capture. git compares ctimes in whole
// seconds, so to git's stat check the kept stage index's entry of the
// first write looked clean for the second; the entry is made again from
// the file (keptStage.Unsure). Before, the next capture recorded the first
// write's bytes, and a rollback's safety checkpoint lost the second's.
func TestKeptStageSameSecondRewrite(t *testing.T) {
	t.Parallel()
	then := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	for try := 0; ; try++ {
		r := gittest.New(t)
		r.Write("f", "aaaa\n")
		r.Commit("init")
		settle(t, r)
		tick()
		second := time.Now().Unix()
		write := func(content string) {
			r.Write("f", content)
			if err := os.Chtimes(r.Path("f"), then, then); err != nil {
				t.Fatal(err)
			}
		}
		write("bbbb\n")
		first := capture(t, r, plumbing.CaptureOptions{})
		if got, _ := r.Show(string(first.Tree), "f"); got != "bbbb\n" {
			t.Fatalf("first capture holds %q, want %q", got, "bbbb\n")
		}
		write("cccc\n")
		if time.Now().Unix() != second {
			if try == 5 {
				t.Skip("the machine never wrote twice and captured within one second")
			}
			continue // not within one second: again
		}
		tick()
		snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
		if got, _ := r.Show(string(snap.Tree), "f"); got != "cccc\n" {
			t.Fatalf("the capture after the second write holds %q, want %q:\n%s", got, "cccc\n", tr)
		}
		assertSameAsScratch(t, r, snap)
		return
	}
}

// TestStatusIndexSameSecondRewrite: the status walk refreshes the entry
// of a file whose stat data changed and content did not (touch -d); a
// write of other bytes in that second, the same size, its mtime put back,
// is captured by the next capture. A status index holding an entry of a
// change in or after the second its walk began is not kept
// (unsureEntry): git, comparing whole seconds, would call the file clean. Before, the next
// capture walked from that status index and recorded the old bytes.
func TestStatusIndexSameSecondRewrite(t *testing.T) {
	t.Parallel()
	then := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for try := 0; ; try++ {
		r := gittest.New(t)
		r.Write("f", "aaaa\n")
		r.Write("g", "x\n")
		if err := os.Chtimes(r.Path("f"), then, then); err != nil {
			t.Fatal(err)
		}
		r.Commit("init")
		settle(t, r)
		tick()
		second := time.Now().Unix()
		if err := os.Chtimes(r.Path("f"), then, then); err != nil { // ctime now
			t.Fatal(err)
		}
		_, tr1 := tracedCapture(t, r, plumbing.CaptureOptions{})
		r.Write("f", "cccc\n")
		if err := os.Chtimes(r.Path("f"), then, then); err != nil {
			t.Fatal(err)
		}
		if time.Now().Unix() != second {
			if try == 5 {
				t.Skip("the machine never touched, captured and wrote within one second")
			}
			continue
		}
		tick()
		snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
		if got, _ := r.Show(string(snap.Tree), "f"); got != "cccc\n" {
			t.Fatalf("the capture after the write holds %q, want %q:\n%s\n%s", got, "cccc\n", tr1, tr)
		}
		if !strings.Contains(tr1, "status refreshed the private index; not kept") {
			t.Fatalf("the first capture's walk did not refresh f's entry, or kept it:\n%s", tr1)
		}
		assertSameAsScratch(t, r, snap)
		return
	}
}

// TestStatusIndexAfterOwnWrites: after a process said it wrote files
// (Repo.Wrote, a rollback before its verification), an index its walk
// refreshes in that second is not kept, and no git is asked about it; a
// capture of another process a second later keeps its own, having asked.
func TestStatusIndexAfterOwnWrites(t *testing.T) {
	t.Parallel()
	const n = 3
	r, reads := countingRepo(t, n)
	touch(t, r, n) // the index is stat-stale for them, as after a rollback
	settle(t, r)
	tick()
	repo, err := plumbing.Open(context.Background(), r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var trace bytes.Buffer
	plumbing.SetTrace(repo, &trace)
	repo.Wrote()
	if _, err := repo.Capture(context.Background(), plumbing.CaptureOptions{}); err != nil {
		t.Fatal(err)
	}
	tr := trace.String()
	if !strings.Contains(tr, "status refreshed the private index; not kept: this process wrote") {
		t.Fatalf("the walk's refreshed index was kept, or not refreshed:\n%s", tr)
	}
	if runs(tr, "--debug") != 0 {
		t.Fatalf("git was asked about the entries:\n%s", tr)
	}
	if got := reads(); got != n {
		t.Fatalf("the capture read %d files, want %d", got, n)
	}
	tick()
	_, tr = tracedCapture(t, r, plumbing.CaptureOptions{})
	if !strings.Contains(tr, "status refreshed the private index; kept as") || runs(tr, "--debug") != 1 {
		t.Fatalf("the next capture did not keep its refreshed index, having asked git once:\n%s", tr)
	}
	reads()
	_, tr = tracedCapture(t, r, plumbing.CaptureOptions{})
	if got := reads(); got != 0 || !strings.Contains(tr, "from the status index") {
		t.Fatalf("the capture after read %d files, want none (from the status index):\n%s", got, tr)
	}
}

// TestKeptStageWriteWhileStaging: a write between the capture's lstat of
// a file and git's read of it (an editor saving, cp -p keeping an old
// mtime), then a write of the same size with the mtime put back in that
// second: the next capture records the last bytes. The entry git made
// is of a change in the second it read the file, which the lstat before
// could not show; the lstat after git read it does (keptStage.Unsure).
// The write is made by a git wrapper just before the stage index's
// update-index --add.
func TestKeptStageWriteWhileStaging(t *testing.T) {
	t.Parallel()
	realGit, err := osexec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	r := gittest.New(t)
	r.Write("f", "aaaa\n")
	r.Write("g", "x\n")
	r.Commit("init")
	r.Write("f", "xxxx\n") // never staged: the kept stage holds it
	dir := t.TempDir()
	then := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	v1, v2 := filepath.Join(dir, "v1"), filepath.Join(dir, "v2")
	for p, c := range map[string]string{v1: "bbbb\n", v2: "cccc\n"} {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, then, then); err != nil {
			t.Fatal(err)
		}
	}
	once := filepath.Join(dir, "once")
	wrapper := filepath.Join(dir, "git")
	script := fmt.Sprintf(`#!/bin/sh
case "$GIT_INDEX_FILE" in */stage-*)
	for a in "$@"; do
		if [ "$a" = --add ] && [ ! -e %[1]q ]; then : >%[1]q; cp -p %[2]q %[3]q; fi
	done;;
esac
exec %[4]q "$@"
`, once, v1, r.Path("f"), realGit)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond) // f settled: its stamp is kept
	capture(t, r, plumbing.CaptureOptions{})
	now := time.Now()
	if err := os.Chtimes(r.Path("f"), now, now); err != nil { // stat data only
		t.Fatal(err)
	}
	// Long enough before the next capture that neither its lstat nor
	// the entry git refreshes is of a change near its start
	// (unsureStat): only the write the wrapper makes is.
	time.Sleep(3200 * time.Millisecond)
	repo, err := plumbing.Open(context.Background(), r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	repo.Git = wrapper
	var trace bytes.Buffer
	plumbing.SetTrace(repo, &trace)
	if _, err := repo.Capture(context.Background(), plumbing.CaptureOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(once); err != nil {
		t.Fatalf("the wrapper wrote nothing: no update-index --add in a stage index:\n%s", trace.String())
	}
	if err := osexec.Command("cp", "-p", v2, r.Path("f")).Run(); err != nil { // same size, mtime put back
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond)
	snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	if got, _ := r.Show(string(snap.Tree), "f"); got != "cccc\n" {
		t.Fatalf("the capture after the writes holds %q, want %q:\n%s\n%s", got, "cccc\n", trace.String(), tr)
	}
	assertSameAsScratch(t, r, snap)
}

// TestKeptWithoutTrustctime: with core.trustctime off (or core.checkStat
// minimal) git's stat check ignores the ctime, and a write of the same
// size with the mtime put back would look clean to it at any time. The
// captures pin both, so the next capture records the write.
func TestKeptWithoutTrustctime(t *testing.T) {
	t.Parallel()
	for _, set := range [][2]string{{"core.trustctime", "false"}, {"core.checkStat", "minimal"}} {
		t.Run(set[0], func(t *testing.T) {
			t.Parallel()
			r := gittest.New(t)
			r.Git("config", set[0], set[1])
			r.Write("f", "aaaa\n")
			r.Commit("init")
			then := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
			write := func(content string) {
				r.Write("f", content)
				if err := os.Chtimes(r.Path("f"), then, then); err != nil {
					t.Fatal(err)
				}
			}
			write("bbbb\n")
			// Long enough that the entry the capture makes is sure
			// (unsureStat): only the ctime tells the next write.
			time.Sleep(3200 * time.Millisecond)
			capture(t, r, plumbing.CaptureOptions{})
			write("cccc\n")
			time.Sleep(1100 * time.Millisecond)
			snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
			if got, _ := r.Show(string(snap.Tree), "f"); got != "cccc\n" {
				t.Fatalf("the capture after the write holds %q, want %q:\n%s", got, "cccc\n", tr)
			}
		})
	}
}

// TestKeptIndexesRandom: under random changes (contents, the same size or
// not, stat data only, deletions, new files, a file made a directory and
// back, exec bits, symlinks, a too-big file, attributes files, a person's
// git add and commit, assume-unchanged and skip-worktree bits, a nested
// repository, the clean filter's command), every capture that starts from what the one before
// kept makes the tree a capture from scratch makes.
func TestKeptIndexesRandom(t *testing.T) {
	t.Parallel()
	keptRandom(t, 0)
}

// TestKeptIndexesRandomMemoDelta is TestKeptIndexesRandom beside 20 files
// changed and never staged: every capture has more changes than
// memoChangesMin, and one after a capture on the same base edits that
// capture's tree along the changes that differ (memo.go).
func TestKeptIndexesRandomMemoDelta(t *testing.T) {
	t.Parallel()
	keptRandom(t, 20)
}

// keptRandom is TestKeptIndexesRandom, with background more tracked
// files, u/f00 on, changed and never staged before the steps.
func keptRandom(t *testing.T, background int) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	r, _ := countingRepo(t, 8)
	if background > 0 {
		for i := 0; i < background; i++ {
			r.Write(fmt.Sprintf("u/f%02d", i), "committed\n")
		}
		r.Commit("background")
		for i := 0; i < background; i++ {
			r.Write(fmt.Sprintf("u/f%02d", i), fmt.Sprintf("changed, never staged %d\n", i))
		}
	}
	names := []string{"d/f00", "d/f01", "d/f02", "e/g1", "e/g2", "top", "d/sub/f03", "x"}
	steps, deltas, somePaths := 40, 0, 0
	if s := os.Getenv("VENOM_KEPT_STEPS"); s != "" {
		fmt.Sscan(s, &steps) // a longer run by hand
	}
	// With background files, both ways of starting from the last capture
	// must be seen: a seed that has not shown them both by the last
	// step goes on, up to three times as many steps, rather than
	// failing for the dice (a run in CI saw neither edit in 40).
	unseen := func() bool { return background > 0 && (deltas == 0 || somePaths == 0) }
	for step := 0; step < steps || (unseen() && step < 3*steps); step++ {
		p := names[rng.Intn(len(names))]
		write := func(content string) {
			if st, err := os.Lstat(r.Path(p)); err == nil && !st.Mode().IsRegular() {
				os.RemoveAll(r.Path(p)) // made a directory or a link by an earlier step
			}
			r.Write(p, content)
		}
		kinds := 16
		if background > 0 {
			kinds = 18
		}
		switch rng.Intn(kinds) {
		case 0, 1:
			write(fmt.Sprintf("content %d\n", rng.Intn(100)))
		case 2:
			if b, err := os.ReadFile(r.Path(p)); err == nil && len(b) > 0 {
				b[0] ^= 1 // the same size
				os.WriteFile(r.Path(p), b, 0o644)
			}
		case 3:
			touch(t, r, 8)
		case 4:
			os.RemoveAll(r.Path(p))
		case 5:
			os.RemoveAll(r.Path(p))
			r.Write(p+"/inner", "now a directory\n")
		case 6:
			if st, err := os.Lstat(r.Path(p)); err == nil && st.Mode().IsRegular() {
				os.Chmod(r.Path(p), st.Mode()^0o100)
			}
		case 7:
			os.RemoveAll(r.Path(p))
			os.MkdirAll(filepath.Dir(r.Path(p)), 0o755)
			os.Symlink("top", r.Path(p))
		case 8:
			write(strings.Repeat("big ", 400)) // over the capture's 1000 bytes
		case 9:
			r.Write(".gitattributes", []string{"f* filter=count\n", "f* filter=count\ng* text eol=crlf\n"}[rng.Intn(2)])
		case 10:
			r.GitErr("add", "-A", "--", p)
		case 11:
			r.GitErr("add", "-A")
			r.GitErr("commit", "-q", "-m", "step", "--allow-empty")
			for i := 0; i < background; i++ {
				r.Write(fmt.Sprintf("u/f%02d", i), fmt.Sprintf("changed after step %d, %d\n", step, i))
			}
		case 12:
			r.GitErr("update-index", []string{"--assume-unchanged", "--no-assume-unchanged"}[rng.Intn(2)], "--", p)
		case 13:
			r.GitErr("update-index", []string{"--skip-worktree", "--no-skip-worktree"}[rng.Intn(2)], "--", p)
		case 14:
			// A nested repository with a commit, or none any more.
			if _, err := os.Stat(r.Path("e/nested/.git")); err == nil {
				os.RemoveAll(r.Path("e/nested"))
			} else if st, err := os.Lstat(r.Path("e")); err != nil || st.IsDir() {
				os.MkdirAll(r.Path("e"), 0o755)
				r.Git("init", "-q", "e/nested")
				n := gittest.At(t, r.Path("e/nested"))
				n.Write("inner", fmt.Sprintf("inner %d\n", step))
				n.Git("add", "inner")
				n.Git("-c", "user.name=N", "-c", "user.email=n@x", "commit", "-q", "-m", "nested")
			}
		case 15:
			// What git makes of the bytes changes with the configuration.
			r.Git("config", "filter.count.clean", []string{"cat", "tr a-z A-Z"}[rng.Intn(2)])
		case 16:
			// A background file given back: the last tree's change of
			// it undone.
			r.GitErr("checkout", "--", fmt.Sprintf("u/f%02d", rng.Intn(background)))
		case 17:
			r.Write(fmt.Sprintf("u/f%02d", rng.Intn(background)), fmt.Sprintf("changed at step %d\n", step))
		}
		if rng.Intn(3) == 0 {
			settle(t, r)
		}
		snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{MaxFileBytes: 1000})
		if strings.Contains(tr, "it is edited along them") {
			deltas++
		}
		if strings.Contains(tr, "git is asked about the others") {
			somePaths++
		}
		assertSameAsScratch(t, r, snap)
	}
	t.Logf("%d captures edited the last one's tree, %d asked git about some staged paths only", deltas, somePaths)
	if unseen() {
		t.Errorf("in %d steps, %d captures edited the last one's tree and %d asked git about some paths only: want some of each", 3*steps, deltas, somePaths)
	}
}

// assertObjects fails unless every object of tree is in the repository:
// a capture that keeps an object name it did not write again must know
// the object is still there.
func assertObjects(t *testing.T, r *gittest.Repo, tree plumbing.OID) {
	t.Helper()
	for p, e := range r.Tree(string(tree)) {
		if e.Mode == "160000" {
			continue
		}
		if _, err := r.GitErr("cat-file", "-e", e.OID); err != nil {
			t.Errorf("the tree's %s names %s, which is not in the repository", p, e.OID)
		}
	}
}

// TestKeptStagePrunedObjects: the blobs the kept stage index names were
// written by an earlier capture that no ref may hold (a capture for a
// plan, a dedup); a gc may prune them. A capture that finds its kept
// entries' objects gone stages those paths again, and its tree names only
// objects the repository has. Without the check it named the pruned blob.
func TestKeptStagePrunedObjects(t *testing.T) {
	t.Parallel()
	r, reads, first := unstagedCapture(t, 3)
	r.Git("prune", "--expire=now")
	if _, err := r.GitErr("cat-file", "-e", string(first.Tree)); err == nil {
		t.Fatal("prune left the capture's tree: the test does not test a pruned object")
	}
	snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	if snap.Tree != first.Tree {
		t.Fatalf("tree %s, want %s", snap.Tree, first.Tree)
	}
	assertObjects(t, r, snap.Tree)
	t.Logf("%s", tr)
	if got := reads(); got != 3 {
		t.Errorf("the capture after the prune read %d files, want the 3 whose blobs went:\n%s", got, tr)
	}
}

// TestKeptDamaged: kept files that are not what they say (a disk that
// lost a write, a person's edit, a crashed capture's leftovers) make a
// capture do its work from the user's index, never fail it.
func TestKeptDamaged(t *testing.T) {
	t.Parallel()
	r, _ := countingRepo(t, 4)
	r.Write("d/f00", "unstaged change, longer\n")
	touch(t, r, 4)
	settle(t, r)
	tick()
	capture(t, r, plumbing.CaptureOptions{})
	kept, _ := filepath.Glob(filepath.Join(r.GitDir, "venom", "kept", "*.index"))
	var status, stage int
	for _, k := range kept {
		switch {
		case strings.Contains(filepath.Base(k), "status-"):
			status++
		case strings.Contains(filepath.Base(k), "stage-"):
			stage++
		}
		// Replaced, not written in place: the name may be a hard link
		// to a private index of no one now, but it is ours to break.
		os.Remove(k)
		if err := os.WriteFile(k, []byte("DIRC garbage, not an index"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if status != 1 || stage != 1 {
		t.Fatalf("kept %v, want one status and one stage index", kept)
	}
	// Leftovers of a capture killed while keeping.
	dir := filepath.Join(r.GitDir, "venom", "kept")
	os.WriteFile(filepath.Join(dir, "stage-dead-1.index"), []byte("half"), 0o600)
	os.WriteFile(filepath.Join(dir, "status-0123.index.tmp-dead-1"), []byte("half"), 0o600)
	r.Write("d/f01", "another change, the capture must see it\n")
	tick()
	snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	assertSameAsScratch(t, r, snap)
	if got, _ := r.Show(string(snap.Tree), "d/f01"); got != "another change, the capture must see it\n" {
		t.Fatalf("captured d/f01 %q:\n%s", got, tr)
	}
	// The next capture keeps good files again, and the leftovers are gone.
	capture(t, r, plumbing.CaptureOptions{})
	for _, n := range []string{"stage-dead-1.index", "status-0123.index.tmp-dead-1"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			t.Errorf("%s is still there", n)
		}
	}
	snap2, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	if snap2.Tree != snap.Tree {
		t.Fatalf("tree %s, want %s:\n%s", snap2.Tree, snap.Tree, tr)
	}
}

// keptOfKind is a counting repository of 4 files in the state after which
// a capture keeps a status index (kind "status": stat data changed,
// content not, the index settled) or a stage index ("stage": every file
// changed and never staged).
func keptOfKind(t *testing.T, kind string) *gittest.Repo {
	t.Helper()
	r, _ := countingRepo(t, 4)
	if kind == "stage" {
		for i := 0; i < 4; i++ {
			r.Write(fmt.Sprintf("d/f%02d", i), fmt.Sprintf("unstaged %d, longer than before\n", i))
		}
		tick()
	} else {
		touch(t, r, 4)
		settle(t, r)
	}
	return r
}

// TestKeptAttributesChange: what git made of the files under the
// attributes of the time is not used under others. After a rollback (stat
// data changed, content not) a status index is kept, and after an unstaged
// change a stage index; then .gitattributes in the work tree gives the
// files another clean filter: every capture makes the tree a capture from
// scratch makes, whose status reads the files again.
func TestKeptAttributesChange(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"status", "stage"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			r := keptOfKind(t, kind)
			r.Git("config", "filter.upper.clean", "tr a-z A-Z")
			r.Git("config", "filter.upper.smudge", "cat")
			capture(t, r, plumbing.CaptureOptions{})
			snap := capture(t, r, plumbing.CaptureOptions{})
			assertSameAsScratch(t, r, snap)
			r.Write(".gitattributes", "f* filter=upper\n")
			snap = capture(t, r, plumbing.CaptureOptions{})
			assertSameAsScratch(t, r, snap)
			if got, _ := r.Show(string(snap.Tree), "d/f01"); got != strings.ToUpper(got) {
				t.Fatalf("d/f01 is %q, not what the new filter gives", got)
			}
			snap = capture(t, r, plumbing.CaptureOptions{})
			assertSameAsScratch(t, r, snap)
		})
	}
}

// TestKeptConfigChange: a configuration change that changes what git
// makes of a file (here the clean filter's command) is a change for the
// kept indexes too: the next capture makes the tree a capture from
// scratch makes.
func TestKeptConfigChange(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"status", "stage"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			r := keptOfKind(t, kind)
			capture(t, r, plumbing.CaptureOptions{})
			capture(t, r, plumbing.CaptureOptions{})
			r.Git("config", "filter.count.clean", "tr a-z A-Z")
			snap := capture(t, r, plumbing.CaptureOptions{})
			assertSameAsScratch(t, r, snap)
			if got, _ := r.Show(string(snap.Tree), "d/f01"); got != strings.ToUpper(got) {
				t.Fatalf("d/f01 is %q, not what the new filter gives", got)
			}
		})
	}
}

// TestKeptStageRacyRewritten: files hashed in the second the stage index
// was written are racily clean in it, and git reads them again each time
// it is used; the capture that finds them so rewrites it once, and the
// captures after read none. Without that every later capture read them.
func TestKeptStageRacyRewritten(t *testing.T) {
	t.Parallel()
	const n = 4
	r, reads := countingRepo(t, n)
	// The files' mtime is a second ahead: the index the first capture
	// writes is racy for every one of them, whenever the test runs.
	ahead := time.Now().Add(time.Second)
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("d/f%02d", i)
		r.Write(p, fmt.Sprintf("unstaged %d, longer than before\n", i))
		os.Chtimes(r.Path(p), ahead, ahead)
	}
	first := capture(t, r, plumbing.CaptureOptions{})
	if got := reads(); got != n {
		t.Fatalf("first capture read %d, want %d", got, n)
	}
	time.Sleep(time.Until(ahead.Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
	capture(t, r, plumbing.CaptureOptions{}) // racily clean: read again, rightly
	reads()
	snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	if got := reads(); got != 0 || snap.Tree != first.Tree {
		t.Fatalf("third capture read %d files, tree %s; want none, %s:\n%s", got, snap.Tree, first.Tree, tr)
	}
}

// TestKeptUserIndexChanges: a person's git add, git reset and checkout of
// another branch each give the user's index another file; the captures
// after each make the tree a capture from scratch makes, and none starts
// from the status index of the index before.
func TestKeptUserIndexChanges(t *testing.T) {
	t.Parallel()
	r, _ := countingRepo(t, 6)
	r.Git("checkout", "-q", "-b", "other")
	r.Write("d/f05", "on other\n")
	r.Write("e/only-on-other", "x\n")
	r.Commit("other")
	r.Git("checkout", "-q", "-")
	steps := []struct {
		name string
		do   func()
	}{
		{"add", func() { r.Write("d/f00", "added, longer than it was\n"); r.Git("add", "d/f00") }},
		{"reset", func() { r.Git("reset", "-q") }},
		{"checkout", func() { r.Git("stash", "-q"); r.Git("checkout", "-q", "other") }},
		{"checkout back", func() { r.Git("checkout", "-q", "-") }},
	}
	for _, s := range steps {
		// Stat data changed everywhere and an unstaged change: both kept
		// indexes are made for the index as it is.
		r.Write("d/f02", fmt.Sprintf("unstaged before %s\n", s.name))
		touch(t, r, 6)
		settle(t, r)
		tick()
		capture(t, r, plumbing.CaptureOptions{})
		_, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
		if !strings.Contains(tr, "from the status index") {
			t.Fatalf("before %s: no status index used:\n%s", s.name, tr)
		}
		s.do()
		touch(t, r, 6)
		snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
		if strings.Contains(tr, "from the status index") {
			t.Fatalf("after %s: the old index's status index was used:\n%s", s.name, tr)
		}
		assertSameAsScratch(t, r, snap)
	}
}

// TestKeptTwoAgents: two captures of one tree at once (two agents) share
// the kept files; each makes the tree a capture from scratch makes.
func TestKeptTwoAgents(t *testing.T) {
	t.Parallel()
	r, _ := countingRepo(t, 8)
	for round := 0; round < 6; round++ {
		for i := 0; i < 8; i++ {
			if (i+round)%3 == 0 {
				r.Write(fmt.Sprintf("d/f%02d", i), fmt.Sprintf("round %d file %d\n", round, i))
			}
		}
		if round%2 == 1 {
			touch(t, r, 8)
		}
		trees := make(chan plumbing.OID, 4)
		errs := make(chan error, 4)
		for a := 0; a < 4; a++ {
			go func() {
				repo, err := plumbing.Open(context.Background(), r.Dir)
				if err != nil {
					errs <- err
					return
				}
				snap, err := repo.Capture(context.Background(), plumbing.CaptureOptions{MaxFileBytes: 1000})
				if err != nil {
					errs <- err
					return
				}
				trees <- snap.Tree
			}()
		}
		var got []plumbing.OID
		for a := 0; a < 4; a++ {
			select {
			case err := <-errs:
				t.Fatalf("round %d: %v", round, err)
			case tree := <-trees:
				got = append(got, tree)
			}
		}
		want := scratch(t, r).Tree
		for _, tree := range got {
			if tree != want {
				t.Fatalf("round %d: a capture made %s, from scratch %s", round, tree, want)
			}
		}
	}
}

// TestKeptStageIgnoreStat: with core.ignoreStat, update-index marks what
// it stages assume-unchanged, and git would trust such an entry without
// looking at the file: a stage index so made is not kept, and an edit
// after it is captured. Kept, the edit was missed.
func TestKeptStageIgnoreStat(t *testing.T) {
	t.Parallel()
	r, _ := countingRepo(t, 2)
	r.Git("config", "core.ignoreStat", "true")
	r.Write("d/f00", "unstaged change\n")
	tick()
	capture(t, r, plumbing.CaptureOptions{})
	r.Write("d/f00", "UNSTAGED CHANGE, and longer\n")
	tick()
	snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	if got, _ := r.Show(string(snap.Tree), "d/f00"); got != "UNSTAGED CHANGE, and longer\n" {
		t.Fatalf("captured d/f00 %q, not the edit:\n%s", got, tr)
	}
	assertSameAsScratch(t, r, snap)
}

// TestKeptStageFilterFailureFails: a clean filter that fails while a
// capture stages from the kept stage index fails the capture, as it does
// without one (BR-21); the kept index is dropped and the work redone only
// where git cannot read the index itself. Redone, a filter that failed
// once was hidden.
func TestKeptStageFilterFailureFails(t *testing.T) {
	t.Parallel()
	r, _ := countingRepo(t, 2)
	flag := filepath.Join(t.TempDir(), "fail-once")
	r.Git("config", "filter.count.clean", fmt.Sprintf("sh -c 'if test -f %s; then rm -f %s; exit 1; fi; cat'", flag, flag))
	r.Git("config", "filter.count.required", "true")
	r.Write("d/f00", "unstaged change\n")
	tick()
	capture(t, r, plumbing.CaptureOptions{})
	r.Write("d/f01", "another, while the filter fails\n")
	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if snap, err := captureErr(t, r, plumbing.CaptureOptions{}); err == nil {
		t.Fatalf("the capture succeeded (tree %s) although the clean filter failed", snap.Tree)
	}
}

// TestCaptureWholeWay (issue 16): a capture of many changed paths writes
// its tree from a copy of the whole private index (update-index
// --index-info, write-tree) rather than by the tree edit (cat-file,
// mktree), and that tree is the one the tree edit makes of the same
// state: files changed, deleted and added in new directories, a file
// that became a directory and a directory that became a file, a new
// symlink, an executable bit, a tracked directory that is now a nested
// repository (a gitlink where its files were) and an untracked one.
func TestCaptureWholeWay(t *testing.T) {
	r := gittest.New(t)
	for i := 0; i < 200; i++ {
		r.Write(fmt.Sprintf("d%02d/f%03d", i%20, i), fmt.Sprintf("file %d\n", i))
	}
	r.Write("a/file", "a was a directory\n")
	r.Write("c", "c was a file\n")
	r.Write("exe", "#!/bin/sh\n")
	r.Write("inner/x", "inner was tracked\n")
	r.Commit("init")
	for i := 0; i < 150; i++ {
		r.Write(fmt.Sprintf("d%02d/f%03d", i%20, i), fmt.Sprintf("file %d, changed\n", i))
	}
	for i := 150; i < 160; i++ {
		os.Remove(r.Path(fmt.Sprintf("d%02d/f%03d", i%20, i)))
	}
	for i := 0; i < 20; i++ {
		r.Write(fmt.Sprintf("new/n%02d/g%03d", i%4, i), fmt.Sprintf("new %d\n", i))
	}
	os.RemoveAll(r.Path("a"))
	r.Write("a", "a is a file\n")
	os.Remove(r.Path("c"))
	r.Write("c/y", "c is a directory\n")
	if err := os.Symlink("exe", r.Path("link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(r.Path("exe"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"inner", "untracked-repo"} {
		n := nested(t, r.Path(d))
		n.Write("z", "z\n")
		n.Git("-c", "user.name=Dev", "-c", "user.email=dev@example.com", "commit", "-q", "--allow-empty", "-m", d)
	}
	tick()

	snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	if runs(tr, "mktree") != 0 || !strings.Contains(tr, "write-tree [GIT_INDEX_FILE=") || !strings.Contains(tr, "/whole-") {
		t.Fatalf("a capture of %d changed paths did not take the whole way:\n%s", snap.Changed, tr)
	}
	t.Setenv("GIT_VENOM_TEST_TREE_WAY", "edit")
	want := scratch(t, r)
	if want.Tree != snap.Tree {
		t.Fatalf("the whole way made %s, the tree edit %s:\n%v\n%v", snap.Tree, want.Tree, r.Tree(string(snap.Tree)), r.Tree(string(want.Tree)))
	}
	tree := r.Tree(string(snap.Tree))
	if e := tree["inner"]; e.Mode != "160000" {
		t.Errorf("inner: %+v, want a gitlink", e)
	}
	if e := tree["exe"]; e.Mode != "100755" {
		t.Errorf("exe: %+v, want 100755", e)
	}
	if _, ok := tree["c/y"]; !ok {
		t.Errorf("c/y missing: %v", tree)
	}
	assertObjects(t, r, snap.Tree)
}

// TestKeptListingDamaged: the kept stage index's listing (<index>.ls) is
// used only while it is the file stage.json names (its SHA-256): one
// that another hand changed, here to name HEAD's blob of d/f00, makes
// the capture ask git again, and its tree holds the work tree's d/f00.
// Without the check the capture took the listing's word.
func TestKeptListingDamaged(t *testing.T) {
	t.Parallel()
	r, _, first := unstagedCapture(t, 3)
	if snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{}); snap.Tree != first.Tree || stageChildren(tr, "ls-files") != 0 {
		t.Fatalf("the dedup: tree %s (want %s), or it listed the stage index:\n%s", snap.Tree, first.Tree, tr)
	}
	lists, _ := filepath.Glob(filepath.Join(r.GitDir, "venom", "kept", "stage-*.ls"))
	if len(lists) != 1 {
		t.Fatalf("kept listings %v, want one", lists)
	}
	b, err := os.ReadFile(lists[0])
	if err != nil {
		t.Fatal(err)
	}
	now, head := r.Line("hash-object", "d/f00"), r.Line("rev-parse", "HEAD:d/f00")
	if !strings.Contains(string(b), now) {
		t.Fatalf("the listing %q does not name d/f00's blob %s", b, now)
	}
	if err := os.WriteFile(lists[0], []byte(strings.ReplaceAll(string(b), now, head)), 0o600); err != nil {
		t.Fatal(err)
	}
	snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	if snap.Tree != first.Tree {
		t.Fatalf("with a changed listing: tree %s, want %s:\n%s", snap.Tree, first.Tree, tr)
	}
	if stageChildren(tr, "ls-files") != 1 {
		t.Fatalf("a changed listing was not asked for again:\n%s", tr)
	}
}

// TestStatusIndexOfAFreshIndex: where status has nothing to refresh, the
// capture's copy of the user's index is kept as the status index all the
// same, and the next capture starts from it (a hard link to it, not a
// copy of the user's index). The user's index is never linked: its
// ctime, which the index cache keys on, and its link count stay.
func TestStatusIndexOfAFreshIndex(t *testing.T) {
	t.Parallel()
	r, _ := countingRepo(t, 3)
	r.Write("d/f00", "unstaged, longer than it was\n")
	// An index written after the files' second: no entry is racily
	// clean, and status has nothing to refresh in a copy of it.
	tick()
	r.Git("update-index", "-q", "--refresh", "--force-write-index")
	settle(t, r)
	index := filepath.Join(r.GitDir, "index")
	before, err := os.Stat(index)
	if err != nil {
		t.Fatal(err)
	}
	snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	if !strings.Contains(tr, "kept as the status index status-") {
		t.Fatalf("the first capture kept no status index:\n%s", tr)
	}
	for i := 0; i < 2; i++ {
		again, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
		if !strings.Contains(tr, "from the status index") || again.Tree != snap.Tree {
			t.Fatalf("capture %d: tree %s (want %s), or not from the status index:\n%s", i+2, again.Tree, snap.Tree, tr)
		}
	}
	after, err := os.Stat(index)
	if err != nil {
		t.Fatal(err)
	}
	_, _, bc, ok1 := plumbing.StatIdentity(before)
	_, _, ac, ok2 := plumbing.StatIdentity(after)
	st, ok3 := after.Sys().(*syscall.Stat_t)
	if !ok1 || !ok2 || !ok3 {
		t.Skip("no ctime or link count on this system")
	}
	if !os.SameFile(before, after) || bc != ac || st.Nlink != 1 {
		t.Fatalf("the user's index: ctime %d -> %d, links %d (want it unchanged, one link)", bc, ac, st.Nlink)
	}
}

// TestKeptSetsBesideStageJSON: the paths, directories and unsure paths
// of the kept stage index are in <index>.sets, raw, and stage.json, which
// every capture decodes, holds none of them, only how many paths there
// are (in base64 there, 10,000 changed paths cost a capture 17 ms to
// decode and more to encode).
func TestKeptSetsBesideStageJSON(t *testing.T) {
	t.Parallel()
	r, _, _ := unstagedCapture(t, 3)
	kept := filepath.Join(r.GitDir, "venom", "kept")
	b, err := os.ReadFile(filepath.Join(kept, "stage.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if _, ok := f["paths"]; ok {
		t.Errorf("stage.json holds the paths: %s", b)
	}
	if _, ok := f["dirs"]; ok {
		t.Errorf("stage.json holds the directories: %s", b)
	}
	if _, ok := f["unsure"]; ok {
		t.Errorf("stage.json holds the unsure paths: %s", b)
	}
	if n, _ := f["path_count"].(float64); n != 3 {
		t.Errorf("stage.json counts %v paths, want 3: %s", f["path_count"], b)
	}
	index, _ := f["index"].(string)
	sets, err := os.ReadFile(filepath.Join(kept, index+".sets"))
	if err != nil {
		t.Fatalf("no sets beside the kept stage index %q: %v", index, err)
	}
	paths, rest, found := strings.Cut(string(sets), "\x00\x00")
	if !found {
		t.Fatalf("sets %q: no empty record between the paths and the directories", sets)
	}
	dirs, unsure, found := strings.Cut(rest, "\x00\x00")
	if !found {
		t.Fatalf("sets %q: no empty record between the directories and the unsure paths", sets)
	}
	if unsure != "" {
		t.Errorf("unsure paths %q, want none (the files had settled)", unsure)
	}
	gotPaths := strings.Split(paths+"\x00", "\x00")
	gotPaths = gotPaths[:len(gotPaths)-1]
	gotDirs := strings.Split(dirs, "\x00")
	sort.Strings(gotPaths)
	sort.Strings(gotDirs)
	if want := []string{"d/f00", "d/f01", "d/f02"}; !reflect.DeepEqual(gotPaths, want) {
		t.Errorf("paths %q, want %q", gotPaths, want)
	}
	if want := []string{"/", "d/"}; !reflect.DeepEqual(gotDirs, want) {
		t.Errorf("directories %q, want %q", gotDirs, want)
	}
}

// TestKeptSetsDamaged: a sets file that is not the one stage.json names
// (changed, or gone) makes the kept stage index unused past its fast path
// (which the sum of the stamps decides, and which reads no sets): a
// capture after one of the files changed hashes every changed file again,
// not that one alone, and the tree is the same as from scratch. Trusted,
// a set missing a path would have had the stage index seeded wrong.
func TestKeptSetsDamaged(t *testing.T) {
	t.Parallel()
	for _, damage := range []string{"changed", "gone"} {
		t.Run(damage, func(t *testing.T) {
			t.Parallel()
			r, reads, first := unstagedCapture(t, 3)
			if snap := capture(t, r, plumbing.CaptureOptions{}); snap.Tree != first.Tree || reads() != 0 {
				t.Fatalf("the dedup: tree %s (want %s), or it hashed files again", snap.Tree, first.Tree)
			}
			sets, _ := filepath.Glob(filepath.Join(r.GitDir, "venom", "kept", "stage-*.sets"))
			if len(sets) != 1 {
				t.Fatalf("kept sets %v, want one", sets)
			}
			var err error
			if damage == "gone" {
				err = os.Remove(sets[0])
			} else {
				// d/f01 dropped from the paths: still a well-formed file.
				var b []byte
				if b, err = os.ReadFile(sets[0]); err == nil {
					err = os.WriteFile(sets[0], []byte(strings.Replace(string(b), "d/f01\x00", "", 1)), 0o600)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			r.Write("d/f00", "unstaged 0, and again\n")
			snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
			if got := reads(); got != 3 {
				t.Fatalf("with its sets %s, the kept stage index was used: %d files hashed, want 3:\n%s", damage, got, tr)
			}
			if want := scratch(t, r); snap.Tree != want.Tree {
				t.Fatalf("tree %s, want %s:\n%s", snap.Tree, want.Tree, tr)
			}
		})
	}
}

// TestKeptStampsSpareUpdateIndex (issue 16): a capture of the same
// unstaged files as the one before, each file's stamp (device, inode,
// size, mtime, ctime, mode) as that capture saw it, takes the kept stage
// index's entries and starts no update-index; a file rewritten to the
// same size with its mtime set back has another ctime, and is hashed
// again; a removal beside kept entries makes a new tree, which the next
// capture reuses (gittest sets GIT_VENOM_TEST_STAMP_SETTLE to 0).
func TestKeptStampsSpareUpdateIndex(t *testing.T) {
	t.Parallel()
	const n = 6
	r, reads := countingRepo(t, n)
	r.Write("keep/x", "x\n")
	r.Commit("more")
	reads()
	for i := 0; i < n; i++ {
		r.Write(fmt.Sprintf("d/f%02d", i), fmt.Sprintf("unstaged %d, longer than before\n", i))
	}
	tick()
	first, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	if got := reads(); got != n || stageChildren(tr, "update-index") != 1 {
		t.Fatalf("first capture read %d files (want %d), %d update-index runs (want 1):\n%s", got, n, stageChildren(tr, "update-index"), tr)
	}
	snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	if snap.Tree != first.Tree || reads() != 0 {
		t.Fatalf("second capture: tree %s, want %s", snap.Tree, first.Tree)
	}
	if stageChildren(tr, "update-index") != 0 || !strings.Contains(tr, "stamps say") {
		t.Fatalf("second capture staged the same files again:\n%s", tr)
	}

	// The same size, the old mtime: only the ctime tells.
	edited := rewriteKeepMtime(t, r, "d/f02")
	time.Sleep(20 * time.Millisecond) // a tick of the file system's clock: the edit settles before the capture
	snap, tr = tracedCapture(t, r, plumbing.CaptureOptions{})
	if got, _ := r.Show(string(snap.Tree), "d/f02"); got != edited {
		t.Fatalf("captured d/f02 %q, want the edit %q:\n%s", got, edited, tr)
	}
	if got := reads(); got != 1 {
		t.Fatalf("the capture after one edit read %d files, want 1", got)
	}
	assertSameAsScratch(t, r, snap)
	reads() // the scratch capture's

	// Kept entries with a removal beside them: taken, the tree written
	// once with the removal, and its memo kept.
	if _, tr = tracedCapture(t, r, plumbing.CaptureOptions{}); !strings.Contains(tr, "stamps say") {
		t.Fatalf("the capture after the edit's was staged again:\n%s", tr)
	}
	os.Remove(r.Path("keep/x"))
	removed, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	if !strings.Contains(tr, "stamps say") {
		t.Fatalf("a removal beside the kept paths staged them again:\n%s", tr)
	}
	if _, ok := r.Show(string(removed.Tree), "keep/x"); ok {
		t.Fatal("the capture after keep/x was removed still holds it")
	}
	assertSameAsScratch(t, r, removed)
	reads()
	again, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	if again.Tree != removed.Tree || runs(tr, "mktree") != 0 || !strings.Contains(tr, "the tree of the same changes") {
		t.Fatalf("the same changes again: tree %s (want %s), written again or not memoized:\n%s", again.Tree, removed.Tree, tr)
	}
	if reads() != 0 {
		t.Fatal("the captures of unchanged files read them")
	}
}

// TestKeptConfiguredFiles: a file the configuration names, an attributes
// file (core.attributesFile) or an included configuration (include.path,
// relative to the including file), edited after captures kept their
// indexes, changes what git makes of the files; the next capture, told the
// names as checkpoint.LoadConfig reads them (KnowConfigFiles), uses
// nothing kept and makes the tree a capture from scratch makes. Before,
// the kept stage index (and the stamps of the same files) gave the old
// blobs.
func TestKeptConfiguredFiles(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"attributesFile", "include", "onbranch"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			r := gittest.New(t)
			r.Git("config", "filter.up.clean", "tr a-z A-Z")
			r.Git("config", "filter.up.smudge", "cat")
			for i := 0; i < 3; i++ {
				r.Write(fmt.Sprintf("d/f%d.txt", i), fmt.Sprintf("file %d\n", i))
			}
			r.Commit("init")
			var named, edited string
			var edit string
			switch kind {
			case "attributesFile":
				named = filepath.Join(t.TempDir(), "attrs")
				edited, edit = named, "*.txt filter=up\n"
			case "include", "onbranch":
				named = "extra.cfg" // beside .git/config
				edited, edit = filepath.Join(r.GitDir, named), "[core]\n\tattributesFile = "+filepath.Join(r.GitDir, "more-attrs")+"\n"
				if err := os.WriteFile(filepath.Join(r.GitDir, "more-attrs"), []byte("*.txt filter=up\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if kind == "onbranch" {
				// The file holds the filter from the start, included
				// on another branch: the edit is a switch to it, at
				// the same commit, the file untouched.
				if err := os.WriteFile(edited, []byte(edit), 0o644); err != nil {
					t.Fatal(err)
				}
				edit = ""
			}
			if edit != "" {
				if err := os.WriteFile(edited, []byte("# nothing yet\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			key := map[string]string{"attributesFile": "core.attributesFile", "include": "include.path", "onbranch": "includeIf.onbranch:feature.path"}[kind]
			r.Git("config", key, named)
			for i := 0; i < 3; i++ {
				r.Write(fmt.Sprintf("d/f%d.txt", i), fmt.Sprintf("unstaged %d\n", i))
			}
			tick()
			take := func() (*plumbing.Snapshot, string) {
				t.Helper()
				return captureTraced(t, r, []string{named}, kind == "onbranch")
			}
			take()
			if _, tr := take(); !strings.Contains(tr, "stamps say") {
				t.Fatalf("the second capture did not take the kept entries:\n%s", tr)
			}
			if edit == "" {
				r.Git("switch", "-q", "-c", "feature")
			} else if err := os.WriteFile(edited, []byte(edit), 0o644); err != nil {
				t.Fatal(err)
			}
			snap, tr := take()
			if got, _ := r.Show(string(snap.Tree), "d/f1.txt"); got != "UNSTAGED 1\n" {
				t.Fatalf("d/f1.txt captured as %q after %s named a filter for it; want %q:\n%s", got, key, "UNSTAGED 1\n", tr)
			}
			assertSameAsScratch(t, r, snap)
		})
	}
}

// captureTraced is a capture of r by a new runner told the configured
// files names (KnowConfigFiles), and its trace.
func captureTraced(t *testing.T, r *gittest.Repo, names []string, onBranch bool) (*plumbing.Snapshot, string) {
	t.Helper()
	repo, err := plumbing.Open(context.Background(), r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var trace strings.Builder
	plumbing.SetTrace(repo, &trace)
	repo.KnowConfigFiles(names, onBranch)
	snap, err := repo.Capture(context.Background(), plumbing.CaptureOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return snap, trace.String()
}

// TestKeptConfigEnvFiles: the global and the system configuration files
// that GIT_CONFIG_GLOBAL and GIT_CONFIG_SYSTEM name, edited after
// captures kept their indexes (the variables' values unchanged), change
// what git makes of the files; the next capture uses nothing kept. Before,
// only the variables' values were keyed on, and the kept stage gave the
// old blobs. (Not parallel: it sets the variables for the process.)
func TestKeptConfigEnvFiles(t *testing.T) {
	for _, v := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"} {
		t.Run(v, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "gitconfig")
			if err := os.WriteFile(cfg, []byte("# nothing yet\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			gittest.Setup() // before the variables: it clears GIT_*
			t.Setenv(v, cfg)
			if v == "GIT_CONFIG_SYSTEM" {
				t.Setenv("GIT_CONFIG_NOSYSTEM", "") // restored after
				os.Unsetenv("GIT_CONFIG_NOSYSTEM")
			}
			r := gittest.New(t)
			r.Git("config", "filter.up.clean", "tr a-z A-Z")
			r.Git("config", "filter.up.smudge", "cat")
			attrs := filepath.Join(r.GitDir, "more-attrs")
			if err := os.WriteFile(attrs, []byte("*.txt filter=up\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			r.Write("d/f.txt", "file\n")
			r.Commit("init")
			r.Write("d/f.txt", "unstaged\n")
			tick()
			take := func() (*plumbing.Snapshot, string) {
				t.Helper()
				return captureTraced(t, r, nil, false)
			}
			take()
			if _, tr := take(); !strings.Contains(tr, "stamps say") {
				t.Fatalf("the second capture did not take the kept entries:\n%s", tr)
			}
			if err := os.WriteFile(cfg, []byte("[core]\n\tattributesFile = "+attrs+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			snap, tr := take()
			if got, _ := r.Show(string(snap.Tree), "d/f.txt"); got != "UNSTAGED\n" {
				t.Fatalf("d/f.txt captured as %q after %s's file named a filter for it; want %q:\n%s", got, v, "UNSTAGED\n", tr)
			}
			assertSameAsScratch(t, r, snap)
		})
	}
}

// rewriteKeepMtime writes rel's content in upper case (the same size) and
// puts its mtime back, as cp -p would: only the ctime tells. It returns
// the new content.
func rewriteKeepMtime(t *testing.T, r *gittest.Repo, rel string) string {
	t.Helper()
	p := r.Path(rel)
	st, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	content := strings.ToUpper(r.Read(rel))
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	return content
}

// TestKeptStampsSomePaths: beside 20 files changed and never staged, one
// more edit and a rewrite of the same size with the mtime put back (only
// the ctime tells): git reads those two files and no other, the others'
// stamps being as kept, and the tree is a capture from scratch's. With
// the kept stamps damaged, git is asked about every path again.
func TestKeptStampsSomePaths(t *testing.T) {
	t.Parallel()
	const n = 20
	r, reads, _ := unstagedCapture(t, n)
	tick() // the edits and the capture in one second: their entries Unsure
	r.Write("d/f03", "edited again\n")
	rewritten := rewriteKeepMtime(t, r, "d/f07")
	time.Sleep(20 * time.Millisecond) // a tick of the file system's clock: the edits settle before the capture
	snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	if got := reads(); got != 2 {
		t.Fatalf("the capture after two edits read %d files, want 2:\n%s", got, tr)
	}
	if !strings.Contains(tr, fmt.Sprintf("%d of the %d staged paths are as the kept stage index's stamps say", n-2, n)) {
		t.Fatalf("the capture did not leave the unchanged paths out:\n%s", tr)
	}
	if got, _ := r.Show(string(snap.Tree), "d/f07"); got != rewritten {
		t.Fatalf("captured d/f07 %q, want %q", got, rewritten)
	}
	if got, _ := r.Show(string(snap.Tree), "d/f03"); got != "edited again\n" {
		t.Fatalf("captured d/f03 %q", got)
	}
	assertSameAsScratch(t, r, snap)
	reads() // the scratch capture's

	// Damaged stamps: not used.
	r.Write("d/f03", "edited a third time\n")
	time.Sleep(20 * time.Millisecond)
	stamps, _ := filepath.Glob(filepath.Join(r.GitDir, "venom", "kept", "stage-*.stamps"))
	if len(stamps) != 1 {
		t.Fatalf("kept stamps: %v, want one file", stamps)
	}
	b, err := os.ReadFile(stamps[0])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 1
	if err := os.WriteFile(stamps[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	snap, tr = tracedCapture(t, r, plumbing.CaptureOptions{})
	if strings.Contains(tr, "git is asked about the others") {
		t.Fatalf("damaged stamps were used:\n%s", tr)
	}
	if got := reads(); got != 2 {
		// d/f03, and d/f07, whose entry was Unsure; git still finds
		// the others clean by the kept index's stat data.
		t.Fatalf("the capture with damaged stamps read %d files, want 2", got)
	}
	if got, _ := r.Show(string(snap.Tree), "d/f03"); got != "edited a third time\n" {
		t.Fatalf("captured d/f03 %q", got)
	}
	assertSameAsScratch(t, r, snap)
}

// TestKeptStageFarBigger (issue 16): after a capture of many changed
// paths (a big turn), the captures that stage none of them read nothing
// of the kept stage index but stage.json: a dedup takes the fast path and
// the memo with its sets gone. A capture that stages far fewer paths than
// the kept index holds (keptUsable) stages without it, hashing its one
// file again rather than copying the big index and dropping the rest of
// its entries, and keeps its own; the tree is the one from scratch.
func TestKeptStageFarBigger(t *testing.T) {
	t.Parallel()
	const n = 2*1 + 64 + 10 // more than keptUsable allows for one path
	r, reads, first := unstagedCapture(t, n)
	kept := filepath.Join(r.GitDir, "venom", "kept")
	sets, _ := filepath.Glob(filepath.Join(kept, "stage-*.sets"))
	if len(sets) != 1 {
		t.Fatalf("kept sets %v, want one", sets)
	}
	if err := os.Remove(sets[0]); err != nil {
		t.Fatal(err)
	}
	snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	if snap.Tree != first.Tree || reads() != 0 || runs(tr, "update-index") != 0 || runs(tr, "mktree") != 0 {
		t.Fatalf("the dedup, its sets gone: tree %s (want %s); it staged or wrote a tree:\n%s", snap.Tree, first.Tree, tr)
	}
	// All but d/f00 back as HEAD has them: one path to stage.
	for i := 1; i < n; i++ {
		r.Write(fmt.Sprintf("d/f%02d", i), fmt.Sprintf("content %d\n", i))
	}
	r.Write("d/f00", "unstaged 0, and again\n")
	// The reverted files' stat data fresh in the index, and not racily
	// clean: status reads none of them (a read would be counted).
	tick()
	r.Git("update-index", "-q", "--refresh")
	tick()
	reads()
	snap, tr = tracedCapture(t, r, plumbing.CaptureOptions{})
	if !strings.Contains(tr, fmt.Sprintf("capture: the kept stage index holds %d paths, far more than the 1 staged now: staged without it", n)) {
		t.Fatalf("the kept stage index of %d paths was used for one:\n%s", n, tr)
	}
	if got := reads(); got != 1 {
		t.Errorf("%d files hashed, want 1:\n%s", got, tr)
	}
	if want := scratch(t, r); snap.Tree != want.Tree {
		t.Fatalf("tree %s, want %s:\n%s", snap.Tree, want.Tree, tr)
	}
	b, err := os.ReadFile(filepath.Join(kept, "stage.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Count int `json:"path_count"`
	}
	if err := json.Unmarshal(b, &f); err != nil || f.Count != 1 {
		t.Fatalf("the kept stage index after: %s (%v), want one path", b, err)
	}
}

// TestMemoCountFarOff (issue 16): a capture whose changes are far more or
// fewer than the memo's (by more than half of its own) cannot edit the
// memo's tree (memoDelta would find more than half of them differ), and
// does not read the memo's changes to find out: stage.json says how many
// there were. Its tree is the one from scratch.
func TestMemoCountFarOff(t *testing.T) {
	t.Parallel()
	const n = 40
	r, _, _ := unstagedCapture(t, n)
	// 17 of the 40 still changed, one of them again.
	for i := 17; i < n; i++ {
		r.Write(fmt.Sprintf("d/f%02d", i), fmt.Sprintf("content %d\n", i))
	}
	r.Write("d/f00", "unstaged 0, and again\n")
	tick()
	snap, tr := tracedCapture(t, r, plumbing.CaptureOptions{})
	if !strings.Contains(tr, fmt.Sprintf("capture: the memo's %d changes cannot be within half of these 17", n)) {
		t.Fatalf("the memo's changes were read, or the count not kept:\n%s", tr)
	}
	if want := scratch(t, r); snap.Tree != want.Tree {
		t.Fatalf("tree %s, want %s:\n%s", snap.Tree, want.Tree, tr)
	}
}
