package cli

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/planview"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/rollback"
)

const planUsage = "git venom-plan [--agent <id>] <k> [--restore all|files] [--outside refuse|keep|overwrite] [--keep-head] [--json | --name-status [-z]] [-- <pathspec>...]"
const rollbackUsage = "git venom-rollback [--agent <id>] <k> --plan <p2-…> [--restore all|files] [--outside refuse|keep|overwrite] [--keep-head] [--json | --name-status [-z]] [-- <pathspec>...]"

// rollbackFlags are the choices both commands take; they enter the plan id.
type rollbackFlags struct {
	agent    string
	restore  string
	outside  string
	keepHead bool
	plan     string
	dryRun   bool
	output   outputFlags
	// nameStatus and z are the script output: one path a line (or NUL
	// terminated fields with z), as git's --name-status.
	nameStatus, z bool
}

func (f *rollbackFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.agent, "agent", "", "agent id (default: $GIT_VENOM_AGENT, the only agent here, or \"default\")")
	fs.StringVar(&f.restore, "restore", "all", "all: files and conversation, or refuse; files: files only")
	fs.StringVar(&f.outside, "outside", "", "paths changed outside the agent's turns: refuse, keep or overwrite")
	fs.BoolVar(&f.keepHead, "keep-head", false, "restore the files and leave HEAD where it is")
	fs.StringVar(&f.plan, "plan", "", "the plan id the dry run printed")
	f.output.add(fs)
	fs.BoolVar(&f.nameStatus, "name-status", false, "only the paths, one a line: A, M, D (or L: left) and the class, for scripts")
	fs.BoolVarP(&f.z, "null", "z", false, "with --name-status: fields and lines end with NUL, paths unquoted")
}

func runPlan(ctx context.Context, e *env, args []string) error {
	var f rollbackFlags
	fs := e.flags("plan")
	f.add(fs)
	_ = fs.MarkHidden("plan") // refused below: the plan is the dry run
	if err := e.parse(fs, planUsage, args); err != nil {
		return err
	}
	if f.plan != "" {
		return rfcerr.New("invalid_params.plan", nil, "git venom-plan is the dry run; it takes no --plan").
			WithHint("to apply a plan: git venom-rollback <k> --plan %s", f.plan)
	}
	f.dryRun = true
	if err := e.setupOutput(ctx, "venom-plan", f.output, true); err != nil {
		return err
	}
	return doRollback(ctx, e, fs, f, planUsage)
}

func runRollback(ctx context.Context, e *env, args []string) error {
	var f rollbackFlags
	fs := e.flags("rollback")
	f.add(fs)
	fs.BoolVar(&f.dryRun, "dry-run", false, "the dry run, as git venom-plan")
	if err := e.parse(fs, rollbackUsage, args); err != nil {
		return err
	}
	if err := e.setupOutput(ctx, "venom-rollback", f.output, f.dryRun); err != nil {
		return err
	}
	return doRollback(ctx, e, fs, f, rollbackUsage)
}

// Caller tells an agent's tool subprocess from a person (RFC 11.4) by the
// environment its harness sets there (DESIGN.md section 5). It is
// protection against accidents, not a security boundary: an agent can
// unset variables. GIT_VENOM_CALLER=person or =agent overrides.
func Caller() string {
	switch os.Getenv("GIT_VENOM_CALLER") {
	case "agent":
		return "agent"
	case "person":
		return "person"
	}
	for _, k := range []string{"CLAUDE_CODE_CHILD_SESSION", "CODEX_THREAD_ID", "GEMINI_CLI", "CURSOR_AGENT"} {
		if os.Getenv(k) != "" {
			return "agent"
		}
	}
	return "person"
}

func doRollback(ctx context.Context, e *env, fs *pflag.FlagSet, f rollbackFlags, usage string) error {
	args, spec := splitDash(fs)
	if len(args) != 1 {
		return usageErr(usage, "name one checkpoint (k<n>), and any paths after --")
	}
	if f.z {
		f.nameStatus = true
	}
	if f.nameStatus && e.JSON {
		return usageErr(usage, "--name-status and --json are two outputs; choose one")
	}
	ps, err := pathspec(spec)
	if err != nil {
		return err
	}
	if ps != nil && !fs.Changed("restore") {
		// Some paths go back and the rest stay, so the files match no
		// point of the conversation: a narrowed rollback restores files.
		f.restore = "files"
	}
	t, err := checkpoint.OpenTree(ctx, "")
	if err != nil {
		return err
	}
	e.startProgress(t.Repo)
	st, err := t.Log.Load()
	if err != nil {
		return checkpoint.LogError(err, "reading the log")
	}
	warnInterrupted(ctx, e, t, st)
	id, err := t.ResolveAgent(f.agent, st)
	if err != nil {
		return agentHints(err, st.AgentIDs(t.Path()))
	}
	o := RollbackOptions(rollback.Options{Agent: id, Checkpoint: args[0], Restore: f.restore, Outside: f.outside,
		KeepHead: f.keepHead, DryRun: f.dryRun, Plan: f.plan, Pathspec: ps})
	res, err := rollback.Run(ctx, t, o)
	if err != nil {
		if re := rfcerr.As(err); re != nil && re.Code == "not_found.agent" {
			return agentHints(err, st.AgentIDs(t.Path()))
		}
		return planHints(err, o, spec)
	}
	if n := res.FromDisk; n > 0 {
		count := fmt.Sprintf("%d", n)
		if res.FromDiskPartial {
			count = fmt.Sprintf("%d or more", n)
		}
		fmt.Fprintf(e.Err, "warning: the safety checkpoint %s lacked %s object(s) (a `git gc --prune=now` beside an earlier capture deletes such); each was written again from the files of the tree that still held it\n", res.Safety, count)
	}
	if e.JSON {
		writeJSON(e.Out, res)
		return nil
	}
	if f.nameStatus {
		printNameStatus(e, res, f.z)
		return nil
	}
	if res.DryRun {
		printPlan(e, res, o)
	} else {
		printRollback(e, res)
	}
	return nil
}

// warnInterrupted closes rollbacks that a crash left open (RFC 7.6) and says
// so on stderr, naming the safety checkpoint that holds the tree as it was.
func warnInterrupted(ctx context.Context, e *env, t *checkpoint.Tree, st *journal.State) {
	closed, err := t.CloseInterrupted(ctx, st)
	if err != nil {
		fmt.Fprintf(e.Err, "warning: checking for interrupted rollbacks: %v\n", err)
		return
	}
	for _, b := range closed {
		fmt.Fprintf(e.Err, "warning: a rollback of %s to %s was interrupted (failed.rollback_interrupted); nothing was resumed\n", b.Agent, b.Checkpoint)
		fmt.Fprintf(e.Err, "hint: %s\n", checkpoint.UndoHint(b.Agent, b.Safety))
		for _, rs := range b.Rescued {
			if rs.Ref != "" {
				fmt.Fprintf(e.Err, "hint: a save made into %s while it ran is kept: %s\n", quotePath(rescuedName(rs)), showRescued(rs))
			} else {
				fmt.Fprintf(e.Err, "hint: a save made into %s while it ran is kept in %s\n", quotePath(rescuedName(rs)), rs.File)
			}
		}
		for _, d := range b.KeptDirs {
			fmt.Fprintf(e.Err, "hint: what it had moved out of the tree is still in %s\n", d)
		}
	}
}

// printPlan prints a plan as planview lays it out: the title and summary,
// the rows (the person's first, directories folded to fit), the command
// that resumes a rewound conversation, and the command that confirms it.
func printPlan(e *env, res *rollback.Result, o rollback.Options) {
	v := planview.New(res, viewOptions(res))
	w := e.columns()
	printSummary(e, v.Summary, w)
	for _, l := range ResumeLines(res) {
		printProse(e, "  "+l, w)
	}
	printRows(e, v.Rows, w)
	printSubmodules(e, res, w)
	fmt.Fprintf(e.Out, "\nto do it: %s\n", RollbackCommand(res, o))
}

// viewOptions are how the printed plan folds: a whole plan may fold the
// directory that holds all its paths (FoldAll); one narrowed by a
// pathspec shows what is inside the directory it names.
func viewOptions(res *rollback.Result) planview.Options {
	return planview.Options{FoldAll: len(res.Pathspec) == 0}
}

// printProse prints a line a person reads wrapped at spaces to w cells
// (planview.Wrap; 0: no limit), its continuation lines two spaces further
// in. A line that ends in a command ("...: <command>") keeps the command
// on one line, so it works pasted: only the words before it wrap.
func printProse(e *env, line string, w int) {
	lead := line[:len(line)-len(strings.TrimLeft(line, " "))]
	indent := lead + "  "
	if i := strings.Index(line, ": "); i >= 0 && looksLikeCommand(line[i+2:]) {
		head := planview.Wrap(line[:i+1], w, indent)
		last := head[len(head)-1]
		cmd := line[i+2:]
		if w > 0 && planview.Width(last)+1+planview.Width(cmd) > w {
			head = append(head, indent+cmd)
		} else {
			head[len(head)-1] = last + " " + cmd
		}
		for _, l := range head {
			fmt.Fprintln(e.Out, l)
		}
		return
	}
	for _, l := range planview.Wrap(line, w, indent) {
		fmt.Fprintln(e.Out, l)
	}
}

// looksLikeCommand reports whether s is a command line printed for a
// person to run: it starts with the name of git or a harness's client.
func looksLikeCommand(s string) bool {
	for _, c := range []string{"git ", "claude ", "codex ", "gemini "} {
		if strings.HasPrefix(s, c) {
			return true
		}
	}
	return false
}

// printSubmodules prints each submodule's section of a plan or result
// (issue 18), in repos order: its name, its own lines (change, class,
// left, HEAD) indented, and its rows, whose paths are the submodule's.
func printSubmodules(e *env, res *rollback.Result, w int) {
	for i := 1; i < len(res.Repos); i++ {
		sv := planview.NewRepo(res, i, viewOptions(res))
		fmt.Fprintf(e.Out, "\nsubmodule %s:\n", planview.Quote(res.Repos[i].Repo))
		for _, l := range sv.Summary.RepoLines() {
			fmt.Fprintln(e.Out, planview.Fit("  "+l, w))
		}
		printRows(e, sv.Rows, w)
	}
}

// choiceArgs are the options of o a plan's id binds, as the command line
// gives them: --restore, --outside, --keep-head.
func choiceArgs(o rollback.Options) []string {
	var args []string
	if o.Restore != "" && o.Restore != "all" {
		args = append(args, "--restore", o.Restore)
	}
	if o.Outside != "" {
		args = append(args, "--outside", o.Outside)
	}
	if o.KeepHead {
		args = append(args, "--keep-head")
	}
	return args
}

// specArgs is "--" and the pathspec, or nothing.
func specArgs(spec []string) []string {
	if len(spec) == 0 {
		return nil
	}
	return append([]string{"--"}, spec...)
}

// printNameStatus prints a plan's or rollback's paths for scripts, in
// byte order: "A", "M" or "D" (create, modify, delete, as git's
// --name-status) or "L" (left as it is), then the class (or the reason
// for L), then the path, tab-separated and quoted as git quotes them; with
// z each field ends with NUL and paths are as they are. A submodule's
// paths (issue 18) follow the top's, relative to the top as a person
// types them (sub/path).
func printNameStatus(e *env, res *rollback.Result, z bool) {
	var items []planview.Item
	for i, r := range res.Repos {
		its := planview.Items(r)
		sort.SliceStable(its, func(a, b int) bool { return its[a].Path < its[b].Path })
		for _, it := range its {
			if i > 0 {
				it.Path = r.Repo + "/" + it.Path
			}
			items = append(items, it)
		}
	}
	letter := map[string]string{"create": "A", "modify": "M", "delete": "D", planview.Left: "L"}
	for _, it := range items {
		if z {
			fmt.Fprintf(e.Out, "%s\x00%s\x00%s\x00", letter[it.Change], it.Class, it.Path)
		} else {
			fmt.Fprintf(e.Out, "%s\t%s\t%s\n", letter[it.Change], it.Class, quotePath(it.Path))
		}
	}
}

// printSummary prints the summary's title (in the header colour) and
// lines, each fitted to w cells (0: no limit).
func printSummary(e *env, s planview.Summary, w int) {
	fmt.Fprintln(e.Out, e.palette.paint("header", planview.Fit(s.Title(), w)))
	for _, l := range s.Lines() {
		fmt.Fprintln(e.Out, planview.Fit(l, w))
	}
}

// printRows prints rows after a blank line, in columns, each fitted to w
// cells (0: no limit) and coloured: the person's rows in the outside
// colour (the RFC's gold), a change's word in its own, a path left dim.
func printRows(e *env, rows []planview.Row, w int) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(e.Out)
	cols := planview.ColumnsOf(rows)
	for _, r := range rows {
		fmt.Fprintln(e.Out, e.rowLine(r, r.Cells(cols, w)))
	}
}

// rowLine is c's line, coloured for row r when e has a palette.
func (e *env) rowLine(r planview.Row, c planview.Cells) string {
	p := e.palette
	switch {
	case p == nil:
		return c.String()
	case r.Person():
		return p.paint("outside", c.String())
	case r.Change == planview.Left:
		return p.paint("left", c.String())
	}
	c.Change = p.paint(r.Change, c.Change)
	return c.String()
}

// printRollback prints what a real call did: the title and summary, the
// rows as the plan showed them, whether the tree is as planned, and the
// safety checkpoint with the command that undoes it.
func printRollback(e *env, res *rollback.Result) {
	v := planview.New(res, viewOptions(res))
	w := e.columns()
	printSummary(e, v.Summary, w)
	printRows(e, v.Rows, w)
	printSubmodules(e, res, w)
	fmt.Fprintln(e.Out)
	for i, l := range RescuedLines(res) {
		if i == 0 {
			printProse(e, l, w) // the rest name a path and its command
		} else {
			fmt.Fprintln(e.Out, l)
		}
	}
	if l := Verification(res); l != "" {
		printProse(e, l, w)
	}
	if lines := KeptBackupLines(res); len(lines) > 0 {
		for _, l := range lines {
			printProse(e, l, w)
		}
	} else {
		printProse(e, fmt.Sprintf("safety checkpoint %s holds the tree as it was before; to undo:", res.Safety), w)
	}
	fmt.Fprintf(e.Out, "  %s\n", undoAfter(res))
	if res.Note != "" {
		printProse(e, "the agent will be told: "+res.Note, w)
	}
	for _, l := range ContinueLines(res) {
		if strings.HasPrefix(l, "  ") {
			fmt.Fprintln(e.Out, l) // a command, whole
		} else {
			printProse(e, l, w)
		}
	}
}

// undoAfter is the command printed to undo the rollback res did: the plan
// to its safety checkpoint, files only. Its own checkpoint (RFC 7.4 step
// 6, reason rollback) makes the window from the safety checkpoint to it
// venom's own writes (RFC 7.3's rollback window), so a guarded tree's
// plan classes the paths it wrote as they were, and refuses only a
// person's edit made since. Without that checkpoint (its capture failed:
// after is null) the window is a gap and every path the rollback wrote is
// outside, which a guarded tree refuses by default: the command is then
// checkpoint.UndoCommand's, with --outside overwrite, as after an
// interrupted rollback (issue 13 item 8).
func undoAfter(res *rollback.Result) string {
	if res.After == "" {
		return checkpoint.UndoCommand(res.Agent, res.Safety, "")
	}
	return fmt.Sprintf("git venom-plan --agent %s %s --restore files", res.Agent, res.Safety)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func orNone(p *string) string {
	if p == nil {
		return "before the first turn"
	}
	return *p
}
