package harness_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/harness"
)

// Per-tool-call checkpoints (issue 14): each harness's pre-tool event for a
// shell command takes a mid-turn checkpoint (reason manual, labelled with
// the command), a reuse when nothing changed, which keeps the reused
// checkpoint's own label; venom.checkpoints.toolCalls says for which tools.

// lastOf is the last record of typ in the log.
func lastOf(t *testing.T, recs []record, typ string) record {
	t.Helper()
	rs := ofType(recs, typ)
	if len(rs) == 0 {
		t.Fatalf("no %s record in %v", typ, types(recs))
	}
	return rs[len(rs)-1]
}

func TestPreToolCheckpointClaudeCode(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	vars := map[string]string{"CWD": repo.Dir, "TRANSCRIPT": ""}
	ev := func(name string) { event(t, repo.Dir, "claude-code", name, vars, "") }

	// Outside a turn there is nothing to place it in.
	ev("PreToolUse-Bash.json")
	if recs := readLog(t, repo); len(recs) != 0 {
		t.Fatalf("a pre-tool event with no turn open logged %v", types(recs))
	}
	ev("UserPromptSubmit.json")
	n := len(readLog(t, repo))
	// Nothing changed since the turn's start: a reuse, k1 keeps no label.
	ev("PreToolUse-Bash.json")
	recs := readLog(t, repo)
	if got := types(recs[n:]); !reflect.DeepEqual(got, []string{"checkpoint.reused"}) {
		t.Fatalf("records %v, want one checkpoint.reused", got)
	}
	wantRecord(t, recs[n], map[string]any{"agent": claudeAgent, "checkpoint": "k1", "reason": "manual", "turn": "t1"})
	if _, ok := recs[n]["label"]; ok {
		t.Errorf("the reuse carries a label: %v", recs[n])
	}
	// A shell command changed a file: the next one gets a new checkpoint.
	repo.Write("out.txt", "x\n")
	ev("PreToolUse-Bash.json")
	k := lastOf(t, readLog(t, repo), "checkpoint.taken")
	wantRecord(t, k, map[string]any{"checkpoint": "k2", "reason": "manual", "turn": "t1", "mid_turn": true,
		"label": "before Bash: echo x > out.txt && make test …"})
	// A Read is not a shell tool: nothing, under the default (shell).
	repo.Write("out.txt", "y\n")
	n = len(readLog(t, repo))
	ev("PreToolUse-Read.json")
	if recs := readLog(t, repo); len(recs) != n {
		t.Errorf("a Read under toolCalls=shell logged %v", types(recs[n:]))
	}
	repo.Git("config", "venom.checkpoints.toolCalls", "all")
	ev("PreToolUse-Read.json")
	wantRecord(t, lastOf(t, readLog(t, repo), "checkpoint.taken"), map[string]any{"checkpoint": "k3",
		"label": "before Read: " + repo.Dir + "/app.py"})
	repo.Git("config", "venom.checkpoints.toolCalls", "off")
	repo.Write("out.txt", "z\n")
	n = len(readLog(t, repo))
	ev("PreToolUse-Bash.json")
	if recs := readLog(t, repo); len(recs) != n {
		t.Errorf("toolCalls=off logged %v", types(recs[n:]))
	}

	// The list shows which command each preceded.
	o := cliRun(t, repo.Dir, "checkpoint", "list", "--agent", claudeAgent)
	if !strings.Contains(o.stdout, `k2    manual       t1`) || !strings.Contains(o.stdout, `mid-turn "before Bash: echo x > out.txt && make test …"`) {
		t.Errorf("list:\n%s", o.stdout)
	}
}

// The real hook inputs of codex 0.171 (PreToolUse, tool_name Bash and
// apply_patch) and Gemini CLI 0.61 (BeforeTool, run_shell_command and
// write_file): the shell command gets a checkpoint; the edit tool does not,
// under the default.
func TestPreToolCheckpointCodexGemini(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ h, start, shell, edit, session, label string }{
		{"codex", "UserPromptSubmit", "PreToolUse-Bash.json", "PreToolUse-apply_patch.json", "01a2316a-e1fd-7020-87c8-abcc35b5efa4", "before Bash: echo hi > b.txt"},
		{"gemini", "BeforeAgent", "BeforeTool-run_shell_command.json", "BeforeTool-write_file.json", "cdbaf1fa-6188-4226-8b33-1b0ba24baa67", "before run_shell_command: echo hi > g.txt"},
	} {
		t.Run(c.h, func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t)
			vars := map[string]string{"CWD": repo.Dir}
			h, _ := harness.Lookup(c.h)
			agent := harness.AgentID(h.Prefix, c.session)
			// The turn's start, as the session's own event.
			start := strings.Replace(string(load(t, c.h, c.shell, vars)), `"hook_event_name":"`+map[string]string{"codex": "PreToolUse", "gemini": "BeforeTool"}[c.h]+`"`,
				`"hook_event_name":"`+c.start+`","prompt":"go"`, 1)
			if o := hook(t, repo.Dir, []byte(start), []string{c.h}); o.code != 0 || o.stderr != "" {
				t.Fatalf("turn start: %+v", o)
			}
			repo.Write("b.txt", "hi\n")
			event(t, repo.Dir, c.h, c.shell, vars, "")
			wantRecord(t, lastOf(t, readLog(t, repo), "checkpoint.taken"), map[string]any{"agent": agent, "checkpoint": "k2",
				"reason": "manual", "mid_turn": true, "label": c.label})
			repo.Write("b.txt", "again\n")
			n := len(readLog(t, repo))
			event(t, repo.Dir, c.h, c.edit, vars, "")
			if recs := readLog(t, repo); len(recs) != n {
				t.Errorf("an edit tool under toolCalls=shell logged %v", types(recs[n:]))
			}
		})
	}
}

// A per-tool-call checkpoint is mid-turn, so files only (RFC 8): --restore
// all refuses it (why mid_turn) and --restore files goes back to the tree
// as it was before the command.
func TestPlanTargetsToolCallCheckpoint(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	vars := map[string]string{"CWD": repo.Dir, "TRANSCRIPT": ""}
	event(t, repo.Dir, "claude-code", "UserPromptSubmit.json", vars, "")
	repo.Write("app.py", "x = 2\n")
	event(t, repo.Dir, "claude-code", "PreToolUse-Bash.json", vars, "")
	repo.Write("app.py", "x = 3\n")
	repo.Write("out.txt", "made by the command\n")
	event(t, repo.Dir, "claude-code", "Stop.json", vars, "")
	taken := ofType(readLog(t, repo), "checkpoint.taken")
	if len(taken) != 3 {
		t.Fatalf("checkpoints %v, want k1 (turn start), k2 (before the command), k3 (turn end)", taken)
	}
	if k := taken[1]; k.str("checkpoint") != "k2" || k["mid_turn"] != true {
		t.Fatalf("the tool-call checkpoint: %v", k)
	}
	data := cliFails(t, "plan --restore all", cliRun(t, repo.Dir, "plan", "--agent", claudeAgent, "k2", "--json"), "conflict.checkpoint_files_only", 5)
	if data["why"] != "mid_turn" {
		t.Errorf("why %v, want mid_turn", data["why"])
	}
	plan := cliOK(t, "plan --restore files", cliRun(t, repo.Dir, "plan", "--agent", claudeAgent, "k2", "--restore", "files", "--json"))
	if want := []string{"modify turn app.py", "delete turn out.txt"}; !reflect.DeepEqual(plan.files(), want) {
		t.Errorf("plan files %q, want %q", plan.files(), want)
	}
	cliOK(t, "rollback", cliRun(t, repo.Dir, "rollback", "--agent", claudeAgent, "k2", "--restore", "files", "--plan", plan.Plan, "--json"))
	_, err := os.Stat(repo.Path("out.txt"))
	if got := repo.Read("app.py"); got != "x = 2\n" || err == nil {
		t.Errorf("after the rollback app.py = %q, out.txt: %v", got, err)
	}
}

// Per-tool-call checkpoints count with the turn checkpoints for
// venom.checkpoints.keep (they are automatic, and a busy turn makes many),
// while a person's manual checkpoint still only ages out: with keep=3, the
// turn_end's prune drops the turn's start and the oldest tool-call
// checkpoint, and keeps the person's. (Before the tool_call mark all of
// them were manual, and none went.)
func TestToolCallCheckpointsCountForKeep(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	repo.Git("config", "venom.checkpoints.keep", "3")
	vars := map[string]string{"CWD": repo.Dir, "TRANSCRIPT": ""}
	event(t, repo.Dir, "claude-code", "UserPromptSubmit.json", vars, "") // k1
	repo.Write("mine.txt", "a person's point\n")
	if o := cliRun(t, repo.Dir, "checkpoint", "--agent", claudeAgent, "--reason", "manual", "--label", "mine"); o.code != 0 { // k2
		t.Fatalf("manual checkpoint: %+v", o)
	}
	for i := 0; i < 3; i++ { // k3, k4, k5
		repo.Write("out.txt", strings.Repeat("x", i+1)+"\n")
		event(t, repo.Dir, "claude-code", "PreToolUse-Bash.json", vars, "")
	}
	repo.Write("out.txt", "end\n")
	event(t, repo.Dir, "claude-code", "Stop.json", vars, "") // k6, then the prune
	recs := readLog(t, repo)
	for _, k := range ofType(recs, "checkpoint.taken")[2:5] {
		if k["tool_call"] != true {
			t.Errorf("%s is not marked tool_call: %v", k.str("checkpoint"), k)
		}
	}
	pruned := ofType(recs, "checkpoint.pruned")
	if len(pruned) != 1 || !reflect.DeepEqual(paths2(pruned[0]["checkpoints"]), []string{"k1", "k3"}) {
		t.Errorf("pruned %v, want [k1 k3]", pruned)
	}
}

func paths2(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}
