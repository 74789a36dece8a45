package rollback_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/rollback"
)

// Repros of the breakthird review (/work/notes/breakthird.md): the fixes
// of 180a46b1..b9099c94 to the backup lifecycle.

// TestWayBackKeepsAMovedManifestJsonlItsPrunedSafetyLost: as
// TestWayBackKeepsAMovedDirsFileItsPrunedSafetyLost, but the file the
// person edited after k2 (only in S and on disk), in the directory the
// rollback moved whole, is named manifest.jsonl, as a backup's manifest
// is. A gc that raced the rollback prunes S as the writes end, and a
// program makes gen/manifest.jsonl anew; the way back puts gen/f0..f2.txt
// back and keeps the new gen/manifest.jsonl, so the backup of the edit
// stays in the moved directory, alone. settleMovedDirs asks holdsFiles
// whether the moved directory holds anything before it checks S whole;
// holdsFiles skips a file named manifest.jsonl at the top of the
// directory it is given (meant for the backup directory's own manifest),
// so it says no, S is not checked, and dropDir unlinks the only copy of
// the edit.
func TestWayBackKeepsAMovedManifestJsonlItsPrunedSafetyLost(t *testing.T) {
	f, r := startedAtK1(t)
	r.Write("a.txt", "a two\n")
	for _, p := range append(numbered("gen/f%d.txt", 3), "gen/manifest.jsonl") {
		r.Write(p, made(p))
	}
	f.take(checkpoint.ReasonTurnEnd) // k2
	r.Write("gen/manifest.jsonl", "a person's edit of gen/manifest.jsonl after k2, only in S\n")
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
	plan := planOf(t, r, args)
	exec := pruneSafety + "mkdir -p gen && printf 'made anew\\n' >gen/manifest.jsonl\n"
	real := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_DIRMOVE_MIN=2",
		"GIT_VENOM_TEST_FAILPOINT=rollback.written:exec", "GIT_VENOM_TEST_FAILPOINT_EXEC="+exec)
	out := parseOut(t, real)
	if real.exit != 1 || out.Error == nil {
		t.Fatalf("rollback whose safety checkpoint was pruned: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
	}
	if _, err := os.Lstat(r.Path(".git/venom/pruned-safety")); err != nil {
		t.Fatalf("the simulated gc did not run\n%s%s", real.stdout, real.stderr)
	}
	if got := r.Read("gen/manifest.jsonl"); got != "made anew\n" {
		t.Errorf("gen/manifest.jsonl is %q, want the new file kept", got)
	}
	if got := r.Read("gen/f0.txt"); got != made("gen/f0.txt") {
		t.Errorf("gen/f0.txt is %q: the way back did not run as this test needs", got)
	}
	if where := keptWhere(t, r, r, "a person's edit of gen/manifest.jsonl"); where == "" {
		t.Errorf("the person's edit of gen/manifest.jsonl is nowhere (S pruned, the moved directory dropped unchecked): %s\n%s", out.Error.Code, real.stdout)
	}
}

// renamedNestedSubmodules is subFixture's tree (lib, and lib/in inside
// it), but lib's .gitmodules names its submodule at in "inner" (added
// with --name, or moved since: git keeps the name), so that its git
// directory is .git/modules/lib/modules/inner.
func renamedNestedSubmodules(t *testing.T) (f *fixture, lib, in *gittest.Repo) {
	t.Helper()
	f = newFixture(t, false)
	r := f.r
	r.Write("a", "a1\n")
	r.Commit("init")
	inner := gittest.New(t)
	inner.Write("i", "i1\n")
	inner.Commit("inner")
	mid := gittest.New(t)
	mid.Write("l", "l1\n")
	mid.Git("-c", "protocol.file.allow=always", "submodule", "add", "-q", "--name", "inner", inner.Dir, "in")
	mid.Commit("lib")
	r.Git("-c", "protocol.file.allow=always", "submodule", "add", "-q", mid.Dir, "lib")
	r.Commit("add lib")
	r.Git("-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init", "--recursive")
	lib = gittest.At(t, filepath.Join(r.Dir, "lib"))
	in = gittest.At(t, filepath.Join(r.Dir, "lib", "in"))
	for _, s := range []*gittest.Repo{lib, in} {
		s.Git("config", "user.name", "Dev")
		s.Git("config", "user.email", "dev@example.invalid")
	}
	return f, lib, in
}

// TestDoctorNamesADeinitializedRenamedNestedSubmodulesBackup: as
// TestDoctorNamesADeinitializedNestedSubmodulesBackup (F4 of breakfix),
// with lib/in named "inner" in lib's .gitmodules. A rollback killed once
// it logged its end leaves a backup in lib/in's git directory, and a
// save into it keeps it from the sweeps. After `git submodule deinit -f
// lib`, SubmoduleGitDir looks in .git/modules/lib/modules/in and
// .git/modules/lib/in (a nested submodule's name "taken to be its path"),
// never in .git/modules/lib/modules/inner, so the doctor says no
// rollback left a backup directory while one holds the person's save.
func TestDoctorNamesADeinitializedRenamedNestedSubmodulesBackup(t *testing.T) {
	f, lib, in := renamedNestedSubmodules(t)
	r := f.r
	if !strings.Contains(filepath.ToSlash(in.GitDir), "/modules/lib/modules/inner") {
		t.Fatalf("lib/in's git directory is %s, want it under .git/modules/lib/modules/inner", in.GitDir)
	}
	k1, _ := agentTurn(t, f, lib, in)
	args := []string{"--agent", f.agent, k1, "--restore", "files", "--json"}
	plan := planOf(t, r, args)
	if real := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_FAILPOINT=rollback.ended"); !real.killed {
		t.Fatalf("not killed: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
	}
	dirs := backupDirs(in, nil)
	if len(dirs) != 1 {
		t.Fatalf("lib/in's backup directories after the kill: %v", dirs)
	}
	saved := backupHolding(dirs[0], "i2 (the agent's)\n")
	if saved == "" {
		t.Fatalf("no backup of lib/in/i in %s", dirs[0])
	}
	fh, err := os.OpenFile(saved, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString("saved through a file held open\n")
	fh.Close()
	if level, msg := doctorCheck(t, f, "checkpoints.backups"); level != "warn" || !strings.Contains(msg, dirs[0]) {
		t.Fatalf("doctor before the deinit: %s %s; want it to name %s", level, msg, dirs[0])
	}
	r.Git("submodule", "deinit", "-q", "-f", "lib")
	if _, err := os.Stat(saved); err != nil {
		t.Fatalf("the save went with the deinit: %v", err)
	}
	if level, msg := doctorCheck(t, f, "checkpoints.backups"); level != "warn" || !strings.Contains(msg, dirs[0]) {
		t.Errorf("doctor after lib's deinit: %s %s; want it to name %s, which holds a person's save", level, msg, dirs[0])
	}
}

// TestTreeSweepsOnceTheRollbackLockIsFree: one Tree serves many plans in
// the TUI (internal/tui keeps a.tree for its whole session). A rollback
// killed once it logged its end leaves its backups, all of them S's and
// removable. The TUI's first plan meets the tree's rollback lock held (a
// rollback, or merely a plan, running in another terminal: rollback.Run
// takes the lock for a dry run too) and fails conflict.rollback_running;
// DropEndedBackups passed over the tree, but marked it swept all the
// same, so the next plans, with the lock free, never sweep: the backups
// stay for the rest of the session. A Tree opened afresh removes them.
func TestTreeSweepsOnceTheRollbackLockIsFree(t *testing.T) {
	f, _, dir := killedAsItEnded(t, "two\n")
	tr := f.tree()
	o := rollback.Options{Agent: f.agent, Checkpoint: "k1", Restore: "files", DryRun: true}
	lk, err := journal.TryLock(tr.Log.LockPath(checkpoint.RollbackLock(tr.Path())), true)
	if err != nil {
		t.Fatal(err)
	}
	_, err = rollback.Run(context.Background(), tr, o)
	lk.Unlock()
	if e := rfcerr.As(err); e == nil || e.Code != "conflict.rollback_running" {
		t.Fatalf("plan while the lock is held: %v, want conflict.rollback_running", describe(err))
	}
	if _, err := rollback.Run(context.Background(), tr, o); err != nil {
		t.Fatalf("plan once the lock is free: %v", describe(err))
	}
	_, kept := os.Stat(dir)
	if _, err := f.plan("k1", rollback.Options{Restore: "files"}); err != nil {
		t.Fatalf("plan on a fresh tree: %v", describe(err))
	}
	_, fresh := os.Stat(dir)
	if kept == nil && fresh != nil {
		t.Errorf("the backup directory of the killed rollback stayed through the same tree's plan once the lock was free; a fresh tree's plan removed it")
	} else if kept == nil {
		t.Errorf("the backup directory %s is not removable at all (a fresh tree kept it too)", dir)
	}
}

// TestWayBackMakesOddSymlinksAgain: the way back after a Ctrl-C makes a
// deleted symbolic link again from its target (symlink(2), putBack and
// putBackNew): a relative target that climbs out of its directory, a
// dangling one, and one of bytes that are not UTF-8 with a tab and a
// newline in them, at the top and in a directory the rollback moved
// whole (or copied file by file across devices); and a symlink the turn
// retargeted, put back over what the rollback wrote. Each comes back with
// its target byte for byte, and nothing of the way back's is left.
func TestWayBackMakesOddSymlinksAgain(t *testing.T) {
	targets := map[string]string{
		"rel":      "../a.txt",
		"dangling": "no/such/target",
		"odd":      "\xff\xfe odd\ttarget\nline",
	}
	for _, xdev := range []bool{false, true} {
		t.Run(fmt.Sprintf("across devices %v", xdev), func(t *testing.T) {
			main := gittest.New(t)
			r := main
			main.Write("a.txt", "one\n")
			if xdev {
				main.Commit("init")
				wtDir := filepath.Join(otherDevice(t, main.Dir), "wt")
				main.Git("worktree", "add", "-q", wtDir)
				r = gittest.At(t, wtDir)
			} else {
				r.Commit("init")
			}
			symlink(t, r.Dir, "re", "a.txt")
			r.Git("add", "re")
			r.Git("commit", "-q", "-m", "re")
			f := &fixture{t: t, r: r, agent: "a1"}
			f.take(checkpoint.ReasonTurnStart) // k1
			r.Write("a.txt", "a two\n")
			symlink(t, r.Dir, "re", "elsewhere/../b")
			want := map[string]string{"re": "elsewhere/../b"}
			for name, target := range targets {
				for _, rel := range []string{"top-" + name, "gen/" + name} {
					symlink(t, r.Dir, rel, target)
					want[rel] = target
				}
			}
			r.Write("gen/f0.txt", "made\n")
			f.take(checkpoint.ReasonTurnEnd) // k2
			args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
			real := realCall(t, r, args, planOf(t, r, args).Plan, "GIT_VENOM_TEST_DIRMOVE_MIN=2", "GIT_VENOM_TEST_FAILPOINT=rollback.written:int")
			if out := parseOut(t, real); out.Error == nil || out.Error.Code != "failed.rollback_undone" {
				t.Fatalf("rollback: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
			}
			for rel, target := range want {
				if got, err := os.Readlink(r.Path(rel)); err != nil || got != target {
					t.Errorf("%s after the way back: %q %v, want %q", rel, got, err, target)
				}
			}
			var stray []string
			filepath.WalkDir(r.Dir, func(p string, e os.DirEntry, err error) error {
				if err == nil && strings.Contains(e.Name(), ".venom-restore") {
					stray = append(stray, p)
				}
				return nil
			})
			if len(stray) != 0 {
				t.Errorf("left in the tree: %q", stray)
			}
			if left := backupsUnder(main.GitDir); len(left) != 0 {
				t.Errorf("backup directories left: %v", left)
			}
		})
	}
}
