package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/venom-org/git-venom/internal/journaltest"
	"github.com/venom-org/git-venom/journal"
)

// logGrowth (issue 16: "a command's cost does not grow with the log"): a
// dedup no-op capture with a sidecar log of 10,000 records against the
// same capture with one of 10 (target 1.05x). The two logs hold the same
// records of the measured agent; the big one adds another agent's long
// session before them (journaltest.Session: turns, checkpoints, edits,
// prunes). Before every run the side's log, and its replay snapshot, are
// renamed into place (a rename keeps the file, which the snapshot names).
// The tree's own log is set aside for the row and put back after it.
func logGrowth(t *tree, o *options) (*benchCase, error) {
	common := filepath.Join(t.dir, ".git")
	dir := filepath.Join(common, "venom")
	files := []string{filepath.Join(dir, "log.jsonl"), filepath.Join(dir, "replay.snapshot")}
	move := func(suffixFrom, suffixTo string) error {
		for _, f := range files {
			if err := os.Rename(f+suffixFrom, f+suffixTo); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
		return nil
	}
	if err := move("", ".bench-saved"); err != nil {
		return nil, err
	}
	lg, err := journal.Open(common)
	if err != nil {
		return nil, err
	}
	const agent = "loggrow"
	// The small log: another agent's few records, then the measured
	// agent's first capture (its registration and checkpoint).
	if err := journaltest.Fill(lg, "other", t.dir, 8); err != nil {
		return nil, err
	}
	a := agent
	first, err := checkpointCmd(t.dir, &a)()
	if err != nil {
		return nil, err
	}
	r0, err := parseTake(first.out)
	if err != nil {
		return nil, err
	}
	small, err := os.ReadFile(files[0])
	if err != nil {
		return nil, err
	}
	if err := move("", ".small"); err != nil {
		return nil, err
	}
	// The big log: 9,990 records of another agent, then the same records
	// of the measured agent.
	lg, err = journal.Open(common)
	if err != nil {
		return nil, err
	}
	if err := journaltest.Fill(lg, "other", t.dir, 9990); err != nil {
		return nil, err
	}
	var mine []journal.Entry
	for _, line := range bytes.Split(small, []byte{'\n'}) {
		if !bytes.Contains(line, []byte(`"agent":"`+agent+`"`)) {
			continue
		}
		var body map[string]any
		if err := json.Unmarshal(line, &body); err != nil {
			return nil, err
		}
		typ, _ := body["type"].(string)
		delete(body, "seq")
		delete(body, "ts")
		delete(body, "type")
		mine = append(mine, journal.Entry{Type: typ, Body: body})
	}
	if _, err := lg.Append(mine...); err != nil {
		return nil, err
	}
	if err := move("", ".big"); err != nil {
		return nil, err
	}
	in := "" // which log is in place
	use := func(which string) func(int) error {
		return func(int) error {
			if in == which {
				return nil
			}
			if in != "" {
				if err := move("", "."+in); err != nil {
					return err
				}
			}
			in = which
			return move("."+which, "")
		}
	}
	return &benchCase{
		name: "dedup no-op, 10000 log records",
		venom: side{label: "git venom-checkpoint (reused)", prepare: use("big"),
			run: checkpointCmd(t.dir, &a), check: wantReused(&r0.Checkpoint)},
		bases: []baseline{{side: side{label: "the same, 10 log records", prepare: use("small"),
			run: checkpointCmd(t.dir, &a), check: wantReused(&r0.Checkpoint)}, target: 1.05}},
		teardown: func() error {
			if in != "" {
				if err := move("", "."+in); err != nil {
					return err
				}
			}
			for _, s := range []string{".big", ".small"} {
				for _, f := range files {
					os.Remove(f + s)
				}
			}
			return move(".bench-saved", "")
		},
	}, nil
}
