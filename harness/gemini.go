package harness

import "encoding/json"

// gemini maps Gemini CLI's hook events (HARNESS-HOOKS.md section 3):
//
//	SessionStart                 session bookkeeping
//	BeforeAgent                  turn_start; the note as additionalContext
//	BeforeTool                   a mid-turn checkpoint before the call
//	                             (venom.checkpoints.toolCalls)
//	AfterTool write_file|replace edit record of tool_input.file_path
//	AfterAgent                   turn_end
//	SessionEnd                   turn_end of a turn left open
//
// Gemini CLI parses a hook's stdout as JSON and forbids any other text on
// it ("Silence is Mandatory"); it has no turn id and no conversation rewind,
// so its checkpoints restore files only.
var gemini = &Harness{
	Name:       "gemini",
	Prefix:     "gemini",
	aliases:    []string{"gemini-cli"},
	sessionEnv: []string{"GEMINI_SESSION_ID"},
	parse:      parseGemini,
	note:       geminiNote,
	preTool:    "BeforeTool",
	shellTools: []string{"run_shell_command"},
	install: installSpec{
		file: map[string]scopePath{
			"project": {root: ".gemini/settings.json"},
			"user":    {home: ".gemini", name: "settings.json"},
		},
		defaultScope: "project",
		timeoutMS:    true,
		named:        true,
		entries: []hookEntry{
			{Event: "SessionStart", Timeout: 10},
			{Event: "BeforeAgent", Capture: true},
			{Event: "AfterTool", Matcher: "write_file|replace", Capture: true},
			{Event: "AfterAgent", Capture: true},
			{Event: "SessionEnd", Capture: true},
		},
		after: []string{
			"Gemini CLI runs hooks while hooksConfig.enabled is true in its settings.json (the default).",
		},
	},
}

var geminiEditTools = []string{"write_file", "replace"}

func parseGemini(data []byte) (*Event, error) {
	p, err := readPayload(data)
	if err != nil {
		return nil, err
	}
	ev := p.event("")
	switch {
	case is(p.HookEventName, "BeforeAgent"):
		ev.Kind = TurnStart
	case is(p.HookEventName, "AfterAgent"):
		ev.Kind = TurnEnd
	case is(p.HookEventName, "BeforeTool"):
		p.preTool(ev)
	case is(p.HookEventName, "AfterTool") && is(p.ToolName, geminiEditTools...):
		ev.Kind = Edit
		ev.Paths = toolPaths(p.ToolInput, "file_path", "absolute_path", "path")
	}
	return ev, nil
}

// geminiNote is the note as BeforeAgent's additionalContext, which Gemini
// CLI appends to the turn's prompt.
func geminiNote(text string) []byte {
	if text == "" {
		return nil
	}
	b, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName": "BeforeAgent", "additionalContext": text}})
	return append(b, '\n')
}
