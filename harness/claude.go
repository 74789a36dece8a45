package harness

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/journal"
)

// claudeCode maps Claude Code's hook events (HARNESS-HOOKS.md section 1):
//
//	SessionStart                      session bookkeeping (binding confirmed)
//	UserPromptSubmit                  turn_start; the rollback note on stdout
//	PostToolUse Write|Edit|MultiEdit|NotebookEdit
//	                                  edit record of tool_input.file_path or
//	                                  notebook_path (always absolute)
//	PreToolUse                        a mid-turn checkpoint before the call
//	                                  (venom.checkpoints.toolCalls)
//	Stop, StopFailure                 turn_end with harness_end, the uuid of
//	                                  the transcript's last assistant entry
//	SessionEnd                        turn_end of a turn left open (an
//	                                  interrupt fires no hook; -p mode
//	                                  kills a StopFailure hook), with
//	                                  harness_end from the transcript
//
// An interrupted turn has no Stop; the next UserPromptSubmit's turn_start
// ends it first (checkpoint.Take's synthetic end).
var claudeCode = &Harness{
	Name:       "claude-code",
	Prefix:     "claude",
	aliases:    []string{"claude", "claudecode", "claude_code"},
	sessionEnv: []string{"CLAUDE_CODE_SESSION_ID"},
	parse:      parseClaude,
	note:       plainNote,
	end:        claudeEnd,
	preTool:    "PreToolUse",
	shellTools: []string{"Bash", "PowerShell"},
	closeEnd:   claudeCloseEnd,
	install: installSpec{
		file: map[string]scopePath{
			"local":   {root: ".claude/settings.local.json"},
			"project": {root: ".claude/settings.json"},
			"user":    {env: "CLAUDE_CONFIG_DIR", home: ".claude", name: "settings.json"},
		},
		defaultScope: "local",
		entries: []hookEntry{
			{Event: "SessionStart", Timeout: 10},
			{Event: "UserPromptSubmit", Capture: true},
			{Event: "PostToolUse", Matcher: "Write|Edit|MultiEdit|NotebookEdit", Capture: true},
			{Event: "Stop", Capture: true},
			{Event: "StopFailure", Capture: true},
			{Event: "SessionEnd", Capture: true},
		},
	},
}

// claudeEditTools are the tools whose PostToolUse names the file written.
var claudeEditTools = []string{"Write", "Edit", "MultiEdit", "NotebookEdit"}

func parseClaude(data []byte) (*Event, error) {
	p, err := readPayload(data)
	if err != nil {
		return nil, err
	}
	ev := p.event(p.PromptID)
	switch {
	case is(p.HookEventName, "UserPromptSubmit"):
		ev.Kind = TurnStart
	case is(p.HookEventName, "Stop", "StopFailure"):
		ev.Kind = TurnEnd
	case is(p.HookEventName, "PreToolUse"):
		p.preTool(ev)
	case is(p.HookEventName, "PostToolUse") && is(p.ToolName, claudeEditTools...):
		ev.Kind = Edit
		ev.Paths = toolPaths(p.ToolInput, "file_path", "notebook_path")
		if len(ev.Paths) == 0 {
			ev.Paths = toolPaths(p.ToolResponse, "filePath", "file_path", "notebook_path")
		}
	}
	return ev, nil
}

// plainNote is the note as plain text, which Claude Code and Codex add to
// the model's context on UserPromptSubmit. It must not start with '{', or
// the harness parses it as a JSON answer (HARNESS-HOOKS.md 1.6).
func plainNote(text string) []byte {
	text = strings.TrimLeft(text, " \t\r\n{")
	if text == "" {
		return nil
	}
	return []byte(strings.TrimRight(text, "\n") + "\n")
}

// transcriptWait bounds how long a Stop hook waits for Claude Code's
// transcript to catch up with the turn (it is written asynchronously and
// may lag, HARNESS-HOOKS.md 1.3). A variable only so that a test can
// lengthen it on a loaded machine; nothing else sets it.
var transcriptWait = 200 * time.Millisecond

// claudeEnd resolves harness_end for a Claude Code turn_end: the uuid of the
// transcript's last assistant entry (RFC 8: "Claude Code: the uuid of the
// turn's last assistant line"). When the event carries the turn's last
// assistant message, the entry must hold that text, and the transcript is
// polled for up to transcriptWait until it does. A transcript that has not
// caught up by then gives no id but a pending record (the path, the last
// assistant entry it did hold, a hash of the message), from which a
// rollback resolves the id again later (ResolveEnd), rather than an
// earlier turn's id. A missing transcript gives neither and no error.
func claudeEnd(ctx context.Context, ev *Event) (string, *journal.EndPending, error) {
	path := expandHome(ev.Transcript)
	if path == "" {
		return "", nil, nil
	}
	deadline := time.Now().Add(transcriptWait)
	for {
		uuid, text, err := LastAssistant(path)
		if errors.Is(err, os.ErrNotExist) {
			return "", nil, nil
		}
		if err != nil {
			return "", nil, err
		}
		if uuid != "" && (ev.LastMessage == "" || sameMessage(text, ev.LastMessage)) {
			return uuid, nil, nil
		}
		if time.Now().After(deadline) {
			if ev.LastMessage == "" {
				// An empty transcript and no message to look for: nothing
				// would tell this turn's end from a later one's.
				return "", nil, nil
			}
			pending := &journal.EndPending{Transcript: path, After: uuid, TextSHA256: textHash(ev.LastMessage)}
			if uuid == "" {
				return "", pending, fmt.Errorf("the transcript holds no assistant entry yet; harness_end left for a rollback to resolve")
			}
			return "", pending, fmt.Errorf("the transcript's last assistant entry (%s) does not hold the turn's last message yet; harness_end left for a rollback to resolve", uuid)
		}
		select {
		case <-ctx.Done():
			return "", nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// claudeCloseEnd resolves harness_end for the turn a SessionEnd closes:
// the uuid of the last non-sidechain assistant entry of the transcript
// after the first entry of the turn's prompt (ev.Turn, the prompt_id
// SessionEnd carries, which transcript entries hold as promptId), before
// any entry of a later prompt. A turn cut before any answer has no such
// entry, and gives "": an earlier turn's entry is never used. The
// transcript is read again for up to transcriptWait while it holds the
// prompt but no answer yet (it is written asynchronously).
func claudeCloseEnd(ctx context.Context, ev *Event) (string, error) {
	path := expandHome(ev.Transcript)
	if path == "" || ev.Turn == "" {
		return "", nil
	}
	deadline := time.Now().Add(transcriptWait)
	for {
		uuid, seen, err := assistantAfterPrompt(path, ev.Turn)
		if errors.Is(err, os.ErrNotExist) {
			return "", nil
		}
		if err != nil || uuid != "" || !seen || time.Now().After(deadline) {
			return uuid, err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// assistantAfterPrompt reads a transcript forward for claudeCloseEnd: the
// last assistant entry after the first entry of prompt id, and whether
// that entry was there at all.
func assistantAfterPrompt(path, id string) (uuid string, seen bool, err error) {
	if st, err := os.Stat(path); err != nil {
		return "", false, err
	} else if !st.Mode().IsRegular() {
		return "", false, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	rd := bufio.NewReader(f)
	for {
		line, err := rd.ReadBytes('\n')
		if err != nil {
			// A line still being written (no newline yet) is not read.
			return uuid, seen, nil
		}
		var e transcriptEntry
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		if e.PromptID == id {
			seen = true
		} else if seen && e.PromptID != "" {
			return uuid, seen, nil // a later prompt's entries
		}
		if seen && e.Type == "assistant" && e.UUID != "" && !e.IsSidechain {
			uuid = e.UUID
		}
	}
}

// textHash is EndPending.TextSHA256 of a message.
func textHash(text string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(text)))
	return hex.EncodeToString(sum[:])
}

// ResolveEnd finds harness_end for a turn whose transcript lagged when it
// ended (journal.EndPending), now that the harness has had time to write
// it: the first non-sidechain assistant entry after p.After whose text,
// trimmed, hashes to p.TextSHA256. It returns "" when the transcript is
// gone or still holds no such entry: a rollback then treats the turn as
// having no harness id (RFC 8 no_harness_id), never guessing another
// turn's entry. Only Claude Code logs pending ends; harness is the turn's
// harness name.
func ResolveEnd(harness string, p *journal.EndPending) string {
	if harness != claudeCode.Name || p == nil || p.Transcript == "" || p.TextSHA256 == "" {
		return ""
	}
	if st, err := os.Stat(p.Transcript); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	f, err := os.Open(p.Transcript)
	if err != nil {
		return ""
	}
	defer f.Close()
	// Forward, since the entry sought is the first match after After; a
	// line still being written (no newline yet) is not read.
	sc := bufio.NewReader(f)
	seen := p.After == ""
	for {
		line, err := sc.ReadBytes('\n')
		if err != nil {
			return ""
		}
		uuid, text, ok := assistantLine(line)
		if !ok {
			continue
		}
		if !seen {
			seen = uuid == p.After
			continue
		}
		if textHash(text) == p.TextSHA256 {
			return uuid
		}
	}
}

func sameMessage(entry, last string) bool {
	a, b := strings.TrimSpace(entry), strings.TrimSpace(last)
	if a == "" || b == "" {
		return a == b
	}
	return a == b || strings.Contains(b, a) || strings.Contains(a, b)
}

func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, rest)
		}
	}
	return p
}

// transcriptEntry is the part of a Claude Code transcript line read here.
type transcriptEntry struct {
	Type        string `json:"type"`
	UUID        string `json:"uuid"`
	IsSidechain bool   `json:"isSidechain"`
	// PromptID is the prompt an entry belongs to, on the prompt's user
	// entry and its tool results (not on assistant entries).
	PromptID string `json:"promptId"`
	Message  struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// LastAssistant returns the uuid and text of the last complete line of a
// Claude Code transcript (JSON Lines) whose type is "assistant", skipping
// sidechain (subagent) entries. It reads the file backwards
// (checkpoint.LinesBackward), so a long session costs what its last turn
// costs. The format is
// internal to Claude Code (HARNESS-HOOKS.md 1.8): lines that do not parse
// are skipped. A file with no assistant line gives "", "", nil.
func LastAssistant(path string) (uuid, text string, err error) {
	// Only a regular file is read: opening a FIFO (or a device) named as
	// the transcript would block the hook for good.
	if st, err := os.Stat(path); err != nil {
		return "", "", err
	} else if !st.Mode().IsRegular() {
		return "", "", fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	err = checkpoint.LinesBackward(f, func(line []byte) bool {
		var ok bool
		uuid, text, ok = assistantLine(line)
		return ok
	})
	return uuid, text, err
}

func assistantLine(line []byte) (uuid, text string, ok bool) {
	if !bytes.Contains(line, []byte(`"assistant"`)) {
		return "", "", false
	}
	var e transcriptEntry
	if json.Unmarshal(line, &e) != nil || e.Type != "assistant" || e.UUID == "" || e.IsSidechain {
		return "", "", false
	}
	return e.UUID, contentText(e.Message.Content), true
}

// contentText joins the text blocks of a message's content (a string, or
// an array of blocks).
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}
