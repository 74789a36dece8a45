package cli

import (
	"os"

	"github.com/venom-org/git-venom/plumbing"
)

// Run as `git venom-rollback`, the process a person sees and kills is
// git: its dispatcher starts git-venom-rollback as a child, exports
// GIT_EXEC_PATH to it, and waits for it. A Ctrl-C, SIGTERM or hang-up
// reaches the child as well (git passes each on and waits for the child
// to end), but a SIGKILL cannot be passed on: killed, git left the
// rollback running, an orphan that went on writing the tree for as long
// as its plan took, and held the tree's locks meanwhile
// (git-venom-rollback(1), INTERRUPTED OR KILLED: nothing writes to the
// tree once it is gone). So a command that git started dies with that
// git process, as a killed one does (plumbing.DieWithParent), and the
// next command closes what it left. Set in init: the parent-death signal
// belongs to the thread that asks for it, and package initialization
// runs on the main thread, which lives as long as the process.
func init() {
	if os.Getenv("GIT_EXEC_PATH") != "" {
		plumbing.DieWithParent()
	}
}
