package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/plumbing"
)

// ClaudeForkTimeout bounds a Claude Code rewind: one `claude -p` that
// copies the conversation and makes no model call. Claude Code 2.1.332
// does it in one to two seconds.
const ClaudeForkTimeout = 60 * time.Second

// ClaudeEnv names the variable that holds the claude program a rollback
// runs (default: claude on PATH): Claude Code's local install is often a
// shell alias, which a program cannot see.
const ClaudeEnv = "GIT_VENOM_CLAUDE"

// ClaudeForkTitle is the local command a Claude Code rewind runs in the
// copy: /rename, so the copy shows its origin in Claude Code's /resume
// picker and prompt box, and Claude Code asks no model (issue 14: a slash
// command it does not know is sent to the model as a prompt; /rename with
// a title is answered locally). The model reads it, with Claude Code's
// caveat that it was run directly and was not a request, as one more
// message after the kept turn.
func ClaudeForkTitle(through string) string {
	if through == "" {
		return "/rename venom: rewound"
	}
	return "/rename venom: rewound to after turn " + through
}

// ClaudeFork is RFC 8's claude-code rewind, made by the rollback itself
// (RFC 7.4 step 3) so that what it prints works as printed, at a
// terminal and in a script: Claude Code honours --resume-session-at in
// print mode only (its own help says so), so an interactive
// `claude --resume=S --resume-session-at=U --fork-session` keeps every
// dropped turn. It runs, in dir,
//
//	claude -p --resume=<session> --resume-session-at=<at> --fork-session
//	  --session-id=<newSession> --output-format=json
//	  --settings={"disableAllHooks":true} "/rename venom: rewound to after turn <through>"
//
// which writes the copy newSession: the conversation of session through
// its entry at (uuids kept), plus the /rename entries; the source is not
// changed, and no request reaches the model. The hooks are off for this
// run (it is the toolkit's, not the agent's: no turn, no SessionStart).
// `claude --resume=<newSession>` then continues the copy at a terminal,
// `claude -p --resume=<newSession> <prompt>` in a script.
//
// The program is $GIT_VENOM_CLAUDE, else claude on PATH, with the
// environment minus the variables that mark a process Claude Code started
// (CLAUDECODE, CLAUDE_CODE_CHILD_SESSION, CLAUDE_CODE_SESSION_ID: a nested
// session is kept out of --resume). It is bounded by timeout
// (ClaudeForkTimeout when 0): past it, it is killed with what it started,
// and the error is timeout.harness_request. An unknown session is
// not_found.harness_session; a missing program, any other failure, or an
// answer that is not the copy's is conflict.harness_fork_refused, with
// Claude Code's own message.
func ClaudeFork(ctx context.Context, dir, session, at, newSession, through string, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = ClaudeForkTimeout
	}
	prog := os.Getenv(ClaudeEnv)
	if prog == "" {
		prog = "claude"
	}
	data := map[string]any{"harness": claudeCode.Name, "session": session, "at": at}
	refused := func(format string, args ...any) error {
		return rfcerr.New("conflict.harness_fork_refused", data, "claude did not copy session %s through %s: %s",
			session, at, fmt.Sprintf(format, args...)).
			WithHint("--restore files restores the files alone and tells the agent")
	}
	if _, err := exec.LookPath(prog); err != nil {
		return refused("%s is not on PATH (a Claude Code rewind runs it; %s names another)", prog, ClaudeEnv)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, "-p", "--resume="+session, "--resume-session-at="+at, "--fork-session",
		"--session-id="+newSession, "--output-format=json", `--settings={"disableAllHooks":true}`, ClaudeForkTitle(through))
	cmd.Dir = dir
	cmd.Env = claudeForkEnv(os.Environ())
	plumbing.Bound(cmd)
	var out bytes.Buffer
	var stderr tailBuffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	// Started as git is (plumbing.Start): on Linux it dies with venom,
	// so a killed rollback leaves no fork running.
	err := plumbing.Start(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	if ctx.Err() == context.DeadlineExceeded {
		return rfcerr.Wrap("timeout.harness_request", ctx.Err(), data,
			"claude did not copy session %s within %s", session, timeout).
			WithHint("--restore files restores the files alone and tells the agent")
	}
	said := stderr.last()
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return refused("running %s: %v", prog, err)
		}
		if strings.Contains(said, "No conversation found") {
			return rfcerr.New("not_found.harness_session", data, "Claude Code has no session %s (it said: %s)", session, said).
				WithHint("run the rollback where the session was started, as the same user (its transcript is under ~/.claude/projects); --restore files restores the files alone")
		}
		if said == "" {
			said = strings.TrimSpace(out.String())
		}
		return refused("exit %d: %s", ee.ExitCode(), said)
	}
	var res struct {
		SessionID string `json:"session_id"`
		IsError   bool   `json:"is_error"`
		Result    string `json:"result"`
	}
	if json.Unmarshal(bytes.TrimSpace(out.Bytes()), &res) != nil {
		return refused("its answer is not JSON: %.200s", out.String())
	}
	if res.IsError || res.SessionID != newSession {
		return refused("its answer names session %q (want %s), is_error %v: %.200s", res.SessionID, newSession, res.IsError, res.Result)
	}
	return nil
}

// claudeForkEnv is env without the variables Claude Code sets in the
// processes it starts.
func claudeForkEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "CLAUDECODE", "CLAUDE_CODE_CHILD_SESSION", "CLAUDE_CODE_SESSION_ID":
			continue
		}
		out = append(out, kv)
	}
	return out
}
