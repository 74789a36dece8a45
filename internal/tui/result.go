package tui

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/venom-org/git-venom/internal/cli"
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
	r := res.Repos[0]
	lines := render(st.bold, wrap(transcriptRow(res), w, "  "))
	if d := res.Conversation.Drops; res.Conversation.Rewinds && len(d) > 0 {
		lines = append(lines, st.dim.Render("  ▸ dropped "+strings.Join(d, ", ")))
	}
	var tail []string
	switch {
	case len(r.Converted) > 0:
		tail = append(tail, "not byte for byte: "+plural(len(r.Converted), "file", "files")+" went through an end-of-line conversion or a filter")
	case res.Exact != nil && !*res.Exact && res.After == "":
		tail = append(tail, st.err.Render("warning: the rollback's own checkpoint could not be taken, so the result is not verified"))
	case res.Exact != nil && !*res.Exact:
		tail = append(tail, st.err.Render("warning: something wrote to the tree during the rollback; "+res.After+" shows it as it is now"))
	case res.After != "":
		tail = append(tail, st.ok.Render("verified: the tree is as planned ("+res.After+")"))
	}
	tail = append(tail, "safety checkpoint "+res.Safety+" holds the tree as it was before; u plans the undo")
	if res.Note != "" {
		tail = append(tail, "the model will be told: "+res.Note)
	}
	if len(res.Conversation.Resume) > 0 {
		tail = append(tail, "to resume the conversation as it was "+orAfter(res.Conversation.ThroughTurn)+":")
		// The command wraps, never cut: a person copies it.
		tail = append(tail, wrap("  "+strings.Join(res.Conversation.Resume, " "), w, "    ")...)
		tail = append(tail, "close the old session: what it remembers no longer matches the files")
	}
	var wrapped []string
	for _, l := range tail {
		wrapped = append(wrapped, wrap(l, w, "  ")...)
	}
	tail = wrapped
	var rows []string
	for _, f := range r.Files {
		rows = append(rows, "    "+pad(f.Change, 7)+" "+pad(f.Class, 8)+" "+cli.QuotePath(f.Path))
	}
	for _, l := range r.Left {
		rows = append(rows, "    left    "+pad(l.Reason, 19)+" "+cli.QuotePath(l.Path))
	}
	// The cursor is the first row shown: the keys scroll.
	s.l.n = len(rows)
	listH := h - len(lines) - len(tail) - 1
	if listH < 1 {
		listH = 1
	}
	s.l.h = listH
	from := s.l.cur
	if from > len(rows)-listH {
		from = max(len(rows)-listH, 0)
	}
	s.l.cur = from
	to := min(from+listH, len(rows))
	lines = append(lines, "")
	lines = append(lines, rows[from:to]...)
	lines = fit(lines, w, h-len(tail))
	return append(lines, tail...)
}

func orAfter(p *string) string {
	if p == nil {
		return "before the first turn"
	}
	return "after " + *p
}
