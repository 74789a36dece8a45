package checkpoint

import (
	"context"
	"strings"

	"github.com/venom-org/git-venom/journal"
)

// CodeInterrupted is RFC 7.6's code for a rollback that never ended.
const CodeInterrupted = "failed.rollback_interrupted"

// Closed is a rollback CloseInterrupted closed: its rollback.started,
// the saves found in what it had moved away (Rescued), and the backup
// directories kept because their files are still needed (KeptDirs).
type Closed struct {
	journal.RollbackStarted
	Rescued  []Rescued
	KeptDirs []string
}

// CloseInterrupted implements RFC 7.6's start-up rule for a toolkit with no
// daemon: a rollback.started of this tree with no end, whose process no
// longer holds the tree's rollback lock, was interrupted. It is closed with
// rollback.ended {ok: false, code: failed.rollback_interrupted} and never
// resumed; nothing in the tree is written. What it had moved out of the
// tree is looked at first, and a person's save found there is kept under
// refs/venom/rescued/, named in the record (rescueInterrupted). It returns
// the rollbacks it closed, so the caller can name their safety
// checkpoints and the saves. st is updated. First, what rollbacks that
// ended left in their backup directories, killed before they removed
// them, goes where nothing else is in it (DropEndedBackups).
func (t *Tree) CloseInterrupted(ctx context.Context, st *journal.State) ([]Closed, error) {
	t.DropEndedBackups(ctx, st)
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
	var closed []Closed
	var entries []journal.Entry
	for _, a := range fresh.Agents {
		b := a.OpenRollback
		if b == nil || b.Path != t.Path() {
			continue
		}
		c := Closed{RollbackStarted: *b}
		c.Rescued, c.KeptDirs = t.rescueInterrupted(ctx, fresh, *b)
		closed = append(closed, c)
		ended := journal.RollbackEnded{Agent: b.Agent, Checkpoint: b.Checkpoint, Safety: b.Safety, Restore: b.Restore,
			OK: false, Code: CodeInterrupted, Path: b.Path}
		if len(c.Rescued) > 0 && c.Rescued[0].Ref != "" {
			ended.Rescued = c.Rescued[0].Ref
		}
		entries = append(entries, journal.Entry{Type: journal.TypeRollbackEnded, Body: ended})
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

// UndoCommand is the command, as a person types it in a POSIX shell, that
// plans the way back to safety, the safety checkpoint of agent's rollback,
// after the rollback was interrupted, failed or could not log its end (RFC
// 7.6): a plan to it with --agent (the tree may have other agents),
// --restore files (the conversation stays as it is) and --outside
// overwrite. Every path such a rollback wrote changed after its last
// capture, the safety checkpoint itself, so the plan classes each one
// outside, and a guarded tree refuses them by default
// (conflict.outside_edits): overwriting them is what undoing it means. A
// person's edit made since is an outside path as well: the plan lists it
// first, marked !, and the real call's own safety checkpoint keeps it. dir,
// when not "", is the tree to run it in, for a command printed from
// another tree: "cd <dir> && " comes first, so that the rollback command
// the plan prints to confirm it, typed next in the same shell, runs there
// too.
func UndoCommand(agent, safety, dir string) string {
	cmd := "git venom-plan --agent " + ShellQuote(agent) + " " + ShellQuote(safety) + " --restore files --outside overwrite"
	if dir != "" {
		cmd = "cd " + ShellQuote(dir) + " && " + cmd
	}
	return cmd
}

// UndoHint is the hint line of a rollback that did not end as planned:
// where the tree as it was is, and UndoCommand.
func UndoHint(agent, safety string) string {
	return "the safety checkpoint " + safety + " holds the tree as it was before the rollback; to go back to it, run `" +
		UndoCommand(agent, safety, "") + "`, read the plan, and confirm it with the command it prints"
}

// ShellQuote is s as one word of a POSIX shell: as it is when it holds only
// characters no shell treats specially, else in single quotes, each single
// quote inside closing the quotes, escaped with a backslash, and opening
// them again.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
