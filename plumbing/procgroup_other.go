//go:build !unix

package plumbing

import (
	"os/exec"
	"time"
)

// bound makes cmd end when its context does; without process groups, the
// children git started may outlive it, and WaitDelay stops waiting for
// their pipes.
func bound(cmd *exec.Cmd) { cmd.WaitDelay = 2 * time.Second }

// Bound is bound for a child that is not git (see procgroup_unix.go).
func Bound(cmd *exec.Cmd) { bound(cmd) }

// termOnParentDeath does nothing (procgroup_linux.go).
func termOnParentDeath(*exec.Cmd) {}

// run runs cmd.
func run(cmd *exec.Cmd) error { return cmd.Run() }

// Start starts a child that is not git and was given Bound.
func Start(cmd *exec.Cmd) error { return cmd.Start() }

// DieWithParent does nothing where there are no signals between
// processes: a command whose parent dies runs to its end.
func DieWithParent() {}

// ParentLeadsGroup is false where there are no process groups.
func ParentLeadsGroup() bool { return false }
