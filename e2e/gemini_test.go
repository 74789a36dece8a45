//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/e2e/e2etest"
	"github.com/venom-org/git-venom/e2e/mockllm"
	"github.com/venom-org/git-venom/harness"
)

// TestGeminiTurn: real `gemini -p` turns in a trusted folder with the hooks
// installed: what fires, what venom records, what the agent's shell sees,
// a --resume with the replace tool, and the files-only note as
// additionalContext (../shared/e2e checks install.gemini,
// gemini.turn1.runs, hooks.fire, hooks.exit0_and_silent,
// agent.id_and_checkpoints, ids.session, edit.record_write_file_only,
// plan.classes, agent_env.gemini_cli, turn2.resume_same_agent,
// edit.record_replace, restore_files.rollback, note.hook_prints_json,
// note.model_receives, note.once). Its folder.untrusted is
// TestGeminiFolderTrust, rewind.unsupported TestGeminiRewindIsFilesOnly.
func TestGeminiTurn(t *testing.T) {
	t.Parallel()
	e := e2etest.New(t, "gemini")
	g := e.Gemini()
	g.TrustRepo()
	if r := e.Venom("venom-hook", "install", "gemini"); r.Code != 0 {
		t.Fatalf("install.gemini: %s", r)
	}
	envFile := e.Work + "/agent-env.txt"
	r := g.Print("-p", "Turn one: create two files. [[venom-e2e: write "+e.Repo+"/made-by-write.txt hello ;; bash echo x > made-by-bash.txt; env | grep -E '^(GEMINI|GIT_VENOM)' | grep -v KEY | sort > "+envFile+" ;; say Turn one done.]]")
	S := r.SessionID
	if r.Code != 0 || r.Response != "Turn one done." || S == "" {
		t.Fatalf("gemini.turn1.runs: %s; session %q, response %q", r, S, r.Response)
	}
	A := harness.AgentID("gemini", S)
	hooksFireSilently(t, e, "SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "SessionEnd")
	t.Run("agent.id_and_checkpoints", func(t *testing.T) {
		list := e.Venom("venom-checkpoint", "list", "--agent", A)
		if !strings.Contains(list.Stdout, "turn_start   t1") || !strings.Contains(list.Stdout, "turn_end     t1") {
			t.Errorf("%s\n%s", list, list.Stdout)
		}
	})
	started := e.Records("turn.started", "agent="+A, "turn=t1", "harness=gemini", "harness_session="+S)
	ended := e.Records("turn.ended", "agent="+A, "turn=t1")
	if len(started) != 1 || len(ended) != 1 {
		t.Fatalf("ids.session: turn records of t1:\n%s", e2etest.LogText(e.Records("")))
	}
	t.Run("edit.record_write_file_only", func(t *testing.T) {
		if got := editPathsOf(e, A, "t1"); got != "made-by-write.txt" {
			t.Errorf("edit records of t1: %q", got)
		}
	})
	t.Run("plan.classes", func(t *testing.T) {
		if got := classesOf(t, e, A, started[0].S("checkpoint")); got != "made-by-bash.txt=turn made-by-write.txt=agent" {
			t.Errorf("classes: %q", got)
		}
	})
	t.Run("agent_env.gemini_cli", func(t *testing.T) {
		b, _ := os.ReadFile(envFile)
		if !strings.Contains(string(b), "GEMINI_CLI=1\n") {
			t.Errorf("the shell tool's environment lacks GEMINI_CLI=1:\n%s", b)
		}
	})

	r2 := g.Print("-p", "Turn two. [[venom-e2e: edit "+e.Repo+"/made-by-write.txt hello goodbye ;; say Turn two done.]]", "--resume", S)
	t.Run("turn2.resume_same_agent", func(t *testing.T) {
		if r2.Code != 0 || len(e.Records("turn.ended", "agent="+A, "turn=t2", "harness_session="+S)) != 1 {
			t.Errorf("%s\n%s", r2, e2etest.LogText(e.Records("turn.ended")))
		}
	})
	t.Run("edit.record_replace", func(t *testing.T) {
		s, _ := e.ReadFile("made-by-write.txt")
		if got := editPathsOf(e, A, "t2"); got != "made-by-write.txt" || !strings.Contains(s, "goodbye") {
			t.Errorf("edit records of t2 %q; file %q", got, s)
		}
	})

	note := filesOnly(t, e, A, ended[0].S("checkpoint"))
	t.Run("restore_files.rollback", func(t *testing.T) {
		if s, _ := e.ReadFile("made-by-write.txt"); s != "hello\n" || note == "" {
			t.Errorf("made-by-write.txt %q, note %q", s, note)
		}
	})
	since := e.Mock.Seq()
	g.Print("-p", "Turn three. [[venom-e2e: say Turn three done.]]", "--resume", S)
	h, _ := e.LastHook("BeforeAgent")
	t.Run("note.hook_prints_json", func(t *testing.T) {
		var out struct {
			HookSpecificOutput struct {
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		if json.Unmarshal([]byte(h.Stdout), &out) != nil || out.HookSpecificOutput.AdditionalContext != note {
			t.Errorf("BeforeAgent stdout %q, want the note as additionalContext", h.Stdout)
		}
	})
	t.Run("note.model_receives", func(t *testing.T) {
		if cv := mockllm.Text(e.Mock.LastConvo(since, "gemini")); countIn(cv, note[:60]) < 1 {
			t.Errorf("the request lacks the note:\n%s", cv)
		}
	})
	since = e.Mock.Seq()
	g.Print("-p", "Turn four. [[venom-e2e: say Turn four done.]]", "--resume", S)
	t.Run("note.once", func(t *testing.T) {
		h, _ := e.LastHook("BeforeAgent")
		if cv := mockllm.Text(e.Mock.LastConvo(since, "gemini")); h.Stdout != "" || countIn(cv, note[:60]) > 1 {
			t.Errorf("turn four: stdout %q, note %d times in the request (want at most 1: turn three's)", h.Stdout, countIn(cv, note[:60]))
		}
	})
}
