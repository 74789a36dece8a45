//go:build linux

package plumbing

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// sysProcAttr puts git in a process group of its own (bound) and asks
// the kernel to kill it with SIGKILL when its parent dies
// (PR_SET_PDEATHSIG): once venom is gone, by SIGKILL, a hang-up or a
// harness killing its hook, no git child goes on writing the paths it
// was given (issue 13 item 1). Go's fork sets the signal and kills the
// child at once when the parent died before it was set.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// termOnParentDeath makes SIGTERM cmd's parent-death signal (after bound):
// git's handler for it removes the lock files it holds (tempfile.c) and
// then dies of it, where SIGKILL leaves index.lock or a ref's lock behind
// for every later git command to refuse (Options.GitDirOnly). git arms
// that handler only once its first lock file exists: a signal that comes
// while the file is being created (on return from the open that makes
// it) still leaves it, which a kill of a short-lived child meets at times.
func termOnParentDeath(cmd *exec.Cmd) { cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM }

// The parent-death signal is tied to the OS thread that forked the
// child, not to the process: the kernel sends it when that thread
// exits. Go's runtime ends a thread only when a goroutine locked to it
// (runtime.LockOSThread) returns without unlocking it, and nothing this
// program links does that today; but a dependency could start to, and a
// child forked from such a thread would then be killed while venom still
// runs and waits for it. So every child is started from one goroutine
// locked to its thread for good: spawner never returns, and its thread
// lives as long as the process. Only Start runs there (fork and exec,
// well under a millisecond); the caller waits for the child on its own
// goroutine, so children still run side by side.
var spawner struct {
	once sync.Once
	reqs chan spawnReq
}

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

// startChild starts cmd from the spawner's thread.
func startChild(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnReq)
		go func() {
			runtime.LockOSThread() // never unlocked: see spawner
			for r := range spawner.reqs {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	spawner.reqs <- spawnReq{cmd, done}
	return <-done
}

// DieWithParent asks the kernel to kill this process with SIGKILL when
// its parent dies (PR_SET_PDEATHSIG), as every git child of it is. It
// must be called from a thread that lives as long as the process (the
// setting is the calling thread's, though the signal, when it comes,
// is the whole process's): package initialization runs on the main
// thread, locked to it, and that thread never ends. A parent that died
// before the call is not seen; the window is the process's first
// milliseconds.
func DieWithParent() {
	syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0)
}
