//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package checkpoint

import (
	"os"
	"syscall"
)

// allocated is the disk a file takes: its blocks (st_blocks, 512 bytes
// each), as git's count-objects counts loose objects (on_disk_bytes).
func allocated(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return fi.Size()
}
