// Package failpoint lets crash tests kill a command at a named step. When
// GIT_VENOM_TEST_FAILPOINT names the step, Hit sends SIGKILL to its own
// process, exactly as a crash or `kill -9` would, so nothing deferred runs.
// The list of steps is the set of Hit calls in the source; a test collects
// them (failpoint_test.go), so a new step cannot be missed.
//
// The name may end in an action, name:action, for tests of what happens
// around a step rather than a crash at it; each fires once a process:
//
//	name:int, name:term, name:hup  the process sends itself SIGINT,
//	                               SIGTERM or SIGHUP, waits until it is
//	                               delivered, and goes on (as a person's
//	                               Ctrl-C there would)
//	name:exec                      runs `sh -c "$GIT_VENOM_TEST_FAILPOINT_EXEC"`
//	                               in the process's directory, waits for
//	                               it, and goes on (something else writes
//	                               at that moment: an editor, git gc)
package failpoint

import (
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Env is the variable that names the step to die at.
const Env = "GIT_VENOM_TEST_FAILPOINT"

// EnvExec is the shell command the exec action runs.
const EnvExec = "GIT_VENOM_TEST_FAILPOINT_EXEC"

var armed, action = parse(os.Getenv(Env))

var once sync.Once

func parse(v string) (name, action string) {
	name, action, _ = strings.Cut(v, ":")
	return name, action
}

// Hit dies with SIGKILL if name is the armed failpoint, or does its
// action, and does nothing otherwise. It costs one string comparison.
func Hit(name string) {
	if armed == "" || armed != name {
		return
	}
	switch action {
	case "", "kill":
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is delivered asynchronously
	case "int":
		once.Do(func() { raise(syscall.SIGINT) })
	case "term":
		once.Do(func() { raise(syscall.SIGTERM) })
	case "hup":
		once.Do(func() { raise(syscall.SIGHUP) })
	case "exec":
		once.Do(func() {
			cmd := exec.Command("sh", "-c", os.Getenv(EnvExec))
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			_ = cmd.Run()
		})
	}
}

// raise sends sig to this process and returns once it was delivered, and
// a moment more, so that whoever waits for it (signal.NotifyContext) has
// acted on it.
func raise(sig syscall.Signal) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sig)
	defer signal.Stop(ch)
	_ = syscall.Kill(os.Getpid(), sig)
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
	}
	time.Sleep(50 * time.Millisecond)
}
