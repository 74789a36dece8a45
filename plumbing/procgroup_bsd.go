//go:build unix && !linux

package plumbing

import (
	"os/exec"
	"syscall"
)

// sysProcAttr puts git in a process group of its own (bound). These
// systems (macOS, the BSDs) have no parent-death signal: a git child
// outlives a venom killed with SIGKILL, and finishes what it was given.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// startChild starts cmd.
func startChild(cmd *exec.Cmd) error { return cmd.Start() }
