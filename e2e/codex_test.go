//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/venom-org/git-venom/e2e/e2etest"
	"github.com/venom-org/git-venom/harness"
)

// TestCodexTurn: one real `codex exec` turn with the hooks installed and
// trusted for the run: the hooks fire, exit 0 and print nothing, and the
// turn is recorded under the thread's agent with its ids (../shared/e2e
// checks install.codex, codex.turn1.runs, hooks.fire,
// hooks.exit0_and_silent, agent.id_and_checkpoints).
func TestCodexTurn(t *testing.T) {
	t.Parallel()
	e := e2etest.New(t, "codex")
	c := e.Codex()
	if r := e.Venom("venom-hook", "install", "codex"); r.Code != 0 {
		t.Fatalf("install.codex: %s", r)
	}
	r := c.Exec("--dangerously-bypass-hook-trust", "--json", "Turn one. [[venom-e2e: write made-by-patch.txt hello ;; say Turn one done.]]")
	T := r.Thread()
	if r.Code != 0 || r.LastMessage() != "Turn one done." || T == "" {
		t.Fatalf("codex.turn1.runs: %s; thread %q, last message %q", r, T, r.LastMessage())
	}
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"} {
		if len(e.HookRuns(ev)) == 0 {
			t.Errorf("hooks.fire: no %s run:\n%s", ev, e.HooksText())
		}
	}
	for _, h := range e.Hooks() {
		if !h.Finished || h.RC == nil || *h.RC != 0 || h.Stdout != "" {
			t.Errorf("hooks.exit0_and_silent: %s", h.Summary())
		}
	}
	A := harness.AgentID("codex", T)
	list := e.Venom("venom-checkpoint", "list", "--agent", A)
	if !strings.Contains(list.Stdout, "turn_start   t1") || !strings.Contains(list.Stdout, "turn_end     t1") {
		t.Errorf("agent.id_and_checkpoints: %s\n%s", list, list.Stdout)
	}
	if got := e.Records("turn.ended", "agent="+A, "turn=t1", "harness_session="+T); len(got) != 1 {
		t.Errorf("ids: turn.ended of t1 under %s for thread %s:\n%s", A, T, e2etest.LogText(e.Records("turn.ended")))
	}
}
