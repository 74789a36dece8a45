package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
)

// FileDiff is one member of agent.checkpoint_diff's files[] (RFC 11.1):
// Change is create, modify or delete; Added and Removed count lines (0 for
// binary files, where Binary is true).
type FileDiff struct {
	Repo    string `json:"repo"`
	Path    string `json:"path"`
	Change  string `json:"change"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Binary  bool   `json:"binary"`
}

// FromTop is f's path relative to the top of the tree: Path, after the
// submodule's path when f is in one.
func (f FileDiff) FromTop() string {
	if f.Repo == "" || f.Repo == TopRepo {
		return f.Path
	}
	return f.Repo + "/" + f.Path
}

// Patch is agent.checkpoint_diff's patch: the text of the diff of one path,
// cut at PatchMax bytes (Truncated), and its full size in Bytes.
type Patch struct {
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"`
	Bytes     int    `json:"bytes"`
}

// Diff is agent.checkpoint_diff's result. Pathspec is the toolkit's
// addition: the pathspec that narrowed Files, as given (absent: none).
type Diff struct {
	From     string     `json:"from"`
	To       string     `json:"to"`
	Files    []FileDiff `json:"files"`
	Patch    *Patch     `json:"patch,omitempty"`
	Pathspec []string   `json:"pathspec,omitempty"`
}

// PatchMax bounds a patch's text (RFC 11.1 harness.body_max), in bytes.
const PatchMax = 256 << 10

// ChangeName maps a diff-tree status letter to RFC 11.1's change words.
func ChangeName(status byte) string {
	switch status {
	case 'A':
		return "create"
	case 'D':
		return "delete"
	}
	return "modify"
}

// CurrentTree captures the current files without making a ref or a log
// record (RFC 7.2's S), for diffs and plans.
func (t *Tree) CurrentTree(ctx context.Context) (*plumbing.Snapshot, error) {
	snap, err := t.Repo.Capture(ctx, plumbing.CaptureOptions{MaxFileBytes: t.Config.MaxFileBytes, MaxTotalBytes: t.Config.MaxTotalBytes})
	if err != nil {
		return nil, classify(t, err)
	}
	return snap, nil
}

// CurrentAll captures every repository in scope without making a ref
// or a log record (RFC 7.2's S of each), with its RFC error.
func (t *Tree) CurrentAll(ctx context.Context) (*Capture, error) {
	return t.CurrentAllReading(ctx)
}

// CurrentAllReading is CurrentAll, and reads the commits of refs (refs
// of the top repository) in the child that reads its HEAD: the values,
// in the order of refs ("" for a ref that names no commit), are in the
// top's Snapshot.Refs, or read on their own (plumbing.RefValues) when
// that child could not read them, so that they are always there when
// refs are given. A rollback checks its target's ref so, with no git
// start of its own (issue 16).
func (t *Tree) CurrentAllReading(ctx context.Context, refs ...string) (*Capture, error) {
	return t.CurrentAllReadingIn(ctx, refs, nil)
}

// CurrentAllReadingIn is CurrentAllReading, and reads subRefs in each
// submodule in the child that reads its HEAD (its Snapshot.Refs; nil
// when one names no commit, and the caller reads them itself), as a
// rollback checks each submodule's ref of its target (RFC 7.1 item 1,
// issue 18).
func (t *Tree) CurrentAllReadingIn(ctx context.Context, refs, subRefs []string) (*Capture, error) {
	c, err := t.captureAllReading(ctx, refs, subRefs, nil)
	if err != nil {
		return nil, classify(t, err)
	}
	if top := c.Top(); len(refs) > 0 && top.Refs == nil {
		if top.Refs, err = t.Repo.RefValues(ctx, refs...); err != nil {
			return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"reason": "rev-parse"}, "reading %s", refs[0])
		}
	}
	return c, nil
}

// TreeDiff lists the files that differ between two trees (or commits),
// with line counts: two diff-tree calls, raw (Repo.DiffTrees) and numstat,
// both -z, both listing every gitlink (the numstat with the user's index,
// whose .gitattributes say what is binary).
func (t *Tree) TreeDiff(ctx context.Context, from, to string) ([]FileDiff, error) {
	return t.TreeDiffIn(ctx, from, to, nil)
}

// TreeDiffIn is TreeDiff narrowed to the paths ps matches (nil or empty:
// all), as git matches them (plumbing.Pathspec).
func (t *Tree) TreeDiffIn(ctx context.Context, from, to string, ps *plumbing.Pathspec) ([]FileDiff, error) {
	return t.treeDiff(ctx, from, to, ps, nil)
}

// treeDiff is TreeDiffIn with env for every git command (Across's).
func (t *Tree) treeDiff(ctx context.Context, from, to string, ps *plumbing.Pathspec, env []string) ([]FileDiff, error) {
	changes, err := t.Repo.DiffTreesEnv(ctx, from, to, ps, env)
	if err != nil {
		var gerr *plumbing.Error
		if errors.As(err, &gerr) || ctx.Err() != nil {
			return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"reason": "diff-tree"}, "comparing trees")
		}
		return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": ".", "reason": "diff-tree"}, "reading diff-tree")
	}
	num, err := t.Repo.Run(ctx, plumbing.Options{Dir: ps.Where(), Env: env}, append([]string{"diff-tree", "-r", "-z", "--no-renames", "--ignore-submodules=none", "--numstat", from, to}, ps.Argv()...)...)
	if err != nil {
		return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"reason": "diff-tree"}, "comparing trees")
	}
	counts := map[string][2]int{}
	bin := map[string]bool{}
	for _, rec := range bytes.Split(num, []byte{0}) {
		f := bytes.SplitN(rec, []byte{'\t'}, 3)
		if len(f) != 3 {
			continue
		}
		p := string(f[2])
		if string(f[0]) == "-" {
			bin[p] = true
			continue
		}
		a, _ := strconv.Atoi(string(f[0]))
		d, _ := strconv.Atoi(string(f[1]))
		counts[p] = [2]int{a, d}
	}
	files := make([]FileDiff, 0, len(changes))
	for _, c := range changes {
		n := counts[c.Path]
		files = append(files, FileDiff{Repo: ".", Path: c.Path, Change: ChangeName(c.Status), Added: n[0], Removed: n[1], Binary: bin[c.Path]})
	}
	return files, nil
}

// Stat is git's diffstat of the files that differ between two trees (or
// commits), narrowed to ps (nil: all): `git diff --stat`, run where ps was
// typed, width columns wide (0: git's default) and coloured as git
// colours it when color is true. Paths are relative to the top, as git
// diff prints them.
func (t *Tree) Stat(ctx context.Context, from, to string, ps *plumbing.Pathspec, width int, color bool) (string, error) {
	return t.stat(ctx, from, to, ps, width, color, nil)
}

func (t *Tree) stat(ctx context.Context, from, to string, ps *plumbing.Pathspec, width int, color bool, env []string) (string, error) {
	args := []string{"diff", "--no-ext-diff", "--no-renames", "--ignore-submodules=none", "--stat"}
	if width > 0 {
		args[len(args)-1] = "--stat=" + strconv.Itoa(width)
	}
	if color {
		args = append(args, "--color=always")
	} else {
		args = append(args, "--no-color")
	}
	args = append(append(args, from, to), ps.Argv()...)
	out, err := t.Repo.Run(ctx, plumbing.Options{Dir: ps.Where(), Env: env}, args...)
	if err != nil {
		return "", rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"reason": "diff"}, "making the diffstat")
	}
	return string(out), nil
}

// PathPatch is the patch text of one path between two trees, cut at
// PatchMax.
func (t *Tree) PathPatch(ctx context.Context, from, to, path string) (*Patch, error) {
	return t.pathPatch(ctx, from, to, path, false, nil)
}

// ColorPatch is PathPatch with git's colours (`git diff --color=always`,
// so the user's color.diff.* slots apply), for a terminal: the TUI's patch
// view. A cut patch ends at its last whole line, so no colour sequence is
// cut in two. Errors are PathPatch's.
func (t *Tree) ColorPatch(ctx context.Context, from, to, path string) (*Patch, error) {
	return t.pathPatch(ctx, from, to, path, true, nil)
}

func (t *Tree) pathPatch(ctx context.Context, from, to, path string, color bool, env []string) (*Patch, error) {
	c := "--no-color"
	if color {
		c = "--color=always"
	}
	out, err := t.Repo.Run(ctx, plumbing.Options{Env: env}, "diff", "--no-ext-diff", c, "--no-renames", from, to, "--", plumbing.Literal(path))
	if err != nil {
		return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"reason": "diff"}, "making the patch")
	}
	p := &Patch{Bytes: len(out)}
	if len(out) > PatchMax {
		out, p.Truncated = out[:PatchMax], true
		if i := bytes.LastIndexByte(out, '\n'); color && i >= 0 {
			out = out[:i+1]
		}
	}
	p.Text = string(out)
	return p, nil
}

// Across is a diff's two sides as a diff narrowed by a pathspec compares
// them (issue 18): From and To are the top's trees with every submodule
// both sides hold in scope grafted in at its gitlink
// (plumbing.Repo.Flatten), Env what git needs to read them, and Subs
// those submodules' paths relative to the top, in repos order. The diff
// of From and To lists a submodule's files by their paths from the top,
// and the user's pathspec, as typed, is matched against them by git, as
// `git grep --recurse-submodules` matches it. A submodule one side does
// not hold stays a gitlink, as in the plan.
type Across struct {
	From, To string
	Env      []string
	Subs     []string
}

// Across flattens the diff of checkpoint from against to, or against the
// current files of every repository in scope (captured with no ref) when
// to is nil, and splits ps over the repositories (SplitPathspec, whose
// error it returns for attr magic).
func (t *Tree) Across(ctx context.Context, from, to *journal.Saved, ps *plumbing.Pathspec) (*Across, error) {
	type side struct {
		tree string
		subs map[string]string // rel → tree or commit
	}
	fromSide := side{tree: from.Rec.Repos[0].Commit, subs: map[string]string{}}
	for _, r := range from.Rec.Repos[1:] {
		fromSide.subs[r.Repo] = r.Commit
	}
	toSide := side{subs: map[string]string{}}
	repos := map[string]*plumbing.Repo{}
	var order []string
	if to != nil {
		toSide.tree = to.Rec.Repos[0].Commit
		for _, r := range to.Rec.Repos[1:] {
			toSide.subs[r.Repo] = r.Commit
			order = append(order, r.Repo)
			if g, err := t.RepoAt(ctx, r); err == nil {
				repos[r.Repo] = g
			}
		}
	} else {
		c, err := t.CurrentAll(ctx)
		if err != nil {
			return nil, err
		}
		toSide.tree = string(c.Top().Tree)
		for _, r := range c.Repos[1:] {
			toSide.subs[r.Repo] = string(r.Snap.Tree)
			repos[r.Repo] = r.Git
			order = append(order, r.Repo)
		}
	}
	a := &Across{}
	var fromG, toG []plumbing.Graft
	var skipped []string
	for _, rel := range order {
		f, ok := fromSide.subs[rel]
		g := repos[rel]
		for _, s := range skipped {
			if strings.HasPrefix(rel, s+"/") {
				ok = false // inside a submodule that stays a gitlink
			}
		}
		if !ok || g == nil {
			// Not on both sides, or no repository there now: it stays
			// a gitlink.
			skipped = append(skipped, rel)
			continue
		}
		a.Subs = append(a.Subs, rel)
		fromG = append(fromG, plumbing.Graft{Path: rel, Repo: g, Tree: f})
		toG = append(toG, plumbing.Graft{Path: rel, Repo: g, Tree: toSide.subs[rel]})
	}
	if _, err := t.SplitPathspec(ps, append([]string{TopRepo}, a.Subs...)); err != nil {
		return nil, err
	}
	var err error
	var f, tt plumbing.OID
	if f, a.Env, err = t.Repo.Flatten(ctx, fromSide.tree, fromG); err == nil {
		tt, _, err = t.Repo.Flatten(ctx, toSide.tree, toG)
	}
	if err != nil {
		return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": TopRepo, "reason": "write-tree"}, "grafting the submodules into the diff")
	}
	a.From, a.To = string(f), string(tt)
	return a, nil
}

// Diff is TreeDiffIn of a's sides: each file's Repo is the submodule it
// is in (its Path relative to it), or TopRepo.
func (a *Across) Diff(ctx context.Context, t *Tree, ps *plumbing.Pathspec) ([]FileDiff, error) {
	files, err := t.treeDiff(ctx, a.From, a.To, ps, a.Env)
	if err != nil {
		return nil, err
	}
	for i := range files {
		for j := len(a.Subs) - 1; j >= 0; j-- {
			if rest, ok := strings.CutPrefix(files[i].Path, a.Subs[j]+"/"); ok {
				files[i].Repo, files[i].Path = a.Subs[j], rest
				break
			}
		}
	}
	return files, nil
}

// Stat is Tree.Stat of a's sides: one diffstat, a submodule's files by
// their paths from the top.
func (a *Across) Stat(ctx context.Context, t *Tree, ps *plumbing.Pathspec, width int, color bool) (string, error) {
	return t.stat(ctx, a.From, a.To, ps, width, color, a.Env)
}

// PathPatch is Tree.PathPatch of a's sides: path is relative to the top,
// and may be inside a submodule.
func (a *Across) PathPatch(ctx context.Context, t *Tree, path string) (*Patch, error) {
	return t.pathPatch(ctx, a.From, a.To, path, false, a.Env)
}

// ColorWanted reports whether git would colour a diff on a terminal here:
// `git config --get-colorbool color.diff true`, which weighs color.diff
// and color.ui as git does. NO_COLOR is the caller's to check.
func (t *Tree) ColorWanted(ctx context.Context) bool {
	out, err := t.Repo.Run(ctx, plumbing.Options{}, "config", "--get-colorbool", "color.diff", "true")
	return err == nil && string(bytes.TrimSpace(out)) == "true"
}

// Since is what checkpoint s's own changes are counted from (`git
// venom-checkpoint show`, the TUI's list): the previous checkpoint in the
// same tree, else the HEAD it was taken on, else the empty tree. from is a
// commit or tree name for TreeDiff, label says which ("k2", "HEAD
// 1a2b3c4d5e", "the empty tree").
func Since(a *journal.Agent, s *journal.Saved) (from, label string) {
	if p := Previous(a, s); p != nil {
		return p.Rec.Repos[0].Commit, p.ID()
	}
	if len(s.Rec.Repos) > 0 && s.Rec.Repos[0].Head != nil {
		h := *s.Rec.Repos[0].Head
		if len(h) > 10 {
			return h, "HEAD " + h[:10]
		}
		return h, "HEAD " + h
	}
	return string(plumbing.EmptyTree), "the empty tree"
}

// Previous is the checkpoint before s in the same tree, or nil.
func Previous(a *journal.Agent, s *journal.Saved) *journal.Saved {
	for i := len(a.Checkpoints) - 1; i >= 0; i-- {
		c := a.Checkpoints[i]
		if c.N < s.N && !c.Pruned && len(c.Rec.Repos) > 0 && len(s.Rec.Repos) > 0 && c.Rec.Repos[0].Path == s.Rec.Repos[0].Path {
			return c
		}
	}
	return nil
}

// RepoTrees maps each submodule of a checkpoint's repos[] (its name, the
// path from the top; the top itself left out) to the tree its capture
// wrote (RFC 4.2, issue 18).
func RepoTrees(repos []journal.RepoState) map[string]string {
	m := map[string]string{}
	for _, r := range repos {
		if r.Repo != TopRepo {
			m[r.Repo] = r.Tree
		}
	}
	return m
}

// Trees is RepoTrees of a capture made with no record.
func (c *Capture) Trees() map[string]string {
	m := map[string]string{}
	for _, r := range c.Repos {
		if r.Repo != TopRepo {
			m[r.Repo] = string(r.Snap.Tree)
		}
	}
	return m
}

// ChangedSubmodules lists, sorted, the submodules whose tree differs
// between from and to (RepoTrees of each side), or which one side alone
// holds: what a diff of the top repository's trees alone does not show,
// when the files inside a submodule changed and its HEAD did not, so
// that `show` and `diff` can say where to look (issue 18).
func ChangedSubmodules(from, to map[string]string) []string {
	var out []string
	for rel, f := range from {
		if to[rel] != f {
			out = append(out, rel)
		}
	}
	for rel := range to {
		if _, ok := from[rel]; !ok {
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	return out
}
