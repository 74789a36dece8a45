package rollback_test

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/rollback"
)

// TestFailedRollbackGivesBackPerms: a rollback logs, in rollback.started,
// the permission bits no checkpoint holds of what it deletes (a 0600 file,
// a 0700 directory it empties); when it then fails and goes back to S, the
// files and directories it recreates get those bits, not the umask's
// (CASES BR-41). The failure is a branch that moves under the rollback, as
// in TestHeadCompareAndSwap.
func TestFailedRollbackGivesBackPerms(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	c := raceTurn(f)
	write(t, r.Dir, "private.txt", []byte("secret\n"), 0o600)
	write(t, r.Dir, "keys/id", []byte("key\n"), 0o600)
	if err := os.Chmod(filepath.Join(r.Dir, "keys"), 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, r.Dir, "wide.txt", []byte("git's own bits\n"), 0o644)
	f.take(checkpoint.ReasonTurnEnd)
	moveBranchDuringWrites(r, c)

	_, res, err := f.rollback("k1", rollback.Options{Restore: "files"})
	if c := code(err); c != "failed.rollback_undone" && c != "failed.rollback_partial" {
		t.Fatalf("rollback with a commit landing during it: %v, %v", res, describe(err))
	}
	started := records(t, r, "rollback.started")
	if len(started) != 1 {
		t.Fatalf("rollback.started: %v", started)
	}
	var got []string
	perms, _ := started[0]["perms"].([]any)
	for _, p := range perms {
		m := p.(map[string]any)
		got = append(got, m["path"].(string)+" "+m["perm"].(string)+" "+boolString(m["dir"]))
	}
	sort.Strings(got)
	want := []string{"keys 0700 dir", "keys/id 0600 file", "private.txt 0600 file"}
	if !slices.Equal(got, want) {
		t.Errorf("rollback.started perms = %q, want %q (wide.txt has git's bits: not logged)", got, want)
	}
	for rel, want := range map[string]os.FileMode{"private.txt": 0o600, "keys": 0o700, "keys/id": 0o600} {
		st, err := os.Lstat(filepath.Join(r.Dir, rel))
		if err != nil {
			t.Errorf("%s after the undone rollback: %v", rel, err)
			continue
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s is %04o after the undone rollback, want %04o", rel, st.Mode().Perm(), want)
		}
	}
}

func boolString(v any) string {
	if b, _ := v.(bool); b {
		return "dir"
	}
	return "file"
}
