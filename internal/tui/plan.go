package tui

import (
	"context"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/venom-org/git-venom/internal/cli"
	"github.com/venom-org/git-venom/internal/planview"
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

// planScreen is the confirmation screen (RFC 12): a dry run's result as
// planview lays it out for a person (internal/planview, as git venom-plan
// prints it): the summary (counts, HEAD, the conversation), then one row
// per path or folded directory, the person's first, marked ! and in gold,
// then the other changes, then the paths left as they are with their
// reasons; and the plan id, which `y` quotes. There is no other way to roll
// back from the TUI. The rows fold to fit the screen; enter opens a folded
// directory, / filters.
type planScreen struct {
	o      planOpts
	res    *rollback.Result
	banner string
	v      *planview.View
	// narrow are the folded directories opened (enter), innermost last;
	// the rows are those of the last one's items.
	narrow []planview.Row
	rows   []planview.Row
	key    string // what rows were made for: budget, filter, narrow
	l      list
	filter textinput.Model
	// filtering is true while the filter has the keys.
	filtering bool
	running   bool
}

func newPlan(m *Model, o planOpts, res *rollback.Result, banner string) *planScreen {
	s := &planScreen{o: o, res: res, banner: banner, filter: textinput.New(), v: planview.New(res, planview.Options{Budget: -1})}
	s.filter.Prompt = "/"
	s.filter.CharLimit = 256
	return s
}

func (s *planScreen) typing() bool { return s.filtering }

// esc clears a filter that is set, then closes an opened directory; the
// next esc goes back.
func (s *planScreen) esc() bool {
	switch {
	case s.filter.Value() != "":
		s.filter.SetValue("")
	case len(s.narrow) > 0:
		s.narrow = s.narrow[:len(s.narrow)-1]
	default:
		return false
	}
	s.l.cur, s.l.off = 0, 0
	return true
}

func (s *planScreen) title() string {
	return s.res.Agent + " · plan to roll back to " + s.res.Checkpoint
}

func (s *planScreen) help() string {
	switch {
	case s.filtering:
		return "type to filter paths · enter done · esc clear"
	case s.filter.Value() != "" || len(s.narrow) > 0:
		return "y confirm · enter open · / filter · esc the whole plan"
	}
	return "y confirm · ↑↓ pgup pgdn · enter open dir · / filter"
}

// items are the paths the rows show: the opened directory's, or all,
// under the filter.
func (s *planScreen) items() (shown, of int, items []planview.Item) {
	all := s.v.Items
	if n := len(s.narrow); n > 0 {
		all = s.narrow[n-1].Items
	}
	f := s.filter.Value()
	for _, it := range all {
		if f == "" || strings.Contains(it.Path, f) {
			items = append(items, it)
		}
	}
	return len(items), len(all), items
}

// layout makes the rows for a list of budget lines, when what they depend
// on changed (planview.Rows: directories fold until the rows fit).
func (s *planScreen) layout(budget int) {
	key := fmt.Sprint(budget, "\x00", s.filter.Value(), "\x00", len(s.narrow))
	if key == s.key {
		return
	}
	_, _, items := s.items()
	if budget < 1 {
		budget = 1
	}
	s.rows, s.key = planview.Rows(items, planview.Options{Budget: budget}), key
	s.l.n = len(s.rows)
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
				return nil
			}
			var cmd tea.Cmd
			s.filter, cmd = s.filter.Update(msg)
			s.l.cur, s.l.off = 0, 0
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
		case "enter":
			if s.l.cur < len(s.rows) && s.rows[s.l.cur].Dir {
				s.narrow = append(s.narrow, s.rows[s.l.cur])
				s.l.cur, s.l.off = 0, 0
			}
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
	var top []string
	if s.banner != "" {
		top = append(top, render(st.gold, wrap(s.banner, w, ""))...)
	}
	top = append(top, render(st.bold, wrap(s.v.Summary.Title(), w, "  "))...)
	for _, l := range s.v.Summary.Lines() {
		top = append(top, wrap(l, w, strings.Repeat(" ", 14))...)
	}
	for _, l := range cli.ResumeLines(s.res) {
		top = append(top, wrap("  "+l, w, "    ")...)
	}
	if s.res.Note != "" {
		top = append(top, wrap("  the model will be told: "+s.res.Note, w, "    ")...)
	}
	if n := len(s.narrow); n > 0 {
		d := s.narrow[n-1]
		top = append(top, st.bold.Render(cut("inside "+planview.Quote(d.Path)+": "+plural(d.Count, "path", "paths")+" ("+d.Change+" "+d.Class+")", w)))
	}
	var bottom []string
	if s.filtering || s.filter.Value() != "" {
		shown, of, _ := s.items()
		bottom = append(bottom, s.filter.View()+st.dim.Render("  "+planview.Number(shown)+" of "+planview.Number(of)+" paths; y confirms them all"))
	}
	bottom = append(bottom, wrap(st.bold.Render("y")+" confirms: "+cli.RollbackCommand(s.res, s.o.options()), w, "    ")...)
	listH := h - len(top) - len(bottom) - 1
	if listH < 1 {
		listH = 1
	}
	s.layout(listH)
	lines := append(top, "")
	if len(s.rows) == 0 {
		lines = append(lines, st.dim.Render("no path"))
	}
	cols := planview.ColumnsOf(s.rows)
	from, to := s.l.window(listH)
	for i := from; i < to; i++ {
		r := s.rows[i]
		text := r.Cells(cols, w).String()
		switch {
		case i == s.l.cur:
			text = st.cursor.Render(pad(text, w))
		case r.Person():
			text = st.gold.Render(text)
		case r.Change == planview.Left:
			text = st.dim.Render(text)
		}
		lines = append(lines, text)
	}
	lines = fit(lines, w, h-len(bottom))
	return append(lines, bottom...)
}
