//go:build !linux && !darwin

package plumbing

import "os"

// statIdentity would return a file's device, inode and ctime (see the
// Linux and macOS versions); on other systems it reports ok false, so the
// index cache is never used there and every capture asks git.
func statIdentity(fi os.FileInfo) (dev, ino uint64, ctimeNs int64, ok bool) {
	return 0, 0, 0, false
}
