//go:build !linux || !(amd64 || arm64)

package plumbing

// spreadSubdirs is a hint that only Linux's ext2, ext3 and ext4 take
// (spread_linux.go); elsewhere it does nothing.
func spreadSubdirs(dir string) {}

// topdir says nothing here (spread_linux.go).
func topdir(dir string) (set, ok bool) { return false, false }
