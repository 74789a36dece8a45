package tui

import (
	"context"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/cli"
	"github.com/venom-org/git-venom/internal/planview"
	"github.com/venom-org/git-venom/journal"
)

// diffPart is one of the diff screen's two lists: the files between two
// trees (agent.checkpoint_diff), with line counts.
type diffPart struct {
	from, to string // commits or trees, for the patch
	label    string
	files    []checkpoint.FileDiff
	subs     []string // submodules whose files changed too (checkpoint.ChangedSubmodules)
	loaded   bool
	err      error
}

// diffScreen is Enter on a checkpoint (RFC 12): its files changed since
// the previous checkpoint, and from it to the files as they are now. Enter
// on a file shows its patch.
type diffScreen struct {
	agent string
	item  checkpoint.Item
	parts [2]diffPart
	l     list // over the file rows of both parts, the first part's first
}

func newDiff(agent string, it checkpoint.Item) *diffScreen {
	return &diffScreen{agent: agent, item: it}
}

func (s *diffScreen) title() string {
	t := s.agent + " · " + s.item.Checkpoint + " (" + s.item.Reason
	if s.item.Turn != nil {
		t += ", " + *s.item.Turn
	}
	return t + ")"
}

func (s *diffScreen) help() string {
	return "enter patch · tab other list · R roll back"
}

type partLoaded struct {
	i int
	p diffPart
}

func (s *diffScreen) refresh(m *Model) tea.Cmd {
	t := m.app.tree
	agent, id := s.agent, s.item.Checkpoint
	since := m.run(s, "part", func(ctx context.Context) (any, error) {
		a, sv, err := find(ctx, t, agent, id)
		if err != nil {
			return nil, err
		}
		from, label := checkpoint.Since(a, sv)
		p := diffPart{from: from, to: sv.Rec.Repos[0].Commit, label: "since " + label, loaded: true}
		p.files, p.err = t.TreeDiff(ctx, p.from, p.to)
		if prev := checkpoint.Previous(a, sv); prev != nil {
			p.subs = checkpoint.ChangedSubmodules(checkpoint.RepoTrees(prev.Rec.Repos), checkpoint.RepoTrees(sv.Rec.Repos))
		}
		return partLoaded{0, p}, nil
	})
	now := m.run(s, "part", func(ctx context.Context) (any, error) {
		_, sv, err := find(ctx, t, agent, id)
		if err != nil {
			return nil, err
		}
		p := diffPart{from: sv.Rec.Repos[0].Commit, label: id + " → the files now", loaded: true}
		if len(sv.Rec.Repos) > 1 {
			// The submodules are captured too, to say which changed.
			c, err := t.CurrentAll(ctx)
			if err != nil {
				p.err = err
				return partLoaded{1, p}, nil
			}
			p.to = string(c.Top().Tree)
			p.subs = checkpoint.ChangedSubmodules(checkpoint.RepoTrees(sv.Rec.Repos), c.Trees())
		} else {
			snap, err := t.CurrentTree(ctx)
			if err != nil {
				p.err = err
				return partLoaded{1, p}, nil
			}
			p.to = string(snap.Tree)
		}
		p.files, p.err = t.TreeDiff(ctx, p.from, p.to)
		return partLoaded{1, p}, nil
	})
	return tea.Sequence(since, now)
}

// find reads the log and finds agent's checkpoint id in it, checked
// against its ref and this tree (checkpoint.Tree.Find).
func find(ctx context.Context, t *checkpoint.Tree, agent, id string) (*journal.Agent, *journal.Saved, error) {
	st, err := t.Log.Load()
	if err != nil {
		return nil, nil, checkpoint.LogError(err, "reading the log")
	}
	sv, err := t.Find(ctx, st, agent, id)
	if err != nil {
		return nil, nil, err
	}
	return st.Agents[agent], sv, nil
}

// row is the file under the cursor: its part and index.
func (s *diffScreen) row(n int) (part, i int) {
	if n < len(s.parts[0].files) {
		return 0, n
	}
	return 1, n - len(s.parts[0].files)
}

func (s *diffScreen) update(m *Model, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case done:
		v := msg.v.(partLoaded)
		s.parts[v.i] = v.p
		s.l.n = len(s.parts[0].files) + len(s.parts[1].files)
	case tea.KeyMsg:
		k := msg.String()
		if s.l.key(k) {
			return nil
		}
		switch k {
		case "tab":
			if p, _ := s.row(s.l.cur); p == 0 && len(s.parts[1].files) > 0 {
				s.l.cur = len(s.parts[0].files)
			} else {
				s.l.cur = 0
			}
		case "enter":
			if s.l.n == 0 {
				return nil
			}
			p, i := s.row(s.l.cur)
			part := s.parts[p]
			return m.push(newPatch(part.from, part.to, part.files[i], s.title()+" · "+part.label))
		case "R":
			return startPlan(m, planOpts{agent: s.agent, checkpoint: s.item.Checkpoint, restore: "all"}, "", false)
		}
	}
	return nil
}

func fileLine(f checkpoint.FileDiff) string {
	stat := fmt.Sprintf("+%d -%d", f.Added, f.Removed)
	if f.Binary {
		stat = "binary"
	}
	return fmt.Sprintf("%-6s %-12s %s", f.Change, stat, cli.QuotePath(f.Path))
}

func (s *diffScreen) view(m *Model, w, h int) []string {
	st := m.app.st
	// Both parts are drawn as one list; the header lines of each part
	// take rows too, so the list gets what is left.
	var lines []string
	from, to := s.l.window(h - 4)
	n := 0
	for p := range s.parts {
		part := s.parts[p]
		head := part.label
		switch {
		case !part.loaded && p == 1:
			head = s.item.Checkpoint + " → the files now: capturing the tree…"
		case !part.loaded:
			head = "reading…"
		case part.err != nil:
			head += ": " + errText(part.err)
		default:
			head += ": " + plural(len(part.files), "file", "files")
			if len(part.subs) > 0 {
				// The top's list holds a submodule as its gitlink
				// alone; `git venom-checkpoint diff -- <sub>` lists it.
				head += ", and files inside submodule " + strings.Join(planview.Quotes(part.subs), ", ")
			}
		}
		lines = append(lines, st.bold.Render(head))
		for _, f := range part.files {
			if n >= from && n < to {
				line := fileLine(f)
				if n == s.l.cur {
					lines = append(lines, st.cursor.Render(pad("› "+line, w)))
				} else {
					lines = append(lines, "  "+line)
				}
			}
			n++
		}
		if p == 0 {
			lines = append(lines, "")
		}
	}
	return lines
}

// patchScreen shows one path's patch between two trees, with git's
// colours (checkpoint.ColorPatch) unless NO_COLOR or color.diff say no.
type patchScreen struct {
	from, to string
	file     checkpoint.FileDiff
	where    string
	vp       viewport.Model
	loaded   bool
	note     string
}

func newPatch(from, to string, f checkpoint.FileDiff, where string) *patchScreen {
	return &patchScreen{from: from, to: to, file: f, where: where, vp: viewport.New(80, 20)}
}

func (s *patchScreen) title() string { return cli.QuotePath(s.file.Path) + " · " + s.where }
func (s *patchScreen) help() string  { return "↑↓ pgup pgdn ←→ scroll" }

func (s *patchScreen) refresh(m *Model) tea.Cmd {
	if s.loaded {
		return nil
	}
	t := m.app.tree
	color := m.app.color
	return m.run(s, "patch", func(ctx context.Context) (any, error) {
		if color && t.ColorWanted(ctx) {
			return t.ColorPatch(ctx, s.from, s.to, s.file.Path)
		}
		return t.PathPatch(ctx, s.from, s.to, s.file.Path)
	})
}

func (s *patchScreen) update(m *Model, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case done:
		p := msg.v.(*checkpoint.Patch)
		text := strings.TrimRight(strings.ReplaceAll(p.Text, "\t", "    "), "\n")
		if text == "" {
			text = "(no textual difference)"
		}
		s.vp.SetContent(text)
		s.loaded = true
		if p.Truncated {
			s.note = fmt.Sprintf("[patch cut at %d of %d bytes]", checkpoint.PatchMax, p.Bytes)
		}
	case tea.KeyMsg:
		switch msg.String() {
		case "home":
			s.vp.GotoTop()
			return nil
		case "end":
			s.vp.GotoBottom()
			return nil
		}
		var cmd tea.Cmd
		s.vp, cmd = s.vp.Update(msg)
		return cmd
	}
	return nil
}

func (s *patchScreen) view(m *Model, w, h int) []string {
	if !s.loaded {
		return []string{"reading the patch…"}
	}
	vh := h
	if s.note != "" {
		vh--
	}
	s.vp.Width, s.vp.Height = w, vh
	lines := strings.Split(s.vp.View(), "\n")
	if s.note != "" {
		lines = append(fit(lines, w, vh), m.app.st.dim.Render(s.note))
	}
	return lines
}
