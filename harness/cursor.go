package harness

import "fmt"

// cursor maps Cursor's hook events (HARNESS-HOOKS.md section 4):
//
//	sessionStart         session bookkeeping (newer builds)
//	beforeSubmitPrompt   turn_start (harness_turn: generation_id)
//	afterFileEdit        edit record of file_path
//	stop                 turn_end, whatever its status (completed, aborted,
//	                     error), so an interrupted turn ends too
//	sessionEnd           turn_end of a turn left open (newer builds)
//
// The session is conversation_id. Cursor sends no cwd but workspace_roots:
// every root in a git repository is a tree of the agent. Cursor expects a
// JSON object on stdout on every path, so the hook prints {} (its no-op);
// it has no note channel and no conversation rewind.
var cursor = &Harness{
	Name:   "cursor",
	Prefix: "cursor",
	parse:  parseCursor,
	idle:   []byte("{}\n"),
	install: installSpec{
		file: map[string]scopePath{
			"project": {root: ".cursor/hooks.json"},
			"user":    {home: ".cursor", name: "hooks.json"},
		},
		defaultScope: "project",
		flat:         true,
		entries: []hookEntry{
			{Event: "beforeSubmitPrompt", Capture: true},
			{Event: "afterFileEdit", Capture: true},
			{Event: "stop", Capture: true},
		},
	},
}

func parseCursor(data []byte) (*Event, error) {
	var p payload
	if err := decode(data, &p); err != nil {
		return nil, err
	}
	if p.HookEventName == "" {
		return nil, fmt.Errorf("input has no hook_event_name")
	}
	session := p.ConversationID
	if session == "" {
		session = p.SessionID
	}
	ev := &Event{Name: p.HookEventName, Session: session, Turn: p.GenerationID, Dirs: uniq(p.WorkspaceRoots)}
	if len(ev.Dirs) == 0 {
		ev.Dirs = dirs(p.Cwd)
	}
	switch {
	case is(p.HookEventName, "sessionStart"):
		ev.Kind, ev.Source = SessionStart, p.Source
	case is(p.HookEventName, "sessionEnd"):
		ev.Kind, ev.Source = SessionEnd, p.Reason
	case is(p.HookEventName, "beforeSubmitPrompt"):
		ev.Kind = TurnStart
	case is(p.HookEventName, "stop"):
		ev.Kind, ev.Source = TurnEnd, p.Status
	case is(p.HookEventName, "afterFileEdit"):
		ev.Kind = Edit
		if p.FilePath != "" {
			ev.Paths = []string{p.FilePath}
		}
	}
	return ev, nil
}
