package checkpoint_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/refs"
)

// subTree is a top repository with lib and lib/in checked out as
// submodules (gittest.Repo.Submodules) and a file of its own.
func subTree(t *testing.T) (top, lib, in *gittest.Repo) {
	t.Helper()
	top = gittest.New(t)
	top.Write("a", "a1\n")
	top.Commit("init")
	lib, in = top.Submodules()
	return top, lib, in
}

// repoNames is the repo member of each of a record's repos[].
func repoNames(rs []journal.RepoState) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Repo)
	}
	return out
}

// TestEveryRepositoryIsCaptured pins issue 18's capture (RFC 4.2 repos[],
// 5.1): the top and each checked-out submodule, two deep, each with its
// own commit of its own tree, its own ref refs/venom/checkpoints/<agent>/<n>
// with the same n in its own git dir, the parent's tree holding the
// submodule's HEAD as the gitlink; nothing the user sees changes in any
// of them.
func TestEveryRepositoryIsCaptured(t *testing.T) {
	top, lib, in := subTree(t)
	in.Write("i", "i2 (the agent's)\n")
	in.Write("new", "n\n")
	lib.Write("l", "l2\n")
	before := map[*gittest.Repo]*gittest.State{top: top.Snapshot(), lib: lib.Snapshot(), in: in.Snapshot()}
	tr := openTree(t, top)
	res, err := tr.Take(context.Background(), checkpoint.TakeOptions{Agent: "a1", Reason: checkpoint.ReasonManual})
	if err != nil {
		t.Fatal(err)
	}
	// The listing checks the top's ref against the top's commit: a
	// submodule's commit is another (before, every checkpoint of a tree
	// with a submodule was listed missing and moved).
	st, err := tr.Log.Load()
	if err != nil {
		t.Fatal(err)
	}
	l, err := tr.List(context.Background(), st, "a1", checkpoint.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Checkpoints) != 1 || l.Checkpoints[0].Missing || l.Checkpoints[0].Moved {
		t.Errorf("list: %+v, want k1 neither missing nor moved", l.Checkpoints)
	}
	for r, st := range before {
		if added := r.AssertUnchanged(st); len(added) != 1 || added[0] != refs.Checkpoint("a1", 1) {
			t.Errorf("%s: refs added %v, want only %s", r.Dir, added, refs.Checkpoint("a1", 1))
		}
	}
	rs := res.Checkpoint.Repos
	if got := strings.Join(repoNames(rs), " "); got != ". lib lib/in" {
		t.Fatalf("repos %q, want . lib lib/in", got)
	}
	for i, r := range []*gittest.Repo{top, lib, in} {
		if rs[i].Path != r.Dir {
			t.Errorf("repos[%d].path %s, want %s", i, rs[i].Path, r.Dir)
		}
		if v := r.Line("rev-parse", refs.Checkpoint("a1", 1)); v != rs[i].Commit {
			t.Errorf("%s: ref holds %s, record says %s", rs[i].Repo, v, rs[i].Commit)
		}
		if h := r.Line("rev-parse", "HEAD"); rs[i].Head == nil || *rs[i].Head != h {
			t.Errorf("%s: head %v, want %s", rs[i].Repo, rs[i].Head, h)
		}
		if p := r.Line("rev-parse", rs[i].Commit+"^"); p != *rs[i].Head {
			t.Errorf("%s: the commit's parent is %s, want HEAD %s", rs[i].Repo, p, *rs[i].Head)
		}
	}
	if got, _ := in.Show(rs[2].Commit, "i"); got != "i2 (the agent's)\n" {
		t.Errorf("in's checkpoint holds i = %q", got)
	}
	if got, _ := in.Show(rs[2].Commit, "new"); got != "n\n" {
		t.Errorf("in's checkpoint holds new = %q", got)
	}
	if got, _ := lib.Show(rs[1].Commit, "l"); got != "l2\n" {
		t.Errorf("lib's checkpoint holds l = %q", got)
	}
	// The parents' trees hold the submodules' HEADs, and nothing inside.
	if e := top.Tree(rs[0].Commit)["lib"]; e.Mode != "160000" || e.OID != lib.Line("rev-parse", "HEAD") {
		t.Errorf("top's tree has lib as %+v, want the gitlink of lib's HEAD", e)
	}
	if e := lib.Tree(rs[1].Commit)["in"]; e.Mode != "160000" || e.OID != in.Line("rev-parse", "HEAD") {
		t.Errorf("lib's tree has in as %+v, want the gitlink of in's HEAD", e)
	}
	for p := range top.Tree(rs[0].Commit) {
		if strings.HasPrefix(p, "lib/") {
			t.Errorf("top's tree holds %s, inside the submodule", p)
		}
	}
	// Dirty: in has changes, and lib holds in.
	if sm := rs[0].Submodules; len(sm) != 1 || sm[0].Path != "lib" || !sm[0].Dirty {
		t.Errorf("top's submodules %+v, want lib dirty", sm)
	}
	if sm := rs[1].Submodules; len(sm) != 1 || sm[0].Path != "in" || !sm[0].Dirty {
		t.Errorf("lib's submodules %+v, want in dirty", sm)
	}
}

// TestUnchangedRepositoryKeepsItsCommit pins RFC 5.1 and 3.2 across
// repositories: an edit inside the deepest submodule alone is a new
// checkpoint (the top's tree did not change, so a capture of the top
// alone would have deduplicated it), whose refs in the top and in lib
// point at the same commits as before; a capture with nothing changed
// anywhere is deduplicated.
func TestUnchangedRepositoryKeepsItsCommit(t *testing.T) {
	top, _, in := subTree(t)
	tr := openTree(t, top)
	ctx := context.Background()
	k1, err := tr.Take(ctx, checkpoint.TakeOptions{Agent: "a1", Reason: checkpoint.ReasonTurnStart})
	if err != nil {
		t.Fatal(err)
	}
	again, err := openTree(t, top).Take(ctx, checkpoint.TakeOptions{Agent: "a1", Reason: checkpoint.ReasonManual})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Reused || again.Checkpoint.Checkpoint != "k1" {
		t.Fatalf("nothing changed: got %s reused=%v, want k1 reused", again.Checkpoint.Checkpoint, again.Reused)
	}
	in.Write("i", "i2\n")
	k2, err := openTree(t, top).Take(ctx, checkpoint.TakeOptions{Agent: "a1", Reason: checkpoint.ReasonManual})
	if err != nil {
		t.Fatal(err)
	}
	if k2.Reused || k2.Checkpoint.Checkpoint != "k2" {
		t.Fatalf("an edit inside lib/in: got %s reused=%v, want a new k2", k2.Checkpoint.Checkpoint, k2.Reused)
	}
	a, b := k1.Checkpoint.Repos, k2.Checkpoint.Repos
	if len(b) != 3 {
		t.Fatalf("k2 has repos %v", repoNames(b))
	}
	for i := 0; i < 2; i++ {
		if a[i].Commit != b[i].Commit {
			t.Errorf("%s did not change, but k2's commit %s is not k1's %s", b[i].Repo, b[i].Commit, a[i].Commit)
		}
	}
	if a[2].Commit == b[2].Commit {
		t.Errorf("lib/in changed, but k2 reuses k1's commit")
	}
	if got, _ := in.Show(refs.Checkpoint("a1", 2), "i"); got != "i2\n" {
		t.Errorf("in's k2 holds i = %q", got)
	}
	if v := top.Line("rev-parse", refs.Checkpoint("a1", 2)); v != a[0].Commit {
		t.Errorf("top's ref 2 holds %s, want k1's commit %s", v, a[0].Commit)
	}
}

// TestRetentionAndCleanReachEveryRepository pins RFC 5.2 and 5.3 across
// repositories: a pruned checkpoint's ref goes from every repository it
// is in, and clean removes the agent's refs from all of them.
func TestRetentionAndCleanReachEveryRepository(t *testing.T) {
	top, lib, in := subTree(t)
	top.Git("config", "venom.checkpoints.keep", "1")
	ctx := context.Background()
	for i := 1; i <= 2; i++ {
		if _, err := openTree(t, top).Take(ctx, checkpoint.TakeOptions{Agent: "a1", Reason: checkpoint.ReasonTurnStart}); err != nil {
			t.Fatal(err)
		}
		in.Write("i", strings.Repeat("x", i)+"\n")
		if _, err := openTree(t, top).Take(ctx, checkpoint.TakeOptions{Agent: "a1", Reason: checkpoint.ReasonTurnEnd}); err != nil {
			t.Fatal(err)
		}
	}
	ckRefs := func(r *gittest.Repo) []string {
		var out []string
		for ref := range r.Refs() {
			if strings.HasPrefix(ref, refs.Prefix) {
				out = append(out, ref)
			}
		}
		return out
	}
	// k1 (start), k2 (end), k2 reused (start), k3 (end); keep=1:
	// retention after each turn_end leaves the newest alone.
	for _, r := range []*gittest.Repo{top, lib, in} {
		if got := ckRefs(r); len(got) != 1 || got[0] != refs.Checkpoint("a1", 3) {
			t.Errorf("%s: checkpoint refs %v, want only a1/3", r.Dir, got)
		}
	}
	tr := openTree(t, top)
	st, err := tr.Log.Load()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Clean(ctx, st.Agents["a1"], time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*gittest.Repo{top, lib, in} {
		if got := ckRefs(r); len(got) != 0 {
			t.Errorf("%s: after clean, checkpoint refs %v", r.Dir, got)
		}
	}
}

// TestDoctorNamesASubmodulesUnrecordedRefs pins issue 18's doctor: a
// checkpoint ref in a submodule that no log record names is reported,
// with the submodule's path; one whose ref in a submodule moved is too.
func TestDoctorNamesASubmodulesUnrecordedRefs(t *testing.T) {
	top, lib, in := subTree(t)
	ctx := context.Background()
	if _, err := openTree(t, top).Take(ctx, checkpoint.TakeOptions{Agent: "a1", Reason: checkpoint.ReasonManual}); err != nil {
		t.Fatal(err)
	}
	refsCheck := func() checkpoint.Check {
		for _, c := range openTree(t, top).Doctor(ctx) {
			if c.ID == "checkpoints.refs" {
				return c
			}
		}
		t.Fatal("no checkpoints.refs check")
		return checkpoint.Check{}
	}
	if c := refsCheck(); c.Level != "ok" {
		t.Fatalf("before: %+v", c)
	}
	in.Git("update-ref", "refs/venom/checkpoints/ghost/7", "HEAD")
	lib.Git("update-ref", refs.Checkpoint("a1", 1), "HEAD")
	c := refsCheck()
	if c.Level != "warn" || !strings.Contains(c.Message, "lib/in:refs/venom/checkpoints/ghost/7") {
		t.Errorf("an unrecorded ref in lib/in: %+v", c)
	}
	if !strings.Contains(c.Message, "a1/k1 in lib (now another commit") {
		t.Errorf("a moved ref in lib: %+v", c)
	}
}

// TestSubmoduleConfiguredFiles: a file that decides what git makes of a
// submodule's bytes, named by the submodule's own configuration
// (include.path) or by the global one (core.attributesFile, in the file
// GIT_CONFIG_GLOBAL names), edited after captures kept the submodule's
// indexes, with no file of the tree touched: the next checkpoint holds the
// submodule's file as git hashes it now. Before, the submodule's runner
// knew none of the configured files, and its kept stage gave the old
// blob. (Not parallel: it sets GIT_CONFIG_GLOBAL for the process.)
func TestSubmoduleConfiguredFiles(t *testing.T) {
	for _, kind := range []string{"own include", "global"} {
		t.Run(kind, func(t *testing.T) {
			gittest.Setup() // before the variable: it clears GIT_*
			global := filepath.Join(t.TempDir(), "gitconfig")
			if err := os.WriteFile(global, []byte("# nothing yet\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv("GIT_CONFIG_GLOBAL", global)
			top, lib, _ := subTree(t)
			gitDir := lib.Line("rev-parse", "--absolute-git-dir")
			attrs := filepath.Join(gitDir, "up-attrs")
			if err := os.WriteFile(attrs, []byte("*.txt filter=up\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			lib.Git("config", "filter.up.clean", "tr a-z A-Z")
			lib.Git("config", "filter.up.smudge", "cat")
			// The edit: the included file names the attributes file, or
			// the attributes file the global configuration names gets
			// the filter.
			edited, edit := filepath.Join(gitDir, "extra.cfg"), "[core]\n\tattributesFile = "+attrs+"\n"
			if kind == "global" {
				edited, edit = filepath.Join(t.TempDir(), "attrs"), "*.txt filter=up\n"
				if err := os.WriteFile(global, []byte("[core]\n\tattributesFile = "+edited+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				lib.Git("config", "include.path", "extra.cfg")
			}
			if err := os.WriteFile(edited, []byte("# nothing yet\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			lib.Write("u.txt", "unstaged\n")
			time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
			commit := func(label string) string {
				t.Helper()
				res, err := openTree(t, top).Take(context.Background(), checkpoint.TakeOptions{Agent: "a1", Reason: checkpoint.ReasonManual, Label: label})
				if err != nil {
					t.Fatal(err)
				}
				return res.Checkpoint.Repos[1].Commit
			}
			commit("one")
			commit("two")
			if err := os.WriteFile(edited, []byte(edit), 0o644); err != nil {
				t.Fatal(err)
			}
			if got, _ := lib.Show(commit("three"), "u.txt"); got != "UNSTAGED\n" {
				t.Fatalf("lib's u.txt captured as %q after %s named a filter for it; want %q", got, edited, "UNSTAGED\n")
			}
		})
	}
}

// TestDoctorKnowsTheOtherLogsRefs: checkpoints taken inside a submodule
// (its own log) and at the top (whose refs are in the submodule's git dir
// too) share the submodule's refs/venom/checkpoints/; the doctor at
// either level must call none of them an orphan. Before, each doctor
// advised deleting the other log's refs, and following it, then a gc,
// lost the content only that checkpoint held.
func TestDoctorKnowsTheOtherLogsRefs(t *testing.T) {
	top, lib, _ := subTree(t)
	ctx := context.Background()
	if _, err := openTree(t, lib).Take(ctx, checkpoint.TakeOptions{Agent: "a1", Reason: checkpoint.ReasonManual}); err != nil {
		t.Fatal(err)
	}
	lib.Write("notes", "only here\n")
	if _, err := openTree(t, top).Take(ctx, checkpoint.TakeOptions{Agent: "a1", Reason: checkpoint.ReasonManual}); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(lib.Git("for-each-ref", "--format=%(refname)", refs.Prefix)); got != refs.Checkpoint("a1", 1)+"\n"+refs.Checkpoint("a1", 2) {
		t.Fatalf("lib's refs: %q, want a1/1 (its own log's) and a1/2 (the top's)", got)
	}
	refsCheck := func(r *gittest.Repo) checkpoint.Check {
		for _, c := range openTree(t, r).Doctor(ctx) {
			if c.ID == "checkpoints.refs" {
				return c
			}
		}
		t.Fatal("no checkpoints.refs check")
		return checkpoint.Check{}
	}
	for _, r := range []*gittest.Repo{top, lib} {
		if c := refsCheck(r); c.Level != "ok" {
			t.Errorf("doctor in %s: %+v, want ok", r.Dir, c)
		}
	}
	// A ref neither log names is still one.
	lib.Git("update-ref", "refs/venom/checkpoints/ghost/9", "HEAD")
	if c := refsCheck(lib); c.Level != "warn" || !strings.Contains(c.Message, "refs/venom/checkpoints/ghost/9") {
		t.Errorf("an unrecorded ref in lib, doctor in lib: %+v", c)
	}
}

// TestSymlinkedSubmoduleIsNotEntered: a gitlink path that is a symbolic
// link to a repository outside the tree is not that submodule: the
// capture records the symlink as the tree has it and writes nothing into
// the repository it leads to (no ref, no venom/ directory), so a rollback
// has nothing there to change (rollback(1): nothing is changed through a
// symbolic link). Before, the capture followed it and recorded the
// outside repository as submodule lib, and a rollback rewrote its files.
func TestSymlinkedSubmoduleIsNotEntered(t *testing.T) {
	top, lib, _ := subTree(t)
	other := gittest.New(t)
	other.Write("s", "the person's other checkout\n")
	other.Commit("other")
	if err := os.RemoveAll(lib.Dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other.Dir, lib.Dir); err != nil {
		t.Fatal(err)
	}
	before := other.Snapshot()
	res := take(t, top, checkpoint.TakeOptions{Agent: "a1", Reason: checkpoint.ReasonManual})
	if got := strings.Join(repoNames(res.Checkpoint.Repos), " "); got != "." {
		t.Errorf("repos %q, want only the top", got)
	}
	if added := other.AssertUnchanged(before); len(added) != 0 {
		t.Errorf("refs added in the repository the symlink leads to: %v", added)
	}
	if _, err := os.Lstat(filepath.Join(other.GitDir, "venom")); !os.IsNotExist(err) {
		t.Errorf("venom/ in the repository the symlink leads to: %v", err)
	}
	if got := strings.TrimSpace(top.Git("ls-tree", "--format=%(objectmode)", res.Checkpoint.Repos[0].Commit, "lib")); got != "120000" {
		t.Errorf("lib in the checkpoint: mode %q, want the symlink (120000)", got)
	}
}
