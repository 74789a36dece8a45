package harness_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/harness"
	"github.com/venom-org/git-venom/internal/cli"
	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/journal"
)

// TestMain lets the tests run the hook as a separate process, as a
// harness does: the test binary re-executed with VENOM_TEST_HOOK_MAIN=1
// is `git venom-hook`.
func TestMain(m *testing.M) {
	if os.Getenv("VENOM_TEST_HOOK_MAIN") == "1" {
		os.Exit(cli.Main("hook", os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	gittest.Setup()
	os.Exit(m.Run())
}

const (
	claudeSession = "0d3c8b1e-7f2a-4c39-9a57-1b2c3d4e5f60"
	claudeAgent   = "claude-0d3c8b1e7f2a"
	claudePrompt  = "6f1e2d3c-4b5a-4968-8776-5a4b3c2d1e0f"
	codexSession  = "019dba93-8214-7d50-a089-9690b4ce6b9e"
	codexAgent    = "codex-9690b4ce6b9e"
	codexTurn     = "019dba93-9a01-7c11-8e2f-0a1b2c3d4e5f"
	geminiAgent   = "gemini-8c2f6e1a5b3d"
	cursorAgent   = "cursor-668320d22fd3"
)

// outcome is what one hook process did.
type outcome struct {
	stdout, stderr string
	code           int
	elapsed        time.Duration
}

// harnessEnv are variables a harness sets that would change which agent a
// hook picks; the test process may itself run under one.
var harnessEnv = []string{"CLAUDE_CODE_SESSION_ID", "GEMINI_SESSION_ID", "CODEX_THREAD_ID", "GIT_VENOM_AGENT", "GIT_VENOM_TRACE"}

func hookEnv(extra ...string) []string {
	var env []string
	for _, kv := range gittest.Env() {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, h := range harnessEnv {
			drop = drop || k == h
		}
		if !drop {
			env = append(env, kv)
		}
	}
	return append(append(env, "VENOM_TEST_HOOK_MAIN=1"), extra...)
}

// hook runs `git venom-hook <args>` in dir with input on stdin.
func hook(t testing.TB, dir string, input []byte, args []string, env ...string) outcome {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = hookEnv(env...)
	cmd.Stdin = bytes.NewReader(input)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	o := outcome{stdout: out.String(), stderr: errb.String(), elapsed: time.Since(start)}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("running the hook: %v", err)
		}
		o.code = ee.ExitCode()
	}
	return o
}

// event runs one fixture of h through the hook in repo and checks the
// never-derail rules: exit 0 and nothing on stdout but want.
func event(t testing.TB, dir, h, fixture string, vars map[string]string, wantStdout string) outcome {
	t.Helper()
	o := hook(t, dir, load(t, h, fixture, vars), []string{h})
	if o.code != 0 {
		t.Errorf("%s %s: exit %d (stderr %q)", h, fixture, o.code, o.stderr)
	}
	if o.stdout != wantStdout {
		t.Errorf("%s %s: stdout %q, want %q", h, fixture, o.stdout, wantStdout)
	}
	return o
}

// load reads a fixture and fills in {{CWD}} and {{TRANSCRIPT}}.
func load(t testing.TB, h, name string, vars map[string]string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", h, name))
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for k, v := range vars {
		b, _ := json.Marshal(v)
		s = strings.ReplaceAll(s, "{{"+k+"}}", string(b[1:len(b)-1]))
	}
	return []byte(s)
}

// record is one log line, decoded loosely.
type record map[string]any

func (r record) str(k string) string { s, _ := r[k].(string); return s }

func readLog(t testing.TB, repo *gittest.Repo) []record {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo.GitDir, "venom", "log.jsonl"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var recs []record
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line == "" {
			continue
		}
		var r record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line %d is not JSON: %v\n%s", i+1, err, line)
		}
		recs = append(recs, r)
	}
	return recs
}

func ofType(recs []record, typ string) []record {
	var out []record
	for _, r := range recs {
		if r.str("type") == typ {
			out = append(out, r)
		}
	}
	return out
}

func types(recs []record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.str("type"))
	}
	return out
}

func paths(r record) []string {
	var out []string
	for _, p := range r["paths"].([]any) {
		out = append(out, p.(string))
	}
	return out
}

func newRepo(t *testing.T) *gittest.Repo {
	repo := gittest.New(t)
	repo.Write("README.md", "hello\n")
	repo.Write("src/util.py", "a\n")
	repo.Write("app.py", "x = 1\n")
	repo.Commit("init")
	return repo
}

func transcript(t *testing.T) string {
	data, err := os.ReadFile("testdata/claude-code/transcript.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), claudeSession+".jsonl")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func wantRecord(t *testing.T, r record, want map[string]any) {
	t.Helper()
	for k, v := range want {
		got := r[k]
		if arr, ok := got.([]any); ok {
			var ss []string
			for _, x := range arr {
				ss = append(ss, fmt.Sprint(x))
			}
			got = ss
		}
		if !reflect.DeepEqual(got, v) {
			t.Errorf("%s record: %s = %#v, want %#v", r.str("type"), k, got, v)
		}
	}
}

// A whole Claude Code session: each event does what DESIGN.md section 6's
// table says, with exit 0 and nothing on stdout.
func TestClaudeCodeSession(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	vars := map[string]string{"CWD": repo.Dir, "TRANSCRIPT": transcript(t)}
	ev := func(name string) outcome {
		o := event(t, repo.Dir, "claude-code", name, vars, "")
		if o.stderr != "" {
			t.Errorf("%s: stderr %q", name, o.stderr)
		}
		return o
	}

	ev("SessionStart.json")
	if recs := readLog(t, repo); len(recs) != 0 {
		t.Fatalf("SessionStart logged %v", types(recs))
	}
	ev("UserPromptSubmit.json")
	recs := readLog(t, repo)
	if got := types(recs); !reflect.DeepEqual(got, []string{"agent.registered", "checkpoint.taken", "turn.started"}) {
		t.Fatalf("UserPromptSubmit logged %v", got)
	}
	wantRecord(t, recs[1], map[string]any{"agent": claudeAgent, "checkpoint": "k1", "reason": "turn_start", "turn": "t1"})
	wantRecord(t, recs[2], map[string]any{"agent": claudeAgent, "turn": "t1", "checkpoint": "k1",
		"harness": "claude-code", "harness_session": claudeSession, "harness_turn": claudePrompt})

	repo.Write("src/factorial.py", "def factorial(n): ...\n")
	ev("PostToolUse-Write.json")
	repo.Write("README.md", "hello, world\n")
	ev("PostToolUse-Edit.json")
	repo.Write("src/util.py", "b\n")
	ev("PostToolUse-MultiEdit.json")
	repo.Write("analysis.ipynb", "{}\n")
	ev("PostToolUse-NotebookEdit.json")
	repo.Write("app.py", "x = 2\n") // through Bash: no edit record (BR-59)
	ev("PostToolUse-Bash.json")
	ev("Notification.json")

	edits := ofType(readLog(t, repo), "edit")
	var got [][]string
	for _, e := range edits {
		wantRecord(t, e, map[string]any{"agent": claudeAgent, "turn": "t1", "path": repo.Dir})
		got = append(got, paths(e))
	}
	want := [][]string{{"src/factorial.py"}, {"README.md"}, {"src/util.py"}, {"analysis.ipynb"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("edit records %q, want %q", got, want)
	}

	ev("Stop.json")
	recs = readLog(t, repo)
	last := recs[len(recs)-2:]
	wantRecord(t, last[0], map[string]any{"type": "checkpoint.taken", "checkpoint": "k2", "reason": "turn_end", "turn": "t1", "through_turn": "t1"})
	wantRecord(t, last[1], map[string]any{"type": "turn.ended", "turn": "t1", "checkpoint": "k2",
		"harness_session": claudeSession, "harness_turn": claudePrompt, "harness_end": "a3"})

	n := len(recs)
	ev("SessionEnd.json") // the turn ended: nothing to close
	if recs := readLog(t, repo); len(recs) != n {
		t.Errorf("SessionEnd after Stop logged %v", types(recs[n:]))
	}

	refs := repo.Refs()
	for _, k := range []string{"1", "2"} {
		if refs["refs/venom/checkpoints/"+claudeAgent+"/"+k] == "" {
			t.Errorf("no ref for k%s: %v", k, refs)
		}
	}
	if s, ok := repo.Show("refs/venom/checkpoints/"+claudeAgent+"/2", "src/factorial.py"); !ok || s != "def factorial(n): ...\n" {
		t.Errorf("k2 lacks the turn's new file: %q %v", s, ok)
	}
	if s, _ := repo.Show("refs/venom/checkpoints/"+claudeAgent+"/2", "app.py"); s != "x = 2\n" {
		t.Errorf("k2 lacks the change made through Bash: %q", s)
	}
}

// An interrupt fires no hook: the next prompt ends the open turn first
// (synthetic), and a session that ends with a turn open closes it.
func TestClaudeCodeInterruptedTurn(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	vars := map[string]string{"CWD": repo.Dir, "TRANSCRIPT": transcript(t)}
	event(t, repo.Dir, "claude-code", "UserPromptSubmit.json", vars, "")
	repo.Write("half.txt", "interrupted\n")
	event(t, repo.Dir, "claude-code", "UserPromptSubmit.json", vars, "")
	recs := readLog(t, repo)
	ended := ofType(recs, "turn.ended")
	if len(ended) != 1 {
		t.Fatalf("turn.ended records %v", ended)
	}
	wantRecord(t, ended[0], map[string]any{"turn": "t1", "synthetic": true})
	started := ofType(recs, "turn.started")
	if len(started) != 2 || started[1].str("turn") != "t2" {
		t.Fatalf("turn.started records %v", started)
	}

	repo.Write("half.txt", "interrupted again, then /exit\n")
	event(t, repo.Dir, "claude-code", "SessionEnd.json", vars, "")
	recs = readLog(t, repo)
	last := recs[len(recs)-2:]
	wantRecord(t, last[0], map[string]any{"type": "checkpoint.taken", "reason": "turn_end", "turn": "t2"})
	wantRecord(t, last[1], map[string]any{"type": "turn.ended", "turn": "t2", "harness_session": claudeSession})
}

// StopFailure (an API error) ends the turn like Stop. With no transcript
// yet, harness_end is left out, quietly.
func TestClaudeCodeStopFailure(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	vars := map[string]string{"CWD": repo.Dir, "TRANSCRIPT": filepath.Join(t.TempDir(), "not-yet.jsonl")}
	event(t, repo.Dir, "claude-code", "UserPromptSubmit.json", vars, "")
	o := event(t, repo.Dir, "claude-code", "StopFailure.json", vars, "")
	if o.stderr != "" {
		t.Errorf("stderr %q", o.stderr)
	}
	ended := ofType(readLog(t, repo), "turn.ended")
	if len(ended) != 1 {
		t.Fatalf("turn.ended records %v", ended)
	}
	wantRecord(t, ended[0], map[string]any{"turn": "t1", "checkpoint": "k1", "harness_turn": claudePrompt})
	if _, ok := ended[0]["harness_end"]; ok {
		t.Errorf("harness_end without a transcript: %v", ended[0])
	}
}

// A StopFailure hook that Claude Code killed in -p mode (it does not wait
// for it as it exits, issue 14 item 3) leaves the turn open: SessionEnd,
// which it waits for, takes the turn_end, with harness_end the turn's
// last assistant entry after its prompt (SessionEnd's prompt_id): the API
// error's own entry, not a subagent's. A turn cut before any answer gets
// none, never an earlier turn's entry.
func TestClaudeCodeSessionEndClosesFailedTurn(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/claude-code/transcript-failed.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, transcript, want string
	}{
		{"answered", string(data), "e2"},
		{"cut before the answer", strings.Join(strings.Split(string(data), "\n")[:4], "\n") + "\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t)
			tr := filepath.Join(t.TempDir(), claudeSession+".jsonl")
			if err := os.WriteFile(tr, []byte(c.transcript), 0o644); err != nil {
				t.Fatal(err)
			}
			vars := map[string]string{"CWD": repo.Dir, "TRANSCRIPT": tr}
			event(t, repo.Dir, "claude-code", "UserPromptSubmit.json", vars, "")
			repo.Write("failed.txt", "half a turn\n")
			o := event(t, repo.Dir, "claude-code", "SessionEnd-prompt.json", vars, "")
			if o.stderr != "" {
				t.Errorf("stderr %q", o.stderr)
			}
			recs := readLog(t, repo)
			ended := ofType(recs, "turn.ended")
			if len(ended) != 1 {
				t.Fatalf("turn.ended records %v", ended)
			}
			wantRecord(t, ended[0], map[string]any{"turn": "t1", "checkpoint": "k2", "harness_turn": claudePrompt})
			if got := ended[0].str("harness_end"); got != c.want {
				t.Errorf("harness_end %q, want %q", got, c.want)
			}
			if len(ofType(recs, "checkpoint.failed")) != 0 {
				t.Errorf("checkpoint.failed: %v", ofType(recs, "checkpoint.failed"))
			}
		})
	}
}

func TestCodexSession(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	repo.Write("docs/old_name.md", "old\n")
	repo.Write("obsolete.txt", "x\n")
	repo.Commit("more")
	vars := map[string]string{"CWD": repo.Dir}
	ev := func(name string) {
		if o := event(t, repo.Dir, "codex", name, vars, ""); o.stderr != "" {
			t.Errorf("%s: stderr %q", name, o.stderr)
		}
	}
	ev("SessionStart.json")
	ev("UserPromptSubmit.json")
	started := ofType(readLog(t, repo), "turn.started")
	if len(started) != 1 {
		t.Fatalf("turn.started %v", started)
	}
	wantRecord(t, started[0], map[string]any{"agent": codexAgent, "turn": "t1", "harness": "codex",
		"harness_session": codexSession, "harness_turn": codexTurn})

	repo.Write("src/new_module.py", "def hello():\n    return \"hi\"\n")
	repo.Write("app.py", "x = 2\n")
	ev("PostToolUse-apply_patch.json")
	ev("PostToolUse-Bash-apply_patch.json")
	ev("PostToolUse-Bash.json")
	edits := ofType(readLog(t, repo), "edit")
	if len(edits) != 2 {
		t.Fatalf("edit records %v", edits)
	}
	wantRecord(t, edits[0], map[string]any{"agent": codexAgent, "turn": "t1",
		"paths": []string{"docs/new_name.md", "docs/old_name.md", "obsolete.txt", "src/app.py", "src/new_module.py"}})
	wantRecord(t, edits[1], map[string]any{"paths": []string{"abs/added.txt"}})

	ev("Stop.json")
	ended := ofType(readLog(t, repo), "turn.ended")
	if len(ended) != 1 {
		t.Fatalf("turn.ended %v", ended)
	}
	wantRecord(t, ended[0], map[string]any{"turn": "t1", "harness_session": codexSession, "harness_turn": codexTurn})

	// The legacy notify program gets the event as its one argument.
	o := hook(t, repo.Dir, nil, []string{"codex", string(load(t, "codex", "notify-agent-turn-complete.json", vars))})
	if o.code != 0 || o.stdout != "" {
		t.Errorf("notify: exit %d stdout %q stderr %q", o.code, o.stdout, o.stderr)
	}
	ended = ofType(readLog(t, repo), "turn.ended")
	if len(ended) != 2 || ended[1].str("harness_turn") != codexTurn {
		t.Errorf("notify's turn_end: %v", ended)
	}

	// Interrupt (newer builds) ends an open turn.
	ev("UserPromptSubmit.json")
	ev("Interrupt.json")
	ev("SessionEnd.json")
	recs := readLog(t, repo)
	if n := len(ofType(recs, "turn.ended")); n != 3 {
		t.Errorf("%d turn.ended records after Interrupt, want 3: %v", n, types(recs))
	}
	if !strings.HasSuffix(strings.Join(types(recs), " "), "checkpoint.reused turn.ended") {
		t.Errorf("Interrupt did not end the turn: %v", types(recs))
	}
}

func TestGeminiSession(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	vars := map[string]string{"CWD": repo.Dir}
	for _, name := range []string{"SessionStart.json", "BeforeAgent.json"} {
		if o := event(t, repo.Dir, "gemini", name, vars, ""); o.stderr != "" {
			t.Errorf("%s: stderr %q", name, o.stderr)
		}
	}
	repo.Write("CONTRIBUTING.md", "# Contributing\n")
	repo.Write("README.md", "hello, world\n")
	repo.Write("made-by-shell.txt", "")
	for _, name := range []string{"AfterTool-write_file.json", "AfterTool-replace.json", "AfterTool-run_shell_command.json", "AfterAgent.json", "SessionEnd.json"} {
		if o := event(t, repo.Dir, "gemini", name, vars, ""); o.stderr != "" {
			t.Errorf("%s: stderr %q", name, o.stderr)
		}
	}
	recs := readLog(t, repo)
	edits := ofType(recs, "edit")
	if len(edits) != 2 {
		t.Fatalf("edits %v", edits)
	}
	wantRecord(t, edits[0], map[string]any{"agent": geminiAgent, "turn": "t1", "paths": []string{"CONTRIBUTING.md"}})
	wantRecord(t, edits[1], map[string]any{"paths": []string{"README.md"}})
	want := []string{"agent.registered", "checkpoint.taken", "turn.started", "edit", "edit", "checkpoint.taken", "turn.ended"}
	if got := types(recs); !reflect.DeepEqual(got, want) {
		t.Errorf("records %v, want %v", got, want)
	}
}

// Cursor expects a JSON object on stdout on every path: {} is its no-op.
func TestCursorSession(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	vars := map[string]string{"CWD": repo.Dir}
	event(t, repo.Dir, "cursor", "sessionStart.json", vars, "{}\n")
	event(t, repo.Dir, "cursor", "beforeSubmitPrompt.json", vars, "{}\n")
	repo.Write("lib/helper.ts", "function assist() {}\n")
	event(t, repo.Dir, "cursor", "afterFileEdit.json", vars, "{}\n")
	o := event(t, repo.Dir, "cursor", "afterFileEdit-outside.json", vars, "{}\n")
	if !strings.Contains(o.stderr, "outside the working tree") {
		t.Errorf("outside path: stderr %q", o.stderr)
	}
	event(t, repo.Dir, "cursor", "stop.json", vars, "{}\n")
	event(t, repo.Dir, "cursor", "beforeSubmitPrompt.json", vars, "{}\n")
	event(t, repo.Dir, "cursor", "stop-aborted.json", vars, "{}\n")
	event(t, repo.Dir, "cursor", "sessionEnd.json", vars, "{}\n")
	recs := readLog(t, repo)
	edits := ofType(recs, "edit")
	if len(edits) != 1 {
		t.Fatalf("edits %v", edits)
	}
	wantRecord(t, edits[0], map[string]any{"agent": cursorAgent, "turn": "t1", "paths": []string{"lib/helper.ts"}})
	ended := ofType(recs, "turn.ended")
	if len(ended) != 2 || ended[1].str("turn") != "t2" {
		t.Errorf("turn.ended %v", ended)
	}
	wantRecord(t, ofType(recs, "turn.started")[0], map[string]any{"harness": "cursor",
		"harness_session": "668320d2-2fd3-47fa-a2f5-7e0b1a4c9d01", "harness_turn": "0b7c9e4d-1f2a-4b3c-8d5e-6f7a8b9c0d1e"})
}

// Malformed input: a message on stderr, exit 0, nothing on stdout, and in a
// repository a checkpoint.failed (the lost event may have been a capture).
func TestMalformedEvents(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/*/malformed-*.json")
	if len(files) < 8 {
		t.Fatalf("only %d malformed fixtures", len(files))
	}
	for _, f := range files {
		h, name := filepath.Base(filepath.Dir(f)), filepath.Base(f)
		t.Run(h+"/"+name, func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t)
			idle := ""
			if h == "cursor" {
				idle = "{}\n"
			}
			o := event(t, repo.Dir, h, name, map[string]string{"CWD": repo.Dir}, idle)
			if !strings.Contains(o.stderr, "malformed hook event") {
				t.Errorf("stderr %q", o.stderr)
			}
			recs := readLog(t, repo)
			if len(recs) != 1 || recs[0].str("type") != "checkpoint.failed" || recs[0].str("code") != harness.CodeMalformed {
				t.Fatalf("log %v", recs)
			}
			hh, _ := harness.Lookup(h)
			wantRecord(t, recs[0], map[string]any{"agent": hh.Prefix, "path": repo.Dir})
		})
	}

	// The session id from the environment names the agent.
	repo := newRepo(t)
	o := hook(t, repo.Dir, []byte("{not json"), []string{"claude-code"}, "CLAUDE_CODE_SESSION_ID="+claudeSession)
	recs := readLog(t, repo)
	if o.code != 0 || len(recs) != 1 || recs[0].str("agent") != claudeAgent {
		t.Errorf("exit %d, log %v", o.code, recs)
	}
}

// An event whose shape is unexpected but harmless is reported and
// otherwise ignored: no record, since no capture was lost.
func TestUnexpectedEvents(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	vars := map[string]string{"CWD": repo.Dir}
	for _, c := range []struct{ h, f, stderr string }{
		{"claude-code", "unexpected-Write-no-path.json", "names no file path"},
		{"codex", "unexpected-apply_patch-empty.json", "names no file path"},
		{"claude-code", "PostToolUse-Write-outside.json", "outside the working tree"},
	} {
		o := event(t, repo.Dir, c.h, c.f, vars, "")
		if !strings.Contains(o.stderr, c.stderr) {
			t.Errorf("%s: stderr %q, want %q", c.f, o.stderr, c.stderr)
		}
	}
	if recs := readLog(t, repo); len(recs) != 0 {
		t.Errorf("logged %v", types(recs))
	}
	// An unknown harness is an error for people, still exit 0 for hooks.
	o := hook(t, repo.Dir, []byte(`{}`), []string{"vim"})
	if o.code != 0 || o.stdout != "" || !strings.Contains(o.stderr, "unknown harness") {
		t.Errorf("unknown harness: %+v", o)
	}
}

func TestHookOutsideRepository(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"UserPromptSubmit.json", "PostToolUse-Write.json", "malformed-truncated.json"} {
		o := event(t, dir, "claude-code", name, map[string]string{"CWD": dir}, "")
		if !strings.Contains(o.stderr, "not in a git working tree") {
			t.Errorf("%s: stderr %q", name, o.stderr)
		}
	}
}

// TestHookInAFolderOutsideTheRepositorysWork: an agent started in an
// untracked folder of an enclosing repository (a project inside a
// dotfiles repository at $HOME) gets no checkpoint of that repository:
// every event, malformed ones included, exits 0 with nothing on stdout,
// says so on stderr (naming the repository), and logs and writes nothing
// (issue 13 item 14).
func TestHookInAFolderOutsideTheRepositorysWork(t *testing.T) {
	t.Parallel()
	home := newRepo(t)
	home.Write("code/project/main.go", "package main\n")
	dir := home.Path("code/project")
	refs0 := home.Refs()
	vars := map[string]string{"CWD": dir, "TRANSCRIPT": transcript(t)}
	for _, name := range []string{"UserPromptSubmit.json", "PostToolUse-Write.json", "Stop.json", "malformed-truncated.json"} {
		o := event(t, dir, "claude-code", name, vars, "")
		if !strings.Contains(o.stderr, "is no part of the repository at "+home.Dir) || !strings.Contains(o.stderr, "untracked or ignored") {
			t.Errorf("%s: stderr %q", name, o.stderr)
		}
	}
	if recs := readLog(t, home); len(recs) != 0 {
		t.Errorf("logged %v", types(recs))
	}
	if refs := home.Refs(); !reflect.DeepEqual(refs, refs0) {
		t.Errorf("refs %v, want %v", refs, refs0)
	}
}

// venom.checkpoints.enabled=false turns automatic capture off: the hooks
// take no checkpoint and record no edit.
func TestHookDisabled(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	repo.Git("config", "venom.checkpoints.enabled", "false")
	vars := map[string]string{"CWD": repo.Dir, "TRANSCRIPT": transcript(t)}
	for _, name := range []string{"SessionStart.json", "UserPromptSubmit.json", "PostToolUse-Write.json", "Stop.json", "SessionEnd.json", "malformed-truncated.json"} {
		event(t, repo.Dir, "claude-code", name, vars, "")
	}
	if recs := readLog(t, repo); len(recs) != 0 {
		t.Errorf("logged %v", types(recs))
	}
	if refs := repo.Refs(); len(refs) > 2 {
		t.Errorf("refs %v", refs)
	}
}

// A capture that cannot finish within venom.checkpoints.timeout (here: the
// agent's lock is held) lets the turn go: exit 0 soon after the timeout,
// and a checkpoint.failed.
func TestHookCaptureTimeout(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	repo.Git("config", "venom.checkpoints.timeout", "1s")
	lg, err := journal.Open(repo.GitDir)
	if err != nil {
		t.Fatal(err)
	}
	lk, err := journal.LockFile(lg.LockPath(checkpoint.AgentLock(claudeAgent)), true)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	o := event(t, repo.Dir, "claude-code", "UserPromptSubmit.json", map[string]string{"CWD": repo.Dir}, "")
	if o.elapsed > 10*time.Second {
		t.Errorf("the hook took %v with a 1s timeout", o.elapsed)
	}
	if !strings.Contains(o.stderr, "turn_start capture") {
		t.Errorf("stderr %q", o.stderr)
	}
	recs := readLog(t, repo)
	if got := types(recs); !reflect.DeepEqual(got, []string{"checkpoint.failed"}) {
		t.Fatalf("records %v", got)
	}
	wantRecord(t, recs[0], map[string]any{"agent": claudeAgent, "code": "timeout.checkpoint", "reason": "turn_start"})
}

// A harness that gives up on a hook sends SIGTERM (Claude Code does, to a
// StopFailure hook in -p mode, as it exits): the capture under way is not
// cancelled, and one that does not finish within the hook's grace second
// is cut like a crash, leaving no record, so the turn stays open and the
// session end takes its turn_end. (A cancelled capture logged
// checkpoint.failed and closed the turn with no turn_end: issue 14 item 3.)
func TestHookSIGTERMLeavesTurnOpen(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	vars := map[string]string{"CWD": repo.Dir, "TRANSCRIPT": transcript(t)}
	event(t, repo.Dir, "claude-code", "UserPromptSubmit.json", vars, "")
	// A clean filter that takes 3 s makes the turn_end capture slow; its
	// mark says when the capture is under way.
	mark := filepath.Join(t.TempDir(), "filtering")
	repo.Write(".gitattributes", "slow.txt filter=slow\n")
	repo.Git("config", "filter.slow.clean", "touch '"+mark+"'; sleep 3; cat")
	repo.Write("slow.txt", "made in the turn\n")
	cmd := exec.Command(os.Args[0], "claude-code")
	cmd.Dir, cmd.Env = repo.Dir, hookEnv()
	cmd.Stdin = bytes.NewReader(load(t, "claude-code", "StopFailure.json", vars))
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(mark); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the capture never ran the filter; stderr %q", errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if err != nil || time.Since(start) > 2500*time.Millisecond {
		t.Errorf("after SIGTERM the hook ended with %v after %v, want status 0 within its grace second", err, time.Since(start))
	}
	recs := readLog(t, repo)
	if got := ofType(recs, "checkpoint.failed"); len(got) != 0 {
		t.Errorf("checkpoint.failed after SIGTERM: %v", got)
	}
	if got := ofType(recs, "turn.ended"); len(got) != 0 {
		t.Fatalf("the cut turn_end closed the turn: %v", got)
	}
	event(t, repo.Dir, "claude-code", "SessionEnd-prompt.json", vars, "")
	recs = readLog(t, repo)
	ended := ofType(recs, "turn.ended")
	if len(ended) != 1 || ended[0].str("checkpoint") == "" {
		t.Fatalf("after SessionEnd, turn.ended records %v", ended)
	}
	if s, ok := repo.Show("refs/venom/checkpoints/"+claudeAgent+"/"+strings.TrimPrefix(ended[0].str("checkpoint"), "k"), "slow.txt"); !ok || s != "made in the turn\n" {
		t.Errorf("the session end's turn_end lacks the turn's file: %q %v", s, ok)
	}
}

// Two sessions in one tree are two agents (DESIGN.md section 6).
func TestTwoSessionsAreTwoAgents(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	vars := map[string]string{"CWD": repo.Dir}
	// GIT_VENOM_AGENT, inherited by every session of a shell, does not
	// merge them; --agent in the hook command does pin one agent.
	in := load(t, "claude-code", "UserPromptSubmit.json", vars)
	other := []byte(strings.ReplaceAll(string(in), claudeSession, "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"))
	for _, c := range []struct {
		in   []byte
		args []string
	}{
		{in, []string{"claude-code"}},
		{other, []string{"claude-code"}},
		{other, []string{"claude-code", "--agent", "pinned"}},
	} {
		if o := hook(t, repo.Dir, c.in, c.args, "GIT_VENOM_AGENT=shared"); o.code != 0 || o.stderr != "" {
			t.Fatalf("%+v", o)
		}
	}
	var agents []string
	for _, r := range ofType(readLog(t, repo), "turn.started") {
		agents = append(agents, r.str("agent")+"/"+r.str("turn"))
	}
	if want := []string{claudeAgent + "/t1", "claude-9a8b7c6d5e4f/t1", "pinned/t1"}; !reflect.DeepEqual(agents, want) {
		t.Errorf("turns %v, want %v", agents, want)
	}
}

// A session a rollback forked stays the agent it continues (agent.binding),
// and its first event confirms the binding, once.
func TestBoundSessionStaysTheAgent(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	vars := map[string]string{"CWD": repo.Dir}
	event(t, repo.Dir, "claude-code", "UserPromptSubmit.json", vars, "")
	lg, _ := journal.Open(repo.GitDir)
	fork := "5b4a3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d"
	if _, err := lg.Append(journal.Entry{Type: journal.TypeAgentBinding, Body: journal.AgentBinding{
		Agent: claudeAgent, Harness: "claude-code", HarnessSession: fork, ForkSource: claudeSession, ForkAt: "a3"}}); err != nil {
		t.Fatal(err)
	}
	forked := strings.ReplaceAll(string(load(t, "claude-code", "UserPromptSubmit.json", vars)), claudeSession, fork)
	for i := 0; i < 2; i++ {
		if o := hook(t, repo.Dir, []byte(forked), []string{"claude-code"}); o.code != 0 || o.stderr != "" {
			t.Fatalf("%+v", o)
		}
	}
	recs := readLog(t, repo)
	started := ofType(recs, "turn.started")
	if len(started) != 3 || started[2].str("agent") != claudeAgent || started[2].str("harness_session") != fork {
		t.Errorf("turns %v", started)
	}
	bs := ofType(recs, "agent.binding")
	if len(bs) != 2 {
		t.Fatalf("bindings %v", bs)
	}
	wantRecord(t, bs[1], map[string]any{"agent": claudeAgent, "harness_session": fork, "confirmed": true})
}

// fakeNotes stands in for the rollback's note store.
type fakeNotes struct {
	text      string
	delivered int
}

func (f *fakeNotes) Pending(ctx context.Context, t *checkpoint.Tree, agent, session string) (string, func() error, error) {
	if f.delivered > 0 {
		return "", nil, nil
	}
	return f.text, func() error { f.delivered++; return nil }, nil
}

// BR-58 (the hook's half): after a files-only rollback the agent's next
// prompt-submit prints the note once, on the channel each harness reads,
// and marks it delivered only after printing it. Cursor has no channel:
// the note stays pending.
func TestBR58PromptSubmitPrintsPendingNoteOnce(t *testing.T) {
	t.Parallel()
	note := "Note: the files were rolled back to their state after turn t1. Changes made after that point are gone, and what you remember of them may no longer be true."
	gem, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "BeforeAgent", "additionalContext": note}})
	for _, c := range []struct{ h, fixture, want1, want2 string }{
		{"claude-code", "UserPromptSubmit.json", note + "\n", ""},
		{"codex", "UserPromptSubmit.json", note + "\n", ""},
		{"gemini", "BeforeAgent.json", string(gem) + "\n", ""},
		{"cursor", "beforeSubmitPrompt.json", "{}\n", "{}\n"},
	} {
		repo := newRepo(t)
		h, _ := harness.Lookup(c.h)
		notes := &fakeNotes{text: note}
		in := load(t, c.h, c.fixture, map[string]string{"CWD": repo.Dir})
		for i, want := range []string{c.want1, c.want2} {
			var out, errb bytes.Buffer
			harness.Run(context.Background(), h, in, harness.Options{Stdout: &out, Stderr: &errb, Notes: notes})
			if out.String() != want || errb.Len() != 0 {
				t.Errorf("%s prompt %d: stdout %q stderr %q, want %q", c.h, i+1, out.String(), errb.String(), want)
			}
		}
		if want := map[bool]int{true: 0, false: 1}[c.h == "cursor"]; notes.delivered != want {
			t.Errorf("%s: delivered %d times, want %d", c.h, notes.delivered, want)
		}
	}
}

// BR-59: edits made through a shell command name no edit tool, so no edit
// record; the turn's checkpoints still hold them (their class is turn).
func TestBR59ShellEditsAreCapturedWithoutEditRecords(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	vars := map[string]string{"CWD": repo.Dir, "TRANSCRIPT": transcript(t)}
	event(t, repo.Dir, "claude-code", "UserPromptSubmit.json", vars, "")
	repo.Write("app.py", "x = 2\n")
	repo.Write("gen.py", "y = 3\n")
	repo.Write("notes.md", "written by a heredoc\n")
	event(t, repo.Dir, "claude-code", "PostToolUse-Bash.json", vars, "")
	event(t, repo.Dir, "claude-code", "Stop.json", vars, "")
	recs := readLog(t, repo)
	if e := ofType(recs, "edit"); len(e) != 0 {
		t.Errorf("edit records for shell edits: %v", e)
	}
	k2 := "refs/venom/checkpoints/" + claudeAgent + "/2"
	for p, want := range map[string]string{"app.py": "x = 2\n", "gen.py": "y = 3\n", "notes.md": "written by a heredoc\n"} {
		if got, _ := repo.Show(k2, p); got != want {
			t.Errorf("k2:%s = %q, want %q", p, got, want)
		}
	}
}

// Parallel tool calls run their hooks at once: no record is lost or torn,
// no checkpoint id is used twice, and the log's seq has no gap.
func TestHookConcurrency(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	vars := map[string]string{"CWD": repo.Dir}
	const edits, sessions = 32, 6
	write := string(load(t, "claude-code", "PostToolUse-Write.json", vars))
	prompt := string(load(t, "claude-code", "UserPromptSubmit.json", vars))
	event(t, repo.Dir, "claude-code", "UserPromptSubmit.json", vars, "")

	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
	run := func(in string) {
		defer wg.Done()
		o := hook(t, repo.Dir, []byte(in), []string{"claude-code"})
		if o.code != 0 || o.stdout != "" || o.stderr != "" {
			mu.Lock()
			bad = append(bad, fmt.Sprintf("%+v", o))
			mu.Unlock()
		}
	}
	for i := 0; i < edits; i++ {
		p := fmt.Sprintf("src/gen/f%02d.py", i)
		repo.Write(p, fmt.Sprintf("v = %d\n", i))
		wg.Add(1)
		go run(strings.ReplaceAll(write, "src/factorial.py", p))
	}
	for i := 0; i < sessions; i++ {
		s := fmt.Sprintf("%08d-0000-4000-8000-000000000000", i)
		for j := 0; j < 2; j++ { // two prompts of one session at once: one agent, serialised
			wg.Add(1)
			go run(strings.ReplaceAll(prompt, claudeSession, s))
		}
	}
	wg.Wait()
	if len(bad) > 0 {
		t.Fatalf("%d hooks misbehaved: %v", len(bad), bad)
	}

	lg, _ := journal.Open(repo.GitDir)
	raw, torn, err := lg.ReadAll()
	if err != nil || torn {
		t.Fatalf("log: torn %v, %v", torn, err)
	}
	for i, r := range raw {
		if r.Seq != int64(i+1) {
			t.Fatalf("record %d has seq %d", i+1, r.Seq)
		}
	}
	st, err := lg.Load()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range st.Agents[claudeAgent].Edits {
		if e.Turn != "t1" {
			t.Errorf("edit %v outside t1", e)
		}
		got = append(got, e.Paths...)
	}
	sort.Strings(got)
	if len(got) != edits || got[0] != "src/gen/f00.py" || got[edits-1] != fmt.Sprintf("src/gen/f%02d.py", edits-1) {
		t.Errorf("%d edit paths recorded, want %d: %v", len(got), edits, got)
	}
	refs := repo.Refs()
	for id, a := range st.Agents {
		seen := map[string]bool{}
		for _, c := range a.Checkpoints {
			if seen[c.ID()] {
				t.Errorf("%s: checkpoint id %s used twice", id, c.ID())
			}
			seen[c.ID()] = true
			if refs["refs/venom/checkpoints/"+id+"/"+strings.TrimPrefix(c.ID(), "k")] != c.Rec.Repos[0].Commit {
				t.Errorf("%s/%s: ref does not hold the logged commit", id, c.ID())
			}
		}
		if id != claudeAgent && (len(a.Turns) != 2 || a.Turns[0].EndSeq == 0 || !a.Turns[0].Synthetic) {
			t.Errorf("%s: turns %+v, want t1 ended synthetically by t2", id, a.Turns)
		}
	}
	if len(st.Agents) != sessions+1 {
		t.Errorf("%d agents, want %d", len(st.Agents), sessions+1)
	}
}

// Issue 14 item 6: Codex sets CODEX_THREAD_ID in its tool shells, never in
// a hook's environment, so it is no session fallback: an event that cannot
// be read is logged under the bare prefix even when the variable is set
// (as in an agent's shell), and a Codex event is read by its session_id.
func TestCodexThreadIDIsNoSessionFallback(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	o := hook(t, repo.Dir, []byte("{not json"), []string{"codex"}, "CODEX_THREAD_ID="+codexSession)
	recs := readLog(t, repo)
	if o.code != 0 || len(recs) != 1 || recs[0].str("agent") != "codex" {
		t.Errorf("exit %d, log %v: want one checkpoint.failed of agent codex", o.code, recs)
	}
}

// TestTurnStaysInTheSuperproject: a Claude Code session whose cwd moved
// into a submodule after its turn started (the agent ran `cd lib`) keeps
// its turn in the superproject's log: the Stop there ends the turn, and
// the submodule's own log records nothing. Before, the turn_end went to
// the submodule's log and the superproject's turn stayed open.
func TestTurnStaysInTheSuperproject(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	lib, _ := repo.Submodules()
	top := map[string]string{"CWD": repo.Dir, "TRANSCRIPT": transcript(t)}
	sub := map[string]string{"CWD": lib.Dir, "TRANSCRIPT": top["TRANSCRIPT"]}
	event(t, repo.Dir, "claude-code", "UserPromptSubmit.json", top, "")
	lib.Write("l", "the agent's\n")
	event(t, lib.Dir, "claude-code", "Stop.json", sub, "")
	var reasons []string
	for _, r := range ofType(readLog(t, repo), "checkpoint.taken") {
		reasons = append(reasons, r.str("reason"))
	}
	if !reflect.DeepEqual(reasons, []string{"turn_start", "turn_end"}) {
		t.Errorf("the superproject's checkpoints: %v, want turn_start, turn_end", reasons)
	}
	if recs := readLog(t, lib); len(recs) != 0 {
		t.Errorf("the submodule's own log: %v, want nothing", types(recs))
	}
}
