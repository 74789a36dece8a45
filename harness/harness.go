// Package harness turns agent harness hook events into checkpoints, turn
// records and edit records (DESIGN.md section 6, RFC 3, 3.1 and 8), and
// writes the harnesses' hook settings. One file per harness holds its event
// mapping and its settings shape: claude.go (Claude Code), codex.go (Codex
// CLI), gemini.go (Gemini CLI) and cursor.go (Cursor). The shared code is
// here (events, agent identity), in run.go (what an event does) and in
// install.go (merging our entries into a settings file).
//
// Nothing here prints to stdout except what Run is asked to write for the
// harness, never flags or exits, and never returns an error from a hook
// event: a hook must not block or derail the agent.
package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/refs"
)

// Kind is what a hook event asks the toolkit to do.
type Kind int

// The kinds of hook event (DESIGN.md section 6's table). Ignore covers every
// event the toolkit has no use for (notifications, other tools, subagent
// stops): the hook answers it with nothing.
const (
	Ignore Kind = iota
	TurnStart
	TurnEnd
	Edit
	SessionStart
	SessionEnd
	// PreTool is a tool call about to run (Claude Code and Codex
	// PreToolUse, Gemini CLI BeforeTool): a mid-turn checkpoint before it,
	// as venom.checkpoints.toolCalls says.
	PreTool
)

var kindNames = [...]string{"ignore", "turn_start", "turn_end", "edit", "session_start", "session_end", "pre_tool"}

// String is the kind's name, as the log's reasons spell the turn kinds.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Event is one hook event, parsed into what the toolkit needs from it.
type Event struct {
	// Name is the harness's event name as given (hook_event_name, or the
	// Codex notify type).
	Name string
	Kind Kind
	// Session is the harness's session (conversation, thread) id; Turn its
	// id of the turn (Claude Code prompt_id, Codex turn_id, Cursor
	// generation_id); empty when the harness gave none.
	Session string
	Turn    string
	// Transcript is the harness's transcript path (Claude Code resolves
	// harness_end from it); LastMessage the text of the turn's last
	// assistant message, when the event carries it.
	Transcript  string
	LastMessage string
	// Dirs are the directories the event happened in: the cwd, or Cursor's
	// workspace roots. Relative paths are relative to Dirs[0].
	Dirs []string
	// Paths are the paths an edit tool wrote, as the harness spelled them.
	Paths []string
	// Source is SessionStart's source (startup, resume, clear, compact,
	// fork), SessionEnd's reason, or Cursor stop's status.
	Source string
	// Tool is a PreTool event's tool name as the harness spells it (Bash,
	// run_shell_command, apply_patch, Read); ToolInput a one-line summary
	// of what it runs: the shell command's first line, or the file path.
	Tool, ToolInput string
}

// Harness is one supported harness: its names, how it encodes events and
// notes, and where and how its hook settings are written.
type Harness struct {
	// Name is the canonical name used on the command line and in the log
	// (turn.started's harness): claude-code, codex, gemini, cursor.
	Name string
	// Prefix starts the agent ids derived from its sessions.
	Prefix  string
	aliases []string
	// sessionEnv names environment variables holding the session id, for
	// an event that lacks it (Claude Code sets CLAUDE_CODE_SESSION_ID in
	// hooks, Gemini CLI GEMINI_SESSION_ID).
	sessionEnv []string
	parse      func(data []byte) (*Event, error)
	// note encodes RFC 8's rollback note for the prompt-submit event's
	// stdout; nil when the harness has no channel for it.
	note func(text string) []byte
	// idle is what to print when there is nothing to say: nothing, except
	// for Cursor, which expects a JSON object on every path.
	idle []byte
	// end resolves harness_end for a turn_end (Claude Code's last assistant
	// transcript entry); nil when the harness has no such id.
	// When the transcript lags, it returns no id but where a rollback can
	// find it later (ResolveEnd).
	end func(ctx context.Context, ev *Event) (string, *journal.EndPending, error)
	// preTool is the hook event that fires before a tool call, and
	// shellTools the tool names of its shell tools (per-tool-call
	// checkpoints); "" when the harness has none the toolkit uses.
	preTool    string
	shellTools []string
	// closeEnd resolves harness_end for the turn a session end closes (a
	// turn whose own end hook did not run to its end: Claude Code kills a
	// StopFailure hook in -p mode): the turn's last assistant entry after
	// its prompt (ev.Turn), or "" when there is none. nil when the harness
	// has no such id.
	closeEnd func(ctx context.Context, ev *Event) (string, error)
	install  installSpec
}

// Shell reports whether tool is one of h's shell tools (Claude Code's Bash,
// Codex's Bash, Gemini CLI's run_shell_command), whose commands can change
// any file without an edit record.
func (h *Harness) Shell(tool string) bool { return is(tool, h.shellTools...) }

var all = []*Harness{claudeCode, codex, gemini, cursor}

// Lookup finds a harness by its name or an alias ("claude", "codex-cli",
// "gemini-cli").
func Lookup(name string) (*Harness, bool) {
	n := strings.ToLower(name)
	for _, h := range all {
		if h.Name == n {
			return h, true
		}
		for _, a := range h.aliases {
			if a == n {
				return h, true
			}
		}
	}
	return nil, false
}

// Names lists the canonical harness names.
func Names() []string {
	var n []string
	for _, h := range all {
		n = append(n, h.Name)
	}
	return n
}

// Parse decodes one event of h from the JSON the harness wrote. An error
// means the input is not a JSON object or lacks the event name; an object
// naming an event the toolkit does not use is an Event of kind Ignore.
func (h *Harness) Parse(data []byte) (*Event, error) { return h.parse(data) }

// isUUID reports whether s is a UUID in lower-case hex, 8-4-4-4-12 (a
// loop rather than a regexp compiled at every process's start).
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// AgentID derives the agent id of a harness session (DESIGN.md section 6: a
// session is an agent, two sessions in one tree are two agents). It is
// stable, a valid ref component (refs.ValidAgent) and readable next to the
// harness's own id: prefix, "-", and
//   - for a UUID, 12 of its hex digits: the first 12 ("claude-0d3c8b1e7f2a"
//     for 0d3c8b1e-7f2a-…), or for a time-ordered version 7 UUID (Codex
//     threads) the last 12, since its first 12 are a millisecond timestamp;
//   - for another id that is already a short lower-case ref component, the
//     id itself;
//   - otherwise the first 12 hex digits of its SHA-256.
//
// An empty session gives the bare prefix: every session without an id
// shares that agent, which is the best a hook can do.
func AgentID(prefix, session string) string {
	s := strings.ToLower(strings.TrimSpace(session))
	switch {
	case s == "":
		return prefix
	case isUUID(s):
		hex := strings.ReplaceAll(s, "-", "")
		if hex[12] == '7' {
			return prefix + "-" + hex[len(hex)-12:]
		}
		return prefix + "-" + hex[:12]
	}
	if id := prefix + "-" + s; s == session && len(s) <= 32 && refs.ValidAgent(id) == nil {
		return id
	}
	sum := sha256.Sum256([]byte(session))
	return prefix + "-" + hex.EncodeToString(sum[:])[:12]
}

// payload holds the fields of every harness's hook input that the toolkit
// reads (HARNESS-HOOKS.md sections 1.3, 2.2, 3 and 4). A field a harness
// does not send stays empty; null decodes as empty.
type payload struct {
	HookEventName  string          `json:"hook_event_name"`
	SessionID      string          `json:"session_id"`
	PromptID       string          `json:"prompt_id"`
	TurnID         string          `json:"turn_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolResponse   json.RawMessage `json:"tool_response"`
	Source         string          `json:"source"`
	Reason         string          `json:"reason"`
	LastAssistant  string          `json:"last_assistant_message"`
	// Cursor.
	ConversationID string   `json:"conversation_id"`
	GenerationID   string   `json:"generation_id"`
	WorkspaceRoots []string `json:"workspace_roots"`
	FilePath       string   `json:"file_path"`
	Status         string   `json:"status"`
}

// preTool makes p's event a PreTool one: the tool and a summary of its
// input.
func (p *payload) preTool(ev *Event) {
	ev.Kind, ev.Tool, ev.ToolInput = PreTool, p.ToolName, toolSummary(p.ToolInput)
}

// toolSummary is one line saying what a tool call's input runs: a shell
// command's first line (a string, or an argv joined), else a file path,
// else "". It is cut at 80 characters.
func toolSummary(raw json.RawMessage) string {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return ""
	}
	s := ""
	for _, k := range []string{"command", "cmd", "file_path", "notebook_path", "absolute_path", "path", "pattern"} {
		v, ok := m[k]
		if !ok {
			continue
		}
		var str string
		var argv []string
		if json.Unmarshal(v, &str) == nil && str != "" {
			s = str
			break
		}
		if json.Unmarshal(v, &argv) == nil && len(argv) > 0 {
			s = strings.Join(argv, " ")
			break
		}
	}
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return s
}

// decode reads a hook payload into into: it must be one JSON object.
func decode(data []byte, into any) error {
	trimmed := strings.TrimSpace(string(data))
	if trimmed == "" {
		return fmt.Errorf("no input: a hook event is one JSON object on stdin")
	}
	if trimmed[0] != '{' {
		return fmt.Errorf("input is not a JSON object")
	}
	if err := json.Unmarshal([]byte(trimmed), into); err != nil {
		return fmt.Errorf("input is not a valid hook event: %w", err)
	}
	return nil
}

// readPayload decodes a hook event that names itself in hook_event_name.
func readPayload(data []byte) (*payload, error) {
	var p payload
	if err := decode(data, &p); err != nil {
		return nil, err
	}
	if p.HookEventName == "" {
		return nil, fmt.Errorf("input has no hook_event_name")
	}
	return &p, nil
}

// event makes the Event of p with the fields every harness shares, turn as
// its turn id, and the session events mapped (SessionStart and SessionEnd;
// Cursor's sessionStart and sessionEnd match too). The caller maps the
// harness's turn and edit events.
func (p *payload) event(turn string) *Event {
	ev := &Event{Name: p.HookEventName, Session: p.SessionID, Turn: turn,
		Transcript: p.TranscriptPath, LastMessage: p.LastAssistant, Dirs: dirs(p.Cwd)}
	switch {
	case is(p.HookEventName, "SessionStart"):
		ev.Kind, ev.Source = SessionStart, p.Source
	case is(p.HookEventName, "SessionEnd"):
		ev.Kind, ev.Source = SessionEnd, p.Reason
	}
	return ev
}

func dirs(cwd string) []string {
	if cwd == "" {
		return nil
	}
	return []string{cwd}
}

// toolPaths reads file paths from a tool_input (or tool_response) object:
// the first non-empty string among keys.
func toolPaths(raw json.RawMessage, keys ...string) []string {
	var m map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return nil
	}
	for _, k := range keys {
		if s, ok := m[k].(string); ok && s != "" {
			return []string{s}
		}
	}
	return nil
}

// is reports whether name is one of names, ignoring case (harnesses have
// been seen to change the case of event names between versions).
func is(name string, names ...string) bool {
	for _, n := range names {
		if strings.EqualFold(name, n) {
			return true
		}
	}
	return false
}

func uniq(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
