package rollback

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
)

// TestDropDirKeepsWhatChangedSinceTheRescueJudgedIt: a directory the
// rollback moved whole into its backup is emptied by name after the
// rescue, and a planned file in it is unlinked only while it is as the
// rescue judged it: a save into it since (a program that holds it open,
// writing as the rescue stores what it found) keeps it, and so the
// directory (dropDir says false). A file the rescue never judged stays
// too. Before, every planned file was unlinked.
func TestDropDirKeepsWhatChangedSinceTheRescueJudgedIt(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	x, y, z := write("x", "x\n"), write("sub/y", "y\n"), write("z", "z\n")
	ap := &applier{judged: checkpoint.Seen{}}
	ap.judged.Look(x)
	ap.judged.Look(y)
	// z is planned but was never judged.
	f, err := os.OpenFile(y, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("saved after the rescue judged it\n")
	f.Close()
	md := movedDir{rel: "d", file: dir, planned: map[string]bool{"d/x": true, "d/sub/y": true, "d/z": true}}
	if ap.dropDir(md) {
		t.Errorf("dropDir says the directory is gone, with a save in it")
	}
	if _, err := os.Lstat(x); err == nil {
		t.Errorf("x, judged and unchanged, is still there")
	}
	if b, err := os.ReadFile(y); err != nil || string(b) != "y\nsaved after the rescue judged it\n" {
		t.Errorf("the save into sub/y: %q, %v; want it kept", b, err)
	}
	if b, err := os.ReadFile(z); err != nil || string(b) != "z\n" {
		t.Errorf("z, never judged: %q, %v; want it kept", b, err)
	}
}
