package rollback_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
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
	f := newFixture(t, false)
	r := f.r
	r.Write("a.txt", "one\n")
	r.Write("b.txt", "one\n")
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart) // k1
	r.Write("a.txt", "two\n")
	r.Write("b.txt", "two\n")
	f.take(checkpoint.ReasonTurnEnd) // k2
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
	plan := planOf(t, r, args)
	real := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_FAILPOINT=rollback.ended")
	if !real.killed {
		t.Fatalf("not killed: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
	}
	dirs := backupDirs(r, nil)
	if len(dirs) != 1 {
		t.Fatalf("backup directories after the kill: %v", dirs)
	}
	if level, msg := doctorCheck(t, f, "checkpoints.backups"); level != "ok" || !strings.Contains(msg, dirs[0]) || !strings.Contains(msg, "the next plan or rollback removes it") {
		t.Errorf("doctor on the backup the kill left: %s %s", level, msg)
	}
	// A save into the backup of a.txt, through the file a program held.
	var saved string
	filepath.WalkDir(dirs[0], func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && e.Name() != checkpoint.ManifestFile && saved == "" {
			if b, _ := os.ReadFile(p); string(b) == "two\n" {
				saved = p
			}
		}
		return nil
	})
	if saved == "" {
		t.Fatalf("no backup of S's files in %s", dirs[0])
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
	if level, msg := doctorCheck(t, f, "checkpoints.backups"); level != "warn" || !strings.Contains(msg, dirs[0]) {
		t.Errorf("doctor on the backup holding a save: %s %s", level, msg)
	}
}
