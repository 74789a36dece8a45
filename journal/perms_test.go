package journal_test

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/venom-org/git-venom/journal"
)

// TestRollbackStartedPerms: rollback.started carries the permission bits
// of what the rollback may lose as a list of {path, perm, dir?, gid?}; a
// path that is not UTF-8 is read back byte for byte (path_bytes); a record
// without any keeps its shape (no "perms" member), and a record read from
// the log keeps the list undecoded until PermList asks.
func TestRollbackStartedPerms(t *testing.T) {
	t.Parallel()
	gid := uint32(4)
	ps := []journal.PathPerm{{Path: "keys", Perm: "2750", Dir: true, Gid: &gid}, {Path: "n\xff.env", Perm: "0600"}}
	raw, err := journal.EncodePerms(ps)
	if err != nil {
		t.Fatal(err)
	}
	in := journal.RollbackStarted{Agent: "a1", Checkpoint: "k1", Safety: "k3", Restore: "files", Plan: "p1-0", Path: "/tree", Perms: raw}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"agent":"a1","checkpoint":"k1","safety":"k3","restore":"files","plan":"p1-0","path":"/tree",` +
		`"perms":[{"path":"keys","perm":"2750","dir":true,"gid":4},{"path":"n\ufffd.env","perm":"0600","path_bytes":"bv8uZW52"}]}`
	if string(b) != want {
		t.Errorf("encoded\n %s\nwant\n %s", b, want)
	}
	var out journal.RollbackStarted
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	got, err := out.PermList()
	if err != nil || !reflect.DeepEqual(got, ps) {
		t.Errorf("read back %+v (%v), want %+v", got, err, ps)
	}
	if raw, _ := journal.EncodePerms(nil); raw != nil {
		t.Errorf("EncodePerms(nil) = %s, want nothing", raw)
	}
	in.Perms = nil
	b, _ = json.Marshal(in)
	if want := `{"agent":"a1","checkpoint":"k1","safety":"k3","restore":"files","plan":"p1-0","path":"/tree"}`; string(b) != want {
		t.Errorf("without perms: %s", b)
	}
	if got, err := in.PermList(); got != nil || err != nil {
		t.Errorf("PermList of none: %v, %v", got, err)
	}
}

// TestRollbackStartedCreated: rollback.started's created lists paths,
// with paths_bytes when one is not UTF-8, and reads them back byte for
// byte; an empty list is written and read as known and empty; more than
// MaxCreated, or a record without the member, is not known.
func TestRollbackStartedCreated(t *testing.T) {
	t.Parallel()
	paths := []string{"build/out.txt", "n\xff.o"}
	raw, err := journal.EncodeCreated(paths)
	if err != nil {
		t.Fatal(err)
	}
	in := journal.RollbackStarted{Agent: "a1", Checkpoint: "k1", Safety: "k3", Restore: "files", Plan: "p2-0", Path: "/tree", Created: raw}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"agent":"a1","checkpoint":"k1","safety":"k3","restore":"files","plan":"p2-0","path":"/tree",` +
		`"created":{"paths":["build/out.txt","n\ufffd.o"],"paths_bytes":["YnVpbGQvb3V0LnR4dA==","bv8ubw=="]}}`
	if string(b) != want {
		t.Errorf("encoded\n %s\nwant\n %s", b, want)
	}
	var out journal.RollbackStarted
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := out.CreatedList(); err != nil || !ok || !reflect.DeepEqual(got, paths) {
		t.Errorf("read back %q, %v, %v; want %q", got, ok, err, paths)
	}
	if in.Created, err = journal.EncodeCreated(nil); err != nil || string(in.Created) != `{"paths":[]}` {
		t.Fatalf("EncodeCreated(nil) = %s, %v", in.Created, err)
	}
	if got, ok, err := in.CreatedList(); err != nil || !ok || len(got) != 0 {
		t.Errorf("an empty list: %q, %v, %v", got, ok, err)
	}
	many := make([]string, journal.MaxCreated+1)
	for i := range many {
		many[i] = "f"
	}
	if raw, _ := journal.EncodeCreated(many); raw != nil {
		t.Errorf("EncodeCreated of %d paths = %d bytes, want nothing", len(many), len(raw))
	}
	if raw, _ := journal.EncodeCreated(many[1:]); raw == nil {
		t.Errorf("EncodeCreated of %d paths wrote nothing", journal.MaxCreated)
	}
	in.Created = nil
	if got, ok, err := in.CreatedList(); got != nil || ok || err != nil {
		t.Errorf("no member: %q, %v, %v", got, ok, err)
	}
}

// TestPathPermModes: Perm is chmod's octal; a directory keeps its setgid
// and sticky bits, a file never gets special bits back; anything but an
// octal number up to 07777 is refused.
func TestPathPermModes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		perm string
		dir  bool
		want os.FileMode
	}{
		{"0600", false, 0o600},
		{"0755", false, 0o755},
		{"0000", false, 0},
		{"4755", false, 0o755}, // setuid is never given back
		{"2750", true, 0o750 | os.ModeSetgid},
		{"1777", true, 0o777 | os.ModeSticky},
		{"0700", true, 0o700},
	} {
		got, ok := journal.PathPerm{Perm: c.perm, Dir: c.dir}.FileMode()
		if !ok || got != c.want {
			t.Errorf("FileMode(%q, dir %v) = %v, %v; want %v", c.perm, c.dir, got, ok, c.want)
		}
		if c.perm != "4755" {
			if back := journal.OctalPerm(got, c.dir); back != c.perm {
				t.Errorf("OctalPerm(%v, %v) = %q, want %q", got, c.dir, back, c.perm)
			}
		}
	}
	for _, perm := range []string{"", "rw", "0800", "010000", "-1"} {
		if _, ok := (journal.PathPerm{Perm: perm}).FileMode(); ok {
			t.Errorf("FileMode(%q) accepted", perm)
		}
	}
}
