package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
	"github.com/venom-org/git-venom/refs"
)

// Prunable returns the ids of agent a's checkpoints in this tree that RFC
// 5.2's retention removes at time now: never the newest; turn_start,
// turn_end, takeover, takeback, fork and rollback checkpoints beyond the
// newest Keep of them or older than KeepFor; manual ones older than
// KeepFor; pre_rollback ones older than KeepSafety. Oldest first.
func (t *Tree) Prunable(a *journal.Agent, now time.Time) []*journal.Saved {
	var live []*journal.Saved
	for _, s := range a.Checkpoints {
		if !s.Pruned && len(s.Rec.Repos) > 0 && s.Rec.Repos[0].Path == t.Path() {
			live = append(live, s)
		}
	}
	if len(live) <= 1 {
		return nil
	}
	var out []*journal.Saved
	counted := 0
	// Walk newest first, so "beyond the newest Keep" is a running count.
	drop := map[int]bool{}
	for i := len(live) - 2; i >= 0; i-- { // live[len-1] is the newest: kept
		s := live[i]
		at, err := time.Parse(time.RFC3339Nano, s.Rec.At)
		age := time.Duration(0)
		if err == nil {
			age = now.Sub(at)
		}
		switch s.Rec.Reason {
		case ReasonManual:
			drop[i] = t.Config.KeepFor > 0 && age > t.Config.KeepFor
		case ReasonPreRollback:
			drop[i] = t.Config.KeepSafety > 0 && age > t.Config.KeepSafety
		default:
			counted++
			drop[i] = (t.Config.Keep > 0 && counted >= t.Config.Keep) || (t.Config.KeepFor > 0 && age > t.Config.KeepFor)
		}
	}
	for i, s := range live {
		if drop[i] {
			out = append(out, s)
		}
	}
	return out
}

// Prune implements RFC 5.2 for one agent in this tree: it deletes the refs
// of the checkpoints Prunable names in one update-ref transaction (each
// with its logged commit as the old value, so a moved ref is left alone)
// and logs checkpoint.pruned. It never runs gc: the objects go when the
// repository's own gc gets to them. The caller holds the agent lock.
func (t *Tree) Prune(ctx context.Context, a *journal.Agent, now time.Time) ([]string, error) {
	victims := t.Prunable(a, now)
	if len(victims) == 0 {
		return nil, nil
	}
	var in bytes.Buffer
	ids := make([]string, 0, len(victims))
	for _, s := range victims {
		fmt.Fprintf(&in, "delete %s %s\n", refs.Checkpoint(a.ID, s.N), s.Rec.Repos[0].Commit)
		ids = append(ids, s.ID())
	}
	if _, err := t.Repo.Run(ctx, plumbing.Options{Stdin: &in}, "update-ref", "--stdin"); err != nil {
		// A ref that moved or vanished fails the transaction; the log is
		// still the truth, and the next prune retries (RFC 5.3).
		return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": ".", "reason": "update-ref"}, "pruning checkpoints of %s", a.ID)
	}
	if _, err := t.Log.Append(journal.Entry{Type: journal.TypeCheckpointPruned, Body: journal.Pruned{Agent: a.ID, Checkpoints: ids}}); err != nil {
		return nil, rfcerr.Wrap("failed.internal", err, nil, "logging checkpoint.pruned")
	}
	return ids, nil
}
