package checkpoint

import (
	"context"

	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
	"github.com/venom-org/git-venom/refs"
)

// Fork implements RFC 10 for a new agent that forks source's conversation
// in the same tree: the new agent's k1 (reason fork, conversation false) is
// a new ref to the commit of source's newest checkpoint whose through_turn
// is the fork's point (through, or the source's latest ended turn when
// through is ""), leaving out mid-turn and overlapping ones. No file is
// touched. The new agent must have no checkpoints yet; both now share the
// tree, so it is guarded for both (RFC 6).
func (t *Tree) Fork(ctx context.Context, agent, source, through string) (*Result, error) {
	if err := refs.ValidAgent(agent); err != nil {
		return nil, rfcerr.Wrap("invalid_params.agent", err, map[string]any{"agent": agent}, "bad --agent")
	}
	lk, err := journal.WaitLock(ctx, t.Log.LockPath(AgentLock(agent)), true)
	if err != nil {
		return nil, lockError(err, agent)
	}
	defer lk.Unlock()
	st, err := t.Log.Load()
	if err != nil {
		return nil, LogError(err, "reading the log")
	}
	if a := st.Agents[agent]; a != nil && len(a.Checkpoints) > 0 {
		return nil, rfcerr.New("invalid_params.agent", map[string]any{"agent": agent},
			"agent %s already has checkpoints; a fork starts a new agent", agent)
	}
	src := st.Agents[source]
	if src == nil {
		return nil, rfcerr.New("not_found.agent", map[string]any{"agent": source}, "no agent %s to fork", source)
	}
	if through == "" {
		if last := src.LastEnded(); last != nil {
			through = last.ID()
		}
	}
	var from *journal.Saved
	for i := len(src.Checkpoints) - 1; i >= 0; i-- {
		s := src.Checkpoints[i]
		if s.Pruned || s.Rec.MidTurn || s.Rec.Overlap || len(s.Rec.Repos) == 0 || s.Rec.Repos[0].Path != t.Path() {
			continue
		}
		tt := ""
		if s.Rec.ThroughTurn != nil {
			tt = *s.Rec.ThroughTurn
		}
		if tt == through {
			from = s
			break
		}
	}
	if from == nil {
		return nil, rfcerr.New("not_found.checkpoint", map[string]any{"agent": source, "through_turn": through},
			"%s has no checkpoint in this tree through %s to fork from", source, orBefore(through))
	}
	rec := from.Rec
	rec.Agent, rec.Checkpoint, rec.Reason, rec.Label = agent, refs.ID(1), ReasonFork, ""
	rec.Turn, rec.MidTurn, rec.Overlap = nil, false, false
	rec.At = journal.Timestamp(journal.Now())
	// The fork's k1 is the source's commits under its own name, in every
	// repository the checkpoint names (RFC 10, 5.1).
	var made []refSet
	for _, rs := range rec.Repos {
		g, err := t.RepoAt(ctx, rs)
		if err == nil {
			err = g.CreateRef(ctx, refs.Checkpoint(agent, 1), plumbing.OID(rs.Commit), "venom fork "+agent+" of "+source)
		}
		if err != nil {
			_ = undoRefs(ctx, made, "venom: fork "+agent+" not made")
			return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": rs.Repo, "reason": "update-ref"}, "creating %s", refs.Checkpoint(agent, 1))
		}
		made = append(made, refSet{git: g, ref: refs.Checkpoint(agent, 1), commit: plumbing.OID(rs.Commit)})
	}
	iso := IsolationWorktree
	if t.Main() {
		iso = IsolationInPlace
	}
	if i, ok := src.Trees[t.Path()]; ok {
		iso = i
	}
	if _, err := t.Log.Append(
		journal.Entry{Type: journal.TypeAgentRegistered, Body: journal.AgentRegistered{Agent: agent, Path: t.Path(), Isolation: iso}},
		journal.Entry{Type: journal.TypeCheckpointTaken, Body: rec},
	); err != nil {
		return nil, t.unrecorded(ctx, agent, rec.Checkpoint, made, err)
	}
	return &Result{Checkpoint: rec}, nil
}

func orBefore(turn string) string {
	if turn == "" {
		return "before the first turn"
	}
	return turn
}
