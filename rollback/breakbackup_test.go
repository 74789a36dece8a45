package rollback_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/rollback"
)

// Repros of the breakbackup review (/work/notes/breakbackup.md): ways a
// rollback's backups lose a person's bytes.

// keptWhere says where text is kept after a rollback of r (a tree whose
// common git directory is common's): a file of the tree, a file under the
// git directory (a backup, outside the object store), or a blob of a
// refs/venom/rescued/ ref; "" when it is nowhere.
func keptWhere(t *testing.T, common, r *gittest.Repo, text string) string {
	t.Helper()
	found := ""
	look := func(root string, skip func(string) bool) {
		filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
			if err != nil || found != "" {
				return nil
			}
			if e.IsDir() && skip(p) {
				return filepath.SkipDir
			}
			if e.Type().IsRegular() {
				if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), text) {
					found = p
				}
			}
			return nil
		})
	}
	look(r.Dir, func(p string) bool { return filepath.Base(p) == ".git" })
	look(common.GitDir, func(p string) bool { return filepath.Base(p) == "objects" })
	if found != "" {
		return found
	}
	for _, ref := range strings.Fields(common.Git("for-each-ref", "--format=%(refname)", "refs/venom/rescued/")) {
		if out, err := common.GitErr("grep", "-l", "-F", text, ref); err == nil && strings.TrimSpace(out) != "" {
			return ref
		}
	}
	return ""
}

// crossDeviceTwoFiles is a linked worktree on another file system than
// its git directory (so the rollback copies what it moves away), whose
// turn (k1 to k2) changed a.txt and b.txt from "one" to "a two" and
// "b two": the main repository, the worktree's fixture and the plan's
// arguments (back to k1, files only).
func crossDeviceTwoFiles(t *testing.T) (*gittest.Repo, *fixture, []string) {
	t.Helper()
	main := gittest.New(t)
	wtDir := filepath.Join(otherDevice(t, main.Dir), "wt")
	main.Write("a.txt", "one\n")
	main.Write("b.txt", "one\n")
	main.Commit("init")
	main.Git("worktree", "add", "-q", wtDir)
	r := gittest.At(t, wtDir)
	f := &fixture{t: t, r: r, agent: "a1"}
	f.take(checkpoint.ReasonTurnStart) // k1
	r.Write("a.txt", "a two\n")
	r.Write("b.txt", "b two\n")
	f.take(checkpoint.ReasonTurnEnd) // k2
	return main, f, []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
}

// heldAcrossDevices is crossDeviceTwoFiles with a.txt held open for
// writing by this test, as a program would hold it, and the name a shell
// writes through that descriptor by (/proc/<pid>/fd/<n>; the test is
// skipped where there is none). The file is closed when the test ends.
func heldAcrossDevices(t *testing.T) (main *gittest.Repo, f *fixture, args []string, held *os.File, through string) {
	t.Helper()
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("the save is made through /proc/<pid>/fd, which this system has not")
	}
	main, f, args = crossDeviceTwoFiles(t)
	held, err := os.OpenFile(f.r.Path("a.txt"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Close() })
	return main, f, args, held, fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), held.Fd())
}

// TestCopiedBackupSavedIntoAfterTheRescueIsKept: where the backup
// directory is on another file system, the rollback copies a.txt into it,
// removes a.txt, and holds the removed file open until it compares its
// backups (heldCopies). A program that holds a.txt open too and saves
// through it after that comparison, before the rollback logs its end
// (here at the rollback.verified step, through this test's descriptor),
// writes into a file that has no name any more; the rollback then closes
// its own descriptor (cleanup) without looking again. The save must be kept
// somewhere, as TestSaveAfterTheRescueJudgedIsNeverUnlinked keeps the
// same save where the backup is a rename.
func TestCopiedBackupSavedIntoAfterTheRescueIsKept(t *testing.T) {
	main, f, args, held, through := heldAcrossDevices(t)
	r := f.r
	save := "printf 'saved late through a held file\\n' >>" + through
	plan := planOf(t, r, args)
	real := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_FAILPOINT=rollback.verified:exec", "GIT_VENOM_TEST_FAILPOINT_EXEC="+save)
	if real.exit != 0 {
		t.Fatalf("rollback: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
	}
	if st, err := held.Stat(); err != nil || st.Size() != int64(len("a two\nsaved late through a held file\n")) {
		t.Fatalf("the save through the held file was not made: %v %v", st, err)
	}
	if where := keptWhere(t, main, r, "saved late through a held file"); where == "" {
		t.Errorf("the save through the held a.txt is nowhere: not in the tree, a backup, nor refs/venom/rescued/\n%s", real.stdout)
	}
}

// TestWayBackKeepsABackupItsPrunedSafetyCheckpointLost: a person edits
// a.txt after the agent's last checkpoint (so only the safety checkpoint
// S and the file hold that edit); the rollback moves it into its backup
// and writes k1's a.txt; then a `git gc --prune=now` that raced the
// rollback deletes S's objects (pruneSafety), and a program saves a.txt
// again (a rename over what git wrote). The second whole-check fails and
// the rollback goes back: b.txt comes back from its backup, a.txt is kept
// as saved. The backup of a.txt, the person's earlier edit, is then the
// only copy of it, S's blob being gone; the way back must not remove it.
func TestWayBackKeepsABackupItsPrunedSafetyCheckpointLost(t *testing.T) {
	f := newFixture(t, false)
	r := f.r
	r.Write("a.txt", "one\n")
	r.Write("b.txt", "one\n")
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart) // k1
	r.Write("a.txt", "a two\n")
	r.Write("b.txt", "b two\n")
	f.take(checkpoint.ReasonTurnEnd) // k2
	r.Write("a.txt", "a person's edit after k2, only in S\n")
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
	plan := planOf(t, r, args)
	exec := pruneSafety + "printf 'a newer save\\n' >a.txt.new && mv a.txt.new a.txt\n"
	real := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_FAILPOINT=rollback.written:exec", "GIT_VENOM_TEST_FAILPOINT_EXEC="+exec)
	out := parseOut(t, real)
	if real.exit != 1 || out.Error == nil {
		t.Fatalf("rollback whose safety checkpoint was pruned: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
	}
	if got := r.Read("a.txt"); got != "a newer save\n" {
		t.Errorf("a.txt is %q, want the newer save kept", got)
	}
	if where := keptWhere(t, r, r, "a person's edit after k2"); where == "" {
		t.Errorf("the person's edit of a.txt that S held is nowhere (S pruned, its backup removed): %s\n%s", out.Error.Code, real.stdout)
	}
}

// TestWayBackCopyDoesNotOverwriteASave: the way back of a rollback whose
// backups are copies (a worktree on another file system than its git
// directory) puts a.txt back by copying its backup to a.txt.venom-restore
// and renaming that over a.txt (putBack), after it checked that a.txt
// still holds what git wrote. A person who saves a.txt while the copy is
// made (here as soon as the copy's file appears; a.txt is large, so the
// copy takes a while) has the save replaced by S's a.txt: it is then
// nowhere. The way back must keep it (kept), as it keeps a save made
// before it came to the path.
func TestWayBackCopyDoesNotOverwriteASave(t *testing.T) {
	main := gittest.New(t)
	wtDir := filepath.Join(otherDevice(t, main.Dir), "wt")
	main.Write("a.txt", "one\n")
	main.Write("b.txt", "one\n")
	main.Commit("init")
	main.Git("worktree", "add", "-q", wtDir)
	r := gittest.At(t, wtDir)
	f := &fixture{t: t, r: r, agent: "a1"}
	f.take(checkpoint.ReasonTurnStart) // k1
	r.Write("a.txt", strings.Repeat("a large file the agent wrote\n", 1<<20))
	r.Write("b.txt", "b two\n")
	f.take(checkpoint.ReasonTurnEnd) // k2
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
	plan := planOf(t, r, args)
	cmd := exec.Command(filepath.Join(binDir, "git-venom-rollback"), append(append([]string(nil), args...), "--plan", plan.Plan)...)
	cmd.Dir = r.Dir
	cmd.Env = gittest.Env("GIT_VENOM_TEST_FAILPOINT=rollback.written:int")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	saved := false
	copying := func() bool {
		m, _ := filepath.Glob(r.Path("a.txt.venom-restore*"))
		return len(m) > 0
	}
loop:
	for {
		select {
		case <-done:
			break loop
		default:
		}
		if saved {
			time.Sleep(time.Millisecond)
			continue
		}
		if copying() {
			// An editor's save: a new file renamed over a.txt.
			if err := os.WriteFile(r.Path("a.txt.person"), []byte("the person's save\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(r.Path("a.txt.person"), r.Path("a.txt")); err != nil {
				t.Fatal(err)
			}
			saved = true
		}
	}
	if !saved {
		t.Skipf("the way back's copy was never seen (exit %v)\n%s%s", cmd.ProcessState, stdout.String(), stderr.String())
	}
	if where := keptWhere(t, main, r, "the person's save"); where == "" {
		t.Errorf("the save of a.txt made while the way back copied its backup is nowhere; a.txt holds %d bytes\n%s", len(r.Read("a.txt")), stdout.String())
	}
}

// TestRescueIsNamedWhenTheEndCannotBeLogged: a save made into the backup
// of a.txt while the rollback runs (a program that holds the file open)
// is kept by the rescue under refs/venom/rescued/; then rollback.ended
// cannot be logged (a full disk, here journal.TestFailEnv). The rollback
// fails with failed.rollback_interrupted and removes its backups by name
// on its way out, so the next command, which closes it as interrupted,
// finds no backup to rescue from. The ref holds the save, but someone
// must say so: the failing rollback's error, or the next command's
// warning, which names the saves of a rollback it closes.
func TestRescueIsNamedWhenTheEndCannotBeLogged(t *testing.T) {
	f, args, plan := twoFilesBack(t, "a two\n", "b two\n")
	r := f.r
	save := `for f in .git/venom/tmp/backup-*/*; do if [ "$(cat "$f")" = "a two" ]; then printf 'saved into the backup\n' >>"$f"; fi; done`
	real := realCall(t, r, args, plan, "GIT_VENOM_TEST_FAILPOINT=rollback.written:exec", "GIT_VENOM_TEST_FAILPOINT_EXEC="+save,
		"GIT_VENOM_TEST_LOG_FAIL=rollback.ended")
	if real.exit == 0 {
		t.Fatalf("rollback whose end cannot be logged: exit 0\n%s", real.stdout)
	}
	where := keptWhere(t, r, r, "saved into the backup")
	if !strings.HasPrefix(where, "refs/venom/rescued/") {
		t.Fatalf("the save is at %q, not under refs/venom/rescued/\n%s%s", where, real.stdout, real.stderr)
	}
	next := runBin(t, r.Dir, "git-venom-plan", nil, args...)
	told := real.stdout + real.stderr + next.stdout + next.stderr
	if !strings.Contains(told, where) {
		t.Errorf("nothing names %s, which holds the save of a.txt:\nrollback: %s%s\nnext plan: %s", where, real.stdout, real.stderr, next.stderr)
	}
}

// TestBackupsGoOnlyWhileTheSafetyCheckpointIsWhole: as
// TestPrunedSafetyCheckpointAfterTheWritesIsUndone, a gc that raced the
// rollback prunes the safety checkpoint's objects, but a moment later:
// after the rollback's last whole-check (the end of its writes), as it
// compares its backups (the rollback.verified step). The person's edit of
// a.txt made after the agent's last checkpoint was only in S and in the
// backup; the rollback ends ok and removes the backup all the same, so
// the edit is gone and the undo the rollback prints cannot bring it back.
func TestBackupsGoOnlyWhileTheSafetyCheckpointIsWhole(t *testing.T) {
	f, r := startedAtK1(t)
	r.Write("a.txt", "a two\n")
	f.take(checkpoint.ReasonTurnEnd) // k2
	r.Write("a.txt", "a person's edit after k2, only in S\n")
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
	plan := planOf(t, r, args)
	// By then the rollback's own checkpoint k4 exists: the safety
	// checkpoint, k3, is named.
	prune := strings.Replace(pruneSafety, "safety=$(git for-each-ref --format='%(refname)' refs/venom/checkpoints/a1/ | sort -t/ -k5 -n | tail -n 1)", "safety=refs/venom/checkpoints/a1/3", 1)
	if prune == pruneSafety {
		t.Fatal("pruneSafety no longer names the safety checkpoint as this test expects")
	}
	real := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_FAILPOINT=rollback.verified:exec", "GIT_VENOM_TEST_FAILPOINT_EXEC="+prune)
	soid := strings.TrimSpace(r.Read(".git/venom/pruned-safety"))
	if k3 := r.Line("rev-parse", "refs/venom/checkpoints/a1/3"); soid != k3 {
		t.Fatalf("the simulated gc pruned %s, not the safety checkpoint k3 (%s)", soid, k3)
	}
	if _, err := r.GitErr("cat-file", "-e", soid); err == nil {
		t.Fatalf("the simulated gc did not prune the safety commit %s\n%s", soid, real.stderr)
	}
	if where := keptWhere(t, r, r, "a person's edit after k2"); where == "" {
		t.Errorf("the person's edit of a.txt is nowhere: S was pruned and the backup removed (exit %d)\n%s%s", real.exit, real.stdout, real.stderr)
	}
	dirs := backupDirs(r, nil)
	if len(dirs) != 1 || !strings.Contains(real.stdout, `"backup":"`+dirs[0]+`"`) {
		t.Errorf("the result does not name the kept backup %v\n%s", dirs, real.stdout)
	}
}

// TestRescueNamesOnlyFilesThatAreThere: gen/ is swapped for a person's
// directory holding their own gen/f7.txt between the checks and the
// rename, and the original gen/ is moved back right after (the path taken
// again): the person's directory stays in the backup, and its f7.txt,
// which cannot go back then (gen/f7.txt is taken), is kept for the rescue
// (movedAmiss, strangers: ap.foreign). The deletions then go one by one,
// the original gen/f7.txt into a backup of its own, and a program that
// holds that file open saves through it after the move. At the rescue,
// gen/f7.txt is free: strangers puts the person's f7.txt back there, but
// its stale entry in ap.foreign makes KeepSaves fail (its file is gone),
// so nothing is stored under a ref: the program's save is kept on disk,
// and rescued[] names, by its file, a backup that no longer exists. Both
// contents must be somewhere, and rescued[] must name real files.
func TestRescueNamesOnlyFilesThatAreThere(t *testing.T) {
	f := turnMaking(t, "base.txt", numbered("gen/f%d.txt", 8)...)
	r := f.r
	const theirs = "the person's own f7\n"
	held, err := os.OpenFile(r.Path("gen/f7.txt"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	var seen []string
	saved := false
	hook(t, func(op, rel string) {
		switch {
		case op == "dirrename" && rel == "gen":
			if err := os.Rename(r.Path("gen"), r.Path("gen.old")); err != nil {
				t.Error(err)
			}
			if err := os.Mkdir(r.Path("gen"), 0o755); err != nil {
				t.Error(err)
			}
			if err := os.WriteFile(r.Path("gen/f7.txt"), []byte(theirs), 0o644); err != nil {
				t.Error(err)
			}
		case op == "dirmoved" && rel == "gen":
			if err := os.Rename(r.Path("gen.old"), r.Path("gen")); err != nil {
				t.Error(err)
			}
		case op == "move" && !saved:
			if _, err := os.Lstat(r.Path("gen/f7.txt")); err == nil {
				return // not moved yet
			}
			// gen/f7.txt is in its backup now.
			saved = true
			if _, err := held.WriteString("saved through the held file\n"); err != nil {
				t.Error(err)
			}
		default:
			return
		}
		seen = append(seen, op+" "+rel)
	})
	_, res, err := f.rollback("k1", rollback.Options{Restore: "files"})
	if len(seen) != 3 {
		t.Fatalf("the swaps and the save were not all made: %v (err %v)", seen, err)
	}
	if err != nil {
		t.Fatalf("rollback: %v", describe(err))
	}
	for _, want := range []string{theirs, "saved through the held file"} {
		if where := keptWhere(t, r, r, want); where == "" {
			t.Errorf("%q is nowhere: not in the tree, a backup, nor refs/venom/rescued/; rescued %+v", want, res.Repos[0].Rescued)
		}
	}
	for _, rs := range res.Repos[0].Rescued {
		if _, err := os.Lstat(rs.File); rs.Ref == "" && err != nil {
			t.Errorf("rescued[] names %s by its file %s, which is not there: %v", rs.Path, rs.File, err)
		}
	}
}
