package harness

import (
	"encoding/json"
	"fmt"
	"strings"
)

// codex maps Codex CLI's hook events (HARNESS-HOOKS.md section 2):
//
//	SessionStart              session bookkeeping
//	UserPromptSubmit          turn_start (harness_turn: turn_id); the note
//	PreToolUse                a mid-turn checkpoint before the call
//	                          (venom.checkpoints.toolCalls; the shell
//	                          tool is tool_name Bash in codex 0.171)
//	PostToolUse apply_patch   edit record of the paths in the patch headers
//	Stop                      turn_end (harness_turn: turn_id, which the
//	                          app-server's thread/fork takes as lastTurnId)
//	Interrupt                 turn_end (newer builds)
//	SessionEnd                turn_end of a turn left open
//
// and the legacy notify program's agent-turn-complete (one JSON argument,
// fields thread-id, turn-id, cwd) as a turn_end. Plain text on stdout is
// invalid for Stop, so the hook prints nothing there.
var codex = &Harness{
	Name:    "codex",
	Prefix:  "codex",
	aliases: []string{"codex-cli", "openai-codex"},
	// No sessionEnv: Codex gives CODEX_THREAD_ID to its tool shells only,
	// never to a hook (seen with codex 0.171: a hook's environment has
	// CODEX_HOME and CODEX_MANAGED_BY_NPM, no thread id), and every hook
	// event carries session_id.
	parse:      parseCodex,
	note:       plainNote,
	preTool:    "PreToolUse",
	shellTools: []string{"Bash"},
	install: installSpec{
		file: map[string]scopePath{
			"project": {root: ".codex/hooks.json"},
			"user":    {env: "CODEX_HOME", home: ".codex", name: "hooks.json"},
		},
		defaultScope: "project",
		// Only the events every hooks-capable build knows: an unknown event
		// name could make an older Codex reject the whole file.
		entries: []hookEntry{
			{Event: "SessionStart", Timeout: 10},
			{Event: "UserPromptSubmit", Capture: true},
			{Event: "PostToolUse", Matcher: "apply_patch", Capture: true},
			{Event: "Stop", Capture: true},
		},
	},
}

// codexNotify is the legacy notify program's argument.
type codexNotify struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread-id"`
	TurnID   string `json:"turn-id"`
	Cwd      string `json:"cwd"`
	Last     string `json:"last-assistant-message"`
}

func parseCodex(data []byte) (*Event, error) {
	var p payload
	if err := decode(data, &p); err != nil {
		return nil, err
	}
	if p.HookEventName == "" {
		var n codexNotify
		if json.Unmarshal(data, &n) == nil && n.Type != "" {
			ev := &Event{Name: n.Type, Session: n.ThreadID, Turn: n.TurnID, LastMessage: n.Last, Dirs: dirs(n.Cwd)}
			if n.Type == "agent-turn-complete" {
				ev.Kind = TurnEnd
			}
			return ev, nil
		}
		return nil, fmt.Errorf("input has no hook_event_name")
	}
	ev := p.event(p.TurnID)
	switch {
	case is(p.HookEventName, "UserPromptSubmit"):
		ev.Kind = TurnStart
	case is(p.HookEventName, "Stop", "Interrupt"):
		ev.Kind = TurnEnd
	case is(p.HookEventName, "PreToolUse"):
		p.preTool(ev)
	case is(p.HookEventName, "PostToolUse"):
		patch := codexPatch(p.ToolInput)
		if is(p.ToolName, "apply_patch") || strings.Contains(patch, "*** Begin Patch") {
			ev.Kind = Edit
			ev.Paths = PatchPaths(patch)
		}
	}
	return ev, nil
}

// codexPatch finds the patch text in apply_patch's tool_input: {"command":
// "<patch>"} as Codex sends it, or the command as an argv array (apply_patch
// run through the shell tool), or a bare string.
func codexPatch(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	for _, k := range []string{"command", "input", "patch", "cmd"} {
		v, ok := m[k]
		if !ok {
			continue
		}
		if json.Unmarshal(v, &s) == nil {
			return s
		}
		var argv []string
		if json.Unmarshal(v, &argv) == nil {
			return strings.Join(argv, "\n")
		}
	}
	return ""
}

// patchHeaders are the apply_patch lines that name a path the patch writes
// (Codex's apply_patch grammar): a file added, changed, deleted, or the
// new name of a moved one (its old name is the Update line before it).
var patchHeaders = []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "}

// PatchPaths returns the paths an apply_patch patch writes, in order of
// first mention, as the patch spells them (relative to the session's cwd,
// or absolute). Lines are matched after trimming surrounding white space,
// so a patch indented inside a heredoc parses too.
func PatchPaths(patch string) []string {
	var out []string
	lines := strings.Split(patch, "\n")
	// A header starts its line, after the indentation of the patch's
	// "*** Begin Patch" line when the whole patch is indented (a heredoc).
	// A hunk's lines start with a space, + or -, and a context line may
	// hold a header's text (a patch to docs about apply_patch): it names
	// no file.
	indent := ""
	for _, line := range lines {
		if t := strings.TrimLeft(line, " \t"); strings.HasPrefix(t, "*** Begin Patch") {
			indent = line[:len(line)-len(t)]
			break
		}
	}
	for _, line := range lines {
		line, ok := strings.CutPrefix(strings.TrimRight(line, " \t\r"), indent)
		if !ok {
			continue
		}
		for _, h := range patchHeaders {
			if p, ok := strings.CutPrefix(line, strings.TrimSpace(h)); ok {
				if p = strings.TrimSpace(p); p != "" {
					out = append(out, p)
				}
				break
			}
		}
	}
	return uniq(out)
}
