package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/venom-org/git-venom/plumbing"
)

// progressDelay is how long a command runs before it shows progress: a
// capture or rollback that takes less says nothing (git waits too, 2 s
// in progress.c; a person notices a second).
const progressDelay = time.Second

// progressTitles name the steps plumbing reports, as the progress line
// says them.
var progressTitles = map[string]string{
	"capture.walk":    "Capturing the tree: looking for changes",
	"capture.stage":   "Capturing the tree: reading changed files",
	"restore.write":   "Rolling back: writing files",
	"rollback.delete": "Rolling back: deleting files",
}

// meter is the progress line on a terminal's stderr, as git's progress.c
// draws it: "Capturing the tree: reading changed files:  45% (67500/150000)",
// redrawn in place, and ", done." when the step ends.
type meter struct {
	mu          sync.Mutex
	w           io.Writer
	delay       time.Duration
	start, last time.Time
	step        string
	done, total int
	shown       bool // a line of step is on the screen, not ended
	pct         int
}

// startProgress shows r's progress on stderr when it is a terminal, once
// the command has run progressDelay; nothing otherwise. The line is ended
// before anything else is written to e.Out (which it wraps) and when the
// command ends.
func (e *env) startProgress(r *plumbing.Repo) {
	f, ok := e.Err.(*os.File)
	if !ok {
		return
	}
	if _, tty := termColumns(f); !tty {
		return
	}
	m := &meter{w: f, start: time.Now(), delay: progressDelay}
	if d, err := time.ParseDuration(os.Getenv("GIT_VENOM_TEST_PROGRESS_DELAY")); err == nil {
		m.delay = d // tests: show it at once (0), or never (1h)
	}
	r.OnProgress = m.report
	e.Out = &endsProgress{Writer: e.Out, m: m}
	e.closers = append([]func(){m.end}, e.closers...)
}

// report is plumbing.Progress.
func (m *meter) report(step string, done, total int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if step != m.step {
		m.endLocked()
		m.step, m.pct = step, -1
	}
	m.done, m.total = done, total
	now := time.Now()
	if now.Sub(m.start) < m.delay {
		return
	}
	pct := 0
	if total > 0 {
		pct = done * 100 / total
	}
	if m.shown && pct == m.pct && now.Sub(m.last) < 100*time.Millisecond {
		return
	}
	m.pct, m.last, m.shown = pct, now, true
	m.draw("", "")
}

// draw writes the line over the one there: the title, the count, suffix,
// the rest of the old line cleared (ESC [K), then nl.
func (m *meter) draw(suffix, nl string) {
	title := progressTitles[m.step]
	if title == "" {
		title = m.step
	}
	if m.total > 0 {
		fmt.Fprintf(m.w, "\r%s: %3d%% (%d/%d)%s\x1b[K%s", title, m.done*100/m.total, m.done, m.total, suffix, nl)
	} else {
		fmt.Fprintf(m.w, "\r%s...%s\x1b[K%s", title, suffix, nl)
	}
}

// endLocked ends the line on the screen, if any, with ", done.".
func (m *meter) endLocked() {
	if !m.shown {
		return
	}
	if m.total > 0 {
		m.done = m.total
	}
	m.draw(", done.", "\n")
	m.shown = false
}

// end ends the line on the screen, if any.
func (m *meter) end() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.endLocked()
}

// endsProgress ends the progress line before the first write to the
// output it wraps.
type endsProgress struct {
	io.Writer
	m *meter
}

func (w *endsProgress) Write(b []byte) (int, error) {
	w.m.end()
	return w.Writer.Write(b)
}
