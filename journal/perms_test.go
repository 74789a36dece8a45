package journal_test

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/venom-org/git-venom/journal"
)

// TestRollbackStartedPerms: rollback.started carries the permission bits
// of what the rollback may lose as {path, perm, dir?}; a path that is not
// UTF-8 is read back byte for byte (path_bytes); a record without any
// keeps its shape (no "perms" member); a perm that is not octal, or beyond
// 0777, is refused by FileMode.
func TestRollbackStartedPerms(t *testing.T) {
	t.Parallel()
	in := journal.RollbackStarted{Agent: "a1", Checkpoint: "k1", Safety: "k3", Restore: "files", Plan: "p1-0", Path: "/tree",
		Perms: []journal.PathPerm{{Path: "keys", Perm: "0700", Dir: true}, {Path: "n\xff.env", Perm: "0600"}}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"agent":"a1","checkpoint":"k1","safety":"k3","restore":"files","plan":"p1-0","path":"/tree",` +
		`"perms":[{"path":"keys","perm":"0700","dir":true},{"path":"n\ufffd.env","perm":"0600","path_bytes":"bv8uZW52"}]}`
	if string(b) != want {
		t.Errorf("encoded\n %s\nwant\n %s", b, want)
	}
	var out journal.RollbackStarted
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("read back %+v, want %+v", out, in)
	}
	in.Perms = nil
	b, _ = json.Marshal(in)
	if want := `{"agent":"a1","checkpoint":"k1","safety":"k3","restore":"files","plan":"p1-0","path":"/tree"}`; string(b) != want {
		t.Errorf("without perms: %s", b)
	}
	for perm, want := range map[string]os.FileMode{"0600": 0o600, "0755": 0o755, "0000": 0} {
		if got, ok := (journal.PathPerm{Perm: perm}).FileMode(); !ok || got != want {
			t.Errorf("FileMode(%q) = %v, %v", perm, got, ok)
		}
	}
	for _, perm := range []string{"", "rw", "0800", "01000", "-1"} {
		if _, ok := (journal.PathPerm{Perm: perm}).FileMode(); ok {
			t.Errorf("FileMode(%q) accepted", perm)
		}
	}
}
