package rollback_test

import (
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/rollback"
)

// Repros of the breakfix review (/work/notes/breakfix.md): the backup
// lifecycle after 519a9b17..180a46b1.

// genEditedAfterK2 is a tree whose turn (k1 to k2) made gen/f0..f3.txt,
// a directory the rollback to k1 moves into its backup whole
// (GIT_VENOM_TEST_DIRMOVE_MIN=2), and a.txt changed; a person then edits
// gen/f1.txt after k2, so that only the safety checkpoint S and the file
// hold that edit. It returns f and the plan's arguments.
func genEditedAfterK2(t *testing.T) (*fixture, []string) {
	t.Helper()
	f, r := startedAtK1(t)
	r.Write("a.txt", "a two\n")
	for _, p := range numbered("gen/f%d.txt", 4) {
		r.Write(p, made(p))
	}
	f.take(checkpoint.ReasonTurnEnd) // k2
	r.Write("gen/f1.txt", "a person's edit of gen/f1 after k2, only in S\n")
	return f, []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
}

// TestWayBackKeepsAMovedDirsFileItsPrunedSafetyLost: as
// TestWayBackKeepsABackupItsPrunedSafetyCheckpointLost, but the person's
// edit is in a directory the rollback moved whole. A gc that raced the
// rollback prunes S's objects as the writes end, and a program makes
// gen/f1.txt anew; the second whole-check fails and the rollback goes
// back. gen/f1.txt is taken, so its backup (the person's edit, S's blob
// gone) does not go back; the way back's rescue then removes the moved
// directory (settleMovedDirs, dropDir) before cleanup re-checks S, which
// keeps only the per-file backups. The edit must be somewhere.
func TestWayBackKeepsAMovedDirsFileItsPrunedSafetyLost(t *testing.T) {
	f, args := genEditedAfterK2(t)
	r := f.r
	plan := planOf(t, r, args)
	exec := pruneSafety + "mkdir -p gen && printf 'made anew\\n' >gen/f1.txt\n"
	real := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_DIRMOVE_MIN=2",
		"GIT_VENOM_TEST_FAILPOINT=rollback.written:exec", "GIT_VENOM_TEST_FAILPOINT_EXEC="+exec)
	out := parseOut(t, real)
	if real.exit != 1 || out.Error == nil {
		t.Fatalf("rollback whose safety checkpoint was pruned: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
	}
	if got := r.Read("gen/f1.txt"); got != "made anew\n" {
		t.Errorf("gen/f1.txt is %q, want the new file kept", got)
	}
	if where := keptWhere(t, r, r, "a person's edit of gen/f1"); where == "" {
		t.Errorf("the person's edit of gen/f1.txt is nowhere (S pruned, the moved directory removed): %s\n%s", out.Error.Code, real.stdout)
	}
	if !strings.Contains(real.stdout, "backup") {
		t.Logf("no backup named: %s", real.stdout)
	}
}

// gitPruningAfterArm is a git wrapper for GIT_VENOM_GIT: once the file
// arm exists, the first git child that is not a cat-file (the rollback's
// last whole-check of S is one) deletes arm and first runs pruneSafety
// in dir, as a `git gc --prune=now` that raced the rollback does at that
// moment.
func gitPruningAfterArm(t *testing.T, dir, arm string) string {
	t.Helper()
	real, err := osexec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	prune := filepath.Join(tmp, "prune.sh")
	if err := os.WriteFile(prune, []byte(pruneSafety), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\n" +
		"if [ -e '" + arm + "' ]; then case \" $* \" in *\" cat-file \"*) ;; *) rm -f '" + arm + "'; (cd '" + dir + "' && sh '" + prune + "') >&2;; esac; fi\n" +
		"exec '" + real + "' \"$@\"\n"
	w := filepath.Join(tmp, "git")
	if err := os.WriteFile(w, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestMovedDirStaysWhileTheSafetyCheckpointIsWhole: as
// TestBackupsGoOnlyWhileTheSafetyCheckpointIsWhole, a gc that raced the
// rollback prunes S's objects after the rollback's last whole-check of
// the writes, here as the rollback captures the tree again (its first
// git child after that check). cleanup re-checks S and keeps the backup
// directory, named as repos[].backup; but gen/, moved into it whole and
// holding the person's edit of gen/f1.txt (only in S and there), was
// already removed by the rescue (settleMovedDirs), which runs before
// that re-check. The edit is then nowhere, and repos[].backup names a
// directory that does not hold what the rollback replaced.
func TestMovedDirStaysWhileTheSafetyCheckpointIsWhole(t *testing.T) {
	f, args := genEditedAfterK2(t)
	r := f.r
	plan := planOf(t, r, args)
	arm := filepath.Join(t.TempDir(), "arm")
	wrapper := gitPruningAfterArm(t, r.Dir, arm)
	real := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_DIRMOVE_MIN=2", "GIT_VENOM_GIT="+wrapper,
		"GIT_VENOM_TEST_FAILPOINT=rollback.written:exec", "GIT_VENOM_TEST_FAILPOINT_EXEC=: >'"+arm+"'")
	if _, err := os.Lstat(r.Path(".git/venom/pruned-safety")); err != nil {
		t.Fatalf("the simulated gc did not run (exit %d)\n%s%s", real.exit, real.stdout, real.stderr)
	}
	if where := keptWhere(t, r, r, "a person's edit of gen/f1"); where == "" {
		t.Errorf("the person's edit of gen/f1.txt is nowhere: S was pruned and gen/ removed from the backup (exit %d)\n%s%s", real.exit, real.stdout, real.stderr)
	}
}

// backupsUnder lists the backup directories anywhere under the git
// directory gitDir (a linked worktree's and a submodule's included).
func backupsUnder(gitDir string) []string {
	var out []string
	filepath.WalkDir(gitDir, func(p string, e os.DirEntry, err error) error {
		if err == nil && e.IsDir() && strings.HasPrefix(e.Name(), "backup-") && filepath.Base(filepath.Dir(p)) == "tmp" {
			out = append(out, p)
			return filepath.SkipDir
		}
		return nil
	})
	return out
}

// TestNoBackupLeftAfterNormalRollbacks: the regressions the brief asks
// about. A rollback that ends as planned, or goes back after a Ctrl-C,
// with nobody saving meanwhile, leaves no backup directory: across
// devices (copies held open), with a directory moved whole, and with
// submodules.
func TestNoBackupLeftAfterNormalRollbacks(t *testing.T) {
	t.Run("across devices", func(t *testing.T) {
		main, f, args := crossDeviceTwoFiles(t)
		real := realCall(t, f.r, args, planOf(t, f.r, args).Plan)
		if real.exit != 0 {
			t.Fatalf("rollback: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
		}
		if left := backupsUnder(main.GitDir); len(left) != 0 {
			t.Errorf("backup directories left: %v\n%s", left, real.stdout)
		}
	})
	t.Run("across devices, Ctrl-C", func(t *testing.T) {
		main, f, args := crossDeviceTwoFiles(t)
		real := realCall(t, f.r, args, planOf(t, f.r, args).Plan, "GIT_VENOM_TEST_FAILPOINT=rollback.written:int")
		if out := parseOut(t, real); out.Error == nil || out.Error.Code != "failed.rollback_undone" {
			t.Fatalf("rollback: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
		}
		if got := f.r.Read("a.txt"); got != "a two\n" {
			t.Errorf("a.txt after the way back: %q", got)
		}
		if left := backupsUnder(main.GitDir); len(left) != 0 {
			t.Errorf("backup directories left: %v\n%s", left, real.stdout)
		}
	})
	t.Run("moved whole, Ctrl-C", func(t *testing.T) {
		f, args := genEditedAfterK2(t)
		real := realCall(t, f.r, args, planOf(t, f.r, args).Plan, "GIT_VENOM_TEST_DIRMOVE_MIN=2", "GIT_VENOM_TEST_FAILPOINT=rollback.written:int")
		if out := parseOut(t, real); out.Error == nil || out.Error.Code != "failed.rollback_undone" {
			t.Fatalf("rollback: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
		}
		if got := f.r.Read("gen/f1.txt"); !strings.Contains(got, "a person's edit") {
			t.Errorf("gen/f1.txt after the way back: %q", got)
		}
		if left := backupsUnder(f.r.GitDir); len(left) != 0 {
			t.Errorf("backup directories left: %v\n%s", left, real.stdout)
		}
	})
	t.Run("submodules", func(t *testing.T) {
		f, lib, in := subFixture(t, false)
		k1, _ := agentTurn(t, f, lib, in)
		f.mustRollback(k1, rollback.Options{Restore: "files"})
		if left := backupsUnder(f.r.GitDir); len(left) != 0 {
			t.Errorf("backup directories left: %v", left)
		}
	})
	t.Run("submodules, Ctrl-C", func(t *testing.T) {
		f, lib, in := subFixture(t, false)
		k1, _ := agentTurn(t, f, lib, in)
		args := []string{"--agent", f.agent, k1, "--restore", "files", "--json"}
		real := realCall(t, f.r, args, planOf(t, f.r, args).Plan, "GIT_VENOM_TEST_FAILPOINT=rollback.sub-written:int")
		if out := parseOut(t, real); out.Error == nil || out.Error.Code != "failed.rollback_undone" {
			t.Fatalf("rollback: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
		}
		if left := backupsUnder(f.r.GitDir); len(left) != 0 {
			t.Errorf("backup directories left: %v\n%s", left, real.stdout)
		}
	})
}

// TestDoctorNamesADeinitializedNestedSubmodulesBackup: as
// TestDoctorNamesADeinitializedSubmodulesBackup, for the submodule two
// deep. A rollback killed once it logged its end leaves a backup in
// lib/in's git directory (.git/modules/lib/modules/in), and a save into
// it keeps it from the sweeps. After `git submodule deinit -f lib`,
// lib/in is no longer checked out either, and the doctor looks for its
// git directory by the top's .gitmodules alone
// (plumbing.Repo.SubmoduleGitDir: .git/modules/lib/in), so it says no
// rollback left a backup directory while one holds the person's save.
func TestDoctorNamesADeinitializedNestedSubmodulesBackup(t *testing.T) {
	f, _, _, saved := savedInASubmodulesBackup(t, true)
	r := f.r
	inDirs := []string{filepath.Dir(saved)}
	if level, msg := doctorCheck(t, f, "checkpoints.backups"); level != "warn" || !strings.Contains(msg, inDirs[0]) {
		t.Fatalf("doctor before the deinit: %s %s; want it to name %s", level, msg, inDirs[0])
	}
	r.Git("submodule", "deinit", "-q", "-f", "lib")
	if _, err := os.Stat(inDirs[0]); err != nil {
		t.Fatalf("the backup went with the deinit: %v", err)
	}
	if level, msg := doctorCheck(t, f, "checkpoints.backups"); level != "warn" || !strings.Contains(msg, inDirs[0]) {
		t.Errorf("doctor after lib's deinit: %s %s; want it to name %s, which holds a person's save", level, msg, inDirs[0])
	}
}

// filesIn is every file or symlink below dir but its manifest.
func filesIn(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && !(filepath.Dir(p) == dir && e.Name() == checkpoint.ManifestFile) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestWayBackNamesNoEmptyBackup: a gc that raced the rollback prunes S
// as the writes end, nobody saves, and the way back puts every file back
// from its backup (gen/, moved whole, file by file). Nothing of the tree
// is then only in the backup directory; yet cleanup, finding S not whole
// and a moved directory recorded, keeps it and names it as repos[].backup
// ("what the rollback had replaced is kept in ..."), a directory with
// nothing but its manifest, which no sweep removes either (S is not
// whole) and the doctor warns about for good.
func TestWayBackNamesNoEmptyBackup(t *testing.T) {
	f, args := genEditedAfterK2(t)
	r := f.r
	plan := planOf(t, r, args)
	real := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_DIRMOVE_MIN=2",
		"GIT_VENOM_TEST_FAILPOINT=rollback.written:exec", "GIT_VENOM_TEST_FAILPOINT_EXEC="+pruneSafety)
	if out := parseOut(t, real); real.exit != 1 || out.Error == nil {
		t.Fatalf("rollback whose safety checkpoint was pruned: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
	}
	if got := r.Read("gen/f1.txt"); !strings.Contains(got, "a person's edit") {
		t.Fatalf("gen/f1.txt after the way back: %q", got)
	}
	for _, d := range backupDirs(r, nil) {
		if len(filesIn(d)) == 0 {
			named := strings.Contains(real.stdout, d)
			t.Errorf("the backup directory %s holds nothing but its manifest, and is kept (named in the error: %v)\n%s", d, named, real.stdout)
		}
	}
}

// TestSweepBesideAnEndingRollbackKeepsAHeldSave: a rollback across
// devices holds a.txt open behind its copy until its cleanup, which
// copies what a program saved through it since the rescue into the
// backup directory (releaseHeld). But the rollback logs its end first,
// and any other plan or rollback command begins with a sweep of the
// backup directories of rollbacks that ended (CloseInterrupted, then
// DropEndedBackups), before and without any lock: one run in that window
// (here at the rollback.ended step, just after the save) finds only S's
// copies and removes the directory; releaseHeld's copy then fails (its
// directory is gone), the descriptor is closed, and the save is nowhere.
func TestSweepBesideAnEndingRollbackKeepsAHeldSave(t *testing.T) {
	main, f, args, held, through := heldAcrossDevices(t)
	r := f.r
	exec := fmt.Sprintf("printf 'saved as the rollback ended\\n' >>%s && '%s' %s >/dev/null 2>&1; ls -d .git/venom/tmp/backup-* %s/worktrees/*/venom/tmp/backup-* 2>/dev/null >&2; true",
		through, filepath.Join(binDir, "git-venom-plan"), strings.Join(args, " "), main.GitDir)
	plan := planOf(t, r, args)
	real := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_FAILPOINT=rollback.ended:exec", "GIT_VENOM_TEST_FAILPOINT_EXEC="+exec)
	if real.exit != 0 {
		t.Fatalf("rollback: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
	}
	if st, err := held.Stat(); err != nil || st.Size() != int64(len("a two\nsaved as the rollback ended\n")) {
		t.Fatalf("the save through the held file was not made: %v %v", st, err)
	}
	if where := keptWhere(t, main, r, "saved as the rollback ended"); where == "" {
		t.Errorf("the save through the held a.txt is nowhere once a plan swept beside the ending rollback\n%s%s", real.stdout, real.stderr)
	}
}

// TestWayBackOfDeletionsKeepsModesAndLinks: the way back puts a deletion
// back by a link, never a rename (putBack with still nil), and across
// devices by a copy to a name of its own that is then linked. An
// executable file and a symbolic link the turn made, deleted by the
// rollback and put back after a Ctrl-C, come back with their bits and
// target, and nothing of the way back's (a .venom-restore-* copy, a
// backup directory) is left.
func TestWayBackOfDeletionsKeepsModesAndLinks(t *testing.T) {
	for _, xdev := range []bool{false, true} {
		t.Run(fmt.Sprintf("across devices %v", xdev), func(t *testing.T) {
			main := gittest.New(t)
			r := main
			if xdev {
				wtDir := filepath.Join(otherDevice(t, main.Dir), "wt")
				main.Write("a.txt", "one\n")
				main.Commit("init")
				main.Git("worktree", "add", "-q", wtDir)
				r = gittest.At(t, wtDir)
			} else {
				r.Write("a.txt", "one\n")
				r.Commit("init")
			}
			f := &fixture{t: t, r: r, agent: "a1"}
			f.take(checkpoint.ReasonTurnStart) // k1
			r.Write("a.txt", "a two\n")
			write(t, r.Dir, "run.sh", []byte("#!/bin/sh\necho made\n"), 0o755)
			symlink(t, r.Dir, "link", "a.txt")
			f.take(checkpoint.ReasonTurnEnd) // k2
			args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
			real := realCall(t, r, args, planOf(t, r, args).Plan, "GIT_VENOM_TEST_FAILPOINT=rollback.written:int")
			if out := parseOut(t, real); out.Error == nil || out.Error.Code != "failed.rollback_undone" {
				t.Fatalf("rollback: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
			}
			if st, err := os.Lstat(r.Path("run.sh")); err != nil || st.Mode() != 0o755 {
				t.Errorf("run.sh after the way back: %v %v", st.Mode(), err)
			} else if got := r.Read("run.sh"); got != "#!/bin/sh\necho made\n" {
				t.Errorf("run.sh holds %q", got)
			}
			if target, err := os.Readlink(r.Path("link")); err != nil || target != "a.txt" {
				t.Errorf("link after the way back: %q %v", target, err)
			}
			if m, _ := filepath.Glob(r.Path("*.venom-restore*")); len(m) != 0 {
				t.Errorf("left in the tree: %v", m)
			}
			if left := backupsUnder(main.GitDir); len(left) != 0 {
				t.Errorf("backup directories left: %v", left)
			}
		})
	}
}

// TestKeptBackupIsNotContradicted: as
// TestBackupsGoOnlyWhileTheSafetyCheckpointIsWhole (a gc prunes S as the
// rollback compares its backups), in the words a person reads: the
// rollback keeps its backup directory and warns that S lost objects and
// that what it replaced is kept there, then says, as always, that the
// safety checkpoint holds the tree as it was before, with the command to
// undo, which cannot work now (S's objects are gone). (The TUI's result,
// internal/tui/result.go, never reads repos[].backup at all: it says
// only the latter.)
func TestKeptBackupIsNotContradicted(t *testing.T) {
	f, r := startedAtK1(t)
	r.Write("a.txt", "a two\n")
	f.take(checkpoint.ReasonTurnEnd) // k2
	r.Write("a.txt", "a person's edit after k2, only in S\n")
	args := []string{"--agent", f.agent, "k1", "--restore", "files"}
	plan := planOf(t, r, append(args, "--json"))
	prune := strings.Replace(pruneSafety, "safety=$(git for-each-ref --format='%(refname)' refs/venom/checkpoints/a1/ | sort -t/ -k5 -n | tail -n 1)", "safety=refs/venom/checkpoints/a1/3", 1)
	real := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_FAILPOINT=rollback.verified:exec", "GIT_VENOM_TEST_FAILPOINT_EXEC="+prune)
	dirs := backupDirs(r, nil)
	if len(dirs) != 1 || !strings.Contains(real.stdout+real.stderr, dirs[0]) {
		t.Fatalf("the kept backup %v is not named (exit %d)\n%s%s", dirs, real.exit, real.stdout, real.stderr)
	}
	if said := real.stdout + real.stderr; strings.Contains(said, "k3 holds the tree as it was before") {
		t.Errorf("the output says S holds the tree as it was before, after saying S lost objects:\n%s", said)
	}
}

// TestLateSaveInASubmoduleIsNamedOnce: a save made into the backup of
// lib/l (a submodule's file the rollback replaced) after the rescue
// judged it (here at the rollback.verified step) keeps lib's backup
// directory, and is named once in rescued[], in lib's entry, with repo
// lib and its file; exact is false.
func TestLateSaveInASubmoduleIsNamedOnce(t *testing.T) {
	f, lib, in := subFixture(t, false)
	r := f.r
	k1, _ := agentTurn(t, f, lib, in)
	args := []string{"--agent", f.agent, k1, "--restore", "files", "--json"}
	plan := planOf(t, r, args)
	save := `for f in .git/modules/lib/venom/tmp/backup-*/*; do if [ "$(cat "$f")" = "l2 (the agent's)" ]; then printf 'saved late into lib/l\n' >>"$f"; fi; done`
	real := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_FAILPOINT=rollback.verified:exec", "GIT_VENOM_TEST_FAILPOINT_EXEC="+save)
	if real.exit != 0 {
		t.Fatalf("rollback: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
	}
	var res rollback.Result
	if err := json.Unmarshal([]byte(real.stdout), &res); err != nil {
		t.Fatal(err)
	}
	var named []string
	for _, rp := range res.Repos {
		for _, rs := range rp.Rescued {
			named = append(named, rp.Repo+": "+rs.Repo+" "+rs.Path)
			if rs.File != "" {
				if b, err := os.ReadFile(rs.File); err != nil || !strings.Contains(string(b), "saved late into lib/l") {
					t.Errorf("rescued[] names %s, which does not hold the save: %q %v", rs.File, b, err)
				}
			}
		}
	}
	if len(named) != 1 || named[0] != "lib: lib l" {
		t.Errorf("rescued[] entries (repo entry: repo path): %q, want one, lib's, for lib/l\n%s", named, real.stdout)
	}
	if res.Exact == nil || *res.Exact {
		t.Errorf("exact is %v with a save kept aside", res.Exact)
	}
}

// TestSweepNeverUnlinksThroughASymlinkMovedIntoTheBackup: a person moves
// gen/ to another disk and leaves a symbolic link in its place (cp -a
// gen /data/gen; rm -rf gen; ln -s /data/gen gen) between the
// rollback's checks of gen/ and its rename: the rename moves the link
// into the backup, at the name the manifest gives the directory, whose
// files it lists below that name. When gen/ is taken again by then, the
// link stays there for the rescue (movedAmiss: ap.foreign), and a kill
// before the rollback ends leaves it so. The state is made here after a
// kill at rollback.deleted of a plain move of gen/, the moved directory
// replaced by such a link. The next command's rescue (rescueIn) reads
// the manifest's files through the link (savesAmong's lstat follows a
// symlink in the middle of a path), finds S's bytes, stores the link
// itself (foreignIn), and RemoveNamed then unlinks each listed file
// through the link: the person's files on the other disk.
func TestSweepNeverUnlinksThroughASymlinkMovedIntoTheBackup(t *testing.T) {
	f, r := startedAtK1(t)
	gen := numbered("gen/f%d.txt", 4)
	for _, p := range gen {
		r.Write(p, made(p))
	}
	f.take(checkpoint.ReasonTurnEnd) // k2
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
	plan := planOf(t, r, args)
	if real := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_DIRMOVE_MIN=2", "GIT_VENOM_TEST_FAILPOINT=rollback.deleted"); !real.killed {
		t.Fatalf("not killed: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
	}
	m, _ := filepath.Glob(filepath.Join(r.GitDir, "venom", "tmp", "backup-*", "*", "f0.txt"))
	if len(m) != 1 {
		t.Fatalf("gen/ is not in the backup: %v", m)
	}
	moved := filepath.Dir(m[0])
	away := filepath.Join(t.TempDir(), "data", "gen")
	if err := os.MkdirAll(away, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range gen {
		write(t, away, filepath.Base(p), []byte(made(p)), 0o644)
	}
	if err := os.RemoveAll(moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(away, moved); err != nil {
		t.Fatal(err)
	}
	r.Write("gen/new.txt", "gen/ taken again\n")
	next := runBin(t, r.Dir, "git-venom-plan", nil, args...)
	for _, p := range gen {
		q := filepath.Join(away, filepath.Base(p))
		if got, err := os.ReadFile(q); err != nil || string(got) != made(p) {
			t.Errorf("%s on the other disk is %q (%v): removed through the link\n%s", q, got, err, next.stderr)
		}
	}
}

// TestDirMoveNeverReachesThroughASubdirSwappedForALink: the in-process
// sibling of TestSweepNeverUnlinksThroughASymlinkMovedIntoTheBackup,
// with no kill. Between moveDir's checks and its rename, a person moves
// gen/b elsewhere on the same file system and leaves a link in its place
// (mv gen/b /data/b; ln -s /data/b gen/b). The rename moves gen/ with
// the link in it; the planned gen/b/f*.txt are then reached through the
// link. The rollback must not move or remove the files in /data/b: it
// puts the link back (strangers) before anything is unlinked (dropDir
// does not follow it), so they stay. (A guard: this passes.)
func TestDirMoveNeverReachesThroughASubdirSwappedForALink(t *testing.T) {
	f := turnMaking(t, "base.txt", "gen/a.txt", "gen/b/f0.txt", "gen/b/f1.txt")
	r := f.r
	away := filepath.Join(t.TempDir(), "b")
	swapped := false
	hook(t, func(op, rel string) {
		if op != "dirrename" || rel != "gen" || swapped {
			return
		}
		swapped = true
		if err := os.Rename(r.Path("gen/b"), away); err != nil {
			t.Error(err)
		}
		if err := os.Symlink(away, r.Path("gen/b")); err != nil {
			t.Error(err)
		}
	})
	_, res, err := f.rollback("k1", rollback.Options{Restore: "files"})
	if !swapped {
		t.Fatalf("gen/ was never about to be moved whole (err %v)", err)
	}
	for _, p := range []string{"gen/b/f0.txt", "gen/b/f1.txt"} {
		q := filepath.Join(away, filepath.Base(p))
		if got, err := os.ReadFile(q); err != nil || string(got) != made(p) {
			var left []string
			if res != nil {
				left = leftPaths(res)
			}
			t.Errorf("%s outside the tree is %q (%v); left %v", q, got, err, left)
		}
	}
}
