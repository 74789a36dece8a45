package harness

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
	p, err := readPayload(data)
	if err != nil {
		return nil, err
	}
	ev := p.event(p.GenerationID)
	if p.ConversationID != "" {
		ev.Session = p.ConversationID
	}
	if roots := uniq(p.WorkspaceRoots); len(roots) > 0 {
		ev.Dirs = roots
	}
	switch {
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
