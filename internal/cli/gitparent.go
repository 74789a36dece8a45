package cli

import (
	"os"

	"github.com/venom-org/git-venom/plumbing"
)

// Run as `git venom-rollback` at a terminal, the process a person sees
// and kills is git: its dispatcher starts git-venom-rollback as a child,
// exports GIT_EXEC_PATH to it, and waits for it. A Ctrl-C, SIGTERM or
// hang-up reaches the child as well (git passes each on and waits for
// the child to end), but a SIGKILL cannot be passed on: killed, git left
// the rollback running, an orphan that went on writing the tree for as
// long as its plan took, and held the tree's locks meanwhile
// (git-venom-rollback(1), INTERRUPTED OR KILLED). So a command whose
// parent is git leading the job a shell started (GIT_EXEC_PATH set, and
// the parent leads the process group: plumbing.ParentLeadsGroup) dies
// with it, as a killed one does (plumbing.DieWithParent), and the next
// plan or rollback closes what it left. A command a hook, an alias's
// shell or a script started has another parent, whose normal end must
// not kill it (a hook that starts a checkpoint in the background and
// returns). Set in init: the parent-death signal belongs to the thread
// that asks for it, and package initialization runs on the main thread,
// which lives as long as the process.
func init() {
	if os.Getenv("GIT_EXEC_PATH") != "" && plumbing.ParentLeadsGroup() {
		plumbing.DieWithParent()
	}
}
