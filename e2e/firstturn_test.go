//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/venom-org/git-venom/e2e/e2etest"
	"github.com/venom-org/git-venom/e2e/mockllm"
	"github.com/venom-org/git-venom/harness"
)

const noteFirst = "Note: the files were rolled back to their state before your first turn."

// firstTurn rolls agent back to before its first turn with --restore all
// (the checkpoint of t1's turn.started), as a person would, and checks
// what the rollback says: no copy, start a new session (term, script), the
// old session left behind as agent-old1. It returns the old agent's id.
func firstTurn(t *testing.T, e *e2etest.Env, agent, session, harnessName, term, script string) string {
	t.Helper()
	started := e.Records("turn.started", "agent="+agent, "turn=t1")
	if len(started) != 1 {
		t.Fatalf("turn.started of t1:\n%s", e2etest.LogText(e.Records("turn.started")))
	}
	k := started[0].S("checkpoint")
	var plan struct {
		Plan         string `json:"plan"`
		Conversation struct {
			Rewinds     bool     `json:"rewinds"`
			ThroughTurn *string  `json:"through_turn"`
			Resume      []string `json:"resume"`
		} `json:"conversation"`
	}
	if r := e.VenomJSON(&plan, "venom-plan", "--agent", agent, k, "--json"); r.Code != 0 {
		t.Fatalf("plan: %s", r)
	}
	if c := plan.Conversation; !c.Rewinds || c.ThroughTurn != nil || len(c.Resume) != 0 {
		t.Errorf("the plan's conversation %+v: want a rewind to before the first turn, no resume command", c)
	}
	r := e.Venom("venom-rollback", "--agent", agent, k, "--plan", plan.Plan)
	if r.Code != 0 {
		t.Fatalf("rollback: %s\n%s", r, r.Stdout)
	}
	old := agent + "-old1"
	for _, want := range []string{"start a new session (not a resume of the old one):\n  " + term + "\n  in a script: " + script + "\n",
		"the old session " + session + " (" + harnessName + ") still remembers the dropped turns: close it; resumed, it is told once that the files were rolled back, and its turns are agent " + old + "'s\n"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("the rollback's output lacks %q:\n%s", want, r.Stdout)
		}
	}
	return old
}

// TestCodexFirstTurn (issue 14 item 2, Codex): after --restore all to
// before the first turn, `codex exec resume` of the old thread sends the
// model the note; its turn is the old thread's own agent (../shared/e2e
// check first_turn.resumed_thread_told).
func TestCodexFirstTurn(t *testing.T) {
	t.Parallel()
	e := e2etest.New(t, "codex")
	c := e.Codex()
	if r := e.Venom("venom-hook", "install", "codex"); r.Code != 0 {
		t.Fatalf("install: %s", r)
	}
	r1 := c.Exec("--dangerously-bypass-hook-trust", "--json", "Turn one: create a file. [[venom-e2e: write one.txt one ;; say Turn one done.]]")
	T := r1.Thread()
	if r1.Code != 0 || T == "" {
		t.Fatalf("turn one: %s", r1)
	}
	if r := c.Exec("--dangerously-bypass-hook-trust", "--json", "resume", T, "Turn two. [[venom-e2e: write two.txt two ;; say Turn two done.]]"); r.Code != 0 {
		t.Fatalf("turn two: %s", r)
	}
	A := harness.AgentID("codex", T)
	old := firstTurn(t, e, A, T, "codex", "codex", "codex exec <prompt>")
	if e.Exists("one.txt") || e.Exists("two.txt") {
		t.Errorf("the files of t1 and t2 are still there")
	}
	before := e.Mock.Seq()
	r3 := c.Exec("--dangerously-bypass-hook-trust", "--json", "resume", T, "Turn five. [[venom-e2e: say Turn five done.]]")
	if r3.Code != 0 {
		t.Fatalf("resume: %s", r3)
	}
	cv := mockllm.Text(e.Mock.LastConvo(before, "responses"))
	if !strings.Contains(cv, noteFirst) {
		t.Errorf("first_turn.resumed_thread_told: the resumed thread's request lacks the note:\n%s", cv)
	}
	if got := e.Records("turn.started", "agent="+old, "harness_session="+T); len(got) != 1 {
		t.Errorf("the old thread's turn is not %s's:\n%s", old, e2etest.LogText(e.Records("turn.started")))
	}
}

// TestGeminiFirstTurn (issue 14 item 2, Gemini CLI): the same with
// `gemini --resume`: the note arrives as additionalContext.
func TestGeminiFirstTurn(t *testing.T) {
	t.Parallel()
	e := e2etest.New(t, "gemini")
	g := e.Gemini()
	g.TrustRepo()
	if r := e.Venom("venom-hook", "install", "gemini"); r.Code != 0 {
		t.Fatalf("install: %s", r)
	}
	r1 := g.Print("-p", "Turn one: create a file. [[venom-e2e: write "+e.Repo+"/one.txt one ;; say Turn one done.]]")
	S := r1.SessionID
	if r1.Code != 0 || S == "" {
		t.Fatalf("turn one: %s", r1)
	}
	if r := g.Print("-p", "Turn two. [[venom-e2e: write "+e.Repo+"/two.txt two ;; say Turn two done.]]", "--resume", S); r.Code != 0 {
		t.Fatalf("turn two: %s", r)
	}
	A := harness.AgentID("gemini", S)
	old := firstTurn(t, e, A, S, "gemini", "gemini", "gemini -p <prompt>")
	before := e.Mock.Seq()
	if r := g.Print("-p", "Turn three. [[venom-e2e: say Turn three done.]]", "--resume", S); r.Code != 0 {
		t.Fatalf("resume: %s", r)
	}
	cv := mockllm.Text(e.Mock.LastConvo(before, "gemini"))
	if !strings.Contains(cv, noteFirst) {
		t.Errorf("the resumed session's request lacks the note:\n%s", cv)
	}
	if got := e.Records("turn.started", "agent="+old, "harness_session="+S); len(got) != 1 {
		t.Errorf("the old session's turn is not %s's:\n%s", old, e2etest.LogText(e.Records("turn.started")))
	}
}
