//go:build unix

package plumbing

import (
	"os/exec"
	"syscall"
	"time"
)

// bound makes cmd end when its context does, with everything it started:
// git runs in a process group of its own, and the context's end kills the
// group, so a clean or smudge filter, or a submodule's git, that git
// started is killed with it. Otherwise such a child keeps git's stdout
// and stderr pipes open and Wait waits for it, whatever the deadline
// (venom.checkpoints.timeout, RFC 3.1). WaitDelay bounds what is left: a
// grandchild that left the group.
func bound(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 2 * time.Second
}

// Bound is bound for a child that is not git: the harness programs a
// rollback starts (the codex app-server of a Codex rewind), which must end
// with everything they started when their deadline passes.
func Bound(cmd *exec.Cmd) { bound(cmd) }
