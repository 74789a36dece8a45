package harness

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/refs"
)

func TestAgentID(t *testing.T) {
	for _, c := range []struct{ prefix, session, want string }{
		{"claude", "0d3c8b1e-7f2a-4c39-9a57-1b2c3d4e5f60", "claude-0d3c8b1e7f2a"},
		{"claude", "0D3C8B1E-7F2A-4C39-9A57-1B2C3D4E5F60", "claude-0d3c8b1e7f2a"},
		// A version 7 UUID starts with a millisecond timestamp: use its tail.
		{"codex", "019dba93-8214-7d50-a089-9690b4ce6b9e", "codex-9690b4ce6b9e"},
		{"cursor", "conv-42", "cursor-conv-42"},
		{"gemini", "", "gemini"},
		// Not a ref component as given: hashed, stable.
		{"cursor", "Conv 42/x", "cursor-" + hash12("Conv 42/x")},
		{"cursor", strings.Repeat("a", 40), "cursor-" + hash12(strings.Repeat("a", 40))},
	} {
		got := AgentID(c.prefix, c.session)
		if got != c.want {
			t.Errorf("AgentID(%q, %q) = %q, want %q", c.prefix, c.session, got, c.want)
		}
		if err := refs.ValidAgent(got); err != nil {
			t.Errorf("AgentID(%q, %q) = %q: %v", c.prefix, c.session, got, err)
		}
	}
	if AgentID("claude", "a-b") == AgentID("claude", "b-a") {
		t.Error("two sessions gave one agent")
	}
}

func hash12(s string) string {
	return fmt.Sprintf("%x", sha256.Sum256([]byte(s)))[:12]
}

func TestPatchPaths(t *testing.T) {
	patch := "*** Begin Patch\n*** Add File: src/new.py\n+x\n*** Update File: src/app.py\n@@\n-a\n+b\n" +
		"*** Update File: docs/old.md\n*** Move to: docs/new.md\n*** Delete File: gone.txt\r\n" +
		"*** Update File: docs/patch.md\n@@ ## example\n *** Delete File: precious.txt\n-old\n+*** Add File: x\n" +
		"*** Update File: src/app.py\n*** End Patch\n"
	want := []string{"src/new.py", "src/app.py", "docs/old.md", "docs/new.md", "gone.txt", "docs/patch.md"}
	if got := PatchPaths(patch); !reflect.DeepEqual(got, want) {
		t.Errorf("PatchPaths = %q, want %q (a hunk's lines name no file)", got, want)
	}
	// A whole patch indented, as in a heredoc: its headers are too.
	indented := "  *** Begin Patch\n  *** Add File: /abs/indented.txt\n  +y\n   *** Delete File: context.txt\n  *** End Patch\n"
	if got := PatchPaths(indented); !reflect.DeepEqual(got, []string{"/abs/indented.txt"}) {
		t.Errorf("PatchPaths of an indented patch = %q", got)
	}
	if got := PatchPaths("no headers here"); got != nil {
		t.Errorf("PatchPaths of no patch = %q", got)
	}
}

func TestLastAssistant(t *testing.T) {
	uuid, text, err := LastAssistant("testdata/claude-code/transcript.jsonl")
	if err != nil || uuid != "a3" || text != "I've written factorial() in src/factorial.py." {
		t.Fatalf("LastAssistant = %q, %q, %v; want a3 and its text", uuid, text, err)
	}

	dir := t.TempDir()
	// A torn last line (being written) is not an entry; a sidechain entry
	// is a subagent's.
	p := filepath.Join(dir, "t.jsonl")
	write(t, p, `{"type":"assistant","uuid":"x1","message":{"content":"first"}}`+"\n"+
		`{"type":"assistant","uuid":"x2","isSidechain":true,"message":{"content":"side"}}`+"\n"+
		`{"type":"assistant","uuid":"x3","message":{"content":"tor`)
	if uuid, text, _ := LastAssistant(p); uuid != "x1" || text != "first" {
		t.Errorf("torn/sidechain: got %q %q, want x1 first", uuid, text)
	}

	// Lines longer than the 64 KiB read chunk, and an entry cut by a chunk
	// boundary.
	big := strings.Repeat("z", 100<<10)
	var b strings.Builder
	b.WriteString(`{"type":"assistant","uuid":"early","message":{"content":[{"type":"text","text":"` + big + `"}]}}` + "\n")
	b.WriteString(`{"type":"user","uuid":"u9","message":{"content":"` + big + `"}}` + "\n")
	b.WriteString(`{"type":"assistant","uuid":"late","message":{"content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"done"}]}}` + "\n")
	b.WriteString(`{"type":"user","uuid":"u10","message":{"content":"` + big + `"}}` + "\n")
	write(t, p, b.String())
	if uuid, text, _ := LastAssistant(p); uuid != "late" || text != "done" {
		t.Errorf("chunked: got %q %q, want late done", uuid, text)
	}

	write(t, p, `{"type":"user","uuid":"u1","message":{"content":"hi"}}`+"\n")
	if uuid, _, err := LastAssistant(p); uuid != "" || err != nil {
		t.Errorf("no assistant line: got %q, %v", uuid, err)
	}
	if _, _, err := LastAssistant(filepath.Join(dir, "missing.jsonl")); !os.IsNotExist(err) {
		t.Errorf("missing transcript: err %v, want not-exist", err)
	}
}

// The transcript is written asynchronously and may lag the Stop hook: the
// hook waits a little for the entry that holds the turn's last message,
// and never records an earlier turn's id.
func TestClaudeEndWaitsForLaggingTranscript(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	write(t, p, `{"type":"assistant","uuid":"old","message":{"content":"previous turn"}}`+"\n")
	ev := &Event{Transcript: p, LastMessage: "this turn's answer"}
	// The line arrives 60 ms after the wait began; a loaded machine can
	// delay that write past the real 200 ms bound, so the bound is long
	// here: claudeEnd returns as soon as the line is there.
	wait := transcriptWait
	transcriptWait = 30 * time.Second
	go func() {
		time.Sleep(60 * time.Millisecond)
		f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		fmt.Fprintln(f, `{"type":"assistant","uuid":"new","message":{"content":[{"type":"text","text":"this turn's answer"}]}}`)
		f.Close()
	}()
	if got, pending, err := claudeEnd(context.Background(), ev); got != "new" || pending != nil || err != nil {
		t.Errorf("claudeEnd = %q, %+v, %v; want new", got, pending, err)
	}

	// A transcript that never catches up: claudeEnd gives up at its bound.
	transcriptWait = wait
	ev.LastMessage = "  not written yet\n"
	start := time.Now()
	got, pending, err := claudeEnd(context.Background(), ev)
	if got != "" || err == nil {
		t.Errorf("claudeEnd with a transcript that never catches up = %q, %v; want no id and an error", got, err)
	}
	want := journal.EndPending{Transcript: p, After: "new", TextSHA256: textHash("not written yet")}
	if pending == nil || *pending != want {
		t.Errorf("pending = %+v, want %+v", pending, want)
	}
	if d := time.Since(start); d < transcriptWait {
		t.Errorf("claudeEnd gave up after %v, before its bound of %v", d, transcriptWait)
	}

	// No transcript (yet): no id, no error.
	ev.Transcript = filepath.Join(t.TempDir(), "none.jsonl")
	if got, pending, err := claudeEnd(context.Background(), ev); got != "" || pending != nil || err != nil {
		t.Errorf("missing transcript: %q, %+v, %v", got, pending, err)
	}
}

// A turn's end the Stop hook could not see is found once the transcript has
// caught up: the first entry after the one the hook saw whose text is the
// turn's last message, never an earlier or a later turn's.
func TestResolveEnd(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	lines := []string{
		`{"type":"user","uuid":"p1","message":{"content":"first"}}`,
		`{"type":"assistant","uuid":"a1","message":{"content":[{"type":"text","text":"Done."}]}}`,
		`{"type":"user","uuid":"p2","message":{"content":"second"}}`,
		`{"type":"assistant","uuid":"a2-side","isSidechain":true,"message":{"content":"Done."}}`,
		`{"type":"assistant","uuid":"a2-tool","message":{"content":[{"type":"tool_use","name":"Edit"}]}}`,
		`not json`,
		`{"type":"assistant","uuid":"a2","message":{"content":"Done."}}`,
		`{"type":"user","uuid":"p3","message":{"content":"third"}}`,
		`{"type":"assistant","uuid":"a3","message":{"content":"Done."}}`,
	}
	write(t, p, strings.Join(lines, "\n")+"\n")
	done := textHash("Done.")
	for _, tc := range []struct {
		name    string
		harness string
		p       *journal.EndPending
		want    string
	}{
		{"after the previous turn's end", "claude-code", &journal.EndPending{Transcript: p, After: "a1", TextSHA256: done}, "a2"},
		{"after this turn's tool call", "claude-code", &journal.EndPending{Transcript: p, After: "a2-tool", TextSHA256: done}, "a2"},
		{"empty transcript at Stop", "claude-code", &journal.EndPending{Transcript: p, TextSHA256: done}, "a1"},
		{"text not there yet", "claude-code", &journal.EndPending{Transcript: p, After: "a1", TextSHA256: textHash("other")}, ""},
		{"anchor never written", "claude-code", &journal.EndPending{Transcript: p, After: "zz", TextSHA256: done}, ""},
		{"transcript gone", "claude-code", &journal.EndPending{Transcript: p + ".gone", TextSHA256: done}, ""},
		{"no hash", "claude-code", &journal.EndPending{Transcript: p, After: "a1"}, ""},
		{"another harness", "codex", &journal.EndPending{Transcript: p, After: "a1", TextSHA256: done}, ""},
		{"nothing pending", "claude-code", nil, ""},
	} {
		if got := ResolveEnd(tc.harness, tc.p); got != tc.want {
			t.Errorf("%s: ResolveEnd = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Every fixture parses to the event the DESIGN.md section 6 table maps it
// to; the malformed ones are errors.
func TestParseFixtures(t *testing.T) {
	want := map[string]struct {
		kind  Kind
		paths []string
	}{
		"claude-code/SessionStart.json":              {SessionStart, nil},
		"claude-code/UserPromptSubmit.json":          {TurnStart, nil},
		"claude-code/PostToolUse-Write.json":         {Edit, []string{"{{CWD}}/src/factorial.py"}},
		"claude-code/PostToolUse-Edit.json":          {Edit, []string{"{{CWD}}/README.md"}},
		"claude-code/PostToolUse-MultiEdit.json":     {Edit, []string{"{{CWD}}/src/util.py"}},
		"claude-code/PostToolUse-NotebookEdit.json":  {Edit, []string{"{{CWD}}/analysis.ipynb"}},
		"claude-code/PostToolUse-Write-outside.json": {Edit, []string{"/etc/venom-not-here.txt"}},
		"claude-code/PostToolUse-Bash.json":          {Ignore, nil},
		"claude-code/Notification.json":              {Ignore, nil},
		"claude-code/PreToolUse-Bash.json":           {PreTool, nil},
		"claude-code/PreToolUse-Read.json":           {PreTool, nil},
		"codex/PreToolUse-Bash.json":                 {PreTool, nil},
		"codex/PreToolUse-apply_patch.json":          {PreTool, nil},
		"gemini/BeforeTool-run_shell_command.json":   {PreTool, nil},
		"gemini/BeforeTool-write_file.json":          {PreTool, nil},
		"claude-code/Stop.json":                      {TurnEnd, nil},
		"claude-code/StopFailure.json":               {TurnEnd, nil},
		"claude-code/SessionEnd.json":                {SessionEnd, nil},
		"claude-code/SessionEnd-prompt.json":         {SessionEnd, nil},
		"claude-code/unexpected-Write-no-path.json":  {Edit, nil},
		"codex/SessionStart.json":                    {SessionStart, nil},
		"codex/UserPromptSubmit.json":                {TurnStart, nil},
		"codex/PostToolUse-apply_patch.json":         {Edit, []string{"src/new_module.py", "src/app.py", "docs/old_name.md", "docs/new_name.md", "obsolete.txt"}},
		"codex/PostToolUse-Bash-apply_patch.json":    {Edit, []string{"{{CWD}}/abs/added.txt"}},
		"codex/PostToolUse-Bash.json":                {Ignore, nil},
		"codex/Stop.json":                            {TurnEnd, nil},
		"codex/Interrupt.json":                       {TurnEnd, nil},
		"codex/SessionEnd.json":                      {SessionEnd, nil},
		"codex/notify-agent-turn-complete.json":      {TurnEnd, nil},
		"codex/unexpected-apply_patch-empty.json":    {Edit, nil},
		"gemini/SessionStart.json":                   {SessionStart, nil},
		"gemini/BeforeAgent.json":                    {TurnStart, nil},
		"gemini/AfterTool-write_file.json":           {Edit, []string{"{{CWD}}/CONTRIBUTING.md"}},
		"gemini/AfterTool-replace.json":              {Edit, []string{"README.md"}},
		"gemini/AfterTool-run_shell_command.json":    {Ignore, nil},
		"gemini/AfterAgent.json":                     {TurnEnd, nil},
		"gemini/SessionEnd.json":                     {SessionEnd, nil},
		"cursor/sessionStart.json":                   {SessionStart, nil},
		"cursor/beforeSubmitPrompt.json":             {TurnStart, nil},
		"cursor/afterFileEdit.json":                  {Edit, []string{"{{CWD}}/lib/helper.ts"}},
		"cursor/afterFileEdit-outside.json":          {Edit, []string{"/etc/venom-not-here.txt"}},
		"cursor/stop.json":                           {TurnEnd, nil},
		"cursor/stop-aborted.json":                   {TurnEnd, nil},
		"cursor/sessionEnd.json":                     {SessionEnd, nil},
		"claude-code/malformed-array.json":           {-1, nil},
		"claude-code/malformed-empty.json":           {-1, nil},
		"claude-code/malformed-no-event.json":        {-1, nil},
		"claude-code/malformed-truncated.json":       {-1, nil},
		"claude-code/malformed-wrong-type.json":      {-1, nil},
		"codex/malformed-not-json.json":              {-1, nil},
		"codex/malformed-truncated.json":             {-1, nil},
		"gemini/malformed-no-event.json":             {-1, nil},
		"gemini/malformed-truncated.json":            {-1, nil},
		"cursor/malformed-truncated.json":            {-1, nil},
		"cursor/malformed-wrong-type.json":           {-1, nil},
	}
	files, _ := filepath.Glob("testdata/*/*.json")
	for _, f := range files {
		name := strings.TrimPrefix(filepath.ToSlash(f), "testdata/")
		w, ok := want[name]
		if !ok {
			t.Errorf("fixture %s has no expectation here", name)
			continue
		}
		h, _ := Lookup(filepath.Base(filepath.Dir(f)))
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := h.Parse(data)
		if w.kind == -1 {
			if err == nil {
				t.Errorf("%s: parsed as %v, want an error", name, ev.Kind)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if ev.Kind != w.kind || !reflect.DeepEqual(ev.Paths, w.paths) {
			t.Errorf("%s: kind %v paths %q, want %v %q", name, ev.Kind, ev.Paths, w.kind, w.paths)
		}
		if ev.Kind != Ignore && ev.Session == "" {
			t.Errorf("%s: no session id", name)
		}
	}
	if len(files) != len(want) {
		t.Errorf("%d fixtures, %d expectations", len(files), len(want))
	}
}

// FuzzParse: no input makes an adapter panic; an accepted event always has
// a name.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.json")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"hook_event_name":"PostToolUse","tool_name":"apply_patch","tool_input":["x"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, h := range all {
			ev, err := h.Parse(data)
			if err == nil && ev.Name == "" {
				t.Errorf("%s accepted an event with no name: %q", h.Name, data)
			}
		}
	})
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A transcript_path that names a FIFO (or any file that is not regular) is
// not opened: opening a FIFO for reading waits for a writer, for good.
func TestLastAssistantRefusesAFifo(t *testing.T) {
	p := filepath.Join(t.TempDir(), "transcript.jsonl")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := LastAssistant(p)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("LastAssistant read a FIFO")
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("LastAssistant blocked on a FIFO")
	}
	if got := ResolveEnd("claude-code", &journal.EndPending{Transcript: p, TextSHA256: textHash("x")}); got != "" {
		t.Errorf("ResolveEnd on a FIFO = %q", got)
	}
}
