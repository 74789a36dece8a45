//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/venom-org/git-venom/e2e/e2etest"
	"github.com/venom-org/git-venom/e2e/mockllm"
	"github.com/venom-org/git-venom/harness"
)

// claudeWorld is a repository with git venom-hook installed for Claude
// Code, and the Claude Code to run in it.
type claudeWorld struct {
	*e2etest.Env
	c *e2etest.Claude
}

// newClaude sets up the world and installs the hooks (install.claude-code).
func newClaude(t *testing.T) *claudeWorld {
	t.Helper()
	w := &claudeWorld{Env: e2etest.New(t, "claude")}
	w.c = w.Claude()
	r := w.Venom("venom-hook", "install", "claude-code")
	if r.Code != 0 || !strings.Contains(r.Stdout, "settings.local.json") {
		t.Fatalf("install.claude-code: %s\n%s", r, r.Stdout)
	}
	f, err := os.OpenFile(w.Repo+"/.git/info/exclude", os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(".claude/settings.local.json\n")
	f.Close()
	return w
}

// turn runs one `claude -p` turn and fails the test unless it ran to the
// answer want.
func (w *claudeWorld) turn(prompt, want string, args ...string) e2etest.ClaudeResult {
	w.T.Helper()
	r := w.c.Print(append([]string{"-p", prompt}, args...)...)
	if r.Code != 0 || r.Text != want || r.SessionID == "" {
		w.T.Fatalf("%s\nresult %q (want %q), session %q\nhooks:\n%s", r, r.Text, want, r.SessionID, w.HooksText())
	}
	return r
}

func agentOf(session string) string { return harness.AgentID("claude", session) }

func one(t *testing.T, what string, rs []e2etest.Record) e2etest.Record {
	t.Helper()
	if len(rs) != 1 {
		t.Fatalf("%s: %d records, want 1:\n%s", what, len(rs), e2etest.LogText(rs))
	}
	return rs[0]
}

// TestClaudeTurns: the hooks of two real Claude Code turns, the second a
// --resume: what fires, what venom records (ids, edit records, classes),
// what the agent's own commands see (../shared/e2e checks install,
// claude.turn1.runs, hooks.fire, hooks.exit0_and_silent,
// agent.id_and_checkpoints, ids.session_and_turn, ids.harness_end,
// edit.record_write_only, plan.classes, agent_env.child_session,
// edit.record_edit_tool, turn2.resume_same_agent).
func TestClaudeTurns(t *testing.T) {
	t.Parallel()
	w := newClaude(t)
	envFile := w.Work + "/agent-env.txt"
	r1 := w.turn("Turn one: create two files. [[venom-e2e: write "+w.Repo+"/made-by-write.txt hello ;; bash echo x > made-by-bash.txt; env | grep -E '^(CLAUDE|GIT_VENOM)' | sort > "+envFile+" ;; say Turn one done.]]", "Turn one done.")
	S, A := r1.SessionID, agentOf(r1.SessionID)

	hooksFireSilently(t, w.Env, "SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd")
	t.Run("agent.id_and_checkpoints", func(t *testing.T) {
		r := w.Venom("venom-checkpoint", "list", "--agent", A)
		if r.Code != 0 || !strings.Contains(r.Stdout, "turn_start   t1") || !strings.Contains(r.Stdout, "turn_end     t1") {
			t.Errorf("list of %s: %s\n%s", A, r, r.Stdout)
		}
	})
	ups, _ := w.LastHook("UserPromptSubmit")
	stop, _ := w.LastHook("Stop")
	started := one(t, "turn.started of t1", w.Records("turn.started", "agent="+A, "turn=t1"))
	ended := one(t, "turn.ended of t1", w.Records("turn.ended", "agent="+A, "turn=t1"))
	t.Run("ids.session_and_turn", func(t *testing.T) {
		got := started.S("harness") + " " + started.S("harness_session") + " " + started.S("harness_turn")
		if want := "claude-code " + S + " " + ups.Field("prompt_id"); got != want || ups.Field("prompt_id") == "" {
			t.Errorf("turn.started: %q, want %q", got, want)
		}
	})
	t.Run("ids.harness_end", func(t *testing.T) {
		want := e2etest.LastAssistant(t, stop.Field("transcript_path"))
		if got := ended.S("harness_end"); got == "" || got != want {
			t.Errorf("harness_end %q, transcript's last assistant entry %q", got, want)
		}
	})
	t.Run("edit.record_write_only", func(t *testing.T) {
		if got := editPathsOf(w.Env, A, "t1"); got != "made-by-write.txt" {
			t.Errorf("edit records of t1: %q, want [made-by-write.txt] (the Bash-made file has none)", got)
		}
	})
	t.Run("plan.classes", func(t *testing.T) {
		if got := classesOf(t, w.Env, A, started.S("checkpoint")); got != "made-by-bash.txt=turn made-by-write.txt=agent" {
			t.Errorf("classes of the plan to %s: %q", started.S("checkpoint"), got)
		}
	})
	t.Run("agent_env.child_session", func(t *testing.T) {
		b, _ := os.ReadFile(envFile)
		if !strings.Contains(string(b), "CLAUDE_CODE_CHILD_SESSION=1\n") {
			t.Errorf("the Bash tool's environment lacks CLAUDE_CODE_CHILD_SESSION=1:\n%s", b)
		}
	})

	r2 := w.turn("Turn two. [[venom-e2e: edit "+w.Repo+"/made-by-write.txt hello goodbye ;; write "+w.Repo+"/turn2.txt two ;; say Turn two done.]]", "Turn two done.", "--resume", S)
	t.Run("edit.record_edit_tool", func(t *testing.T) {
		got := editPathsOf(w.Env, A, "t2")
		txt, _ := w.ReadFile("made-by-write.txt")
		if got != "made-by-write.txt,turn2.txt" || !strings.Contains(txt, "goodbye") {
			t.Errorf("edit records of t2 (Edit + Write): %q; made-by-write.txt: %q", got, txt)
		}
	})
	t.Run("turn2.resume_same_agent", func(t *testing.T) {
		if r2.SessionID != S {
			t.Errorf("--resume %s ran as session %s", S, r2.SessionID)
		}
		if len(w.Records("turn.ended", "agent="+A, "turn=t2", "harness_session="+S)) != 1 {
			t.Errorf("no turn.ended of t2 under %s:\n%s", A, e2etest.LogText(w.Records("turn.ended")))
		}
	})
}

// convo is the conversation of the model's last scripted request after
// request since, as text.
func (w *claudeWorld) convo(since int) string {
	return mockllm.Text(w.Mock.LastConvo(since, "anthropic"))
}

// countIn is how many lines of a conversation text hold s.
func countIn(convo, s string) int {
	n := 0
	for _, line := range strings.Split(convo, "\n") {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestClaudeStopFailure (issue 14 item 3): a turn that ends in an API error.
// In -p mode Claude Code fires StopFailure and exits without waiting for it
// ("fire-and-forget"): the hook is killed, most often before it reads its
// input. SessionEnd, which Claude Code waits for, then takes the turn_end
// and resolves harness_end from the transcript: the turn's last assistant
// entry (the API error's) after its own prompt. ../shared/e2e's
// stopfailure.turn_end_with_id; its stopfailure.hook_runs_to_end asks
// Claude Code not to kill the hook, which venom cannot change (the
// StopFailure run is recorded here as it was).
func TestClaudeStopFailure(t *testing.T) {
	t.Parallel()
	w := newClaude(t)
	// A StopFailure hook slower than Claude Code waits for: a capture of a
	// big tree, say. (A fast one sometimes finishes before it is killed.)
	w.c.Env = append(w.c.Env, "VENOM_E2E_HOOK_DELAY=StopFailure=8s")
	r := w.c.Print("-p", "A failing turn. [[venom-e2e: fail 400]]")
	S := r.SessionID
	if S == "" {
		t.Fatalf("no session: %s", r)
	}
	A := agentOf(S)
	t.Logf("claude -p exit %d; hook runs:\n%s", r.Code, w.HooksText())
	for _, h := range w.HookRuns("StopFailure") {
		t.Logf("StopFailure run: %s (finished %v)", h.Summary(), h.Finished)
	}
	// SessionEnd's hook may still be finishing when claude has exited.
	e2etest.Eventually(60*time.Second, func() bool {
		h, ok := w.LastHook("SessionEnd")
		return ok && h.Finished
	})
	t.Run("stopfailure.turn_end_with_id", func(t *testing.T) {
		ended := w.Records("turn.ended", "agent="+A, "turn=t1")
		if len(ended) != 1 {
			t.Fatalf("turn.ended of t1: %d records:\n%s", len(ended), e2etest.LogText(w.Records("", "agent="+A)))
		}
		if f := w.Records("checkpoint.failed", "agent="+A); len(f) > 0 {
			t.Errorf("checkpoint.failed:\n%s", e2etest.LogText(f))
		}
		if ended[0].S("checkpoint") == "" {
			t.Errorf("turn.ended without a checkpoint: %s", mustJSON(ended[0]))
		}
		want := ""
		for _, te := range e2etest.TranscriptEntries(t, w.c.Transcript(S)) {
			if te.Type == "assistant" && !te.IsSidechain {
				want = te.UUID
			}
		}
		if got := ended[0].S("harness_end"); got == "" || got != want {
			t.Errorf("harness_end %q, want the transcript's last assistant entry %q: %s", got, want, mustJSON(ended[0]))
		}
	})
}

// rollbackJSON is the part of a plan's or a rollback's JSON the tests read.
type rollbackJSON struct {
	Plan         string `json:"plan"`
	Conversation struct {
		Rewinds        bool     `json:"rewinds"`
		ThroughTurn    *string  `json:"through_turn"`
		Drops          []string `json:"drops"`
		ForkSource     string   `json:"fork_source"`
		ForkAt         string   `json:"fork_at"`
		HarnessSession string   `json:"harness_session"`
		Resume         []string `json:"resume"`
		ResumeExec     []string `json:"resume_exec"`
		Old            []struct {
			Harness, Session, Agent string
		} `json:"old_sessions"`
	} `json:"conversation"`
	Note string `json:"note"`
}

// rollback plans agent's rollback to checkpoint k with args (--restore
// ...), then makes it with the plan, as a person would; it returns the
// plan and the real call's output, and fails the test unless both succeed.
func (w *claudeWorld) rollback(agent, k string, args ...string) (plan rollbackJSON, text string) {
	w.T.Helper()
	if r := w.VenomJSON(&plan, append([]string{"venom-plan", "--agent", agent, k, "--json"}, args...)...); r.Code != 0 {
		w.T.Fatalf("plan %s: %s\n%s", k, r, r.Stdout)
	}
	r := w.Venom(append([]string{"venom-rollback", "--agent", agent, k, "--plan", plan.Plan}, args...)...)
	if r.Code != 0 {
		w.T.Fatalf("rollback %s: %s\n%s", k, r, r.Stdout)
	}
	return plan, r.Stdout
}

// resumeLines are the two lines a rollback prints after "to resume the
// conversation as it was after tN:": the command for a terminal, and the
// one for a script (without "in a script: " and " <prompt>").
func resumeLines(t *testing.T, text string) (terminal, script string) {
	t.Helper()
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "to resume the conversation as it was after ") && i+2 < len(lines) {
			terminal = strings.TrimSpace(lines[i+1])
			script = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(lines[i+2]), "in a script: "), " <prompt>")
			return
		}
	}
	t.Fatalf("the rollback printed no resume command:\n%s", text)
	return
}

// TestClaudeRewind (issue 14 item 1, in a script): two turns, then
// --restore all back to the end of the first. The rollback copies the
// conversation itself (claude -p --fork-session through t1's last
// assistant entry, no model call), and the printed script command, run as
// printed with a prompt, continues a conversation that holds turn 1 and
// not turn 2; the copy's hooks are the same agent (../shared/e2e checks
// rewind.command_printed, rewind.rollback_ok, rewind.print_mode_accepted,
// rewind.print_mode_history, fork.session_start, fork.keeps_agent).
func TestClaudeRewind(t *testing.T) {
	t.Parallel()
	w := newClaude(t)
	r1 := w.turn("Turn one: create a file. [[venom-e2e: write "+w.Repo+"/made-by-write.txt hello ;; say Turn one done.]]", "Turn one done.")
	S, A := r1.SessionID, agentOf(r1.SessionID)
	w.turn("Turn two, to be dropped. [[venom-e2e: edit "+w.Repo+"/made-by-write.txt hello goodbye ;; write "+w.Repo+"/turn2.txt two ;; say Turn two done.]]", "Turn two done.", "--resume", S)
	ended := one(t, "turn.ended of t1", w.Records("turn.ended", "agent="+A, "turn=t1"))
	k := ended.S("checkpoint")

	before := w.Mock.Seq()
	plan, text := w.rollback(A, k)
	N := plan.Conversation.HarnessSession
	t.Run("rewind.command_printed", func(t *testing.T) {
		c := plan.Conversation
		if c.ForkSource != S || c.ForkAt != ended.S("harness_end") || N == "" || N == S {
			t.Errorf("the plan copies %s through %s into %s; want %s through t1's harness_end %s", c.ForkSource, c.ForkAt, N, S, ended.S("harness_end"))
		}
		term, script := resumeLines(t, text)
		if term != "claude --resume="+N || script != "claude -p --resume="+N {
			t.Errorf("printed %q and %q, want claude --resume=%s and claude -p --resume=%s\n%s", term, script, N, N, text)
		}
		if got := e2etest.ShellQuote(c.Resume); got != term {
			t.Errorf("conversation.resume %q is not what was printed, %q", got, term)
		}
	})
	t.Run("rewind.no_model_call", func(t *testing.T) {
		if reqs := w.Mock.Requests(before); len(reqs) != 0 {
			t.Errorf("the rollback's fork sent %d request(s) to the model: first %s %s", len(reqs), reqs[0].API, reqs[0].Path)
		}
		if tr := w.c.Transcript(N); tr == "" {
			t.Errorf("no transcript of the copy %s in %s", N, w.Home)
		}
		for _, h := range w.Hooks() {
			if h.Field("session_id") == N {
				t.Errorf("a hook ran for the copy during the rollback: %s", h.Summary())
			}
		}
	})
	t.Run("rewind.rollback_ok", func(t *testing.T) {
		if w.Exists("turn2.txt") {
			t.Error("turn2.txt is still there")
		}
		if s, _ := w.ReadFile("made-by-write.txt"); s != "hello\n" {
			t.Errorf("made-by-write.txt: %q", s)
		}
	})

	// The printed script command, word for word, with the prompt after it.
	_, script := resumeLines(t, text)
	argv := strings.Fields(script)
	if len(argv) == 0 || argv[0] != "claude" {
		t.Fatalf("the script command %q does not run claude", script)
	}
	before = w.Mock.Seq()
	r3 := w.c.Print(append(argv[1:], "Turn three, in the copy. [[venom-e2e: write "+w.Repo+"/turn3.txt three ;; say Turn three done.]]")...)
	t.Run("rewind.print_mode_accepted", func(t *testing.T) {
		if r3.Code != 0 || r3.Text != "Turn three done." || r3.SessionID != N {
			t.Errorf("%s: session %s (want %s), result %q", r3, r3.SessionID, N, r3.Text)
		}
	})
	cv := w.convo(before)
	t.Run("rewind.print_mode_history", func(t *testing.T) {
		if countIn(cv, "Turn one: create a file.") != 1 || countIn(cv, "Turn two, to be dropped.") != 0 || countIn(cv, "TOOL_USE Edit") != 0 {
			t.Errorf("the copy's request should hold turn one and nothing of turn two:\n%s", cv)
		}
		if countIn(cv, "Turn three, in the copy.") != 1 {
			t.Errorf("the copy's request lacks the new prompt:\n%s", cv)
		}
	})
	t.Run("fork.session_start", func(t *testing.T) {
		h, _ := w.LastHook("SessionStart")
		if h.Field("session_id") != N || h.Field("source") != "resume" {
			t.Errorf("the copy's SessionStart: session %s source %q; want %s, resume", h.Field("session_id"), h.Field("source"), N)
		}
	})
	t.Run("fork.keeps_agent", func(t *testing.T) {
		started := w.Records("turn.started", "agent="+A, "harness_session="+N)
		if len(started) != 1 || started[0].S("turn") != "t3" {
			t.Errorf("the copy's turn under %s:\n%s", A, e2etest.LogText(w.Records("turn.started")))
		}
		if len(w.Records("agent.binding", "harness_session="+N, "confirmed=true")) != 1 {
			t.Errorf("the binding of %s is not confirmed once:\n%s", N, e2etest.LogText(w.Records("agent.binding")))
		}
		if n := len(w.Records("agent.registered")); n != 1 {
			t.Errorf("%d agents registered, want 1:\n%s", n, e2etest.LogText(w.Records("agent.registered")))
		}
	})
}

// TestClaudeRewindTerminal (issue 14 item 1, at a terminal): the printed
// command typed as printed into a shell under tmux starts Claude Code on
// the copy, and the model's next request holds the kept turn and not the
// dropped one (../shared/e2e checks rewind.interactive_accepted,
// rewind.interactive_history, fork.interactive_keeps_agent).
func TestClaudeRewindTerminal(t *testing.T) {
	t.Parallel()
	e2etest.NeedTmux(t)
	w := newClaude(t)
	r1 := w.turn("Turn one, kept. [[venom-e2e: write "+w.Repo+"/one.txt one ;; say Turn one done.]]", "Turn one done.")
	S, A := r1.SessionID, agentOf(r1.SessionID)
	w.turn("Turn two, to be dropped. [[venom-e2e: write "+w.Repo+"/two.txt two ;; say Turn two done.]]", "Turn two done.", "--resume", S)
	k := one(t, "turn.ended of t1", w.Records("turn.ended", "agent="+A, "turn=t1")).S("checkpoint")
	plan, text := w.rollback(A, k)
	N := plan.Conversation.HarnessSession
	terminal, _ := resumeLines(t, text)

	w.c.AcceptDialogs()
	term := w.NewTerminal(w.c.Env)
	before := w.Mock.Seq()
	term.Type(terminal, true)
	if !term.WaitFor("Turn one, kept.", 90*time.Second) {
		t.Fatalf("claude did not show the copy's history within 90 s; screen:\n%s", term.SaveScreen("resume"))
	}
	// The prompt box is ready once the history is drawn; type the next turn.
	prompt := "Turn three, at the terminal. [[venom-e2e: say Turn three done.]]"
	if !term.Submit(e2etest.ClaudeComposer, prompt, func() bool { return w.Mock.PromptConvo(before, "anthropic", prompt) != nil }, 90*time.Second) {
		t.Fatalf("the model got no request for %q within 90 s; screen:\n%s", prompt, term.SaveScreen("turn3"))
	}
	ok := e2etest.Eventually(90*time.Second, func() bool {
		h, found := w.LastHook("Stop")
		return found && h.Finished && h.Field("session_id") == N
	})
	screen := term.SaveScreen("turn3")
	if !ok {
		t.Fatalf("no Stop of the copy %s within 90 s; screen:\n%s\nhooks:\n%s", N, screen, w.HooksText())
	}
	cv := w.convo(before)
	t.Run("rewind.interactive_accepted", func(t *testing.T) {
		if countIn(cv, "Turn three, at the terminal.") != 1 || !strings.Contains(screen, "Turn three done.") {
			t.Errorf("%q at a terminal: the model got %d copies of the prompt; screen:\n%s", terminal, countIn(cv, "Turn three, at the terminal."), screen)
		}
	})
	t.Run("rewind.interactive_history", func(t *testing.T) {
		if countIn(cv, "Turn one, kept.") != 1 || countIn(cv, "Turn two, to be dropped.") != 0 {
			t.Errorf("the copy's request at a terminal should hold turn one and not turn two:\n%s", cv)
		}
	})
	t.Run("fork.interactive_keeps_agent", func(t *testing.T) {
		started := w.Records("turn.started", "agent="+A, "harness_session="+N)
		if len(started) != 1 || started[0].S("turn") != "t3" {
			t.Errorf("the copy's turn under %s:\n%s", A, e2etest.LogText(w.Records("turn.started")))
		}
	})
	term.Type("/exit", true)
}

// noteOf is the pending note text logged for agent, "" when none.
func (w *claudeWorld) noteOf(agent string) string {
	ns := w.Records("note.pending", "agent="+agent)
	if len(ns) == 0 {
		return ""
	}
	return ns[len(ns)-1].S("text")
}

// TestClaudeRestoreFiles: --restore files leaves the conversation, and the
// next prompt gets the note once, as the model sees it (../shared/e2e
// checks restore_files.rollback, note.hook_prints, note.model_receives,
// note.once).
func TestClaudeRestoreFiles(t *testing.T) {
	t.Parallel()
	w := newClaude(t)
	r1 := w.turn("Turn one. [[venom-e2e: write "+w.Repo+"/one.txt one ;; say Turn one done.]]", "Turn one done.")
	S, A := r1.SessionID, agentOf(r1.SessionID)
	w.turn("Turn two. [[venom-e2e: write "+w.Repo+"/two.txt two ;; say Turn two done.]]", "Turn two done.", "--resume", S)
	k := one(t, "turn.started of t2", w.Records("turn.started", "agent="+A, "turn=t2")).S("checkpoint")
	plan, _ := w.rollback(A, k, "--restore", "files")
	note := w.noteOf(A)
	t.Run("restore_files.rollback", func(t *testing.T) {
		if w.Exists("two.txt") || !w.Exists("one.txt") || note == "" || plan.Conversation.Rewinds {
			t.Errorf("two.txt there: %v, one.txt there: %v, note %q, rewinds %v", w.Exists("two.txt"), w.Exists("one.txt"), note, plan.Conversation.Rewinds)
		}
	})
	before := w.Mock.Seq()
	w.turn("Turn three. [[venom-e2e: say Turn three done.]]", "Turn three done.", "--resume", S)
	h, _ := w.LastHook("UserPromptSubmit")
	cv := w.convo(before)
	t.Run("note.hook_prints", func(t *testing.T) {
		if strings.TrimSpace(h.Stdout) != note {
			t.Errorf("UserPromptSubmit stdout %q, want the note %q", h.Stdout, note)
		}
	})
	t.Run("note.model_receives", func(t *testing.T) {
		if countIn(cv, note[:60]) != 1 {
			t.Errorf("the model's request holds the note %d times:\n%s", countIn(cv, note[:60]), cv)
		}
	})
	before = w.Mock.Seq()
	w.turn("Turn four. [[venom-e2e: say Turn four done.]]", "Turn four done.", "--resume", S)
	t.Run("note.once", func(t *testing.T) {
		h, _ := w.LastHook("UserPromptSubmit")
		if cv := w.convo(before); h.Stdout != "" || countIn(cv, note[:60]) != 1 {
			t.Errorf("turn four: the hook printed %q; the request holds the note %d times (want 1: turn three's, in its history)", h.Stdout, countIn(cv, note[:60]))
		}
	})
}

// TestClaudeFirstTurn (issue 14 item 2): --restore all back before the
// first turn. No copy is made; the output says to start a new session;
// the old session, resumed anyway, holds every dropped turn, so its next
// prompt is told (the model receives the note), once, and its turns are
// an agent of their own (../shared/e2e check first_turn.resumed_session_told).
func TestClaudeFirstTurn(t *testing.T) {
	t.Parallel()
	w := newClaude(t)
	r1 := w.turn("Turn one: create a file. [[venom-e2e: write "+w.Repo+"/one.txt one ;; say Turn one done.]]", "Turn one done.")
	S, A := r1.SessionID, agentOf(r1.SessionID)
	w.turn("Turn two. [[venom-e2e: write "+w.Repo+"/two.txt two ;; say Turn two done.]]", "Turn two done.", "--resume", S)
	k := one(t, "turn.started of t1", w.Records("turn.started", "agent="+A, "turn=t1")).S("checkpoint")
	before := w.Mock.Seq()
	plan, text := w.rollback(A, k)
	t.Run("first_turn.output", func(t *testing.T) {
		c := plan.Conversation
		if !c.Rewinds || c.ThroughTurn != nil || len(c.Resume) != 0 || w.Exists("one.txt") || w.Exists("two.txt") {
			t.Errorf("conversation %+v; one.txt %v two.txt %v", c, w.Exists("one.txt"), w.Exists("two.txt"))
		}
		for _, want := range []string{"start a new session (not a resume of the old one):\n  claude\n  in a script: claude -p <prompt>\n",
			"the old session " + S + " (claude-code) still remembers the dropped turns: close it; resumed, it is told once"} {
			if !strings.Contains(text, want) {
				t.Errorf("the rollback's output lacks %q:\n%s", want, text)
			}
		}
		if n := len(w.Mock.Requests(before)); n != 0 {
			t.Errorf("the rollback sent %d model request(s)", n)
		}
	})
	before = w.Mock.Seq()
	w.turn("After going back before turn one. [[venom-e2e: say First done.]]", "First done.", "--resume", S)
	cv := w.convo(before)
	t.Run("first_turn.resumed_session_told", func(t *testing.T) {
		if countIn(cv, "Note: the files were rolled back to their state before your first turn.") != 1 {
			t.Errorf("the resumed old session's request lacks the note:\n%s", cv)
		}
	})
	t.Run("first_turn.old_session_agent", func(t *testing.T) {
		old := A + "-old1"
		if got := w.Records("turn.started", "harness_session="+S); len(got) != 3 || got[2].S("agent") != old || got[2].S("turn") != "t1" {
			t.Errorf("the old session's turn after the rollback should be %s's t1:\n%s", old, e2etest.LogText(got))
		}
	})
	before = w.Mock.Seq()
	w.turn("Once more. [[venom-e2e: say Once done.]]", "Once done.", "--resume", S)
	t.Run("first_turn.note_once", func(t *testing.T) {
		if h, _ := w.LastHook("UserPromptSubmit"); h.Stdout != "" {
			t.Errorf("the note was printed again: %q", h.Stdout)
		}
	})
}

// TestClaudeOldSession (issue 14 item 7): after a rewind, the old session
// resumed anyway is told once that the files were rolled back, and is an
// agent of its own: its turns no longer interleave with the copy's, and a
// rollback of either leaves the other's turns alone (../shared/e2e check
// note.old_conversation).
func TestClaudeOldSession(t *testing.T) {
	t.Parallel()
	w := newClaude(t)
	r1 := w.turn("Turn one. [[venom-e2e: write "+w.Repo+"/one.txt one ;; say Turn one done.]]", "Turn one done.")
	S, A := r1.SessionID, agentOf(r1.SessionID)
	w.turn("Turn two. [[venom-e2e: write "+w.Repo+"/two.txt two ;; say Turn two done.]]", "Turn two done.", "--resume", S)
	k := one(t, "turn.ended of t1", w.Records("turn.ended", "agent="+A, "turn=t1")).S("checkpoint")
	plan, _ := w.rollback(A, k)
	N, old := plan.Conversation.HarnessSession, A+"-old1"
	if got := plan.Conversation.Old; len(got) != 1 || got[0].Session != S || got[0].Agent != old {
		t.Fatalf("old_sessions %+v, want %s as %s", got, S, old)
	}
	w.turn("Turn three, in the copy. [[venom-e2e: write "+w.Repo+"/three.txt three ;; say Three done.]]", "Three done.", "-p", "--resume="+N)

	before := w.Mock.Seq()
	w.turn("Back in the original conversation. [[venom-e2e: write "+w.Repo+"/old.txt old ;; say Old done.]]", "Old done.", "--resume", S)
	cv := w.convo(before)
	t.Run("note.old_conversation", func(t *testing.T) {
		if countIn(cv, "files were rolled back to their state after turn t1") != 1 || countIn(cv, "Turn two.") != 1 {
			t.Errorf("the old session's request (which still holds turn two) lacks the note:\n%s", cv)
		}
	})
	w.turn("Old session again. [[venom-e2e: say Again done.]]", "Again done.", "--resume", S)
	t.Run("old_session.own_agent", func(t *testing.T) {
		var got []string
		for _, r := range w.Records("turn.started") {
			got = append(got, r.S("agent")+" "+r.S("turn")+" "+map[string]string{S: "S", N: "N"}[r.S("harness_session")])
		}
		want := []string{A + " t1 S", A + " t2 S", A + " t3 N", old + " t1 S", old + " t2 S"}
		if strings.Join(got, ", ") != strings.Join(want, ", ") {
			t.Errorf("turns %q\nwant %q", got, want)
		}
		if h, _ := w.LastHook("UserPromptSubmit"); h.Stdout != "" {
			t.Errorf("the old session's second prompt got the note again: %q", h.Stdout)
		}
	})
	t.Run("old_session.separate_rollback", func(t *testing.T) {
		// The old session's own line rolls back on its own: to before its
		// first turn after the rollback, old.txt goes; the copy's agent
		// and its three.txt stay.
		k := one(t, "turn.started of "+old+" t1", w.Records("turn.started", "agent="+old, "turn=t1")).S("checkpoint")
		_, _ = w.rollback(old, k, "--restore", "files")
		if w.Exists("old.txt") || !w.Exists("three.txt") {
			t.Errorf("after the old session's rollback: old.txt there %v (want gone), three.txt there %v (want kept)", w.Exists("old.txt"), w.Exists("three.txt"))
		}
		if n := len(w.Records("note.pending", "agent="+A)); n != 1 {
			t.Errorf("the copy's agent %s got %d note(s), want 1 (its files moved under it: a sharer's note)", A, n)
		}
	})
}
