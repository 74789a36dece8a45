//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/venom-org/git-venom/e2e/e2etest"
)

// TestClaudeToolCallCheckpoints: Claude Code's PreToolUse of Bash takes a
// mid-turn checkpoint before each command (per-tool-call checkpoints,
// issue 14), labelled with it, a reuse when nothing changed; a Write is
// not a shell tool, so under the default it gets none; --restore files
// goes back to the tree as it was before the second command.
func TestClaudeToolCallCheckpoints(t *testing.T) {
	w := newClaude(t)
	r := w.turn("Commands. [[venom-e2e: bash echo one > made.txt ;; write "+w.Repo+"/w.txt x ;; bash echo two >> made.txt ;; say Commands done.]]", "Commands done.")
	A := agentOf(r.SessionID)
	if n := len(w.HookRuns("PreToolUse")); n != 2 {
		t.Errorf("PreToolUse runs: %d, want 2 (the matcher is Bash|PowerShell):\n%s", n, w.HooksText())
	}
	taken := w.Records("checkpoint.taken", "agent="+A, "reason=manual")
	if len(taken) != 1 || taken[0].S("label") != "before Bash: echo two >> made.txt" || taken[0]["mid_turn"] != true {
		t.Fatalf("tool-call checkpoints:\n%s", e2etest.LogText(w.Records("checkpoint.taken")))
	}
	if reused := w.Records("checkpoint.reused", "agent="+A, "reason=manual"); len(reused) != 1 {
		t.Errorf("the reuse before the first command:\n%s", e2etest.LogText(reused))
	}
	K := taken[0].S("checkpoint")
	var p planJSON
	w.VenomJSON(&p, "venom-plan", "--agent", A, K, "--restore", "files", "--json")
	if rb := w.Venom("venom-rollback", "--agent", A, K, "--restore", "files", "--plan", p.Plan); rb.Code != 0 {
		t.Fatalf("%s\n%s", rb, rb.Stdout)
	}
	if got, _ := w.ReadFile("made.txt"); got != "one\n" || !strings.Contains(mustRead(w.Env, "w.txt"), "x") {
		t.Errorf("after going back to before the second command: made.txt %q", got)
	}
}

func mustRead(e *e2etest.Env, rel string) string {
	s, _ := e.ReadFile(rel)
	return s
}
