//go:build unix

package plumbing

import (
	"os"
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
// grandchild that left the group. Where the system has a parent-death
// signal (Linux), git is also killed when this process dies, by any
// signal, SIGKILL included (procgroup_linux.go): a rollback killed while
// checkout-index writes must not keep writing after it is dead (issue 13
// item 1).
func bound(cmd *exec.Cmd) {
	cmd.SysProcAttr = sysProcAttr()
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

// run starts cmd (startChild) and waits for it: what every git child of
// this package goes through, in place of cmd.Run.
func run(cmd *exec.Cmd) error {
	if err := startChild(cmd); err != nil {
		return err
	}
	return cmd.Wait()
}

// Start starts a child that is not git and was given Bound, as this
// package starts git: on Linux from the spawner's thread, so that its
// parent-death signal is tied to a thread that lives as long as the
// process (procgroup_linux.go).
func Start(cmd *exec.Cmd) error { return startChild(cmd) }

// ParentLeadsGroup reports whether this process's parent leads its
// process group: what a shell with job control makes of the command a
// person types (`git venom-rollback` at a terminal: git leads the job,
// and git-venom-rollback, its child, is in it). A shell that runs the
// command itself (a hook, an alias's `sh -c`, a harness's hook command)
// leads no group, nor does a process a script started.
func ParentLeadsGroup() bool { return syscall.Getpgrp() == os.Getppid() }
