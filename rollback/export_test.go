package rollback

import "os"

// SetLookedAt sets the function dirAt calls each time it looks at a
// parent directory on disk (nil: none), for the tests that count the
// rollback's own lstats.
func SetLookedAt(f func(rel string)) { lookedAt = f }

// SetTouching sets the function moveAway ("move") and placeAll ("link")
// call as they begin with a path, the bits' pass before a chown or
// chmod ("chmod"), and moveDir between its checks and its rename
// ("movedir") and after it ("moved") (nil: none), for the tests that
// change the tree between a pass's checks and a move, link or chmod.
func SetTouching(f func(op, rel string)) { touching = f }

// SetDirMoveMin sets how many planned deletions below a directory make
// the rollback try to move it whole (dirMoveMin), and returns the old
// value.
func SetDirMoveMin(n int) int { old := dirMoveMin; dirMoveMin = n; return old }

// SetDirDev sets how wholeDir reads a directory's device (dirDev), and
// returns the old function, for the tests of a mount point below a
// directory the rollback would move whole.
func SetDirDev(f func(fi os.FileInfo) uint64) func(fi os.FileInfo) uint64 {
	old := dirDev
	dirDev = f
	return old
}
