//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package cli

import "os"

// termColumns says no terminal where the ioctl is not known: the output
// is then as for a pipe (no pager, no colour, no fitting).
func termColumns(f *os.File) (int, bool) { return 0, false }
