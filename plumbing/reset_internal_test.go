package plumbing

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCopyExclusive: where no hard link can be made, ResetIndex puts the
// new index in place through a copy made as git takes a lock: it refuses
// a dst that exists (another git holds the lock) and leaves it as it
// was; otherwise dst has src's bytes, permission bits and mtime.
func TestCopyExclusive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "reset.index")
	if err := os.WriteFile(src, []byte("DIRC new"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(src, 0o640); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(src, old, old); err != nil {
		t.Fatal(err)
	}
	held := filepath.Join(dir, "held.lock")
	if err := os.WriteFile(held, []byte("theirs"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := copyExclusive(src, held); err == nil || !strings.Contains(err.Error(), "another git process holds") {
		t.Errorf("over a held lock: %v", err)
	}
	if b, _ := os.ReadFile(held); string(b) != "theirs" {
		t.Errorf("the held lock became %q", b)
	}
	dst := filepath.Join(dir, "index.lock")
	if err := copyExclusive(src, dst); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(dst)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "DIRC new" || st.Mode().Perm() != 0o640 || !st.ModTime().Equal(old) {
		t.Errorf("copy: %q, %o, %v; want %q, 640, %v", b, st.Mode().Perm(), st.ModTime(), "DIRC new", old)
	}
}
