package rollback

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSubOfIsRelForWalkedPaths: for every name filepath.WalkDir gives
// below a root (clean, with a trailing separator, or not clean at all),
// subOf answers what filepath.Rel does.
func TestSubOfIsRelForWalkedPaths(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a/b/c.txt", "a/d.txt", "e.txt", "a/bb/c"} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, root := range []string{dir, dir + "/", dir + "/a/../a", filepath.Join(dir, "a")} {
		n := 0
		_ = filepath.WalkDir(root, func(p string, _ os.DirEntry, err error) error {
			if err != nil {
				t.Fatal(err)
			}
			want, _ := filepath.Rel(root, p)
			if got := subOf(root, p); got != want {
				t.Errorf("subOf(%q, %q) = %q, want %q", root, p, got, want)
			}
			n++
			return nil
		})
		if n < 4 {
			t.Errorf("%s: walked %d names", root, n)
		}
	}
}
