//go:build e2e

package e2e

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/e2e/e2etest"
	"github.com/venom-org/git-venom/e2e/mockllm"
	"github.com/venom-org/git-venom/harness"
)

// hooksFireSilently checks that each event's hook ran (hooks.fire) and
// that every hook run so far ended with status 0 and printed nothing
// (hooks.exit0_and_silent): ../shared/e2e's first two checks, for any
// client.
func hooksFireSilently(t *testing.T, e *e2etest.Env, events ...string) {
	t.Helper()
	t.Run("hooks.fire", func(t *testing.T) {
		for _, ev := range events {
			if len(e.HookRuns(ev)) == 0 {
				t.Errorf("no %s run:\n%s", ev, e.HooksText())
			}
		}
	})
	t.Run("hooks.exit0_and_silent", func(t *testing.T) {
		for _, h := range e.Hooks() {
			if !h.Finished || h.RC == nil || *h.RC != 0 || h.Stdout != "" {
				t.Errorf("not ended with 0 and silent: %s", h.Summary())
			}
		}
	})
}

// editPathsOf is the sorted set of paths of an agent's edit records in a
// turn.
func editPathsOf(e *e2etest.Env, agent, turn string) string {
	set := map[string]bool{}
	for _, r := range e.Records("edit", "agent="+agent, "turn="+turn) {
		ps, _ := r["paths"].([]any)
		for _, p := range ps {
			set[p.(string)] = true
		}
	}
	return strings.Join(e2etest.SortedKeys(set), ",")
}

// classesOf is "path=class ..." of a dry run of agent to checkpoint k.
func classesOf(t *testing.T, e *e2etest.Env, agent, k string) string {
	t.Helper()
	var plan struct {
		Repos []struct {
			Files []struct{ Path, Class string }
		}
	}
	e.VenomJSON(&plan, "venom-plan", "--agent", agent, k, "--json")
	var out []string
	for _, r := range plan.Repos {
		for _, f := range r.Files {
			out = append(out, f.Path+"="+f.Class)
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// filesOnly rolls agent back to k with --restore files and returns the
// note it left.
func filesOnly(t *testing.T, e *e2etest.Env, agent, k string) string {
	t.Helper()
	var plan struct{ Plan string }
	if r := e.VenomJSON(&plan, "venom-plan", "--agent", agent, k, "--restore", "files", "--json"); r.Code != 0 {
		t.Fatalf("plan: %s\n%s", r, r.Stdout)
	}
	if r := e.Venom("venom-rollback", "--agent", agent, k, "--restore", "files", "--plan", plan.Plan); r.Code != 0 {
		t.Fatalf("rollback: %s\n%s", r, r.Stdout)
	}
	ns := e.Records("note.pending", "agent="+agent)
	if len(ns) == 0 {
		t.Fatalf("no note.pending for %s", agent)
	}
	return ns[len(ns)-1].S("text")
}

// TestCodexTurn: real `codex exec` turns with the hooks installed (and
// trusted for the run): what fires, what venom records, what the agent's
// shell sees, a resume, and the files-only note (../shared/e2e checks
// install.codex, codex.turn1.runs, hooks.fire, hooks.exit0_and_silent,
// hooks.apply_patch_tool_name, agent.id_and_checkpoints,
// ids.session_and_turn, edit.record_patch_only, plan.classes,
// agent_env.thread_id, turn2.resume_same_agent, restore_files.rollback,
// note.hook_prints, note.model_receives, note.once,
// edit.apply_patch_via_shell). Its trust.untrusted_hooks_skipped is
// TestCodexHookTrust; rewind.unsupported no longer holds (Codex rewinds:
// TestCodexRewind); first_turn.resumed_thread_told is TestCodexFirstTurn.
func TestCodexTurn(t *testing.T) {
	t.Parallel()
	e := e2etest.New(t, "codex")
	c := e.Codex()
	if r := e.Venom("venom-hook", "install", "codex"); r.Code != 0 {
		t.Fatalf("install.codex: %s", r)
	}
	envFile := e.Work + "/agent-env.txt"
	r := c.Exec("--dangerously-bypass-hook-trust", "--json", "Turn one: create two files. [[venom-e2e: write made-by-patch.txt hello ;; bash echo x > made-by-bash.txt; env | grep -E '^(CODEX|GIT_VENOM)' | sort > "+envFile+" ;; say Turn one done.]]")
	T := r.Thread()
	if r.Code != 0 || r.LastMessage() != "Turn one done." || T == "" {
		t.Fatalf("codex.turn1.runs: %s; thread %q, last message %q", r, T, r.LastMessage())
	}
	A := harness.AgentID("codex", T)
	hooksFireSilently(t, e, "SessionStart", "UserPromptSubmit", "PostToolUse", "Stop")
	t.Run("hooks.apply_patch_tool_name", func(t *testing.T) {
		var names []string
		for _, h := range e.HookRuns("PostToolUse") {
			names = append(names, h.Field("tool_name"))
		}
		if len(names) == 0 || names[0] != "apply_patch" {
			t.Errorf("PostToolUse tool_name %q, want apply_patch first", names)
		}
	})
	t.Run("agent.id_and_checkpoints", func(t *testing.T) {
		list := e.Venom("venom-checkpoint", "list", "--agent", A)
		if !strings.Contains(list.Stdout, "turn_start   t1") || !strings.Contains(list.Stdout, "turn_end     t1") {
			t.Errorf("%s\n%s", list, list.Stdout)
		}
	})
	ups, _ := e.LastHook("UserPromptSubmit")
	stop, _ := e.LastHook("Stop")
	started := e.Records("turn.started", "agent="+A, "turn=t1")
	ended := e.Records("turn.ended", "agent="+A, "turn=t1")
	if len(started) != 1 || len(ended) != 1 {
		t.Fatalf("turn records of t1:\n%s", e2etest.LogText(e.Records("")))
	}
	t.Run("ids.session_and_turn", func(t *testing.T) {
		tid := ups.Field("turn_id")
		got := started[0].S("harness") + " " + started[0].S("harness_session") + " " + started[0].S("harness_turn") + " / " +
			ended[0].S("harness_session") + " " + ended[0].S("harness_turn")
		if want := "codex " + T + " " + tid + " / " + T + " " + tid; got != want || tid == "" || stop.Field("turn_id") != tid {
			t.Errorf("turn records %q, want %q (Stop turn_id %q)", got, want, stop.Field("turn_id"))
		}
	})
	t.Run("edit.record_patch_only", func(t *testing.T) {
		if got := editPathsOf(e, A, "t1"); got != "made-by-patch.txt" {
			t.Errorf("edit records of t1: %q", got)
		}
	})
	t.Run("plan.classes", func(t *testing.T) {
		if got := classesOf(t, e, A, started[0].S("checkpoint")); got != "made-by-bash.txt=turn made-by-patch.txt=agent" {
			t.Errorf("classes: %q", got)
		}
	})
	t.Run("agent_env.thread_id", func(t *testing.T) {
		b, _ := os.ReadFile(envFile)
		if !strings.Contains(string(b), "CODEX_THREAD_ID="+T+"\n") {
			t.Errorf("the shell tool's environment lacks CODEX_THREAD_ID=%s:\n%s", T, b)
		}
	})

	r2 := c.Exec("--dangerously-bypass-hook-trust", "--json", "resume", T, "Turn two. [[venom-e2e: write turn2.txt two ;; say Turn two done.]]")
	t.Run("turn2.resume_same_agent", func(t *testing.T) {
		if r2.Code != 0 || len(e.Records("turn.ended", "agent="+A, "turn=t2", "harness_session="+T)) != 1 {
			t.Errorf("%s\n%s", r2, e2etest.LogText(e.Records("turn.ended")))
		}
	})

	note := filesOnly(t, e, A, ended[0].S("checkpoint"))
	t.Run("restore_files.rollback", func(t *testing.T) {
		if e.Exists("turn2.txt") || note == "" {
			t.Errorf("turn2.txt there %v, note %q", e.Exists("turn2.txt"), note)
		}
	})
	since := e.Mock.Seq()
	c.Exec("--dangerously-bypass-hook-trust", "--json", "resume", T, "Turn three. [[venom-e2e: say Turn three done.]]")
	h, _ := e.LastHook("UserPromptSubmit")
	t.Run("note.hook_prints", func(t *testing.T) {
		if strings.TrimSpace(h.Stdout) != note {
			t.Errorf("UserPromptSubmit stdout %q, want %q", h.Stdout, note)
		}
	})
	t.Run("note.model_receives", func(t *testing.T) {
		if cv := mockllm.Text(e.Mock.LastConvo(since, "responses")); countIn(cv, note[:60]) != 1 {
			t.Errorf("the request holds the note %d times:\n%s", countIn(cv, note[:60]), cv)
		}
	})
	since = e.Mock.Seq()
	c.Exec("--dangerously-bypass-hook-trust", "--json", "resume", T, "Turn four. [[venom-e2e: say Turn four done.]]")
	t.Run("note.once", func(t *testing.T) {
		h, _ := e.LastHook("UserPromptSubmit")
		if cv := mockllm.Text(e.Mock.LastConvo(since, "responses")); h.Stdout != "" || countIn(cv, note[:60]) != 1 {
			t.Errorf("turn four: stdout %q, note %d times in the request (want 1: turn three's)", h.Stdout, countIn(cv, note[:60]))
		}
	})

	// A model Codex has no metadata for is offered no apply_patch tool; it
	// runs `apply_patch <<EOF` through its shell tool, which fires no
	// PostToolUse: the file's change is class turn, with no edit record.
	before := len(e.Hooks())
	r6 := c.Exec("--dangerously-bypass-hook-trust", "--json", "-m", "mock-model", "Shell patch. [[venom-e2e: write via-shell.txt hi ;; say Shell patch done.]]")
	t.Run("edit.apply_patch_via_shell", func(t *testing.T) {
		post := 0
		for _, h := range e.Hooks()[before:] {
			if h.Event() == "PostToolUse" && h.Field("tool_name") == "apply_patch" {
				post++
			}
		}
		A6 := harness.AgentID("codex", r6.Thread())
		if !e.Exists("via-shell.txt") || post != 0 || len(e.Records("edit", "agent="+A6)) != 0 {
			t.Errorf("via the shell: file made %v, apply_patch PostToolUse runs %d, edit records %d (want made, 0, 0)",
				e.Exists("via-shell.txt"), post, len(e.Records("edit", "agent="+A6)))
		}
	})
}
