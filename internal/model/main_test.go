package model_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/internal/gittest"
)

// binDir holds the five git-venom-* binaries, built once by TestMain, so a
// few steps can drive them as users do (`git venom-plan`).
var binDir string

func TestMain(m *testing.M) {
	gittest.Setup()
	// An agent's harness sets these in its tool subprocesses; a test run
	// started from one must not make every spawned rollback an agent's
	// (RFC 11.4).
	for _, k := range []string{"CLAUDE_CODE_CHILD_SESSION", "CODEX_THREAD_ID", "GEMINI_CLI", "CURSOR_AGENT",
		"CLAUDE_CODE_SESSION_ID", "GEMINI_SESSION_ID", "GIT_VENOM_CALLER", "GIT_VENOM_AGENT"} {
		os.Unsetenv(k)
	}
	dir, err := os.MkdirTemp("", "venom-model-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "github.com/venom-org/git-venom/cmd/...")
	cmd.Env = os.Environ()
	// From the module, so that a test binary built with `go test -c` and
	// run elsewhere (scripts/fuzz-long.sh) builds the same code.
	if _, file, _, ok := runtime.Caller(0); ok {
		cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// binEnv is the environment of a spawned git-venom process: the clean test
// environment with the built binaries first on PATH.
func binEnv(extra ...string) []string {
	env := gittest.Env("PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"))
	return append(env, extra...)
}

// cliResult is one run of `git venom-<verb> --json`: the exit status, the
// JSON on stdout, and the error object when it printed one.
type cliResult struct {
	Exit   int
	Stdout []byte
	Stderr string
	Err    *struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	}
}

// runVenom runs `git venom-<verb> args... --json` in dir through git, as a
// user would, with stdin.
func runVenom(dir string, stdin []byte, env []string, verb string, args ...string) (*cliResult, error) {
	cmd := exec.Command("git", append([]string{"venom-" + verb}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(binEnv(), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := &cliResult{Stdout: out.Bytes(), Stderr: errb.String()}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			return nil, err
		}
		res.Exit = ee.ExitCode()
	}
	if bytes.HasPrefix(bytes.TrimSpace(res.Stdout), []byte(`{"error"`)) {
		var e struct {
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(res.Stdout, &e) == nil {
			res.Err = new(struct {
				Code    string         `json:"code"`
				Message string         `json:"message"`
				Data    map[string]any `json:"data"`
			})
			if err := json.Unmarshal(e.Error, res.Err); err != nil {
				return nil, fmt.Errorf("bad error object %s: %w", res.Stdout, err)
			}
		}
	}
	return res, nil
}

// exitOf is RFC 11.3's exit status for an error code.
func exitOf(code string) int {
	class, _, _ := strings.Cut(code, ".")
	switch class {
	case "failed":
		return 1
	case "invalid_params":
		return 2
	case "not_found":
		return 3
	case "denied":
		return 4
	case "conflict":
		return 5
	case "timeout":
		return 7
	case "unsupported":
		return 10
	}
	return -1
}
