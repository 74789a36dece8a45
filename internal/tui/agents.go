package tui

import (
	"context"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/cli"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/rollback"
)

// agentRow is one agent of this tree as the log has it.
type agentRow struct {
	id, harness, open, last, age string
	guarded, archived            bool
}

// agentsScreen lists the agents with checkpoints in this tree (RFC 12's
// first screen, from the log): harness, open turn, last checkpoint, and
// whether the tree is guarded for it (RFC 6).
type agentsScreen struct {
	rows   []agentRow
	l      list
	loaded bool
	// dflt is the agent `k` takes a checkpoint for when none is listed
	// (ResolveAgent: $GIT_VENOM_AGENT, else "default").
	dflt string
}

func (s *agentsScreen) title() string { return "agents" }
func (s *agentsScreen) help() string {
	return "enter checkpoints · k checkpoint · r reload"
}

func (s *agentsScreen) refresh(m *Model) tea.Cmd {
	return m.run(s, "agents", func(ctx context.Context) (any, error) { return loadAgents(m.app.tree) })
}

type agentsLoaded struct {
	rows []agentRow
	dflt string
}

func loadAgents(t *checkpoint.Tree) (any, error) {
	st, err := t.Log.Load()
	if err != nil {
		return nil, checkpoint.LogError(err, "reading the log")
	}
	out := agentsLoaded{}
	for _, id := range st.AgentIDs(t.Path()) {
		out.rows = append(out.rows, agentOf(t, st, st.Agents[id]))
	}
	if len(out.rows) == 0 {
		if out.dflt, err = t.ResolveAgent("", st); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func agentOf(t *checkpoint.Tree, st *journal.State, a *journal.Agent) agentRow {
	r := agentRow{id: a.ID, harness: "-", open: "-", last: "-", guarded: rollback.Guarded(t, st, a), archived: a.Archived}
	for _, tu := range a.Turns {
		if tu.Harness != "" {
			r.harness = tu.Harness
		}
	}
	if r.harness == "-" && a.Binding != nil && a.Binding.Harness != "" {
		r.harness = a.Binding.Harness
	}
	if o := a.OpenTurn(); o != nil {
		r.open = o.ID() + " open"
	}
	if l := a.Latest(); l != nil {
		r.last, r.age = l.ID(), cli.Age(l.Rec.At)
	}
	return r
}

func (s *agentsScreen) update(m *Model, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case done:
		v := msg.v.(agentsLoaded)
		s.rows, s.dflt, s.loaded = v.rows, v.dflt, true
		s.l.n = len(s.rows)
	case tea.KeyMsg:
		k := msg.String()
		if s.l.key(k) {
			return nil
		}
		switch k {
		case "enter":
			if len(s.rows) > 0 {
				return m.push(newCheckpoints(s.rows[s.l.cur].id))
			}
		case "k":
			agent := s.dflt
			if len(s.rows) > 0 {
				agent = s.rows[s.l.cur].id
			}
			if agent != "" {
				return takeManual(m, s, agent)
			}
		case "r":
			return s.refresh(m)
		}
	}
	return nil
}

// takeManual takes a manual checkpoint of agent (RFC 12 `k`; a capture
// changes nothing the user sees, RFC 4 invariant 1); the line that says
// what it made goes to the status line, and s is refreshed.
func takeManual(m *Model, s screen, agent string) tea.Cmd {
	t := m.app.tree
	m.say("taking a checkpoint of " + agent + "…")
	return m.run(s, "take", func(ctx context.Context) (any, error) {
		res, err := t.Take(ctx, checkpoint.TakeOptions{Agent: agent, Reason: checkpoint.ReasonManual})
		if err != nil {
			return nil, err
		}
		verb := "took"
		if res.Reused {
			verb = "reused (nothing changed since it)"
		}
		return fmt.Sprintf("%s checkpoint %s of %s (manual)", verb, res.Checkpoint.Checkpoint, agent), nil
	})
}

func (s *agentsScreen) view(m *Model, w, h int) []string {
	st := m.app.st
	lines := []string{cli.QuotePath(m.app.tree.Path()), ""}
	if !s.loaded {
		return append(lines, "reading the log…")
	}
	if len(s.rows) == 0 {
		return append(lines, "no agent has a checkpoint in this tree yet.",
			"k takes a manual checkpoint for "+s.dflt+"; a harness's hooks take them at each turn (git venom-hook install).")
	}
	lines = append(lines, st.dim.Render(fmt.Sprintf("  %-24s %-12s %-8s %-14s %s", "agent", "harness", "turn", "last", "tree")))
	from, to := s.l.window(h - len(lines))
	for i := from; i < to; i++ {
		r := s.rows[i]
		g := "unguarded"
		if r.guarded {
			g = "guarded"
		}
		if r.archived {
			g += ", archived"
		}
		last := r.last
		if r.age != "" {
			last += " " + r.age
		}
		line := fmt.Sprintf("%-24s %-12s %-8s %-14s %s", r.id, r.harness, r.open, last, g)
		if i == s.l.cur {
			lines = append(lines, st.cursor.Render(pad("› "+line, w)))
		} else {
			lines = append(lines, "  "+line)
		}
	}
	return lines
}
