//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/venom-org/git-venom/e2e/e2etest"
	"github.com/venom-org/git-venom/harness"
)

// TestGeminiTurn: one real `gemini -p` turn in a trusted folder with the
// hooks installed: the hooks fire, exit 0 and print nothing, and the turn
// is recorded under the session's agent (../shared/e2e checks
// install.gemini, gemini.turn1.runs, hooks.fire, hooks.exit0_and_silent,
// agent.id_and_checkpoints, ids.session).
func TestGeminiTurn(t *testing.T) {
	t.Parallel()
	e := e2etest.New(t, "gemini")
	g := e.Gemini()
	g.TrustRepo()
	if r := e.Venom("venom-hook", "install", "gemini"); r.Code != 0 {
		t.Fatalf("install.gemini: %s", r)
	}
	r := g.Print("-p", "Turn one. [[venom-e2e: write "+e.Repo+"/made-by-write.txt hello ;; say Turn one done.]]")
	S := r.SessionID
	if r.Code != 0 || r.Response != "Turn one done." || S == "" {
		t.Fatalf("gemini.turn1.runs: %s; session %q, response %q", r, S, r.Response)
	}
	for _, ev := range []string{"SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "SessionEnd"} {
		if len(e.HookRuns(ev)) == 0 {
			t.Errorf("hooks.fire: no %s run:\n%s", ev, e.HooksText())
		}
	}
	for _, h := range e.Hooks() {
		if !h.Finished || h.RC == nil || *h.RC != 0 || h.Stdout != "" {
			t.Errorf("hooks.exit0_and_silent: %s", h.Summary())
		}
	}
	A := harness.AgentID("gemini", S)
	list := e.Venom("venom-checkpoint", "list", "--agent", A)
	if !strings.Contains(list.Stdout, "turn_start   t1") || !strings.Contains(list.Stdout, "turn_end     t1") {
		t.Errorf("agent.id_and_checkpoints: %s\n%s", list, list.Stdout)
	}
	if got := e.Records("turn.started", "agent="+A, "turn=t1", "harness=gemini", "harness_session="+S); len(got) != 1 {
		t.Errorf("ids.session: turn.started of t1:\n%s", e2etest.LogText(e.Records("turn.started")))
	}
}
