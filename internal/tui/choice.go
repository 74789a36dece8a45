package tui

import (
	tea "github.com/charmbracelet/bubbletea"
	"github.com/venom-org/git-venom/internal/cli"
	"github.com/venom-org/git-venom/internal/rfcerr"
)

// choice is one answer a refused dry run offers: its words, what it means,
// and the choice it sets.
type choice struct {
	label, detail string
	set           func(*planOpts)
}

// choiceScreen is a dry run's refusal that a choice resolves (RFC 12): a
// conflict.outside_edits offers keep those files (the default) and
// overwrite them; a harness that cannot rewind the conversation offers the
// files only; a HEAD that cannot move back offers keeping it. Each answer
// runs the dry run again with the choice, and shows that plan: nothing is
// written before a plan is confirmed.
type choiceScreen struct {
	o       planOpts
	banner  string
	head    string
	lines   []string
	paths   []string
	choices []choice
	l       list
}

// choiceFor is the choice screen for a dry run's error, or nil when no
// choice resolves it.
func choiceFor(o planOpts, err error) *choiceScreen {
	re := rfcerr.As(err)
	if re == nil {
		return nil
	}
	c := &choiceScreen{o: o, head: re.Message}
	switch re.Code {
	case "conflict.outside_edits":
		c.head = "Paths changed outside the agent's turns (a person, or a gap):"
		c.paths = outsidePaths(re)
		c.lines = []string{"What should the rollback do with them?"}
		c.choices = []choice{
			{"keep those files", "leave them as they are (--outside keep)", func(o *planOpts) { o.outside = "keep" }},
			{"overwrite them", "restore them too; what they hold now stays in the safety checkpoint (--outside overwrite)", func(o *planOpts) { o.outside = "overwrite" }},
		}
	case "unsupported.harness_capability", "conflict.checkpoint_files_only":
		c.lines = []string{"The conversation cannot go back with the files, so a rollback can restore the files only."}
		c.choices = []choice{
			{"files only", "restore the files, keep the conversation; the model will be told the files were rolled back (--restore files)", func(o *planOpts) { o.restore = "files" }},
		}
	case "conflict.head_moved", "conflict.commits_pushed":
		c.lines = []string{"HEAD cannot go back with the files."}
		c.choices = []choice{
			{"keep HEAD", "restore the files and leave HEAD where it is (--keep-head)", func(o *planOpts) { o.keepHead = true }},
		}
	default:
		return nil
	}
	c.l.n = len(c.choices)
	return c
}

// outsidePaths reads data.repos[0].paths of a conflict.outside_edits.
func outsidePaths(re *rfcerr.Error) []string {
	repos, _ := re.Data["repos"].([]map[string]any)
	if len(repos) == 0 {
		return nil
	}
	p, _ := repos[0]["paths"].([]string)
	return p
}

func (c *choiceScreen) title() string {
	return c.o.agent + " · roll back to " + c.o.checkpoint + ": a choice"
}
func (c *choiceScreen) help() string { return "↑↓ choose · enter plan with it" }

func (c *choiceScreen) update(m *Model, msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return nil
	}
	if c.l.key(k.String()) {
		return nil
	}
	if k.String() == "enter" {
		o := c.o
		c.choices[c.l.cur].set(&o)
		return startPlan(m, o, "", true)
	}
	return nil
}

func (c *choiceScreen) view(m *Model, w, h int) []string {
	st := m.app.st
	var lines []string
	if c.banner != "" {
		lines = append(lines, render(st.gold, wrap(c.banner, w, ""))...)
	}
	lines = append(lines, render(st.bold, wrap(c.head, w, "  "))...)
	// The paths take what the choices leave; the rest is counted.
	room := h - len(lines) - 2 - len(c.lines) - 3*len(c.choices)
	for i, p := range c.paths {
		if i >= room-1 && len(c.paths) > room {
			lines = append(lines, st.gold.Render("  … and "+itoa(len(c.paths)-i)+" more"))
			break
		}
		lines = append(lines, st.gold.Render("  ! "+cli.QuotePath(p)))
	}
	lines = append(lines, "")
	for _, l := range c.lines {
		lines = append(lines, wrap(l, w, "")...)
	}
	lines = append(lines, "")
	for i, ch := range c.choices {
		if i == c.l.cur {
			lines = append(lines, st.cursor.Render(pad("› "+ch.label, w)))
		} else {
			lines = append(lines, "  "+ch.label)
		}
		lines = append(lines, render(st.dim, wrap("    "+ch.detail, w, "    "))...)
	}
	return lines
}
