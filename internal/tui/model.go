package tui

import (
	"context"
	"strconv"
	"strings"
	"sync"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/rfcerr"
)

// app is what every screen shares: the tree, who the caller is, and the
// lock that makes the calls into the packages one at a time (the tree's
// runner and log are used from the commands' goroutines).
type app struct {
	// ctx is cancelled when the TUI quits: a capture for a diff or a dry
	// run stops there. A rollback's real call runs under
	// context.Background(), never cut halfway (RFC 11.5: its writes have
	// no time limit), and the TUI waits for it before it exits.
	ctx   context.Context
	tree  *checkpoint.Tree
	color bool // git's colours in patches: a terminal, no NO_COLOR, color.diff
	mu    sync.Mutex
	st    styles
	// busy is true while a rollback's real call runs: q and ctrl+c wait.
	busy bool
}

// call runs fn under the app's lock.
func (a *app) call(fn func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fn()
}

// screen is one view of the stack. update gets the keys while it is on
// top, and the answers of the commands it started (done) whenever they
// arrive; view draws its body in w x h cells.
type screen interface {
	title() string
	help() string
	update(m *Model, msg tea.Msg) tea.Cmd
	view(m *Model, w, h int) []string
}

// typing is a screen whose text input has the keys (a filter being
// typed): q, esc and the screen's letters then go to the input.
type typing interface{ typing() bool }

// escaper is a screen that may use esc itself (to clear a filter) before
// it means "back"; esc reports whether it did.
type escaper interface{ esc() bool }

// failer is a screen that handles the errors of its commands itself (a
// dry run's refusal becomes a choice); for the others, an error goes to
// the status line and the screen never sees it.
type failer interface{ handlesErrors() }

// refresher is a screen that reloads what it shows when it is on top
// again (after the screen above it is closed).
type refresher interface{ refresh(m *Model) tea.Cmd }

// done is the answer of a command a screen started: to gets it, whether or
// not it is on top. v is the value, err an error from the packages.
type done struct {
	to   screen
	kind string
	v    any
	err  error
}

// Model is the TUI: a stack of screens under a header, over a status line
// and the keys of the screen on top.
type Model struct {
	app           *app
	stack         []screen
	width, height int
	status        string
	statusErr     bool
}

func newModel(a *app, first ...screen) *Model {
	return &Model{app: a, stack: first, width: 80, height: 24}
}

func (m *Model) top() screen { return m.stack[len(m.stack)-1] }

// Init starts the first screens' loads.
func (m *Model) Init() tea.Cmd {
	var cmds []tea.Cmd
	for _, s := range m.stack {
		if r, ok := s.(refresher); ok {
			cmds = append(cmds, r.refresh(m))
		}
	}
	return tea.Batch(cmds...)
}

func (m *Model) push(s screen) tea.Cmd {
	m.stack = append(m.stack, s)
	if r, ok := s.(refresher); ok {
		return r.refresh(m)
	}
	return nil
}

// replace puts s in place of the screen on top.
func (m *Model) replace(s screen) tea.Cmd {
	m.stack = m.stack[:len(m.stack)-1]
	return m.push(s)
}

// pop closes the screen on top and refreshes the one below it.
func (m *Model) pop() tea.Cmd {
	if len(m.stack) <= 1 {
		return nil
	}
	m.stack = m.stack[:len(m.stack)-1]
	if r, ok := m.top().(refresher); ok {
		return r.refresh(m)
	}
	return nil
}

// popTo closes screens down to the first one that is a T.
func popTo[T screen](m *Model) tea.Cmd {
	for len(m.stack) > 1 {
		if _, ok := m.top().(T); ok {
			break
		}
		m.stack = m.stack[:len(m.stack)-1]
	}
	if r, ok := m.top().(refresher); ok {
		return r.refresh(m)
	}
	return nil
}

func (m *Model) say(s string)   { m.status, m.statusErr = s, false }
func (m *Model) fail(err error) { m.status, m.statusErr = errText(err), true }

// errText is an error as one line: its message and code, then its hints.
func errText(err error) string {
	re := rfcerr.As(err)
	if re == nil {
		return "error: " + err.Error()
	}
	s := "error (" + re.Code + "): " + re.Message
	for _, h := range re.Hints {
		s += "; " + h
	}
	return s
}

// run makes a command that calls fn under the app's lock and delivers its
// answer to s.
func (m *Model) run(s screen, kind string, fn func(ctx context.Context) (any, error)) tea.Cmd {
	a := m.app
	return func() tea.Msg {
		var v any
		var err error
		a.call(func() { v, err = fn(a.ctx) })
		return done{to: s, kind: kind, v: v, err: err}
	}
}

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m, nil
	case done:
		if _, ok := msg.to.(failer); msg.err != nil && !ok {
			m.fail(msg.err)
			return m, nil
		}
		if msg.kind == "take" {
			// A checkpoint was taken (takeManual): say what, and show it.
			m.say(msg.v.(string))
			if r, ok := msg.to.(refresher); ok {
				return m, r.refresh(m)
			}
			return m, nil
		}
		return m, msg.to.update(m, msg)
	case tea.KeyMsg:
		typingNow := false
		if t, ok := m.top().(typing); ok && t.typing() {
			typingNow = true
		}
		// Keys typed faster than the program reads them arrive as one
		// message of several runes ("yq"); outside a text field each is
		// a key of its own, taken in order.
		if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste && !typingNow {
			return m.eachKey(msg.Runes)
		}
		switch k := msg.String(); {
		case k == "ctrl+c" || (k == "q" && !typingNow):
			if m.app.busy {
				m.say("a rollback is running; it is never stopped halfway, wait for it")
				return m, nil
			}
			return m, tea.Quit
		case k == "esc" && !typingNow && len(m.stack) > 1:
			if m.app.busy {
				return m, nil
			}
			if e, ok := m.top().(escaper); ok && e.esc() {
				return m, nil
			}
			m.status = ""
			return m, m.pop()
		}
		if !typingNow {
			m.status = ""
		}
	}
	return m, m.top().update(m, msg)
}

// eachKey gives Update the runes one key at a time, in order, and stops at
// a q that quits; the commands they return run in that order.
func (m *Model) eachKey(runes []rune) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	for _, r := range runes {
		t, ok := m.top().(typing)
		if r == 'q' && !(ok && t.typing()) && !m.app.busy {
			return m, tea.Sequence(append(cmds, tea.Quit)...)
		}
		if _, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}}); cmd != nil {
			cmds = append(cmds, cmd)
		}
	}
	return m, tea.Sequence(cmds...)
}

// View implements tea.Model: header, body, status line, keys.
func (m *Model) View() string {
	w, h := m.width, m.height
	if w <= 0 || h <= 0 {
		return ""
	}
	st := m.app.st
	head := " git venom · " + m.top().title()
	lines := []string{st.header.Render(pad(head, w))}
	// The status line wraps to three lines at most: an error's code and
	// hints must be readable on 80 columns.
	status := wrap(m.status, w, "  ")
	if len(status) > 3 {
		status = status[:3]
	}
	if len(status) == 0 {
		status = []string{""}
	}
	bodyH := h - 2 - len(status)
	if bodyH < 1 {
		bodyH = 1
	}
	lines = append(lines, fit(m.top().view(m, w, bodyH), w, bodyH)...)
	for _, l := range status {
		if m.statusErr {
			l = st.err.Render(cut(l, w))
		} else {
			l = cut(l, w)
		}
		lines = append(lines, l)
	}
	keys := m.top().help()
	if len(m.stack) > 1 && !strings.Contains(keys, "esc") {
		keys += " · esc back"
	}
	keys += " · q quit"
	lines = append(lines, st.footer.Render(cut(keys, w)))
	return strings.Join(lines, "\n")
}

// list is a cursor over n rows, scrolled to keep the cursor in view.
type list struct {
	n, cur, off int
	h           int // the lines it had when last drawn
}

// key moves the cursor for the list keys and reports whether k was one.
func (l *list) key(k string) bool {
	h := l.h
	if h < 1 {
		h = 1
	}
	switch k {
	case "up", "ctrl+p":
		l.cur--
	case "down", "ctrl+n":
		l.cur++
	case "pgup":
		// A page moves the view as well as the cursor, so the rows
		// shown are the next page, not the cursor at the bottom.
		l.cur -= h
		l.off -= h
	case "pgdown", " ":
		l.cur += h
		l.off += h
	case "home":
		l.cur = 0
	case "end":
		l.cur = l.n - 1
	default:
		return false
	}
	l.clamp(h)
	return true
}

func (l *list) clamp(h int) {
	if l.cur >= l.n {
		l.cur = l.n - 1
	}
	if l.cur < 0 {
		l.cur = 0
	}
	if h < 1 {
		h = 1
	}
	if l.cur < l.off {
		l.off = l.cur
	}
	if l.cur >= l.off+h {
		l.off = l.cur - h + 1
	}
	if l.off > l.n-h {
		l.off = l.n - h
	}
	if l.off < 0 {
		l.off = 0
	}
}

// window is the rows [from, to) to draw in h lines.
func (l *list) window(h int) (from, to int) {
	l.h = h
	l.clamp(h)
	to = l.off + h
	if to > l.n {
		to = l.n
	}
	return l.off, to
}

func itoa(n int) string { return strconv.Itoa(n) }
