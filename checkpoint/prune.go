package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
	"github.com/venom-org/git-venom/refs"
)

// Prunable returns the ids of agent a's checkpoints in this tree that RFC
// 5.2's retention removes at time now: never the newest; turn_start,
// turn_end, takeover, takeback, fork and rollback checkpoints, and the
// hooks' per-tool-call ones (manual, ToolCall), beyond the newest Keep of
// them or older than KeepFor; other manual ones older than KeepFor;
// pre_rollback ones older than KeepSafety. Oldest first.
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
		switch {
		case s.Rec.Reason == ReasonManual && !s.Rec.ToolCall:
			drop[i] = t.Config.KeepFor > 0 && age > t.Config.KeepFor
		case s.Rec.Reason == ReasonPreRollback:
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
	ids := make([]string, 0, len(victims))
	for _, s := range victims {
		ids = append(ids, s.ID())
	}
	if err := t.deleteRefs(ctx, a.ID, victims); err != nil {
		// A ref that moved fails the transaction; the log is still the
		// truth, and the next prune retries (RFC 5.3).
		return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": err.repo, "reason": err.reason}, "pruning checkpoints of %s", a.ID)
	}
	if _, err := t.Log.Append(journal.Entry{Type: journal.TypeCheckpointPruned, Body: journal.Pruned{Agent: a.ID, Checkpoints: ids}}); err != nil {
		return nil, LogError(err, "logging checkpoint.pruned for %s (the refs were deleted; the next prune records it)", a.ID)
	}
	return ids, nil
}

// refsError is deleteRefs's error, with the repository it happened in
// (data.repo) and the git command that failed as data.reason's value
// (RFC 11.3 failed.checkpoint_git).
type refsError struct {
	repo   string
	reason string
	err    error
}

func (e *refsError) Error() string { return e.err.Error() }
func (e *refsError) Unwrap() error { return e.err }

// deleteRefs deletes the refs of agent's checkpoints saved in every
// repository they name (RFC 5.1, 5.2: the top and each submodule), one
// update-ref transaction per repository, each ref with its logged commit
// there as the old value, so a ref that moved is left alone and fails the
// transaction. A ref that is gone already (deleted by hand, or by a prune
// or clean whose record the log then refused) has nothing to delete and
// is skipped: left in the transaction, it would fail it, and every later
// prune or clean with it. A submodule no longer where the checkpoint
// found it (removed since) is passed over: its refs cannot be reached
// from the tree, and hold nothing the top's checkpoints need. No ref
// transaction is ever cut short: git killed in the middle of one leaves
// some refs deleted with no record saying so, and lock files that fail
// every later one; the caller's deadline (a capture's
// venom.checkpoints.timeout) does not apply here.
func (t *Tree) deleteRefs(ctx context.Context, agent string, saved []*journal.Saved) *refsError {
	ctx = context.WithoutCancel(ctx)
	type batch struct {
		rs  journal.RepoState
		del []refSet
	}
	var order []string
	byPath := map[string]*batch{}
	for _, s := range saved {
		for _, rs := range s.Rec.Repos {
			b := byPath[rs.Path]
			if b == nil {
				b = &batch{rs: rs}
				byPath[rs.Path] = b
				order = append(order, rs.Path)
			}
			b.del = append(b.del, refSet{ref: refs.Checkpoint(agent, s.N), commit: plumbing.OID(rs.Commit)})
		}
	}
	for _, p := range order {
		b := byPath[p]
		repo := b.rs.Repo
		if repo == "" {
			repo = TopRepo
		}
		g, err := t.RepoAt(ctx, b.rs)
		if err != nil {
			if repo == TopRepo {
				return &refsError{repo, "rev-parse", err}
			}
			continue
		}
		present, err := g.ResolveRefs(ctx, refs.AgentPrefix(agent))
		if err != nil {
			return &refsError{repo, "for-each-ref", err}
		}
		var in bytes.Buffer
		for _, d := range b.del {
			if _, ok := present[d.ref]; !ok {
				continue
			}
			removeStaleRefLock(g, d.ref)
			fmt.Fprintf(&in, "delete %s %s\n", d.ref, d.commit)
		}
		if in.Len() == 0 {
			continue
		}
		if _, err := g.Run(ctx, plumbing.Options{Stdin: &in, GitDirOnly: true}, "update-ref", "--stdin"); err != nil {
			return &refsError{repo, "update-ref", err}
		}
	}
	return nil
}

// staleRefLock is how old a lock file of a checkpoint ref must be for
// removeStaleRefLock to take it for a leftover: git holds one for the
// milliseconds of an update (a `git pack-refs` of the user's included).
const staleRefLock = time.Minute

// removeStaleRefLock removes ref's lock file (<git dir>/<ref>.lock) when it
// is older than staleRefLock. Under the agent lock, which Prune's caller
// holds, no toolkit process writes that agent's refs, so such a lock was
// left by a git that was killed (an older version cut prune short at the
// capture's deadline); left there, it would fail every later prune.
func removeStaleRefLock(g *plumbing.Repo, ref string) {
	lock := filepath.Join(g.CommonDir, filepath.FromSlash(ref)+".lock")
	if st, err := os.Lstat(lock); err == nil && st.Mode().IsRegular() && time.Since(st.ModTime()) > staleRefLock {
		os.Remove(lock)
	}
}
