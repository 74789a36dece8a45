package rollback_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/gittest"
)

// doctorCheck is the check id of git venom-doctor in f's tree.
func doctorCheck(t *testing.T, f *fixture, id string) (level, message string) {
	t.Helper()
	for _, c := range f.tree().Doctor(context.Background()) {
		if c.ID == id {
			return c.Level, c.Message
		}
	}
	t.Fatalf("doctor has no check %s", id)
	return "", ""
}

// TestBackupWithASaveOutlivesItsRollback (F6 of break-dirmove): a
// rollback killed once it has logged its end, before it removed its
// backups, leaves them. The doctor says the next plan removes such a
// directory; but a save made into one of its files after the rollback
// compared them (a program that held the file open) is nowhere else, so
// the next plan keeps that directory, and the doctor warns, naming it.
// (Before, every such directory stayed for good and the doctor said
// nothing; TestFailpoints/rollback.ended checks that one without a save
// goes.)
func TestBackupWithASaveOutlivesItsRollback(t *testing.T) {
	f, args, dir := killedAsItEnded(t, "two\n")
	r := f.r
	if level, msg := doctorCheck(t, f, "checkpoints.backups"); level != "ok" || !strings.Contains(msg, dir) || !strings.Contains(msg, "the next plan or rollback removes it") {
		t.Errorf("doctor on the backup the kill left: %s %s", level, msg)
	}
	// A save into the backup of a.txt, through the file a program held.
	saved := backupHolding(dir, "two\n")
	if saved == "" {
		t.Fatalf("no backup of S's files in %s", dir)
	}
	fh, err := os.OpenFile(saved, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString("saved through a file held open\n")
	fh.Close()
	next := runBin(t, r.Dir, "git-venom-plan", nil, args...)
	if next.exit != 0 || strings.Contains(next.stderr, "interrupted") {
		t.Errorf("plan after the kill: exit %d\n%s", next.exit, next.stderr)
	}
	if got, err := os.ReadFile(saved); err != nil || string(got) != "two\nsaved through a file held open\n" {
		t.Errorf("the save in the backup after the next plan: %q, %v", got, err)
	}
	if level, msg := doctorCheck(t, f, "checkpoints.backups"); level != "warn" || !strings.Contains(msg, dir) {
		t.Errorf("doctor on the backup holding a save: %s %s", level, msg)
	}
}

// gitSavingAt is a git wrapper for GIT_VENOM_GIT: the first git child
// whose arguments hold word appends text to the file $SAVE_INTO before it
// runs, as a person's program holding that file open would, at that very
// moment of the command.
func gitSavingAt(t *testing.T, word, text string) string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	done := filepath.Join(dir, "done")
	script := "#!/bin/sh\n" +
		"case \" $* \" in *\" " + word + " \"*) if [ -n \"$SAVE_INTO\" ] && [ ! -e '" + done + "' ]; then : >'" + done + "'; printf '" + text + "' >>\"$SAVE_INTO\"; fi;; esac\n" +
		"exec '" + real + "' \"$@\"\n"
	w := filepath.Join(dir, "git")
	if err := os.WriteFile(w, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return w
}

// backupHolding is the file of the backup directory dir that holds
// content (S's, moved there), or "".
func backupHolding(dir, content string) string {
	var found string
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && e.Name() != checkpoint.ManifestFile && found == "" {
			if b, _ := os.ReadFile(p); string(b) == content {
				found = p
			}
		}
		return nil
	})
	return found
}

// killedAsItEnded is a rollback of two files to k1 killed once it logged
// its end (rollback.ended), its backups left: f, the plan's arguments and
// the one backup directory.
func killedAsItEnded(t *testing.T, s string) (*fixture, []string, string) {
	t.Helper()
	f, args, plan := twoFilesBack(t, s, s)
	r := f.r
	real := realCall(t, r, args, plan, "GIT_VENOM_TEST_FAILPOINT=rollback.ended")
	if !real.killed {
		t.Fatalf("not killed: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
	}
	dirs := backupDirs(r, nil)
	if len(dirs) != 1 {
		t.Fatalf("backup directories after the kill: %v", dirs)
	}
	return f, args, dirs[0]
}

// twoFilesBack is a tree whose turn (k1 to k2) changed a.txt and b.txt
// from "one" to a and b: f, the arguments of the plan back to k1 (files
// only) and its id.
func twoFilesBack(t *testing.T, a, b string) (*fixture, []string, string) {
	t.Helper()
	f := newFixture(t, false)
	r := f.r
	r.Write("a.txt", "one\n")
	r.Write("b.txt", "one\n")
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart) // k1
	r.Write("a.txt", a)
	r.Write("b.txt", b)
	f.take(checkpoint.ReasonTurnEnd) // k2
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
	return f, args, planOf(t, r, args).Plan
}

// TestSaveWhileTheSweepJudgesIsNeverUnlinked (breaksweep's finding 1): a
// save into a backup file of a rollback that ended, made after the sweep
// looked at the file and before it unlinks it (here as the sweep's last
// git child, the safety checkpoint's object check, starts), stays: a file
// is unlinked only while it is as it was judged. The save used to be
// unlinked with the file (3 of 3).
func TestSaveWhileTheSweepJudgesIsNeverUnlinked(t *testing.T) {
	f, args, dir := killedAsItEnded(t, "two\n")
	file := backupHolding(dir, "two\n")
	if file == "" {
		t.Fatalf("no backup of S's files in %s", dir)
	}
	next := runBin(t, f.r.Dir, "git-venom-plan", []string{"GIT_VENOM_GIT=" + gitSavingAt(t, "cat-file", "saved as the sweep ran\\n"), "SAVE_INTO=" + file}, args...)
	if next.exit != 0 {
		t.Fatalf("plan: exit %d\n%s", next.exit, next.stderr)
	}
	if got, err := os.ReadFile(file); err != nil || string(got) != "two\nsaved as the sweep ran\n" {
		t.Errorf("the save into %s: %q, %v; want it kept", file, got, err)
	}
	if level, msg := doctorCheck(t, f, "checkpoints.backups"); level != "warn" || !strings.Contains(msg, dir) {
		t.Errorf("doctor on the backup holding the save: %s %s", level, msg)
	}
}

// TestSaveWhileTheRescueStoresIsNeverUnlinked is the same for the command
// that closes a killed rollback as interrupted: it stores the saves it
// found (KeepSaves), then removes the backup by name; a save into another
// backup file made while it stores them (here as commit-tree runs) stays
// on disk, with the backup directory.
func TestSaveWhileTheRescueStoresIsNeverUnlinked(t *testing.T) {
	t.Parallel()
	s := newSlowTree(t, 40, false)
	r := s.f.r
	held := holdOpen(t, r, s.paths[:2])
	cmd, _ := s.start(t)
	saveThrough(t, held)
	cmd.Process.Kill()
	cmd.Wait()
	dirs := backupDirs(r, nil)
	if len(dirs) != 1 {
		t.Fatalf("backup directories after the kill: %v", dirs)
	}
	other := ""
	m, _ := filepath.Glob(filepath.Join(dirs[0], "[0-9]*"))
	for _, p := range m {
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
			if b, _ := os.ReadFile(p); !strings.Contains(string(b), "held open and saved") {
				other = p
				break
			}
		}
	}
	if other == "" {
		t.Fatalf("no backup file without a save in %s", dirs[0])
	}
	before, _ := os.ReadFile(other)
	next, _ := nextRescues(t, r, []string{"GIT_VENOM_GIT=" + gitSavingAt(t, "commit-tree", "saved as the rescue stored\\n"), "SAVE_INTO=" + other}, s.args...)
	if got, err := os.ReadFile(other); err != nil || string(got) != string(before)+"saved as the rescue stored\n" {
		t.Errorf("the save into %s: %q, %v; want it kept\n%s", other, got, err, next.stderr)
	}
}

// TestBackupOfAPrunedSafetyCheckpointStays (breaksweep's finding 2): once
// the rollback's safety checkpoint is pruned (clean), its objects may be
// gc'd, so the backup left by a rollback killed as it ended may hold the
// only copy of what it moved: the next plan keeps it. It used to remove
// it, and a gc then took the last copy.
func TestBackupOfAPrunedSafetyCheckpointStays(t *testing.T) {
	f, args, dir := killedAsItEnded(t, "only in S and its backup\n")
	r := f.r
	r.Git("config", "venom.checkpoints.keepSafety", "1s")
	time.Sleep(2 * time.Second)
	if c := runBin(t, r.Dir, "git-venom-checkpoint", nil, "clean", "--agent", f.agent, "--json"); c.exit != 0 {
		t.Fatalf("clean: exit %d\n%s%s", c.exit, c.stdout, c.stderr)
	}
	if _, ok := r.Refs()["refs/venom/checkpoints/"+f.agent+"/3"]; ok {
		t.Fatalf("clean left the safety checkpoint's ref")
	}
	runBin(t, r.Dir, "git-venom-plan", nil, args...)
	if backupHolding(dir, "only in S and its backup\n") == "" {
		t.Errorf("the backup of a pruned safety checkpoint was removed")
	}
}

// TestBackupWithATornManifestIsNotPromised (breaksweep's finding 3): a
// backup directory holding a file its manifest does not name (its line
// torn) is kept, and the doctor warns rather than promise that the next
// plan removes it.
func TestBackupWithATornManifestIsNotPromised(t *testing.T) {
	f, args, dir := killedAsItEnded(t, "two\n")
	m := filepath.Join(dir, checkpoint.ManifestFile)
	b, err := os.ReadFile(m)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	torn := strings.Join(lines[:len(lines)-1], "") + lines[len(lines)-1][:20]
	if err := os.WriteFile(m, []byte(torn), 0o600); err != nil {
		t.Fatal(err)
	}
	if level, msg := doctorCheck(t, f, "checkpoints.backups"); level != "warn" || !strings.Contains(msg, dir) {
		t.Errorf("doctor on a backup with a torn manifest: %s %s", level, msg)
	}
	runBin(t, f.r.Dir, "git-venom-plan", nil, args...)
	if backupHolding(dir, "two\n") == "" {
		t.Errorf("the backup with a torn manifest lost its files")
	}
}

// TestSaveAfterTheRescueJudgedIsNeverUnlinked: a save into a backup file
// made after the rollback's own rescue compared its backups, as it logs
// its end (here at the rollback.ended step, by a program that holds the
// file open), stays: the rollback removes its backups by name, each only
// while it is as judged, and names the one it kept in rescued[], by its
// file, with exact false. It used to remove the whole backup directory,
// the save with it.
func TestSaveAfterTheRescueJudgedIsNeverUnlinked(t *testing.T) {
	f, args, plan := twoFilesBack(t, "a two\n", "b two\n")
	r := f.r
	save := `for f in .git/venom/tmp/backup-*/*; do if [ "$(cat "$f")" = "a two" ]; then printf 'saved late\n' >>"$f"; echo "$f" >saved-into; fi; done`
	real := realCall(t, r, args, plan, "GIT_VENOM_TEST_FAILPOINT=rollback.ended:exec", "GIT_VENOM_TEST_FAILPOINT_EXEC="+save)
	if real.exit != 0 {
		t.Fatalf("rollback: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
	}
	into, err := os.ReadFile(filepath.Join(r.Dir, "saved-into"))
	if err != nil {
		t.Fatalf("the save was not made: %v", err)
	}
	file := strings.TrimSpace(string(into))
	if !filepath.IsAbs(file) {
		file = filepath.Join(r.Dir, file)
	}
	if got, err := os.ReadFile(file); err != nil || string(got) != "a two\nsaved late\n" {
		t.Errorf("the save into the backup %s: %q, %v; want it kept", file, got, err)
	}
	var res rollbackOut
	if err := json.Unmarshal([]byte(real.stdout), &res); err != nil {
		t.Fatalf("%v\n%s", err, real.stdout)
	}
	if len(res.Repos) != 1 || len(res.Repos[0].Rescued) != 1 || res.Repos[0].Rescued[0].Path != "a.txt" {
		t.Fatalf("rescued: %+v, want a.txt by its file", res.Repos)
	}
	if rs := res.Repos[0].Rescued[0]; rs.Ref != "" || !sameFile(rs.File, file) {
		t.Errorf("rescued a.txt is %+v, want it named by its file %s", rs, file)
	}
	if res.Exact == nil || *res.Exact {
		t.Errorf("exact is %v with a save kept in the backup", res.Exact)
	}
	dirs := backupDirs(r, nil)
	if len(dirs) != 1 {
		t.Fatalf("backup directories: %v, want the one holding the save", dirs)
	}
	if _, err := os.Lstat(filepath.Join(dirs[0], checkpoint.ManifestFile)); err != nil {
		t.Errorf("the kept backup lost its manifest: %v", err)
	}
	if b := backupHolding(dirs[0], "b two\n"); b != "" {
		t.Errorf("the backup of b.txt, judged and unchanged, is still there: %s", b)
	}
	if level, msg := doctorCheck(t, f, "checkpoints.backups"); level != "warn" || !strings.Contains(msg, dirs[0]) {
		t.Errorf("doctor on the backup holding the save: %s %s", level, msg)
	}
}

// sameFile reports whether a and b name the same file.
func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// savedInASubmodulesBackup is a rollback of the agent's turn in every
// repository of subFixture, killed once it logged its end, and a save
// (through a file a program held open) into the backup of lib/l, or of
// lib/in/i when nested: f, lib, in and the saved backup file, which
// keeps its directory from the sweeps.
func savedInASubmodulesBackup(t *testing.T, nested bool) (f *fixture, lib, in *gittest.Repo, saved string) {
	t.Helper()
	f, lib, in = subFixture(t, false)
	r := f.r
	k1, _ := agentTurn(t, f, lib, in)
	args := []string{"--agent", f.agent, k1, "--restore", "files", "--json"}
	plan := planOf(t, r, args)
	if real := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_FAILPOINT=rollback.ended"); !real.killed {
		t.Fatalf("not killed: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
	}
	repo, content := lib, "l2 (the agent's)\n"
	if nested {
		repo, content = in, "i2 (the agent's)\n"
	}
	dirs := backupDirs(repo, nil)
	if len(dirs) != 1 {
		t.Fatalf("%s's backup directories after the kill: %v", repo.Dir, dirs)
	}
	if saved = backupHolding(dirs[0], content); saved == "" {
		t.Fatalf("no backup holding %q in %s", content, dirs[0])
	}
	fh, err := os.OpenFile(saved, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString("saved through a file held open\n")
	fh.Close()
	return f, lib, in, saved
}

// TestDoctorNamesADeinitializedSubmodulesBackup: a rollback of a tree
// with submodules killed once it logged its end leaves a backup in lib's
// git directory; a save into it (a program that held the file open)
// keeps it from the sweeps. After `git submodule deinit` of lib, and
// another rollback whose safety checkpoint no longer covers lib, the
// doctor still names it, from lib's git directory under the top's. It
// used to look only in the submodules the last rollback covered, and
// only in those checked out: the backup, the person's save in it, went
// unnamed for good.
func TestDoctorNamesADeinitializedSubmodulesBackup(t *testing.T) {
	f, _, _, saved := savedInASubmodulesBackup(t, false)
	r := f.r
	libDirs := []string{filepath.Dir(saved)}
	r.Git("submodule", "deinit", "-q", "-f", "lib")
	if level, msg := doctorCheck(t, f, "checkpoints.backups"); level != "warn" || !strings.Contains(msg, libDirs[0]) {
		t.Errorf("doctor after lib's deinit: %s %s; want it to name %s", level, msg, libDirs[0])
	}
	// Another turn, and a rollback of it, covering the top alone now.
	k3 := f.take(checkpoint.ReasonTurnStart)
	r.Write("a", "a3\n")
	f.take(checkpoint.ReasonTurnEnd)
	args := []string{"--agent", f.agent, k3, "--restore", "files", "--json"}
	plan := planOf(t, r, args)
	if real := realCall(t, r, args, plan.Plan); real.exit != 0 {
		t.Fatalf("the second rollback: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
	}
	if got, err := os.ReadFile(saved); err != nil || !strings.HasSuffix(string(got), "saved through a file held open\n") {
		t.Errorf("the save in lib's backup: %q, %v", got, err)
	}
	if level, msg := doctorCheck(t, f, "checkpoints.backups"); level != "warn" || !strings.Contains(msg, libDirs[0]) {
		t.Errorf("doctor after a rollback that does not cover lib: %s %s; want it to name %s", level, msg, libDirs[0])
	}
}

// TestSaveAfterTheWriteIsLeftNotConverted: a person's save into a file
// the rollback has just written (here after its batch, before the
// rollback checks what git wrote against the blob) stays as saved and is
// left, changed_during_rollback, with exact false; it used to be called
// converted, as if git's end-of-line conversion or a filter had made it.
func TestSaveAfterTheWriteIsLeftNotConverted(t *testing.T) {
	f, args, plan := twoFilesBack(t, "a two\n", "b two\n")
	r := f.r
	real := realCall(t, r, args, plan, "GIT_VENOM_TEST_FAILPOINT=rollback.batch-written:exec",
		"GIT_VENOM_TEST_FAILPOINT_EXEC=printf 'saved\\n' >>a.txt")
	if real.exit != 0 {
		t.Fatalf("rollback: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
	}
	if got := r.Read("a.txt"); got != "one\nsaved\n" {
		t.Errorf("a.txt is %q, want the save kept on what the rollback wrote", got)
	}
	var res struct {
		Exact *bool `json:"exact"`
		Repos []struct {
			Left []struct {
				Path   string `json:"path"`
				Reason string `json:"reason"`
			} `json:"left"`
			Converted []string `json:"converted"`
		} `json:"repos"`
	}
	if err := json.Unmarshal([]byte(real.stdout), &res); err != nil || len(res.Repos) != 1 {
		t.Fatalf("%v\n%s", err, real.stdout)
	}
	if len(res.Repos[0].Converted) != 0 {
		t.Errorf("converted %v: a person's save is not a conversion", res.Repos[0].Converted)
	}
	if l := res.Repos[0].Left; len(l) != 1 || l[0].Path != "a.txt" || l[0].Reason != "changed_during_rollback" {
		t.Errorf("left %+v, want a.txt changed_during_rollback", l)
	}
	if res.Exact == nil || *res.Exact {
		t.Errorf("exact is %v with a save made during the rollback", res.Exact)
	}
}

// TestSaveBeforeTheEndIntoADirectoryMovedWhole (a break-it pass's R9): a
// save through a file a program holds open, in a directory the rollback
// deletes whole (moved into the backup in one rename), made after the
// rescue judged the backups and before the end is logged (here at the
// rollback.verified step), is kept: the directory's files are unlinked
// only after the end, and only while they are as judged. They used to
// be unlinked before the end, and the save went into an unlinked file,
// with exact true (3 of 3).
func TestSaveBeforeTheEndIntoADirectoryMovedWhole(t *testing.T) {
	f := newFixture(t, false)
	r := f.r
	r.Write("a.txt", "one\n")
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart) // k1
	for i := 0; i < 4; i++ {
		r.Write(fmt.Sprintf("gen/out%d", i), fmt.Sprintf("agent output %d\n", i))
	}
	r.Write("a.txt", "two\n")
	f.take(checkpoint.ReasonTurnEnd) // k2
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
	plan := planOf(t, r, args).Plan

	held, err := os.OpenFile(r.Path("gen/out0"), os.O_RDWR, 0) // the editor's
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	goFile, savedFile := filepath.Join(t.TempDir(), "go"), filepath.Join(t.TempDir(), "saved")
	done := make(chan error, 1)
	go func() {
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(goFile); err == nil {
				_, err := held.WriteAt([]byte("SAVED BEFORE THE END\n"), 0)
				if err == nil {
					err = os.WriteFile(savedFile, nil, 0o644)
				}
				done <- err
				return
			}
		}
		done <- fmt.Errorf("the failpoint never ran")
	}()
	script := fmt.Sprintf("touch %q; while [ ! -e %q ]; do sleep 0.01; done", goFile, savedFile)
	real := realCall(t, r, args, plan, "GIT_VENOM_TEST_DIRMOVE_MIN=2",
		"GIT_VENOM_TEST_FAILPOINT=rollback.verified:exec", "GIT_VENOM_TEST_FAILPOINT_EXEC="+script)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if real.exit != 0 {
		t.Fatalf("rollback: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
	}
	// The file the program saved into is still a file of the disk, and
	// the result says where.
	var st syscall.Stat_t
	if err := syscall.Fstat(int(held.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	if st.Nlink == 0 {
		t.Fatalf("the save went into a file the rollback had unlinked before its end\n%s", real.stdout)
	}
	var res rollbackOut
	if err := json.Unmarshal([]byte(real.stdout), &res); err != nil {
		t.Fatalf("%v\n%s", err, real.stdout)
	}
	if res.Exact == nil || *res.Exact {
		t.Errorf("exact is %v with a save made before the end kept", res.Exact)
	}
	left := ""
	for _, l := range res.Repos[0].Left {
		if l.Path == "gen" {
			left = l.Reason
		}
	}
	if left == "" {
		t.Errorf("gen is not left: %+v", res.Repos[0].Left)
	}
	// Its paths are no longer among what the rollback did.
	for _, f := range res.Repos[0].Files {
		if strings.HasPrefix(f.Path, "gen/") {
			t.Errorf("files[] still lists %s, below gen, which is left", f.Path)
		}
	}
	// Where it went: back to the tree with its directory, here, as
	// nothing took its place.
	if got := r.Read("gen/out0"); got != "SAVED BEFORE THE END\n" {
		t.Errorf("gen/out0 is %q, want the save", got)
	}
	if got := r.Read("a.txt"); got != "one\n" {
		t.Errorf("a.txt is %q, want k1's", got)
	}
}

// TestDoctorNamesAKilledRollbacksBackup: a rollback killed before it
// ended leaves its backup directory until the next plan or rollback
// closes it; until then the doctor's checkpoints.backups is a warning
// naming it (it used to say no rollback left one), and once that
// command closed the rollback and judged the directory, ok.
func TestDoctorNamesAKilledRollbacksBackup(t *testing.T) {
	f, args, plan := twoFilesBack(t, "a two\n", "b two\n")
	r := f.r
	if real := realCall(t, r, args, plan, "GIT_VENOM_TEST_FAILPOINT=rollback.written"); !real.killed {
		t.Fatalf("not killed: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
	}
	dirs := backupDirs(r, nil)
	if len(dirs) != 1 {
		t.Fatalf("backup directories after the kill: %v", dirs)
	}
	if level, msg := doctorCheck(t, f, "checkpoints.backups"); level != "warn" || !strings.Contains(msg, dirs[0]) || !strings.Contains(msg, "did not end") {
		t.Errorf("doctor after the kill: %s %s", level, msg)
	}
	planOf(t, r, args) // closes the rollback, and removes its backup
	if level, msg := doctorCheck(t, f, "checkpoints.backups"); level != "ok" {
		t.Errorf("doctor once the plan closed the rollback: %s %s", level, msg)
	}
}

// TestDoctorNamesAKilledRollbacksBackupInASubmodule: the same, for the
// backup directory a rollback killed in a submodule left in that
// submodule's git directory.
func TestDoctorNamesAKilledRollbacksBackupInASubmodule(t *testing.T) {
	f, lib, in := subFixture(t, false)
	r := f.r
	k1, _ := agentTurn(t, f, lib, in)
	args := []string{"--agent", f.agent, k1, "--restore", "files", "--json"}
	plan := planOf(t, r, args)
	if real := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_FAILPOINT=rollback.sub-written"); !real.killed {
		t.Fatalf("not killed: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
	}
	dirs := backupDirs(lib, nil)
	if len(dirs) != 1 {
		t.Fatalf("lib's backup directories after the kill: %v", dirs)
	}
	if level, msg := doctorCheck(t, f, "checkpoints.backups"); level != "warn" || !strings.Contains(msg, dirs[0]) {
		t.Errorf("doctor after the kill: %s %s, want a warning naming %s", level, msg, dirs[0])
	}
}
