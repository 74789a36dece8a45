package checkpoint

import (
	"context"
	"time"

	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/journal"
)

// Cleaned is RFC 5.3's checkpoints member of agent.clean's result: the
// checkpoint ids whose refs went and the ones kept.
type Cleaned struct {
	Agent   string   `json:"agent"`
	Repo    string   `json:"repo"`
	Removed []string `json:"removed"`
	Kept    []string `json:"kept"`
}

// Clean implements RFC 5.3 agent.clean for an in-place agent in this tree:
// it archives the agent (it no longer shares the tree) and deletes its
// checkpoint refs, except pre_rollback checkpoints younger than
// venom.checkpoints.keepSafety, which may hold the only copy of a person's
// edits; pruning removes those later. The log keeps every record. A ref
// that is gone already (deleted by hand, or by a clean whose record the
// log refused) is counted removed: clean can always be run again. An
// agent whose rollback in this tree never ended (interrupted, and not
// yet closed by a plan or rollback, RFC 7.6) is refused with
// conflict.rollback_running: archived, it could not be rolled back to the
// safety checkpoint. The caller holds the agent lock.
func (t *Tree) Clean(ctx context.Context, a *journal.Agent, now time.Time) (*Cleaned, error) {
	if b := a.OpenRollback; b != nil && b.Path == t.Path() {
		// Interrupted (a running one holds the agent lock the caller
		// took): archived, the agent could not be rolled back to its
		// safety checkpoint, and the way back that the doctor and every
		// warning print (UndoCommand) would fail as printed
		// (conflict.invalid_transition). The plan it names closes the
		// record (RFC 7.6), after which clean archives the agent.
		return nil, rfcerr.New("conflict.rollback_running", map[string]any{"agent": a.ID, "safety": b.Safety},
			"the rollback of %s to %s in this tree never ended (interrupted); archived, %s could not be rolled back to its safety checkpoint %s", a.ID, b.Checkpoint, a.ID, b.Safety).
			WithHint("to get the tree back as it was first, run `%s`, read the plan, and confirm it with the command it prints; that plan records the rollback as interrupted, and clean then archives %s whether or not you confirm it", UndoCommand(a.ID, b.Safety, ""), a.ID)
	}
	out := &Cleaned{Agent: a.ID, Repo: ".", Removed: []string{}, Kept: []string{}}
	var gone []*journal.Saved
	for _, s := range a.Checkpoints {
		if s.Pruned || len(s.Rec.Repos) == 0 || s.Rec.Repos[0].Path != t.Path() {
			continue
		}
		if s.Rec.Reason == ReasonPreRollback {
			if at, err := time.Parse(time.RFC3339Nano, s.Rec.At); err == nil && now.Sub(at) < t.Config.KeepSafety {
				out.Kept = append(out.Kept, s.ID())
				continue
			}
		}
		gone = append(gone, s)
		out.Removed = append(out.Removed, s.ID())
	}
	if err := t.deleteRefs(ctx, a.ID, gone); err != nil {
		return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": err.repo, "reason": err.reason}, "deleting the refs of %s", a.ID)
	}
	if _, err := t.Log.Append(journal.Entry{Type: journal.TypeAgentArchived, Body: journal.AgentArchived{Agent: a.ID, Removed: out.Removed, Kept: out.Kept}}); err != nil {
		return nil, LogError(err, "logging agent.archived for %s (its refs were deleted)", a.ID)
	}
	return out, nil
}
