package cli

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
)

const checkpointUsage = "git venom-checkpoint [--agent <id>] [--reason <reason>] [--label <text>] [--isolation <kind>] [--json]\n" +
	"   or: git venom-checkpoint list [--agent <id>] [--turn <t>] [--before <k>] [--limit <n>] [--json]\n" +
	"   or: git venom-checkpoint show [--agent <id>] <k> [--json]\n" +
	"   or: git venom-checkpoint --agent <new> --fork-of <agent> [--through-turn <t>] [--json]\n" +
	"   or: git venom-checkpoint diff [--agent <id>] <from> [<to>] [--path <path>] [--json]\n" +
	"   or: git venom-checkpoint edit --path <path>... [--agent <id>] [--json]\n" +
	"   or: git venom-checkpoint prune [--agent <id> | --all] [--json]\n" +
	"   or: git venom-checkpoint clean --agent <id> [--json]"

// subcommands are git venom-checkpoint's; anything else takes one.
var subcommands = map[string]func(context.Context, *env, []string) error{
	"list": checkpointList, "show": checkpointShow, "diff": checkpointDiff,
	"prune": checkpointPrune, "clean": checkpointClean, "edit": checkpointEdit,
}

// valued are the options of git venom-checkpoint and its subcommands that
// take a value as the next argument, so splitLead can step over it.
var valued = map[string]bool{
	"agent": true, "reason": true, "label": true, "isolation": true, "turn": true,
	"fork-of": true, "through-turn": true, "harness": true, "harness-session": true,
	"harness-turn": true, "harness-end": true, "before": true, "limit": true,
	"path": true, "directory": true, "C": true,
}

// splitLead splits args at the first one that is neither an option nor
// an option's value: lead are the options before it, with their values.
// "--" ends the options.
func splitLead(args []string) (lead, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--" || a == "-" || !strings.HasPrefix(a, "-"):
			return args[:i], args[i:]
		case strings.HasPrefix(a, "--"):
			if name := a[2:]; !strings.Contains(name, "=") && valued[name] {
				i++
			}
		case len(a) == 2 && valued[a[1:]]:
			i++ // -C dir; -Cdir is one argument
		}
	}
	return args, nil
}

// runCheckpoint dispatches git venom-checkpoint: a subcommand, or a
// capture. Options may come before the subcommand, as for git's own
// (`git venom-checkpoint --agent me list`), so that an alias
// `!git venom-checkpoint --agent me` can take one.
func runCheckpoint(ctx context.Context, e *env, args []string) error {
	lead, rest := splitLead(args)
	if len(rest) > 0 {
		if sub, ok := subcommands[rest[0]]; ok {
			return sub(ctx, e, append(append([]string(nil), lead...), rest[1:]...))
		}
	}
	return checkpointTake(ctx, e, args)
}

// subUsage is checkpointUsage's line for subcommand sub: what its -h and
// its usage errors print.
func subUsage(sub string) string {
	for _, l := range strings.Split(checkpointUsage, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "or:"))
		if strings.HasPrefix(l, "git venom-checkpoint "+sub+" ") {
			return l
		}
	}
	return checkpointUsage
}

// takeOutput is agent.checkpoint's result (RFC 11.1: agent, checkpoint,
// reused) followed by the record's other members (RFC 4.2), so a script
// reads skipped paths and submodules from the same object.
type takeOutput struct {
	Agent       string              `json:"agent"`
	Checkpoint  string              `json:"checkpoint"`
	Reused      bool                `json:"reused"`
	Reason      string              `json:"reason"`
	Turn        *string             `json:"turn"`
	ThroughTurn *string             `json:"through_turn"`
	At          string              `json:"at"`
	MidTurn     bool                `json:"mid_turn"`
	Overlap     bool                `json:"overlap"`
	Label       string              `json:"label,omitempty"`
	Repos       []journal.RepoState `json:"repos"`
}

func checkpointTake(ctx context.Context, e *env, args []string) error {
	fs := e.flags("checkpoint")
	agent := fs.String("agent", "", "agent id (default: $GIT_VENOM_AGENT, the only agent here, or \"default\")")
	reason := fs.String("reason", checkpoint.ReasonManual, "turn_start, turn_end, manual, takeover or takeback")
	label := fs.String("label", "", "a label for the checkpoint (set on the reused one when deduplicated)")
	isolation := fs.String("isolation", "", "in_place, worktree or copy; registered on the agent's first capture")
	turn := fs.String("turn", "", "the turn the caller believes this is (checked, never blocking)")
	forkOf := fs.String("fork-of", "", "with --reason fork: the agent whose conversation this new agent forks (RFC 10)")
	forkThrough := fs.String("through-turn", "", "with --fork-of: the source's turn the fork goes through (default its latest)")
	var h checkpoint.Harness
	fs.StringVar(&h.Name, "harness", "", "harness name (claude-code, codex, gemini, cursor)")
	fs.StringVar(&h.Session, "harness-session", "", "the harness's session id")
	fs.StringVar(&h.Turn, "harness-turn", "", "the harness's id of this turn")
	fs.StringVar(&h.End, "harness-end", "", "the harness's id of the turn's last message")
	if err := e.parse(fs, checkpointUsage, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr(checkpointUsage, "unknown subcommand %q", fs.Arg(0))
	}
	if *forkOf != "" && (*reason == checkpoint.ReasonManual || *reason == checkpoint.ReasonFork) {
		return checkpointFork(ctx, e, *agent, *forkOf, *forkThrough)
	}
	if *reason == checkpoint.ReasonFork {
		return usageErr(checkpointUsage, "--reason fork needs --fork-of <agent>")
	}
	if !slices.Contains(checkpoint.UserReasons, *reason) {
		return rfcerr.New("invalid_params.reason", map[string]any{"reason": *reason, "choices": checkpoint.UserReasons},
			"--reason %q is not one of %s", *reason, strings.Join(checkpoint.UserReasons, ", "))
	}
	switch *isolation {
	case "", checkpoint.IsolationInPlace, checkpoint.IsolationWorktree, checkpoint.IsolationCopy:
	default:
		return rfcerr.New("invalid_params.isolation", map[string]any{"isolation": *isolation},
			"--isolation %q is not one of in_place, worktree, copy", *isolation)
	}
	t, err := checkpoint.OpenTree(ctx, "")
	if err != nil {
		return err
	}
	e.startProgress(t.Repo)
	// The log is replayed here only when the agent must be found in it;
	// Take replays it again under the agent's lock either way.
	var st *journal.State
	if *agent == "" && os.Getenv("GIT_VENOM_AGENT") == "" {
		if st, err = t.Log.Load(); err != nil {
			return checkpoint.LogError(err, "reading the log")
		}
	}
	id, err := t.ResolveAgent(*agent, st)
	if err != nil {
		return err
	}
	res, err := t.Take(ctx, checkpoint.TakeOptions{Agent: id, Reason: *reason, Label: *label, Isolation: *isolation, Harness: h})
	if err != nil {
		return err
	}
	c := res.Checkpoint
	if *turn != "" && (res.Turn == nil || *res.Turn != *turn) {
		got := "no turn"
		if res.Turn != nil {
			got = *res.Turn
		}
		fmt.Fprintf(e.Err, "warning: --turn %s given, but the log puts this capture in %s\n", *turn, got)
	}
	if e.JSON {
		writeJSON(e.Out, takeOutput{Agent: id, Checkpoint: c.Checkpoint, Reused: res.Reused, Reason: c.Reason, Turn: c.Turn,
			ThroughTurn: c.ThroughTurn, At: c.At, MidTurn: c.MidTurn, Overlap: c.Overlap, Label: c.Label, Repos: c.Repos})
		return nil
	}
	verb := "took"
	if res.Reused {
		verb = "reused"
	}
	fmt.Fprintf(e.Out, "%s checkpoint %s of %s (%s%s)", verb, c.Checkpoint, id, *reason, turnSuffix(res.Turn))
	if len(c.Repos) > 0 {
		fmt.Fprintf(e.Out, " at %s", short(c.Repos[0].Commit))
	}
	fmt.Fprintln(e.Out)
	if res.Ended != "" {
		fmt.Fprintf(e.Out, "  ended %s first: its turn_end never came (an interrupt?), so its window is a gap\n", res.Ended)
	}
	if t.Path() != cwd() {
		fmt.Fprintf(e.Out, "  the whole tree %s was captured\n", quotePath(t.Path()))
	}
	captured := map[string]string{} // repo (its path from the top) → commit
	for _, r := range c.Repos {
		captured[r.Repo] = r.Commit
	}
	for _, r := range c.Repos {
		for _, s := range r.Skipped {
			if s.Reason == "too_big" {
				fmt.Fprintf(e.Out, "  skipped %s (%s, %s)\n", quotePath(s.Path), s.Reason, humanBytes(s.Bytes))
			}
		}
		if n := countReason(r.Skipped, "skip_worktree"); n > 0 {
			fmt.Fprintf(e.Out, "  kept %d skip-worktree path(s) at the index's content\n", n)
		}
		for _, s := range r.Submodules {
			c := "no commit"
			if s.Commit != nil {
				c = short(*s.Commit)
			}
			dirty := ""
			if s.Dirty {
				dirty = ", dirty"
			}
			full := s.Path
			if r.Repo != checkpoint.TopRepo {
				full = r.Repo + "/" + s.Path
			}
			if own, ok := captured[full]; ok {
				fmt.Fprintf(e.Out, "  submodule %s at %s%s, captured as %s\n", quotePath(full), c, dirty, short(own))
				continue
			}
			fmt.Fprintf(e.Out, "  nested repository %s at %s%s (not captured inside)\n", quotePath(full), c, dirty)
		}
	}
	return nil
}

func checkpointList(ctx context.Context, e *env, args []string) error {
	fs := e.flags("list")
	agent := fs.String("agent", "", "agent id")
	var o checkpoint.ListOptions
	fs.StringVar(&o.Turn, "turn", "", "only checkpoints of this turn")
	fs.StringVar(&o.Before, "before", "", "only checkpoints older than this one")
	fs.IntVar(&o.Limit, "limit", 50, "at most this many")
	var out outputFlags
	out.add(fs)
	if err := e.parse(fs, subUsage("list"), args); err != nil {
		return err
	}
	if err := e.setupOutput(ctx, "venom-checkpoint", out, true); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr(subUsage("list"), "list takes no arguments")
	}
	t, st, id, err := openWithAgent(ctx, *agent)
	if err != nil {
		return err
	}
	l, err := t.List(ctx, st, id, o)
	if err != nil {
		return err
	}
	if e.JSON {
		writeJSON(e.Out, l)
		return nil
	}
	if len(l.Checkpoints) == 0 {
		fmt.Fprintf(e.Out, "no checkpoints for agent %s\n", id)
		return nil
	}
	for _, c := range l.Checkpoints {
		turn := "-"
		if c.Turn != nil {
			turn = *c.Turn
		}
		flags := ""
		if c.MidTurn {
			flags += " mid-turn"
		}
		switch {
		case c.Moved:
			flags += " MOVED-REF"
		case c.Missing:
			flags += " MISSING-REF"
		}
		if c.Reused {
			flags += " (reused: the tree was as " + c.Checkpoint + " holds it)"
		}
		if c.Label != "" {
			flags += " \"" + c.Label + "\""
		}
		fmt.Fprintf(e.Out, "%-5s %-12s %-4s %-9s %s%s\n", c.Checkpoint, c.Reason, turn, age(c.At), short(firstCommit(c.Repos)), flags)
	}
	if l.Pending {
		fmt.Fprintln(e.Out, "(a capture is running)")
	}
	return nil
}

func openWithAgent(ctx context.Context, flag string) (*checkpoint.Tree, *journal.State, string, error) {
	t, err := checkpoint.OpenTree(ctx, "")
	if err != nil {
		return nil, nil, "", err
	}
	st, err := t.Log.Load()
	if err != nil {
		return nil, nil, "", checkpoint.LogError(err, "reading the log")
	}
	id, err := t.ResolveAgent(flag, st)
	if err != nil {
		return nil, nil, "", agentHints(err, st.AgentIDs(t.Path()))
	}
	return t, st, id, nil
}

func turnSuffix(t *string) string {
	if t == nil {
		return ""
	}
	return ", " + *t
}

func firstCommit(rs []journal.RepoState) string {
	if len(rs) == 0 {
		return ""
	}
	return rs[0].Commit
}

func short(oid string) string {
	if len(oid) > 10 {
		return oid[:10]
	}
	return oid
}

func countReason(s []plumbing.Skip, reason string) int {
	n := 0
	for _, x := range s {
		if x.Reason == reason {
			n++
		}
	}
	return n
}

func humanBytes(n int64) string { return checkpoint.HumanBytes(n) }

func age(at string) string {
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return at
	}
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

func cwd() string {
	d, err := os.Getwd()
	if err != nil {
		return ""
	}
	if c, err := plumbing.Canonical(d); err == nil {
		return c
	}
	return d
}

func checkpointFork(ctx context.Context, e *env, agent, source, through string) error {
	if agent == "" {
		return usageErr(checkpointUsage, "a fork needs --agent for the new agent")
	}
	t, err := checkpoint.OpenTree(ctx, "")
	if err != nil {
		return err
	}
	res, err := t.Fork(ctx, agent, source, through)
	if err != nil {
		return err
	}
	c := res.Checkpoint
	if e.JSON {
		writeJSON(e.Out, takeOutput{Agent: agent, Checkpoint: c.Checkpoint, Reason: c.Reason, Turn: c.Turn,
			ThroughTurn: c.ThroughTurn, At: c.At, Repos: c.Repos})
		return nil
	}
	fmt.Fprintf(e.Out, "forked %s from %s: %s points at %s (files as they were %s)\n", agent, source, c.Checkpoint,
		short(c.Repos[0].Commit), orNone(c.ThroughTurn))
	fmt.Fprintf(e.Out, "the tree is now shared, so guarded; to line the files up with the fork:\n  git venom-plan --agent %s %s --restore files --outside overwrite\n", agent, c.Checkpoint)
	return nil
}
