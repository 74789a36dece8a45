// Package tui is `git venom`, RFC 12's terminal UI, adapted to a toolkit
// without a daemon: the agents of this tree, an agent's checkpoints, their
// diffs and patches, and a rollback's dry run as a confirmation screen
// that `y` confirms by quoting its plan id. It is a view over the packages
// the CLI uses (checkpoint, rollback, journal), with no logic of its own
// beyond presentation; the rules (the plan id, stale plans, the agent
// caller) are theirs. It writes nothing but a manual checkpoint (`k`) and
// a rollback a person confirmed by quoting a plan.
package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/term"
	"github.com/spf13/pflag"
	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/cli"
	"github.com/venom-org/git-venom/internal/rfcerr"
)

const usage = "git venom [--agent <id>] [-C <dir>]"

// Main runs `git venom` with args (without the program name) and returns
// the exit status: 0, or the class of an error's RFC 11.3 code, printed as
// the CLI prints it (cli.Fail). It refuses, with unsupported.terminal (exit
// 10), when stdout is not a terminal, and names the commands that do the
// same without one. The TUI draws on stdout and reads keys from stdin, or
// from the terminal itself when stdin is not one.
func Main(args []string, in *os.File, out *os.File, errw io.Writer) (code int) {
	defer func() {
		if p := recover(); p != nil {
			code = cli.Recovered(errw, p)
		}
	}()
	fs := pflag.NewFlagSet("venom", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	agent := fs.String("agent", "", "open this agent's checkpoints first")
	dir := fs.StringP("directory", "C", "", "run as if started in this directory")
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		return cli.Fail(errw, rfcerr.New("invalid_params.usage", map[string]any{"usage": usage}, "%s", err.Error()).WithHint("usage: %s", usage))
	}
	if *help {
		// As the commands' -h, and git's builtins': exit 129.
		fmt.Fprintf(out, "usage: %s\n\n%s", usage, cli.FlagUsages(fs))
		return 129
	}
	if fs.NArg() > 0 {
		return cli.Fail(errw, rfcerr.New("invalid_params.usage", map[string]any{"usage": usage}, "git venom takes no arguments").WithHint("usage: %s", usage))
	}
	if !term.IsTerminal(out.Fd()) {
		return cli.Fail(errw, rfcerr.New("unsupported.terminal", nil, "git venom is a terminal UI, and stdout is not a terminal").
			WithHint("the same without a terminal: git venom-checkpoint list, git venom-checkpoint diff <k>, git venom-plan <k>, then git venom-rollback <k> --plan <id>").
			WithHint("each takes --json"))
	}
	if *dir != "" {
		if err := os.Chdir(*dir); err != nil {
			return cli.Fail(errw, rfcerr.Wrap("invalid_params.usage", err, nil, "cannot change to %s", *dir))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t, err := checkpoint.OpenTree(ctx, "")
	if err != nil {
		return cli.Fail(errw, err)
	}
	a := &app{ctx: ctx, tree: t, st: newStyles(), color: colourOn()}
	first := []screen{&agentsScreen{}}
	if *agent != "" {
		st, err := t.Log.Load()
		if err != nil {
			return cli.Fail(errw, checkpoint.LogError(err, "reading the log"))
		}
		id, err := t.ResolveAgent(*agent, st)
		if err != nil {
			return cli.Fail(errw, err)
		}
		first = append(first, newCheckpoints(id))
	}
	opts := []tea.ProgramOption{tea.WithAltScreen(), tea.WithOutput(out), tea.WithContext(ctx)}
	if term.IsTerminal(in.Fd()) {
		opts = append(opts, tea.WithInput(in))
	} else {
		opts = append(opts, tea.WithInputTTY())
	}
	_, err = tea.NewProgram(newModel(a, first...), opts...).Run()
	// A rollback that is running is never cut halfway: wait for it (and
	// let a capture for a diff stop) before the process ends.
	cancel()
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		return cli.Fail(errw, rfcerr.Wrap("unsupported.terminal", err, nil, "the terminal UI could not run: %v", err))
	}
	return 0
}
