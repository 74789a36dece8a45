package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestRemoveNamedTakesCopiesAndKeepsWhatChanged: a backup directory whose
// files are copies (the backups on another device) goes whole once they
// are judged, a copy being no save; but a file written after the judging
// is never unlinked, and keeps the directory and its manifest.
func TestRemoveNamedTakesCopiesAndKeepsWhatChanged(t *testing.T) {
	for _, late := range []bool{false, true} {
		dir := t.TempDir()
		moved := []Moved{{Path: "a.txt", File: filepath.Join(dir, "0"), Copied: true}, {Path: "b.txt", File: filepath.Join(dir, "1"), Copied: true}}
		for _, m := range moved {
			if err := os.WriteFile(m.File, []byte("S's "+m.Path+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, ManifestFile), []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		saves, sn := (&Tree{}).savesAmong(context.Background(), moved, Seen{})
		if len(saves) != 0 {
			t.Fatalf("copies taken for saves: %v", saves)
		}
		if late {
			// A later mtime and size, as a save through a file held open.
			if err := os.WriteFile(moved[1].File, []byte("S's b.txt\nsaved after the judging\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		gone := RemoveNamed(dir, moved, saves, sn)
		_, err := os.Lstat(dir)
		switch {
		case !late && (!gone || err == nil):
			t.Errorf("a directory of copies, judged: removed %v, still there %v", gone, err == nil)
		case late && gone:
			t.Errorf("the directory went with a file written after the judging")
		case late:
			if b, err := os.ReadFile(moved[1].File); err != nil || string(b) != "S's b.txt\nsaved after the judging\n" {
				t.Errorf("the late save: %q, %v", b, err)
			}
			if _, err := os.Lstat(filepath.Join(dir, ManifestFile)); err != nil {
				t.Errorf("the kept directory lost its manifest: %v", err)
			}
		}
	}
}

// TestForeignInTakesAFileWhereADirectoryWasMoved: a manifest's record of
// a directory moved whole whose name in the backup holds a file (a person
// swapped the directory for it before the rename) gives that file as a
// person's, at the directory's path, as well as what is in a moved
// directory that no record names; a named file is not foreign.
func TestForeignInTakesAFileWhereADirectoryWasMoved(t *testing.T) {
	dir := t.TempDir()
	swapped := filepath.Join(dir, "0")
	if err := os.WriteFile(swapped, []byte("a person's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	whole := filepath.Join(dir, "1")
	if err := os.MkdirAll(filepath.Join(whole, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"planned.txt", "sub/new.txt"} {
		if err := os.WriteFile(filepath.Join(whole, n), []byte(n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	moved := []Moved{
		{Path: "gen", File: swapped, Dir: true},
		{Path: "out/planned.txt", File: filepath.Join(whole, "planned.txt")},
		{Path: "out", File: whole, Dir: true},
	}
	sn := Seen{}
	got := map[string]string{}
	for _, m := range foreignIn(moved, sn) {
		got[m.Path] = m.File
	}
	want := map[string]string{"gen": swapped, "out/sub/new.txt": filepath.Join(whole, "sub", "new.txt")}
	if len(got) != len(want) {
		t.Errorf("foreign %v, want %v", got, want)
	}
	for p, f := range want {
		if got[p] != f {
			t.Errorf("foreign %s is %q, want %q", p, got[p], f)
		}
		if _, ok := sn[f]; !ok {
			t.Errorf("%s was not stamped when found", f)
		}
	}
}
