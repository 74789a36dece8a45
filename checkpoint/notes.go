package checkpoint

import (
	"context"
	"sort"

	"github.com/venom-org/git-venom/journal"
)

// Notes is the store of RFC 8's files-only notes: note.pending records a
// `--restore files` rollback leaves for the agent (and each sharer), read
// and marked delivered by the agent's next prompt-submit hook. It
// implements harness.Notes.
type Notes struct{}

// Pending returns the note waiting for agent in tree t ("" when none) and
// a function that logs note.delivered for it. When several rollbacks left
// notes, the newest is printed (it describes the files as they are) and all
// are marked delivered. A note for one harness session is only that
// session's.
func (Notes) Pending(ctx context.Context, t *Tree, agent, session string) (string, func() error, error) {
	a, err := t.Log.LoadAgent(agent)
	if err != nil {
		return "", nil, err
	}
	if a == nil || len(a.Notes) == 0 {
		return "", nil, nil
	}
	var seqs []int64
	for seq, n := range a.Notes {
		if (n.Path == "" || n.Path == t.Path()) && (n.Session == "" || n.Session == session) {
			seqs = append(seqs, seq)
		}
	}
	if len(seqs) == 0 {
		return "", nil, nil
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	text := a.Notes[seqs[len(seqs)-1]].Text
	delivered := func() error {
		entries := make([]journal.Entry, 0, len(seqs))
		for _, s := range seqs {
			entries = append(entries, journal.Entry{Type: journal.TypeNoteDelivered, Body: journal.NoteDelivered{Agent: agent, Note: s}})
		}
		_, err := t.Log.Append(entries...)
		return err
	}
	return text, delivered, nil
}
