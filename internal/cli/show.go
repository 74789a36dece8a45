package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
)

// showOutput is one checkpoint's listing item and its files changed since
// the previous checkpoint in the same tree (or since its parent commit).
type showOutput struct {
	Agent string `json:"agent"`
	checkpoint.Item
	Since string                `json:"since"`
	Files []checkpoint.FileDiff `json:"files"`
}

func checkpointShow(ctx context.Context, e *env, args []string) error {
	fs := e.flags("show")
	agent := fs.String("agent", "", "agent id")
	var of outputFlags
	of.add(fs)
	if err := e.parse(fs, subUsage("show"), args); err != nil {
		return err
	}
	if err := e.setupOutput(ctx, "venom-checkpoint", of, true); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr(subUsage("show"), "show takes one checkpoint id")
	}
	t, st, id, err := openWithAgent(ctx, *agent)
	if err != nil {
		return err
	}
	s, err := t.Find(ctx, st, id, fs.Arg(0))
	if err != nil {
		return err
	}
	a := st.Agents[id]
	l, err := t.List(ctx, st, id, checkpoint.ListOptions{Before: fmt.Sprintf("k%d", s.N+1), Limit: 1, NoReused: true})
	if err != nil {
		return err
	}
	out := showOutput{Agent: id, Item: l.Checkpoints[0]}
	from, since := checkpoint.Since(a, s)
	out.Since = since
	if out.Files, err = t.TreeDiff(ctx, from, s.Rec.Repos[0].Commit); err != nil {
		return err
	}
	if e.JSON {
		writeJSON(e.Out, out)
		return nil
	}
	r := s.Rec.Repos[0]
	fmt.Fprintf(e.Out, "checkpoint %s of %s\n", s.ID(), id)
	fmt.Fprintf(e.Out, "reason:       %s\n", s.Rec.Reason)
	fmt.Fprintf(e.Out, "turn:         %s\n", orDash(s.Rec.Turn))
	fmt.Fprintf(e.Out, "through turn: %s\n", orDash(s.Rec.ThroughTurn))
	fmt.Fprintf(e.Out, "at:           %s\n", s.Rec.At)
	if out.Label != "" {
		fmt.Fprintf(e.Out, "label:        %s\n", out.Label)
	}
	fmt.Fprintf(e.Out, "tree:         %s\n", quotePath(r.Path))
	fmt.Fprintf(e.Out, "commit:       %s\n", r.Commit)
	fmt.Fprintf(e.Out, "head:         %s", orDash(r.Head))
	if r.Branch != "" {
		fmt.Fprintf(e.Out, " (%s)", r.Branch)
	}
	fmt.Fprintln(e.Out)
	if out.Missing {
		fmt.Fprintln(e.Out, "warning: its ref is gone or moved; it cannot be restored")
	}
	fmt.Fprintf(e.Out, "\nchanged since %s: %d file(s)\n", out.Since, len(out.Files))
	printFiles(e, out.Files)
	if p := checkpoint.Previous(a, s); p != nil {
		printSubmodulesChanged(e, id, checkpoint.ChangedSubmodules(checkpoint.RepoTrees(p.Rec.Repos), checkpoint.RepoTrees(s.Rec.Repos)), p.ID(), s.ID())
	}
	return nil
}

// printSubmodulesChanged says which submodules' files changed between the
// two sides of a list that counts the top repository's files alone, and
// the diff that shows them (issue 18): from and to are checkpoint ids, to
// "" for the current files.
func printSubmodulesChanged(e *env, agent string, subs []string, from, to string) {
	for _, rel := range subs {
		fmt.Fprintf(e.Out, "  and inside submodule %s: git venom-checkpoint diff --agent %s %s -- %s\n", quotePath(rel), shellQuote(agent), strings.TrimSpace(from+" "+to), shellQuote(rel))
	}
}

func printFiles(e *env, files []checkpoint.FileDiff) {
	for _, f := range files {
		stat := fmt.Sprintf("+%d -%d", f.Added, f.Removed)
		if f.Binary {
			stat = "binary"
		}
		fmt.Fprintf(e.Out, "  %s %-12s %s\n", e.palette.paint(f.Change, fmt.Sprintf("%-6s", f.Change)), stat, quotePath(f.FromTop()))
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func orDash(p *string) string {
	if p == nil {
		return "-"
	}
	return *p
}

func checkpointDiff(ctx context.Context, e *env, args []string) error {
	fs := e.flags("diff")
	agent := fs.String("agent", "", "agent id")
	path := fs.String("path", "", "also print the patch of this path")
	stat := fs.Bool("stat", false, "git's diffstat of the files, instead of the list")
	nameOnly := fs.Bool("name-only", false, "only the paths, one a line, for scripts")
	z := fs.BoolP("null", "z", false, "with --name-only: paths end with NUL and are not quoted")
	var of outputFlags
	of.add(fs)
	if err := e.parse(fs, subUsage("diff"), args); err != nil {
		return err
	}
	if err := e.setupOutput(ctx, "venom-checkpoint", of, true); err != nil {
		return err
	}
	pos, spec := splitDash(fs)
	if len(pos) < 1 || len(pos) > 2 {
		return usageErr(subUsage("diff"), "diff takes a checkpoint and optionally a second one, and any paths after --")
	}
	if *z {
		*nameOnly = true
	}
	if n := btoi(*stat) + btoi(*nameOnly) + btoi(e.JSON); n > 1 {
		return usageErr(subUsage("diff"), "--stat, --name-only and --json are different outputs; choose one")
	}
	ps, err := pathspec(spec)
	if err != nil {
		return err
	}
	t, st, id, err := openWithAgent(ctx, *agent)
	if err != nil {
		return err
	}
	if err := t.CheckPathspec(ctx, ps); err != nil {
		return err
	}
	e.startProgress(t.Repo)
	from, err := t.Find(ctx, st, id, pos[0])
	if err != nil {
		return err
	}
	out := checkpoint.Diff{From: from.ID(), To: "files"}
	if ps != nil {
		out.Pathspec = ps.Args
	}
	to := ""
	var toSaved *journal.Saved
	if len(pos) == 2 {
		s, err := t.Find(ctx, st, id, pos[1])
		if err != nil {
			return err
		}
		to, out.To, toSaved = s.Rec.Repos[0].Commit, s.ID(), s
	}
	if ps != nil {
		// A pathspec goes into the submodules, as git grep
		// --recurse-submodules does (issue 18).
		return diffAcross(ctx, e, t, from, toSaved, ps, out, *stat, *nameOnly, *z, *path)
	}
	// The human list says which submodules changed inside, as git diff
	// marks a submodule dirty: the current side then captures them too.
	list := !*stat && !*nameOnly && !e.JSON && len(from.Rec.Repos) > 1
	var subs []string
	switch {
	case len(pos) < 2 && list:
		c, err := t.CurrentAll(ctx)
		if err != nil {
			return err
		}
		to = string(c.Top().Tree)
		subs = checkpoint.ChangedSubmodules(checkpoint.RepoTrees(from.Rec.Repos), c.Trees())
	case len(pos) < 2:
		snap, err := t.CurrentTree(ctx)
		if err != nil {
			return err
		}
		to = string(snap.Tree)
	case list:
		subs = checkpoint.ChangedSubmodules(checkpoint.RepoTrees(from.Rec.Repos), checkpoint.RepoTrees(toSaved.Rec.Repos))
	}
	if *stat {
		text, err := t.Stat(ctx, from.Rec.Repos[0].Commit, to, ps, e.columns(), e.palette != nil)
		if err != nil {
			return err
		}
		fmt.Fprint(e.Out, text)
		return nil
	}
	if out.Files, err = t.TreeDiffIn(ctx, from.Rec.Repos[0].Commit, to, ps); err != nil {
		return err
	}
	if *nameOnly {
		printNames(e, out.Files, *z)
		return nil
	}
	if *path != "" {
		if out.Patch, err = t.PathPatch(ctx, from.Rec.Repos[0].Commit, to, *path); err != nil {
			return err
		}
	}
	return printDiff(e, id, out, subs)
}

// diffAcross is checkpoint diff narrowed by a pathspec: its two sides
// with the submodules both hold grafted in (checkpoint.Across), so git
// matches the pathspec against each path from the top.
func diffAcross(ctx context.Context, e *env, t *checkpoint.Tree, from, to *journal.Saved, ps *plumbing.Pathspec, out checkpoint.Diff, stat, nameOnly, z bool, path string) error {
	a, err := t.Across(ctx, from, to, ps)
	if err != nil {
		return err
	}
	if stat {
		text, err := a.Stat(ctx, t, ps, e.columns(), e.palette != nil)
		if err != nil {
			return err
		}
		fmt.Fprint(e.Out, text)
		return nil
	}
	if out.Files, err = a.Diff(ctx, t, ps); err != nil {
		return err
	}
	if nameOnly {
		printNames(e, out.Files, z)
		return nil
	}
	if path != "" {
		if out.Patch, err = a.PathPatch(ctx, t, path); err != nil {
			return err
		}
	}
	return printDiff(e, "", out, nil)
}

// printNames is checkpoint diff --name-only: each path from the top, as
// git quotes it, or NUL-ended and as it is with z.
func printNames(e *env, files []checkpoint.FileDiff, z bool) {
	for _, f := range files {
		if z {
			fmt.Fprintf(e.Out, "%s\x00", f.FromTop())
		} else {
			fmt.Fprintln(e.Out, quotePath(f.FromTop()))
		}
	}
}

// printDiff prints checkpoint diff's list (or JSON), the submodules subs
// whose files changed too (printSubmodulesChanged), and the patch.
func printDiff(e *env, agent string, out checkpoint.Diff, subs []string) error {
	if e.JSON {
		writeJSON(e.Out, out)
		return nil
	}
	what := "the current files"
	if out.To != "files" {
		what = out.To
	}
	fmt.Fprintf(e.Out, "%s..%s: %d file(s)\n", out.From, what, len(out.Files))
	printFiles(e, out.Files)
	to := out.To
	if to == "files" {
		to = ""
	}
	printSubmodulesChanged(e, agent, subs, out.From, to)
	if out.Patch != nil {
		fmt.Fprintf(e.Out, "\n%s", out.Patch.Text)
		if out.Patch.Truncated {
			fmt.Fprintf(e.Out, "\n[patch cut at %d of %d bytes]\n", checkpoint.PatchMax, out.Patch.Bytes)
		}
	}
	return nil
}
