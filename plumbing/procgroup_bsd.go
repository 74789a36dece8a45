//go:build unix && !linux

package plumbing

import (
	"os"
	"os/exec"
	"syscall"
	"time"
)

// sysProcAttr puts git in a process group of its own (bound). These
// systems (macOS, the BSDs) have no parent-death signal: a git child
// outlives a venom killed with SIGKILL, and finishes what it was given.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// termOnParentDeath does nothing: with no parent-death signal, git
// finishes its write and removes its own lock (Options.GitDirOnly).
func termOnParentDeath(*exec.Cmd) {}

// startChild starts cmd.
func startChild(cmd *exec.Cmd) error { return cmd.Start() }

// DieWithParent kills this process with SIGKILL when its parent dies,
// as PR_SET_PDEATHSIG does on Linux (procgroup_linux.go): there is no
// such signal here, so a goroutine looks at the parent's pid every
// 100 ms, and a process whose parent is gone is reparented, which
// changes it. A parent that died before the call is not seen.
func DieWithParent() {
	parent := os.Getppid()
	go func() {
		for {
			time.Sleep(100 * time.Millisecond)
			if os.Getppid() != parent {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
	}()
}
