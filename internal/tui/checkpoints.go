package tui

import (
	"context"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/cli"
	"github.com/venom-org/git-venom/internal/rfcerr"
)

// checkpointsScreen is one agent's checkpoints, newest first (RFC 12,
// agent.checkpoints): id, reason, turn, files changed since the previous
// one, age and label, with marks for a rollback's safety (pre_rollback)
// and own (rollback) checkpoints.
type checkpointsScreen struct {
	agent  string
	info   agentRow
	items  []checkpoint.Item
	counts map[string]int // files changed since the previous checkpoint; absent: not known
	l      list
	loaded bool
}

func newCheckpoints(agent string) *checkpointsScreen { return &checkpointsScreen{agent: agent} }

func (s *checkpointsScreen) title() string {
	t := s.agent
	if s.loaded {
		t += " · " + s.info.harness
		if s.info.guarded {
			t += " · guarded"
		} else {
			t += " · unguarded"
		}
		if s.info.open != "-" {
			t += " · " + s.info.open
		}
	}
	return t
}

func (s *checkpointsScreen) help() string {
	return "enter diff · R roll back · k checkpoint · r reload"
}

type checkpointsLoaded struct {
	info   agentRow
	items  []checkpoint.Item
	counts map[string]int
}

func (s *checkpointsScreen) refresh(m *Model) tea.Cmd {
	t := m.app.tree
	agent := s.agent
	return m.run(s, "list", func(ctx context.Context) (any, error) {
		st, err := t.Log.Load()
		if err != nil {
			return nil, checkpoint.LogError(err, "reading the log")
		}
		a := st.Agents[agent]
		if a == nil {
			return nil, rfcerr.New("not_found.agent", map[string]any{"agent": agent}, "no agent %s in this repository's log", agent)
		}
		// Each checkpoint once (not list's reused turn starts): a row is one
		// checkpoint and its diff against the one before.
		l, err := t.List(ctx, st, agent, checkpoint.ListOptions{Limit: 1 << 30, NoReused: true})
		if err != nil {
			return nil, err
		}
		out := checkpointsLoaded{info: agentOf(t, st, a), items: l.Checkpoints, counts: map[string]int{}}
		// Files changed since the previous checkpoint, as `git
		// venom-checkpoint show` counts them: one diff-tree a checkpoint.
		var pairs [][2]string
		var ids []string
		for _, it := range l.Checkpoints {
			sv := a.Checkpoint(it.Checkpoint)
			if it.Missing || sv == nil || len(sv.Rec.Repos) == 0 {
				continue
			}
			from, _ := checkpoint.Since(a, sv)
			pairs = append(pairs, [2]string{from, sv.Rec.Repos[0].Commit})
			ids = append(ids, it.Checkpoint)
		}
		if diffs, _, err := t.Repo.DiffTreesEach(ctx, pairs, nil); err == nil {
			for i, d := range diffs {
				out.counts[ids[i]] = len(d)
			}
		}
		return out, nil
	})
}

func (s *checkpointsScreen) update(m *Model, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case done:
		v := msg.v.(checkpointsLoaded)
		if s.loaded && len(v.items) > len(s.items) {
			s.l.cur = 0 // a new checkpoint (k) is at the top: show it
		}
		s.info, s.items, s.counts, s.loaded = v.info, v.items, v.counts, true
		s.l.n = len(s.items)
	case tea.KeyMsg:
		k := msg.String()
		if s.l.key(k) {
			return nil
		}
		switch k {
		case "enter":
			if len(s.items) > 0 {
				return m.push(newDiff(s.agent, s.items[s.l.cur]))
			}
		case "R":
			if len(s.items) > 0 {
				return startPlan(m, planOpts{agent: s.agent, checkpoint: s.items[s.l.cur].Checkpoint, restore: "all"}, "", false)
			}
		case "k":
			return takeManual(m, s, s.agent)
		case "r":
			return s.refresh(m)
		}
	}
	return nil
}

// mark is the one-cell mark of a checkpoint: ◆ a rollback's safety
// checkpoint (the undo's target), ↺ a rollback's own, ! a ref gone or
// moved, ~ taken mid-turn.
func mark(it checkpoint.Item) string {
	switch {
	case it.Missing:
		return "!"
	case it.Reason == checkpoint.ReasonPreRollback:
		return "◆"
	case it.Reason == checkpoint.ReasonRollback:
		return "↺"
	case it.MidTurn:
		return "~"
	}
	return " "
}

func (s *checkpointsScreen) view(m *Model, w, h int) []string {
	st := m.app.st
	if !s.loaded {
		return []string{"reading the log…"}
	}
	if len(s.items) == 0 {
		return []string{"agent " + s.agent + " has no checkpoint in this tree; k takes one."}
	}
	lines := []string{
		st.dim.Render(fmt.Sprintf("    %-5s %-12s %-4s %-9s %-8s %s", "id", "reason", "turn", "files", "age", "label")),
	}
	from, to := s.l.window(h - 2)
	for i := from; i < to; i++ {
		it := s.items[i]
		files := "?"
		if n, ok := s.counts[it.Checkpoint]; ok {
			files = plural(n, "file", "files")
		}
		turn := "-"
		if it.Turn != nil {
			turn = *it.Turn
		}
		line := fmt.Sprintf("%s %-5s %-12s %-4s %-9s %-8s %s", mark(it), it.Checkpoint, it.Reason, turn, files, cli.Age(it.At), it.Label)
		if i == s.l.cur {
			lines = append(lines, st.cursor.Render(pad("› "+line, w)))
		} else {
			lines = append(lines, "  "+line)
		}
	}
	lines = fit(lines, w, h-1)
	return append(lines, st.dim.Render("◆ safety (pre_rollback) · ↺ rollback · ~ mid-turn · ! ref gone"))
}
