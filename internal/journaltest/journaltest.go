// Package journaltest makes sidecar logs for tests and benchmarks: the
// records of agent sessions as the hooks log them.
package journaltest

import (
	"fmt"

	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
)

// Session returns the records of turns turns of agent ag in the tree at
// path tree, numbered from turn first, as the Claude Code hooks log them:
// a turn_start checkpoint and turn.started, two edit records, a turn_end
// checkpoint and turn.ended, and every fifth turn a checkpoint.pruned of
// two older checkpoints: about 6.2 records a turn. The checkpoints' commits
// and trees are made-up object names (no ref holds them).
func Session(ag, tree string, first, turns int) []journal.Entry {
	var es []journal.Entry
	oid := func(s string, n int) string { return fmt.Sprintf("%s%039d", s, n) }
	head := oid("c", 0)
	const session = "0d3c8b1e-7f2a-4c39-9a57-1b2c3d4e5f60"
	for i := first; i < first+turns; i++ {
		turn := fmt.Sprintf("t%d", i)
		ks, ke := fmt.Sprintf("k%d", 2*i-1), fmt.Sprintf("k%d", 2*i)
		through := fmt.Sprintf("t%d", i-1)
		cp := func(id, reason string) journal.Entry {
			return journal.Entry{Type: journal.TypeCheckpointTaken, Body: journal.Checkpoint{
				Agent: ag, Checkpoint: id, Reason: reason, Turn: &turn, ThroughTurn: &through, At: "2026-01-02T03:04:05.000Z",
				Repos: []journal.RepoState{{Repo: ".", Path: tree, Commit: oid("a", i), Tree: oid("b", i), Head: &head, Branch: "main",
					Skipped: []plumbing.Skip{}, Submodules: []plumbing.Submodule{}}}}}
		}
		es = append(es, cp(ks, "turn_start"),
			journal.Entry{Type: journal.TypeTurnStarted, Body: &journal.TurnStarted{Agent: ag, Turn: turn, Checkpoint: ks,
				Harness: "claude-code", HarnessSession: session, HarnessTurn: fmt.Sprintf("6f1e2d3c-4b5a-4968-8776-%012d", i)}},
			journal.Entry{Type: journal.TypeEdit, Body: journal.Edit{Agent: ag, Turn: turn, Paths: []string{fmt.Sprintf("src/file%d.go", i)}, Path: tree}},
			journal.Entry{Type: journal.TypeEdit, Body: journal.Edit{Agent: ag, Turn: turn, Paths: []string{"README.md"}, Path: tree}},
			cp(ke, "turn_end"),
			journal.Entry{Type: journal.TypeTurnEnded, Body: &journal.TurnEnded{Agent: ag, Turn: turn, Checkpoint: ke,
				HarnessSession: session, HarnessEnd: fmt.Sprintf("a%d-uuid-of-the-last-entry", i)}})
		if i%5 == 0 && i > 10 {
			es = append(es, journal.Entry{Type: journal.TypeCheckpointPruned, Body: journal.Pruned{Agent: ag,
				Checkpoints: []string{fmt.Sprintf("k%d", 2*i-19), fmt.Sprintf("k%d", 2*i-18)}}})
		}
	}
	return es
}

// Fill appends to l about records records of sessions of agent ag in
// tree (Session, in batches), after an agent.registered.
func Fill(l *journal.Log, ag, tree string, records int) error {
	if _, err := l.Append(journal.Entry{Type: journal.TypeAgentRegistered, Body: journal.AgentRegistered{Agent: ag, Path: tree, Isolation: "in_place"}}); err != nil {
		return err
	}
	n := 1
	for turn := 1; n < records; turn += 10 {
		es := Session(ag, tree, turn, 10)
		if len(es) > records-n {
			es = es[:records-n]
		}
		if _, err := l.Append(es...); err != nil {
			return err
		}
		n += len(es)
	}
	return nil
}
