package tui

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/venom-org/git-venom/internal/cli"
	"github.com/venom-org/git-venom/internal/planview"
	"github.com/venom-org/git-venom/rollback"
)

// resultScreen is what a rollback did: RFC 12's transcript row, the dropped
// turns folded under it, the paths, the verification, and the command that
// resumes the rewound conversation. `u` plans the undo (a files-only
// rollback to the safety checkpoint, as `git venom-rollback` prints).
type resultScreen struct {
	o   planOpts
	res *rollback.Result
	l   list
}

func newResult(o planOpts, res *rollback.Result) *resultScreen { return &resultScreen{o: o, res: res} }

func (s *resultScreen) title() string { return s.res.Agent + " · rolled back to " + s.res.Checkpoint }
func (s *resultScreen) help() string  { return "u plan the undo · ↑↓ scroll" }

// transcriptRow is RFC 12's row: ↺ Rolled back to k2 (after t1) · 1 file ·
// conversation too · undo: k4.
func transcriptRow(res *rollback.Result) string {
	when := "before the first turn"
	if t := res.Conversation.ThroughTurn; t != nil {
		when = "after " + *t
	}
	conv := "conversation unchanged"
	switch {
	case res.Restore == "files":
		conv = "files only"
	case res.Conversation.Rewinds:
		conv = "conversation too"
	}
	return "↺ Rolled back to " + res.Checkpoint + " (" + when + ") · " + plural(len(res.Repos[0].Files), "file", "files") + " · " + conv + " · undo: " + res.Safety
}

func (s *resultScreen) update(m *Model, msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return nil
	}
	if s.l.key(k.String()) {
		return nil
	}
	if k.String() == "u" {
		return startPlan(m, planOpts{agent: s.res.Agent, checkpoint: s.res.Safety, restore: "files"}, "the undo: back to the safety checkpoint "+s.res.Safety+", files only", false)
	}
	return nil
}

func (s *resultScreen) view(m *Model, w, h int) []string {
	st := m.app.st
	res := s.res
	v := planview.New(res, planview.Options{Budget: -1})
	lines := render(st.bold, wrap(transcriptRow(res), w, "  "))
	if d := res.Conversation.Drops; res.Conversation.Rewinds && len(d) > 0 {
		lines = append(lines, st.dim.Render("  ▸ dropped "+strings.Join(d, ", ")))
	}
	for _, l := range v.Summary.Lines() {
		lines = append(lines, wrap(l, w, strings.Repeat(" ", 14))...)
	}
	var tail []string
	for _, l := range cli.RescuedLines(res) {
		tail = append(tail, st.err.Render(l))
	}
	if l := cli.Verification(res); l != "" {
		if strings.HasPrefix(l, "verified") {
			tail = append(tail, st.ok.Render(l))
		} else {
			tail = append(tail, st.err.Render(l))
		}
	}
	if kept := cli.KeptBackupLines(res); len(kept) > 0 {
		for _, l := range kept[:len(kept)-1] {
			tail = append(tail, st.err.Render(l))
		}
		tail = append(tail, "going back to "+res.Safety+" may not give back everything; u plans the undo")
	} else {
		tail = append(tail, "safety checkpoint "+res.Safety+" holds the tree as it was before; u plans the undo")
	}
	if res.Note != "" {
		tail = append(tail, "the model will be told: "+res.Note)
	}
	// The commands wrap, never cut: a person copies them.
	tail = append(tail, cli.ContinueLines(res)...)
	var wrapped []string
	for _, l := range tail {
		wrapped = append(wrapped, wrap(l, w, "  ")...)
	}
	tail = wrapped
	// The rows fold to the room left; the keys scroll them.
	listH := max(h-len(lines)-len(tail)-1, 1)
	rows := planview.Rows(v.Items, planview.Options{Budget: listH})
	cols := planview.ColumnsOf(rows)
	s.l.n, s.l.h = len(rows), listH
	from := min(s.l.cur, max(len(rows)-listH, 0))
	s.l.cur = from
	to := min(from+listH, len(rows))
	lines = append(lines, "")
	for _, r := range rows[from:to] {
		text := r.Cells(cols, w).String()
		if r.Person() {
			text = st.gold.Render(text)
		}
		lines = append(lines, text)
	}
	lines = fit(lines, w, h-len(tail))
	return append(lines, tail...)
}
