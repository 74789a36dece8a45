//go:build e2e

// Package e2e holds the real-client tests of `make e2e` (README.md here):
// Claude Code, Codex and Gemini CLI, unmodified, against the scripted model
// server of package mockllm, with the git-venom binaries under test
// (VENOM_BIN) as their hooks. The framework is package e2etest.
package e2e

import (
	"os"
	"testing"

	"github.com/venom-org/git-venom/e2e/e2etest"
)

// TestMain runs the tests, or, when a client starts this binary as
// git-venom-hook (the symlink e2etest.New puts on its PATH), the hook
// recorder.
func TestMain(m *testing.M) {
	if e2etest.IsHookRecorder() {
		os.Exit(e2etest.HookRecorderMain())
	}
	os.Exit(m.Run())
}
