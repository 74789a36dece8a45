package harness

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/venom-org/git-venom/internal/rfcerr"
)

// claudeStandIn writes an executable script named claude in a new
// directory and returns its path.
func claudeStandIn(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

const (
	forkS = "3f9c2a71-5d4e-4b8a-9c1f-2e7d6b5a4c30"
	forkU = "9b7e4c1a-3d2f-4e8b-a6c5-0d1e2f3a4b13"
	forkN = "0aa0b1c2-d3e4-4f56-8789-0a1b2c3d4e5f"
)

// ClaudeFork runs claude's print-mode fork with exactly the kept turn's
// ids and the hooks off, in the tree, without the variables that mark a
// process Claude Code started, and accepts an answer naming the new
// session.
func TestClaudeForkArgv(t *testing.T) {
	log := filepath.Join(t.TempDir(), "argv")
	fake, _ := filepath.Abs("testdata/claude-code/fake-claude")
	dir := t.TempDir()
	t.Setenv(ClaudeEnv, fake)
	t.Setenv("FAKE_CLAUDE_LOG", log)
	t.Setenv("CLAUDECODE", "1")
	t.Setenv("CLAUDE_CODE_CHILD_SESSION", "1")
	t.Setenv("CLAUDE_CODE_SESSION_ID", "some-other-session")
	if err := ClaudeFork(context.Background(), dir, forkS, forkU, forkN, "t1", 0); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{"-p", "--resume=" + forkS, "--resume-session-at=" + forkU, "--fork-session", "--session-id=" + forkN,
		"--output-format=json", `--settings={"disableAllHooks":true}`, "/rename venom: rewound to after turn t1"}, "\n") + "\n"
	if string(got) != want {
		t.Errorf("argv:\n%s\nwant:\n%s", got, want)
	}
	// What the child saw: its directory and its Claude variables.
	env := filepath.Join(t.TempDir(), "env")
	t.Setenv(ClaudeEnv, claudeStandIn(t, `pwd >"`+env+`"; env | grep '^CLAUDE' >>"`+env+`"
for a; do case $a in --session-id=*) s=${a#--session-id=};; esac; done
printf '{"is_error":false,"session_id":"%s"}\n' "$s"
`))
	if err := ClaudeFork(context.Background(), dir, forkS, forkU, forkN, "", 0); err != nil {
		t.Fatal(err)
	}
	seen, _ := os.ReadFile(env)
	if lines := strings.Split(strings.TrimSpace(string(seen)), "\n"); len(lines) != 1 || lines[0] != dir {
		t.Errorf("the child ran in / with %q, want %s and no CLAUDE variable", lines, dir)
	}
}

// Each way the fork can fail is an RFC error, with Claude Code's message
// where it gave one.
func TestClaudeForkErrors(t *testing.T) {
	fake, _ := filepath.Abs("testdata/claude-code/fake-claude")
	for _, c := range []struct {
		name, prog, fail string
		timeout          time.Duration
		code, msg        string
	}{
		{"missing program", filepath.Join(t.TempDir(), "no-claude"), "", 0, "conflict.harness_fork_refused", "is not on PATH"},
		{"unknown session", fake, "no-session", 0, "not_found.harness_session", "No conversation found with session ID: " + forkS},
		{"unknown message", fake, "No message found with message.uuid of: " + forkU, 0, "conflict.harness_fork_refused", "No message found"},
		{"another session", claudeStandIn(t, `echo '{"is_error":false,"session_id":"not-the-copy"}'`+"\n"), "", 0, "conflict.harness_fork_refused", `"not-the-copy"`},
		{"an error answer", claudeStandIn(t, `echo '{"is_error":true,"session_id":"`+forkN+`","result":"Invalid API key"}'`+"\n"), "", 0, "conflict.harness_fork_refused", "Invalid API key"},
		{"not JSON", claudeStandIn(t, "echo hello\n"), "", 0, "conflict.harness_fork_refused", "not JSON"},
		{"hangs", claudeStandIn(t, "sleep 30\n"), "", 300 * time.Millisecond, "timeout.harness_request", "within 300ms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(ClaudeEnv, c.prog)
			t.Setenv("FAKE_CLAUDE_FAIL", c.fail)
			start := time.Now()
			err := ClaudeFork(context.Background(), t.TempDir(), forkS, forkU, forkN, "t1", c.timeout)
			e := rfcerr.As(err)
			if e == nil || e.Code != c.code || !strings.Contains(e.Message, c.msg) {
				t.Fatalf("error %v, want %s saying %q", err, c.code, c.msg)
			}
			if time.Since(start) > 10*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
		})
	}
}
