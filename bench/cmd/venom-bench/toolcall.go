package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Per-tool-call checkpoints (issue 14): what the agent waits for before
// each shell command, the PreToolUse hook (`git-venom-hook claude-code`
// with the event on stdin, as Claude Code runs it), against one status.
// Two rows: nothing changed since the latest checkpoint (the common case:
// a command that only read; RFC 3.2 reuses the checkpoint), and one file
// changed by the command before (a new mid-turn checkpoint). A tool call
// is on the agent's critical path every time, so the rows run more
// rounds and print the 95th percentile too: the default of
// venom.checkpoints.toolCalls is chosen from these (git-venom-hook(1)).
var toolCallRows = []caseFunc{toolCallDedup, toolCallChanged}

// toolCallReps is the least number of rounds of a tool-call row, so that
// its p95 is a sample of the tail and not the maximum.
const toolCallReps = 41

const (
	benchSession = "5e0c1a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b"
	benchAgent   = "claude-5e0c1a2b3c4d"
)

// hookEvent is a Claude Code hook event of benchSession in dir.
func hookEvent(dir, name string, extra map[string]any) []byte {
	ev := map[string]any{"session_id": benchSession, "transcript_path": "", "cwd": dir,
		"hook_event_name": name, "prompt_id": "0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5", "permission_mode": "default"}
	for k, v := range extra {
		ev[k] = v
	}
	b, _ := json.Marshal(ev)
	return b
}

// hookCmd runs the hook binary itself, as a harness runs the installed
// entry (git-venom-hook claude-code, no git dispatcher), event on stdin.
func hookCmd(dir string, bin string, event []byte) func() (outcome, error) {
	return func() (outcome, error) {
		cmd := exec.Command(filepath.Join(bin, "git-venom-hook"), "claude-code")
		cmd.Dir = dir
		cmd.Env = childEnv
		cmd.Stdin = bytes.NewReader(event)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return outcome{}, fmt.Errorf("git-venom-hook: %v: %s", err, errb.String())
		}
		if errb.Len() > 0 {
			return outcome{}, fmt.Errorf("git-venom-hook complained: %s", strings.TrimSpace(errb.String()))
		}
		return outcome{out: out.Bytes(), cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}, nil
	}
}

// lastRecord is the venom log's last record in dir.
func lastRecord(dir string) (map[string]any, error) {
	data, err := os.ReadFile(filepath.Join(dir, ".git", "venom", "log.jsonl"))
	if err != nil {
		return nil, err
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	var r map[string]any
	err = json.Unmarshal(lines[len(lines)-1], &r)
	return r, err
}

// openTurn starts benchAgent's turn in t (a UserPromptSubmit through the
// hook, untimed) and returns the PreToolUse event of a Bash call.
func openTurn(t *tree, o *options) ([]byte, error) {
	// The rows measure the capture, whatever the default is.
	if _, err := git(t.dir, "config", "venom.checkpoints.toolCalls", "shell"); err != nil {
		return nil, err
	}
	if _, err := hookCmd(t.dir, o.bin, hookEvent(t.dir, "UserPromptSubmit", map[string]any{"prompt": "go"}))(); err != nil {
		return nil, err
	}
	r, err := lastRecord(t.dir)
	if err != nil {
		return nil, err
	}
	if r["type"] != "turn.started" {
		return nil, fmt.Errorf("the turn did not start: last record %v", r)
	}
	return hookEvent(t.dir, "PreToolUse", map[string]any{"tool_name": "Bash",
		"tool_input": map[string]any{"command": "make test", "description": "run the tests"}, "tool_use_id": "toolu_bench"}), nil
}

// closeTurn ends the turn (Stop), so the next row starts clean.
func closeTurn(t *tree, o *options) error {
	_, err := hookCmd(t.dir, o.bin, hookEvent(t.dir, "Stop", map[string]any{"stop_hook_active": false, "last_assistant_message": ""}))()
	return err
}

func toolCallDedup(t *tree, o *options) (*benchCase, error) {
	ev, err := openTurn(t, o)
	if err != nil {
		return nil, err
	}
	return &benchCase{
		name: "tool-call checkpoint, no change",
		reps: toolCallReps,
		venom: side{
			label: "git-venom-hook claude-code (PreToolUse Bash, reused)",
			run:   hookCmd(t.dir, o.bin, ev),
			check: func(out []byte) error {
				r, err := lastRecord(t.dir)
				if err != nil {
					return err
				}
				if len(out) != 0 || r["type"] != "checkpoint.reused" || r["reason"] != "manual" || r["agent"] != benchAgent {
					return fmt.Errorf("want a reuse of the turn's checkpoint and no output, got %q and %v", out, r)
				}
				return nil
			},
		},
		bases:    []baseline{statusBase(t, nil, wantEmpty, 0)},
		teardown: func() error { return closeTurn(t, o) },
	}, nil
}

func toolCallChanged(t *tree, o *options) (*benchCase, error) {
	paths, err := pickFiles(t.dir, 1)
	if err != nil {
		return nil, err
	}
	p := filepath.Join(t.dir, paths[0])
	orig, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	ev, err := openTurn(t, o)
	if err != nil {
		return nil, err
	}
	// What the previous command did: one file changed, new content each run.
	modify := func(run int) error {
		return os.WriteFile(p, append(orig[:len(orig):len(orig)], fmt.Sprintf("\nvenom-bench run %d\n", run)...), 0o644)
	}
	return &benchCase{
		name: "tool-call checkpoint, 1 file changed",
		reps: toolCallReps,
		venom: side{
			label:   "git-venom-hook claude-code (PreToolUse Bash, new checkpoint)",
			prepare: modify,
			run:     hookCmd(t.dir, o.bin, ev),
			check: func(out []byte) error {
				r, err := lastRecord(t.dir)
				if err != nil {
					return err
				}
				if len(out) != 0 || r["type"] != "checkpoint.taken" || r["mid_turn"] != true || r["label"] != "before Bash: make test" {
					return fmt.Errorf("want a new mid-turn checkpoint labelled before Bash: make test, got %q and %v", out, r)
				}
				return nil
			},
		},
		bases: []baseline{statusBase(t, modify, func(out []byte) error {
			if !bytes.Contains(out, []byte(paths[0])) {
				return fmt.Errorf("status does not show %s: %.200q", paths[0], out)
			}
			return nil
		}, 0)},
		teardown: func() error {
			if err := os.WriteFile(p, orig, 0o644); err != nil {
				return err
			}
			if err := closeTurn(t, o); err != nil {
				return err
			}
			return freshen(t.dir)
		},
	}, nil
}

// p95 is the 95th percentile of ds (nearest rank).
func p95(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	k := (95*len(s) + 99) / 100
	return s[k-1]
}
