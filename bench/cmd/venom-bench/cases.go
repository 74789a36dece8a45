package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// caseFunc builds one row for a tree. Each row is one function: issue 3's
// rollback rows (rollback of 10 and of 1,000 paths against
// `git checkout <commit> -- <paths>`, target 1.3x) are two more functions
// in this list, built like modifiedCapture (a prepare that puts the tree
// in the state to undo, untimed, then the timed command).
type caseFunc func(t *tree, o *options) (*benchCase, error)

var cases = append([]caseFunc{
	cleanCapture,
	dedupCapture,
	modifiedCapture,
}, append(append(rollbackRows(10), rollbackRows(1000)...), toolCallRows...)...)

// statusCmd is the baseline the capture is held to (issue 2): the one walk
// any tool must do to know what changed.
var statusCmd = []string{"status", "--porcelain", "-z", "--untracked-files=all"}

// command returns a timed run of git with args in dir; stdout is returned,
// stderr goes into the error.
func command(dir string, args ...string) func() (outcome, error) {
	return commandIn(dir, nil, args...)
}

// checkpointCmd is what a harness hook runs: `git venom-checkpoint` through
// git's own dispatch, so the wrapper process is counted as users pay it.
func checkpointCmd(dir string, agent *string) func() (outcome, error) {
	return func() (outcome, error) {
		return command(dir, "venom-checkpoint", "--agent", *agent, "--reason", "manual", "--json")()
	}
}

type takeJSON struct {
	Checkpoint string `json:"checkpoint"`
	Reused     bool   `json:"reused"`
	Repos      []struct {
		Tree    string `json:"tree"`
		Skipped []struct {
			Path string `json:"path"`
		} `json:"skipped"`
	} `json:"repos"`
}

func parseTake(out []byte) (*takeJSON, error) {
	var r takeJSON
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("reading its JSON: %v: %q", err, out)
	}
	if len(r.Repos) != 1 {
		return nil, fmt.Errorf("want one repo in %s", out)
	}
	return &r, nil
}

func headTree(dir string) (string, error) {
	out, err := git(dir, "rev-parse", "HEAD^{tree}")
	return strings.TrimSpace(string(out)), err
}

// cleanCapture: a capture of a clean tree that makes a new checkpoint (a
// fresh agent every run, so nothing is deduplicated) against one status.
// Checked: the captured tree is HEAD's tree.
func cleanCapture(t *tree, o *options) (*benchCase, error) {
	want, err := headTree(t.dir)
	if err != nil {
		return nil, err
	}
	agent := ""
	return &benchCase{
		name:   "clean-tree capture",
		target: 1.5,
		venom: side{
			label:   "git venom-checkpoint (new checkpoint)",
			prepare: func(run int) error { agent = fmt.Sprintf("clean-%d", run); return nil },
			run:     checkpointCmd(t.dir, &agent),
			check: func(out []byte) error {
				r, err := parseTake(out)
				if err != nil {
					return err
				}
				if r.Reused || r.Repos[0].Tree != want {
					return fmt.Errorf("want a new checkpoint of tree %s, got reused=%v tree %s", want, r.Reused, r.Repos[0].Tree)
				}
				return nil
			},
		},
		base: side{label: "git " + strings.Join(statusCmd, " "), run: command(t.dir, statusCmd...), check: wantEmpty},
	}, nil
}

// dedupCapture: the second capture with nothing changed (RFC 3.2 reuses
// the latest checkpoint) against one status.
func dedupCapture(t *tree, o *options) (*benchCase, error) {
	agent := "dedup"
	first, err := checkpointCmd(t.dir, &agent)()
	if err != nil {
		return nil, err
	}
	r0, err := parseTake(first.out)
	if err != nil {
		return nil, err
	}
	return &benchCase{
		name:   "dedup no-op capture",
		target: 1.5,
		venom: side{
			label: "git venom-checkpoint (reused)",
			run:   checkpointCmd(t.dir, &agent),
			check: func(out []byte) error {
				r, err := parseTake(out)
				if err != nil {
					return err
				}
				if !r.Reused || r.Checkpoint != r0.Checkpoint {
					return fmt.Errorf("want %s reused, got %s reused=%v", r0.Checkpoint, r.Checkpoint, r.Reused)
				}
				return nil
			},
		},
		base: side{label: "git " + strings.Join(statusCmd, " "), run: command(t.dir, statusCmd...), check: wantEmpty},
	}, nil
}

func wantEmpty(out []byte) error {
	if len(out) != 0 {
		return fmt.Errorf("the tree is not clean: %.200q", out)
	}
	return nil
}

// modifiedCapture: o.modified tracked files changed, a capture (new
// checkpoint) against `git stash create` on the same state. Before every
// timed run, of either side, the files get content no earlier run wrote, so
// each run hashes and writes that many new blobs; neither side finds the
// other's objects already stored. The tree has no untracked files, so both
// sides store the same content (stash create never stores untracked files;
// with some, the capture would do strictly more work).
func modifiedCapture(t *tree, o *options) (*benchCase, error) {
	paths, err := pickFiles(t.dir, o.modified)
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
		tag := fmt.Sprintf("\nvenom-bench run %d\n", run)
		for i, p := range paths {
			if err := os.WriteFile(filepath.Join(t.dir, p), append(orig[i][:len(orig[i]):len(orig[i])], tag...), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	// hasEdit checks, untimed, that a captured tree holds the edit of the
	// first and the last modified path as they are on disk now.
	hasEdit := func(treeish string) error {
		for _, p := range []string{paths[0], paths[len(paths)-1]} {
			got, err := git(t.dir, "rev-parse", treeish+":"+p)
			if err != nil {
				return err
			}
			want, err := git(t.dir, "hash-object", "--", p)
			if err != nil {
				return err
			}
			if !bytes.Equal(got, want) {
				return fmt.Errorf("%s in %s is %s, the file is %s", p, treeish, bytes.TrimSpace(got), bytes.TrimSpace(want))
			}
		}
		return nil
	}
	agent := ""
	return &benchCase{
		name:   fmt.Sprintf("capture, %d modified files", len(paths)),
		target: 1.2,
		venom: side{
			label: "git venom-checkpoint (new checkpoint)",
			prepare: func(run int) error {
				agent = fmt.Sprintf("mod-%d", run)
				return modify(run)
			},
			run: checkpointCmd(t.dir, &agent),
			check: func(out []byte) error {
				r, err := parseTake(out)
				if err != nil {
					return err
				}
				if r.Reused {
					return fmt.Errorf("want a new checkpoint, got %s reused", r.Checkpoint)
				}
				return hasEdit(r.Repos[0].Tree)
			},
		},
		base: side{
			label:   "git stash create",
			prepare: modify,
			run:     command(t.dir, "stash", "create"),
			check: func(out []byte) error {
				oid := strings.TrimSpace(string(out))
				if oid == "" {
					return fmt.Errorf("stash create made no commit")
				}
				return hasEdit(oid + "^{tree}")
			},
		},
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

// pickFiles chooses n tracked regular files under 1 MiB, not ignore or
// attribute files, spread evenly over the index order (so over the whole
// tree, not one directory).
func pickFiles(dir string, n int) ([]string, error) {
	out, err := git(dir, "ls-files", "-s", "-z")
	if err != nil {
		return nil, err
	}
	var cand []string
	for _, rec := range bytes.Split(out, []byte{0}) {
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok {
			continue
		}
		f := strings.Fields(string(meta))
		if len(f) != 3 || f[2] != "0" || (f[0] != "100644" && f[0] != "100755") {
			continue
		}
		st, err := os.Lstat(filepath.Join(dir, string(path)))
		if err != nil || !st.Mode().IsRegular() || st.Size() > 1<<20 {
			continue
		}
		if base := filepath.Base(string(path)); base == ".gitignore" || base == ".gitattributes" {
			// Changing one changes what git makes of every other path: a
			// rollback that writes one re-reads the whole tree
			// (git-venom-rollback(1)). The rows measure the common case.
			continue
		}
		cand = append(cand, string(path))
	}
	if len(cand) < n {
		// A small repository: change all of them; the row's name says how many.
		n = len(cand)
	}
	if n == 0 {
		return nil, fmt.Errorf("the tree has no tracked regular file under 1 MiB to modify")
	}
	res := make([]string, 0, n)
	step := float64(len(cand)) / float64(n)
	for i := 0; i < n; i++ {
		res = append(res, cand[int(float64(i)*step)])
	}
	return res, nil
}
