package tui

import (
	"context"
	"strings"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/venom-org/git-venom/internal/cli"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/rollback"
)

// planOpts are a rollback's choices (rollback.Options less the caller and
// the plan): what the dry run is asked, and what the real call quotes.
type planOpts struct {
	agent, checkpoint, restore, outside string
	keepHead                            bool
}

// options are the rollback's options, with the caller and the harness's
// part filled in as the CLI fills them (cli.RollbackOptions).
func (o planOpts) options() rollback.Options {
	return cli.RollbackOptions(rollback.Options{Agent: o.agent, Checkpoint: o.checkpoint, Restore: o.restore,
		Outside: o.outside, KeepHead: o.keepHead})
}

// command is the CLI's confirmation of the same plan, shown beside `y`.
func (o planOpts) command(plan string) string {
	args := []string{"git venom-rollback", "--agent", o.agent, o.checkpoint, "--plan", plan}
	if o.restore != "all" {
		args = append(args, "--restore", o.restore)
	}
	if o.outside != "" {
		args = append(args, "--outside", o.outside)
	}
	if o.keepHead {
		args = append(args, "--keep-head")
	}
	return strings.Join(args, " ")
}

// planRequest receives a dry run's answer: the confirmation screen, a
// choice when the dry run refused for want of one, or the error.
type planRequest struct {
	o       planOpts
	banner  string
	replace bool
}

func (r *planRequest) handlesErrors()                 {}
func (s *planScreen) handlesErrors()                  {}
func (r *planRequest) title() string                  { return "" }
func (r *planRequest) help() string                   { return "" }
func (r *planRequest) view(*Model, int, int) []string { return nil }

// startPlan runs the dry run of o (RFC 7.2: it writes nothing) and shows
// what it says. With replace, the screen on top (a choice, or a stale
// plan) makes way for it. banner is a line shown above the plan.
func startPlan(m *Model, o planOpts, banner string, replace bool) tea.Cmd {
	r := &planRequest{o: o, banner: banner, replace: replace}
	m.say("planning the rollback of " + o.agent + " to " + o.checkpoint + "…")
	a := m.app
	return m.run(r, "plan", func(ctx context.Context) (any, error) {
		opt := o.options()
		opt.DryRun = true
		return rollback.Run(ctx, a.tree, opt)
	})
}

func (r *planRequest) update(m *Model, msg tea.Msg) tea.Cmd {
	d := msg.(done)
	m.status = ""
	show := m.push
	if r.replace {
		show = m.replace
	}
	if d.err == nil {
		return show(newPlan(m, r.o, d.v.(*rollback.Result), r.banner))
	}
	if c := choiceFor(r.o, d.err); c != nil {
		c.banner = r.banner
		return show(c)
	}
	m.fail(d.err)
	return nil
}

// planScreen is the confirmation screen (RFC 12): a dry run's result, the
// person's paths first in gold, then the other paths, then those left as
// they are with their reasons, then HEAD and the conversation, and the
// plan id. `y` confirms by quoting that plan id; there is no other way to
// roll back from the TUI.
type planScreen struct {
	o      planOpts
	res    *rollback.Result
	banner string
	rows   []planRow
	rowsW  int   // the width rows were laid out for
	shown  []int // indices into rows, under the filter
	l      list
	filter textinput.Model
	// filtering is true while the filter has the keys.
	filtering bool
	running   bool
}

func newPlan(m *Model, o planOpts, res *rollback.Result, banner string) *planScreen {
	s := &planScreen{o: o, res: res, banner: banner, filter: textinput.New()}
	s.filter.Prompt = "/"
	s.filter.CharLimit = 256
	s.layout(80)
	return s
}

func (s *planScreen) typing() bool { return s.filtering }

// esc clears a filter that is set; the next esc goes back.
func (s *planScreen) esc() bool {
	if s.filter.Value() == "" {
		return false
	}
	s.filter.SetValue("")
	s.apply()
	return true
}

func (s *planScreen) title() string {
	return s.res.Agent + " · plan to roll back to " + s.res.Checkpoint
}

func (s *planScreen) help() string {
	if s.filtering {
		return "type to filter paths · enter done · esc clear"
	}
	if s.filter.Value() != "" {
		return "y confirm · ↑↓ pgup pgdn scroll · / filter · esc clear filter"
	}
	return "y confirm · ↑↓ pgup pgdn scroll · / filter"
}

// layout lays the rows out for width w (long lines of text wrap; a
// path's line is cut), keeping the cursor's row.
func (s *planScreen) layout(w int) {
	s.rows, s.rowsW = planRows(s.res, w), w
	s.apply()
}

// apply recomputes the rows shown under the filter.
func (s *planScreen) apply() {
	f := s.filter.Value()
	s.shown = s.shown[:0]
	for i, r := range s.rows {
		if f == "" || r.path == "" || strings.Contains(r.path, f) {
			s.shown = append(s.shown, i)
		}
	}
	s.l.n = len(s.shown)
}

func (s *planScreen) update(m *Model, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case done:
		return s.confirmed(m, msg)
	case tea.KeyMsg:
		k := msg.String()
		if s.filtering {
			switch k {
			case "enter":
				s.filtering = false
				s.filter.Blur()
				return nil
			case "esc":
				s.filtering = false
				s.filter.Blur()
				s.filter.SetValue("")
				s.apply()
				return nil
			}
			var cmd tea.Cmd
			s.filter, cmd = s.filter.Update(msg)
			s.apply()
			return cmd
		}
		if s.running {
			return nil
		}
		if s.l.key(k) {
			return nil
		}
		switch k {
		case "/":
			s.filtering = true
			return s.filter.Focus()
		case "y":
			return s.confirm(m)
		case "n":
			return m.pop()
		}
	}
	return nil
}

// confirm is `y`: the real call, quoting the plan id this screen shows
// (RFC 7.4). It runs under context.Background(), and q waits for it.
func (s *planScreen) confirm(m *Model) tea.Cmd {
	a := m.app
	s.running, a.busy = true, true
	m.say("rolling back " + s.o.agent + " to " + s.o.checkpoint + " with plan " + s.res.Plan + "…")
	opt := s.o.options()
	opt.Plan = s.res.Plan
	return func() tea.Msg {
		var res *rollback.Result
		var err error
		a.call(func() { res, err = rollback.Run(context.Background(), a.tree, opt) })
		return done{to: s, kind: "rollback", v: res, err: err}
	}
}

func (s *planScreen) confirmed(m *Model, d done) tea.Cmd {
	s.running, m.app.busy = false, false
	m.status = ""
	if d.err == nil {
		return m.replace(newResult(s.o, d.v.(*rollback.Result)))
	}
	if re := rfcerr.As(d.err); re != nil && re.Code == "conflict.rollback_stale" {
		// As the CLI: refused, nothing changed; the new dry run is shown
		// in this plan's place, to be read and confirmed again.
		return startPlan(m, s.o, "plan "+s.res.Plan+" is stale: the tree, HEAD or the choices changed since it was made, and nothing was rolled back. This is the new plan:", true)
	}
	if re := rfcerr.As(d.err); re != nil && choiceFor(s.o, d.err) != nil {
		// The real call repeats the preflight before it compares plans,
		// so a tree that changed since the plan may be refused for what
		// changed (a person's new file: conflict.outside_edits) rather
		// than as stale. Nothing was rolled back either way; the new dry
		// run shows what to choose.
		return startPlan(m, s.o, "nothing was rolled back: the tree changed since plan "+s.res.Plan+" ("+re.Code+"). This is the new dry run:", true)
	}
	m.fail(d.err)
	return nil
}

func (s *planScreen) view(m *Model, w, h int) []string {
	st := m.app.st
	res := s.res
	if w != s.rowsW {
		s.layout(w)
	}
	var top []string
	if s.banner != "" {
		top = append(top, render(st.gold, wrap(s.banner, w, ""))...)
	}
	head := "Roll back " + res.Agent + " to " + res.Checkpoint
	if res.Guarded != nil && *res.Guarded {
		head += " · guarded tree: HEAD and the index stay"
	}
	top = append(top, render(st.bold, wrap(head, w, "  "))...)
	top = append(top, wrap("plan "+res.Plan+" · "+summary(res), w, "  ")...)
	bottom := []string{}
	if s.filtering || s.filter.Value() != "" {
		bottom = append(bottom, s.filter.View()+st.dim.Render("  "+itoa(s.countShown())+" of "+itoa(s.countPaths())+" paths; y confirms them all"))
	}
	bottom = append(bottom, st.bold.Render("y")+" rolls back with plan "+res.Plan+", as:")
	bottom = append(bottom, render(st.dim, wrap("  "+s.o.command(res.Plan), w, "    "))...)
	listH := h - len(top) - len(bottom) - 1
	lines := append(top, "")
	from, to := s.l.window(listH)
	for i := from; i < to; i++ {
		r := s.rows[s.shown[i]]
		text := r.text
		switch r.kind {
		case rowHeading:
			text = st.bold.Render(text)
		case rowOutside, rowOutsideHeading:
			text = st.gold.Render(text)
		case rowDim:
			text = st.dim.Render(text)
		}
		if i == s.l.cur {
			text = st.cursor.Render(pad(r.text, w))
		}
		lines = append(lines, text)
	}
	lines = fit(lines, w, h-len(bottom))
	return append(lines, bottom...)
}

func (s *planScreen) countPaths() int {
	n := 0
	for _, r := range s.rows {
		if r.path != "" {
			n++
		}
	}
	return n
}

func (s *planScreen) countShown() int {
	n := 0
	for _, i := range s.shown {
		if s.rows[i].path != "" {
			n++
		}
	}
	return n
}

// Row kinds of the plan's list.
const (
	rowText = iota
	rowHeading
	rowOutsideHeading
	rowOutside
	rowPath
	rowDim
)

// planRow is one line of the plan's list; path is set on a path's line,
// which the filter matches.
type planRow struct {
	text, path string
	kind       int
}

// planRows lays out a dry run's result, in the order of RFC 12 and of
// `git venom-plan`: the person's paths, the other paths, what is left and
// why, HEAD and the conversation.
func planRows(res *rollback.Result, w int) []planRow {
	r := res.Repos[0]
	var rows []planRow
	var outside, rest []rollback.File
	for _, f := range r.Files {
		if f.Class == rollback.ClassOutside {
			outside = append(outside, f)
		} else {
			rest = append(rest, f)
		}
	}
	var keptOut, left []rollback.Left
	for _, l := range r.Left {
		if l.Reason == "outside" {
			keptOut = append(keptOut, l)
		} else {
			left = append(left, l)
		}
	}
	// section starts a section: its heading, after a blank row unless
	// it is the first.
	section := func(text string, kind int) {
		if len(rows) > 0 {
			rows = append(rows, planRow{text: ""})
		}
		rows = append(rows, planRow{text: text, kind: kind})
	}
	if len(outside) > 0 {
		section("changed outside the agent's turns (a person, or a gap), restored too:", rowOutsideHeading)
		for _, f := range outside {
			rows = append(rows, planRow{text: "  ! " + pad(f.Change, 7) + " " + cli.QuotePath(f.Path), path: f.Path, kind: rowOutside})
		}
	}
	if len(keptOut) > 0 {
		section("changed outside the agent's turns, kept as they are:", rowOutsideHeading)
		for _, l := range keptOut {
			rows = append(rows, planRow{text: "  ! " + cli.QuotePath(l.Path) + detail(l), path: l.Path, kind: rowOutside})
		}
	}
	if len(rest) > 0 {
		section("files:", rowHeading)
		for _, f := range rest {
			rows = append(rows, planRow{text: "    " + pad(f.Change, 7) + " " + pad(f.Class, 8) + " " + cli.QuotePath(f.Path), path: f.Path, kind: rowPath})
		}
	}
	if len(r.Files) == 0 {
		rows = append(rows, planRow{text: "no file changes: the tree already matches"})
	}
	if len(left) > 0 {
		section("left as they are:", rowHeading)
		for _, l := range left {
			rows = append(rows, planRow{text: "    " + pad(l.Reason, 19) + " " + cli.QuotePath(l.Path) + detail(l), path: l.Path, kind: rowPath})
		}
	}
	if len(r.IgnoredEdits) > 0 {
		section("edited by the agent but ignored, so not restorable:", rowHeading)
		for _, p := range r.IgnoredEdits {
			rows = append(rows, planRow{text: "    " + cli.QuotePath(p), path: p, kind: rowPath})
		}
	}
	text := []string{"", headLine(r.Head)}
	text = append(text, conversationLines(res)...)
	if len(res.SharedWith) > 0 {
		text = append(text, "shared with: "+strings.Join(res.SharedWith, ", ")+" (they get a note)")
	}
	for _, t := range text {
		for _, l := range wrap(t, w, "    ") {
			rows = append(rows, planRow{text: l})
		}
	}
	return rows
}

func detail(l rollback.Left) string {
	if l.Detail == "" {
		return ""
	}
	return " (" + l.Detail + ")"
}

// summary is the plan in one line: counts, HEAD and the conversation.
func summary(res *rollback.Result) string {
	r := res.Repos[0]
	out := 0
	for _, f := range r.Files {
		if f.Class == rollback.ClassOutside {
			out++
		}
	}
	s := plural(len(r.Files), "file", "files")
	if out > 0 {
		s += " (" + itoa(out) + " outside)"
	}
	if len(r.Left) > 0 {
		s += " · " + itoa(len(r.Left)) + " left"
	}
	switch {
	case r.Head.Moves:
		s += " · HEAD moves"
	default:
		s += " · HEAD stays"
	}
	switch {
	case res.Restore == "files":
		s += " · files only"
	case res.Conversation.Rewinds:
		s += " · conversation too"
	}
	return s
}

func headLine(h rollback.Head) string {
	switch {
	case h.Moves && h.Commits == 0:
		return "HEAD: moves forward from " + cli.Short(deref(h.From)) + " to " + cli.Short(deref(h.To)) + ", dropping no commit"
	case h.Moves:
		return "HEAD: moves from " + cli.Short(deref(h.From)) + " to " + cli.Short(deref(h.To)) + ", leaving " + itoa(h.Commits) + " commit(s) (still reachable from the safety checkpoint)"
	case h.From != nil:
		return "HEAD: stays at " + cli.Short(*h.From)
	}
	return "HEAD: stays (no commit yet)"
}

// conversationLines say what happens to the conversation (RFC 8), as the
// plan does: a files-only rollback tells the model, in the note's words.
func conversationLines(res *rollback.Result) []string {
	c := res.Conversation
	switch {
	case res.Restore == "files":
		l := []string{"conversation: stays; the model will be told the files were rolled back:"}
		if res.Note != "" {
			l = append(l, "  \""+res.Note+"\"")
		}
		return l
	case c.Rewinds:
		l := []string{"conversation: rewinds to " + orBefore(c.ThroughTurn) + ", dropping " + strings.Join(c.Drops, ", ")}
		if len(c.Resume) > 0 {
			l = append(l, "  it continues in a new session "+c.HarnessSession+": "+strings.Join(c.Resume, " "))
		}
		return l
	}
	return []string{"conversation: nothing to rewind"}
}

func orBefore(p *string) string {
	if p == nil {
		return "before the first turn"
	}
	return *p
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
