// Package failpoint lets crash tests kill a command at a named step. When
// GIT_VENOM_TEST_FAILPOINT names the step, Hit sends SIGKILL to its own
// process, exactly as a crash or `kill -9` would, so nothing deferred runs.
// The list of steps is the set of Hit calls in the source; a test collects
// them (failpoint_test.go), so a new step cannot be missed.
package failpoint

import (
	"os"
	"syscall"
)

// Env is the variable that names the step to die at.
const Env = "GIT_VENOM_TEST_FAILPOINT"

var armed = os.Getenv(Env)

// Hit dies with SIGKILL if name is the armed failpoint, and does nothing
// otherwise. It costs one string comparison.
func Hit(name string) {
	if armed == "" || armed != name {
		return
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is delivered asynchronously
}
