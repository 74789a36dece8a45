package e2etest

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// MockAnthropicKey is the API key Claude Code is given; the mock accepts
// any. Its last 20 characters are what Claude Code's key-approval record
// holds.
const MockAnthropicKey = "sk-ant-e2e-mock-key-0000"

// Claude is Claude Code in an Env: its binary, and the environment it runs
// with (the mock as ANTHROPIC_BASE_URL, no telemetry, no updater; as root,
// IS_SANDBOX=1, without which --permission-mode bypassPermissions is
// refused).
type Claude struct {
	e   *Env
	Bin string
	Env []string
}

// Claude sets Claude Code up in e.
func (e *Env) Claude() *Claude {
	e.T.Helper()
	c := &Claude{e: e, Bin: ClientBin(e.T, "claude")}
	c.Env = append(e.BaseEnv(), "ANTHROPIC_BASE_URL="+e.Mock.URL(), "ANTHROPIC_API_KEY="+MockAnthropicKey,
		"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_ERROR_REPORTING=1")
	if os.Geteuid() == 0 {
		c.Env = append(c.Env, "IS_SANDBOX=1")
	}
	return c
}

// ClaudeResult is the JSON a `claude -p --output-format json` run prints,
// the fields the tests read, and the run itself.
type ClaudeResult struct {
	Result
	SessionID string `json:"session_id"`
	Text      string `json:"result"`
	IsError   bool   `json:"is_error"`
	Subtype   string `json:"subtype"`
}

// Print runs `claude <args...> --permission-mode bypassPermissions
// --output-format json` in the repository, stdin closed, and decodes its
// result. args holds -p and the prompt (and --resume, ...). A result that
// is not JSON leaves the fields empty.
func (c *Claude) Print(args ...string) ClaudeResult {
	c.e.T.Helper()
	argv := append(append([]string{}, args...), "--permission-mode", "bypassPermissions", "--output-format", "json")
	r := c.e.Run(RunOpts{Env: c.Env}, c.Bin, argv...)
	r.Cmd = "claude " + shellQuote(argv)
	out := ClaudeResult{Result: r}
	_ = json.Unmarshal([]byte(strings.TrimSpace(r.Stdout)), &out)
	out.Result = r
	return out
}

// AcceptDialogs pre-accepts what Claude Code asks a person at a terminal
// the first time (onboarding, the API key, the folder's trust dialog) in
// the Env's ~/.claude.json, so an interactive run goes straight to the
// prompt.
func (c *Claude) AcceptDialogs() {
	c.e.T.Helper()
	p := filepath.Join(c.e.Home, ".claude.json")
	d := map[string]any{}
	if b, err := os.ReadFile(p); err == nil {
		_ = json.Unmarshal(b, &d)
	}
	d["hasCompletedOnboarding"] = true
	d["customApiKeyResponses"] = map[string]any{"approved": []string{MockAnthropicKey[len(MockAnthropicKey)-20:]}, "rejected": []string{}}
	projects, _ := d["projects"].(map[string]any)
	if projects == nil {
		projects = map[string]any{}
	}
	projects[c.e.Repo] = map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}
	d["projects"] = projects
	b, _ := json.MarshalIndent(d, "", " ")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		c.e.T.Fatal(err)
	}
}

// Transcript is the path of a Claude Code session's transcript in the
// Env's home, "" when there is none.
func (c *Claude) Transcript(session string) string {
	m, _ := filepath.Glob(filepath.Join(c.e.Home, ".claude", "projects", "*", session+".jsonl"))
	if len(m) == 0 {
		return ""
	}
	return m[0]
}

// TranscriptEntry is the part of a transcript line the tests read.
type TranscriptEntry struct {
	Type        string `json:"type"`
	UUID        string `json:"uuid"`
	ParentUUID  string `json:"parentUuid"`
	IsSidechain bool   `json:"isSidechain"`
	SessionID   string `json:"sessionId"`
	PromptID    string `json:"promptId"`
}

// TranscriptEntries reads a transcript's lines that parse.
func TranscriptEntries(t *testing.T, path string) []TranscriptEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []TranscriptEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var te TranscriptEntry
		if json.Unmarshal(sc.Bytes(), &te) == nil {
			out = append(out, te)
		}
	}
	return out
}

// LastAssistant is the uuid of a transcript's last non-sidechain assistant
// entry, as the hook resolves harness_end.
func LastAssistant(t *testing.T, path string) string {
	last := ""
	for _, te := range TranscriptEntries(t, path) {
		if te.Type == "assistant" && !te.IsSidechain && te.UUID != "" {
			last = te.UUID
		}
	}
	return last
}

// Codex is the Codex CLI in an Env: a custom model provider pointing at the
// mock in $CODEX_HOME/config.toml (wire_api responses), model gpt-5.5 (a
// model Codex knows, so it offers its apply_patch tool), no approvals, no
// sandbox, and the repository trusted.
type Codex struct {
	e    *Env
	Bin  string
	Home string
	Env  []string
}

// Codex sets the Codex CLI up in e.
func (e *Env) Codex() *Codex {
	e.T.Helper()
	c := &Codex{e: e, Bin: ClientBin(e.T, "codex"), Home: filepath.Join(e.Home, ".codex")}
	if err := os.MkdirAll(c.Home, 0o755); err != nil {
		e.T.Fatal(err)
	}
	cfg := `model = "gpt-5.5"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.mock]
name = "mock"
base_url = "` + e.Mock.URL() + `/v1"
env_key = "MOCK_OPENAI_KEY"
wire_api = "responses"

[projects."` + e.Repo + `"]
trust_level = "trusted"
`
	if err := os.WriteFile(filepath.Join(c.Home, "config.toml"), []byte(cfg), 0o644); err != nil {
		e.T.Fatal(err)
	}
	c.Env = append(e.BaseEnv(), "CODEX_HOME="+c.Home, "MOCK_OPENAI_KEY=mock-key")
	return c
}

// CodexResult is a `codex exec --json` run and the events it printed.
type CodexResult struct {
	Result
	Events []map[string]any
}

// Thread is the thread.started event's thread_id.
func (r CodexResult) Thread() string {
	for _, ev := range r.Events {
		if ev["type"] == "thread.started" {
			s, _ := ev["thread_id"].(string)
			return s
		}
	}
	return ""
}

// LastMessage is the text of the last agent_message item.
func (r CodexResult) LastMessage() string {
	last := ""
	for _, ev := range r.Events {
		it, _ := ev["item"].(map[string]any)
		if ev["type"] == "item.completed" && it["type"] == "agent_message" {
			last, _ = it["text"].(string)
		}
	}
	return last
}

// Exec runs `codex exec <args...>` in the repository (args hold --json,
// the prompt, resume ...) and decodes the JSON lines it printed.
func (c *Codex) Exec(args ...string) CodexResult {
	c.e.T.Helper()
	r := c.e.Run(RunOpts{Env: c.Env}, c.Bin, append([]string{"exec"}, args...)...)
	r.Cmd = "codex exec " + shellQuote(args)
	out := CodexResult{Result: r}
	for _, line := range strings.Split(r.Stdout, "\n") {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) == nil {
			out.Events = append(out.Events, ev)
		}
	}
	return out
}

// Gemini is Gemini CLI in an Env: the mock as GOOGLE_GEMINI_BASE_URL, and
// user settings that pin the API-key auth (with the base URL alone it
// picks "gateway" auth, which -p refuses) and keep folder trust on.
// TrustRepo trusts the repository.
type Gemini struct {
	e   *Env
	Bin string
	Env []string
}

// Gemini sets Gemini CLI up in e.
func (e *Env) Gemini() *Gemini {
	e.T.Helper()
	g := &Gemini{e: e, Bin: ClientBin(e.T, "gemini")}
	dir := filepath.Join(e.Home, ".gemini")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.T.Fatal(err)
	}
	settings := `{"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": true}},
 "general": {"disableAutoUpdate": true}, "privacy": {"usageStatisticsEnabled": false}}
`
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o644); err != nil {
		e.T.Fatal(err)
	}
	g.Env = append(e.BaseEnv(), "GOOGLE_GEMINI_BASE_URL="+e.Mock.URL(), "GEMINI_API_KEY=mock-key", "TERM=dumb")
	return g
}

// TrustRepo marks the repository trusted in ~/.gemini/trustedFolders.json
// (headless runs in an untrusted folder exit 55, and load no project hooks).
func (g *Gemini) TrustRepo() {
	g.e.T.Helper()
	b, _ := json.Marshal(map[string]string{g.e.Repo: "TRUST_FOLDER"})
	if err := os.WriteFile(filepath.Join(g.e.Home, ".gemini", "trustedFolders.json"), b, 0o644); err != nil {
		g.e.T.Fatal(err)
	}
}

// GeminiResult is a `gemini -p ... --output-format json` run and its
// result's fields.
type GeminiResult struct {
	Result
	SessionID string `json:"session_id"`
	Response  string `json:"response"`
}

// Print runs `gemini <args...> --yolo --output-format json` in the
// repository (args hold -p and the prompt, --resume ...).
func (g *Gemini) Print(args ...string) GeminiResult {
	g.e.T.Helper()
	argv := append(append([]string{}, args...), "--yolo", "--output-format", "json")
	r := g.e.Run(RunOpts{Env: g.Env}, g.Bin, argv...)
	r.Cmd = "gemini " + shellQuote(argv)
	out := GeminiResult{Result: r}
	_ = json.Unmarshal([]byte(strings.TrimSpace(r.Stdout)), &out)
	out.Result = r
	return out
}
