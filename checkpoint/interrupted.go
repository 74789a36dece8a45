package checkpoint

import (
	"github.com/venom-org/git-venom/journal"
)

// CodeInterrupted is RFC 7.6's code for a rollback that never ended.
const CodeInterrupted = "failed.rollback_interrupted"

// CloseInterrupted implements RFC 7.6's start-up rule for a toolkit with no
// daemon: a rollback.started of this tree with no end, whose process no
// longer holds the tree's rollback lock, was interrupted. It is closed with
// rollback.ended {ok: false, code: failed.rollback_interrupted} and never
// resumed; nothing in the tree is written. It returns the rollbacks it
// closed, so the caller can name their safety checkpoints. st is updated.
func (t *Tree) CloseInterrupted(st *journal.State) ([]journal.RollbackStarted, error) {
	var open []journal.RollbackStarted
	for _, a := range st.Agents {
		if a.OpenRollback != nil && a.OpenRollback.Path == t.Path() {
			open = append(open, *a.OpenRollback)
		}
	}
	if len(open) == 0 {
		return nil, nil
	}
	lk, err := journal.TryLock(t.Log.LockPath(RollbackLock(t.Path())), true)
	if err != nil {
		return nil, nil // a rollback is running now: not interrupted
	}
	defer lk.Unlock()
	// Re-read under the lock: another command may have closed them.
	fresh, err := t.Log.Load()
	if err != nil {
		return nil, err
	}
	var closed []journal.RollbackStarted
	var entries []journal.Entry
	for _, a := range fresh.Agents {
		b := a.OpenRollback
		if b == nil || b.Path != t.Path() {
			continue
		}
		closed = append(closed, *b)
		entries = append(entries, journal.Entry{Type: journal.TypeRollbackEnded, Body: journal.RollbackEnded{
			Agent: b.Agent, Checkpoint: b.Checkpoint, Safety: b.Safety, Restore: b.Restore,
			OK: false, Code: CodeInterrupted, Path: b.Path}})
	}
	if len(entries) == 0 {
		return nil, nil
	}
	if _, err := t.Log.Append(entries...); err != nil {
		return nil, err
	}
	for _, b := range closed {
		if a := st.Agents[b.Agent]; a != nil {
			a.OpenRollback = nil
			a.Ended = append(a.Ended, journal.RollbackEnded{Agent: b.Agent, Checkpoint: b.Checkpoint, Safety: b.Safety, OK: false, Code: CodeInterrupted, Path: b.Path})
		}
	}
	return closed, nil
}
