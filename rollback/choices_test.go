package rollback_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/rollback"
)

// envIntact fails t unless .env holds "SECRET=1\n" with bits 0600, the
// .env the tests below start with; what prefixes the messages.
func envIntact(t *testing.T, r *gittest.Repo, what string) {
	t.Helper()
	if got := r.Read(".env"); got != "SECRET=1\n" {
		t.Errorf("%s.env = %q", what, got)
	}
	if st, err := os.Lstat(r.Path(".env")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("%s.env mode: %v %v", what, st, err)
	}
}

// exact reports whether a result says exact: true.
func exact(res *rollback.Result) bool { return res.Exact != nil && *res.Exact }

// leftOf finds path in a result's left; nil when absent.
func leftOf(res *rollback.Result, path string) *rollback.Left {
	for i, l := range res.Repos[0].Left {
		if l.Path == path {
			return &res.Repos[0].Left[i]
		}
	}
	return nil
}

func fileOf(res *rollback.Result, path string) *rollback.File {
	for i, f := range res.Repos[0].Files {
		if f.Path == path {
			return &res.Repos[0].Files[i]
		}
	}
	return nil
}

// TestFreshFileKept: in an unguarded tree with no --outside, a file
// created after the last checkpoint, which only S holds, is kept (left
// outside, "created after the last checkpoint"); a file the last
// checkpoint holds is deleted; --outside overwrite deletes the fresh file
// too, its content in the safety checkpoint.
func TestFreshFileKept(t *testing.T) {
	t.Parallel()
	for _, outside := range []string{"", "overwrite"} {
		t.Run("outside="+outside, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, false)
			r := f.r
			r.Write("a.txt", "one\n")
			r.Commit("init")
			f.take(checkpoint.ReasonTurnStart)
			r.Write("turn.txt", "made in the turn\n")
			f.take(checkpoint.ReasonTurnEnd)
			r.Write("fresh.txt", "made after the last checkpoint\n")
			res := f.mustRollback("k1", rollback.Options{Restore: "files", Outside: outside})
			if fc := fileOf(res, "turn.txt"); fc == nil || fc.Change != "delete" {
				t.Errorf("turn.txt: %+v", fc)
			}
			if _, err := os.Lstat(r.Path("turn.txt")); !os.IsNotExist(err) {
				t.Errorf("turn.txt still there: %v", err)
			}
			l := leftOf(res, "fresh.txt")
			_, err := os.Lstat(r.Path("fresh.txt"))
			if outside == "" {
				if l == nil || l.Reason != "outside" || l.Detail != "created after the last checkpoint" || fileOf(res, "fresh.txt") != nil {
					t.Errorf("fresh.txt: left %+v, files %+v", l, res.Repos[0].Files)
				}
				if got := r.Read("fresh.txt"); got != "made after the last checkpoint\n" {
					t.Errorf("fresh.txt = %q", got)
				}
				return
			}
			if fc := fileOf(res, "fresh.txt"); l != nil || fc == nil || fc.Change != "delete" || fc.Class != rollback.ClassOutside {
				t.Errorf("fresh.txt with --outside overwrite: left %+v, file %+v", l, fc)
			}
			if !os.IsNotExist(err) {
				t.Errorf("fresh.txt still there: %v", err)
			}
			if got, _ := r.Show(f.ref(res.Safety), "fresh.txt"); got != "made after the last checkpoint\n" {
				t.Errorf("safety checkpoint fresh.txt = %q", got)
			}
		})
	}
}

// TestIgnoredAtTarget: a turn drops the .env rule from .gitignore, so .env
// is captured; rolling back to before deletes nothing the target's own
// ignore rules ignore (left ignored_at_target), .env keeps its bytes, and
// the result is exact (CASES BR-05 B).
func TestIgnoredAtTarget(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	r.Write(".gitignore", ".env\nlogs/\n")
	r.Write("a.txt", "one\n")
	r.Commit("init")
	write(t, r.Dir, ".env", []byte("SECRET=1\n"), 0o600)
	r.Write("logs/run.log", "log\n")
	f.take(checkpoint.ReasonTurnStart)
	r.Write(".gitignore", "")
	r.Write("a.txt", "two\n")
	f.take(checkpoint.ReasonTurnEnd)
	if got, ok := r.Show(f.ref("k2"), ".env"); !ok || got != "SECRET=1\n" {
		t.Fatalf("scenario: k2 does not hold .env (%q)", got)
	}
	res := f.mustRollback("k1", rollback.Options{Restore: "files"})
	for _, p := range []string{".env", "logs/run.log"} {
		if l := leftOf(res, p); l == nil || l.Reason != "ignored_at_target" || fileOf(res, p) != nil {
			t.Errorf("%s: left %+v", p, l)
		}
	}
	envIntact(t, r, "")
	if got := r.Read("logs/run.log"); got != "log\n" {
		t.Errorf("logs/run.log = %q", got)
	}
	if got := r.Read(".gitignore"); got != ".env\nlogs/\n" {
		t.Errorf(".gitignore = %q", got)
	}
	if !exact(res) {
		t.Errorf("exact is false")
	}
}

// TestIgnoredBelowTargetFile: a tracked file that .gitignore matches
// (added with -f), under a directory that a turn replaced by a file. The
// rollback to before the turn puts the directory back; its undo, whose target holds the file at logs, deletes the file
// below it although the target's rules ignore its name (nothing could be
// there in the target: no ignored_at_target), and gives back the file
// with its bytes. Before, the undo kept logs/keep.log and left logs
// ignored_in_the_way: the tree matched neither S nor the target.
func TestIgnoredBelowTargetFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	r.Write(".gitignore", "*.log\n")
	r.Write("logs/keep.log", "tracked log\n")
	r.Git("add", ".gitignore")
	r.Git("add", "-f", "logs/keep.log")
	r.Git("commit", "-q", "-m", "init")
	f.take(checkpoint.ReasonTurnStart)
	if err := os.RemoveAll(r.Path("logs")); err != nil {
		t.Fatal(err)
	}
	r.Write("logs", "my notes\n")
	f.take(checkpoint.ReasonTurnEnd)
	res := f.mustRollback("k1", rollback.Options{Restore: "files"})
	if got := r.Read("logs/keep.log"); got != "tracked log\n" {
		t.Fatalf("rollback: logs/keep.log = %q", got)
	}
	undo := f.mustRollback(res.Safety, rollback.Options{Restore: "files"})
	if len(undo.Repos[0].Left) != 0 {
		t.Errorf("undo left %+v", undo.Repos[0].Left)
	}
	if fc := fileOf(undo, "logs/keep.log"); fc == nil || fc.Change != "delete" {
		t.Errorf("undo: logs/keep.log %+v", fc)
	}
	if fc := fileOf(undo, "logs"); fc == nil || fc.Change != "create" {
		t.Errorf("undo: logs %+v", fc)
	}
	if st, err := os.Lstat(r.Path("logs")); err != nil || !st.Mode().IsRegular() {
		t.Fatalf("undo: logs is %v (%v), not a file", st, err)
	}
	if got := r.Read("logs"); got != "my notes\n" {
		t.Errorf("undo: logs = %q", got)
	}
	if !exact(undo) {
		t.Errorf("undo: exact is false")
	}
}

// TestUntrackedEnvKeptAfterReset (a break-it pass, 2026-12-06): .env was
// committed by mistake, then ignored and untracked with `git rm --cached`
// (not yet committed), so the turn's first checkpoint could not record
// it; a `git reset` in the turn tracks it again, and the last checkpoint
// holds it. Rolling back to the first deletes nothing its rules ignore:
// .env is left ignored_at_target, bytes and bits kept, although the
// target's HEAD and the index now both hold it (the index at the
// target's time did not: no checkpoint records that), CASES BR-05 B.
func TestUntrackedEnvKeptAfterReset(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	r.Write("app.txt", "x\n")
	write(t, r.Dir, ".env", []byte("SECRET=1\n"), 0o600)
	r.Git("add", "app.txt", ".env")
	r.Git("commit", "-q", "-m", "init")
	r.Write(".gitignore", ".env\n")
	r.Git("add", ".gitignore")
	r.Git("commit", "-q", "-m", "ignore")
	r.Git("rm", "-q", "--cached", ".env")
	f.take(checkpoint.ReasonTurnStart)
	if _, ok := r.Show(f.ref("k1"), ".env"); ok {
		t.Fatalf("scenario: k1 holds .env")
	}
	r.Write("app.txt", "y\n")
	r.Git("reset", "-q")
	f.take(checkpoint.ReasonTurnEnd)
	res := f.mustRollback("k1", rollback.Options{Restore: "files"})
	if l := leftOf(res, ".env"); l == nil || l.Reason != "ignored_at_target" || fileOf(res, ".env") != nil {
		t.Errorf(".env: left %+v, files %+v", l, res.Repos[0].Files)
	}
	envIntact(t, r, "")
	if got := r.Read("app.txt"); got != "x\n" {
		t.Errorf("app.txt = %q", got)
	}
}

// ignoredBuildTurn is a guarded fixture whose turn (k1 to k2) adds
// build/ to .gitignore and deletes the tracked build/out.txt.
func ignoredBuildTurn(t *testing.T) (*fixture, *gittest.Repo) {
	t.Helper()
	f := newFixture(t, true)
	r := f.r
	r.Write(".gitignore", "*.tmp\n")
	r.Write("build/out.txt", "built\n")
	r.Write("src.txt", "src\n")
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart)
	r.Write(".gitignore", "*.tmp\nbuild/\n")
	if err := os.RemoveAll(r.Path("build")); err != nil {
		t.Fatal(err)
	}
	f.take(checkpoint.ReasonTurnEnd)
	return f, r
}

// lastCreated is the created list of the agent's last rollback.started.
func (f *fixture) lastCreated() ([]string, bool, error) {
	f.t.Helper()
	st, err := f.tree().Log.Load()
	if err != nil {
		f.t.Fatal(err)
	}
	rbs := st.Agents[f.agent].Rollbacks
	if len(rbs) == 0 {
		f.t.Fatal("no rollback.started")
	}
	return rbs[len(rbs)-1].CreatedList()
}

// TestUndoDeletesWhatItsRollbackCreated: a turn adds build/ to
// .gitignore and deletes the tracked build/out.txt. The rollback to
// before the turn brings both back, and logs build/out.txt in
// rollback.started's created (its S's rules ignore it, and nothing was
// there). Its undo, whose target is that S, deletes the file although
// the target's rules ignore it: the tree is exactly as before the
// rollback. Before, the undo kept it as ignored_at_target.
func TestUndoDeletesWhatItsRollbackCreated(t *testing.T) {
	t.Parallel()
	f, r := ignoredBuildTurn(t)
	res := f.mustRollback("k1", rollback.Options{Restore: "files"})
	if got := r.Read("build/out.txt"); got != "built\n" {
		t.Fatalf("rollback: build/out.txt = %q", got)
	}
	if created, ok, err := f.lastCreated(); err != nil || !ok || len(created) != 1 || created[0] != "build/out.txt" {
		t.Fatalf("rollback.started created = %q, %v, %v; want [build/out.txt]", created, ok, err)
	}
	undo := f.mustRollback(res.Safety, rollback.Options{Restore: "files"})
	if len(undo.Repos[0].Left) != 0 {
		t.Errorf("undo left %+v", undo.Repos[0].Left)
	}
	if fc := fileOf(undo, "build/out.txt"); fc == nil || fc.Change != "delete" {
		t.Errorf("undo: build/out.txt %+v", fc)
	}
	if _, err := os.Lstat(r.Path("build")); !os.IsNotExist(err) {
		t.Errorf("undo: build is still there (%v)", err)
	}
	if got := r.Read(".gitignore"); got != "*.tmp\nbuild/\n" {
		t.Errorf("undo: .gitignore = %q", got)
	}
	if !exact(undo) {
		t.Errorf("undo: exact is false")
	}
}

// TestUndoKeepsASaveAtACreatedPath (a break-it pass, 2026-12-06): the
// rollback of TestUndoDeletesWhatItsRollbackCreated logs build/out.txt
// as created, but a person saves their own build/out.txt after that
// record and before the rollback comes to it, which leaves it
// (changed_during_rollback). Its undo keeps the person's file: it is not
// as the rollback wrote it (the entry of the rollback's target). Before
// the check the undo deleted it, classed turn, in a guarded tree.
func TestUndoKeepsASaveAtACreatedPath(t *testing.T) {
	t.Parallel()
	f, r := ignoredBuildTurn(t)
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
	plan := planOf(t, r, args)
	p := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_FAILPOINT=rollback.started:exec",
		"GIT_VENOM_TEST_FAILPOINT_EXEC=mkdir -p build && printf 'PERSON DATA\\n' >build/out.txt")
	res := parseOut(t, p)
	if p.exit != 0 || res.Safety == "" {
		t.Fatalf("rollback: exit %d\n%s%s", p.exit, p.stdout, p.stderr)
	}
	if got := r.Read("build/out.txt"); got != "PERSON DATA\n" {
		t.Fatalf("scenario: build/out.txt = %q after the rollback", got)
	}
	undo := f.mustRollback(res.Safety, rollback.Options{Restore: "files"})
	if fc := fileOf(undo, "build/out.txt"); fc != nil {
		t.Errorf("undo: build/out.txt in files: %+v", fc)
	}
	if l := leftOf(undo, "build/out.txt"); l == nil || l.Reason != "ignored_at_target" {
		t.Errorf("undo: build/out.txt left %+v", l)
	}
	if got := r.Read("build/out.txt"); got != "PERSON DATA\n" {
		t.Errorf("undo: build/out.txt = %q", got)
	}
}

// TestOnlyTheFirstUndoDeletesCreated (a break-it pass, 2026-12-06): a
// rollback creates .env (its S ignores .env, and nothing was there), and
// its undo deletes it. The person then writes their own .env, with the
// very bytes the rollback wrote, and a turn empties .gitignore. A second
// rollback to the same safety checkpoint keeps the person's .env
// (ignored_at_target): only the first rollback to it undoes the files
// its rollback created.
func TestOnlyTheFirstUndoDeletesCreated(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	r := f.r
	r.Write("app.txt", "x\n")
	r.Write(".env", "SECRET=1\n")
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart)
	r.Write(".gitignore", ".env\n")
	r.Git("rm", "-q", "--cached", ".env")
	os.Remove(r.Path(".env"))
	f.take(checkpoint.ReasonTurnEnd)
	res := f.mustRollback("k1", rollback.Options{Restore: "files"})
	if got := r.Read(".env"); got != "SECRET=1\n" {
		t.Fatalf("rollback: .env = %q", got)
	}
	undo := f.mustRollback(res.Safety, rollback.Options{Restore: "files"})
	if fc := fileOf(undo, ".env"); fc == nil || fc.Change != "delete" {
		t.Fatalf("undo: .env %+v, left %+v", fc, undo.Repos[0].Left)
	}
	r.Write(".env", "SECRET=1\n")
	f.take(checkpoint.ReasonTurnStart)
	r.Write(".gitignore", "")
	f.take(checkpoint.ReasonTurnEnd)
	again := f.mustRollback(res.Safety, rollback.Options{Restore: "files", Outside: "overwrite"})
	if fc := fileOf(again, ".env"); fc != nil {
		t.Errorf("second rollback to %s: .env in files: %+v", res.Safety, fc)
	}
	if l := leftOf(again, ".env"); l == nil || l.Reason != "ignored_at_target" {
		t.Errorf("second rollback: .env left %+v", l)
	}
	if got := r.Read(".env"); got != "SECRET=1\n" {
		t.Errorf("second rollback: .env = %q", got)
	}
}

// TestUndoKeepsIgnoredFileItsRollbackLeft: .env was committed by mistake
// and then ignored and untracked (`git rm --cached`, committed), so the
// safety checkpoint S of a rollback to before that cannot record it. The
// rollback moves HEAD back to the commit that tracks .env, and leaves
// the file as it is (ignored_in_the_way): it did not create it, so its
// created list is empty. Its undo, whose target S ignores .env, keeps it
// (ignored_at_target), bytes and bits, though the index the rollback
// reset tracks it.
func TestUndoKeepsIgnoredFileItsRollbackLeft(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	r.Write("app.txt", "x\n")
	write(t, r.Dir, ".env", []byte("SECRET=1\n"), 0o600)
	r.Git("add", "app.txt", ".env")
	r.Git("commit", "-q", "-m", "init")
	f.take(checkpoint.ReasonTurnStart)
	r.Write(".gitignore", ".env\n")
	r.Git("add", ".gitignore")
	r.Git("rm", "-q", "--cached", ".env")
	r.Write("app.txt", "y\n")
	r.Git("add", "app.txt")
	r.Git("commit", "-q", "-m", "untrack .env")
	f.take(checkpoint.ReasonTurnEnd)
	res := f.mustRollback("k1", rollback.Options{Restore: "files"})
	if !res.Repos[0].Head.Moves {
		t.Fatalf("scenario: the rollback does not move HEAD")
	}
	if fileOf(res, ".env") != nil {
		t.Fatalf("scenario: the rollback writes .env: %+v", res.Repos[0].Files)
	}
	if created, ok, err := f.lastCreated(); err != nil || !ok || len(created) != 0 {
		t.Fatalf("rollback.started created = %q, %v, %v; want none", created, ok, err)
	}
	undo := f.mustRollback(res.Safety, rollback.Options{Restore: "files"})
	if fileOf(undo, ".env") != nil {
		t.Errorf("undo: .env in files %+v", undo.Repos[0].Files)
	}
	envIntact(t, r, "undo: ")
	if got := r.Read("app.txt"); got != "y\n" {
		t.Errorf("undo: app.txt = %q", got)
	}
}

// TestConvertedWrites: a written file whose bytes on disk are not its
// blob's (an eol conversion) is listed in repos[].converted and makes the
// result not exact; the rollback itself succeeds.
func TestConvertedWrites(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	r.Write(".gitattributes", "*.txt text eol=crlf\n")
	r.Write("a.txt", "one\r\n")
	r.Write("b.bin", "raw\n")
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart)
	r.Write("a.txt", "two\r\n")
	r.Write("b.bin", "raw2\n")
	f.take(checkpoint.ReasonTurnEnd)
	if got, _ := r.Show(f.ref("k1"), "a.txt"); got != "one\n" {
		t.Fatalf("scenario: k1 a.txt blob %q", got)
	}
	res := f.mustRollback("k1", rollback.Options{Restore: "files"})
	if got := r.Read("a.txt"); got != "one\r\n" {
		t.Errorf("a.txt = %q", got)
	}
	if got := r.Read("b.bin"); got != "raw\n" {
		t.Errorf("b.bin = %q", got)
	}
	if c := res.Repos[0].Converted; len(c) != 1 || c[0] != "a.txt" {
		t.Errorf("converted = %q, want [a.txt]", c)
	}
	if res.Exact == nil || *res.Exact {
		t.Errorf("exact = %v, want false", res.Exact)
	}
}

// TestIgnoredInTheWay: a write that would replace a directory holding an
// ignored file, or go through a symlink a person made, is left
// ignored_in_the_way with the path in the way, and nothing there is
// touched: not the ignored file, nor the folder outside the tree the
// symlink points to (RFC 7.4, CASES BR-32).
func TestIgnoredInTheWay(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	outside := filepath.Join(filepath.Dir(r.Dir), "victim")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	r.Write(".gitignore", "*.log\nlink\n")
	r.Write("out", "a file at k1\n")
	r.Write("lib/x.c", "x1\n")
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart)
	os.Remove(r.Path("out"))
	r.Write("out/run.log", "ignored, only here\n")
	r.Write("out/gen.txt", "generated\n")
	os.RemoveAll(r.Path("lib"))
	f.take(checkpoint.ReasonTurnEnd)
	// lib becomes a symlink out of the tree, ignored, so S does not hold it.
	if err := os.Symlink(outside, r.Path("link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(r.Path("link"), r.Path("lib")); err != nil {
		t.Fatal(err)
	}
	r.Write(".gitignore", "*.log\nlink\nlib\n")
	res := f.mustRollback("k1", rollback.Options{Restore: "files", Outside: "keep"})
	if l := leftOf(res, "out"); l == nil || l.Reason != "ignored_in_the_way" || l.Detail != "out/run.log" {
		t.Errorf("out: left %+v (files %+v)", l, res.Repos[0].Files)
	}
	if l := leftOf(res, "out/gen.txt"); l == nil || l.Reason != "ignored_in_the_way" {
		t.Errorf("out/gen.txt: left %+v", l)
	}
	if l := leftOf(res, "lib/x.c"); l == nil || l.Reason != "ignored_in_the_way" || l.Detail != "lib" {
		t.Errorf("lib/x.c: left %+v", l)
	}
	if got := r.Read("out/run.log"); got != "ignored, only here\n" {
		t.Errorf("out/run.log = %q", got)
	}
	if got := r.Read("out/gen.txt"); got != "generated\n" {
		t.Errorf("out/gen.txt = %q", got)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("the rollback wrote through the symlink into %s: %v", outside, ents)
	}
	if st, err := os.Lstat(r.Path("lib")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("lib is no longer the person's symlink: %v %v", st, err)
	}
}

// TestTypeChanges: a path that changed type between K and S (a file and a
// directory, a directory and a symlink to a directory inside the tree)
// goes back to K's type, and the undo brings S's back. The plan deletes
// S's entry first, so nothing S holds is ever in the way of K's: no path
// is left ignored_in_the_way. Each is verified by a rollback checkpoint
// and exact.
func TestTypeChanges(t *testing.T) {
	t.Parallel()
	type state func(t *testing.T, root string)
	file := func(t *testing.T, root string) { write(t, root, "p", []byte("a file\n"), 0o644) }
	dir := func(t *testing.T, root string) {
		write(t, root, "p/x", []byte("in a directory\n"), 0o644)
		write(t, root, "p/y/z", []byte("deeper\n"), 0o755)
	}
	link := func(t *testing.T, root string) { symlink(t, root, "p", "src") }
	for _, tc := range []struct {
		name string
		k, s state
	}{
		{"file to directory", file, dir},
		{"directory to file", dir, file},
		{"directory to symlink", dir, link},
		{"symlink to directory", link, dir},
		{"file to symlink", file, link},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, false)
			r := f.r
			r.Write("src/x", "the symlink's target\n")
			r.Write("keep.txt", "keep\n")
			tc.k(t, r.Dir)
			r.Commit("init")
			f.take(checkpoint.ReasonTurnStart)
			atK := files(disk(t, r.Dir))
			os.RemoveAll(r.Path("p"))
			tc.s(t, r.Dir)
			f.take(checkpoint.ReasonTurnEnd)
			atS := files(disk(t, r.Dir))
			res := f.mustRollback("k1", rollback.Options{Restore: "files"})
			if len(res.Repos[0].Left) > 0 {
				t.Errorf("left %+v, want nothing", res.Repos[0].Left)
			}
			if res.After == "" || res.Exact == nil || !*res.Exact {
				t.Errorf("rollback checkpoint %q, exact %v: want one, and exact", res.After, deref2(res.Exact))
			}
			if d := diffEntries(atK, files(disk(t, r.Dir))); d != "" {
				t.Errorf("after the rollback to k1:\n%s", d)
			}
			undo := f.mustRollback(res.Safety, rollback.Options{Restore: "files", KeepHead: true})
			if len(undo.Repos[0].Left) > 0 {
				t.Errorf("undo: left %+v, want nothing", undo.Repos[0].Left)
			}
			if d := diffEntries(atS, files(disk(t, r.Dir))); d != "" {
				t.Errorf("after the undo:\n%s", d)
			}
		})
	}
}

func deref2(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}
