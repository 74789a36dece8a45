package cli

import (
	"fmt"
	"strings"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/planview"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/rollback"
)

// maxHintRows is how many rows of paths a refusal's hints show at most.
const maxHintRows = 5

// planCommand is the git venom-plan command line for o's agent,
// checkpoint and choices, and spec, quoted for a POSIX shell: what a hint
// prints, so that it works when pasted. --agent is always given (the hint
// must work when more than one agent has checkpoints here).
func planCommand(o rollback.Options, spec []string) string {
	words := append([]string{"git", "venom-plan", "--agent", o.Agent, o.Checkpoint}, choiceArgs(o)...)
	return commandLine(append(words, specArgs(spec)...)...)
}

// rollbackCommand is the git venom-rollback command that confirms plan id
// for o and spec, quoted for a shell.
func rollbackCommand(o rollback.Options, plan string, spec []string) string {
	words := append([]string{"git", "venom-rollback", "--agent", o.Agent, o.Checkpoint, "--plan", plan}, choiceArgs(o)...)
	return commandLine(append(words, specArgs(spec)...)...)
}

// planHints gives err, an error of git venom-plan or git venom-rollback
// run with o and pathspec spec, hints that are commands a person can run
// as printed, each after "<what it does>: ": the plan again with the
// choice that gets past the refusal (--outside keep or overwrite,
// --restore files, --keep-head), with the agent and the choices already
// given kept; and for conflict.outside_edits the paths, a few rows with
// their directories folded (planview), never thousands. Errors of other
// codes are returned as they are.
func planHints(err error, o rollback.Options, spec []string) error {
	re := rfcerr.As(err)
	if re == nil {
		return err
	}
	with := func(mod func(*rollback.Options)) string {
		c := o
		mod(&c)
		return planCommand(c, spec)
	}
	switch re.Code {
	case "conflict.outside_edits":
		re.Hints = append(outsideRows(re.Data),
			"to keep them as they are: "+with(func(c *rollback.Options) { c.Outside = "keep" }),
			"to restore them too (their content stays in the safety checkpoint): "+with(func(c *rollback.Options) { c.Outside = "overwrite" }))
	case "conflict.checkpoint_files_only", "unsupported.harness_capability", "conflict.harness_fork_refused":
		re.Hints = []string{"to restore the files alone (the agent is told at its next prompt): " +
			with(func(c *rollback.Options) { c.Restore = "files" })}
	case "conflict.head_moved":
		re.Hints = []string{"to restore the files and leave HEAD where it is: " + with(func(c *rollback.Options) { c.KeepHead = true })}
	case "conflict.commits_pushed":
		re.Hints = []string{"to restore the files and leave HEAD, so the next push needs no force: " +
			with(func(c *rollback.Options) { c.KeepHead = true })}
	case "conflict.rollback_stale":
		re.Hints = []string{"read the new plan before you confirm it: " + with(func(*rollback.Options) {})}
	case "conflict.turn_running":
		re.Hints = []string{"stop the agent first",
			"if its turn was interrupted, end it: " + commandLine("git", "venom-checkpoint", "--agent", o.Agent, "--reason", "turn_end")}
	case "denied.agent_caller":
		re.Hints = []string{"a dry run is allowed: " + with(func(*rollback.Options) {}),
			"a person confirms it: " + rollbackCommand(o, o.Plan, spec)}
	case "not_found.checkpoint":
		if _, elsewhere := re.Data["tree"]; !elsewhere {
			if _, moved := re.Data["ref"]; !moved {
				re.Hints = []string{"the checkpoints of " + o.Agent + ": " + commandLine("git", "venom-checkpoint", "list", "--agent", o.Agent)}
			}
		}
	}
	return re
}

// outsideRows are the hint lines that show a conflict.outside_edits'
// paths: a title, then at most maxHintRows rows, directories folded.
func outsideRows(data map[string]any) []string {
	var items []planview.Item
	repos, _ := data["repos"].([]map[string]any)
	for _, r := range repos {
		paths, _ := r["paths"].([]string)
		changes, _ := r["changes"].([]string)
		prefix := ""
		if name, _ := r["repo"].(string); name != "" && name != checkpoint.TopRepo {
			prefix = name + "/" // a submodule's paths, from the top
		}
		for i, p := range paths {
			p = prefix + p
			ch := ""
			if i < len(changes) {
				ch = changes[i]
			}
			items = append(items, planview.Item{Path: p, Change: ch, Class: rollback.ClassOutside})
		}
	}
	if len(items) == 0 {
		return nil
	}
	rows := planview.Rows(items, planview.Options{Budget: maxHintRows})
	shown := rows
	if len(rows) > maxHintRows {
		shown = rows[:maxHintRows-1]
	}
	cols := planview.ColumnsOf(shown)
	out := []string{fmt.Sprintf("changed outside the agent's turns (a person's edits, or a gap's): %s", plural(len(items), "path"))}
	n := 0
	for _, r := range shown {
		out = append(out, "  "+strings.TrimRight(r.Cells(cols, 0).String(), " "))
		n += r.Count
	}
	if n < len(items) {
		out = append(out, fmt.Sprintf("  ... and %s more", plural(len(items)-n, "path")))
	}
	return out
}

// plural is "1 path" or "4,603 paths".
func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return planview.Number(n) + " " + one + "s"
}

// agentHints gives invalid_params.agent (several agents, none named) and
// not_found.agent hints that name agents of the tree in a command that
// works as printed: the listing of each (three at most, the others named).
// Errors of other codes are returned as they are.
func agentHints(err error, agents []string) error {
	re := rfcerr.As(err)
	if re == nil || (re.Code != "invalid_params.agent" && re.Code != "not_found.agent") || len(agents) == 0 {
		return err
	}
	if re.Code == "invalid_params.agent" {
		re.Hints = []string{"say which with --agent (or GIT_VENOM_AGENT)"}
	} else {
		re.Hints = nil
	}
	for i, a := range agents {
		if i == 3 {
			re.Hints = append(re.Hints, "the others: "+strings.Join(agents[3:], ", "))
			break
		}
		re.Hints = append(re.Hints, "the checkpoints of "+a+": "+commandLine("git", "venom-checkpoint", "list", "--agent", a))
	}
	return re
}
