package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
	"github.com/venom-org/git-venom/refs"
)

// Notes is the extension point for RFC 8's files-only rollback note (issue
// 5): after a `--restore files` rollback, the agent's next prompt-submit
// hook prints the note once. The rollback side implements it (note.pending
// and note.delivered records); until then Options.Notes is nil and no note
// is printed.
type Notes interface {
	// Pending returns the note waiting for agent in tree t, "" when there
	// is none, and a function that marks it delivered. Run calls delivered
	// only after the note was written to the harness (a hook that fails or
	// times out delivers nothing, so the note must stay pending). It is not
	// called for a harness without a note channel (Cursor).
	// session is the harness session the event came from: a note can be
	// meant for one session only (the old conversation after a rewind).
	Pending(ctx context.Context, t *checkpoint.Tree, agent, session string) (note string, delivered func() error, err error)
}

// Options are what a hook run needs besides the event.
type Options struct {
	// Stdout receives what the harness reads (a note, or Cursor's {});
	// Stderr messages for people (Claude Code keeps them in its debug log).
	Stdout, Stderr io.Writer
	// Dir is where the hook runs: the tree when the event names no
	// directory, and where a malformed event's failure is logged. Empty
	// means the process's directory.
	Dir string
	// Agent, when set, is the agent of every event instead of the one
	// derived from the session (--agent).
	Agent string
	// Getenv reads the environment for session-id fallbacks; nil means
	// os.Getenv.
	Getenv func(string) string
	// Notes delivers the rollback note at prompt submit; nil delivers none.
	Notes Notes
}

// Result says what Run did, for tests and tracing: the event, the agent
// and trees it acted on, the checkpoints taken or reused, and the problems
// it reported on Stderr.
type Result struct {
	Event       *Event
	Agent       string
	Trees       []string
	Checkpoints []string
	Problems    []string
}

// openTimeout bounds finding the repository (`git rev-parse`, `git
// config`) before venom.checkpoints.timeout is known.
const openTimeout = 10 * time.Second

// CodeMalformed is the checkpoint.failed code of a hook event that could
// not be read: its capture, if it was one, is lost, and RFC 7.3 must see a
// gap there.
const CodeMalformed = "invalid_params.hook_event"

// Run handles one hook event of h (DESIGN.md section 6, RFC 3 and 3.1). It
// never fails and never blocks the agent beyond venom.checkpoints.timeout
// per capture: every problem becomes a line on o.Stderr and, where a
// capture was lost, a checkpoint.failed record. It writes to o.Stdout only
// the rollback note on a prompt-submit event (or h's idle answer), in one
// write at the end, so a git child's output can never reach the harness.
//
// With venom.checkpoints.enabled=false it takes no checkpoint and records
// no edit (RFC 11.5: automatic capture off); a pending note, the result of
// an explicit rollback, is still delivered.
func Run(ctx context.Context, h *Harness, input []byte, o Options) (res *Result) {
	res = &Result{}
	r := &run{h: h, o: o, res: res}
	if r.o.Getenv == nil {
		r.o.Getenv = os.Getenv
	}
	defer func() {
		if p := recover(); p != nil {
			r.problem("internal error: %v", p)
			if os.Getenv("GIT_VENOM_TRACE") != "" {
				fmt.Fprintf(o.Stderr, "%s\n", debug.Stack())
			}
		}
		r.flush()
	}()
	ev, err := h.Parse(input)
	if err != nil {
		r.problem("malformed hook event: %v", err)
		r.logMalformed(ctx, err)
		return res
	}
	res.Event = ev
	if ev.Kind == Ignore {
		return res
	}
	if ev.Session == "" {
		ev.Session = r.envSession()
	}
	trees := r.trees(ctx, ev)
	paths := make([][]string, len(trees))
	if ev.Kind == Edit {
		paths = r.assign(trees, ev)
	}
	for i, t := range trees {
		r.handle(ctx, t, ev, paths[i])
	}
	return res
}

type run struct {
	h         *Harness
	o         Options
	res       *Result
	out       bytes.Buffer
	delivered []func() error
}

func (r *run) problem(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.res.Problems = append(r.res.Problems, msg)
	if r.o.Stderr != nil {
		fmt.Fprintf(r.o.Stderr, "venom-hook %s: %s\n", r.h.Name, msg)
	}
}

// flush writes stdout once, then marks notes delivered.
func (r *run) flush() {
	out := r.out.Bytes()
	if len(out) == 0 {
		out = r.h.idle
	}
	if len(out) == 0 || r.o.Stdout == nil {
		return
	}
	if _, err := r.o.Stdout.Write(out); err != nil {
		r.problem("writing to the harness: %v", err)
		return
	}
	for _, d := range r.delivered {
		if err := d(); err != nil {
			r.problem("marking the note delivered: %v", err)
		}
	}
}

func (r *run) envSession() string {
	for _, k := range r.h.sessionEnv {
		if v := r.o.Getenv(k); v != "" {
			return v
		}
	}
	return ""
}

// trees opens the working trees the event happened in, once each.
func (r *run) trees(ctx context.Context, ev *Event) []*checkpoint.Tree {
	ds := ev.Dirs
	if len(ds) == 0 {
		ds = []string{r.o.Dir}
	}
	var out []*checkpoint.Tree
	seen := map[string]bool{}
	for _, d := range ds {
		t, err := r.open(ctx, d)
		if err != nil {
			where := d
			if where == "" {
				where = "the current directory"
			}
			r.problem("%s: nothing recorded", errText(err, where))
			continue
		}
		t = r.turnTree(ctx, t, ev)
		if !seen[t.Path()] {
			seen[t.Path()] = true
			out = append(out, t)
			r.res.Trees = append(r.res.Trees, t.Path())
		}
	}
	return out
}

// turnTree is the tree whose log already records ev's session (its
// agent) when t, the tree of the event's cwd, is a submodule of it: a
// session stays in the tree it started in (RFC 3: every turn_start has
// its turn_end there) when the agent ran `cd lib` since (Claude Code's
// cwd follows it, into the next turns too). Before, the turn's end and
// its edits went to the submodule's own log, and the superproject's turn
// stayed open. t itself otherwise: a session that started inside the
// submodule stays the submodule's.
// It costs nothing outside a submodule (whose git dir is not below a
// modules/ directory); inside one, a `git rev-parse
// --show-superproject-working-tree` and the superproject's log.
func (r *run) turnTree(ctx context.Context, t *checkpoint.Tree, ev *Event) *checkpoint.Tree {
	if ev.Session == "" && r.o.Agent == "" {
		return t
	}
	for cur := t; ; {
		if !strings.Contains(filepath.ToSlash(cur.Repo.CommonDir), "/modules/") {
			return t
		}
		octx, cancel := context.WithTimeout(ctx, openTimeout)
		super, err := cur.Repo.Line(octx, plumbing.Options{}, "rev-parse", "--show-superproject-working-tree")
		cancel()
		if err != nil || super == "" {
			return t
		}
		up, err := r.open(ctx, super)
		if err != nil {
			return t
		}
		agent, _ := r.agent(up, ev)
		if a, err := up.Log.LoadAgent(agent); err == nil && a != nil {
			return up
		}
		cur = up
	}
}

func (r *run) open(ctx context.Context, dir string) (*checkpoint.Tree, error) {
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	return checkpoint.OpenTree(ctx, dir)
}

// errText says why a tree could not be opened at where. A folder that is
// no part of the enclosing repository's work (OpenTree's why
// "not_tracked": an untracked or ignored folder, such as a project inside
// a dotfiles repository at $HOME) is said so, naming that repository: the
// hook then records nothing there, as outside any repository.
func errText(err error, where string) string {
	if e := rfcerr.As(err); e != nil && e.Code == "unsupported.checkpoint_no_repo" {
		if e.Data["why"] == "not_tracked" {
			return fmt.Sprintf("%s is no part of the repository at %v (it holds no file that repository tracks: it is untracked or ignored there)", where, e.Data["repository"])
		}
		return where + " is not in a git working tree"
	}
	return err.Error()
}

// handle does what ev asks in tree t.
func (r *run) handle(ctx context.Context, t *checkpoint.Tree, ev *Event, paths []string) {
	agent, binding := r.agent(t, ev)
	if err := refs.ValidAgent(agent); err != nil {
		r.problem("%v: nothing recorded", err)
		return
	}
	r.res.Agent = agent
	if binding != nil {
		r.confirm(t, binding)
	}
	hid := checkpoint.Harness{Name: r.h.Name, Session: ev.Session, Turn: ev.Turn}
	switch ev.Kind {
	case TurnStart:
		if t.Config.Enabled {
			r.take(ctx, t, agent, checkpoint.ReasonTurnStart, hid)
		}
		r.note(ctx, t, agent, ev.Session)
	case TurnEnd:
		if !t.Config.Enabled {
			return
		}
		if r.h.end != nil {
			end, pending, err := r.h.end(ctx, ev)
			if err != nil {
				r.problem("harness_end: %v", err)
			}
			hid.End, hid.EndPending = end, pending
		}
		r.take(ctx, t, agent, checkpoint.ReasonTurnEnd, hid)
	case SessionEnd:
		if !t.Config.Enabled {
			return
		}
		open, err := t.OpenTurn(agent)
		if err != nil {
			r.problem("reading the log: %v", err)
			return
		}
		if open != "" {
			// The turn's own end hook did not run to its end (an
			// interrupt fires none; Claude Code kills StopFailure in -p
			// mode): its id comes from the transcript, after its prompt.
			if r.h.closeEnd != nil {
				end, err := r.h.closeEnd(ctx, ev)
				if err != nil {
					r.problem("harness_end: %v", err)
				}
				hid.End = end
			}
			r.take(ctx, t, agent, checkpoint.ReasonTurnEnd, hid)
		}
	case PreTool:
		r.preTool(ctx, t, agent, ev, hid)
	case Edit:
		if t.Config.Enabled && len(paths) > 0 {
			if _, err := t.RecordEdit(ctx, agent, paths); err != nil {
				r.problem("edit record of %s: %v", agent, err)
			}
		}
	}
}

func (r *run) take(ctx context.Context, t *checkpoint.Tree, agent, reason string, hid checkpoint.Harness) {
	res, err := t.Take(ctx, checkpoint.TakeOptions{Agent: agent, Reason: reason, Harness: hid})
	if err != nil {
		// Take logged checkpoint.failed itself (with the turn records, so a
		// failed turn_start still opens its turn, RFC 3.1).
		r.problem("%s capture of %s failed: %v", reason, agent, err)
		return
	}
	r.res.Checkpoints = append(r.res.Checkpoints, res.Checkpoint.Checkpoint)
}

// preTool takes the mid-turn checkpoint before a tool call (issue 14:
// per-tool-call checkpoints), when venom.checkpoints.toolCalls asks for
// this tool (shell: the harness's shell tools; all: every tool) and the
// agent has a turn open: reason manual, labelled "before <tool>: <what it
// runs>", so the list shows which command it preceded. Nothing changed
// since the latest checkpoint makes it a reuse (RFC 3.2), which keeps that
// checkpoint's label. A checkpoint taken mid-turn is files only (RFC 8).
func (r *run) preTool(ctx context.Context, t *checkpoint.Tree, agent string, ev *Event, hid checkpoint.Harness) {
	switch mode := t.Config.ToolCalls; {
	case !t.Config.Enabled, mode == checkpoint.ToolCallsOff:
		return
	case mode == checkpoint.ToolCallsShell && !r.h.Shell(ev.Tool):
		return
	}
	open, err := t.OpenTurn(agent)
	if err != nil {
		r.problem("reading the log: %v", err)
		return
	}
	if open == "" {
		return // not inside a turn the toolkit knows: nothing to place it in
	}
	label := "before " + ev.Tool
	if ev.Tool == "" {
		label = "before a tool call"
	}
	if ev.ToolInput != "" {
		label += ": " + ev.ToolInput
	}
	res, err := t.Take(ctx, checkpoint.TakeOptions{Agent: agent, Reason: checkpoint.ReasonManual, Label: label, LabelNew: true, ToolCall: true, Harness: hid})
	if err != nil {
		r.problem("capture before %s of %s failed: %v", ev.Tool, agent, err)
		return
	}
	r.res.Checkpoints = append(r.res.Checkpoints, res.Checkpoint.Checkpoint)
}

// assign splits an edit event's paths among the trees, each path to the
// first tree that holds it. Relative paths are relative to the event's
// first directory (the session's cwd). A path in none of the trees is
// reported and left out: refusing the whole record would lose the paths
// that are in a tree.
func (r *run) assign(trees []*checkpoint.Tree, ev *Event) [][]string {
	out := make([][]string, len(trees))
	if len(ev.Paths) == 0 {
		r.problem("%s event names no file path: no edit recorded", ev.Name)
		return out
	}
	base := r.o.Dir
	if len(ev.Dirs) > 0 {
		base = ev.Dirs[0]
	}
	if base == "" {
		base, _ = os.Getwd()
	}
	for _, p := range ev.Paths {
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(base, abs)
		}
		var why error
		found := false
		for i, t := range trees {
			if _, err := t.RelPath(abs); err != nil {
				why = err
				continue
			}
			out[i] = append(out[i], abs)
			found = true
			break
		}
		if !found && why != nil {
			r.problem("%v: not recorded", why)
		}
	}
	return out
}

// note prints the rollback note waiting for agent, if the harness has a
// channel for it.
func (r *run) note(ctx context.Context, t *checkpoint.Tree, agent, session string) {
	if r.o.Notes == nil || r.h.note == nil {
		return
	}
	if t.Config.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.Config.Timeout)
		defer cancel()
	}
	text, delivered, err := r.o.Notes.Pending(ctx, t, agent, session)
	if err != nil {
		r.problem("reading the pending note: %v", err)
		return
	}
	if b := r.h.note(text); len(b) > 0 {
		r.out.Write(b)
		if delivered != nil {
			r.delivered = append(r.delivered, delivered)
		}
	}
}

// logMalformed records a checkpoint.failed for an event that could not be
// read, when the hook runs in a repository with automatic capture on: if
// the event was a turn's start or end, its capture is lost, and RFC 7.3
// must treat the window around it as a gap. The agent is the session's
// from the environment (Claude Code and Gemini CLI export it to hooks), or
// else the harness's bare prefix.
func (r *run) logMalformed(ctx context.Context, cause error) {
	t, err := r.open(ctx, r.o.Dir)
	if err != nil {
		r.problem("%s: no failure recorded", errText(err, "the current directory"))
		return
	}
	if !t.Config.Enabled {
		return
	}
	agent := r.o.Agent
	if agent == "" {
		agent = AgentID(r.h.Prefix, r.envSession())
	}
	if refs.ValidAgent(agent) != nil {
		agent = r.h.Prefix
	}
	rec := journal.Failed{Agent: agent, Code: CodeMalformed,
		Message: fmt.Sprintf("malformed %s hook event: %v", r.h.Name, cause), Repo: ".", Path: t.Path()}
	if _, err := t.Log.Append(journal.Entry{Type: journal.TypeCheckpointFailed, Body: rec}); err != nil {
		r.problem("logging the failure: %v", err)
	}
	r.res.Agent = agent
}

// agent picks the agent of ev in t: the override, else the agent a binding
// gives the session, else the id derived from the session (AgentID). It
// also returns a binding this event confirms (the session's first event
// after the rollback that made it), or nil.
func (r *run) agent(t *checkpoint.Tree, ev *Event) (string, *journal.AgentBinding) {
	if r.o.Agent != "" {
		return r.o.Agent, nil
	}
	derived := AgentID(r.h.Prefix, ev.Session)
	if ev.Session == "" {
		return derived, nil
	}
	// From the replay snapshot and what follows it, no agent's state
	// built: every event asks, so this stays cheap on a long log.
	bs, err := t.Log.Bindings()
	if err != nil {
		r.problem("reading agent bindings: %v", err)
		return derived, nil
	}
	var match *journal.AgentBinding
	latest := map[string]*journal.AgentBinding{}
	for i := range bs {
		b := &bs[i]
		latest[b.Agent] = b
		if b.Harness == r.h.Name && b.HarnessSession == ev.Session {
			match = b
		}
	}
	if match == nil {
		return derived, nil
	}
	if l := latest[match.Agent]; l == match && !match.Confirmed {
		return match.Agent, match
	}
	return match.Agent, nil
}

// confirm logs that the conversation copy of a binding exists: its session
// has sent an event (RFC 8: "until the copy exists"). A concurrent event of
// the same session may log it twice, which says the same thing.
func (r *run) confirm(t *checkpoint.Tree, b *journal.AgentBinding) {
	c := *b
	c.Confirmed = true
	if _, err := t.Log.Append(journal.Entry{Type: journal.TypeAgentBinding, Body: c}); err != nil {
		r.problem("confirming the binding of %s: %v", b.Agent, err)
	}
}
