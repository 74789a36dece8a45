package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/harness"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/plumbing"
)

const hookUsage = "git venom-hook <harness> [--agent <id>]        (reads one hook event on stdin)\n" +
	"   or: git venom-hook install <harness> [--scope project|local|user] [--json]\n" +
	"   or: git venom-hook uninstall <harness> [--scope project|local|user] [--json]\n" +
	"harnesses: claude-code, codex, gemini, cursor"

// maxEvent bounds how much of stdin a hook reads; the rest is drained. A
// Write tool's event carries the whole file, so this is generous.
const maxEvent = 64 << 20

// stdinWait bounds the wait for the event on stdin.
const stdinWait = 10 * time.Second

// hookNotes is RFC 8's files-only note store: the note.pending records a
// `--restore files` rollback leaves for the agent's next prompt-submit
// hook, which prints one once and logs note.delivered.
func hookNotes() harness.Notes { return checkpoint.Notes{} }

func runHook(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usageErr(hookUsage, "name a harness, or install or uninstall")
	}
	switch args[0] {
	case "install":
		return hookInstall(ctx, e, args[1:], false)
	case "uninstall":
		return hookInstall(ctx, e, args[1:], true)
	case "-h", "--help", "help":
		fmt.Fprintf(e.Out, "usage: %s\n", hookUsage)
		return nil
	}
	// A harness that closed its end of stdout or stderr must not kill the
	// hook with SIGPIPE (exit 141, and a capture not taken): writes fail
	// with EPIPE instead, and the event is handled all the same.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	// A harness that gave up on the hook sends SIGTERM: whatever the hook
	// is waiting on, it ends soon after, with status 0. Every step it may
	// be cut at is one a crash may cut too (the log and refs stay whole).
	term, done := make(chan os.Signal, 1), make(chan struct{})
	signal.Notify(term, syscall.SIGTERM, os.Interrupt)
	defer close(done)
	defer signal.Stop(term)
	go func() {
		select {
		case <-term:
			time.Sleep(hookGrace)
			os.Exit(0)
		case <-done:
		}
	}()
	hookEvent(ctx, e, args)
	return nil
}

// hookGrace is how long a hook goes on after SIGTERM or an interrupt,
// for a step under way to finish.
const hookGrace = time.Second

// hookEvent runs one harness hook event. It never fails: whatever goes
// wrong is a line on stderr and the exit status is 0, so the harness never
// blocks, retries or shows the agent an error (DESIGN.md section 6).
func hookEvent(ctx context.Context, e *env, args []string) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(e.Err, "venom-hook: internal error: %v\n", p)
			if os.Getenv("GIT_VENOM_TRACE") != "" {
				fmt.Fprintf(e.Err, "%s\n", debug.Stack())
			}
		}
	}()
	h, ok := harness.Lookup(args[0])
	if !ok {
		drain(e.In)
		fmt.Fprintf(e.Err, "venom-hook: unknown harness %q (known: %s); nothing recorded\n", args[0], strings.Join(harness.Names(), ", "))
		return
	}
	fs := e.flags("hook")
	agent := fs.String("agent", "", "agent id for every event (default: derived from the harness session)")
	// Codex's legacy notify passes the event as one JSON argument.
	var notify string
	rest := args[1:]
	if len(rest) > 0 && strings.HasPrefix(strings.TrimSpace(rest[len(rest)-1]), "{") {
		notify, rest = rest[len(rest)-1], rest[:len(rest)-1]
	}
	if err := e.parse(fs, hookUsage, rest); err != nil {
		if err == errHelp {
			return
		}
		fmt.Fprintf(e.Err, "venom-hook: %v (going on without it)\n", rfcerr.As(err).Message)
	}
	// GIT_VENOM_AGENT is not read here: every session started from a shell
	// inherits it, and it would merge them into one agent (DESIGN.md
	// section 6: a session is an agent). --agent in the hook's own command
	// is the deliberate way.
	var input []byte
	if notify != "" {
		input = []byte(notify)
	} else {
		if isTerminal(e.In) {
			fmt.Fprintf(e.Err, "venom-hook: reads one %s hook event (JSON) on stdin; see git-venom-hook(1)\n", h.Name)
			return
		}
		var err error
		input, err = readEvent(e.In, stdinWait)
		if err != nil {
			fmt.Fprintf(e.Err, "venom-hook: reading stdin: %v\n", err)
		}
	}
	// The harness's SIGTERM (it gave up on the hook) does not cancel what
	// the hook is doing: a capture under way gets hookGrace to finish, and
	// is otherwise cut like a crash, leaving no record. A turn_end cut so
	// leaves its turn open for the session end (or the next prompt) to
	// close; a cancelled one would log checkpoint.failed and close the
	// turn with no turn_end (Claude Code kills a StopFailure hook in -p
	// mode as it exits, issue 14).
	harness.Run(context.WithoutCancel(ctx), h, input, harness.Options{Stdout: e.Out, Stderr: e.Err, Agent: *agent, Notes: hookNotes()})
}

// readEvent reads the event from r: all of it, up to maxEvent, until end
// of input. A harness closes stdin after writing the event; if one does
// not, the hook must not hold the agent until the harness's own timeout, so
// reading stops as soon as what was read is a whole JSON object, or after
// wait with an error. The rest is drained in the background, so the writer
// never gets EPIPE (HARNESS-HOOKS.md 1.5 rule 5).
func readEvent(r io.Reader, wait time.Duration) ([]byte, error) {
	type result struct {
		data []byte
		err  error
	}
	got := make(chan result, 1)
	go func() {
		var buf []byte
		chunk := make([]byte, 32<<10)
		lr := io.LimitReader(r, maxEvent)
		for {
			n, err := lr.Read(chunk)
			buf = append(buf, chunk[:n]...)
			if n > 0 && bytes.HasSuffix(bytes.TrimSpace(buf), []byte("}")) && json.Valid(buf) {
				got <- result{data: buf}
				drain(r)
				return
			}
			if err != nil {
				if err == io.EOF {
					err = nil
				}
				got <- result{data: buf, err: err}
				drain(r)
				return
			}
		}
	}()
	select {
	case res := <-got:
		return res.data, res.err
	case <-time.After(wait):
		return nil, fmt.Errorf("no whole event after %s", wait)
	}
}

// drain reads the rest of stdin, so the harness writing the event never
// gets EPIPE (HARNESS-HOOKS.md 1.5 rule 5).
func drain(r io.Reader) {
	if r != nil && !isTerminal(r) {
		_, _ = io.Copy(io.Discard, r)
	}
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// hookInstall merges our hooks into (or removes them from) a harness's
// settings file and says what it wrote.
func hookInstall(ctx context.Context, e *env, args []string, remove bool) error {
	verb := "install"
	if remove {
		verb = "uninstall"
	}
	fs := e.flags(verb)
	scope := fs.String("scope", "", "project, local (Claude Code's default) or user")
	if err := e.parse(fs, hookUsage, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr(hookUsage, "%s takes one harness: %s", verb, strings.Join(harness.Names(), ", "))
	}
	h, ok := harness.Lookup(fs.Arg(0))
	if !ok {
		return rfcerr.New("invalid_params.harness", map[string]any{"harness": fs.Arg(0), "choices": harness.Names()},
			"unknown harness %q; use one of %s", fs.Arg(0), strings.Join(harness.Names(), ", "))
	}
	switch *scope {
	case "", "project", "local", "user":
	default:
		return rfcerr.New("invalid_params.scope", map[string]any{"scope": *scope, "choices": harness.Scopes},
			"--scope %q is not one of project, local, user", *scope)
	}
	o := harness.InstallOptions{Scope: *scope}
	o.Home, _ = os.UserHomeDir()
	t, terr := checkpoint.OpenTree(ctx, "")
	if terr == nil {
		o.Root = t.Path()
		o.CaptureTimeout = t.Config.Timeout
		o.ToolCalls = t.Config.ToolCalls
	}
	if _, _, err := h.SettingsFile(o); err != nil {
		return err
	}
	var c *harness.Change
	var err error
	if remove {
		c, err = h.Uninstall(o)
	} else {
		c, err = h.Install(o)
	}
	if err != nil {
		return err
	}
	if e.JSON {
		writeJSON(e.Out, c)
		return nil
	}
	switch {
	case remove && len(c.Entries) == 0:
		fmt.Fprintf(e.Out, "no git venom-hook %s entries in %s; nothing changed\n", h.Name, c.File)
	case remove:
		fmt.Fprintf(e.Out, "removed %d git venom-hook %s entries from %s (%s scope):\n", len(c.Entries), h.Name, c.File, c.Scope)
	case c.Changed:
		fmt.Fprintf(e.Out, "wrote %s (%s scope):\n", c.File, c.Scope)
	default:
		fmt.Fprintf(e.Out, "already installed in %s (%s scope); nothing changed:\n", c.File, c.Scope)
	}
	for _, en := range c.Entries {
		ev := en.Event
		if en.Matcher != "" {
			ev += " [" + en.Matcher + "]"
		}
		timeout := ""
		if en.Timeout > 0 {
			unit := "s"
			if h.Name == "gemini" {
				unit = "ms"
			}
			timeout = fmt.Sprintf("  (timeout %d%s)", en.Timeout, unit)
		}
		fmt.Fprintf(e.Out, "  %-48s %s%s\n", ev, en.Command, timeout)
	}
	if !remove {
		for _, n := range c.Notes {
			fmt.Fprintf(e.Out, "hint: %s\n", n)
		}
		// Will the harness run them? Its own trust files say (item 5 of
		// issue 14): codex exec and Gemini CLI skip untrusted hooks
		// without a word.
		if tc, ok := h.TrustCheck(harness.TrustOptions{Root: o.Root, Home: o.Home}); ok && tc.Level != "ok" {
			fmt.Fprintf(e.Out, "hint: %s\n", tc.Message)
			if tc.Fix != "" {
				fmt.Fprintf(e.Out, "hint: to fix: %s\n", tc.Fix)
			}
		}
		if t != nil && c.Scope == "local" && !ignored(ctx, t, c.File) {
			fmt.Fprintf(e.Out, "hint: %s is not ignored by git; add it to .git/info/exclude to keep it out of commits\n", c.File)
		}
	}
	return nil
}

// ignored reports whether git ignores file in tree t.
func ignored(ctx context.Context, t *checkpoint.Tree, file string) bool {
	rel, err := t.RelPath(file)
	if err != nil {
		return true
	}
	_, err = t.Repo.Run(ctx, plumbing.Options{}, "check-ignore", "-q", "--", rel)
	return err == nil
}
