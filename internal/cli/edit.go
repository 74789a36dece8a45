package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/plumbing"
)

const editUsage = "git venom-checkpoint edit --path <path>... [--agent <id>] [--json]"

// editOutput is the result of `git venom-checkpoint edit --json`: the
// record as logged, with turn null when no turn was open.
type editOutput struct {
	Agent string   `json:"agent"`
	Turn  *string  `json:"turn"`
	Paths []string `json:"paths"`
	Path  string   `json:"path"`
}

// MarshalJSON adds paths_bytes when a path is not valid UTF-8, as the
// record does (journal.Edit).
func (o editOutput) MarshalJSON() ([]byte, error) {
	type plain editOutput
	return plumbing.MarshalPathsBytes(plain(o), o.Paths)
}

// checkpointEdit records that an edit tool wrote the given paths during the
// agent's open turn (issue 4; the hooks of git-venom-hook(1) do the same).
// Relative paths are relative to the current directory, as in git.
func checkpointEdit(ctx context.Context, e *env, args []string) error {
	fs := e.flags("edit")
	agent := fs.String("agent", "", "agent id (default: $GIT_VENOM_AGENT, the only agent here, or \"default\")")
	paths := fs.StringArray("path", nil, "a path the edit tool wrote (repeat for several)")
	if err := e.parse(fs, editUsage, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr(editUsage, "edit takes paths with --path, not %q", fs.Arg(0))
	}
	if len(*paths) == 0 {
		return usageErr(editUsage, "give at least one --path")
	}
	here, err := os.Getwd()
	if err != nil {
		return rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": ".", "reason": "getwd"}, "reading the current directory")
	}
	abs := make([]string, len(*paths))
	for i, p := range *paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(here, p)
		}
		abs[i] = p
	}
	t, _, id, err := openWithAgent(ctx, *agent)
	if err != nil {
		return err
	}
	rec, err := t.RecordEdit(ctx, id, abs)
	if err != nil {
		return err
	}
	var turn *string
	if rec.Turn != "" {
		turn = &rec.Turn
	}
	if e.JSON {
		writeJSON(e.Out, editOutput{Agent: rec.Agent, Turn: turn, Paths: rec.Paths, Path: rec.Path})
		return nil
	}
	where := "between turns (no turn is open)"
	if turn != nil {
		where = "in " + *turn
	}
	fmt.Fprintf(e.Out, "recorded an edit of %d path(s) by %s %s\n", len(rec.Paths), id, where)
	for _, p := range rec.Paths {
		fmt.Fprintf(e.Out, "  %s\n", quotePath(p))
	}
	return nil
}
