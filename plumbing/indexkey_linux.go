//go:build linux

package plumbing

import (
	"os"
	"syscall"
)

// statIdentity returns the parts of a file's identity that os.FileInfo
// does not give portably: the device and inode numbers and the status
// change time (ctime) in nanoseconds since the Unix epoch. ok is false
// when fi carries no syscall.Stat_t. Linux names the ctime field Ctim.
func statIdentity(fi os.FileInfo) (dev, ino uint64, ctimeNs int64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, false
	}
	return uint64(st.Dev), st.Ino, st.Ctim.Nano(), true
}
