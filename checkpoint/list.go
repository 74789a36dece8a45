package checkpoint

import (
	"context"
	"os"
	"sort"
	"strings"

	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
	"github.com/venom-org/git-venom/refs"
)

// ResolveAgent picks the agent a command acts on (DESIGN.md section 1):
// the flag, else $GIT_VENOM_AGENT, else the only agent with checkpoints in
// this tree, else "default". Several candidates are invalid_params.agent,
// listing them.
func (t *Tree) ResolveAgent(flag string, st *journal.State) (string, error) {
	id := flag
	if id == "" {
		id = os.Getenv("GIT_VENOM_AGENT")
	}
	if id == "" && st != nil {
		ids := st.AgentIDs(t.Path())
		switch len(ids) {
		case 0:
		case 1:
			id = ids[0]
		default:
			return "", rfcerr.New("invalid_params.agent", map[string]any{"candidates": ids},
				"several agents have checkpoints in this tree: %s", strings.Join(ids, ", ")).
				WithHint("say which with --agent or GIT_VENOM_AGENT")
		}
	}
	if id == "" {
		id = "default"
	}
	if err := refs.ValidAgent(id); err != nil {
		return "", rfcerr.Wrap("invalid_params.agent", err, map[string]any{"agent": id}, "bad agent id")
	}
	return id, nil
}

// Item is one entry of agent.checkpoints (RFC 11.1): the record of RFC 4.2
// without type and agent, plus conversation and label. Missing and Moved
// are the toolkit's additions: Missing, that the checkpoint's ref is gone
// or moved, so a plan or rollback to it is not_found.checkpoint; Moved,
// that it is there but holds another object than the logged commit (a
// blob, a tree, a tag or another commit), as Find and the doctor say.
type Item struct {
	Checkpoint   string  `json:"checkpoint"`
	Reason       string  `json:"reason"`
	Turn         *string `json:"turn"`
	ThroughTurn  *string `json:"through_turn"`
	At           string  `json:"at"`
	MidTurn      bool    `json:"mid_turn"`
	Overlap      bool    `json:"overlap"`
	Conversation bool    `json:"conversation"`
	Label        string  `json:"label,omitempty"`
	ToolCall     bool    `json:"tool_call,omitempty"`
	Missing      bool    `json:"missing,omitempty"`
	Moved        bool    `json:"moved,omitempty"`
	// Reused is the toolkit's addition: this entry is a turn's start or
	// end that found the tree as checkpoint Checkpoint (of another turn, or
	// of none) holds it and made no new one (RFC 3.2, checkpoint.reused);
	// Reason, Turn, ThroughTurn and At are that capture's, the rest the
	// checkpoint's. Absent for a checkpoint's own entry.
	Reused bool                `json:"reused,omitempty"`
	Repos  []journal.RepoState `json:"repos"`
}

// Listing is agent.checkpoints' result (RFC 11.1).
type Listing struct {
	Agent       string `json:"agent"`
	Pending     bool   `json:"pending"`
	Checkpoints []Item `json:"checkpoints"`
}

// ListOptions filters a listing: Turn keeps checkpoints of that turn,
// Before those older than that checkpoint id, Limit caps the count
// (default 50, as RFC 11.1). NoReused leaves the reuses out.
type ListOptions struct {
	Turn   string
	Before string
	Limit  int
	// NoReused leaves out the entries of captures that reused a
	// checkpoint (Item.Reused): only each checkpoint's own.
	NoReused bool
}

// List implements agent.checkpoints (RFC 11.1): the agent's checkpoints,
// newest first, from the log, with a ref check for each.
func (t *Tree) List(ctx context.Context, st *journal.State, agent string, o ListOptions) (*Listing, error) {
	out := &Listing{Agent: agent, Pending: t.Pending(agent), Checkpoints: []Item{}}
	a := st.Agents[agent]
	if a == nil {
		return out, nil
	}
	before := 0
	if o.Before != "" {
		n, err := refs.ParseID(o.Before)
		if err != nil {
			return nil, rfcerr.Wrap("invalid_params.checkpoint", err, nil, "bad --before")
		}
		before = n
	}
	if o.Limit <= 0 {
		o.Limit = 50
	}
	have, err := t.Repo.ResolveRefs(ctx, refs.AgentPrefix(agent))
	if err != nil {
		return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"reason": "for-each-ref"}, "reading checkpoint refs")
	}
	// The checkpoints and the turn_start and turn_end captures that reused
	// one of another turn (RFC 3.2: a turn_start that found the previous
	// turn_end's tree makes no ref, but it is that turn's start, and
	// --turn lists it), newest first. Other reuses (a manual capture that
	// found nothing new) add nothing a person needs.
	type entry struct {
		seq   int64
		s     *journal.Saved
		reuse *journal.Capture
	}
	var all []entry
	for _, s := range a.Checkpoints {
		all = append(all, entry{seq: s.Seq, s: s})
	}
	for i := range a.Captures {
		c := &a.Captures[i]
		if c.Type != journal.TypeCheckpointReused || (c.Reason != ReasonTurnStart && c.Reason != ReasonTurnEnd) {
			continue
		}
		if s := a.Checkpoint(c.Checkpoint); s != nil && (s.Rec.Turn == nil || *s.Rec.Turn != c.Turn) {
			all = append(all, entry{seq: c.Seq, s: s, reuse: c})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].seq > all[j].seq })
	for _, e := range all {
		if len(out.Checkpoints) >= o.Limit {
			break
		}
		s := e.s
		if s.Pruned || (before > 0 && s.N >= before) {
			continue
		}
		it := t.item(a, s, have)
		if c := e.reuse; c != nil {
			if o.NoReused {
				continue
			}
			it.Reused, it.Reason, it.Turn, it.ThroughTurn, it.At = true, c.Reason, nil, c.ThroughTurn, c.At
			if c.Turn != "" {
				turn := c.Turn
				it.Turn = &turn
			}
		}
		if o.Turn != "" && (it.Turn == nil || *it.Turn != o.Turn) {
			continue
		}
		out.Checkpoints = append(out.Checkpoints, it)
	}
	return out, nil
}

func (t *Tree) item(a *journal.Agent, s *journal.Saved, have map[string]plumbing.OID) Item {
	it := Item{Checkpoint: s.ID(), Reason: s.Rec.Reason, Turn: s.Rec.Turn, ThroughTurn: s.Rec.ThroughTurn,
		At: s.Rec.At, MidTurn: s.Rec.MidTurn, Overlap: s.Rec.Overlap, Label: s.Label, Repos: s.Rec.Repos,
		ToolCall: s.Rec.ToolCall, Conversation: Conversation(a, s)}
	// The ref is the top repository's (RFC 3.1), its commit the record's
	// first repository's, as RefHolds checks it; a submodule's commit is
	// under its own ref in its own repository.
	if len(s.Rec.Repos) > 0 {
		if now, ok := have[refs.Checkpoint(a.ID, s.N)]; string(now) != s.Rec.Repos[0].Commit {
			it.Missing, it.Moved = true, ok
		}
	}
	return it
}

// Conversation is RFC 8's conversation member: whether going back to s can
// bring the conversation back with the files. A mid-turn, overlapping or
// fork checkpoint cannot; otherwise it can when no rewind is needed (its
// through_turn is the agent's latest ended turn, or before the first turn),
// or when its turn has the harness ids a rewind needs.
func Conversation(a *journal.Agent, s *journal.Saved) bool {
	if s.Rec.MidTurn || s.Rec.Overlap || s.Rec.Reason == ReasonFork {
		return false
	}
	if s.Rec.ThroughTurn == nil {
		return true
	}
	if a.Dropped[*s.Rec.ThroughTurn] {
		return false // a rewind dropped that turn (RFC 8 "Going forward again")
	}
	last := a.LastEnded()
	if last != nil && last.ID() == *s.Rec.ThroughTurn {
		return true
	}
	for _, tt := range a.Turns {
		if tt.ID() == *s.Rec.ThroughTurn {
			return tt.HarnessEnd != "" || tt.HarnessTurn != ""
		}
	}
	return false
}

// Find returns the agent's checkpoint id, checked against its ref and this
// tree (RFC 7.1 item 1): never logged, pruned, its ref gone or moved, or
// taken in another tree are all not_found.checkpoint.
func (t *Tree) Find(ctx context.Context, st *journal.State, agent, id string) (*journal.Saved, error) {
	s, err := t.FindLogged(st, agent, id)
	if err != nil {
		return nil, err
	}
	ref := refs.Checkpoint(agent, s.N)
	v, err := t.Repo.RefValue(ctx, ref)
	if err != nil {
		return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"reason": "rev-parse"}, "reading %s", ref)
	}
	if err := t.RefHolds(ctx, agent, s, v); err != nil {
		return nil, err
	}
	return s, nil
}

// RefHolds is Find's check of the ref of s, agent's checkpoint as the log
// has it (FindLogged), given v, the commit the ref names as read ("" for
// none): not the logged commit is not_found.checkpoint, which says what
// the ref holds now. A rollback reads the ref with its capture's HEAD
// (CurrentAllReading), where Find reads it on its own.
func (t *Tree) RefHolds(ctx context.Context, agent string, s *journal.Saved, v plumbing.OID) error {
	return t.RefHoldsIn(ctx, agent, s, TopRepo, t.Repo, v)
}

// RefHoldsIn is RefHolds in the repository rel of s's repos[] (g its
// runner): its own ref of s must name the commit the record gives it,
// else not_found.checkpoint with data.repo rel. A submodule's ref is
// what keeps its side of the checkpoint from its gc (issue 18); a
// repository s does not name passes.
func (t *Tree) RefHoldsIn(ctx context.Context, agent string, s *journal.Saved, rel string, g *plumbing.Repo, v plumbing.OID) error {
	r := s.Rec.RepoEntry(rel)
	if r == nil || string(v) == r.Commit {
		return nil
	}
	ref := refs.Checkpoint(agent, s.N)
	what, now := refNow(ctx, g, ref)
	data := map[string]any{"checkpoint": s.ID(), "repo": rel, "ref": ref, "expected": r.Commit, "actual": now}
	in := ""
	if rel != TopRepo {
		in = " in submodule " + rel
	}
	return rfcerr.New("not_found.checkpoint", data,
		"checkpoint %s of %s: its ref %s%s %s (the log says commit %s)", s.ID(), agent, ref, in, what, r.Commit).
		WithHint("`git venom-doctor` lists every checkpoint whose ref is gone or moved")
}

// FindLogged is Find's check of the log alone, with no git child: the id
// is well formed, logged, not pruned, and taken in this tree. Its ref is
// not read: a command that checks the log before it takes its locks
// reads the ref once, under them (Find, or RefHolds).
func (t *Tree) FindLogged(st *journal.State, agent, id string) (*journal.Saved, error) {
	data := map[string]any{"checkpoint": id}
	n, err := refs.ParseID(id)
	if err != nil {
		return nil, rfcerr.Wrap("invalid_params.checkpoint", err, data, "bad checkpoint id")
	}
	id = refs.ID(n) // "3" and "k3" name the same checkpoint
	data["checkpoint"] = id
	a := st.Agents[agent]
	var s *journal.Saved
	if a != nil {
		s = a.Checkpoint(id)
	}
	if s == nil || s.Pruned {
		return nil, rfcerr.New("not_found.checkpoint", data, "agent %s has no checkpoint %s", agent, id).
			WithHint("the checkpoints of %s: git venom-checkpoint list --agent %s", agent, agent)
	}
	if len(s.Rec.Repos) == 0 {
		return nil, rfcerr.New("not_found.checkpoint", data, "checkpoint %s of %s names no tree", id, agent)
	}
	r := s.Rec.Repos[0]
	if r.Path != t.Path() {
		data["repo"] = "."
		data["tree"] = r.Path
		return nil, rfcerr.New("not_found.checkpoint", data,
			"checkpoint %s of %s was taken in %s, not in this tree (%s)", id, agent, r.Path, t.Path()).
			WithHint("run the command from %s", r.Path)
	}
	return s, nil
}

// refNow says what ref holds now, for a checkpoint whose ref no longer
// holds its logged commit: "is gone" (now nil), or "has moved to <type>
// <oid>" (now the object's id) when it points at another commit, or at a
// tree, blob or tag. A ref git cannot read counts as gone.
func refNow(ctx context.Context, g *plumbing.Repo, ref string) (what string, now *string) {
	oid, typ, err := g.RefObject(ctx, ref)
	if err != nil || oid == "" {
		return "is gone", nil
	}
	s := string(oid)
	return "has moved: it points at " + typ + " " + s + " now", &s
}
