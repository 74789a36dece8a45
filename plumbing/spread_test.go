package plumbing

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/venom-org/git-venom/internal/gittest"
)

// TestTmpDirSpreadsItsDirectories: where the file system keeps inode flags
// and takes FS_TOPDIR_FL (ext2, ext3, ext4 on Linux), venom's scratch
// directory has it once TmpDir made it, so the stage and backup
// directories a rollback makes there are spread over block groups
// (spread_linux.go). Elsewhere the test has nothing to check.
func TestTmpDirSpreadsItsDirectories(t *testing.T) {
	r := gittest.New(t)
	repo, err := Open(t.Context(), r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	d, err := repo.TmpDir()
	if err != nil {
		t.Fatal(err)
	}
	set, ok := topdir(d)
	if !ok {
		t.Skip("the file system says nothing of inode flags here")
	}
	if !set {
		// ext4 takes it; a file system that keeps flags but refuses
		// this one (btrfs, xfs) leaves it unset, which is no failure.
		spreadSubdirs(d)
		if again, _ := topdir(d); again {
			t.Fatal("TmpDir did not mark its directory, which the file system lets mark")
		}
		t.Skip("the file system keeps inode flags but not FS_TOPDIR_FL")
	}
}

// TestTmpDirMarksNoDirectoryThroughASymlink: a venom/tmp that is a
// symbolic link to a directory elsewhere leaves that directory unmarked:
// it is not venom's.
func TestTmpDirMarksNoDirectoryThroughASymlink(t *testing.T) {
	r := gittest.New(t)
	elsewhere := t.TempDir()
	if _, ok := topdir(elsewhere); !ok {
		t.Skip("the file system says nothing of inode flags here")
	}
	if err := os.MkdirAll(filepath.Join(r.Dir, ".git", "venom"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(r.Dir, ".git", "venom", "tmp")); err != nil {
		t.Fatal(err)
	}
	repo, err := Open(t.Context(), r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.TmpDir(); err != nil {
		t.Fatal(err)
	}
	if set, _ := topdir(elsewhere); set {
		t.Error("TmpDir marked the directory its symbolic link names")
	}
}
