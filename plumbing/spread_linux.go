//go:build linux && (amd64 || arm64)

package plumbing

import (
	"os"
	"syscall"
	"unsafe"
)

// The inode flags ioctls of linux/fs.h, as the 64-bit architectures number
// them (_IOR('f', 1, long), _IOW('f', 2, long)); the kernel reads and
// writes an int. FS_TOPDIR_FL is chattr(1)'s +T.
const (
	fsIocGetFlags = 0x80086601
	fsIocSetFlags = 0x40086602
	fsTopdirFl    = 0x00020000
)

// spreadSubdirs marks dir, a directory of venom's own, as the top of a
// directory hierarchy (chattr +T, FS_TOPDIR_FL): ext2, ext3 and ext4 then
// place each directory made in it in a block group of their choosing,
// as for a directory at the top of the file system, instead of beside
// dir. A rollback makes its stage and backup directories in venom/tmp
// and removes them as it ends; made beside each other, the next ones
// share the block group of all the inodes just freed there, which ext4
// skips one by one for a minute or more after they were freed
// (recently_deleted, ialloc.c): a rollback of 1,000 files right after
// another spent over a second of CPU in the kernel there (issue 16,
// bench/README.md). Where the file system has no such flag, or refuses
// it, nothing changes: it is a hint, and errors are ignored.
func spreadSubdirs(dir string) {
	// Never through a symbolic link: a venom/tmp that is one names a
	// directory that is not venom's to mark.
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_DIRECTORY, 0)
	if err != nil {
		return
	}
	defer f.Close()
	flags, ok := inodeFlags(f)
	if !ok || flags&fsTopdirFl != 0 {
		return
	}
	flags |= fsTopdirFl
	_, _, _ = syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), fsIocSetFlags, uintptr(unsafe.Pointer(&flags)))
}

// inodeFlags reads f's inode flags (FS_IOC_GETFLAGS); ok is false where
// the file system keeps none.
func inodeFlags(f *os.File) (flags int32, ok bool) {
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), fsIocGetFlags, uintptr(unsafe.Pointer(&flags)))
	return flags, e == 0
}

// topdir reports whether dir has FS_TOPDIR_FL; ok is false where the file
// system says nothing of its flags (for tests).
func topdir(dir string) (set, ok bool) {
	f, err := os.Open(dir)
	if err != nil {
		return false, false
	}
	defer f.Close()
	flags, ok := inodeFlags(f)
	return flags&fsTopdirFl != 0, ok
}
