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

// TestDropNamedTakesOnlyWhatTheRescueJudged: the first try at a
// directory moved whole goes by the names it was moved with (dropNamed),
// and takes what the walk would: with every planned file as judged, the
// directory is gone; with a save into one since the judging, or a file
// never judged, it stops, keeps them, and the walk (dropMovedDir) keeps
// them too, and so the directory. A directory a person made in it, empty,
// goes with it, as with the walk alone.
func TestDropNamedTakesOnlyWhatTheRescueJudged(t *testing.T) {
	for _, tc := range []string{"clean", "saved", "unjudged", "emptydir"} {
		t.Run(tc, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "0")
			md := movedDir{rel: "d", file: dir, planned: map[string]bool{}}
			ap := &applier{judged: checkpoint.Seen{}}
			for _, f := range []string{"a/x", "a/b/y", "z", "c/w"} {
				p := filepath.Join(dir, filepath.FromSlash(f))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(f+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				md.planned["d/"+f] = true
				md.files, md.at = append(md.files, "d/"+f), append(md.at, p)
				if !(tc == "unjudged" && f == "z") {
					ap.judged.Look(p)
				}
			}
			y := filepath.Join(dir, "a", "b", "y")
			switch tc {
			case "saved":
				f, err := os.OpenFile(y, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString("saved after the rescue judged it\n")
				f.Close()
			case "emptydir":
				if err := os.Mkdir(filepath.Join(dir, "a", "new"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			gone := ap.dropMovedDir(md)
			_, err := os.Lstat(dir)
			switch tc {
			case "clean", "emptydir":
				if !gone || err == nil {
					t.Errorf("gone %v, the directory: %v; want it gone", gone, err)
				}
			case "saved":
				if b, err := os.ReadFile(y); gone || err != nil || string(b) != "a/b/y\nsaved after the rescue judged it\n" {
					t.Errorf("gone %v; the save: %q, %v; want it kept", gone, b, err)
				}
			case "unjudged":
				if b, err := os.ReadFile(filepath.Join(dir, "z")); gone || err != nil || string(b) != "z\n" {
					t.Errorf("gone %v; z, never judged: %q, %v; want it kept", gone, b, err)
				}
			}
			if tc != "clean" && tc != "emptydir" {
				for _, f := range []string{"a/x", "c/w"} {
					if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(f))); err == nil {
						t.Errorf("%s, judged and unchanged, is still there", f)
					}
				}
			}
		})
	}
}
