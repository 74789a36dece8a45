package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// rollbackRows are issue 3's rows: a real `git venom-rollback` of n paths
// against `git checkout <commit> -- <paths>` of the same paths (no target:
// it shows what the one status walk costs), and the same rollback against
// one status plus that checkout (target 1.3x): a rollback does one status
// walk (its S) and otherwise should cost what its paths cost, not what the
// tree is.
func rollbackRows(n int) []caseFunc {
	return []caseFunc{
		func(t *tree, o *options) (*benchCase, error) { return rollbackCase(t, n, false) },
		func(t *tree, o *options) (*benchCase, error) { return rollbackCase(t, n, true) },
	}
}

// rollbackCase: before every timed run of either side, n files get content
// no run wrote before. The venom side took a turn_start checkpoint K before
// that edit and a turn_end after it, and its plan to K (untimed); the timed
// run is the real call with that plan. All runs of a row are turns of one
// agent. The baseline checks the same paths
// out of HEAD, which holds K's content. Checked: the files are back.
func rollbackCase(t *tree, n int, withStatus bool) (*benchCase, error) {
	paths, err := pickFiles(t.dir, n)
	if err != nil {
		return nil, err
	}
	orig := make([][]byte, len(paths))
	for i, p := range paths {
		if orig[i], err = os.ReadFile(filepath.Join(t.dir, p)); err != nil {
			return nil, err
		}
	}
	modify := func(run int) error {
		tag := fmt.Sprintf("\nvenom-bench rollback run %d\n", run)
		for i, p := range paths {
			if err := os.WriteFile(filepath.Join(t.dir, p), append(orig[i][:len(orig[i]):len(orig[i])], tag...), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	restored := func() error {
		for i, p := range []string{paths[0], paths[len(paths)-1]} {
			j := 0
			if i == 1 {
				j = len(paths) - 1
			}
			got, err := os.ReadFile(filepath.Join(t.dir, p))
			if err != nil {
				return err
			}
			if !bytes.Equal(got, orig[j]) {
				return fmt.Errorf("%s was not restored", p)
			}
		}
		return nil
	}
	// One agent per row, in its own tree as far as venom knows (isolation
	// worktree, no other agent registered there): each run is one more
	// turn of it, rolled back, as a session goes. An agent per run would
	// make every earlier one a sharer of the tree, to be sent a note by
	// each rollback, so that the log, and what each run replays, would
	// grow with the square of the runs.
	agent := fmt.Sprintf("rb%d", len(paths))
	if withStatus {
		agent += "s"
	}
	var k, plan string
	prepare := func(run int) error {
		out, err := git(t.dir, "venom-checkpoint", "--agent", agent, "--isolation", "worktree", "--reason", "turn_start", "--json")
		if err != nil {
			return err
		}
		var c struct {
			Checkpoint string `json:"checkpoint"`
		}
		if err := json.Unmarshal(out, &c); err != nil || c.Checkpoint == "" {
			return fmt.Errorf("no checkpoint in %q", out)
		}
		k = c.Checkpoint
		if err := modify(run); err != nil {
			return err
		}
		if _, err := git(t.dir, "venom-checkpoint", "--agent", agent, "--reason", "turn_end", "--json"); err != nil {
			return err
		}
		out, err = git(t.dir, "venom-plan", "--agent", agent, k, "--restore", "files", "--json")
		if err != nil {
			return err
		}
		var p struct {
			Plan string `json:"plan"`
		}
		if err := json.Unmarshal(out, &p); err != nil || p.Plan == "" {
			return fmt.Errorf("no plan in %q", out)
		}
		plan = p.Plan
		return nil
	}
	spec := []byte(strings.Join(paths, "\x00") + "\x00")
	checkout := func() (outcome, error) {
		return commandIn(t.dir, spec, "checkout", "HEAD", "--pathspec-from-file=-", "--pathspec-file-nul")()
	}
	base := side{label: "git checkout HEAD -- <paths>", prepare: modify, run: checkout,
		check: func([]byte) error { return restored() }}
	name := fmt.Sprintf("rollback of %d paths", len(paths))
	if withStatus {
		name = fmt.Sprintf("rollback of %d paths, vs status+checkout", len(paths))
		base.label = "git status ...; git checkout HEAD -- <paths>"
		base.run = func() (outcome, error) {
			st, err := command(t.dir, statusCmd...)()
			if err != nil {
				return st, err
			}
			co, err := checkout()
			co.cpu += st.cpu
			return co, err
		}
	}
	target := 0.0 // against the checkout alone: to read beside the next row
	if withStatus {
		target = 1.3
	}
	return &benchCase{
		name:   name,
		target: target,
		venom: side{
			label:   "git venom-rollback K --plan P",
			prepare: prepare,
			run: func() (outcome, error) {
				return command(t.dir, "venom-rollback", "--agent", agent, k, "--restore", "files", "--plan", plan, "--json")()
			},
			check: func(out []byte) error {
				var r struct {
					Exact *bool `json:"exact"`
				}
				if err := json.Unmarshal(out, &r); err != nil || r.Exact == nil || !*r.Exact {
					return fmt.Errorf("rollback not exact: %s", out)
				}
				return restored()
			},
		},
		base: base,
		teardown: func() error {
			for i, p := range paths {
				if err := os.WriteFile(filepath.Join(t.dir, p), orig[i], 0o644); err != nil {
					return err
				}
			}
			return freshen(t.dir)
		},
	}, nil
}

// commandIn returns a timed run of git with args in dir, reading stdin
// (nil: none); stdout is returned, stderr goes into the error.
func commandIn(dir string, stdin []byte, args ...string) func() (outcome, error) {
	return func() (outcome, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = childEnv
		if stdin != nil {
			cmd.Stdin = bytes.NewReader(stdin)
		}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return outcome{}, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
		}
		return outcome{out: out.Bytes(), cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}, nil
	}
}
