package checkpoint

import (
	"context"

	"github.com/venom-org/git-venom/internal/rfcerr"
)

// ReasonLog is data.reason of a failed.checkpoint_git that the sidecar log
// caused: it could not be opened, read, replayed or appended to, or one of
// its locks could not be taken (docs/exit-codes.md).
const ReasonLog = "log"

// LogError is the error for a failure of the sidecar log: RFC 11.3's
// failed.checkpoint_git with data {repo: ".", reason: "log"}. The RFC has
// no code for the toolkit's own log, which lives in the repository's git
// directory beside the refs it names and is half of every checkpoint (RFC
// 4.2: the ref and its record), so a log that cannot be written fails a
// capture as a ref that cannot be written does. doing says what was being
// done ("reading the log"); the cause follows it in the message.
func LogError(err error, format string, args ...any) *rfcerr.Error {
	return rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": ".", "reason": ReasonLog}, format, args...)
}

// unrecorded is the error of a capture (or a fork) whose ref was made but
// whose record could not be appended (appendErr): no ref may be left that
// no record names. If the log holds the record after all (the write went
// through and only its sync failed), the ref stays, with its record;
// otherwise the ref is deleted again, with commit as its old value (a
// compare-and-swap: a ref that moved since is somebody else's and is left
// alone). The deletion is never cut short by ctx: the capture's deadline
// may be what failed the append (the log lock waited it out), and an
// update-ref killed midway leaves a lock file behind. The result is a
// LogError whose message says which of these happened.
func (t *Tree) unrecorded(ctx context.Context, agent, id string, made []refSet, appendErr error) error {
	if len(made) == 0 {
		return LogError(appendErr, "logging checkpoint %s of %s", id, agent)
	}
	if st, err := t.Log.Load(); err == nil {
		if a := st.Agents[agent]; a != nil {
			if s := a.Checkpoint(id); s != nil && len(s.Rec.Repos) > 0 && s.Rec.Repos[0].Commit == string(made[0].commit) {
				return LogError(appendErr, "logging checkpoint %s of %s (its record was written, but the log could not be synced)", id, agent)
			}
		}
	}
	if err := undoRefs(ctx, made, "venom: unrecorded "+agent+"/"+id); err != nil {
		return LogError(appendErr, "logging checkpoint %s of %s (its ref %s could not be deleted either, so it stays with no record: %v)", id, agent, made[0].ref, err).
			WithHint("`git venom-doctor` lists refs no record names; every command ignores them")
	}
	return LogError(appendErr, "logging checkpoint %s of %s (its ref %s was deleted again; no checkpoint was taken)", id, agent, made[0].ref)
}

// lockError is the error for a lock of agent that could not be taken for
// a reason other than another process holding it (the locks directory
// cannot be written, say).
func lockError(err error, agent string) *rfcerr.Error {
	return LogError(err, "locking agent %s", agent)
}
