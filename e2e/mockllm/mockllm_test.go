package mockllm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func start(t *testing.T, o Options) *Server {
	t.Helper()
	s, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func post(t *testing.T, s *Server, path string, body any) (int, []byte) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(s.URL()+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// sseData returns the data: payloads of an event stream, decoded.
func sseData(t *testing.T, raw []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		d, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || d == "[DONE]" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(d), &m); err != nil {
			t.Fatalf("data line %q: %v", d, err)
		}
		out = append(out, m)
	}
	return out
}

func TestParseScript(t *testing.T) {
	got := ParseScript("first [[venom-e2e: say old]] then [[venom-e2e: write /a b c ;; bash echo x > y ;;  ;; say All done.]]")
	want := []Step{{"write", "/a b c"}, {"bash", "echo x > y"}, {"say", "All done."}}
	if len(got) != len(want) {
		t.Fatalf("ParseScript = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d = %q, want %q", i, got[i], want[i])
		}
	}
	if ParseScript("no script here") != nil {
		t.Error("a text without a script has steps")
	}
	if s := next(want, 7); s != (Step{"say", "All done."}) {
		t.Errorf("after the last step: %q, want the last say", s)
	}
}

// An Anthropic turn: a Write, then a Bash, then the text, each answer
// following the tool calls already in the conversation.
func TestAnthropicTurn(t *testing.T) {
	s := start(t, Options{})
	prompt := "go [[venom-e2e: write /r/a.txt hello ;; bash echo hi ;; say Turn done.]]"
	tools := []any{map[string]any{"name": "Write"}, map[string]any{"name": "Bash"}}
	msgs := []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": prompt}}}}
	code, out := post(t, s, "/v1/messages", map[string]any{"model": "m", "tools": tools, "messages": msgs})
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil || code != 200 {
		t.Fatalf("status %d, body %s", code, out)
	}
	blk := obj(arr(m["content"])[0])
	if blk["name"] != "Write" || obj(blk["input"])["file_path"] != "/r/a.txt" || obj(blk["input"])["content"] != "hello\n" || m["stop_reason"] != "tool_use" {
		t.Fatalf("first answer: %s", out)
	}
	msgs = append(msgs, map[string]any{"role": "assistant", "content": []any{blk}},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": blk["id"], "content": "ok"}}})
	// The second answer, streamed: the Bash call as an input_json_delta.
	_, out = post(t, s, "/v1/messages", map[string]any{"model": "m", "tools": tools, "messages": msgs, "stream": true})
	var name, partial string
	for _, ev := range sseData(t, out) {
		if cb := obj(ev["content_block"]); cb != nil {
			name = str(cb["name"])
		}
		if d := obj(ev["delta"]); d != nil && d["partial_json"] != nil {
			partial = str(d["partial_json"])
		}
	}
	if name != "Bash" || !strings.Contains(partial, `"command":"echo hi"`) {
		t.Fatalf("second answer: tool %q input %q\n%s", name, partial, out)
	}
	msgs = append(msgs, map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "name": "Bash"}}})
	_, out = post(t, s, "/v1/messages", map[string]any{"model": "m", "tools": tools, "messages": msgs})
	if !strings.Contains(string(out), `"text":"Turn done."`) || !strings.Contains(string(out), `"end_turn"`) {
		t.Fatalf("third answer: %s", out)
	}
	// A side request (no tools) gets a plain answer.
	_, out = post(t, s, "/v1/messages", map[string]any{"model": "m", "messages": msgs})
	if !strings.Contains(string(out), `"text":"ok"`) {
		t.Fatalf("side request: %s", out)
	}
	if s.Seq() != 4 {
		t.Fatalf("Seq = %d, want 4", s.Seq())
	}
	c := s.LastConvo(0, "anthropic")
	if !Scripted(c) || c[0].Text != prompt || c[1].Text != `TOOL_USE Write {"content":"hello\n","file_path":"/r/a.txt"}` {
		t.Fatalf("LastConvo:\n%s", Text(c))
	}
	if s.LastConvo(4, "") != nil {
		t.Fatal("LastConvo after the last request is not nil")
	}
}

func TestAnthropicFail(t *testing.T) {
	s := start(t, Options{})
	code, out := post(t, s, "/v1/messages", map[string]any{"tools": []any{map[string]any{"name": "Write"}},
		"messages": []any{map[string]any{"role": "user", "content": "x [[venom-e2e: fail 529]]"}}})
	if code != 529 || !strings.Contains(string(out), "invalid_request_error") {
		t.Fatalf("status %d body %s", code, out)
	}
}

// Responses: apply_patch as the custom tool Codex offers, exec_command for
// the shell, a streamed message at the end.
func TestResponsesTurn(t *testing.T) {
	s := start(t, Options{})
	tools := []any{map[string]any{"type": "custom", "name": "apply_patch"}, map[string]any{"type": "function", "name": "exec_command"}}
	input := []any{map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text",
		"text": "t [[venom-e2e: write a.txt hi ;; bash echo x > b ;; say Fin.]]"}}}}
	items := func(out []byte) map[string]any {
		for _, ev := range sseData(t, out) {
			if ev["type"] == "response.output_item.done" {
				return obj(ev["item"])
			}
		}
		t.Fatalf("no output item in %s", out)
		return nil
	}
	_, out := post(t, s, "/v1/responses", map[string]any{"tools": tools, "input": input})
	it := items(out)
	if it["type"] != "custom_tool_call" || !strings.Contains(str(it["input"]), "*** Add File: a.txt\n+hi\n") {
		t.Fatalf("first item %v", it)
	}
	input = append(input, it)
	_, out = post(t, s, "/v1/responses", map[string]any{"tools": tools, "input": input})
	it = items(out)
	if it["name"] != "exec_command" || it["arguments"] != `{"cmd":"echo x > b"}` {
		t.Fatalf("second item %v", it)
	}
	input = append(input, it)
	_, out = post(t, s, "/v1/responses", map[string]any{"tools": tools, "input": input})
	if it = items(out); str(obj(arr(it["content"])[0])["text"]) != "Fin." {
		t.Fatalf("third item %v", it)
	}
	// Without apply_patch, a write goes through the shell.
	_, out = post(t, s, "/v1/responses", map[string]any{"tools": []any{map[string]any{"name": "shell"}},
		"input": "s [[venom-e2e: write c.txt yo]]"})
	if it = items(out); it["name"] != "shell" || !strings.Contains(str(it["arguments"]), "apply_patch <<'EOF'") {
		t.Fatalf("shell fallback %v", it)
	}
}

// TestPromptConvo: after a turn's request, codex's title request quotes the
// prompt in its own text; LastConvo picks it, PromptConvo the turn's.
func TestPromptConvo(t *testing.T) {
	s := start(t, Options{})
	prompt := "Terminal turn. [[venom-e2e: say Done.]]"
	msg := func(role, text string) map[string]any {
		return map[string]any{"type": "message", "role": role, "content": []any{map[string]any{"type": "input_text", "text": text}}}
	}
	post(t, s, "/v1/responses", map[string]any{"tools": []any{map[string]any{"name": "shell"}},
		"input": []any{msg("user", "remember APPLE"), msg("user", prompt)}})
	post(t, s, "/v1/responses", map[string]any{"input": []any{msg("user", "Generate a concise, single-line task title.\n\nUser prompt:\n"+prompt)}})
	if c := s.LastConvo(0, "responses"); len(c) != 1 {
		t.Fatalf("LastConvo is not the title request:\n%s", Text(c))
	}
	c := s.PromptConvo(0, "responses", prompt)
	if len(c) != 2 || c[0].Text != "remember APPLE" || c[1].Text != prompt {
		t.Fatalf("PromptConvo:\n%s", Text(c))
	}
	if c := s.PromptConvo(0, "responses", "another prompt"); c != nil {
		t.Fatalf("PromptConvo of a prompt never sent:\n%s", Text(c))
	}
}

func TestChatTurn(t *testing.T) {
	s := start(t, Options{})
	_, out := post(t, s, "/v1/chat/completions", map[string]any{"tools": []any{map[string]any{"function": map[string]any{"name": "shell"}}},
		"messages": []any{map[string]any{"role": "user", "content": "c [[venom-e2e: bash ls ;; say ok then]]"}}})
	d := sseData(t, out)
	if len(d) != 2 || !strings.Contains(string(out), `"name":"shell"`) || !strings.HasSuffix(string(out), "data: [DONE]\n\n") {
		t.Fatalf("chat answer %s", out)
	}
}

func TestGeminiTurn(t *testing.T) {
	s := start(t, Options{})
	tools := []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "replace"}}}}
	contents := []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "g [[venom-e2e: edit /f old new ;; say G done.]]"}}}}
	_, out := post(t, s, "/v1beta/models/m:streamGenerateContent?alt=sse", map[string]any{"tools": tools, "contents": contents})
	d := sseData(t, out)
	part := obj(arr(obj(obj(arr(d[0]["candidates"])[0])["content"])["parts"])[0])
	fc := obj(part["functionCall"])
	if fc["name"] != "replace" || obj(fc["args"])["old_string"] != "old" || obj(fc["args"])["new_string"] != "new" {
		t.Fatalf("gemini answer %s", out)
	}
	contents = append(contents, map[string]any{"role": "model", "parts": []any{part}})
	_, out = post(t, s, "/v1beta/models/m:generateContent", map[string]any{"tools": tools, "contents": contents})
	if !strings.Contains(string(out), `"text":"G done."`) {
		t.Fatalf("gemini second answer %s", out)
	}
	// A JSON side request gets a value of its schema.
	_, out = post(t, s, "/v1beta/models/m:generateContent", map[string]any{"generationConfig": map[string]any{
		"responseMimeType": "application/json", "responseJsonSchema": map[string]any{"type": "object", "properties": map[string]any{
			"next_speaker": map[string]any{"type": "string", "enum": []any{"user", "model"}}, "n": map[string]any{"type": "integer"}}}}})
	if !strings.Contains(string(out), `{\"n\":10,\"next_speaker\":\"user\"}`) {
		t.Fatalf("gemini JSON side request %s", out)
	}
	if c := s.LastConvo(0, "gemini"); len(c) != 2 || !strings.HasPrefix(c[1].Text, `FUNCTION_CALL {"args"`) {
		t.Fatalf("gemini LastConvo:\n%s", Text(c))
	}
}

// The server stops by itself: after MaxRequests, and after its Lifetime.
func TestLimits(t *testing.T) {
	s := start(t, Options{MaxRequests: 2})
	post(t, s, "/v1/messages", map[string]any{})
	post(t, s, "/v1/messages", map[string]any{})
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the server still runs after MaxRequests")
	}
	if _, err := http.Post(s.URL()+"/v1/messages", "application/json", strings.NewReader("{}")); err == nil {
		t.Fatal("a request after MaxRequests was answered")
	}
	s2 := start(t, Options{Lifetime: 50 * time.Millisecond})
	select {
	case <-s2.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the server still runs after its Lifetime")
	}
	if _, err := Start(Options{Addr: "0.0.0.0:0"}); err == nil {
		t.Fatal("a server on 0.0.0.0 started")
	}
}

func TestLogDir(t *testing.T) {
	dir := t.TempDir()
	s := start(t, Options{LogDir: dir})
	post(t, s, "/v1/responses", map[string]any{"input": "hello"})
	b, err := os.ReadFile(filepath.Join(dir, "0001-responses.json"))
	if err != nil || !strings.Contains(string(b), `"input": "hello"`) {
		t.Fatalf("request file: %v %s", err, b)
	}
	b, _ = os.ReadFile(filepath.Join(dir, "requests.jsonl"))
	if !strings.Contains(string(b), `"api":"responses"`) {
		t.Fatalf("requests.jsonl: %s", b)
	}
}
