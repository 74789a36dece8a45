package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/journal"
)

// pruneOutput is what `git venom-checkpoint prune` removed, per agent.
type pruneOutput struct {
	Pruned []prunedAgent `json:"pruned"`
}

type prunedAgent struct {
	Agent       string   `json:"agent"`
	Checkpoints []string `json:"checkpoints"`
}

func checkpointPrune(ctx context.Context, e *env, args []string) error {
	fs := e.flags("prune")
	agent := fs.String("agent", "", "agent id")
	all := fs.Bool("all", false, "every agent with checkpoints in this tree")
	if err := e.parse(fs, subUsage("prune"), args); err != nil {
		return err
	}
	t, st, id, err := openWithAgent(ctx, *agent)
	if *all {
		if t, err = checkpoint.OpenTree(ctx, ""); err == nil {
			st, err = t.Log.Load()
		}
	}
	if err != nil {
		return err
	}
	ids := []string{id}
	if *all {
		ids = st.AgentIDs(t.Path())
	}
	out := pruneOutput{Pruned: []prunedAgent{}}
	for _, a := range ids {
		lk, err := journal.WaitLock(ctx, t.Log.LockPath(checkpoint.AgentLock(a)), true)
		if err != nil {
			return checkpoint.LogError(err, "locking agent %s", a)
		}
		fresh, err := t.Log.Load()
		if err != nil {
			lk.Unlock()
			return checkpoint.LogError(err, "reading the log")
		}
		var gone []string
		if ag := fresh.Agents[a]; ag != nil {
			gone, err = t.Prune(ctx, ag, journal.Now())
		}
		lk.Unlock()
		if err != nil {
			return err
		}
		if gone == nil {
			gone = []string{}
		}
		out.Pruned = append(out.Pruned, prunedAgent{Agent: a, Checkpoints: gone})
	}
	if e.JSON {
		writeJSON(e.Out, out)
		return nil
	}
	for _, p := range out.Pruned {
		if len(p.Checkpoints) == 0 {
			fmt.Fprintf(e.Out, "%s: nothing to prune\n", p.Agent)
			continue
		}
		fmt.Fprintf(e.Out, "%s: pruned %s\n", p.Agent, strings.Join(p.Checkpoints, " "))
	}
	return nil
}

func checkpointClean(ctx context.Context, e *env, args []string) error {
	fs := e.flags("clean")
	agent := fs.String("agent", "", "agent id (required)")
	if err := e.parse(fs, subUsage("clean"), args); err != nil {
		return err
	}
	if *agent == "" {
		return usageErr(subUsage("clean"), "clean needs --agent: it archives that agent")
	}
	t, _, id, err := openWithAgent(ctx, *agent)
	if err != nil {
		return err
	}
	lk, err := journal.TryLock(t.Log.LockPath(checkpoint.AgentLock(id)), true)
	if err != nil {
		return rfcerr.New("conflict.checkpoint_pending", map[string]any{"agent": id}, "a capture of agent %s is running", id)
	}
	defer lk.Unlock()
	st, err := t.Log.Load()
	if err != nil {
		return checkpoint.LogError(err, "reading the log")
	}
	a := st.Agents[id]
	if a == nil {
		return rfcerr.New("not_found.agent", map[string]any{"agent": id}, "no agent %s in this repository's log", id)
	}
	if open := a.OpenTurn(); open != nil {
		return rfcerr.New("conflict.turn_running", map[string]any{"agent": id, "turn": open.ID()},
			"turn %s of %s is still open", open.ID(), id).
			WithHint("end it first: git venom-checkpoint --agent %s --reason turn_end", id)
	}
	c, err := t.Clean(ctx, a, journal.Now())
	if err != nil {
		return err
	}
	if e.JSON {
		writeJSON(e.Out, map[string]any{"agent": id, "checkpoints": []*checkpoint.Cleaned{c}})
		return nil
	}
	sort.Strings(c.Kept)
	fmt.Fprintf(e.Out, "archived %s: removed %d checkpoint ref(s)", id, len(c.Removed))
	if len(c.Kept) > 0 {
		fmt.Fprintf(e.Out, ", kept safety checkpoint(s) %s until venom.checkpoints.keepSafety passes", strings.Join(c.Kept, " "))
	}
	fmt.Fprintln(e.Out)
	return nil
}
